"""`sync generate`'s report (``generate_report``): per model, what its data module and page
section became (written, unchanged, would change; edited in place; cells kept as published),
the srt-slurm commit each branch-cloning config followed, and in ``--check`` the reviewer diff
of each module that would change; as text or JSON, shown by :mod:`syncer.reporting`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from syncer.cookbook.jsmodule import read_text
from syncer.encoder.edit import describe as describe_edit
from syncer.inferencex.releases import Release
from syncer.inputs import Read
from syncer.lint.hooks import PublishLint
from syncer.lint.report import lint_report
from syncer.reporting import Report, print_lines
from syncer.review.report import review_report
from syncer.review.review import Review, review_texts
from syncer.templating import render
from syncer.untrusted import term_text
from syncer.usecases.generate import GenerateResult
from syncer.wording import js

_CUT_NOTE = "\n\n_(report cut to fit)_\n"


@dataclass
class GenerateRun:
    """One ``sync generate``: every model's result, what was read, the branch releases
    applied (config key -> release), the SGLang flag check of the modules (None: no SGLang
    checkout, so it did not run) and, in ``check``, the reviewer diff of each module that
    would change (by module path)."""

    results: list[GenerateResult]
    check: bool
    read: list[Read]
    applied: dict[str, Release] = field(default_factory=dict)
    lint: PublishLint | None = None
    reviews: dict[Path, Review] = field(init=False)

    def __post_init__(self) -> None:
        # The gate says what drifted, not only that something did: the reviewer diff of the
        # commands (what `sync diff` shows) between the module on disk and the generated one.
        self.reviews = {
            r.path: _review(r.path, r.text) for r in self.results if self.check and r.changed
        }

    @property
    def drift(self) -> bool:
        return self.check and any(r.changed or r.page_changed for r in self.results)

    @property
    def exit_code(self) -> int:
        return 1 if self.drift else 0

    def json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "drift": self.drift,
            "rules": {key: release.describe() for key, release in self.applied.items()},
            "modules": [self._module_json(r) for r in self.results],
            "lint": _lint_json(self.lint),
            "read": [r.as_json() for r in self.read],
        }

    def _module_json(self, result: GenerateResult) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "model": result.model,
            "path": str(result.path),
            "status": "no module published"
            if result.unpublished
            else _status(result.changed, self.check, "written"),
            "cells": result.cells,
            "cases": result.cases,
            "edit": describe_edit(result.edit) if result.edit is not None else None,
            "kept": [{"config": k.key, "script": k.script, "cells": k.cells} for k in result.kept],
            "unrendered": dict(result.unrendered),
            "page": None,
        }
        if result.page_path is not None:
            doc["page"] = {
                "path": str(result.page_path),
                "status": "kept as written"
                if result.page_kept is not None
                else _status(result.page_changed, self.check, "updated"),
                "heading": result.page_kept,
            }
        review = self.reviews.get(result.path)
        if review is not None:
            doc["review"] = review_report(review).json()
        return doc


def _review(path: Path, new_text: str) -> Review:
    old_text = read_text(path) if path.is_file() else None
    return review_texts(old_text, new_text, old_label=str(path), new_label="generated")


def _lint_json(lint: PublishLint | None) -> dict[str, Any] | None:
    if lint is None:
        return None  # no SGLang checkout: the check did not run
    if lint.result is not None:
        return lint_report(lint.result).json()
    return {"skipped": lint.skipped, "error": lint.error}


def _status(changed: bool, check: bool, done: str) -> str:
    if not changed:
        return "unchanged"
    return "would change" if check else done


def generate_report(run: GenerateRun) -> Report:
    """The report of ``run``: the text of the terminal, and the same as JSON."""
    return Report(
        exit_code=run.exit_code,
        document=run.json,
        renderings=lambda _budget: iter([_text(run)]),
        terminal=functools.partial(_terminal, run),
        cut_note=_CUT_NOTE,
        default_budget=None,
    )


def _text(run: GenerateRun) -> str:
    return "".join(_pieces(run, lambda review: ""))


def _terminal(run: GenerateRun, console: Any) -> None:
    def show(review: Any) -> str:
        review_report(review).text(console)
        return ""

    for piece in _pieces(run, show):
        if piece:
            print_lines(console, piece.rstrip("\n"), marks=False)
    _lint_terminal(run.lint, console)


def _lint_terminal(lint: PublishLint | None, console: Any) -> None:
    """The flag check's terminal report, or why it did not run (on stderr: the report's
    findings are the output, a check that did not run is a note beside it)."""
    if lint is None:
        click.echo(
            "SGLang flag check skipped: no SGLang checkout (give --sglang GIT_DIR)", err=True
        )
    elif lint.result is None:
        click.echo(f"SGLang flag check not run: {term_text(lint.error)}", err=True)
    else:
        lint_report(lint.result).text(console)


def _pieces(run: GenerateRun, review: Any) -> Iterator[str]:
    """The text in order, each module's reviewer diff (``review``) between its module lines
    and its page line."""
    yield render("read.txt.j2", read=run.read)
    yield render("generate_rules.txt.j2", applied=run.applied)
    for result in run.results:
        edit = describe_edit(result.edit) if result.edit is not None else None
        yield render(
            "generate_module.txt.j2", check=run.check, result=result, status=_status, edit=edit
        )
        found = run.reviews.get(result.path)
        if found is not None:
            yield review(found)
        heading = js(result.page_kept) if result.page_kept is not None else None
        yield render(
            "generate_page.txt.j2", check=run.check, result=result, status=_status, heading=heading
        )
