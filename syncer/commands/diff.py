"""`sync diff OLD NEW`: the reviewer diff of the commands in two versions of a data module.

Each side is a module file or ``REV:PATH`` read with ``git show`` from the current repository
(or ``-C DIR``). Exit code 0 when no command changed, 1 when commands changed, 2 on bad input.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from syncer import gitrun
from syncer.commands import options
from syncer.console import report_console
from syncer.cookbook.jsmodule import decode_text, read_text
from syncer.errors import SyncError
from syncer.fitting import GITHUB_TEXT_LIMIT
from syncer.fsio import write_atomic
from syncer.reporting import Format, text_of
from syncer.review.report import review_report
from syncer.review.review import review_texts


def read_side(spec: str, repo: str | None) -> str:
    """The module text a side names: a file, else ``REV:PATH`` in a git repository."""
    base = Path(repo) if repo else Path.cwd()
    candidate = Path(spec) if Path(spec).is_absolute() else base / spec
    if candidate.is_file() or os.path.lexists(candidate):
        return read_text(candidate)  # which names what is there when it is no regular file
    rev, sep, path = spec.partition(":")
    if not sep or not rev or not path:
        raise SyncError("no such file, and not REV:PATH", path=spec)
    gitrun.operand(rev, f"{spec}: revision")
    # The clean environment of every git: a caller's GIT_DIR never makes this read another
    # repository than -C DIR (or the current directory).
    kind = gitrun.run("cat-file", "-t", repo=base, operands=[f"{rev}:{path}"], check=False)
    if kind.returncode == 0 and kind.stdout.strip() != b"blob":
        what = kind.stdout.decode("ascii", "replace").strip()
        shown = "a directory" if what == "tree" else f"a {what}"
        raise SyncError(f"{path} is {shown} at {rev}, not a module file", path=spec)
    done = gitrun.run("show", repo=base, operands=[f"{rev}:{path}"], check=False)
    if done.returncode != 0:
        reason = gitrun.last_line(done)
        raise SyncError(f"cannot read {path} at {rev} in {base}: {reason}", path=spec)
    return decode_text(done.stdout, spec)


@click.command("diff")
@click.argument("old")
@click.argument("new")
@click.option(
    "-C",
    "repo",
    type=click.Path(file_okay=False),
    default=None,
    help="Git repository (and base directory) for both sides; default: the current directory.",
)
@options.format_option(
    ["text", "markdown", "json"],
    help="text for reading, markdown for a PR body (see --budget), json for tools.",
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=None,
    help=f"Markdown size budget in characters (default: {GITHUB_TEXT_LIMIT}, what a GitHub PR "
    "body or comment holds).",
)
@options.file_option(
    "-o", "--output", help="Write the report to this file instead of standard output."
)
def diff_command(
    old: str, new: str, repo: str | None, fmt: str, budget: int | None, output: Path | None
) -> int:
    """Reviewer diff of the commands in two versions of a cookbook data module.

    OLD and NEW are module files or REV:PATH (e.g.
    origin/main:docs/src/snippets/agentx/deepseek-ai/deepseek-v4_1.jsx).
    Exit code: 0 no command changes, 1 changes, 2 error.
    """
    if budget is not None and fmt != "markdown":
        raise SyncError(f"--budget limits markdown only, not --format {fmt}")
    old_text = read_side(old, repo)
    new_text = read_side(new, repo)
    report = review_report(review_texts(old_text, new_text, old_label=old, new_label=new))
    if fmt in (Format.MARKDOWN, Format.JSON):
        text = text_of(report, fmt, budget or GITHUB_TEXT_LIMIT)
    else:
        if output is None:
            report.text(report_console())
            return report.exit_code
        with open(os.devnull, "w", encoding="utf-8") as sink:
            console = report_console(sink, record=True)
            report.text(console)
            text = console.export_text()
    if output is None:
        click.echo(text, nl=not text.endswith("\n"))
    else:
        write_atomic(output, text)
    return report.exit_code
