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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syncer import checkout, progress
from syncer.errors import SyncError
from syncer.inferencex import commits, yamlsafe
from syncer.inferencex.acceptance import simulate_env
from syncer.inferencex.master import ConfigEntry, load_master
from syncer.inferencex.policy import Policy, load_policy
from syncer.inferencex.policy_rules import MountedFile
from syncer.inferencex.processes import SRT_VERSION, published_layer, render_raw
from syncer.inferencex.recipe import Recipe, check_sections, normalise
from syncer.inferencex.recipe_bundles import compose_shared, expand_variants
from syncer.inferencex.recipe_facts import (
    install_lines,
    measured_tier,
    router_of,
    shape_and_label,
    spec_detail,
)
from syncer.inferencex.releases import (
    NEWEST_LINE,
    FrontendTopology,
    Release,
    allocated_gpus,
    at_date,
    release_for,
)
from syncer.inferencex.rows import Job
from syncer.inferencex.runner_launch import cluster_gpus_per_node
from syncer.inferencex.scripts import refuse_script_launched
from syncer.inferencex.srtconfigs import SrtSlurmFiles, discover
from syncer.inferencex.variants import Variants, variant_for_job
from syncer.locations import bundled_inferencex
from syncer.model import Block

# Frontends the non-submitted router is rendered with (what published cells show).
DERIVED_FRONTEND = {
    "dynamo": {"type": "dynamo", "enable_multiple_frontends": False, "args": {"router-mode": "kv"}},
    "sglang": {
        "type": "sglang-router",
        "enable_multiple_frontends": False,
        "args": {"policy": "cache_aware"},
    },
}


@dataclass
class RenderedPoint:
    """One job of a config, rendered: raw and cookbook-form blocks per router."""

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
    shape: tuple[object, ...]
    label: str
    detail: str = ""  # speculative decoding, e.g. "DSpark 5", "MTP 3-1-4"
    install: dict[str, list[str]] = field(default_factory=dict)  # router -> install lines
    # router -> config files shipped with its commands, "<name>#<8 hex>" -> {name, content}
    files: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    # router -> files of srt-slurm's checkout its commands name whose content is not available
    missing_files: dict[str, list[MountedFile]] = field(default_factory=dict)
    disclosures: list[str] = field(default_factory=list)  # e.g. chat-template

    def as_json(self, *, raw: bool = False, router: str | None = None) -> dict[str, object]:
        routers = self.raw if raw else self.cookbook
        if router is not None:
            routers = {router: routers[router]} if router in routers else {}
        out: dict[str, object] = {
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
    """Every job of a config key, rendered, with the rules and files used."""

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
    ) -> dict[str, object]:
        """``sync render --format json``: ``{"config", "srt_slurm", "points"}`` for ``points``
        (a selection such as ``--point N``; default every job, in master-config order)."""
        chosen = self.points if points is None else points
        out: dict[str, object] = {"config": self.key}
        if self.release is not None:
            srt_slurm: dict[str, object] = {
                "ref": self.release.ref,
                "line": self.release.line,
                "source": self.release.source,
            }
            if self.release.commit is not None:
                srt_slurm.update(
                    commit=self.release.commit, as_of=self.release.as_of, tag=self.release.tag
                )
            elif self.release.unresolved is not None:
                srt_slurm["unresolved"] = self.release.unresolved
            out["srt_slurm"] = srt_slurm
        out["points"] = [p.as_json(raw=raw, router=router) for p in chosen]
        return out


def derived_variant(variant: dict[str, Any], router: str) -> dict[str, object]:
    """The variant rendered for the non-submitted router: frontend swapped, Dynamo control
    plane (etcd) added or removed, KV events off (published cells show none), and for the
    SGLang router no ``skip-tokenizer-init`` (its workers must tokenize)."""
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
    arg_maps: list[object] = []
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
    dropped = ["kv-events-config", "kv_events_config"]
    if router == "sglang":
        # the Dynamo frontend tokenizes for workers started with --skip-tokenizer-init; behind
        # an SGLang router they get text and must tokenize themselves, so published cells
        # derive that arm without the flag (docs/srt-slurm-rules.md, "the derived router")
        dropped += ["skip-tokenizer-init", "skip_tokenizer_init"]
    for args in arg_maps:
        if isinstance(args, dict):
            for flag in dropped:
                args.pop(flag, None)
    return out


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
    master = load_master(root)
    master.check_sglang(key)  # the first reason given, before any other refusal
    refuse_script_launched(master, key)
    entry = master.entry(key)
    release = _release(entry, root, srt, release, version, srt_repo, as_of)
    version = release.line
    cluster_gpus = cluster_gpus_per_node(entry)
    policy = policy or load_policy()
    warnings: list[str] = []
    shared_path = entry.shared_block_path()
    shared = yamlsafe.load(shared_path, duplicates=warnings) if shared_path else None
    try:
        points = _render_jobs(entry, shared, warnings, policy, root, srt, cluster_gpus, release)
    finally:
        # also when rendering fails: a duplicate key is often why
        _log_warnings(warnings)
    return RenderedConfig(
        key=key,
        entry=entry,
        points=points,
        srt_version=version,
        warnings=warnings,
        srt_files=srt,
        release=release,
    )


def _render_jobs(
    entry: ConfigEntry,
    shared: dict[str, object] | None,
    warnings: list[str],
    policy: Policy,
    root: Path,
    srt: SrtSlurmFiles,
    cluster_gpus: int | None,
    release: Release,
) -> list[RenderedPoint]:
    """Every job of the key rendered, each recipe file read and expanded once."""
    docs: dict[Path, object] = {}
    recipes: dict[tuple[Path, str | None], Variants] = {}
    # a row's recipe is looked up (files stat-ed, links resolved) for its first job only
    paths: dict[int, tuple[Path, str]] = {}
    points: list[RenderedPoint] = []
    jobs = entry.jobs()
    for job in progress.track(jobs, f"rendering {entry.key}", len(jobs), unit="points"):
        if job.row.index not in paths:
            found = entry.recipe_path(job.row)
            paths[job.row.index] = found, checkout.relative(found, root)
        path, named = paths[job.row.index]
        if path not in docs:
            docs[path] = compose_shared(shared, yamlsafe.load(path, duplicates=warnings))
        recipe_key = (path, job.row.selector)
        if recipe_key not in recipes:
            recipes[recipe_key] = _variants(docs[path], job.row.selector, path)
        variants = recipes[recipe_key]
        points.append(
            _render_job(
                entry,
                job,
                (path, named),
                variants,
                policy,
                release.line,
                srt,
                cluster_gpus,
                release,
            )
        )
    return points


def _log_warnings(warnings: list[str]) -> None:
    if warnings:
        import logging  # a cost of every start-up, paid by the runs with a warning only

        for warning in warnings:
            logging.getLogger("syncer").warning("warning: %s", warning)


def _raws(
    recipe: Recipe,
    derived: Recipe,
    submitted: str,
    other: str,
    simulate: dict[str, str] | None,
    version: str,
    release: Release | None,
) -> tuple[dict[str, list[Block]], dict[str, FrontendTopology]]:
    """The raw blocks of the router the recipe ran, under its release's rules, and of the
    other router, derived: published cells derive it as the newest srt-slurm launches it
    (e.g. --skip-server-warmup on direct P/D workers, a 2.x addition). With each, the
    frontend layer its cookbook form shows, as published cells do, which is not always what
    srt-slurm ran (releases.published_frontend_layer)."""
    raws = {
        submitted: render_raw(recipe, simulate_env=simulate, version=version, release=release),
        other: render_raw(derived, simulate_env=simulate, version=NEWEST_LINE),
    }
    layers = {
        submitted: published_layer(recipe, version),
        other: published_layer(derived, NEWEST_LINE),
    }
    return raws, layers


def _release(
    entry: ConfigEntry,
    root: Path,
    srt: SrtSlurmFiles,
    release: Release | None,
    version: str | None,
    srt_repo: Path | None,
    as_of: str | None,
) -> Release:
    """The release whose rules apply: the one given, else the key's own; a ``version``
    forces a line; a branch is taken as it was at ``as_of`` (default: the checkout's date)."""
    if release is None:
        release = release_for(entry, submodule_commit=srt.commit)
    if version is not None and version != release.line:
        release = Release(f"{version}.x", version, "chosen by --srt-slurm")
    if release.branch is not None:
        if as_of is None:
            as_of = commits.checkout_date(root)
        release = at_date(release, srt_repo, as_of)
    return release


def _variants(doc: object, selector: str | None, path: Path) -> Variants:
    """The variants a row's selector names in a recipe document, each one's sections checked."""
    expanded = expand_variants(doc, selector, path=str(path))
    for variant in expanded.values():
        check_sections(variant, str(path))
    return Variants(expanded)


def _render_job(
    entry: ConfigEntry,
    job: Job,
    recipe_file: tuple[Path, str],
    variants: Variants,
    policy: Policy,
    version: str,
    srt: SrtSlurmFiles,
    cluster_gpus: int | None = None,
    release: Release | None = None,
) -> RenderedPoint:
    row = job.row
    path, named = recipe_file  # the recipe, and as reports name it (relative to the checkout)
    where = (
        f"{entry.key}: point {job.index} (row {row.index}, conc {','.join(map(str, job.concs))})"
    )
    spath = str(path)
    name, bound, recipe = variant_for_job(entry, job, variants, where, spath)
    simulate, al = simulate_env(entry, recipe, row, spath)
    submitted = router_of(recipe)
    other = "dynamo" if submitted == "sglang" else "sglang"
    derived = normalise(derived_variant(bound, other), path=spath, selector=name)
    try:
        raws, layers = _raws(recipe, derived, submitted, other, simulate, version, release)
        raw = raws[submitted]
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
        recipe=named,
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
