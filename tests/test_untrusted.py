"""Hostile values through the one escaping layer: golden output plus structural checks.

The structural checks parse the markdown the way GitHub's CommonMark parser does (markdown-it,
HTML enabled) and assert that no hostile value produces HTML, a link or a mention.
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import match_golden
from markdown_it import MarkdownIt

from syncer import untrusted
from syncer.untrusted import clip, is_allowed_link, md_block, md_code, md_link, md_text, term_text

HOSTILE = {
    "team_mention": "@org/team please look",
    "details_breakout": "</details><img src=x onerror=alert(1)>",
    "summary_breakout": "</summary></details><script>alert(1)</script>",
    "backticks": "a `b` ``c`` ```d```",
    "leading_backtick": "`rm -rf /`",
    "refs": "fixes #123, GH-7, org/repo#9 and sgl-project/sglang#43799",
    "autolinks": "see https://evil.example/x, www.evil.example and a@b.example",
    "markdown": "**bold** _it_ [x](https://evil.example) ![i](https://evil.example/i.png) | a |",
    "html_entity": "&#64;org &lt;b&gt;",
    "newlines": "line1\n\n# heading\n- item\r\n> quote",
    "ansi": "\x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07link\x1b]8;;\x07 \x1b[2J",
    "controls": "a\x00b\x07c\u202eevil\u2066d\u2028e",
    "long": "x" * 10_000,
}

GOLDEN_NAME = "bot/untrusted_hostile.json"


def _golden() -> dict[str, dict[str, str]]:
    return {
        name: {
            "md_text": md_text(value),
            "md_code": md_code(value),
            "md_code_table": md_code(value, table=True),
            "md_link": md_link("https://evil.example/", value),
            "term_text": term_text(value),
        }
        for name, value in HOSTILE.items()
    }


def test_golden_hostile_values(golden):
    match_golden(golden / GOLDEN_NAME, json.dumps(_golden(), indent=2, ensure_ascii=False) + "\n")


MD = MarkdownIt("commonmark", {"html": True}).enable("table")


def _inline_tokens(markdown: str):
    for token in MD.parse(markdown):
        yield token
        yield from token.children or []


def _check_inert(markdown: str) -> None:
    for token in _inline_tokens(markdown):
        assert token.type not in {
            "html_inline",
            "html_block",
            "link_open",
            "image",
            "heading_open",
            "blockquote_open",
            "bullet_list_open",
            "strong_open",
            "em_open",
        }, (token.type, markdown)
    rendered = MD.render(markdown)
    assert "<img" not in rendered and "<script" not in rendered


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_prose_is_inert(name):
    value = HOSTILE[name]
    # Inside the template shape the bot uses: a <details> block with a blank line after summary.
    doc = f"<details><summary>Run</summary>\n\nValue: {md_text(value)}\n\n</details>\n"
    tokens = [t for t in MD.parse(doc) if t.type == "html_block"]
    assert [t.content.strip() for t in tokens] == ["<details><summary>Run</summary>", "</details>"]
    _check_inert(f"Value: {md_text(value)}\n")
    assert "@" not in md_text(value).replace("@\u200b", "")
    assert not re.search(r"#[0-9]|GH-[0-9]|https?:|www\.", md_text(value))


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_code_span_is_one_literal_span(name):
    value = HOSTILE[name]
    doc = f"| flag | value |\n| --- | --- |\n| x | {md_code(value, table=True)} |\n"
    tokens = list(_inline_tokens(doc))
    spans = [t for t in tokens if t.type == "code_inline"]
    assert len(spans) == 1, doc
    assert not any(t.type in ("html_inline", "link_open", "image") for t in tokens)
    assert len([t for t in tokens if t.type == "td_open"]) == 2  # the value stayed in its cell


def test_code_span_round_trips_backticks():
    for value in ("a`b", "``", "`x`", " lead", "trail "):
        [span] = [t for t in _inline_tokens(md_code(value)) if t.type == "code_inline"]
        assert span.content == value


def test_long_values_are_clipped_with_a_note():
    out = md_code("y" * 10_000)
    assert len(out) < 400 and out.endswith("… (9700 more characters)`")
    assert clip("abc", 2) == "ab… (1 more characters)"
    assert len(term_text("z" * 10_000, limit=50)) < 100


def test_block_cannot_be_closed_from_inside():
    value = "```\n</details>\n````"
    block = md_block(value, "bash")
    assert block.startswith("`````bash\n") and block.endswith("\n`````")
    [fence] = [t for t in MD.parse(block) if t.type == "fence"]
    assert fence.content == value + "\n"


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://github.com/sgl-project/sglang/pull/43799", True),
        ("https://github.com/SemiAnalysisAI/InferenceX/actions/runs/41000000001", True),
        ("https://docs.sglang.io/cookbook/autoregressive/DeepSeek/DeepSeek-V4_1#agentic", True),
        ("https://github.com/sgl-project/sglang-evil/pull/1", False),
        ("https://github.com/SemiAnalysisAI/InferenceXevil", False),
        ("https://github.com/sgl-project/sglang/../../evil/repo", False),
        ("https://github.com/sgl-project/sglang/%2e%2e/%2e%2e/evil", False),
        ("https://docs.sglang.io.evil.example/", False),
        ("https://docs.sglang.io@evil.example/", False),
        ("https://docs.sglang.io:8443/", False),
        ("http://docs.sglang.io/", False),
        ("javascript:alert(1)", False),
        ("https://docs.sglang.io/a)b", False),
        ("https://docs.sglang.io/a b", False),
        ("https://github.com/sgl-project/sglang/\u202epull", False),
    ],
)
def test_links_only_to_known_places(url, ok):
    assert is_allowed_link(url) is ok
    out = md_link(url, "label")
    assert out == (f"[label]({url})" if ok else "label")


def test_terminal_text_shows_escapes_visibly_and_masks_tokens():
    # Issue 22.3: escape sequences and invisible characters were dropped or replaced without
    # a trace; a report now shows them as escapes, inert and visible.
    token = "ghp_" + "A" * 36
    out = term_text(f"\x1b[31mred\x1b[0m\ttab\nnext {token}\x9b31m a\u200bb \u202e")
    assert out == "\\x1b[31mred\\x1b[0m\ttab\nnext ***\\x9b31m a\\u200bb \\u202e"
    assert token not in md_text(token) and token not in md_code(token)
    assert untrusted.md_block(token) == "```\n***\n```"


def test_prose_escapes_only_its_values() -> None:
    """Our words with values in them: the words as written, each value as ``md_text`` writes
    it, and a ref the words and a value make together (``PR #`` and ``12``) still defused."""
    note = untrusted.Prose(
        "InferenceX PR #{pr} pinned run {run}; set GITHUB_TOKEN [{who}]",
        pr="12",
        run="a_b*c",
        who="@octocat",
    )
    assert str(note) == "InferenceX PR #12 pinned run a_b*c; set GITHUB_TOKEN [@octocat]"
    assert md_text(note) == (
        "InferenceX PR #\u200b12 pinned run a\\_b\\*c; set GITHUB_TOKEN [@\u200boctocat]"
    )
    assert json.dumps({"reason": note}) == json.dumps({"reason": str(note)})
    assert term_text(note) == str(note)
    # A hostile value stays inert inside our words.
    hostile = untrusted.Prose("log {name} not used", name="</details><img src=x> `x` @a")
    assert md_text(hostile) == f"log {md_text('</details><img src=x> `x` @a')} not used"


def test_html_context_is_escaped_without_backslashes() -> None:
    """Inside an HTML block (a ``<summary>`` line) GitHub reads no markdown: a backslash would
    be shown, so only HTML is escaped and mentions, refs and links defused."""
    assert untrusted.md_html("deepseek-v4_1.jsx") == "deepseek-v4_1.jsx"
    assert untrusted.md_html("<b>x</b> @a #1 https://e") == (
        "&lt;b&gt;x&lt;/b&gt; @\u200ba #\u200b1 https\u200b://e"
    )
