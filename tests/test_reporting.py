"""The one place reports are shown (syncer/reporting.py): the size budget every report keeps,
masking, the colour of a verdict line, the form each --format prints."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from rich.console import Console

from syncer.reporting import Format, Report, print_lines, text_of

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2


def report(texts: list[str], *, default_budget: int | None = 100) -> Report:
    """A report whose markdown renderings are ``texts``, fullest first."""

    def renderings(budget: int | None) -> Iterator[str]:
        return iter(texts if budget is not None else texts[:1])

    return Report(
        exit_code=1,
        document=lambda: {"schema": 1, "token": TOKEN},
        renderings=renderings,
        terminal=lambda console: print_lines(console, "✓ fine\n  ✗ bad\nplain"),
        cut_note="\n(cut)\n",
        default_budget=default_budget,
    )


def test_the_first_rendering_within_the_budget_wins() -> None:
    full, fewer = "x" * 150, "y" * 80
    assert report([full, fewer]).markdown() == fewer
    assert report([full, fewer]).markdown(200) == full
    assert report([full, fewer], default_budget=None).markdown() == full


def test_over_the_budget_the_last_rendering_is_cut_with_its_folds_closed() -> None:
    text = "<details><summary>s</summary>\n\n" + "\n".join(["row"] * 40)
    cut = report([text]).markdown(60)
    assert len(cut) <= 60 and cut.endswith("</details>\n(cut)\n")


def test_tokens_are_masked_in_markdown_and_json() -> None:
    md = report([f"token {TOKEN}"]).markdown()
    assert TOKEN not in md and "***" in md
    assert TOKEN not in text_of(report([""]), Format.JSON)


def test_verdict_lines_are_coloured_by_their_mark() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, color_system="standard", width=80)
    report(["x"]).text(console)
    first, second, third = buf.getvalue().splitlines()
    assert first.startswith("\x1b[32m") and second.startswith("\x1b[31m")
    assert third == "plain"


def test_document_forms() -> None:
    r = report(["# md"])
    assert text_of(r, Format.MARKDOWN) == "# md"
    assert text_of(r, Format.JSON).startswith('{\n  "schema": 1,')
    with pytest.raises(ValueError):
        text_of(r, Format.TEXT)
