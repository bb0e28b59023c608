"""The one fitting rule (``syncer.fitting``): renderings tried fullest first, the last resort
cut at a line with its fences and folds closed, and a body over the limit refused by name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from syncer.errors import SyncError
from syncer.fitting import GITHUB_TEXT_LIMIT, close_blocks, cut, first_fitting, halvings, within


def test_halvings_go_down_to_zero() -> None:
    assert list(halvings(10)) == [10, 5, 2, 1, 0]
    assert list(halvings(1)) == [1, 0]
    assert list(halvings(0)) == [0]


def test_first_fitting_stops_rendering_at_the_first_that_fits() -> None:
    rendered: list[int] = []

    def renderings() -> Iterator[str]:
        for keep in halvings(8):
            rendered.append(keep)
            yield "row\n" * keep

    assert first_fitting(renderings(), 9) == "row\n" * 2
    assert rendered == [8, 4, 2]  # 1 and 0 never rendered


def test_first_fitting_gives_the_last_rendering_when_none_fits() -> None:
    assert first_fitting(iter(["x" * 30, "y" * 20]), 10) == "y" * 20
    with pytest.raises(ValueError):
        first_fitting(iter([]), 10)


def test_close_blocks_closes_the_fence_and_the_folds_left_open() -> None:
    text = "<details><summary>a</summary>\n\n<details><summary>b</summary>\n\n````diff\n-x\n```"
    assert close_blocks(text) == text + "\n````" + "\n\n</details>" * 2
    whole = "<details><summary>a</summary>\n\n```\nx\n```\n\n</details>"
    assert close_blocks(whole) == whole


def test_close_blocks_counts_only_the_templates_own_fold_lines() -> None:
    # A value's </details> sits inside a code span or a fenced block, never at a line's start,
    # so it neither closes the open fold nor opens one.
    text = "<details><summary>a</summary>\n\n- `</details>` and `<details>`\n```\n</details>\n```"
    assert close_blocks(text) == text + "\n\n</details>"


def test_cut_keeps_whole_lines_and_fits_with_its_closers_and_note() -> None:
    text = "<details><summary>rows</summary>\n\n```\n" + "".join(f"line {i}\n" for i in range(100))
    note = "\n\n_(cut)_\n"
    for limit in range(len(note), len(text), 7):
        out = cut(text, limit, note)
        assert len(out) <= limit
        assert out.endswith(note)
        body = out.removesuffix(note)
        # whole lines of the text, then the closers of what they leave open
        kept = body.removesuffix("\n\n</details>").removesuffix("\n```")
        assert text.startswith(kept) and (kept == "" or text[len(kept)] == "\n")
        assert body.count("```") % 2 == 0
        assert body.count("<details>") == body.count("</details>")
    # the closers and the note count: one character less and "line 0" goes too
    assert cut(text, 70, note) == (
        "<details><summary>rows</summary>\n\n```\nline 0\n```\n\n</details>" + note
    )
    assert cut(text, 69, note) == (
        "<details><summary>rows</summary>\n\n```\n```\n\n</details>" + note
    )


def test_cut_keeps_a_line_the_budget_ends_right_after() -> None:
    assert cut("ab\ncd\nef", 5) == "ab\ncd"
    assert cut("ab\ncd\nef", 4) == "ab"
    assert cut("ab\ncd", 10) == "ab\ncd"


def test_cut_below_the_note_gives_the_note_clipped() -> None:
    assert cut("a\nb\nc\n", 4, "\n\n(cut to fit)") == "\n\n(c"


def test_within_refuses_a_body_over_the_limit_by_name() -> None:
    assert within("x" * GITHUB_TEXT_LIMIT, "status comment") == "x" * GITHUB_TEXT_LIMIT
    with pytest.raises(SyncError, match="status comment is 11 characters, over GitHub's 10"):
        within("x" * 11, "status comment", 10)
