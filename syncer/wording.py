"""How numbers and values read in messages: one place for plurals, JSON spelling and cutting.

* ``count(1, "point")`` is "1 point", never "1 points";
* a value read from input (a data module, an event, a recipe, a master config, sync.yaml, a
  log) is shown as JSON spells it (``true``, ``null``, ``"text"``, ``{"a": 1}``; valid YAML
  too), not as Python's ``repr`` (``True``, ``None``, ``'text'``); a name the user typed (a
  key, a selector) is a value too: ``unknown config key "foo"``; a type is named by ``kind``;
* a long value is cut (``untrusted.clip``, saying how much was left out): a message is one
  line to read, not a dump of whatever the input held.

Imported by ``sync decode`` (whose start-up time is benchmarked): ``syncer.untrusted`` (and
with it logging) is imported only when a message is built.
"""

from __future__ import annotations

import json
import re

from syncer.untrusted import clip

# A value in a message is cut beyond this many characters.
VALUE_CHARS = 80
# A file name (a recipe path, an archive member) is cut later: its end is what names the file.
PATH_CHARS = 160
# object run of non-blank characters longer than this in a printed error is cut (cli.main): the
# guard for values a message did not cut itself.
WORD_CHARS = 200
# ... except a path, which an error exists to name: kept whole up to the longest path the
# system can open (Linux PATH_MAX), wherever the user's files or temporary directory are.
PATH_MAX = 4096
_PATH_WORD = re.compile(r"[^\s'\"`]*/[^\s'\"`]*")


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1 (``plural`` when not just ``noun + "s"``)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def js(value: object, limit: int | None = VALUE_CHARS) -> str:
    """``value`` (read from JSON, a JavaScript literal or YAML) as JSON spells it, cut beyond
    ``limit`` characters (``None``: whole, for a text shown exactly as it would be posted).
    JSON's spelling of a scalar, a list or a mapping is also valid YAML (flow style)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # not JSON data (e.g. a set built by the caller)
        text = str(value)
    return text if limit is None else clip(text, limit)


def kind(value: object) -> str:
    """What JSON / JavaScript calls ``value``'s type, with its article ("an array", "null")."""
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is an int in Python
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def cut_long_words(text: str, limit: int = WORD_CHARS) -> str:
    """``text`` with every run of more than ``limit`` non-blank characters cut, but a path
    (unquoted, with a ``/``) kept whole up to ``PATH_MAX`` characters."""
    if len(text) <= limit:
        return text

    def cut(m: re.Match[str]) -> str:
        word = m.group()
        if len(word) <= PATH_MAX and _PATH_WORD.fullmatch(word):
            return word
        return clip(word, limit)

    return re.sub(rf"\S{{{limit + 1},}}", cut, text)


CLOSE_CUTOFF = 0.6  # how alike a name must be to be offered as the one meant


def closest(word: str, choices: list[str], n: int = 5) -> list[str]:
    """The names among ``choices`` closest to a mistyped ``word``, best first, for a message."""
    import difflib  # for messages only: a cost of every start-up otherwise

    return difflib.get_close_matches(word, choices, n=n, cutoff=CLOSE_CUTOFF)
