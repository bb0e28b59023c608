"""Read back an argv that bash wrote with ``printf '%q '`` (a script-era ``sglang_command.txt``).

This is a shell-word parser for the literal words bash's ``%q`` produces, never a shell: it
takes backslash escapes, single quotes, double quotes, ``$'...'`` ANSI-C quoting and
backslash-newline continuations, and refuses everything that would make bash *do* something when
it read the text again (parameter or command expansion, operators, globs, brace expansion, a
tilde or ``#`` at the start of a word). Such text was not written by ``%q``, and guessing what
bash would have made of it would be a guess about the launch.

Words are assembled as bytes and decoded as UTF-8 with ``surrogateescape`` (how Python itself
receives argv), because ``$'\\303\\251'`` escapes name bytes, not characters: in the C locale
bash writes every non-ASCII byte that way, and a byte that is not UTF-8 must still come back.
"""

from __future__ import annotations

from collections.abc import Callable

from syncer.errors import SyncError
from syncer.wording import js

Fail = Callable[[str, int], SyncError]

# Unquoted characters that bash would expand or treat as syntax when reading the text again.
_OPERATORS = frozenset(";&|<>()`")
_GLOBS = frozenset("*?[")
_BLANKS = frozenset(" \t")
_SIMPLE_ESCAPES = {
    "a": b"\a",
    "b": b"\b",
    "e": b"\x1b",
    "E": b"\x1b",
    "f": b"\f",
    "n": b"\n",
    "r": b"\r",
    "t": b"\t",
    "v": b"\v",
    "\\": b"\\",
    "'": b"'",
    '"': b'"',
    "?": b"?",
}
_OCTAL = "01234567"
_HEX = "0123456789abcdefABCDEF"


class _Word:
    """One word being assembled, with what brace expansion needs to know about it."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.started = False  # an empty quoted word ('') is still a word
        self.open_brace = False  # an unquoted '{' seen
        self.brace_comma = False  # then an unquoted ',' (or '..')
        self.brace_expansion = False  # then an unquoted '}': bash would expand the word


def split_printf_q(text: str, *, path: str | None = None, first_line: int = 1) -> list[str]:
    """The words of ``text``, as bash would read them; raises ``SyncError`` (with the line and
    column) on anything that is not a plain literal word list."""
    words: list[str] = []
    word = _Word()
    i, n = 0, len(text)

    def fail(message: str, at: int) -> SyncError:
        start = text.rfind("\n", 0, at) + 1
        row = first_line + text.count("\n", 0, at)
        return SyncError(message, path=path, line=row, column=at - start + 1)

    def finish() -> None:
        nonlocal word
        if word.started:
            if word.brace_expansion:
                raise fail("an unquoted brace expansion ({a,b}) is not a literal word", i)
            words.append(bytes(word.data).decode("utf-8", "surrogateescape"))
        word = _Word()

    while i < n:
        c = text[i]
        if c in _BLANKS or c == "\n":
            finish()
            i += 1
            continue
        if c == "\\":
            if i + 1 >= n:
                raise fail("a backslash at the end of the text escapes nothing", i)
            nxt = text[i + 1]
            if nxt != "\n":  # backslash-newline is a line continuation: nothing
                word.data += nxt.encode("utf-8", "surrogateescape")
                word.started = True
            i += 2
            continue
        if c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise fail("unterminated single quote", i)
            word.data += text[i + 1 : end].encode("utf-8", "surrogateescape")
            word.started = True
            i = end + 1
            continue
        if c == '"':
            i = _double_quoted(text, i, word, fail)
            continue
        if c == "$":
            if i + 1 < n and text[i + 1] == "'":
                i = _ansi_c(text, i + 2, word, fail)
                continue
            raise fail('an unquoted "$" would expand a parameter or command', i)
        _unquoted(text, i, word, fail)
        i += 1
    finish()
    return words


def _unquoted(text: str, i: int, word: _Word, fail: Fail) -> None:
    """An unquoted character of a word: shell syntax refused, a brace expansion noted."""
    c = text[i]
    if c in _OPERATORS:
        raise fail(f"an unquoted {js(c)} is shell syntax, not part of a word", i)
    if c in _GLOBS:
        raise fail(f"an unquoted {js(c)} would be expanded as a filename pattern", i)
    if not word.started and c in "~#":
        what = "a home directory" if c == "~" else "a comment"
        raise fail(f"an unquoted {js(c)} at the start of a word starts {what}", i)
    if c == "{":
        word.open_brace = True
    elif word.open_brace and (c == "," or text.startswith("..", i)):
        word.brace_comma = True
    elif word.brace_comma and c == "}":
        word.brace_expansion = True
    word.data += c.encode("utf-8", "surrogateescape")
    word.started = True


def _double_quoted(text: str, i: int, word: _Word, fail: Fail) -> int:
    """Inside double quotes a backslash escapes only ``$ ` " \\`` and newline; ``$`` and a
    backquote would expand."""
    n = len(text)
    j = i + 1
    while j < n:
        c = text[j]
        if c == '"':
            word.started = True
            return j + 1
        if c == "\\" and j + 1 < n and text[j + 1] in '$`"\\\n':
            if text[j + 1] != "\n":
                word.data += text[j + 1].encode("utf-8", "surrogateescape")
            j += 2
            continue
        if c in "$`":
            raise fail(f"a {js(c)} inside double quotes would expand", j)
        word.data += c.encode("utf-8", "surrogateescape")
        j += 1
    raise fail("unterminated double quote", i)


def _ansi_c(text: str, i: int, word: _Word, fail: Fail) -> int:
    """``$'...'`` from just after the opening quote: bash's ANSI-C escapes, as bytes."""
    n = len(text)
    start = i - 2
    out = word.data
    while i < n:
        c = text[i]
        if c == "'":
            word.started = True
            return i + 1
        if c != "\\":
            out += c.encode("utf-8", "surrogateescape")
            i += 1
            continue
        if i + 1 >= n:
            break
        e = text[i + 1]
        i += 2
        if e in _SIMPLE_ESCAPES:
            out += _SIMPLE_ESCAPES[e]
        elif e in _OCTAL:
            digits = e
            while len(digits) < 3 and i < n and text[i] in _OCTAL:
                digits += text[i]
                i += 1
            out.append(int(digits, 8) & 0xFF)
        elif e == "x" and i < n and text[i] in _HEX:
            digits = ""
            while len(digits) < 2 and i < n and text[i] in _HEX:
                digits += text[i]
                i += 1
            out.append(int(digits, 16))
        elif e in "uU" and i < n and text[i] in _HEX:
            digits = ""
            while len(digits) < (4 if e == "u" else 8) and i < n and text[i] in _HEX:
                digits += text[i]
                i += 1
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise fail(f"\\{e}{digits} is not a Unicode code point", i)
            out += chr(code).encode("utf-8", "surrogatepass")
        elif e == "c" and i < n:
            # \cX: the control character of X (bash: X & 0x1f; \c? is DEL)
            x = text[i]
            i += 1
            out.append(0x7F if x == "?" else ord(x.upper()) & 0x1F)
        else:
            out += ("\\" + e).encode("utf-8", "surrogateescape")  # unknown escapes stay as typed
    raise fail("unterminated $'...' quote", start)
