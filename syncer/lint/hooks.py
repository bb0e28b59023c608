"""The lint where modules are published: ``sync generate`` and the bot's cookbook PR body.

A finding never blocks publishing (the reviewer decides); it is shown. The check needs an SGLang
checkout: the bot's cookbook clone is one (the cookbook lives in the SGLang repository). Where
none is at hand the check is skipped with a one-line reason rather than reported as findings
for every cell, and a lint that fails on bad input (an unreadable ``server_args.py``) is shown
as that error, never raised into the publishing path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from syncer.errors import SyncError
from syncer.lint.lint import LintResult, lint_texts
from syncer.lint.report import lint_report
from syncer.lint.source import SERVER_ARGS, SGLangSource
from syncer.templating import render

# The PR body's share for the lint section; the reviewer diff gets what the rest leaves.
PR_SECTION_BUDGET = 12_000


@dataclass
class PublishLint:
    """The outcome for one publish: a result, or why there is none."""

    result: LintResult | None
    skipped: str | None = None
    error: str | None = None

    def markdown(self, budget: int = PR_SECTION_BUDGET) -> str | None:
        """The PR body section; None when the check did not run (nothing to show)."""
        if self.result is not None:
            return lint_report(self.result).markdown(budget)
        if self.error is not None:
            return render("lint_failed.md.j2", error=self.error)
        return None


def sglang_checkout(candidate: Path | None) -> Path | None:
    """``candidate`` when it is an SGLang git checkout (``server_args.py`` at HEAD)."""
    if candidate is None:
        return None
    try:
        return candidate if SGLangSource(candidate).has_server_args() else None
    except SyncError:
        return None


def lint_published(modules: list[tuple[str, str]], git_dir: Path | None) -> PublishLint:
    """Lint module texts (``(path, text)``) about to be published, against ``git_dir``."""
    checkout = sglang_checkout(git_dir)
    if checkout is None:
        # The bot's case (`sync generate` says its own, with its --sglang): the cookbook clone
        # is the checkout, and the cookbook lives in SGLang's repository.
        return PublishLint(
            None,
            skipped=f"the cookbook repository has no {SERVER_ARGS}, so it is not SGLang's "
            "repository (sgl-project/sglang), whose history the check reads each flag from",
        )
    try:
        return PublishLint(lint_texts(modules, SGLangSource(checkout)))
    except SyncError as exc:
        return PublishLint(None, error=str(exc))


def generate_checkout(sglang: Path | None, pages: Path | None) -> Path | None:
    """The checkout ``sync generate`` lints against: ``--sglang`` (which must be an SGLang
    checkout: bad input otherwise, before anything is generated), else the ``--pages``
    cookbook checkout when it is an SGLang one, else None (the check is skipped)."""
    if sglang is not None:
        if sglang_checkout(sglang) is None:
            raise SyncError(
                "not an SGLang git checkout (no python/sglang/srt/server_args.py at HEAD)",
                path=str(sglang),
            )
        return sglang
    if pages is None:
        return None

    try:
        top = SGLangSource(pages).toplevel()
    except SyncError:
        return None
    return sglang_checkout(top)
