"""Every generated text (module header, page section, PR body, comments, reports) is rendered
here, from ``syncer/templates/``, with the untrusted-value filters registered."""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2

from syncer import untrusted, wording


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("syncer", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # markdown and JS, not HTML: untrusted values go through the filters
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["code"] = untrusted.md_code
    env.filters["text"] = untrusted.md_text
    env.filters["link"] = untrusted.md_link
    env.filters["term"] = untrusted.term_text
    env.filters["block"] = untrusted.md_block
    env.filters["count"] = wording.count  # {{ n|count("point") }}: "1 point", "2 points"
    return env


def render(template: str, /, **context: Any) -> str:
    """Render ``syncer/templates/<template>`` with ``context``."""
    return environment().get_template(template).render(**context)
