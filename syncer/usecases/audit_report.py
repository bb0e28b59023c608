"""`sync audit`'s report (``audit_report``): the JSON of ``docs/audit.md``, the markdown of an
issue or PR body (a summary, then one fold per model) and the terminal, shown by
:mod:`syncer.reporting`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import Any

from syncer import fitting
from syncer.inputs import Read
from syncer.reporting import JsonItems, Report, print_lines
from syncer.templating import render
from syncer.usecases.audit_result import AuditResult

# The fold around a module's reviewer diff in the markdown report (its size, for the budget).
REVIEW_FRAME = (
    "\n<details><summary>Reviewer diff: published → the recipes at their pins</summary>"
    "\n\n\n\n</details>\n"
)
_CUT_NOTE = "\n\n_(report cut to fit)_\n"


def audit_report(result: AuditResult, read: Sequence[Read] = ()) -> Report:
    """The report of ``result``, made from what ``read`` lists: within the budget by dropping,
    in turn, the reviewer diffs, the clean cells' rows, then the finding rows of the last
    models."""
    text = functools.partial(render, "audit_report.txt.j2", result=result, read=read)
    return Report(
        exit_code=result.exit_code,
        document=lambda: {
            **result.json_head(),
            # each cell's entry written as it is made, not held with the others'
            "cells": JsonItems(result.cell_entries),
            "read": [r.as_json() for r in read],
        },
        renderings=lambda budget: _renderings(result, read, budget or fitting.GITHUB_TEXT_LIMIT),
        terminal=lambda console: print_lines(console, text()),
        cut_note=_CUT_NOTE,
    )


def _renderings(result: AuditResult, read: Sequence[Read], limit: int) -> Iterator[str]:
    models = result.by_model()
    page: dict[str, Any] = {"result": result, "models": models, "read": read}
    bare = render("audit_report.md.j2", **page, reviews=False, clean=True)
    with_review = sum(1 for m in result.modules if m.review is not None)
    if with_review:
        # Each reviewer diff gets an equal share of the room the rest leaves (the review fits
        # itself to it: folds, then change tables dropped).
        share = (limit - len(bare)) // with_review - len(REVIEW_FRAME)
        if share > 0:
            yield render("audit_report.md.j2", **page, reviews=share, clean=True)
    yield bare
    for n in fitting.halvings(len(models)):
        yield render("audit_report.md.j2", **page, reviews=False, clean=False, detailed=n)
