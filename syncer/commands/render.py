"""`sync render CONFIG`: the launch commands a config's recipe produces, per job.

Text prints each job's "Copy all" text (the cookbook's own formatting, through
``syncer.cookbook.shell``); ``--format json`` prints ``{"config", "points": [{"item",
"override", "concs", "routers": {router: [blocks]}}]}``. ``--point N`` indexes the job list
(single node: one job per row and concurrency; multi node: one per row) in master-config
order; ``--conc C`` selects every job measured at C (``syncer.point_options``). ``--raw`` shows
what srt-slurm launches (only the router the recipe runs) instead of the cookbook form.
The cookbook form also lists the config files each router ships (text: ``files:``; json:
``files``) and the files of srt-slurm's checkout whose content is not available (text: a
"content unknown" line; json: ``missing_files``); ``--srt-slurm-configs DIR`` provides them.
Both forms say which srt-slurm release's rules were applied and where that release came from
(text: a first ``# rules:`` line; json: ``srt_slurm``).
"""

from __future__ import annotations

from pathlib import Path

import click

from syncer.commands import options
from syncer.errors import SyncError
from syncer.inferencex.releases import check_date
from syncer.inferencex.renders import Renders
from syncer.inferencex.srtconfigs import OPTION_HELP as SRT_CONFIGS_HELP
from syncer.inferencex.srtconfigs import discover
from syncer.inputs import Input, record
from syncer.locations import bundled_inferencex
from syncer.model import ROUTERS
from syncer.point_options import select_points
from syncer.usecases.render_report import RenderRun, render_report
from syncer.wording import js


@click.command("render")
@click.argument("config")
@options.inferencex_option()
@options.selection_options
@click.option("--router", "router", metavar="R", help="sglang or dynamo (default: both).")
@click.option("--raw", "raw", is_flag=True, help="What srt-slurm launches, not the cookbook form.")
@click.option(
    "--srt-slurm",
    "srt_slurm",
    type=click.Choice(["1", "2"]),
    default=None,
    help="srt-slurm line whose rules apply (default: the release the key ran with: its "
    "runner script's srt-slurm checkout, else the submodule pin, else the newest).",
)
@options.srt_slurm_configs_option(SRT_CONFIGS_HELP)
@options.srt_slurm_history_options
@options.format_option(
    ["text", "markdown", "json"],
    help='text: each job\'s "Copy all" text; markdown: the same as bash blocks, for a PR '
    "comment; json: each job's blocks per router.",
)
def render_command(
    config: str,
    inferencex: Path | None,
    point: int | None,
    conc: int | None,
    router: str | None,
    raw: bool,
    srt_slurm: str | None,
    srt_slurm_configs: Path | None,
    srt_repo: Path | None,
    as_of: str | None,
    fmt: str,
) -> int:
    """Render a config's launch commands from its srt-slurm recipe."""
    if router is not None and router not in ROUTERS:
        raise SyncError(f"unknown router {js(router)}; expected one of {', '.join(ROUTERS)}")
    if inferencex is None:
        inferencex = bundled_inferencex()
    srt_files = None
    if srt_slurm_configs is not None:
        srt_files = discover(inferencex, srt_slurm_configs)
    if as_of is not None:
        check_date(as_of, what="--as-of")
    renders = Renders(srt_repo=srt_repo, as_of=as_of, srt_files=srt_files)
    rendered = renders.get(inferencex, config, version=srt_slurm)
    reads = [record(Input.INFERENCEX, inferencex)]
    points = select_points(
        rendered.points, point=point, conc=conc, concs=lambda p: p.concs, owner=config
    )
    if raw and router is not None and any(router not in p.raw for p in points):
        raise SyncError(
            f"{config}: --raw only has the router the recipe runs ({points[0].submitted})"
        )
    run = RenderRun(config, rendered, points, router, raw, reads)
    return options.print_report(render_report(run), fmt)
