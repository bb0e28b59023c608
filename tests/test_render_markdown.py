"""`sync render --format markdown`: each job's "Copy all" text as one bash block, exactly the
text form's commands, under a heading naming the point (issue 37.7: render had no markdown)."""

from __future__ import annotations

import pytest
from conftest import ROOT
from markdown_it import MarkdownIt

from syncer.cli import main

KEY = "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def render(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as exc:
        main(["render", KEY, "--point", "0", *args])
    out, err = capsys.readouterr()
    assert exc.value.code in (0, None), err
    return out


def test_each_router_of_the_point_is_one_bash_block_holding_the_text_forms_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = render(capsys)
    markdown = render(capsys, "--format", "markdown")
    tokens = MarkdownIt().parse(markdown)
    blocks = [t for t in tokens if t.type == "fence"]
    headings = [
        tokens[i + 1].content for i, t in enumerate(tokens) if t.tag == "h4" and t.nesting == 1
    ]
    assert [b.info for b in blocks] == ["bash", "bash"]
    assert [h.rsplit(" · ", 1)[1] for h in headings] == [
        "router dynamo (submitted)",
        "router sglang (derived)",
    ]
    # the text form's commands of each router, between its heading and its files line
    for block, section in zip(blocks, text.split("\n#### ")[1:], strict=True):
        commands = section.split("\n", 1)[1].split("\nfiles: ")[0].rstrip("\n")
        assert block.content.rstrip("\n") == commands
    assert markdown.startswith(f"### `sync render` `{KEY}`\n")
    assert "- Read InferenceX checkout: `examples/inferencex` (the bundled example)\n" in markdown
