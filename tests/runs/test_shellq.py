"""``printf '%q '`` read back exactly: checked against real bash on hostile values."""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from syncer.errors import SyncError
from syncer.runs.shellq import split_printf_q

BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")

HOSTILE = [
    "",
    " ",
    "a b",
    "  lead and trail  ",
    "it's",
    'say "hi"',
    "tab\there",
    "new\nline",
    "\n",
    "cr\r",
    "~",
    "~/x",
    "a=~x",
    "!",
    "!!",
    "*",
    "x*y",
    "?",
    "[abc]",
    "{a,b}",
    "{1..3}",
    "$HOME",
    "$(id)",
    "`id`",
    "a;b",
    "a|b&c",
    "<>",
    "(x)",
    "#comment",
    "x#y",
    "back\\slash",
    "\\",
    "é",
    "日本語",
    "emoji 🙂",
    "\u2028",
    "\x01\x02\x7f",
    "\x1b[31mred",
    "--flag=value with space",
    '{"enable_multithread_load": true}',
    "--model-loader-extra-config",
    "\udcff",  # a byte that is not UTF-8 (argv carries bytes)
    "a\udcfeb",
]

ALPHABET = [*" \t\n\r'\"\\$`~!*?[]{},;&|<>()#=:-_./%^@+é日🙂\x01\x7f\u2028ab0", "\udcff"]


def bash_q(values: list[str], locale: str) -> str:
    assert BASH is not None
    out = subprocess.run(
        [BASH, "-c", 'printf "%q " "$@"; printf "\\n"', "bash", *values],
        capture_output=True,
        check=True,
        env={"LC_ALL": locale, "PATH": "/usr/bin:/bin"},
    ).stdout
    return out.decode("utf-8", "surrogateescape")


def random_values(rng: random.Random, count: int) -> list[str]:
    values = []
    for _ in range(count):
        length = rng.choice([0, 1, 2, 5, 12, 30])
        values.append("".join(rng.choice(ALPHABET) for _ in range(length)))
    return values


@needs_bash
@pytest.mark.parametrize("locale", ["C", "C.UTF-8"])
def test_hostile_values_roundtrip_through_bash(locale: str) -> None:
    text = bash_q(HOSTILE, locale)
    assert split_printf_q(text) == HOSTILE


@needs_bash
@pytest.mark.parametrize("locale", ["C", "C.UTF-8"])
def test_random_values_roundtrip_through_bash(locale: str) -> None:
    rng = random.Random(f"printf-q-{locale}")
    for _ in range(15):
        values = random_values(rng, 60)
        text = bash_q(values, locale)
        assert split_printf_q(text) == values, text


@needs_bash
def test_parser_agrees_with_bash_reading_the_text_back() -> None:
    # Independent of how printf quotes: bash's own reading of a quoted text is the reference.
    samples = [
        "a\\ b '' $'x\\ty' \"dq \\$ \\\" \\\\ \\q\" 'sq' a\\\nb",
        "$'\\x41\\101\\u00e9\\U0001F642\\cA\\c?\\z\\e' x",
        "\"\" '' $'' \"a\"'b'c",
        "a{b,c ''~ ''# x~ a=b }",
    ]
    assert BASH is not None
    for text in samples:
        out = subprocess.run(
            [BASH, "-c", f"for w in {text}; do printf '%s\\0' \"$w\"; done"],
            capture_output=True,
            check=True,
        ).stdout
        expected = [w.decode("utf-8", "surrogateescape") for w in out.split(b"\0")[:-1]]
        assert split_printf_q(text) == expected, text


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("a $HOME", '"$" would expand', 3),
        ("a $(id)", '"$" would expand', 3),
        ("a `id`", '"`" is shell syntax', 3),
        ("a;b", '";" is shell syntax', 2),
        ("x *", "filename pattern", 3),
        ("x a[1]", "filename pattern", 4),
        ("x ~/y", "home directory", 3),
        ("x #y", "comment", 3),
        ("x {a,b}", "brace expansion", 8),
        ("x 'open", "unterminated single quote", 3),
        ('x "open', "unterminated double quote", 3),
        ("x $'open", "unterminated $'...' quote", 3),
        ('x "$HOME"', "inside double quotes would expand", 4),
        ("x \\", "backslash at the end", 3),
    ],
)
def test_refuses_what_bash_would_expand(text: str, message: str, column: int) -> None:
    with pytest.raises(SyncError) as exc:
        split_printf_q(text, path="sglang_command.txt", first_line=1)
    assert message in exc.value.message
    assert exc.value.path == "sglang_command.txt"
    assert (exc.value.line, exc.value.column) == (1, column)


def test_error_names_the_line_of_a_later_line() -> None:
    with pytest.raises(SyncError) as exc:
        split_printf_q("a b\nc $x", path="f", first_line=1)
    assert (exc.value.line, exc.value.column) == (2, 3)


def test_literal_specials_printf_leaves_alone() -> None:
    # printf %q leaves these unescaped; bash reads them literally.
    assert split_printf_q("a=~x x~ x#y } a=b , a{b,c ''~ ''#") == [
        "a=~x",
        "x~",
        "x#y",
        "}",
        "a=b",
        ",",
        "a{b,c",
        "~",
        "#",
    ]
