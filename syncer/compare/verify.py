"""The comparisons of `sync verify` for a recipe-launched key, point by point.

Two comparisons per point, as the seed thread's sign-off did by hand:

* **recipe vs log** (raw): what the recipe renders to (``RenderedPoint.raw``) against the raw
  blocks read from the point's sweep log, placement values normalised; every key the exclusion
  policy names is ``excluded`` with the policy entry's name and reason;
* **cookbook vs recipe** (cookbook form): the decoded cookbook point (by ``configKey``, ``item``
  and ``concs``, measured KV tier) against ``RenderedPoint.cookbook``, for both routers.

The policy (:mod:`syncer.inferencex.policy`) is the only exclusion list. Finding the inputs
(``sync.yaml``, the pinned run, the module) is the use case's
(:mod:`syncer.usecases.verify`); this module only compares what it is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from syncer.compare.diff import UNLOGGED_KINDS, ExclusionLookup, ExclusionRef, compare_blocks
from syncer.compare.published import compare_published
from syncer.compare.results import CookbookCheck, LogCheck, PointResult
from syncer.cookbook.decode import Decoder
from syncer.inferencex.policy import Policy
from syncer.inferencex.render import RenderedPoint
from syncer.model import SERVICE_KINDS, Block
from syncer.runs.launch import ExpectedEnv, build_launch
from syncer.runs.logs import SweepLog
from syncer.runs.mapping import Assignment


class MeasuredPoint(Protocol):
    """What locates a point in the cookbook: its master row, the concurrencies it ran and its
    deployment's label."""

    @property
    def item(self) -> int: ...

    @property
    def concs(self) -> list[int]: ...

    @property
    def label(self) -> str: ...


def policy_lookup(policy: Policy) -> ExclusionLookup:
    """The exclusion policy as the comparison asks it (entry name and reason only)."""

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


def cookbook_point(decoder: Decoder, key: str, point: MeasuredPoint) -> tuple[int, int] | None:
    """``(cell, point)`` of the cookbook point of ``key`` measuring ``point`` (same master row,
    a shared concurrency), or ``None``; a cell of the point's deployment (its label) first: an
    edit keeps a config's published cell of a deployment its new rendering lacks, and the
    master row numbers of that older commit may name this point's row and concurrency too."""
    found = [
        (ci, pi)
        for ci, cell in enumerate(decoder.cells)
        if cell.get("configKey") == key
        for pi, cpoint in enumerate(cell.get("points") or [])
        if cpoint.get("item") == point.item and set(point.concs) & set(cpoint.get("concs") or [])
    ]
    same = [f for f in found if decoder.cells[f[0]].get("label") == point.label]
    return next(iter(same or found), None)


def log_check(
    sweep: SweepLog,
    raw: list[Block],
    router: str,
    assignment: Assignment[SweepLog],
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


def cookbook_cell(
    decoder: Decoder | None,
    module_path: str | None,
    key: str,
    p: MeasuredPoint,
    cookbook: Path | None,
) -> CookbookCheck:
    """Where the cookbook shows ``p`` (no comparisons yet), or why it does not: no module with
    a cell of ``key``, or no point of the cell at ``p``'s row and concurrency."""
    if decoder is None or module_path is None:
        where = str(cookbook) if cookbook is not None else "cookbook_snippets/"
        return CookbookCheck(
            where, None, None, None, missing=f"no cookbook module in {where} has a cell for {key}"
        )
    found = cookbook_point(decoder, key, p)
    if found is None:
        return CookbookCheck(
            module_path,
            None,
            None,
            None,
            missing=f"the cookbook has no point of {key} for item {p.item} at concurrency "
            f"{', '.join(str(c) for c in p.concs)}",
        )
    ci, pi = found
    return CookbookCheck(module_path, decoder.cells[ci].get("id"), ci, pi)


def cookbook_check(
    decoder: Decoder | None,
    module_path: str | None,
    key: str,
    p: RenderedPoint,
    cookbook: Path | None,
) -> CookbookCheck:
    """The cookbook point of ``p`` against the recipe's cookbook form, for every router either
    side has."""
    check = cookbook_cell(decoder, module_path, key, p, cookbook)
    if decoder is None or check.cell is None or check.point is None:
        return check
    check.comparisons.extend(compare_published(decoder, check.cell, check.point, p))
    return check


def compare_point(
    p: RenderedPoint,
    raw: list[Block],
    *,
    key: str,
    assignment: Assignment[SweepLog],
    lookup: ExclusionLookup,
    decoder: Decoder | None,
    module_path: str | None,
    cookbook: Path | None,
) -> PointResult:
    """Both comparisons of one point: each of its logs against ``raw`` (the rendering of the
    logs' srt-slurm version), and the cookbook against the recipe's cookbook form."""
    res = PointResult(p.index, p.label, list(p.concs), p.variant, p.override, p.item, p.submitted)
    res.logs = [
        log_check(sweep, raw, p.submitted, assignment, lookup)
        for sweep in assignment.by_point.get(p.index, [])
    ]
    res.cookbook = cookbook_check(decoder, module_path, key, p, cookbook)
    return res
