"""`sync lint MODULE|--all [--sglang GIT_DIR]`: do the commands use only flags their pinned
SGLang version declares?

Each cell's image pins an SGLang version (``imageCommit``, else the release tag in ``image``);
its ``server_args.py`` and router arguments are read from an SGLang git checkout with git
plumbing (never checked out, imported or run). ``--sglang`` defaults to the git repository the
module lives in: upstream, the cookbook is part of the SGLang repository. Exit codes: 0 every
flag declared, 1 findings (undeclared or possibly undeclared flags, unresolvable versions),
2 bad input.
"""

from __future__ import annotations

from pathlib import Path

import click

from syncer import gitrun
from syncer.commands import options
from syncer.errors import SyncError
from syncer.fsio import files_in
from syncer.inputs import Input, record
from syncer.lint.lint import lint_paths
from syncer.lint.report import lint_report
from syncer.lint.source import SGLangSource


@click.command("lint")
@click.argument("module", required=False, type=click.Path(path_type=Path))
@click.option("--all", "all_modules", is_flag=True, help="Every module under --cookbook.")
@options.cookbook_dir_option(
    "--cookbook",
    "cookbook",
    help="Directory of the data modules (<org>/<model>.jsx) that --all reads.",
)
@options.sglang_option("SGLang git checkout (default: the git repository holding the modules).")
@options.format_option(
    ["text", "markdown", "json"],
    help="text for a terminal, markdown for a PR body, json for tools.",
)
def lint_command(
    module: Path | None, all_modules: bool, cookbook: Path, sglang: Path | None, fmt: str
) -> int:
    """Check every flag against the SGLang version each cell's image pins."""
    if (module is None) == (not all_modules):
        raise SyncError("give a MODULE or --all")
    if all_modules:
        if not cookbook.is_dir():
            raise SyncError("no such directory", path=str(cookbook))
        paths = sorted(str(p) for p in files_in(cookbook, (".jsx",), "data module"))
        if not paths:
            raise SyncError("no data modules (*.jsx) here", path=str(cookbook))
        where = cookbook
    else:
        assert module is not None
        if not module.is_file():
            raise SyncError("no such module", path=str(module))
        paths = [str(module)]
        where = module.parent
    named = sglang is not None
    sglang = sglang if sglang is not None else _toplevel(where)
    source = SGLangSource(sglang)
    if not source.has_server_args():
        # whether named or found, a repository that is not SGLang's answers nothing
        whose = "this git repository" if named else "the modules' git repository"
        raise SyncError(
            f"{whose} has no python/sglang/srt/server_args.py at HEAD (not an SGLang "
            "checkout); give --sglang GIT_DIR of an SGLang checkout",
            path=str(sglang),
        )
    result = lint_paths(paths, source)
    modules = record(Input.COOKBOOK, cookbook) if all_modules else record(Input.MODULE, paths[0])
    reads = [modules, record(Input.SGLANG, sglang)]
    return options.print_report(lint_report(result, reads), fmt)


def _toplevel(where: Path) -> Path:
    top = gitrun.text("rev-parse", "--show-toplevel", repo=where)
    if top is None:
        raise SyncError(
            "not inside a git repository; give --sglang GIT_DIR (an SGLang checkout)",
            path=str(where),
        )
    return Path(top)
