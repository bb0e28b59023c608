"""``shellwords.split`` against ``shlex.split``, the rules it stands in for."""

from __future__ import annotations

import random
import shlex

import pytest

from syncer import shellwords


def _shlex(text: str) -> list[str] | str:
    try:
        return shlex.split(text)
    except ValueError as exc:
        return str(exc)


def _ours(text: str) -> list[str] | str:
    try:
        return shellwords.split(text)
    except ValueError as exc:
        return str(exc)


@pytest.mark.parametrize(
    "text",
    [
        "", "  ", "a b", "''", "a''b", "'a b'c", '"a\\"b"', '"a\\b"', '"\\\\"', "a\\ b",
        "a\\\nb", "'unclosed", '"unclosed', '"ends in \\', "ends in \\", "tab\tsep\rcr\nlf",
        "vt\x0bff\x0cstay", "sglang serve --model-path '/m/x y' --tp 8",
        shlex.join(["a b", "it's", 'say "hi"', "", "back\\slash", "new\nline"]),
    ],
)  # fmt: skip
def test_the_words_and_refusals_of_shlex(text: str) -> None:
    assert _ours(text) == _shlex(text)


def test_random_texts_split_as_shlex_splits_them() -> None:
    alphabet = [" ", "\t", "\r", "\n", "'", '"', "\\", "a", "b", "#", "\x0b", "é", "\u2028", "$"]
    rng = random.Random(7)
    for _ in range(30_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert _ours(text) == _shlex(text), repr(text)


def test_joined_words_come_back() -> None:
    rng = random.Random(11)
    alphabet = "ab '\"\\\n\t$#"
    for _ in range(5_000):
        words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))) for _ in range(4)]
        assert shellwords.split(shlex.join(words)) == words


def test_only_line_breaks_inside_single_quotes_are_hidden() -> None:
    hidden = shellwords.quoted_line_breaks_hidden
    assert hidden("printf %s 'a\nb\n' > f") == "printf %s 'a b ' > f"
    assert hidden("a\n'b\nc'\n\"d\ne\"") == "a\n'b c'\n\"d\ne\""
    assert hidden("'open\nquote") == "'open\nquote"  # unclosed: shown as it is
