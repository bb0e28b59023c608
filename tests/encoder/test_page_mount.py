"""Issue 35: a page's AgentX section is found by what it mounts (the model's data import and
``<AgentX data={agentx} />``), whatever its heading says; a page that mounts it twice, or in a
form the tool does not read, is refused naming the line, and nothing is written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from syncer.cli import main as cli_main
from syncer.encoder.page import find_mount, update_page
from syncer.errors import SyncError

MODEL = "deepseek-ai/deepseek-v4_1"
PAGE = "docs/cookbook/autoregressive/DeepSeek/DeepSeek-V4_1.mdx"
SECTION = "Agentic Long-Context Deployment"
DATA = f'import {{ agentx }} from "/src/snippets/agentx/{MODEL}.jsx";'
COMPONENT = 'import { AgentX } from "/src/snippets/_agentx.jsx";'
MOUNT = "<AgentX data={agentx} />"
QWEN = 'import { agentx } from "/src/snippets/agentx/Qwen/qwen3.5.jsx";'

# A section people wrote, in the page's own words and under a heading of their own.
WRITTEN = f"""---
title: Demo
---

## 1. Intro

Some text.

```mdx
{MOUNT}
```

### 3.6 Agentic Long-Context on NVIDIA Platforms

People wrote this, and mention `{MOUNT}` in passing, and link the
[data](https://github.com/sgl-project/sglang/blob/main/docs/src/snippets/agentx/{MODEL}.jsx).

{COMPONENT}
{DATA}

{MOUNT}

## 4. Later

More.
"""


def line_of(text: str, needle: str, nth: int = 0) -> int:
    found = [i + 1 for i, line in enumerate(text.splitlines()) if line.strip() == needle]
    return found[nth]


def test_a_written_section_is_found_by_its_mount_and_kept() -> None:
    mount = find_mount(WRITTEN, MODEL, "page.mdx")
    assert mount is not None
    # the fenced example and the inline code are text, not mounts
    assert mount.mount + 1 == line_of(WRITTEN, MOUNT, 1)
    assert mount.heading is not None and mount.heading[2] == (
        "3.6 Agentic Long-Context on NVIDIA Platforms"
    )
    for section in (SECTION, "3.6 Agentic Long-Context on NVIDIA Platforms", "Anything"):
        result = update_page(WRITTEN, section=section, module=MODEL, path="page.mdx")
        assert (result.changed, result.created, result.conflict) == (False, False, None)
        assert result.text == WRITTEN
        assert result.kept == "3.6 Agentic Long-Context on NVIDIA Platforms"


def test_single_quotes_and_no_semicolon_are_the_same_import() -> None:
    page = WRITTEN.replace(DATA, f"import {{ agentx }} from '/src/snippets/agentx/{MODEL}.jsx'")
    assert find_mount(page, MODEL) is not None


def twice_mounted() -> str:
    return WRITTEN + f"\n## Agentic Long-Context Deployment\n\n{MOUNT}\n"


@pytest.mark.parametrize(
    ("page", "needle", "nth", "message"),
    [
        (twice_mounted(), MOUNT, 2, "mounts the AgentX component 2 times"),
        (WRITTEN + f"\n{DATA}\n", DATA, 1, "imports the AgentX data 2 times"),
        (
            WRITTEN.replace(MOUNT + "\n\n## 4.", "<AgentX data={other} />\n\n## 4."),
            "<AgentX data={other} />",
            0,
            "the AgentX component's mount is written in a form this tool does not read",
        ),
        (
            WRITTEN.replace(DATA, "import agentx from '/src/snippets/agentx/x/y.jsx';"),
            "import agentx from '/src/snippets/agentx/x/y.jsx';",
            0,
            "an AgentX data import is written in a form",
        ),
        (
            WRITTEN.replace(DATA, QWEN),
            QWEN,
            0,
            'imports the AgentX data of "Qwen/qwen3.5"',
        ),
        (
            WRITTEN.replace(DATA + "\n", ""),
            MOUNT,
            1,
            "mounts the AgentX component without importing",
        ),
    ],
)
def test_pages_the_tool_does_not_understand_are_refused_naming_the_line(
    page: str, needle: str, nth: int, message: str
) -> None:
    with pytest.raises(SyncError) as raised:
        update_page(page, section=SECTION, module=MODEL, path="page.mdx")
    assert message in raised.value.message
    assert (raised.value.path, raised.value.line) == ("page.mdx", line_of(page, needle, nth))


def run(*argv: str) -> int:
    with pytest.raises(SystemExit) as done:
        cli_main(list(argv))
    return int(done.value.code or 0)


def cookbook(tmp_path: Path, page_text: str) -> tuple[Path, Path]:
    pages = tmp_path / "cookbook"
    (pages / PAGE).parent.mkdir(parents=True)
    (pages / PAGE).write_text(page_text, encoding="utf-8")
    out = tmp_path / "snippets"
    (out / "deepseek-ai").mkdir(parents=True)
    shutil.copy(ROOT / "cookbook_snippets" / f"{MODEL}.jsx", out / f"{MODEL}.jsx")
    return pages, out


def generate(pages: Path, out: Path, *extra: str) -> int:
    return run(
        "generate", MODEL, "--config", str(ROOT / "sync.yaml"),
        "--inferencex", str(ROOT / "examples/inferencex"),
        "--out", str(out), "--pages", str(pages), "--date", "2026-10-13", *extra,
    )  # fmt: skip


def test_generate_keeps_a_written_section_under_its_own_heading(tmp_path: Path, capsys) -> None:
    pages, out = cookbook(tmp_path, WRITTEN)
    assert generate(pages, out) == 0
    assert (pages / PAGE).read_text(encoding="utf-8") == WRITTEN
    said = capsys.readouterr().out
    assert (
        f'{pages / PAGE}: AgentX section under heading "3.6 Agentic Long-Context on NVIDIA '
        'Platforms" kept as its authors wrote it (it mounts the module)'
    ) in said


def test_generate_refuses_a_twice_mounted_page_and_writes_nothing(tmp_path: Path, capsys) -> None:
    page = twice_mounted()
    pages, out = cookbook(tmp_path, page)
    module = out / f"{MODEL}.jsx"
    module.write_text(module.read_text(encoding="utf-8").replace("2026-10-13", "2026-01-01"))
    before = {p: p.read_bytes() for p in (module, pages / PAGE)}
    assert generate(pages, out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"error: {pages / PAGE}:{line_of(page, MOUNT, 2)}: the page mounts the AgentX component "
        f"2 times (lines {line_of(page, MOUNT, 1)}, {line_of(page, MOUNT, 2)}); expected once, "
        "in one AgentX section: remove the extra copy"
    ]
    assert {p: p.read_bytes() for p in before} == before


def test_the_real_page_keeps_its_section_and_gets_no_second_one(
    reference: Path, tmp_path: Path, capsys
) -> None:
    """The 37da6c0b page under the bundled sync.yaml's heading ("Agentic Long-Context
    Deployment"): before, `generate` appended a second AgentX section with duplicate imports
    and exited 0."""
    upstream = (reference / "cookbook/pages/DeepSeek-V4_1/37da6c0b.mdx").read_text(encoding="utf-8")
    pages, out = cookbook(tmp_path, upstream)
    assert generate(pages, out) == 0
    assert (pages / PAGE).read_text(encoding="utf-8") == upstream
    assert "kept as its authors wrote it" in capsys.readouterr().out


def test_a_hostile_line_of_backticks_is_read_in_linear_time() -> None:
    """Inline code spans are skipped in one pass (a lazy regex took minutes on this line)."""
    import time

    page = WRITTEN + "\nText " + "`" * 200_000 + "<AgentX data={x} />\n"
    started = time.process_time()
    with pytest.raises(SyncError, match="the AgentX component's mount is written in a form"):
        update_page(page, section=SECTION, module=MODEL, path="page.mdx")
    assert time.process_time() - started < 5
