"""`sync verify CONFIG`: three-way check of the cookbook, the recipe and what srt-slurm ran.

With only CONFIG it runs on the bundled example: the InferenceX checkout in
``examples/inferencex/``, the run ``sync.yaml`` pins for CONFIG (``examples/runs/<run_id>/``)
and the data module under ``cookbook_snippets/`` that has CONFIG's cells. Exit codes: 0 every
point agrees, 1 something differs (or a point has no log), 2 bad input.
"""

from __future__ import annotations

from pathlib import Path

import click

from syncer.commands import options
from syncer.compare.report import verify_report
from syncer.inferencex.releases import check_date
from syncer.locations import bundled_inferencex
from syncer.usecases.verify import verify_config


@click.command("verify")
@click.argument("config")
@click.option(
    "--run",
    "run",
    type=click.Path(path_type=Path),
    help="Run directory, artifact archive (.zip/.tar.gz) or sweep log "
    "(default: the run sync.yaml pins, under examples/runs/).",
)
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
    inferencex: Path | None,
    cookbook: Path | None,
    point: int | None,
    conc: int | None,
    srt_repo: Path | None,
    as_of: str | None,
    fmt: str,
) -> int:
    """Three-way check: cookbook vs recipe vs run logs, per point."""
    if inferencex is None:
        inferencex = bundled_inferencex()
    if as_of is not None:
        check_date(as_of, what="--as-of")
    result = verify_config(
        config,
        inferencex=inferencex,
        run=run,
        cookbook=cookbook,
        point=point,
        conc=conc,
        srt_repo=srt_repo,
        as_of=as_of,
    )
    return options.print_report(verify_report(result), fmt)
