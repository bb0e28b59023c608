"""`sync lint`'s report (``lint_report``): JSON (``"schema": 1``), markdown (a PR body section
or a comment) and the terminal, shown by :mod:`syncer.reporting`. Every value read from a
module or an SGLang file goes through the untrusted-value filters; the markdown stays under
``budget`` characters by dropping finding rows (saying how many, and that ``--format json``
has all of them)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from syncer.fitting import halvings
from syncer.inputs import Read
from syncer.lint.declared_flags import FlagSet
from syncer.lint.lint import Finding, LintResult
from syncer.lint.source import SERVER_ARGS
from syncer.reporting import Report, print_lines
from syncer.secrets import mask
from syncer.templating import render
from syncer.untrusted import term_text

if TYPE_CHECKING:
    # rich is imported only when a terminal report is printed (start-up time of the CLI).
    from rich.console import Console

SCHEMA = 1
CASES_SHOWN = 3
_CUT_NOTE = "\n\n_(report cut to fit the size limit; `sync lint --format json` has all of it)_\n"
STATUS_TEXT = {
    "undeclared": "undeclared",
    "possibly-undeclared": "possibly undeclared",
    "deprecated": "deprecated",
    "abbreviation": "abbreviation only",
    "unresolved": "version unresolved",
}


def _flagset_json(flags: FlagSet | None, path: str | None) -> dict[str, Any] | None:
    if flags is None:
        return None
    return {
        "path": path or flags.path,
        "flags": len(flags.flags),
        "complete": flags.complete,
        "abbreviations": flags.abbreviations,
        "dynamic": flags.dynamic,
        "alsoRead": flags.extra_sources,
        "deprecated": {
            k: {"action": d.action, "newFlag": d.new_flag, "stops": d.stops}
            for k, d in flags.deprecated.items()
        },
    }


def as_json(result: LintResult) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "sglang": result.git_dir,
        "exit_code": result.exit_code,
        "counts": result.counts(),
        "modules": [
            {
                "path": m.path,
                "cases": m.cases,
                "cells": [
                    {
                        "cell": c.cell,
                        "cellId": c.cell_id,
                        "image": c.image,
                        "pin": {"origin": c.pin.origin, "label": c.pin.label},
                        "commit": c.commit,
                        "problem": c.problem,
                    }
                    for c in m.cells
                ],
                "notes": m.notes,
            }
            for m in result.modules
        ],
        "versions": [
            {
                "commit": commit,
                "worker": _flagset_json(v.worker, SERVER_ARGS),
                "router": _flagset_json(v.router, v.router_path),
            }
            for commit, v in result.versions.items()
        ],
        "findings": [f.as_json() for f in result.findings],
    }


def _cases_text(f: Finding) -> str:
    shown = ", ".join(f"p{c.point} {c.router} {c.kv}" for c in f.cases[:CASES_SHOWN])
    more = len(f.cases) - CASES_SHOWN
    return shown + (f", … {more} more" if more > 0 else "")


def _row(f: Finding) -> dict[str, Any]:
    return {
        "module": f.module,
        "cell": f.cell_id,
        "version": f.version,
        "flag": f.flag,
        "component": f.component,
        "cmds": f.cmds,
        "status": f.status,
        "status_text": STATUS_TEXT[f.status],
        "nearest": f.nearest,
        "cases": _cases_text(f),
        "count": len(f.cases),
        "reason": f.reason,
    }


def _context(result: LintResult) -> dict[str, Any]:
    flag_rows = [_row(f) for f in result.findings if f.flag is not None]
    unresolved = [_row(f) for f in result.findings if f.flag is None]
    versions = []
    for commit, v in result.versions.items():
        labels = sorted(
            {c.pin.label for m in result.modules for c in m.cells if c.commit == commit}
        )
        versions.append(
            {
                "commit": commit,
                "labels": labels,
                "worker_path": SERVER_ARGS,
                "worker_flags": len(v.worker.flags),
                "worker_dynamic": v.worker.dynamic,
                "also_read": v.worker.extra_sources,
                "router_path": v.router_path,
                "router_flags": len(v.router.flags) if v.router else 0,
                "router_dynamic": v.router.dynamic if v.router else [],
            }
        )
    return {
        "sglang": result.git_dir,
        "modules": [m.path for m in result.modules],
        "cells": sum(len(m.cells) for m in result.modules),
        "cases": sum(m.cases for m in result.modules),
        "counts": result.counts(),
        "status_text": STATUS_TEXT,
        "rows": flag_rows,
        "unresolved": unresolved,
        "left_out": 0,
        "cut": False,
        "versions": versions,
        "notes": [n for m in result.modules for n in m.notes],
    }


def lint_report(result: LintResult, read: Sequence[Read] = ()) -> Report:
    """The report of ``result``, made from what ``read`` lists: the markdown drops finding
    rows (halving them), then keeps the bare verdict, until it fits the budget."""
    ctx = {**_context(result), "read": read}
    rows = ctx["rows"]

    def renderings(budget: int | None) -> Iterator[str]:
        for keep in halvings(len(rows)):
            yield render(
                "lint_report.md.j2", **{**ctx, "rows": rows[:keep], "left_out": len(rows) - keep}
            )
        # Unresolved cells and version notes alone overflow: keep the verdict, say so.
        bare = {"unresolved": [], "versions": [], "notes": [], "rows": [], "left_out": len(rows)}
        yield render("lint_report.md.j2", **{**ctx, **bare, "cut": True})

    return Report(
        exit_code=result.exit_code,
        document=lambda: {**as_json(result), "read": [r.as_json() for r in read]},
        renderings=renderings,
        terminal=lambda console: _text(ctx, console),
        cut_note=_CUT_NOTE,
    )


def _text(ctx: dict[str, Any], console: Console) -> None:
    from rich.table import Table
    from rich.text import Text

    print_lines(console, render("lint_report.txt.j2", **ctx))
    if ctx["rows"]:
        table = Table(title="Flags to look at against the pinned SGLang version", show_lines=True)
        for name in ("cell", "version", "flag", "status", "closest declared", "cases", "note"):
            table.add_column(name, overflow="fold", no_wrap=name == "status")
        for r in ctx["rows"]:
            table.add_row(
                *(
                    Text(mask(term_text(v)))
                    for v in (
                        r["cell"],
                        r["version"],
                        f"{r['flag']} ({r['component']})",
                        r["status_text"],
                        ", ".join(r["nearest"]) or "—",
                        f"{r['count']}: {r['cases']}",
                        r["reason"] or "",
                    )
                )
            )
        console.print(table)
