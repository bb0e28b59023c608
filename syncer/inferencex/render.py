"""Config key -> per-job raw and cookbook-form blocks (issue 3's main entry point).

For each job InferenceX runs for a config (single node: one per row and concurrency; multi
node: one per row), find the one recipe variant it runs, bind the master config's values into
it the way the InferenceX launcher does, render the processes srt-slurm launches
(:mod:`syncer.inferencex.processes`) and map them to cookbook form through the exclusion
policy. The cell's other router (SGLang router <-> Dynamo) is rendered from the same variant
with the frontend swapped, which is how published cells show it.
"""

from __future__ import annotations

import copy
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syncer import progress
from syncer.errors import SyncError
from syncer.flags import DP_ARGS, DPA_ARGS, EP_ARGS, TP_ARGS
from syncer.inferencex import commits, yamlsafe
from syncer.inferencex import master as master_mod
from syncer.inferencex.master import ConfigEntry, Job, Row
from syncer.inferencex.policy import MountedFile, Policy, load_policy
from syncer.inferencex.processes import SRT_VERSION, published_layer, render_raw
from syncer.inferencex.recipe import (
    Recipe,
    check_sections,
    compose_shared,
    expand_variants,
    normalise,
)
from syncer.inferencex.releases import (
    NEWEST_LINE,
    Release,
    allocated_gpus,
    at_date,
    cluster_gpus_per_node,
    release_for,
)
from syncer.inferencex.scripts import refuse_script_launched
from syncer.inferencex.srtconfigs import SrtSlurmFiles, discover
from syncer.locations import bundled_inferencex
from syncer.model import Block
from syncer.wording import js

_LOG = logging.getLogger("syncer")
SIMULATE = {
    "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
    "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token",
}
# Frontends the non-submitted router is rendered with (what published cells show).
DERIVED_FRONTEND = {
    "dynamo": {"type": "dynamo", "enable_multiple_frontends": False, "args": {"router-mode": "kv"}},
    "sglang": {
        "type": "sglang-router",
        "enable_multiple_frontends": False,
        "args": {"policy": "cache_aware"},
    },
}
_SPEC_ALGO = ("speculative-algorithm", "speculative_algorithm")


@dataclass
class RenderedPoint:
    index: int
    item: int
    override: str | None
    variant: str
    concs: list[int]
    raw: dict[str, list[Block]]
    cookbook: dict[str, list[Block]]
    submitted: str
    image: str
    recipe: str
    gpus: int
    golden_al: str | None
    kv: str
    shape: tuple[Any, ...]
    label: str
    detail: str = ""  # speculative decoding, e.g. "DSpark 5", "MTP 3-1-4"
    install: dict[str, list[str]] = field(default_factory=dict)  # router -> install lines
    # router -> config files shipped with its commands, "<name>#<8 hex>" -> {name, content}
    files: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    # router -> files of srt-slurm's checkout its commands name whose content is not available
    missing_files: dict[str, list[MountedFile]] = field(default_factory=dict)
    disclosures: list[str] = field(default_factory=list)  # e.g. chat-template

    def as_json(self, *, raw: bool = False, router: str | None = None) -> dict[str, Any]:
        routers = self.raw if raw else self.cookbook
        if router is not None:
            routers = {router: routers[router]} if router in routers else {}
        out: dict[str, Any] = {
            "item": self.item,
            "override": self.override,
            "concs": list(self.concs),
            "routers": routers,
        }
        if raw:
            return out
        # the cookbook form's config files, and the srt-slurm files whose content is unknown
        # (named, never invented); present only when a router has any
        files = {r: self.files[r] for r in routers if self.files.get(r)}
        missing = {
            r: [{"name": f.name, "source": f.source, "mount": f.rule.mount} for f in refs]
            for r, refs in self.missing_files.items()
            if r in routers and refs
        }
        if files:
            out["files"] = files
        if missing:
            out["missing_files"] = missing
        return out


@dataclass
class RenderedConfig:
    key: str
    entry: ConfigEntry
    points: list[RenderedPoint]
    srt_version: str = SRT_VERSION
    warnings: list[str] = field(default_factory=list)
    srt_files: SrtSlurmFiles = field(default_factory=SrtSlurmFiles)
    # the srt-slurm release whose rules were applied, and where that came from
    release: Release | None = None

    def missing_file_error(self) -> SyncError | None:
        """Why this config cannot be published yet: a command names a file of srt-slurm's
        checkout whose content is not available (the cookbook must ship it, and nothing may
        invent it). None when every file is there."""
        for point in self.points:
            for router, refs in point.missing_files.items():
                for ref in refs:
                    return SyncError(
                        f"{self.key}: point {point.index} ({router} router): {ref.kind} "
                        f"{ref.setting} {ref.value} is srt-slurm's {ref.source} (mounted at "
                        f"{ref.rule.mount}), which the cookbook ships as {ref.name}; its content "
                        f"at {self.srt_files.describe_commit()} is not available here: pass "
                        f"--srt-slurm-configs DIR (srt-slurm's {ref.rule.directory}/ directory at "
                        "that commit)",
                        path=point.recipe,
                    )
        return None

    def as_json(
        self,
        *,
        raw: bool = False,
        router: str | None = None,
        points: list[RenderedPoint] | None = None,
    ) -> dict[str, Any]:
        """``sync render --format json``: ``{"config", "srt_slurm", "points"}`` for ``points``
        (a selection such as ``--point N``; default every job, in master-config order)."""
        chosen = self.points if points is None else points
        out: dict[str, Any] = {"config": self.key}
        if self.release is not None:
            out["srt_slurm"] = {
                "ref": self.release.ref,
                "line": self.release.line,
                "source": self.release.source,
            }
            if self.release.commit is not None:
                out["srt_slurm"].update(
                    commit=self.release.commit, as_of=self.release.as_of, tag=self.release.tag
                )
            elif self.release.unresolved is not None:
                out["srt_slurm"]["unresolved"] = self.release.unresolved
        out["points"] = [p.as_json(raw=raw, router=router) for p in chosen]
        return out


def _arg(args: dict[str, Any], names: tuple[str, ...], default: Any = None) -> Any:
    for name in names:
        if name in args and args[name] is not None:
            return args[name]
    return default


def _framework_engine(framework: str) -> str:
    for engine in ("sglang", "vllm", "trt", "atom"):
        if engine in framework:
            return "sglang" if engine == "sglang" else engine
    return framework


# '@fabric.<name>' cluster network facts the launcher resolves per cluster: the cookbook shows
# them as placeholders. The device lists all become the cookbook's `$IB_DEVICES`.
FABRIC_PLACEHOLDERS = {
    "ib-devices": "$IB_DEVICES",
    "mooncake-devices": "$IB_DEVICES",
    "nccl-ib-hca": "$IB_DEVICES",
    "ucx-net-devices": "$IB_DEVICES",
}


def resolve_cluster_values(value: Any) -> Any:
    """Replace the launcher's ``'@fabric.<name>'`` / ``'@dram.<name>'`` markers by placeholders
    (``$IB_DEVICES``, ``$FABRIC_<NAME>``, ``$DRAM_<NAME>``): their values depend on the cluster
    a job lands on, not on the recipe."""
    if isinstance(value, dict):
        return {k: resolve_cluster_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_cluster_values(v) for v in value]
    if isinstance(value, str) and value.startswith(("@fabric.", "@dram.")):
        kind, _, name = value[1:].partition(".")
        if kind == "fabric" and name in FABRIC_PLACEHOLDERS:
            return FABRIC_PLACEHOLDERS[name]
        return f"${kind.upper()}_{name.upper().replace('-', '_')}"
    return value


def bind(variant: dict[str, Any], entry: ConfigEntry, row: Row, concs: list[int]) -> dict[str, Any]:
    """The InferenceX launcher's bindings: model path, container, benchmark env."""
    # shallow: only `model` and `benchmark` are replaced; nothing downstream mutates the rest
    out = dict(resolve_cluster_values(variant))
    model = dict(out.get("model") or {})
    model["path"] = f"hf:{entry.model}"
    model["container"] = entry.image
    if entry.precision:
        model["precision"] = entry.precision
    out["model"] = model
    bench = dict(out.get("benchmark") or {})
    env = dict(bench.get("env") or {})
    env["MODEL"] = entry.model
    if entry.multinode:
        env["CONC_LIST"] = " ".join(str(c) for c in concs)
    else:
        env["CONC"] = str(concs[0])
    if row.kv_offloading is not None:
        env["KV_OFFLOADING"] = str(row.kv_offloading)
    bench["env"] = env
    out["benchmark"] = bench
    return out


def _mismatches(
    variant: dict[str, Any], recipe: Recipe, entry: ConfigEntry, row: Row, conc: int
) -> list[str]:
    """Why a variant does not run a single-node point (empty list = it does)."""
    why: list[str] = []
    if recipe.engine != _framework_engine(entry.framework):
        why.append(f"engine {recipe.engine} != framework {entry.framework}")
    if set(recipe.roles) != {"agg"}:
        return [*why, f"roles {sorted(recipe.roles)} (single node needs agg only)"]
    agg = recipe.roles["agg"]
    args = agg.args
    tp = int(_arg(args, TP_ARGS, 1))
    ep = int(_arg(args, EP_ARGS, 1))
    dp = int(_arg(args, DP_ARGS, 1))
    dpa = bool(_arg(args, DPA_ARGS, False))
    if tp != (row.tp or 1):
        why.append(f"tensor-parallel-size {tp} != tp {row.tp}")
    if ep != (row.ep or 1):
        why.append(f"expert-parallel-size {ep} != ep {row.ep or 1}")
    if dpa != row.dp_attn:
        why.append(f"enable-dp-attention {dpa} != dp-attn {row.dp_attn}")
    if dp != ((row.tp or 1) if row.dp_attn else 1):
        why.append(f"data-parallel-size {dp} != {(row.tp or 1) if row.dp_attn else 1}")
    if agg.gpus != row.gpus:
        why.append(f"gpus {agg.gpus} != {row.gpus}")
    if agg.nodes != 1 or agg.workers != 1:
        why.append("nodes/workers != 1")
    has_spec = _arg(args, _SPEC_ALGO) is not None
    if has_spec != (row.spec_decoding != "none"):
        why.append(
            f"speculative decoding {'on' if has_spec else 'off'} "
            f"but spec-decoding {row.spec_decoding}"
        )
    bench_env = (variant.get("benchmark") or {}).get("env") or {}
    if "CONC" in bench_env and str(bench_env["CONC"]) != str(conc):
        why.append(f"benchmark.env.CONC {bench_env['CONC']} != {conc}")
    if (
        "KV_OFFLOADING" in bench_env
        and row.kv_offloading is not None
        and str(bench_env["KV_OFFLOADING"]) != str(row.kv_offloading)
    ):
        why.append(
            f"benchmark.env.KV_OFFLOADING {bench_env['KV_OFFLOADING']} != {row.kv_offloading}"
        )
    return why


def _check_multinode(recipe: Recipe, row: Row, where: str, path: str) -> None:
    pairs = [("prefill", "prefill"), ("decode", "decode")] if recipe.disagg else [("worker", "agg")]
    decode = row.roles.get("decode")
    if not recipe.disagg and "worker" not in row.roles and decode and decode.num_worker == 0:
        # old-layout aggregated rows describe the one worker kind as `prefill` next to a
        # `decode` block with zero workers
        pairs = [("prefill", "agg")]
    for spec_name, role_name in pairs:
        spec = row.roles.get(spec_name)
        role = recipe.roles.get(role_name)
        if spec is None or role is None:
            continue
        if spec.num_worker != role.workers:
            raise SyncError(
                f"{where}: row says {spec_name}.num-worker {spec.num_worker} but the recipe runs "
                f"{role.workers} {role_name} workers",
                path=path,
            )
        tp = int(_arg(role.args, TP_ARGS, 1))
        # SGLang runs context parallelism inside the tensor-parallel group: a row's
        # `tp: 1, pcp-size: 8` is a worker with tensor-parallel-size 8
        if spec.tp * spec.pcp != tp:
            said = f"{spec_name}.tp {spec.tp}" + (f" x pcp-size {spec.pcp}" if spec.pcp > 1 else "")
            raise SyncError(
                f"{where}: row says {said} but the recipe has tensor-parallel-size {tp}",
                path=path,
            )


def _simulate_env(
    entry: ConfigEntry, recipe: Recipe, row: Row
) -> tuple[dict[str, str] | None, str | None]:
    """The golden-acceptance env the launcher adds to every worker, and the AL the point ran
    with. In the old layout :func:`inject_legacy_acceptance` did it before the recipe is read:
    nothing is added here, the AL is whatever the workers' env carries."""
    # the generation role (decode, else agg) sets the acceptance target: a prefill worker may
    # draft to another depth, and InferenceX reads the decode worker's parameters
    lead = recipe.roles.get("decode") or _lead_role(recipe)
    if entry.old_layout:
        env = {**lead.env, **recipe.environment}
        return None, env.get("SGLANG_SIMULATE_ACC_LEN")
    if row.spec_decoding == "none":
        return None, None
    algo = _arg(lead.args, _SPEC_ALGO)
    if algo is None:
        return None, None
    method = str(algo).lower()
    if method in ("eagle", "eagle3", "nextn", "mtp"):
        method = "mtp"
        length = _arg(lead.args, ("speculative-num-steps", "speculative_num_steps"))
    else:
        length = _arg(
            lead.args,
            (
                f"speculative-{method}-block-size",
                f"speculative_{method}_block_size",
                "speculative-num-steps",
                "speculative_num_steps",
            ),
        )
    if length is None:
        return None, None
    env = {**recipe.environment, **lead.env}
    thinking = str(env.get("SGLANG_DEFAULT_THINKING", "0")).lower() in ("1", "true", "yes", "on")
    al = master_mod.golden_al(entry, method, int(length), thinking)
    if al is None:
        return None, None
    return {"SGLANG_SIMULATE_ACC_LEN": al, **SIMULATE}, al


LEGACY_SIMULATE_ENV_MODES = ("aggregated", "prefill", "decode")


def inject_legacy_acceptance(
    variant: dict[str, Any], entry: ConfigEntry, row: Row, plain: bool, path: str
) -> dict[str, Any]:
    """Synthetic acceptance of the old layout: the runner rewrote the recipe file only
    when the row says ``SYNTHETIC_ACCEPTANCE=true``, adding the three SGLANG_SIMULATE_ACC_*
    variables to each schema-1 ``backend.<mode>_environment`` block written at the file's top
    level. The row's ``SYNTHETIC_ACCEPTANCE_LENGTH`` wins; without it the era's reference
    curve is read with thinking on. A recipe it cannot rewrite stopped the job: refused."""
    if not row.synthetic_acceptance:
        return variant
    given = variant.get("backend")
    backend: dict[str, Any] = given if isinstance(given, dict) else {}
    modes = [
        m
        for m in LEGACY_SIMULATE_ENV_MODES
        if plain and isinstance(backend.get(f"{m}_environment"), dict)
    ]
    if not modes:
        raise SyncError(
            f"{entry.key}: row {row.index} sets SYNTHETIC_ACCEPTANCE=true but the recipe has no "
            "top-level backend.<mode>_environment block to add SGLANG_SIMULATE_ACC_* to "
            "(the runner stops such a job)",
            path=path,
        )
    if any("SGLANG_SIMULATE_ACC_LEN" in backend[f"{m}_environment"] for m in modes):
        raise SyncError(
            f"{entry.key}: row {row.index} sets SYNTHETIC_ACCEPTANCE=true but the recipe "
            "already sets SGLANG_SIMULATE_ACC_LEN (the runner stops such a job)",
            path=path,
        )
    al = legacy_acceptance_length(variant, entry, row, path)
    out = dict(variant)
    out["backend"] = dict(backend)
    for m in modes:
        out["backend"][f"{m}_environment"] = {
            "SGLANG_SIMULATE_ACC_LEN": al,
            **SIMULATE,
            **backend[f"{m}_environment"],
        }
    return out


def legacy_acceptance_length(
    variant: dict[str, Any], entry: ConfigEntry, row: Row, path: str
) -> str:
    """The AL string the CONFIG_FILE-era injector writes (a float in ``%g`` form)."""
    explicit = row.synthetic_acceptance_length
    if explicit is None:
        steps = None
        config = (variant.get("backend") or {}).get("sglang_config") or {}
        for mode in LEGACY_SIMULATE_ENV_MODES:
            args = config.get(mode) if isinstance(config, dict) else None
            if isinstance(args, dict) and args.get("speculative-num-steps") is not None:
                steps = args["speculative-num-steps"]
                break
        if steps is None:
            steps = 2  # the injector's default when the recipe names no step count
        if isinstance(steps, bool) or not str(steps).isdigit():
            raise SyncError(
                f"{entry.key}: speculative-num-steps must be an integer, got {js(steps)}",
                path=path,
            )
        explicit = master_mod.legacy_reference_al(entry, int(steps))
    try:
        return f"{float(explicit):g}"
    except ValueError:
        raise SyncError(
            f"{entry.key}: row {row.index}: SYNTHETIC_ACCEPTANCE_LENGTH must be a number, "
            f"got {js(explicit)}",
            path=entry.path,
        ) from None


def measured_tier(recipe: Recipe) -> str:
    for role in recipe.roles.values():
        backend = _arg(role.args, ("hicache-storage-backend", "hicache_storage_backend"))
        if backend == "mooncake" or recipe.mooncake_master:
            return "mooncake"
    for role in recipe.roles.values():
        if _arg(role.args, ("enable-hierarchical-cache", "enable_hierarchical_cache")):
            return "hicache"
    return "none"


def _parallel(args: dict[str, Any], npw: int) -> str:
    tp = int(_arg(args, TP_ARGS, 1))
    ep = int(_arg(args, EP_ARGS, 1))
    if _arg(args, DPA_ARGS, False):
        text = f"DEP{int(_arg(args, DP_ARGS, tp))}"
    else:
        text = f"TP{tp}" + (f"·EP{ep}" if ep > 1 else "")
    return text + (f" ({npw} nodes)" if npw > 1 else "")


def shape_and_label(recipe: Recipe) -> tuple[tuple[Any, ...], str]:
    shape = []
    for name in ("agg", "prefill", "decode"):
        role = recipe.roles.get(name)
        if role is None:
            continue
        args = role.args
        shape.append(
            (
                name,
                role.workers,
                role.nodes_per_worker,
                role.gpus,
                int(_arg(args, TP_ARGS, 1)),
                int(_arg(args, EP_ARGS, 1)),
                int(_arg(args, DP_ARGS, 1)),
                bool(_arg(args, DPA_ARGS, False)),
            )
        )
    if recipe.disagg:
        p, d = recipe.roles["prefill"], recipe.roles["decode"]
        label = (
            f"Disagg {p.workers}P{d.workers}D · prefill {_parallel(p.args, p.nodes_per_worker)}"
            f" · decode {_parallel(d.args, d.nodes_per_worker)}"
        )
    else:
        a = recipe.roles["agg"]
        label = f"Agg {_parallel(a.args, a.nodes_per_worker)}" + (
            f" ×{a.workers}" if a.workers > 1 else ""
        )
    return tuple(shape), label


def _lead_role(recipe: Recipe) -> Any:
    """The role whose flags describe the deployment's speculative decoding (prefill first)."""
    return (
        recipe.roles.get("prefill") or recipe.roles.get("agg") or next(iter(recipe.roles.values()))
    )


MTP_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "MTP")


def spec_detail(recipe: Recipe) -> str:
    """The cell detail published cells show: ``DSpark 5``, ``MTP 3-1-4`` (steps, top-k, draft
    tokens; EAGLE-family algorithms are all shown as MTP), or ``no spec``."""
    args = _lead_role(recipe).args
    algo = _arg(args, _SPEC_ALGO)
    if algo is None:
        return "no spec"
    if str(algo).upper() == "DSPARK":
        block = _arg(args, ("speculative-dspark-block-size", "speculative_dspark_block_size"))
        return f"DSpark {block}" if block is not None else "DSpark"
    name = "MTP" if str(algo).upper() in MTP_ALGORITHMS else str(algo)
    parts = [
        _arg(args, (f"speculative-{flag}", f"speculative_{flag.replace('-', '_')}"))
        for flag in ("num-steps", "eagle-topk", "num-draft-tokens")
    ]
    if all(p is not None for p in parts):
        return f"{name} " + "-".join(str(p) for p in parts)
    return name


def dynamo_wheel_version(dynamo: Any) -> str | None:
    """The Dynamo version a recipe pins: ``dynamo.source.wheel`` (schema 2) or the flat
    ``dynamo.wheel`` of older recipes, given as a version or as an ``ai_dynamo-<version>-
    py3-none-any.whl`` file name (srt-slurm reads the version out of the name)."""
    if not isinstance(dynamo, dict):
        return None
    source = dynamo.get("source")
    wheel = (source.get("wheel") if isinstance(source, dict) else None) or dynamo.get("wheel")
    if not isinstance(wheel, str) or not wheel:
        return None
    name = wheel.rsplit("/", 1)[-1]
    if name.endswith(".whl"):
        m = re.fullmatch(r"ai_dynamo-(.+)-py3-none-any\.whl", name)
        return m.group(1) if m else None
    return wheel


def install_lines(recipe: Recipe) -> list[str]:
    """What a Dynamo deployment installs (srt-slurm's ``dynamo.install`` with a pinned wheel)."""
    dynamo = recipe.raw.get("dynamo") or {}
    version = dynamo_wheel_version(dynamo)
    if not isinstance(dynamo, dict) or not dynamo.get("install"):
        return []
    commit = dynamo.get("hash")
    if not version and isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{7,40}", commit):
        # srt-slurm builds Dynamo from source at `dynamo.hash` (1.x recipes): no pip line to
        # show, the commit is named instead, as published cells do
        return [
            f"# Dynamo built from source at https://github.com/ai-dynamo/dynamo/commit/{commit}"
        ]
    if not version:
        return []
    return [
        "pip install --pre --extra-index-url https://pypi.nvidia.com "
        f'"ai-dynamo-runtime=={version}" "ai-dynamo=={version}"'
    ]


def derived_variant(variant: dict[str, Any], router: str) -> dict[str, Any]:
    """The variant rendered for the non-submitted router: frontend swapped, Dynamo control
    plane (etcd) added or removed, KV events off (published cells show none)."""
    out = copy.deepcopy(variant)
    out["frontend"] = copy.deepcopy(DERIVED_FRONTEND[router])
    services = (
        [
            s
            for s in (out.get("services") or [])
            if isinstance(s, dict) and s.get("type", s.get("name")) not in ("etcd", "nats")
        ]
        if isinstance(out.get("services"), list)
        else []
    )
    if router == "dynamo":
        services.insert(0, {"name": "etcd", "type": "etcd"})
    out["services"] = services
    # KV events off, whether srt-slurm configures them (kv_events) or the recipe passes the
    # flag itself (the published cookbook modules drop a recipe's own --kv-events-config too)
    arg_maps: list[Any] = []
    for role in (out.get("roles") or {}).values():
        if isinstance(role, dict):
            role.pop("kv_events", None)
            arg_maps.append(role.get("args"))
    backend = out.get("backend")
    if isinstance(backend, dict):
        backend.pop("kv_events_config", None)
        for config in (v for k, v in backend.items() if str(k).endswith("_config")):
            if isinstance(config, dict):
                arg_maps.extend(config.values())
    for args in arg_maps:
        if isinstance(args, dict):
            args.pop("kv-events-config", None)
            args.pop("kv_events_config", None)
    return out


def _router_of(recipe: Recipe) -> str:
    return "dynamo" if recipe.frontend.type == "dynamo" else "sglang"


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def render_config(
    inferencex_dir: Path | str | None,
    key: str,
    *,
    policy: Policy | None = None,
    version: str | None = None,
    srt_files: SrtSlurmFiles | None = None,
    release: Release | None = None,
    srt_repo: Path | None = None,
    as_of: str | None = None,
) -> RenderedConfig:
    """Render every job of a config key; raises SyncError on any bad input. Warnings (a
    recipe's duplicate YAML keys) are logged and kept on the result. ``srt_files``: where
    files of srt-slurm's checkout come from (default: the InferenceX checkout's srt-slurm
    submodule when present); files it lacks are listed in each point's ``missing_files``.
    The rules are those of the srt-slurm release the key ran with (``release``, default: the
    one its runner script or the submodule pin names); ``version`` (``"1"``/``"2"``) forces a
    line's rules instead. A branch the runner cloned is taken as it was at ``as_of``
    (default: the InferenceX checkout's commit date, when it is a git checkout), read from
    ``srt_repo`` (a clone of srt-slurm; ``releases.at_date``)."""
    root = Path(inferencex_dir) if inferencex_dir is not None else bundled_inferencex()
    srt = srt_files if srt_files is not None else discover(root)
    master = master_mod.load_master(root)
    master.check_sglang(key)  # the first reason given, before any other refusal
    refuse_script_launched(master, key)
    entry = master.entry(key)
    if release is None:
        release = release_for(entry, submodule_commit=srt.commit)
    if version is not None and version != release.line:
        release = Release(f"{version}.x", version, "chosen by --srt-slurm")
    if release.branch is not None:
        if as_of is None and commits.is_clone(root):
            as_of = commits.commit_date(root)
        release = at_date(release, srt_repo, as_of)
    version = release.line
    cluster_gpus = cluster_gpus_per_node(entry)
    policy = policy or load_policy()
    warnings: list[str] = []
    shared_path = entry.shared_block_path()
    shared = yamlsafe.load(shared_path, duplicates=warnings) if shared_path else None
    docs: dict[Path, Any] = {}
    recipes: dict[tuple[Path, str | None], _Variants] = {}
    points: list[RenderedPoint] = []
    jobs = entry.jobs()
    try:
        for job in progress.track(jobs, f"rendering {key}", len(jobs), unit="points"):
            path = entry.recipe_path(job.row)
            if path not in docs:
                docs[path] = compose_shared(shared, yamlsafe.load(path, duplicates=warnings))
            recipe_key = (path, job.row.selector)
            if recipe_key not in recipes:
                expanded = expand_variants(docs[path], job.row.selector, path=str(path))
                for variant in expanded.values():
                    check_sections(variant, str(path))
                recipes[recipe_key] = _Variants(expanded)
            points.append(
                _render_job(
                    entry,
                    job,
                    path,
                    recipes[recipe_key],
                    policy,
                    root,
                    version,
                    srt,
                    cluster_gpus,
                    release,
                )
            )
    finally:
        # also when rendering fails: a duplicate key is often why
        for warning in warnings:
            _LOG.warning("warning: %s", warning)
    return RenderedConfig(
        key=key,
        entry=entry,
        points=points,
        srt_version=version,
        warnings=warnings,
        srt_files=srt,
        release=release,
    )


@dataclass
class _Variants:
    """The variants one recipe selection expands to, each normalised at most once for
    matching (the cost of a config is then linear in its points, not points x variants)."""

    variants: dict[str, dict[str, Any]]
    probes: dict[str, Recipe] = field(default_factory=dict)
    index: dict[tuple[Any, ...], list[str]] | None = None

    def probe(self, name: str, entry: ConfigEntry, row: Row, job: Job, spath: str) -> Recipe:
        """The variant normalised under the first binding that asks: matching reads only its
        roles and engine, which no binding changes."""
        if name not in self.probes:
            bound = bind(self.variants[name], entry, row, job.concs)
            self.probes[name] = normalise(bound, path=spath, selector=name)
        return self.probes[name]

    def candidates(self, entry: ConfigEntry, job: Job, spath: str) -> list[str]:
        """Variants whose parallel shape is the row's and whose own CONC (if any) is the job's:
        the part of :func:`_mismatches` a dictionary answers, from an index built once."""
        if self.index is None:
            self.index = {}
            for name, variant in self.variants.items():
                signature = _signature(self.probe(name, entry, job.row, job, spath))
                conc = ((variant.get("benchmark") or {}).get("env") or {}).get("CONC")
                key = (*signature, None if conc is None else str(conc))
                self.index.setdefault(key, []).append(name)
        signature = _row_signature(entry, job.row)
        return [
            *self.index.get((*signature, str(job.concs[0])), []),
            *self.index.get((*signature, None), []),
        ]


def _signature(recipe: Recipe) -> tuple[Any, ...]:
    """What a single-node point is matched on, read from a normalised variant."""
    agg = recipe.roles.get("agg")
    if set(recipe.roles) != {"agg"} or agg is None:
        return (recipe.engine, "not agg only")
    args = agg.args
    return (
        recipe.engine,
        int(_arg(args, TP_ARGS, 1)),
        int(_arg(args, EP_ARGS, 1)),
        bool(_arg(args, DPA_ARGS, False)),
        int(_arg(args, DP_ARGS, 1)),
        agg.gpus,
        agg.nodes == 1 and agg.workers == 1,
        _arg(args, _SPEC_ALGO) is not None,
    )


def _row_signature(entry: ConfigEntry, row: Row) -> tuple[Any, ...]:
    """The signature a variant must have to run a row (see :func:`_mismatches`)."""
    tp = row.tp or 1
    return (
        _framework_engine(entry.framework),
        tp,
        row.ep or 1,
        row.dp_attn,
        tp if row.dp_attn else 1,
        row.gpus,
        True,
        row.spec_decoding != "none",
    )


def _variant_for_job(
    entry: ConfigEntry,
    job: Job,
    found: _Variants,
    where: str,
    spath: str,
) -> tuple[str, dict[str, Any], Recipe]:
    """The one variant a job runs, bound to the master config: the row's selector (checked
    against the row), or for a single-node row without one the variant whose parallelism,
    GPUs and concurrency match. Zero or several candidates is an error naming them."""
    row = job.row
    variants = found.variants
    if row.selector is not None or entry.multinode:
        if len(variants) != 1:
            named = (
                f"selector {js(row.selector)}"
                if row.selector is not None
                else "a row without a selector (one configuration per file)"
            )
            raise SyncError(
                f"{where}: {named} yields {len(variants)} variants "
                f"({', '.join(variants)}); expected exactly one",
                path=spath,
            )
        name, variant = next(iter(variants.items()))
        bound = bind(variant, entry, row, job.concs)
        if entry.old_layout:
            bound = inject_legacy_acceptance(bound, entry, row, name == "", spath)
        recipe = normalise(bound, path=spath, selector=name)
        if entry.multinode:
            _check_multinode(recipe, row, where, spath)
        else:
            why = _mismatches(variant, recipe, entry, row, job.concs[0])
            if why:
                raise SyncError(
                    f"{where}: variant {name} does not match the point: {'; '.join(why)}",
                    path=spath,
                )
        return name, bound, recipe
    conc = job.concs[0]
    matches = [
        name
        for name in found.candidates(entry, job, spath)
        if not _mismatches(variants[name], found.probes[name], entry, row, conc)
    ]
    if len(matches) != 1:
        rejected: list[str] = []
        if not matches:
            for name, variant in variants.items():
                why = _mismatches(
                    variant, found.probe(name, entry, row, job, spath), entry, row, conc
                )
                if why:
                    rejected.append(f"{name or '(recipe)'}: {why[0]}")
        found_text = ", ".join(m or "(recipe)" for m in matches) or "none"
        detail = "" if matches else f"; closest rejections: {'; '.join(rejected[:4])}"
        raise SyncError(
            f"{where}: expected exactly one recipe variant for tp {row.tp}, ep {row.ep or 1}, "
            f"dp-attn {row.dp_attn}, {row.gpus} GPUs, conc {conc}; "
            f"matched {found_text}{detail}",
            path=spath,
        )
    name = matches[0]
    bound = bind(variants[name], entry, row, job.concs)
    if entry.old_layout:
        bound = inject_legacy_acceptance(bound, entry, row, name == "", spath)
    return name, bound, normalise(bound, path=spath, selector=name)


def _render_job(
    entry: ConfigEntry,
    job: Job,
    path: Path,
    variants: _Variants,
    policy: Policy,
    root: Path,
    version: str,
    srt: SrtSlurmFiles,
    cluster_gpus: int | None = None,
    release: Release | None = None,
) -> RenderedPoint:
    row = job.row
    where = (
        f"{entry.key}: point {job.index} (row {row.index}, conc {','.join(map(str, job.concs))})"
    )
    spath = str(path)
    name, bound, recipe = _variant_for_job(entry, job, variants, where, spath)
    simulate, al = _simulate_env(entry, recipe, row)
    submitted = _router_of(recipe)
    other = "dynamo" if submitted == "sglang" else "sglang"
    derived = normalise(derived_variant(bound, other), path=spath, selector=name)
    try:
        raw = render_raw(recipe, simulate_env=simulate, version=version, release=release)
        raws = {
            submitted: raw,
            # the other router never ran: published cells derive it as the newest srt-slurm
            # launches it (e.g. --skip-server-warmup on direct P/D workers, a 2.x addition)
            other: render_raw(derived, simulate_env=simulate, version=NEWEST_LINE),
        }
        # the cookbook form shows the frontend layer as published cells do, which is not
        # always what srt-slurm ran (releases.published_frontend_layer)
        layers = {
            submitted: published_layer(recipe, version),
            other: published_layer(derived, NEWEST_LINE),
        }
        cookbook = {r: policy.to_cookbook(blocks, layers[r]) for r, blocks in raws.items()}
        files = {r: policy.files(blocks, srt) for r, blocks in raws.items()}
        missing = {r: policy.missing_files(blocks, srt) for r, blocks in raws.items()}
    except SyncError as exc:
        # the rendering rules (srt-slurm version, frontend type, kv-events JSON) know the
        # recipe, not where it is: the point and the recipe file are added here
        if exc.path is not None:
            raise
        raise SyncError(f"{where}: {exc.message}", path=spath) from None
    shape, label = shape_and_label(recipe)
    return RenderedPoint(
        index=job.index,
        item=row.index,
        override=name or None,
        variant=recipe.name,
        concs=list(job.concs),
        raw={submitted: raw},
        cookbook=cookbook,
        submitted=submitted,
        image=entry.image,
        recipe=_relative(path, root),
        gpus=allocated_gpus(recipe.total_nodes, recipe.gpus_per_node, cluster_gpus),
        golden_al=al,
        kv=measured_tier(recipe),
        shape=shape,
        label=label,
        detail=spec_detail(recipe),
        install={r: (install_lines(recipe) if r == "dynamo" else []) for r in cookbook},
        files=files,
        missing_files={r: refs for r, refs in missing.items() if refs},
        disclosures=policy.disclosures(raw),
    )
