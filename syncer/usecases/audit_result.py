"""What `sync audit` found: one row per published cell, the module-level findings, and the
checks that were not made (with why). Data only: :mod:`syncer.usecases.audit_report` makes its
report.

The JSON form is the stable, documented schema of ``docs/audit.md`` (``"schema": 1``): add
keys, never rename or drop one without raising the schema number.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from syncer.compare.verdicts import RECIPE_WORST_FIRST, RecipeVerdict

SCHEMA = 1

# (The rows of every cell are held to the end of a markdown or text report: slots.)


class Check(StrEnum):
    """What a finding (or a check not made) is about; JSON and the templates spell these."""

    MODULE = "module"  # the module does not decode
    ROUNDTRIP = "roundtrip"  # the module is not what the generator writes for its cells
    RECIPE = "recipe"  # the recipe at the pinned commit renders other commands
    POINTS = "points"  # a point one side has and the other lacks
    RENDER = "render"  # the recipe at the pinned commit cannot be rendered
    MASTER = "master"  # the config left the master on InferenceX's default branch
    PR = "pr"  # the InferenceX PR was closed without merging / merged long ago, still in progress
    ARTIFACTS = "artifacts"  # the pinned run's artifacts expire soon or are gone
    PIN = "pin"  # the PR was re-pinned; the cell still shows the old run
    EVIDENCE = "evidence"  # the bot's record of a verification, read back
    LINT = "lint"  # flags the cell's SGLang version does not declare


@dataclass(slots=True)
class AuditFinding:
    check: Check
    message: str
    point: int | None = None
    # the flag-level differences of a recipe finding: {router, block, field, key, status,
    # cookbook, recipe}
    differences: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "message": self.message,
            "point": self.point,
            "differences": self.differences,
        }


@dataclass(slots=True)
class NotChecked:
    check: Check
    reason: str

    def as_json(self) -> dict[str, str]:
        return {"check": self.check, "reason": self.reason}


@dataclass(slots=True)
class PointRow:
    index: int
    concs: list[int]
    status: str
    sha: str | None
    recipe: RecipeVerdict = RecipeVerdict.NOT_CHECKED

    def as_json(self) -> dict[str, Any]:
        return {
            "point": self.index,
            "concs": self.concs,
            "status": self.status,
            "sha": self.sha,
            "recipe": self.recipe,
        }


@dataclass(slots=True)
class CellRow:
    module: str
    model: str
    index: int
    id: str
    config_key: str
    hw: str
    label: str
    image: str
    status: str  # the points' statuses, joined when they differ
    provenance: dict[str, str]
    links: dict[str, str]
    points: list[PointRow] = field(default_factory=list)
    findings: list[AuditFinding] = field(default_factory=list)
    not_checked: list[NotChecked] = field(default_factory=list)
    evidence: dict[str, Any] | None = None

    @property
    def recipe(self) -> RecipeVerdict:
        """The cell's recipe verdict: ``differs`` when any point does, ``agrees`` when every
        point was compared and agrees, else ``not-checked``."""
        verdicts = {p.recipe for p in self.points}
        for worst in RECIPE_WORST_FIRST:
            if worst in verdicts:
                return worst
        return RecipeVerdict.AGREES

    @property
    def unchecked(self) -> bool:
        """No finding, and the recipe never compared: nothing vouches for the cell's commands
        (reports mark it apart from a cell checked and clean)."""
        return not self.findings and self.recipe == RecipeVerdict.NOT_CHECKED

    def as_json(self) -> dict[str, Any]:
        return {
            "module": self.module,
            "model": self.model,
            "cell": self.id,
            "index": self.index,
            "configKey": self.config_key,
            "hw": self.hw,
            "label": self.label,
            "image": self.image,
            "status": self.status,
            "provenance": self.provenance,
            "links": self.links,
            "recipe": self.recipe,
            "points": [p.as_json() for p in self.points],
            "findings": [f.as_json() for f in self.findings],
            "notChecked": [n.as_json() for n in self.not_checked],
            "evidence": self.evidence,
        }


@dataclass
class ModuleRow:
    path: str
    model: str
    cells: int = 0
    findings: list[AuditFinding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # the reviewer diff (markdown, within a budget) of the drifted cells, made when a report
    # shows it
    review: Callable[[int | None], str | None] | None = None

    def review_markdown(self, budget: int | None) -> str | None:
        return self.review(budget) if self.review is not None else None

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "model": self.model,
            "cells": self.cells,
            "findings": [f.as_json() for f in self.findings],
            "notes": self.notes,
        }


@dataclass
class AuditResult:
    cookbook: str
    inferencex: str
    modules: list[ModuleRow]
    cells: list[CellRow]
    not_checked: list[NotChecked] = field(default_factory=list)  # for every cell
    notes: list[str] = field(default_factory=list)
    # the cells added once spooled (a report listing them only as its JSON), not in ``cells``
    spooled: SpooledCells | None = None

    def add_cells(self, rows: list[CellRow]) -> None:
        if self.spooled is None:
            self.cells.extend(rows)
        else:
            for row in rows:
                self.spooled.add(row)

    def cell_entries(self) -> Iterator[dict[str, Any]]:
        """The JSON entry of every cell, held or spooled, one at a time."""
        for c in self.cells:
            yield c.as_json()
        if self.spooled is not None:
            yield from self.spooled.entries()

    def findings(self) -> Iterator[tuple[str, str | None, AuditFinding]]:
        """Every finding with its module path and cell id (None: the module's own), of the
        cells held (a spooled cell's are in its entry and ``counts``)."""
        for m in self.modules:
            for f in m.findings:
                yield m.path, None, f
        for c in self.cells:
            for f in c.findings:
                yield c.module, c.id, f

    @property
    def exit_code(self) -> int:
        return 1 if self.counts()["findings"] else 0

    def counts(self) -> dict[str, Any]:
        tally = _Tally()
        for m in self.modules:
            tally.by_check.update(f.check for f in m.findings)
        for c in self.cells:
            tally.add(c)
        if self.spooled is not None:
            tally.merge(self.spooled.tally)
        return {
            "modules": len(self.modules),
            "cells": tally.cells,
            "cellsWithFindings": tally.with_findings,
            "cellsNotChecked": tally.unchecked,
            "findings": tally.by_check.total(),
            "byCheck": dict(sorted(tally.by_check.items())),
            "recipe": {v: tally.recipe[v] for v in RecipeVerdict},
        }

    def json(self) -> dict[str, Any]:
        return {**self.json_head(), "cells": list(self.cell_entries())}

    def json_head(self) -> dict[str, Any]:
        """The JSON document up to its cells, which come last."""
        return {
            "schema": SCHEMA,
            "cookbook": self.cookbook,
            "inferencex": self.inferencex,
            "exitCode": self.exit_code,
            "counts": self.counts(),
            "notChecked": [n.as_json() for n in self.not_checked],
            "notes": self.notes,
            "modules": [m.as_json() for m in self.modules],
        }

    def by_model(self) -> list[tuple[ModuleRow, list[CellRow]]]:
        return [(m, [c for c in self.cells if c.module == m.path]) for m in self.modules]


@dataclass
class _Tally:
    """What the counts say of cells: how many, with findings, never checked, the findings by
    check and the recipe verdicts."""

    cells: int = 0
    with_findings: int = 0
    unchecked: int = 0
    by_check: Counter[str] = field(default_factory=Counter)
    recipe: Counter[str] = field(default_factory=Counter)

    def add(self, cell: CellRow) -> None:
        self.cells += 1
        self.with_findings += bool(cell.findings)
        self.unchecked += cell.unchecked
        self.by_check.update(f.check for f in cell.findings)
        self.recipe[cell.recipe] += 1

    def merge(self, other: _Tally) -> None:
        self.cells += other.cells
        self.with_findings += other.with_findings
        self.unchecked += other.unchecked
        self.by_check.update(other.by_check)
        self.recipe.update(other.recipe)


class SpooledCells:
    """Cells written away as their module's audit ends, for the report that lists them only in
    its JSON, at its end (after the counts): each cell's JSON entry is a line of an unnamed
    temporary file, read back one at a time, so the memory an audit holds does not grow with
    the cookbook. Only the counts stay in memory."""

    def __init__(self) -> None:
        import tempfile  # only the JSON form of an audit spools

        # (open as long as the result is: closed, and gone, when it is collected)
        self._file = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
        self.tally = _Tally()

    def add(self, row: CellRow) -> None:
        # ASCII JSON on one line: any value (a lone surrogate too) reads back as it was
        self._file.write(json.dumps(row.as_json()) + "\n")
        self.tally.add(row)

    def entries(self) -> Iterator[dict[str, Any]]:
        self._file.seek(0)
        for line in self._file:
            entry: dict[str, Any] = json.loads(line)
            yield entry
