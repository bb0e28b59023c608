"""`sync verify`: for every point of a config, the cookbook command, the command rendered from
the recipe and the command srt-slurm logged, compared.

Two comparisons per point, as the seed thread's sign-off did by hand:

* **recipe vs log** (raw): what the recipe renders to (``RenderedPoint.raw``) against the raw
  blocks read from the point's sweep log, placement values normalised; every key the exclusion
  policy names is ``excluded`` with the policy entry's name and reason;
* **cookbook vs recipe** (cookbook form): the decoded cookbook point (by ``configKey``, ``item``
  and ``concs``, measured KV tier) against ``RenderedPoint.cookbook``, for both routers.

The policy (:mod:`syncer.inferencex.policy`) is the only exclusion list.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syncer.compare.diff import (
    SERVICE_KINDS,
    UNLOGGED_KINDS,
    Comparison,
    ExclusionLookup,
    ExclusionRef,
    compare_blocks,
)
from syncer.errors import SyncError
from syncer.model import Block
from syncer.runs.collect import RunData, read_run
from syncer.runs.launch import ExpectedEnv, build_launch
from syncer.runs.logs import SweepLog
from syncer.runs.mapping import Assignment, assign
from syncer.selection import select

VERDICT_ORDER = ("agree", "differ", "ambiguous", "no-log", "no-cookbook")


@dataclass
class LogCheck:
    source: str
    job_id: str | None
    matched_by: str
    comparison: Comparison
    problems: list[str] = field(default_factory=list)
    ambiguities: list[str] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        return self.comparison.agrees and not self.problems and not self.ambiguities


@dataclass
class CookbookCheck:
    module: str
    cell_id: str | None
    cell: int | None
    point: int | None
    comparisons: list[Comparison] = field(default_factory=list)
    missing: str | None = None

    @property
    def agrees(self) -> bool:
        return self.missing is None and all(c.agrees for c in self.comparisons)


@dataclass
class PointResult:
    index: int
    label: str
    concs: list[int]
    variant: str
    override: str | None
    item: int
    submitted: str
    logs: list[LogCheck] = field(default_factory=list)
    cookbook: CookbookCheck | None = None
    # What no log shows, listed per point as "not logged: cannot verify" (script-era keys).
    unverified: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if not self.logs:
            return "no-log"
        if any(not (lc.comparison.agrees and not lc.problems) for lc in self.logs):
            return "differ"
        if self.cookbook is not None and self.cookbook.missing:
            return "no-cookbook"
        if self.cookbook is not None and not self.cookbook.agrees:
            return "differ"
        if any(lc.ambiguities for lc in self.logs):
            return "ambiguous"
        return "agree"

    def comparisons(self) -> list[Comparison]:
        out = [lc.comparison for lc in self.logs]
        if self.cookbook:
            out.extend(self.cookbook.comparisons)
        return out


@dataclass
class ExclusionUse:
    name: str
    reason: str
    keys: list[str] = field(default_factory=list)


@dataclass
class VerifyResult:
    key: str
    inferencex: str
    run: str
    cookbook: str | None
    points: list[PointResult]
    run_data: RunData
    assignment: Assignment
    srt_version: str
    notes: list[str] = field(default_factory=list)
    launched_by: str | None = None  # the bash script(s) of a script-launched key

    @property
    def exit_code(self) -> int:
        return 0 if all(p.verdict == "agree" for p in self.points) else 1

    @property
    def verdict(self) -> str:
        return "agree" if self.exit_code == 0 else "differ"

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in self.points:
            for comp in p.comparisons():
                for status, n in comp.counts().items():
                    out[status] = out.get(status, 0) + n
        return dict(sorted(out.items()))

    def verdicts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in self.points:
            out[p.verdict] = out.get(p.verdict, 0) + 1
        return {v: out[v] for v in VERDICT_ORDER if v in out}

    def exclusions(self) -> list[ExclusionUse]:
        uses: dict[str, ExclusionUse] = {}
        for p in self.points:
            for comp in p.comparisons():
                for e in comp.entries:
                    if e.exclusion is None:
                        continue
                    use = uses.setdefault(
                        e.exclusion.name, ExclusionUse(e.exclusion.name, e.exclusion.reason)
                    )
                    label = f"{e.block}: {e.key}"
                    if label not in use.keys:
                        use.keys.append(label)
        return list(uses.values())

    def markdown(self, budget: int | None = None) -> str:
        from syncer.compare.report import markdown

        return markdown(self, budget=budget)

    def json(self) -> dict[str, Any]:
        from syncer.compare.report import as_json

        return as_json(self)

    def text(self, console: Any) -> None:
        from syncer.compare.report import text

        text(self, console)


# ---- locating the inputs -------------------------------------------------------------------


def project_root(start: Path | None = None) -> Path:
    """The directory holding ``sync.yaml``: the working directory or an ancestor, else the
    checkout this package runs from."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "sync.yaml").is_file():
            return d
    pkg_root = Path(__file__).resolve().parents[2]
    if (pkg_root / "sync.yaml").is_file():
        return pkg_root
    return here


def pinned_run(key: str, root: Path) -> Path:
    from syncer.syncconfig import load_sync_config

    cfg_path = root / "sync.yaml"
    if not cfg_path.is_file():
        raise SyncError("no sync.yaml to find the pinned run in; pass --run PATH", path=str(root))
    pin = load_sync_config(cfg_path).pins().get(key)
    if pin is None:
        raise SyncError(f"{key} is not a config of sync.yaml; pass --run PATH", path=str(cfg_path))
    if not pin.run:
        raise SyncError(
            f"{key} has no pinned run in sync.yaml (status {pin.status}); pass --run PATH",
            path=str(cfg_path),
        )
    run_id = str(pin.run)
    for candidate in (
        root / "examples" / "runs" / run_id,
        root / "examples" / "runs" / run_id.split("/")[0],
    ):
        if candidate.exists():
            return candidate
    raise SyncError(
        f"run {run_id} is pinned for {key} but not downloaded under examples/runs/; "
        "pass --run PATH (a run directory, artifact archive or sweep log)",
        path=str(cfg_path),
    )


def find_modules(key: str, cookbook: Path) -> list[tuple[Path, str]]:
    """Data modules under ``cookbook`` (a file or a directory) that name ``key``, with their
    text (each file is read once)."""
    from syncer.cookbook.jsmodule import MAX_MODULE_BYTES, decode_text, read_text
    from syncer.fsio import read_capped

    if cookbook.is_file():
        return [(cookbook, read_text(cookbook))]
    if not cookbook.is_dir():
        raise SyncError("no such cookbook module or directory", path=str(cookbook))
    found = []
    needle = key.encode("utf-8")
    for dirpath, dirnames, filenames in os.walk(cookbook):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith((".jsx", ".js", ".mjs")):
                path = Path(dirpath) / name
                raw = read_capped(path, MAX_MODULE_BYTES, "data module")
                if needle in raw:
                    found.append((path, decode_text(raw, str(path))))
    return found


# ---- the comparison ------------------------------------------------------------------------


def _policy_lookup(policy: Any) -> ExclusionLookup:
    def lookup(kind: str, fld: str, name: str, value: str | None = None) -> ExclusionRef | None:
        found = policy.exclusion(kind, fld, name, value)
        return ExclusionRef(found.name, found.reason) if found is not None else None

    return lookup


def _expected_env(raw_blocks: list[Block]) -> ExpectedEnv:
    def expected(kind: str, role: str | None) -> dict[str, str] | None:
        for b in raw_blocks:
            if b.get("kind") == kind and (b.get("role") or None) == role:
                return dict(b.get("env") or {})
        return None

    return expected


def _cookbook_point(decoder: Any, key: str, point: Any) -> tuple[int, int] | None:
    for ci, cell in enumerate(decoder.cells):
        if cell.get("configKey") != key:
            continue
        for pi, cpoint in enumerate(cell.get("points") or []):
            if cpoint.get("item") != point.item:
                continue
            concs = set(cpoint.get("concs") or [])
            if set(point.concs) & concs:
                return ci, pi
    return None


def _raw_rendering(
    key: str, inferencex: Path, rendered: Any, data: RunData
) -> tuple[str, dict[int, Any], list[str]]:
    """``(srt-slurm major version, point index -> rendered point, notes)`` to compare the logs
    with. Logs from srt-slurm 1.x (router on ``Router command:`` lines) are compared with the
    1.x rendering: the two differ in env defaults and router flags (docs/srt-slurm.md §12)."""
    from syncer.inferencex.render import render_config

    current = (rendered.srt_version, {p.index: p for p in rendered.points}, [])
    if not data.sweeps or not all(s.router_style == "1.x" for s in data.sweeps):
        return current
    try:
        old = render_config(inferencex, key, version="1")
    except SyncError:
        # E.g. a schema-2 recipe, which 1.x cannot read: compare with 2.x and say so.
        note = (
            "the logs come from srt-slurm 1.x, which cannot read this schema-2 recipe: "
            "compared with the 2.x rendering"
        )
        return current[0], current[1], [note]
    return "1", {p.index: p for p in old.points}, []


def _cookbook_module(key: str, cookbook: Path) -> tuple[Any, str | None]:
    """The decoder and path of the one module under ``cookbook`` with cells of ``key``, or
    ``(None, None)``. A module may name the key without showing it (e.g. as a KV-tier donor),
    so only cells count; two modules with cells of the key are ambiguous."""
    from syncer.cookbook.decode import decoder_for_text

    having = []
    for m, text in find_modules(key, cookbook):
        candidate = decoder_for_text(text, str(m))
        if any(c.get("configKey") == key for c in candidate.cells):
            having.append((candidate, str(m)))
    if len(having) > 1:
        names = ", ".join(path for _, path in having)
        raise SyncError(f"several cookbook modules have cells of {key} ({names}); pass --cookbook")
    return having[0] if having else (None, None)


def _log_check(
    sweep: SweepLog,
    raw: list[Block],
    router: str,
    assignment: Assignment,
    lookup: ExclusionLookup,
) -> LogCheck:
    """One sweep log against the raw blocks the recipe renders to, placement normalised."""
    launch = build_launch(sweep, _expected_env(raw))
    # A log of the services layer names every service it started: one it lacks is missing.
    unlogged = (
        tuple(k for k in UNLOGGED_KINDS if k not in SERVICE_KINDS)
        if sweep.services
        else UNLOGGED_KINDS
    )
    comp = compare_blocks(
        raw,
        launch.blocks,
        left="recipe",
        right="log",
        router=router,
        exclusion=lookup,
        placement=True,
        right_logged=True,
        unlogged_kinds=unlogged,
    )
    return LogCheck(
        sweep.source,
        sweep.job_id,
        assignment.how.get(sweep.source, ""),
        comp,
        launch.problems,
        launch.ambiguities,
    )


def verify_config(
    key: str,
    *,
    inferencex: Path,
    run: Path | None,
    cookbook: Path | None,
    point: int | None = None,
    conc: int | None = None,
) -> VerifyResult:
    """Verify every point of ``key``, or those ``--point``/``--conc`` select
    (:mod:`syncer.selection`, the rule ``sync render`` follows too)."""
    from syncer.inferencex.master import load_master
    from syncer.inferencex.policy import load_policy
    from syncer.inferencex.render import render_config
    from syncer.inferencex.scripts import script_launch

    launch = script_launch(load_master(inferencex), key)
    if launch is not None:
        from syncer.compare.verify_scripts import verify_script_config

        return verify_script_config(  # type: ignore[no-any-return]
            key, launch, inferencex=inferencex, run=run, cookbook=cookbook, point=point, conc=conc
        )
    root = project_root()
    rendered = render_config(inferencex, key)
    points = select(rendered.points, point=point, conc=conc, concs=lambda p: p.concs, owner=key)
    # A lone nameless log is taken for the verified point only when exactly one is verified.
    only = points[0].index if len(points) == 1 and (point, conc) != (None, None) else None
    run_path = run if run is not None else pinned_run(key, root)
    data = read_run(run_path)
    srt_version, raw_points, notes = _raw_rendering(key, inferencex, rendered, data)
    # All points take part in the assignment, so a log of an unselected point is not "unmatched".
    assignment = assign(data.sweeps, rendered.points, only=only)
    lookup = _policy_lookup(load_policy())
    decoder, module_path = _cookbook_module(
        key, cookbook if cookbook is not None else root / "cookbook_snippets"
    )

    results: list[PointResult] = []
    for p in points:
        res = PointResult(
            p.index, p.label, list(p.concs), p.variant, p.override, p.item, p.submitted
        )
        raw = raw_points[p.index].raw.get(p.submitted) or next(iter(p.raw.values()), [])
        res.logs = [
            _log_check(sweep, raw, p.submitted, assignment, lookup)
            for sweep in assignment.by_point.get(p.index, [])
        ]
        res.cookbook = _cookbook_check(decoder, module_path, key, p, cookbook)
        results.append(res)

    return VerifyResult(
        key=key,
        inferencex=_shown(inferencex),
        run=_shown(run_path),
        cookbook=_shown(module_path) if module_path else None,
        points=results,
        run_data=data,
        assignment=assignment,
        srt_version=srt_version,
        notes=notes,
    )


def _shown(path: str | Path) -> str:
    """A path as reports show it: relative to the working directory when inside it."""
    rel = os.path.relpath(os.path.abspath(path))
    return str(path) if rel.startswith("..") else Path(rel).as_posix()


def _cookbook_check(
    decoder: Any, module_path: str | None, key: str, p: Any, cookbook: Path | None
) -> CookbookCheck:
    if decoder is None or module_path is None:
        where = str(cookbook) if cookbook is not None else "cookbook_snippets/"
        return CookbookCheck(
            where,
            None,
            None,
            None,
            missing=f"no cookbook module in {where} has a cell for {key}",
        )
    found = _cookbook_point(decoder, key, p)
    if found is None:
        return CookbookCheck(
            module_path,
            None,
            None,
            None,
            missing=f"the cookbook has no point of {key} for item {p.item} at "
            f"concurrency {', '.join(str(c) for c in p.concs)}",
        )
    ci, pi = found
    check = CookbookCheck(module_path, decoder.cells[ci].get("id"), ci, pi)
    cell_routers = decoder.routers(ci)
    for router in [*p.cookbook, *(r for r in cell_routers if r not in p.cookbook)]:
        cb_blocks = decoder.blocks_for(ci, pi, router) if router in cell_routers else []
        recipe_blocks = p.cookbook.get(router, [])
        comp = compare_blocks(
            cb_blocks, recipe_blocks, left="cookbook", right="recipe", router=router
        )
        check.comparisons.append(comp)
    return check
