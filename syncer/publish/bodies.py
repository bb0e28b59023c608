"""Markdown bodies the bot posts, fitted to GitHub's size limit.

One rule for every body (the cookbook PR's, the status comment): the parts that must be there
are rendered first, a part that can shrink (the reviewer diff) gets the room they leave, and a
body still over the limit is refused here rather than by GitHub halfway through an event.
"""

from __future__ import annotations

from collections.abc import Callable

from syncer.errors import SyncError
from syncer.model import GITHUB_TEXT_LIMIT
from syncer.publish.status import close_blocks
from syncer.templating import render

# GitHub refuses an issue comment or a PR body over this many characters.
MAX_BODY_CHARS = GITHUB_TEXT_LIMIT
# Room kept for the note that says the reviewer diff was cut.
_NOTE_ROOM = 300


def fit(body: str, what: str, limit: int = MAX_BODY_CHARS) -> str:
    """``body`` when it fits; a body that cannot shrink any further is an error, named."""
    if len(body) <= limit:
        return body
    raise SyncError(f"{what} is {len(body)} characters, over GitHub's {limit}")


def fit_comment(body: str, limit: int = MAX_BODY_CHARS) -> str:
    return fit(body, "status comment", limit)


def fit_body(
    ctx: dict[str, object], review_markdown: Callable[[int | None], str], limit: int
) -> str:
    """The PR body within ``limit`` characters: the reviewer diff gets what the rest leaves.

    The diff renders itself within a budget (its own trimming says what it left out); if the
    body is still too long, the diff is cut here with a note naming the full size.
    """
    skeleton = render("pr_body.md.j2", review="", trimmed=None, **ctx)
    budget = max(0, limit - len(skeleton) - _NOTE_ROOM)
    review = review_markdown(budget)
    body = render("pr_body.md.j2", review=review, trimmed=None, **ctx)
    if len(body) <= limit:
        return body
    full = len(review)
    cut = close_blocks(review[: max(0, budget - 200)])
    note = (
        f"The reviewer diff was cut to fit GitHub's {limit}-character limit "
        f"({full} characters in full); run sync diff locally for all of it."
    )
    body = render("pr_body.md.j2", review=cut, trimmed=note, **ctx)
    if len(body) > limit:
        raise SyncError(f"PR body is {len(body)} characters even without the diff (limit {limit})")
    return body
