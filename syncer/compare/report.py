"""`sync verify`'s report (``verify_report``): JSON (``"schema": 1``), markdown for a PR
comment, and the terminal, shown by :mod:`syncer.reporting`.

The markdown puts the verdict and the counts first and the details in ``<details>`` folds; it
stays under ``budget`` characters (GitHub's comment limit by default) by dropping, in order, the
matching rows' context, then the difference rows beyond the first ones, always saying so. Every
value from a recipe, log or module goes through the ``code``/``text``/``term`` filters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from syncer.compare.diff import Comparison, Entry
from syncer.compare.results import PointResult, VerifyResult
from syncer.compare.verdicts import PointVerdict, Verdict
from syncer.fitting import halvings
from syncer.reporting import Report, print_lines
from syncer.secrets import mask
from syncer.templating import render
from syncer.untrusted import term_text
from syncer.wording import count

if TYPE_CHECKING:
    # rich is imported only when a terminal report is printed (start-up time of the CLI).
    from rich.console import Console

SCHEMA = 1
# Skipped archive members (links, devices, unsafe paths) named one by one in the text reports;
# a hostile archive may hold thousands, and the notes must leave room for the differences.
MAX_SKIPPED_NOTES = 20
MAX_NOTES = 50
_CUT_NOTE = "\n\n_(report cut to fit the size limit)_\n"
STATUS_TEXT: dict[str, str] = {
    Verdict.MATCH: "match",
    Verdict.DIFFERS: "differs",
    Verdict.ONLY_COOKBOOK: "only in cookbook",
    Verdict.ONLY_RECIPE: "only in recipe",
    Verdict.ONLY_LOG: "only in log",
    Verdict.EXCLUDED: "excluded",
    Verdict.NOT_LOGGED: "not logged",
    Verdict.AMBIGUOUS: "ambiguous",
}
VERDICT_TEXT = {
    PointVerdict.AGREE: "agree",
    PointVerdict.DIFFER: "differ",
    PointVerdict.AMBIGUOUS: "ambiguous Env: split",
    PointVerdict.NO_LOG: "no log",
    PointVerdict.NO_COOKBOOK: "not in cookbook",
}


_ARCHIVE_NAME = re.compile(r"\.(zip|tar|tgz|gz)$", re.IGNORECASE)


def _skipped_entry(run: str, name: str) -> str:
    """How a skipped entry is named: a member of an archive (the run, or an archive inside a
    run directory, is in its path), else a file or link of the run directory, not a member."""
    parents = (run, *PurePosixPath(name).parts[:-1])
    if any(_ARCHIVE_NAME.search(p) for p in parents):
        return f"archive member {name}"
    return f"{name} in the run directory"


def _comp_name(comp: Comparison) -> str:
    name = f"{comp.left} vs {comp.right}"
    return f"{name} ({comp.router})" if comp.router else name


def _short(source: str) -> str:
    return PurePosixPath(source.replace("\\", "/")).name


def _rows(result: VerifyResult) -> list[DiffRow]:
    """Every failing entry, launch problem and ambiguity as a table row."""
    rows: list[DiffRow] = []
    script = result.launched_by is not None
    for p in result.points:
        if not p.logs:
            rows.append(
                _row(
                    p,
                    "cookbook vs log" if script else "recipe vs log",
                    "(point)",
                    "log",
                    "no log",
                    None,
                    None,
                    "no result directory of the run belongs to this point"
                    if script
                    else "no sweep log of the run belongs to this point",
                )
            )
        for lc in p.logs:
            for e in lc.comparison.problems:
                rows.append(_entry_row(p, lc.comparison, e))
            for problem in lc.problems:
                rows.append(
                    _row(
                        p,
                        "log",
                        "(workers)",
                        "consistency",
                        STATUS_TEXT[Verdict.DIFFERS],
                        None,
                        None,
                        problem,
                    )
                )
            for amb in lc.ambiguities:
                status = STATUS_TEXT[Verdict.AMBIGUOUS]
                rows.append(_row(p, "log", "(env)", "Env:", status, None, None, amb))
        if p.cookbook is not None:
            if p.cookbook.missing:
                rows.append(
                    _row(
                        p,
                        "cookbook vs recipe",
                        "(point)",
                        "cookbook",
                        "not in cookbook",
                        None,
                        None,
                        p.cookbook.missing,
                    )
                )
            for comp in p.cookbook.comparisons:
                for e in comp.problems:
                    rows.append(_entry_row(p, comp, e))
    return rows


@dataclass(frozen=True)
class DiffRow:
    """One row of the differences table: a failing entry, a launch problem or an ambiguity."""

    point: int
    comparison: str
    block: str
    key: str
    status: str
    left: str | None
    right: str | None
    note: str | None
    left_side: str = ""  # which side ``left`` is (cookbook, recipe, log), for the terminal
    right_side: str = ""


def _row(
    p: PointResult,
    comparison: str,
    block: str,
    key: str,
    status: str,
    left: str | None,
    right: str | None,
    note: str | None,
    left_side: str = "",
    right_side: str = "",
) -> DiffRow:
    return DiffRow(
        p.index, comparison, block, key, status, left, right, note, left_side, right_side
    )


def _entry_row(p: PointResult, comp: Comparison, e: Entry) -> DiffRow:
    return _row(
        p,
        _comp_name(comp),
        e.block,
        e.key,
        STATUS_TEXT.get(e.status, e.status),
        e.left,
        e.right,
        e.note,
        comp.left,
        comp.right,
    )


def _point_rows(result: VerifyResult, rows: list[DiffRow]) -> list[dict[str, Any]]:
    out = []
    for p in result.points:
        logs = [{"name": _short(lc.source), "job": lc.job_id} for lc in p.logs]
        cb = None
        if p.cookbook is not None and not p.cookbook.missing:
            cb = {"cell": p.cookbook.cell_id, "point": p.cookbook.point}
        out.append(
            {
                "index": p.index,
                "label": p.label,
                "concs": ", ".join(str(c) for c in p.concs),
                "override": p.override or p.variant,
                "logs": logs,
                "cookbook": cb,
                "verdict": p.verdict,
                "verdict_text": VERDICT_TEXT[p.verdict],
                "problems": sum(1 for r in rows if r.point == p.index),
                "unverified": list(p.unverified),
            }
        )
    return out


def _sources(result: VerifyResult) -> dict[str, Any]:
    data = result.run_data
    shas = sorted(set(data.srt_slurm_shas.values()))
    return {
        "inferencex": result.inferencex,
        "run": result.run,
        "cookbook": result.cookbook,
        "srt_slurm": shas,
        "srt_version": result.srt_version,
        "srt_release": result.srt_release,
        "launched_by": result.launched_by,
        "versions": data.versions(),
    }


def _notes(result: VerifyResult) -> list[str]:
    notes: list[str] = list(result.notes)
    a = result.assignment
    what = "result directory" if result.launched_by is not None else "log"
    for u in a.unmatched:
        job = f" (job {u.sweep.job_id or '?'})" if result.launched_by is None else ""
        notes.append(f"{what} {u.sweep.source}{job} not used: {u.reason}")
    for s in a.evals:
        notes.append(f"eval job {what} {s.source} set aside (evals are not the launch to mirror)")
    skipped = result.run_data.skipped
    for skip in skipped[:MAX_SKIPPED_NOTES]:
        notes.append(f"{_skipped_entry(result.run, skip.name)} skipped: {skip.reason}")
    if len(skipped) > MAX_SKIPPED_NOTES:
        notes.append(
            f"{count(len(skipped) - MAX_SKIPPED_NOTES, 'more entry', 'more entries')} of the run "
            "skipped (all of them are in --format json)"
        )
    notes.extend(result.run_data.duplicates)
    for name in result.run_data.empty:
        notes.append(f"sweep log {name} launched no worker (job failed before its workers?)")
    versions = result.run_data.versions()
    for pkg, vers in versions.items():
        if len(vers) > 1:
            notes.append(f"worker fingerprints disagree on {pkg}: {', '.join(vers)}")
    if len(set(result.run_data.srt_slurm_shas.values())) > 1:
        notes.append("the run's jobs used different srt-slurm commits")
    if len(notes) > MAX_NOTES:
        left_out = len(notes) - MAX_NOTES
        notes = [*notes[:MAX_NOTES], f"{left_out} more notes (all of them are in --format json)"]
    return notes


def as_json(result: VerifyResult) -> dict[str, Any]:
    points = []
    for p in result.points:
        points.append(
            {
                "index": p.index,
                "item": p.item,
                "label": p.label,
                "concs": p.concs,
                "variant": p.variant,
                "override": p.override,
                "submitted": p.submitted,
                "verdict": p.verdict,
                "not_verifiable": list(p.unverified),
                "logs": [
                    {
                        "source": lc.source,
                        "job": lc.job_id,
                        "matched_by": lc.matched_by,
                        "comparison": lc.comparison.as_json(),
                        "problems": lc.problems,
                        "ambiguities": lc.ambiguities,
                    }
                    for lc in p.logs
                ],
                "cookbook": None
                if p.cookbook is None
                else {
                    "module": p.cookbook.module,
                    "cell": p.cookbook.cell_id,
                    "point": p.cookbook.point,
                    "missing": p.cookbook.missing,
                    "comparisons": [c.as_json() for c in p.cookbook.comparisons],
                },
            }
        )
    return {
        "schema": SCHEMA,
        "config": result.key,
        "launched_by": result.launched_by,
        "verdict": result.verdict,
        "exit_code": result.exit_code,
        "verdicts": result.verdicts(),
        "counts": result.counts(),
        "sources": _sources(result),
        "points": points,
        "exclusions": [
            {"name": u.name, "reason": u.reason, "keys": u.keys} for u in result.exclusions()
        ],
        "unmatched_logs": [
            {"source": u.sweep.source, "job": u.sweep.job_id, "reason": u.reason}
            for u in result.assignment.unmatched
        ],
        "eval_logs": [s.source for s in result.assignment.evals],
        "duplicate_logs": list(result.run_data.duplicates),
        "empty_logs": list(result.run_data.empty),
        "skipped_members": [{"name": s.name, "reason": s.reason} for s in result.run_data.skipped],
        "read": [r.as_json() for r in result.read],
    }


def _context(result: VerifyResult, rows: list[DiffRow]) -> dict[str, Any]:
    verdicts = result.verdicts()
    return {
        "key": result.key,
        "verdict": result.verdict,
        "verdicts": verdicts,
        "verdict_text": VERDICT_TEXT,
        "launched_by": result.launched_by,
        "total": len(result.points),
        "agreeing": verdicts.get(PointVerdict.AGREE, 0),
        "V": PointVerdict,
        "counts": [(STATUS_TEXT.get(k, k), n) for k, n in result.counts().items()],
        "points": _point_rows(result, rows),
        "rows": rows,
        "left_out": 0,
        "exclusions": result.exclusions(),
        "sources": _sources(result),
        "notes": _notes(result),
        "read": result.read,
    }


def verify_report(result: VerifyResult) -> Report:
    """The report of ``result``: the markdown drops difference rows (halving them) until it
    fits the budget."""
    rows = _rows(result)
    ctx = _context(result, rows)

    def renderings(budget: int | None) -> Iterator[str]:
        # Only the difference rows shrink; the rest of the report is built once.
        for keep in halvings(len(rows)):
            yield render(
                "verify_report.md.j2", **{**ctx, "rows": rows[:keep], "left_out": len(rows) - keep}
            )

    return Report(
        exit_code=result.exit_code,
        document=lambda: as_json(result),
        renderings=renderings,
        terminal=lambda console: _text(ctx, console),
        cut_note=_CUT_NOTE,
    )


def _text(ctx: dict[str, Any], console: Console) -> None:
    print_lines(console, render("verify_report.txt.j2", **ctx))
    if ctx["rows"]:
        # a report with differences only: rich's table brings fractions and decimal
        from rich.table import Table
        from rich.text import Text

        table = Table(title="Differences", show_lines=True)
        longest = max(len(term_text(r.key)) for r in ctx["rows"])
        table.add_column("point", justify="right", no_wrap=True)
        table.add_column("where", overflow="fold")
        table.add_column("key", overflow="fold", min_width=min(longest, 36))
        table.add_column("status", no_wrap=True)
        table.add_column("values", overflow="fold")
        table.add_column("note", overflow="fold")
        for r in ctx["rows"]:
            values = [
                f"{side}: {term_text(v, limit=200)}" if side else term_text(v, limit=200)
                for side, v in ((r.left_side, r.left), (r.right_side, r.right))
                if v is not None
            ]
            cells = (
                str(r.point),
                f"{term_text(r.comparison)}\n{term_text(r.block)}",
                term_text(r.key),
                r.status,
                "\n".join(values) or "—",
                term_text(r.note, limit=300) if r.note else "",
            )
            table.add_row(*(Text(mask(c)) for c in cells))
        console.print(table)
    print_lines(console, render("verify_report_tail.txt.j2", **ctx), marks=False)
