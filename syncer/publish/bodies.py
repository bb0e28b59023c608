"""Markdown bodies the bot posts, fitted to GitHub's size limit by ``syncer.fitting``.

The parts of a body that must be there are rendered first, a part that can shrink (the
reviewer diff) gets the room they leave, and a body still over the limit is refused here
rather than by GitHub halfway through an event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from syncer.fitting import GITHUB_TEXT_LIMIT, cut, first_fitting, within
from syncer.templating import render

# Room kept for the note that says the reviewer diff was cut.
_NOTE_ROOM = 300


def fit_comment(body: str, limit: int = GITHUB_TEXT_LIMIT) -> str:
    return within(body, "status comment", limit)


def fit_body(
    ctx: Mapping[str, Any], review_markdown: Callable[[int | None], str], limit: int
) -> str:
    """The PR body within ``limit`` characters: the reviewer diff gets what the rest leaves.

    The diff renders itself within a budget (its own trimming says what it left out); if the
    body is still too long, the diff is cut here with a note naming the full size.
    """
    skeleton = render("pr_body.md.j2", review="", trimmed=None, **ctx)
    budget = max(0, limit - len(skeleton) - _NOTE_ROOM)
    review = review_markdown(budget)

    def renderings() -> Iterator[str]:
        yield render("pr_body.md.j2", review=review, trimmed=None, **ctx)
        note = (
            f"The reviewer diff was cut to fit GitHub's {limit}-character limit "
            f"({len(review)} characters in full); run sync diff locally for all of it."
        )
        yield render("pr_body.md.j2", review=cut(review, budget), trimmed=note, **ctx)

    return within(first_fitting(renderings(), limit), "PR body with its reviewer diff cut", limit)
