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

import sys
from pathlib import Path
from typing import Any

import click

from syncer.commands import options
from syncer.cookbook.shell import check_pasteable, copy_all
from syncer.errors import SyncError
from syncer.inferencex.releases import check_date
from syncer.inferencex.render import RenderedPoint
from syncer.inferencex.renders import Renders
from syncer.inferencex.srtconfigs import OPTION_HELP as SRT_CONFIGS_HELP
from syncer.inferencex.srtconfigs import discover
from syncer.inputs import Input, record
from syncer.locations import bundled_inferencex
from syncer.model import ROUTERS
from syncer.point_options import select_points
from syncer.templating import render
from syncer.untrusted import json_text
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
) -> None:
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
    if fmt == "json":
        doc = rendered.as_json(raw=raw, router=router, points=points)
        doc["read"] = [r.as_json() for r in reads]
        sys.stdout.write(json_text(doc, indent=1) + "\n")
        return

    items = _items(config, points, router, raw)
    sys.stdout.write(
        render(
            "render_points.md.j2" if fmt == "markdown" else "render_points.txt.j2",
            key=config,
            items=items,
            raw=raw,
            commit=rendered.srt_files.describe_commit(),
            release=rendered.release.describe() if rendered.release else None,
            read=reads,
        )
    )


def _items(
    config: str, points: list[RenderedPoint], router: str | None, raw: bool
) -> list[dict[str, Any]]:
    """One item a (point, router) to print: its "Copy all" text and the files it names."""
    items: list[dict[str, Any]] = []
    for p in points:
        routers = p.raw if raw else p.cookbook
        for name, blocks in routers.items():
            if router is not None and name != router:
                continue
            # What generate would refuse to publish is not printed for pasting either.
            check_pasteable(blocks, f"{config} point {p.index} router {name}", literal=raw)
            items.append(
                {
                    "point": p.index,
                    "concs": p.concs,
                    "label": p.label,
                    "override": p.override,
                    "router": name,
                    "submitted": name == p.submitted,
                    "text": copy_all(blocks, {} if raw else _contents(p.files.get(name, {})))
                    if not raw
                    else copy_all(blocks, literal=True),
                    "files": [] if raw else list(p.files.get(name, {})),
                    # a file the commands name whose content is unknown: said, never invented
                    "missing": []
                    if raw
                    else [
                        {"name": f.name, "source": f.source, "mount": f.rule.mount}
                        for f in p.missing_files.get(name, [])
                    ],
                }
            )
    return items


def _contents(files: dict[str, dict[str, str]]) -> dict[str, str]:
    """File id -> content, as the page's "Copy all" reads a router's files."""
    return {fid: spec["content"] for fid, spec in files.items()}
