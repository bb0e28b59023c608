"""`sync render`'s report (``render_report``): each selected job's launch commands, per
router, as the "Copy all" text a shell pastes (text), as bash blocks for a PR comment
(markdown), or as blocks per router (JSON, ``RenderedConfig.as_json``); shown by
:mod:`syncer.reporting`.

The text form is written as it is, with no console between: it is pasted into a shell, so no
colour, wrapping or tab expansion may touch a byte of it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from syncer.cookbook.shell import check_pasteable, copy_all
from syncer.inferencex.render import RenderedConfig, RenderedPoint
from syncer.inputs import Read
from syncer.reporting import Report
from syncer.templating import render

_CUT_NOTE = "\n\n_(report cut to fit)_\n"


@dataclass(frozen=True)
class RenderRun:
    """One ``sync render``: the config key as asked, its rendering, the jobs selected of it
    (``--point``, ``--conc``), the router asked for (None: every one), the raw form or the
    cookbook's, and what was read."""

    key: str
    rendered: RenderedConfig
    points: list[RenderedPoint]
    router: str | None
    raw: bool
    read: list[Read]

    def json(self) -> dict[str, Any]:
        doc = self.rendered.as_json(raw=self.raw, router=self.router, points=self.points)
        doc["read"] = [r.as_json() for r in self.read]
        return doc


def render_report(run: RenderRun) -> Report:
    """The report of ``run``: the pasteable text, its markdown, and the same as JSON."""
    return Report(
        exit_code=0,
        document=run.json,
        renderings=lambda _budget: iter([_text(run, "render_points.md.j2")]),
        cut_note=_CUT_NOTE,
        default_budget=None,
        json_indent=1,
        plain=functools.partial(_text, run, "render_points.txt.j2"),
    )


def _text(run: RenderRun, template: str) -> str:
    rendered = run.rendered
    return render(
        template,
        key=run.key,
        items=list(_items(run.key, run.points, run.router, run.raw)),
        raw=run.raw,
        commit=rendered.srt_files.describe_commit(),
        release=rendered.release.describe() if rendered.release else None,
        read=run.read,
    )


def _items(
    key: str, points: list[RenderedPoint], router: str | None, raw: bool
) -> Iterator[dict[str, Any]]:
    """One item a (point, router) to print: its "Copy all" text and the files it names."""
    for p in points:
        routers = p.raw if raw else p.cookbook
        for name, blocks in routers.items():
            if router is not None and name != router:
                continue
            # What generate would refuse to publish is not printed for pasting either.
            check_pasteable(blocks, f"{key} point {p.index} router {name}", literal=raw)
            files = {} if raw else p.files.get(name, {})
            yield {
                "point": p.index,
                "concs": p.concs,
                "label": p.label,
                "override": p.override,
                "router": name,
                "submitted": name == p.submitted,
                "text": copy_all(blocks, literal=True)
                if raw
                else copy_all(blocks, _contents(files)),
                "files": list(files),
                # a file the commands name whose content is unknown: said, never invented
                "missing": []
                if raw
                else [
                    {"name": f.name, "source": f.source, "mount": f.rule.mount}
                    for f in p.missing_files.get(name, [])
                ],
            }


def _contents(files: dict[str, dict[str, str]]) -> dict[str, str]:
    """File id -> content, as the page's "Copy all" reads a router's files."""
    return {fid: spec["content"] for fid, spec in files.items()}
