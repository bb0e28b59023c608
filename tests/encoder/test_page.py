"""The AgentX section of a cookbook page: insert, update in place, idempotent, hand edits kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from syncer.encoder.page import update_page
from syncer.errors import SyncError

SECTION = "Agentic Long-Context Deployment"
MODULE = "deepseek-ai/deepseek-v4_1"
EXAMPLE = "cookbook/docs/cookbook/autoregressive/DeepSeek/DeepSeek-V4_1.mdx"

PAGE = """\
---
title: Demo
---

## 1. Intro

Some text.

```bash
## not a heading: inside a fence
echo hi
```

## 2. Advanced

### 2.1 Tuning

Tuning text.
"""


def update(text: str, **kw) -> object:
    return update_page(text, section=SECTION, module=MODULE, path="page.mdx", **kw)


def test_insert_appends_and_keeps_every_byte() -> None:
    result = update(PAGE)
    assert result.changed and result.created and result.conflict is None
    assert result.text.startswith(PAGE + "\n## Agentic Long-Context Deployment\n{/* agentx-sync")
    assert result.text.endswith(
        'import { AgentX } from "/src/snippets/_agentx.jsx";\n'
        'import { agentx } from "/src/snippets/agentx/deepseek-ai/deepseek-v4_1.jsx";\n'
        "\n<AgentX data={agentx} />\n"
    )
    assert "<Warning>" in result.text


def test_idempotent() -> None:
    once = update(PAGE).text
    again = update(once)
    assert not again.changed and again.conflict is None and again.text == once


def test_update_in_the_middle_keeps_outside_bytes() -> None:
    """A section followed by more content: only the section's lines are rewritten."""
    inserted = update(PAGE).text
    after = "\n## 9. Later\n\nLater text with a `#` and {braces}.\n"
    page = inserted + after
    # An older generated version (template changed since): marker hash matches its own text.
    section_start = page.index("## Agentic")
    old_body = page[section_start:].replace("<Warning>", "<Warning>\nOld sentence.", 1)
    from syncer.encoder import page as page_mod

    lines = old_body.splitlines(keepends=True)
    end = next(i for i, line in enumerate(lines) if line.startswith("## 9."))
    rest = "".join(lines[2:end])
    lines[1] = page_mod._MARKER_TEXT.format(digest=page_mod._digest(rest)) + "\n"
    old_page = page[:section_start] + "".join(lines)
    result = update(old_page)
    assert result.changed and result.conflict is None
    assert result.text == page
    assert result.text.startswith(PAGE)
    assert result.text.endswith(after)


def test_hand_edit_is_reported_not_overwritten() -> None:
    generated = update(PAGE).text
    edited = generated.replace("<Warning>", "<Warning>\nA maintainer's note.", 1)
    result = update(edited)
    assert not result.changed
    assert result.text == edited
    assert "edited by hand" in result.conflict and "page.mdx:" in result.conflict
    assert "--force-page" in result.conflict  # the option `sync generate` really has
    forced = update(edited, force=True)
    assert forced.changed and forced.text == generated


def test_section_written_by_hand_is_reported() -> None:
    page = PAGE + "\n## Agentic Long-Context Deployment\n\nHand-written.\n"
    result = update(page)
    assert not result.changed and "no agentx-sync marker" in result.conflict


def test_numbered_heading_and_fenced_hashes() -> None:
    page = PAGE + "\n### 2.2 Agentic Long-Context Deployment\n\nold\n"
    result = update(page, force=True)
    assert result.changed and not result.created
    assert "### 2.2 Agentic Long-Context Deployment\n{/* agentx-sync" in result.text
    assert result.text.startswith(PAGE)
    # The "## not a heading" line inside the fence is untouched and not taken as a section.
    assert "## not a heading: inside a fence\n" in result.text


def test_duplicate_section_is_an_error() -> None:
    page = PAGE + f"\n## {SECTION}\n\na\n\n## {SECTION}\n\nb\n"
    with pytest.raises(SyncError, match="appears 2 times"):
        update(page)


def test_example_page_is_current(examples: Path) -> None:
    text = (examples / EXAMPLE).read_text(encoding="utf-8")
    result = update(text)
    assert result.conflict is None and not result.changed


def test_reference_pages(reference: Path) -> None:
    """Real pages: without a section it is appended after the last byte; with the upstream
    hand-made section it is reported."""
    pages = reference / "cookbook" / "pages" / "DeepSeek-V4_1"
    plain = (pages / "0c4057b6.mdx").read_text(encoding="utf-8")
    result = update(plain)
    assert result.created and result.text.startswith(plain)
    # The upstream hand-made section mounts the module: found by its mount under whatever
    # heading sync.yaml names, and kept as its authors wrote it (issue 35; before, a heading
    # other than the page's appended a second section, and the page's own was a conflict).
    for version, heading in (
        ("c4b47c36", "3.6 Agentic Long-Context"),
        ("37da6c0b", "3.6 Agentic Long-Context on NVIDIA Platforms"),
    ):
        upstream = (pages / f"{version}.mdx").read_text(encoding="utf-8")
        for section in (SECTION, heading):
            result = update_page(upstream, section=section, module=MODULE)
            assert not result.changed and result.conflict is None and result.text == upstream
            assert result.kept == heading


def test_renamed_heading_is_kept_and_the_section_found_by_its_mount() -> None:
    """Issue 35: the section is the one that mounts the module, whatever its heading says (the
    real page renamed it twice); the renamed heading stays, nothing is appended. (Before, the
    rename was reported as a conflict to undo by hand.)"""
    generated = update(PAGE).text
    renamed = generated.replace(f"## {SECTION}\n", "## Agentic deployments\n", 1)
    result = update(renamed)
    assert not result.changed and result.text == renamed and result.conflict is None
    # An older generated body under the renamed heading is refreshed in place, heading kept.
    from syncer.encoder import page as page_mod

    lines = renamed.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line == "## Agentic deployments\n")
    body = "".join(lines[at + 2 :]).replace("<Warning>", "<Warning>\nOld sentence.", 1)
    lines[at + 1] = page_mod._MARKER_TEXT.format(digest=page_mod._digest(body)) + "\n"
    older = "".join(lines[: at + 2]) + body
    refreshed = update(older)
    assert refreshed.changed and not refreshed.created and refreshed.text == renamed
