"""`sync audit`: is every published AgentX cell still what InferenceX measured?

Reads every data module of a cookbook checkout (``docs/src/snippets/agentx/**``, or a folder of
``<org>/<model>.jsx``; default the bundled ``cookbook_snippets/``) and, for every cell, the
recipe at the cell's own pinned commit (``--inferencex``: a git clone, each pin read at its
commit; a plain checkout, every pin read from it; ``--inferencex-trees``: a folder of trees
named by commit). Offline by default: what needs the GitHub API is listed as not checked until
a token is given. ``--dashboard`` keeps one issue in the InferenceX repository up to date with
the markdown report. Exit codes: 0 no findings, 1 findings, 2 bad input.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from syncer import links, secrets
from syncer.commands import options
from syncer.errors import SyncError

if TYPE_CHECKING:
    from syncer.cookbook.decode import Decoder
    from syncer.usecases.audit_trees import TreeSource


@click.command("audit")
@click.option(
    "--cookbook",
    "cookbook",
    type=click.Path(path_type=Path),
    default=None,
    help="Cookbook checkout (its docs/src/snippets/agentx/), folder of data modules, or one "
    "module file (default: cookbook_snippets/).",
)
@options.inferencex_option(
    help="InferenceX git clone (each pin read at its own commit) or plain checkout "
    "(default: the bundled example)."
)
@options.folder_option(
    "--inferencex-trees",
    "trees_dir",
    help="Instead of --inferencex: a folder of InferenceX trees named by commit "
    "(<dir>/<first hex digits>/).",
)
@click.option(
    "--inferencex-rev",
    "main_rev",
    default="origin/main",
    show_default=True,
    help="In a git clone: InferenceX's default branch (where a merged config must still be).",
)
@click.option(
    "--fetch",
    "remote",
    metavar="REMOTE",
    help="In a git clone: fetch a pinned commit the clone lacks from REMOTE (a remote name or "
    "URL), by its commit id (a PR head is fetched this way).",
)
@options.sglang_option("SGLang git checkout: also lint every flag against the cell's version.")
@options.repo_option(
    "--repo",
    default=links.INFERENCEX_REPO,
    help="InferenceX repository (owner/name) the API checks and the dashboard use.",
)
@options.api_url_option()
@click.option(
    "--offline",
    is_flag=True,
    help="Make no API call even when GITHUB_TOKEN is set (the API checks are listed as not "
    "checked).",
)
@click.option(
    "--dashboard",
    is_flag=True,
    help="Keep the dashboard issue in --repo: created when there are findings, edited in "
    "place, closed when clean (needs GITHUB_TOKEN).",
)
@options.srt_slurm_repo_option
@options.date_option("Today, for artifact expiry and stale PRs (default: today, UTC).")
@options.format_option(
    ["text", "markdown", "json"],
    help='text for a terminal, markdown for an issue, json ("schema": 1, docs/audit.md).',
)
def audit_command(
    cookbook: Path | None,
    inferencex: Path | None,
    trees_dir: Path | None,
    main_rev: str,
    remote: str | None,
    sglang: Path | None,
    repo: str,
    api_url: str,
    offline: bool,
    dashboard: bool,
    today: str | None,
    fmt: str,
    srt_repo: Path | None,
) -> int:
    """Audit every published cookbook cell against InferenceX."""
    from syncer import locations
    from syncer.inputs import Input, record
    from syncer.usecases.audit import audit
    from syncer.usecases.audit_report import audit_report

    if inferencex is not None and trees_dir is not None:
        raise SyncError("give --inferencex or --inferencex-trees, not both")
    if cookbook is None:
        cookbook = locations.snippets_dir(locations.project_root())
    day = _date(today)
    token = (
        None if offline else secrets.token_from_env(("INFX_TOKEN", "GITHUB_TOKEN"), required=False)
    )
    if dashboard and token is None:
        raise SyncError("--dashboard needs a token (GITHUB_TOKEN) and no --offline")
    client = None
    api = None
    if token is not None:
        from syncer.publish.audit_api import GitHubAudit

        client = options.github_client(token, api_url, login_env="SYNC_INFX_LOGIN")
        api = GitHubAudit(client, repo)
    trees = _trees(inferencex, trees_dir, main_rev, remote)
    reads = [
        record(Input.COOKBOOK, cookbook),
        record(Input.INFERENCEX, trees_dir or inferencex or locations.bundled_inferencex()),
    ]
    if sglang is not None:
        reads.append(record(Input.SGLANG, sglang))
    try:
        result = audit(
            cookbook,
            trees,
            api=api,
            lint=_lint(sglang),
            today=day,
            srt_repo=srt_repo,
            reviews=fmt == "markdown" or dashboard,  # the reports that show reviewer diffs
            spool=fmt == "json" and not dashboard,  # the report that lists cells as it writes
        )
    finally:
        close = getattr(trees, "close", None)
        if close is not None:
            close()
    if dashboard:
        from syncer.publish.dashboard import keep_dashboard

        assert client is not None
        outcome = keep_dashboard(client, repo, result)
        click.echo(outcome, err=True)
    return options.print_report(audit_report(result, reads), fmt)


def _date(today: str | None) -> _dt.date | None:
    if today is None:
        return None
    try:
        return _dt.date.fromisoformat(today)
    except ValueError:
        raise SyncError(f"--date {today!r} is not a date (YYYY-MM-DD)") from None


def _trees(
    inferencex: Path | None, trees_dir: Path | None, main_rev: str, remote: str | None
) -> TreeSource:
    from syncer import gitrun, locations
    from syncer.inferencex.commits import is_clone
    from syncer.usecases.audit_trees import FolderTree, GitTrees, SnapshotTrees

    if remote is not None:
        gitrun.remote(remote, "--fetch")
        if inferencex is None or not is_clone(inferencex):
            raise SyncError("--fetch needs --inferencex to be a git clone")
    if trees_dir is not None:
        return SnapshotTrees(trees_dir)
    if inferencex is None:
        return FolderTree(locations.bundled_inferencex(), label="the bundled example")
    if not inferencex.is_dir():
        raise SyncError("no such InferenceX checkout", path=str(inferencex))
    if is_clone(inferencex):
        return GitTrees(inferencex, main_rev, remote)
    return FolderTree(inferencex)


def _lint(sglang: Path | None) -> Callable[[Decoder, str], dict[str, list[str]]] | None:
    """Cell id -> one line per lint finding, against the SGLang checkout (None: no lint)."""
    if sglang is None:
        return None
    from syncer.lint.lint import lint_decoder
    from syncer.lint.source import SGLangSource

    source = SGLangSource(sglang)

    def lint(decoder: Decoder, path: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for f in lint_decoder(decoder, source, path).findings:
            what = f"flag {f.flag} ({f.component})" if f.flag else "version"
            nearest = f"; closest: {', '.join(f.nearest)}" if f.nearest else ""
            reason = f": {f.reason}" if f.reason else ""
            out.setdefault(f.cell_id, []).append(
                f"{what} {f.status} at SGLang {f.version}{reason}{nearest}"
            )
        return out

    return lint
