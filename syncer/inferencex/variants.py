"""Which recipe variant a job runs, bound to the master config as the InferenceX launcher
binds it.

A row's selector names its variant (checked against the row); a single-node row without one
runs the variant whose parallelism, GPUs and concurrency match, found through an index built
once per recipe selection (``Variants``), so a config's cost is linear in its points.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from syncer.errors import SyncError
from syncer.flags import DP_ARGS, DPA_ARGS, EP_ARGS, TP_ARGS
from syncer.inferencex.acceptance import inject_legacy_acceptance
from syncer.inferencex.master import ConfigEntry
from syncer.inferencex.recipe import Recipe, normalise
from syncer.inferencex.recipe_facts import SPEC_ALGORITHM, first_arg, framework_engine
from syncer.inferencex.rows import Job, SearchRow
from syncer.wording import js

# '@fabric.<name>' cluster network facts the launcher resolves per cluster: the cookbook shows
# them as placeholders. The device lists all become the cookbook's `$IB_DEVICES`.
FABRIC_PLACEHOLDERS = {
    "ib-devices": "$IB_DEVICES",
    "mooncake-devices": "$IB_DEVICES",
    "nccl-ib-hca": "$IB_DEVICES",
    "ucx-net-devices": "$IB_DEVICES",
}


def resolve_cluster_values(value: Any, _done: dict[int, Any] | None = None) -> Any:
    """Replace the launcher's ``'@fabric.<name>'`` / ``'@dram.<name>'`` markers by placeholders
    (``$IB_DEVICES``, ``$FABRIC_<NAME>``, ``$DRAM_<NAME>``): their values depend on the cluster
    a job lands on, not on the recipe. A list or mapping the recipe shares (a YAML alias) is
    resolved once and stays shared: copied out for every use, a 6 KB recipe of nested aliases
    cost seconds for every point."""
    done = {} if _done is None else _done
    if isinstance(value, dict | list):
        if id(value) in done:
            return done[id(value)][1]
        if isinstance(value, dict):
            out: Any = {k: resolve_cluster_values(v, done) for k, v in value.items()}
        else:
            out = [resolve_cluster_values(v, done) for v in value]
        done[id(value)] = (value, out)  # the source is kept so that its id is never reused
        return out
    if isinstance(value, str) and value.startswith(("@fabric.", "@dram.")):
        kind, _, name = value[1:].partition(".")
        if kind == "fabric" and name in FABRIC_PLACEHOLDERS:
            return FABRIC_PLACEHOLDERS[name]
        return f"${kind.upper()}_{name.upper().replace('-', '_')}"
    return value


def bind_variant(
    variant: dict[str, object], entry: ConfigEntry, row: SearchRow, concs: list[int]
) -> dict[str, Any]:
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
    variant: dict[str, Any], recipe: Recipe, entry: ConfigEntry, row: SearchRow, conc: int
) -> list[str]:
    """Why a variant does not run a single-node point (empty list = it does)."""
    why: list[str] = []
    if recipe.engine != framework_engine(entry.framework):
        why.append(f"engine {recipe.engine} != framework {entry.framework}")
    if set(recipe.roles) != {"agg"}:
        return [*why, f"roles {sorted(recipe.roles)} (single node needs agg only)"]
    agg = recipe.roles["agg"]
    args = agg.args
    tp = int(first_arg(args, TP_ARGS, 1))
    ep = int(first_arg(args, EP_ARGS, 1))
    dp = int(first_arg(args, DP_ARGS, 1))
    dpa = bool(first_arg(args, DPA_ARGS, False))
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
    has_spec = first_arg(args, SPEC_ALGORITHM) is not None
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


def _check_multinode(recipe: Recipe, row: SearchRow, where: str, path: str) -> None:
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
        tp = int(first_arg(role.args, TP_ARGS, 1))
        # SGLang runs context parallelism inside the tensor-parallel group: a row's
        # `tp: 1, pcp-size: 8` is a worker with tensor-parallel-size 8
        if spec.tp * spec.pcp != tp:
            said = f"{spec_name}.tp {spec.tp}" + (f" x pcp-size {spec.pcp}" if spec.pcp > 1 else "")
            raise SyncError(
                f"{where}: row says {said} but the recipe has tensor-parallel-size {tp}",
                path=path,
            )


@dataclass
class Variants:
    """The variants one recipe selection expands to, each normalised at most once for
    matching (the cost of a config is then linear in its points, not points x variants)."""

    variants: dict[str, dict[str, Any]]
    probes: dict[str, Recipe] = field(default_factory=dict)
    index: dict[tuple[object, ...], list[str]] | None = None

    def probe(self, name: str, entry: ConfigEntry, row: SearchRow, job: Job, spath: str) -> Recipe:
        """The variant normalised under the first binding that asks: matching reads only its
        roles and engine, which no binding changes."""
        if name not in self.probes:
            bound = bind_variant(self.variants[name], entry, row, job.concs)
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


def _signature(recipe: Recipe) -> tuple[object, ...]:
    """What a single-node point is matched on, read from a normalised variant."""
    agg = recipe.roles.get("agg")
    if set(recipe.roles) != {"agg"} or agg is None:
        return (recipe.engine, "not agg only")
    args = agg.args
    return (
        recipe.engine,
        int(first_arg(args, TP_ARGS, 1)),
        int(first_arg(args, EP_ARGS, 1)),
        bool(first_arg(args, DPA_ARGS, False)),
        int(first_arg(args, DP_ARGS, 1)),
        agg.gpus,
        agg.nodes == 1 and agg.workers == 1,
        first_arg(args, SPEC_ALGORITHM) is not None,
    )


def _row_signature(entry: ConfigEntry, row: SearchRow) -> tuple[object, ...]:
    """The signature a variant must have to run a row (see :func:`_mismatches`)."""
    tp = row.tp or 1
    return (
        framework_engine(entry.framework),
        tp,
        row.ep or 1,
        row.dp_attn,
        tp if row.dp_attn else 1,
        row.gpus,
        True,
        row.spec_decoding != "none",
    )


def _selected_variant(
    entry: ConfigEntry,
    job: Job,
    found: Variants,
    where: str,
    spath: str,
) -> tuple[str, dict[str, object], Recipe]:
    """The variant the row's selector names (or the one configuration of a multi-node
    row's file), checked against the row."""
    row = job.row
    variants = found.variants
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
    bound = bind_variant(variant, entry, row, job.concs)
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


def variant_for_job(
    entry: ConfigEntry,
    job: Job,
    found: Variants,
    where: str,
    spath: str,
) -> tuple[str, dict[str, object], Recipe]:
    """The one variant a job runs, bound to the master config: the row's selector (checked
    against the row), or for a single-node row without one the variant whose parallelism,
    GPUs and concurrency match. Zero or several candidates is an error naming them."""
    row = job.row
    variants = found.variants
    if row.selector is not None or entry.multinode:
        return _selected_variant(entry, job, found, where, spath)
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
    bound = bind_variant(variants[name], entry, row, job.concs)
    if entry.old_layout:
        bound = inject_legacy_acceptance(bound, entry, row, name == "", spath)
    return name, bound, normalise(bound, path=spath, selector=name)
