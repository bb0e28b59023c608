"""What `sync verify` found: per point the log checks and the cookbook check, and the verdicts.

Data only: :mod:`syncer.compare.report` makes the report of a ``VerifyResult`` (it imports
this module, never the other way round).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from syncer.compare.diff import Comparison
from syncer.compare.verdicts import PointVerdict
from syncer.inputs import Read
from syncer.runs.collect import RunData
from syncer.runs.logs import SweepLog
from syncer.runs.mapping import Assignment
from syncer.runs.scriptrun import ResultDir


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
    def verdict(self) -> PointVerdict:
        if not self.logs:
            return PointVerdict.NO_LOG
        if any(not (lc.comparison.agrees and not lc.problems) for lc in self.logs):
            return PointVerdict.DIFFER
        if self.cookbook is not None and self.cookbook.missing:
            return PointVerdict.NO_COOKBOOK
        if self.cookbook is not None and not self.cookbook.agrees:
            return PointVerdict.DIFFER
        if any(lc.ambiguities for lc in self.logs):
            return PointVerdict.AMBIGUOUS
        return PointVerdict.AGREE

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
    assignment: Assignment[SweepLog] | Assignment[ResultDir]
    srt_version: str
    notes: list[str] = field(default_factory=list)
    launched_by: str | None = None  # the bash script(s) of a script-launched key
    # the srt-slurm release whose rules the recipe was rendered with, and where it came from
    srt_release: str | None = None
    read: list[Read] = field(default_factory=list)  # the inputs, as the report names them

    @property
    def exit_code(self) -> int:
        return 0 if all(p.verdict == PointVerdict.AGREE for p in self.points) else 1

    @property
    def verdict(self) -> PointVerdict:
        return PointVerdict.AGREE if self.exit_code == 0 else PointVerdict.DIFFER

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in self.points:
            for comp in p.comparisons():
                for status, n in comp.counts().items():
                    out[status] = out.get(status, 0) + n
        return dict(sorted(out.items()))

    def verdicts(self) -> dict[PointVerdict, int]:
        """How many points have each verdict, in the enum's order."""
        out: dict[PointVerdict, int] = {}
        for p in self.points:
            out[p.verdict] = out.get(p.verdict, 0) + 1
        return {v: out[v] for v in PointVerdict if v in out}

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
