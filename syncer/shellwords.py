"""Shell words: a command line split as ``shlex.split`` splits it (POSIX rules, no comments).

srt-slurm logs each process's command as ``shlex.join`` output, and a run's logs hold thousands
of such lines; ``shlex`` reads them a character at a time in Python, which made splitting the
largest single cost of reading a log. :func:`split` reads whole runs of characters with one
pattern and gives the same words, and the same ``ValueError`` texts, for every input (a seeded
test holds it to ``shlex.split`` over random texts of every character the rules look at).

The rules (``shlex`` in POSIX mode): words are separated by runs of space, tab, CR and LF only;
single quotes keep everything up to the next single quote; inside double quotes a backslash
escapes only ``"`` and ``\\`` (any other backslash is kept); outside quotes a backslash takes
the next character, whatever it is; quoted and unquoted pieces with nothing between them are
one word, and ``''`` alone is an empty word.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_PIECE = re.compile(
    r"""([ \t\r\n]+)"""  # 1: between words
    r"""|([^ \t\r\n'"\\]+)"""  # 2: plain characters
    r"""|'([^']*)'"""  # 3: single-quoted
    r'''|"((?:[^"\\]|\\[\s\S])*)"'''  # 4: double-quoted, with its backslash pairs
    r"""|\\([\s\S])"""  # 5: an escaped character
    r"""|(['"\\])"""  # 6: a quote never closed, or a backslash at the end
)
_BETWEEN, _SINGLE_QUOTED, _DOUBLE_QUOTED, _UNFINISHED = 1, 3, 4, 6  # the groups above
_IN_DOUBLE_QUOTES = re.compile(r'(?:[^"\\]|\\[\s\S])*')
_DOUBLE_QUOTED_ESCAPE = re.compile(r"\\([\s\S])")


def split(text: str) -> list[str]:
    """The words of ``text`` as ``shlex.split(text)`` gives them; ``ValueError("No closing
    quotation")`` or ``ValueError("No escaped character")`` where ``shlex`` raises them."""
    words: list[str] = []
    word: str | None = None
    for kind, match in _pieces(text):
        if kind == _BETWEEN:
            if word is not None:
                words.append(word)
            word = None
            continue
        if kind == _UNFINISHED:
            raise ValueError(_unfinished(text, match.start()))
        piece = match.group(kind)
        if kind == _DOUBLE_QUOTED:
            piece = _DOUBLE_QUOTED_ESCAPE.sub(_kept_in_double_quotes, piece)
        word = piece if word is None else word + piece
    if word is not None:
        words.append(word)
    return words


def open_quote(text: str, inside: str | None = None) -> str | None:
    """What is left open at the end of ``text`` read from inside the quote ``inside`` (None:
    outside any): a quote (``'`` or ``"``: the words continue on the next line), a backslash
    with nothing to escape, or None. Reads ``text`` once, so that a command continued over
    many lines costs its length, not the square of it."""
    pos = 0
    if inside == "'":
        pos = text.find("'") + 1
        if pos == 0:
            return "'"
    elif inside == '"':
        kept = _IN_DOUBLE_QUOTES.match(text)
        assert kept is not None
        if kept.end() == len(text):
            return '"'
        if text[kept.end()] == "\\":
            return "\\"
        pos = kept.end() + 1
    for kind, match in _pieces(text, pos):
        if kind == _UNFINISHED:
            if _unfinished(text, match.start()) == "No escaped character":
                return "\\"
            return text[match.start()]
    return None


def _pieces(text: str, pos: int = 0) -> Iterator[tuple[int, re.Match[str]]]:
    """Each piece of ``text`` from ``pos`` in order, with the number of the :data:`_PIECE`
    group it is."""
    while pos < len(text):
        match = _PIECE.match(text, pos)
        assert match is not None and match.lastindex  # the alternatives cover every character
        yield match.lastindex, match
        pos = match.end()


def _kept_in_double_quotes(match: re.Match[str]) -> str:
    char = match.group(1)
    return char if char in '"\\' else match.group(0)


def _unfinished(text: str, start: int) -> str:
    """What ``shlex`` says of the quote or backslash at ``start`` that nothing completes: a
    backslash at the very end (also inside double quotes) has no character to escape."""
    if text[start] == '"':
        inside = _IN_DOUBLE_QUOTES.match(text, start + 1)
        assert inside is not None
        if inside.end() < len(text):  # stopped at a backslash that ends the text
            return "No escaped character"
        return "No closing quotation"
    return "No escaped character" if text[start] == "\\" else "No closing quotation"


def quoted_line_breaks_hidden(text: str) -> str:
    """``text`` with each LF inside single quotes written as a space: bash reads such a break
    as part of the quoted word (srt-slurm's NATS preamble prints a config of several lines so),
    where every other line break ends a command. A text whose quotes do not close is returned
    as it is."""
    pieces: list[str] = []
    for kind, match in _pieces(text):
        if kind == _UNFINISHED:
            return text
        piece = match.group(0)
        pieces.append(piece.replace("\n", " ") if kind == _SINGLE_QUOTED else piece)
    return "".join(pieces)
