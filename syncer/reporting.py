"""Reports rendered in one place: a result is data, and this module shows it in the
``--format`` asked for.

A report kind (``compare.report`` for ``sync verify``, ``compare.review_render`` for the
reviewer diff, ``lint.report`` for ``sync lint``, ``usecases.audit_report`` for ``sync audit``)
turns its result into a ``Report``: the JSON document, the markdown renderings from the fullest
to the barest (from its templates under ``syncer/templates/``) and the terminal form. The rules
every report follows live here only: which form a ``--format`` prints and where, the size
budget (the first rendering that fits wins, the last resort cut with its folds closed and a
note: :mod:`syncer.fitting`), token masking of the markdown, and the colour of a terminal line
that opens with a verdict mark.

The result modules never import their report module (nor this one), so no result and report
import each other, even for annotations.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from syncer.console import report_console
from syncer.fitting import GITHUB_TEXT_LIMIT, cut, first_fitting
from syncer.secrets import mask
from syncer.untrusted import json_text

# A terminal line whose first mark is one of these is a verdict line, and coloured as one.
MARK_STYLES = {"✓": "green", "✗": "red"}


class Format(StrEnum):
    """What ``--format`` names: the forms every report has."""

    TEXT = "text"
    MARKDOWN = "markdown"
    JSON = "json"


@dataclass(frozen=True)
class JsonItems:
    """A list of a report's JSON document given as the making of its items, one at a time: the
    JSON form writes each item's text as it is made, so a long list (an audit's cells) is
    never held whole, as values or as one text (``json_pieces``)."""

    items: Callable[[], Iterable[Any]]


@dataclass(frozen=True)
class Report:
    """A result made ready to be shown.

    ``renderings(budget)`` yields the markdown from its fullest form to its barest, for a
    budget in characters (``None``: no limit, one rendering); ``cut_note`` closes a markdown
    cut to fit; ``default_budget`` is the budget of a ``markdown()`` asked for none (GitHub's
    comment limit, or ``None``). The text form is one of two: ``terminal(console)`` draws it
    on a console, or ``plain()`` is it as a string written exactly as it is (a text pasted
    into a shell, a job's log: no colour, wrapping or tab expansion, and no rich to import)."""

    exit_code: int
    document: Callable[[], dict[str, Any]]
    renderings: Callable[[int | None], Iterable[str]]
    cut_note: str
    terminal: Callable[[Any], None] | None = None
    plain: Callable[[], str] | None = None
    default_budget: int | None = GITHUB_TEXT_LIMIT
    json_indent: int = 2

    def __post_init__(self) -> None:
        if (self.terminal is None) == (self.plain is None):
            raise ValueError("a report's text form is either terminal or plain")

    def json(self) -> dict[str, Any]:
        """The JSON document, every list made whole."""
        return {
            key: list(value.items()) if isinstance(value, JsonItems) else value
            for key, value in self.document().items()
        }

    def markdown(self, budget: int | None = None) -> str:
        """The markdown, at most ``budget`` characters (default ``default_budget``), with
        token-shaped strings masked."""
        return fitted(self.renderings, budget or self.default_budget, self.cut_note)

    def text(self, console: Any) -> None:
        if self.plain is not None:
            console.file.write(mask(self.plain()))
        else:
            assert self.terminal is not None  # one of the two, checked when made
            self.terminal(console)


def fitted(renderings: Callable[[int | None], Iterable[str]], limit: int | None, note: str) -> str:
    """The first of ``renderings`` within ``limit`` characters (``None``: no limit), else the
    last cut to it with ``note``; token-shaped strings masked."""
    if limit is None:
        return mask(next(iter(renderings(None))))
    text = first_fitting(renderings(limit), limit)
    if len(text) > limit:
        # Embedded in comments and bodies, where an open fold would swallow what follows.
        text = cut(text, limit, note)
    return mask(text)


def print_lines(console: Any, text: str, *, marks: bool = True) -> None:
    """``text`` line by line, masked and never read as rich markup; with ``marks`` a line
    opening with a verdict mark (``MARK_STYLES``) in its colour."""
    from rich.text import Text

    for line in text.splitlines():
        style = MARK_STYLES.get(line.lstrip()[:1], "") if marks else ""
        console.print(Text(mask(line), style=style), highlight=False)


def text_of(report: Report, fmt: str, budget: int | None = None) -> str:
    """The JSON or markdown form of ``report`` as one text (markdown within ``budget``)."""
    if fmt == Format.JSON:
        return "".join(json_pieces(report.document(), report.json_indent))
    if fmt == Format.MARKDOWN:
        return report.markdown(budget)
    raise ValueError(f"{fmt} is no document form")


def json_pieces(document: dict[str, Any], indent: int | None) -> Iterator[str]:
    """The JSON text of ``document`` (``json_text``, then a newline) in pieces, each made from
    what came before it was written: a ``JsonItems`` list item by item, each item's text laid
    out at its depth as the whole document's would be; the pieces joined are that text."""
    lists = {key for key, value in document.items() if isinstance(value, JsonItems)}
    if not lists:
        yield json_text(document, indent=indent) + "\n"
        return
    if indent is None:
        raise ValueError("a document with JsonItems is written indented")
    pad = " " * indent
    yield "{"
    for n, (key, value) in enumerate(document.items()):
        yield f"{',' if n else ''}\n{pad}{json_text(key)}: "
        if key not in lists:
            yield _nested(json_text(value, indent=indent), pad)
            continue
        opened = False
        for item in value.items():
            yield f"{',' if opened else '['}\n{pad * 2}"
            yield _nested(json_text(item, indent=indent), pad * 2)
            opened = True
        yield f"\n{pad}]" if opened else "[]"
    yield "\n}\n"


def _nested(text: str, pad: str) -> str:
    """A value's JSON text placed ``pad`` deeper (no JSON string holds a raw newline)."""
    return text.replace("\n", "\n" + pad)


def write(report: Report, fmt: str) -> int:
    """``report`` on stdout in the form ``fmt`` names; its exit code."""
    if fmt == Format.JSON:
        for piece in json_pieces(report.document(), report.json_indent):
            sys.stdout.write(piece)
    elif fmt == Format.MARKDOWN:
        sys.stdout.write(text_of(report, fmt))
    elif report.plain is not None:
        sys.stdout.write(mask(report.plain()))
    else:
        report.text(report_console(soft_wrap=True))
    return report.exit_code
