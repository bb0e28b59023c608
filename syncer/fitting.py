"""Markdown fitted to a character budget: the one rule every report and bot body follows.

A text that may be too long is rendered from its fullest form to its barest (rows, folds or
tables dropped, in the order the caller prefers) and the first rendering within the budget
wins (``first_fitting``). When even the barest one is over, it is cut at a line boundary with
every code fence and ``<details>`` fold it leaves open closed, and a note after them
(``cut``), so an embedded text never swallows the markup that follows it. A body the bot posts
is then refused by name when it is still over GitHub's limit (``within``), rather than by
GitHub halfway through an event.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from syncer.errors import SyncError

# GitHub refuses an issue comment or a PR body longer than this (characters).
GITHUB_TEXT_LIMIT = 65_536

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def halvings(n: int) -> Iterator[int]:
    """``n``, ``n // 2``, ``n // 4``, ... ``0``: how many of ``n`` droppable rows to keep in
    turn, so a long report needs a logarithmic number of renderings, not one per row."""
    while True:
        yield n
        if n == 0:
            return
        n //= 2


def first_fitting(texts: Iterable[str], limit: int) -> str:
    """The first of ``texts`` that is at most ``limit`` characters, else the last of them.

    ``texts`` goes from the fullest rendering to the barest and is consumed lazily (a
    generator), so nothing past the first fitting rendering is rendered at all. The caller
    decides what an over-long last rendering becomes (``cut``, ``within``)."""
    last: str | None = None
    for text in texts:
        if len(text) <= limit:
            return text
        last = text
    if last is None:
        raise ValueError("first_fitting needs at least one rendering")
    return last


def close_blocks(text: str) -> str:
    """``text`` with the code fence and the ``<details>`` folds it leaves open closed.

    Folds count only as our templates write them: a line starting ``<details>`` opens one, a
    line ``</details>`` closes one, outside code fences. Values reach markdown inside code
    spans or fenced blocks, never at a line's start, so a value spelling ``</details>`` cannot
    make an open fold look closed (or a closed one open)."""
    fence: str | None = None
    depth = 0
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if m:
            run = m.group(1)
            if fence is None:
                fence = run
            elif run[0] == fence[0] and len(run) >= len(fence) and not line.strip()[len(run) :]:
                fence = None
        elif fence is None:
            if line.startswith("<details>"):
                depth += 1
            elif line == "</details>" and depth:
                depth -= 1
    if fence is not None:
        text += "\n" + fence
    return text + "\n\n</details>" * depth


def cut(text: str, limit: int, note: str = "") -> str:
    """The most whole lines of ``text`` that, with ``close_blocks`` applied and ``note``
    after them, make at most ``limit`` characters (``note`` alone, clipped, when no line
    fits)."""
    lines = text[:limit].split("\n")
    if len(text) > limit and text[limit] != "\n":
        lines.pop()  # the line the budget ends inside
    while True:
        out = close_blocks("\n".join(lines)) + note
        if len(out) <= limit or not lines:
            return out[:limit]
        lines.pop()


def within(text: str, what: str, limit: int = GITHUB_TEXT_LIMIT) -> str:
    """``text`` when it is at most ``limit`` characters; otherwise an error naming ``what``."""
    if len(text) <= limit:
        return text
    raise SyncError(f"{what} is {len(text)} characters, over GitHub's {limit}")
