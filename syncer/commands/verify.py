"""`sync verify CONFIG`: three-way check of the cookbook, the recipe and what srt-slurm ran.

With only CONFIG it runs on the bundled example: the InferenceX checkout in
``examples/inferencex/``, the run ``sync.yaml`` pins for CONFIG (``examples/runs/<run_id>/``)
and the data module under ``cookbook_snippets/`` that has CONFIG's cells. Once one input is
named, the bundled example stands in for none of the others: each must be named too (a real
run compared with the example's module would report drift that is no drift). A cookbook named
with ``--cookbook`` must have cells of CONFIG. Exit codes: 0 every point agrees, 1 something
differs (or a point has no log), 2 bad input.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from syncer import links, locations, secrets
from syncer.commands import options
from syncer.compare.report import verify_report
from syncer.errors import SyncError
from syncer.inferencex.releases import check_date
from syncer.inputs import is_bundled
from syncer.locations import bundled_inferencex
from syncer.usecases.verify import Cookbook, verify_config


@click.command("verify")
@click.argument("config")
@click.option(
    "--run",
    "run",
    type=click.Path(path_type=Path),
    help="Run directory, artifact archive (.zip/.tar.gz) or sweep log, or a run id "
    "(<run_id>[/attempts/N]) whose server-log artifacts are downloaded with GITHUB_TOKEN and "
    "kept in the user cache (default: the run sync.yaml pins, under examples/runs/).",
)
@options.repo_option(
    "--repo", default=links.INFERENCEX_REPO, help="Repository of a run given by its id."
)
@options.api_url_option()
@options.inferencex_option()
@click.option(
    "--cookbook",
    "cookbook",
    type=click.Path(path_type=Path),
    help="Data module, or a directory searched for the module with CONFIG's cells "
    "(default: cookbook_snippets/).",
)
@options.selection_options
@options.srt_slurm_history_options
@options.format_option(
    ["text", "markdown", "json"],
    help='text for a terminal, markdown for a PR comment, json ("schema": 1) for tools.',
)
def verify_command(
    config: str,
    run: Path | None,
    repo: str,
    api_url: str,
    inferencex: Path | None,
    cookbook: Path | None,
    point: int | None,
    conc: int | None,
    srt_repo: Path | None,
    as_of: str | None,
    fmt: str,
) -> int:
    """Three-way check: cookbook vs recipe vs run logs, per point."""
    if as_of is not None:  # an option's own value first, before what it is combined with
        check_date(as_of, what="--as-of")
    _no_example_beside(config, run=run, inferencex=inferencex, cookbook=cookbook)
    if inferencex is None:
        inferencex = bundled_inferencex()
    named = Cookbook(cookbook) if cookbook is not None else None
    if named is not None and named.is_folder() and not named.modules:
        raise SyncError(
            "no data module (.jsx) under this folder; name the module file, or the folder of "
            "the cookbook's modules (docs/src/snippets/agentx)",
            path=str(cookbook),
        )
    run_id = None
    if run is not None and is_run_id(run):
        run_id = str(run)
        run = _downloaded(run_id, repo, api_url)
    result = verify_config(
        config,
        inferencex=inferencex,
        run=run,
        run_id=run_id,
        cookbook=named,
        point=point,
        conc=conc,
        srt_repo=srt_repo,
        as_of=as_of,
    )
    return options.print_report(verify_report(result), fmt)


def _no_example_beside(
    key: str, *, run: Path | None, inferencex: Path | None, cookbook: Path | None
) -> None:
    """Refuse a mix of named inputs and the bundled example's defaults."""
    named = {"--run": run, "--inferencex": inferencex, "--cookbook": cookbook}
    if all(path is None for path in named.values()):
        return  # nothing named: the bundled example (or the project's own data) throughout
    root = locations.project_root()
    defaults = {
        "--run": locations.sync_config_path(root),  # the pinned run is found through it
        "--inferencex": root / locations.EXAMPLE_INFERENCEX,
        "--cookbook": locations.snippets_dir(root),
    }
    missing = [
        option for option, path in named.items() if path is None and is_bundled(defaults[option])
    ]
    if missing:
        given = [option for option, path in named.items() if path is not None]
        says = "name your own inputs" if len(given) > 1 else "names your own input"
        raise SyncError(
            f"{key}: {' and '.join(given)} {says}, so the bundled example cannot stand in for "
            f"the rest; pass {' and '.join(missing)} too"
        )


def is_run_id(run: Path) -> bool:
    """Whether ``--run`` names a run by its id: a run reference that is no path here (a
    folder or file of that name is taken as the path it is)."""
    return links.RUN_REF.fullmatch(str(run)) is not None and not os.path.lexists(run)


def _downloaded(run: str, repo: str, api_url: str) -> Path:
    """The server logs of ``run``, from the user cache or downloaded into it."""
    from syncer.publish.run_logs import cached_run_logs, kept_logs

    token = secrets.token_from_env(("INFX_TOKEN", "GITHUB_TOKEN"), required=False)
    cache = locations.user_cache_dir() / "runs"
    if token is None:
        kept = kept_logs(cache, repo, run)
        if kept is not None:
            return kept  # downloaded before: no token needed to read it again
        raise SyncError(
            f"--run {run}: a run id is downloaded from {repo} with a token: set GITHUB_TOKEN "
            "(or INFX_TOKEN), or pass the downloaded run's folder or archive"
        )
    gh = options.github_client(token, api_url, login_env="SYNC_INFX_LOGIN")
    run_dir, fetched = cached_run_logs(gh, repo, run, cache)
    state = "downloaded into" if fetched else "read from the cache at"
    click.echo(f"run {run} of {repo}: server logs {state} {run_dir}", err=True)
    return run_dir
