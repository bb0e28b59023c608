"""Every generated text (module header, page section, PR body, comments, reports) is rendered
here, from ``syncer/templates/``, with the untrusted-value filters registered. The benchmarks,
which are not installed, render theirs the same way from their own folder."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

from syncer import untrusted, wording


@cache
def environment(folder: Path | None = None) -> jinja2.Environment:
    """The environment of ``syncer/templates/``, or of ``folder`` when given."""
    loader = (
        jinja2.FileSystemLoader(folder) if folder else jinja2.PackageLoader("syncer", "templates")
    )
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # markdown and JS, not HTML: untrusted values go through the filters
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["code"] = untrusted.md_code
    env.filters["text"] = untrusted.md_text
    env.filters["html"] = untrusted.md_html
    env.filters["link"] = untrusted.md_link
    env.filters["term"] = untrusted.term_text
    env.filters["block"] = untrusted.md_block
    env.filters["count"] = wording.count  # {{ n|count("point") }}: "1 point", "2 points"
    return env


def render(template: str, /, *, folder: Path | None = None, **context: object) -> str:
    """Render ``syncer/templates/<template>`` (or ``<folder>/<template>``) with ``context``."""
    return environment(folder).get_template(template).render(**context)
