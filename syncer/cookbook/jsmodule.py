"""Read a cookbook data module (`export const agentx = {...};`) as plain data, never executing it.

A module is a few header comment lines and one ``export const <name> = <literal>``. Only literal
syntax is accepted: objects, arrays, strings, numbers, ``true``/``false``/``null``, template
literals without substitutions and unary minus on numbers. Anything else (an identifier, a call,
a spread, a function, JSX) is refused with the node type, file, line and column.

Two readers give the same result:

* the generator writes the literal as strict JSON, so a module in exactly that layout (``//``
  header lines, ``export const NAME = ``, JSON, ``;`` and a newline) is read with ``json.loads``,
  which is what keeps ``sync decode`` within the cookbook decoder's start-up budget (esprima
  needs about 0.7 s for a 150 kB module);
* every other text (hand-edited modules, unquoted keys, single-quoted strings, comments inside,
  and every malformed file) goes through esprima, which also gives the error positions.

The tests check that both readers agree on every reference module.
"""

from __future__ import annotations

import functools
import json
import re
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from syncer import progress
from syncer.cookbook.jsvalues import (  # JS turns a numeric key into String(n)
    PROTO,
    ProtoError,
    js_string,
    object_literal,
)
from syncer.errors import SyncError
from syncer.fsio import read_capped

# JS line terminators other than "\n" would end a `//` comment early, so the fast path refuses
# them in header lines and leaves such files to esprima.
_FAST_HEAD = re.compile(
    r"((?://[^\n\r\u2028\u2029]*\n)*)export const ([A-Za-z_$][A-Za-z0-9_$]*) = "
)
# JavaScript's line terminators (a CR alone ends a line, as U+2028 and U+2029 do): the lines
# errors name are the lines esprima counts.
_LINE_END = re.compile("\r\n|[\r\n\u2028\u2029]")
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")
_DECIMAL_INT = re.compile(r"(?:0|[1-9][0-9]*)\Z")


@dataclass
class JsModule:
    """A parsed data module: ``header`` holds the comment lines before the export, verbatim
    (each still starting with ``//``), ``name`` the exported constant, ``value`` the literal."""

    header: list[str]
    name: str
    value: Any


def load_module(path: str | Path) -> JsModule:
    """Read and parse the data module at ``path``."""
    return parse_module(read_text(path), str(path))


# The biggest real module is ~150 kB; 200 times that still parses in about a second, and the
# cap bounds what a hostile file can make the readers (and esprima) hold in memory.
MAX_MODULE_BYTES = 32 * 1024 * 1024


def read_text(path: str | Path) -> str:
    """A module file's text (UTF-8); unreadable or oversized files are a ``SyncError`` naming
    the file."""
    return decode_text(read_capped(path, MAX_MODULE_BYTES, "data module"), str(path))


def decode_text(raw: bytes, path: str) -> str:
    """A module's bytes as text (UTF-8); anything else is a ``SyncError`` naming the line."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SyncError(
            f"data module is not UTF-8 (byte {exc.start})", path=path, line=line
        ) from None


def parse_module(text: str, path: str = "<module>") -> JsModule:
    """Parse module source ``text``; ``path`` only names the file in errors."""
    try:
        fast = _parse_fast(text, path)
        if fast is not None:
            return fast
        if _blank(text):
            # refused without esprima: importing it alone costs several times what reading a
            # good module of the generator's layout does
            raise SyncError(NO_STATEMENT, path=path)
        return _parse_esprima(text, path)
    except RecursionError:
        raise SyncError("literal nested too deeply to be a data module", path=path) from None


NO_STATEMENT = "expected `export const <name> = <literal>`, found no statement"


def _blank(text: str) -> bool:
    """Whether ``text`` holds nothing but white space and comments (an empty or truncated-to-
    nothing module), read in one linear pass."""
    at = 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if text.startswith("//", at):
            line_end = _LINE_END.search(text, at)  # a CR alone ends the comment too
            at = len(text) if line_end is None else line_end.start()
        elif text.startswith("/*", at):
            end = text.find("*/", at + 2)
            if end < 0:
                return False  # an unclosed comment: esprima says where
            at = end + 2
        else:
            return at == len(text)


_PROTO_KEY = re.compile(r'"__proto__"\s*:')


def _proto_line(text: str) -> int | None:
    """The line of the first plainly written `"__proto__"` key (a big module's error: it is
    not read again by esprima, which says exactly where)."""
    found = _PROTO_KEY.search(text)
    return None if found is None else line_of(text, found.start())


def _reject_constant(name: str) -> object:
    # json.loads accepts NaN/Infinity, which are identifiers in JS: leave them to esprima's error.
    raise ValueError(name)


def _parse_fast(text: str, path: str = "<module>") -> JsModule | None:
    head = _FAST_HEAD.match(text)
    if head is None or not text.endswith(";\n"):
        return None
    body = text[head.end() : -2]
    # `__proto__` is no property in a JS object literal (jsvalues.object_literal); JSON may
    # spell it with escapes, so a body with either is read key by key (slower, and rare).
    careful = PROTO in body or "\\u" in body
    try:
        if careful:
            value = json.loads(
                body, parse_constant=_reject_constant, object_pairs_hook=object_literal
            )
        else:
            value = json.loads(body, parse_constant=_reject_constant)
    except ProtoError as exc:
        if len(text) <= MAX_ESPRIMA_CHARS:
            return None  # esprima reads it again and names the property's line and column
        raise SyncError(str(exc), path=path, line=_proto_line(text)) from None
    except ValueError:
        return None
    header = head.group(1).split("\n")[:-1]
    return JsModule(header=header, name=head.group(2), value=value)


# esprima's scanner is quadratic in the length of a string literal (1 M characters: 13 s,
# 2 M: 58 s), so it only gets texts of hand-edited size (real modules are ~150 kB); bigger
# modules must be in the generator's layout, which json.loads reads in linear time.
MAX_ESPRIMA_CHARS = 512 * 1024


def _parse_esprima(text: str, path: str) -> JsModule:
    if len(text) > MAX_ESPRIMA_CHARS:
        raise SyncError(
            f"data module of {len(text)} characters is not in the generator's layout "
            f"(`export const NAME = <JSON>;`); other layouts are read up to {MAX_ESPRIMA_CHARS}",
            path=path,
        )
    import esprima  # only for files off the generator's layout, and for error positions

    try:
        # `jsx` so JSX in a .jsx module is refused as a JSXElement node at its position rather
        # than as a bare syntax error.
        # esprima cannot report its own progress: a large module gets a running task, so the
        # tens of seconds it takes are not silent.
        readable, restore = _separators_hidden(text)
        with _parsing(text, path):
            program = esprima.parseModule(
                readable, {"comment": True, "loc": True, "range": True, "jsx": True}
            )
    except esprima.Error as exc:
        reason = re.sub(r"^Line \d+: ", "", str(getattr(exc, "message", exc)))
        if reason.startswith("Duplicate __proto__"):
            reason += " (a SyntaxError in JavaScript: the page cannot load this module)"
        if _looks_truncated(text, position(exc.index, text)[0]):
            reason += " (the file ends here: truncated?)"
        line, column = position(exc.index, text)
        raise SyncError(
            f"malformed JavaScript: {reason}", path=path, line=line, column=column
        ) from None
    try:
        return _program_module(program, text, path, restore)
    except _NodeError as exc:
        line, column = position(exc.offset, text)
        raise SyncError(exc.message, path=path, line=line, column=column) from None


def _program_module(program: Any, text: str, path: str, restore: dict[int, int]) -> JsModule:
    """The module a parsed program holds (``restore``: the separators ``_separators_hidden``
    stood in for)."""
    body = program.body
    if not body:
        raise SyncError(NO_STATEMENT, path=path)
    export = body[0]
    decl = getattr(export, "declaration", None)
    if (
        export.type != "ExportNamedDeclaration"
        or decl is None
        or decl.type != "VariableDeclaration"
        or decl.kind != "const"
        or len(decl.declarations) != 1
        or decl.declarations[0].id.type != "Identifier"
        or decl.declarations[0].init is None
    ):
        _fail(export, f"expected `export const <name> = <literal>`, found {export.type}")
    for extra in body[1:]:
        _fail(extra, f"expected nothing after the export, found {extra.type}")
    declarator = decl.declarations[0]
    start = export.range[0]
    header: list[str] = []
    for comment in program.comments or []:
        if comment.range[0] < start:
            header.extend(_LINE_END.split(text[comment.range[0] : comment.range[1]]))
    value = _literal(declarator.init)
    if restore:
        value = _translated(value, restore)
    return JsModule(header=header, name=declarator.id.name, value=value)


# A string literal as JavaScript reads it (no raw line break but U+2028 and U+2029, which are
# allowed there since ES2019), and what may hold a quote without starting one: comments and
# template literals. Unrolled loops, so the engine keeps no state per character.
_QUOTED_OR_COMMENT = re.compile(
    r"""//[^\n\r\u2028\u2029]*|/\*[^*]*\*+(?:[^/*][^*]*\*+)*/"""
    r"""|"[^"\\\n\r]*(?:\\.[^"\\\n\r]*)*"|'[^'\\\n\r]*(?:\\.[^'\\\n\r]*)*'"""
    r"""|`[^`\\]*(?:\\.[^`\\]*)*`""",
    re.DOTALL,
)
_SEPARATOR_OR_ESCAPE = re.compile(r"\\.|[\u2028\u2029]", re.DOTALL)
# What a string's escape can make of a character in the private-use block: \uXXXX, \u{X...}.
_UNICODE_ESCAPE = re.compile(r"\\u(?:([0-9A-Fa-f]{4})|\{0*([0-9A-Fa-f]{1,6})\})")


def _separators_hidden(text: str) -> tuple[str, dict[int, int]]:
    """``text`` with each raw U+2028 / U+2029 inside a '' or "" string written as a private-use
    character the text does not hold, and the table that puts them back. esprima follows ES5,
    which refused them there; one character for one keeps every offset, line and column of
    its errors true. An escaped one (a line continuation) is left to esprima."""
    if "\u2028" not in text and "\u2029" not in text:
        return text, {}
    held = set(map(ord, text))
    held.update(int(four or braced, 16) for four, braced in _UNICODE_ESCAPE.findall(text))
    stand_ins = [chr(c) for c in range(0xE000, 0xF900) if c not in held][:2]
    if len(stand_ins) < 2:
        return text, {}  # a text holding every private-use character: esprima refuses it
    hide = dict(zip("\u2028\u2029", stand_ins, strict=True))

    def in_string(match: re.Match[str]) -> str:
        token = match.group()
        if token[0] not in "\"'":
            return token
        return _SEPARATOR_OR_ESCAPE.sub(lambda m: hide.get(m.group(), m.group()), token)

    restore = {ord(stand_in): ord(separator) for separator, stand_in in hide.items()}
    return _QUOTED_OR_COMMENT.sub(in_string, text), restore


def _translated(value: object, table: dict[int, int]) -> object:
    if isinstance(value, str):
        return value.translate(table)
    if isinstance(value, dict):
        return {k.translate(table): _translated(v, table) for k, v in value.items()}
    if isinstance(value, list):
        return [_translated(v, table) for v in value]
    return value


# esprima parses roughly 0.1-0.3 MiB a second: past this size a module takes seconds.
PARSE_PROGRESS_CHARS = 1 << 20


def _parsing(text: str, path: str) -> AbstractContextManager[object]:
    if len(text) < PARSE_PROGRESS_CHARS:
        return nullcontext()
    return progress.task(f"parsing {path} ({len(text) / (1 << 20):.1f} MiB)", None)


def _looks_truncated(text: str, error_line: int) -> bool:
    # A whole module ends with `;` (or at least a closing bracket); an error on the last line
    # of a text that stops anywhere else is most likely a cut-off file.
    tail = text.rstrip()
    return error_line >= line_of(tail, len(tail)) and not tail.endswith((";", "}", "]"))


class _NodeError(Exception):
    """A node that is no literal, at its offset: ``_parse_esprima`` names its line and column
    (``position``, one count of lines for every error)."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


def _fail(node: Any, message: str) -> NoReturn:
    raise _NodeError(message, node.range[0])


def _literal(node: Any) -> object:
    kind = node.type
    if kind == "ObjectExpression":
        pairs: list[tuple[str, object]] = []
        for prop in node.properties:
            if prop.type != "Property":
                _fail(prop, f"non-literal node {prop.type} in object (only literals allowed)")
            if prop.computed or prop.method or prop.shorthand or prop.kind != "init":
                _fail(prop, "non-literal property (computed key, method, getter/setter)")
            pairs.append((_key(prop.key), _literal(prop.value)))
        try:
            return object_literal(pairs)
        except ProtoError as exc:
            _fail(node.properties[exc.index], str(exc))
    if kind == "ArrayExpression":
        items = []
        for element in node.elements:
            if element is None:
                _fail(node, "array with a hole (empty element) is not a literal")
            items.append(_literal(element))
        return items
    if kind == "Literal":
        if getattr(node, "regex", None) is not None:
            _fail(node, "non-literal node RegExp literal (only JSON-like literals allowed)")
        value = node.value
        if isinstance(value, bool) or value is None or isinstance(value, str):
            return value
        return _number(node.raw, value)
    if kind == "TemplateLiteral":
        if node.expressions:
            _fail(node, "template literal with substitutions (only plain text allowed)")
        return node.quasis[0].value.cooked
    if kind == "UnaryExpression" and node.operator == "-":
        arg = node.argument
        if (
            arg.type == "Literal"
            and isinstance(arg.value, int | float)
            and not isinstance(arg.value, bool)
        ):
            return -_number(arg.raw, arg.value)
        _fail(node, f"unary minus on {arg.type} (only numbers may be negated)")
    _fail(node, f"non-literal node {kind} (only literals allowed; nothing is executed)")
    raise AssertionError("unreachable")


def _number(raw: str, value: Any) -> int | float:
    # Keep the JSON notion of int vs float so the emitter writes numbers back as they were read.
    lowered = raw.lower().replace("_", "")
    if _DECIMAL_INT.match(lowered):
        return int(lowered)
    if lowered[:2] in ("0x", "0o", "0b"):
        return int(value)
    return float(value)


def _key(node: Any) -> str:
    if node.type == "Identifier":
        name: str = node.name
        return name
    if node.type == "Literal" and isinstance(node.value, str):
        return node.value
    if node.type == "Literal" and isinstance(node.value, int | float):
        return js_string(float(node.value))
    _fail(node, f"non-literal object key {node.type}")
    raise AssertionError("unreachable")


def position(offset: int, text: str) -> tuple[int, int]:
    """1-based (line, column) of ``offset`` in ``text``."""
    line, start = 1, 0
    for end in _LINE_END.finditer(text, 0, offset):
        line, start = line + 1, end.end()
    return line, offset - start + 1


def line_of(text: str, offset: int) -> int:
    return position(offset, text)[0]


def is_identifier(name: str) -> bool:
    """Whether ``name`` can be the exported constant's name."""
    return bool(_IDENTIFIER.match(name))


# ---- positions (only computed when an error needs them) -------------------------------------

# Every alternative is linear for the regex engine: strings and block comments are written as
# "unrolled loops" ("[^"\\]*(?:\\.[^"\\]*)*") rather than (?:[^"\\]|\\.)*, which costs the
# engine a saved state per character (a 20 MB string took 2.4 GB to tokenise).
_TOKEN = (
    r"""\s+|//[^\n\r\u2028\u2029]*|/\*[^*]*\*+(?:[^/*][^*]*\*+)*/"""
    r"""|"[^"\\\n\r]*(?:\\.[^"\\\n\r]*)*"|'[^'\\\n\r]*(?:\\.[^'\\\n\r]*)*'"""
    r"""|`[^`\\]*(?:\\.[^`\\]*)*`"""
    r"""|[{}\[\],:;=]|[^\s{}\[\],:;="'`/]+"""
)
# Tokens longer than this are never compared whole (keys are short): only their start is kept.
_KEEP = 4096
# A run of scalar list elements, each with its comma (bare words and double-quoted strings,
# as _TOKEN reads them): skipped in one match when no key path leads into the list, instead of
# token by token (millions of numbers took seconds). Possessive, so no state is kept per element.
_SCALAR_RUN = r"""(?:\s*+(?:[^\s{}\[\],:;="'`/]++|"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+")\s*+,)++"""
# The same for the members of an object no key path leads into (``key: scalar,``): an env of
# 30,000 entries was walked token by token, each key decoded, 3.4 s to name an error's line.
_SCALAR = r"""(?:[^\s{}\[\],:;="'`/]++|"[^"\\\n\r]*+(?:\\.[^"\\\n\r]*+)*+")"""
_MEMBER_RUN = rf"""(?:\s*+{_SCALAR}\s*+:\s*+{_SCALAR}\s*+,)++"""


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """_TOKEN, _SCALAR_RUN and _MEMBER_RUN, compiled the first time a position is needed: a
    module read without an error never needs one, and compiling them was a tenth of `sync
    decode`'s imports."""
    # DOTALL: an escaped line break inside a string.
    return re.compile(_TOKEN, re.DOTALL), re.compile(_SCALAR_RUN), re.compile(_MEMBER_RUN)


class _Tokens:
    """The significant tokens of a text, one at a time (never a list of them all), so finding a
    position costs no more memory than parsing did."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._token, self._scalar_run, self._member_run = _patterns()
        self._it = self._token.finditer(text)
        self.offset = 0
        self.tok = ""
        self.advance()

    def skip_scalars(self) -> None:
        """Past the run of ``scalar,`` elements starting at the current token, if any."""
        self._skip(self._scalar_run)

    def skip_members(self) -> None:
        """Past the run of ``key: scalar,`` members starting at the current token, if any."""
        self._skip(self._member_run)

    def _skip(self, pattern: re.Pattern[str]) -> None:
        run = pattern.match(self._text, self.offset)
        if run is not None:
            self._it = self._token.finditer(self._text, run.end())
            self.advance()

    def advance(self) -> None:
        for m in self._it:
            start, end = m.span()
            head = m.string[start : start + 2]
            if head[:1].isspace() or head in ("//", "/*"):
                continue
            self.offset = start
            # A long string is not copied out of the text: its first characters say what it is.
            self.tok = m.string[start : end if end - start <= _KEEP else start + _KEEP]
            return
        raise StopIteration


def locate(text: str, keys: tuple[str | int, ...]) -> tuple[int, int] | None:
    """1-based (line, column) of the value at ``keys`` inside the exported literal (or of the
    deepest part of that path that exists); None when the text cannot be walked."""
    best: list[Any] = [None, -1]
    try:
        tokens = _Tokens(text)
        while tokens.tok != "=":
            tokens.advance()
        tokens.advance()
        _walk(tokens, 0, keys, best)
    except (StopIteration, ValueError, RecursionError):
        # Ran off the end or into something that is not a literal: the deepest point reached
        # so far is still the best position there is.
        pass
    if best[0] is None:
        return None
    return position(best[0], text)


def _key_text(token: str) -> str:
    if token.startswith('"'):
        text: str = json.loads(token)
        return text
    if token.startswith(("'", "`")):
        return token[1:-1]
    return token


def _child(depth: int | None, keys: tuple[str | int, ...], key: str | int) -> int | None:
    """The depth of a child reached by ``key``: one deeper when it lies on ``keys``, else None."""
    if depth is not None and depth < len(keys) and keys[depth] == key:
        return depth + 1
    return None


def _walk(tokens: _Tokens, depth: int | None, keys: tuple[str | int, ...], best: list[Any]) -> None:
    """Skip the value at the current token; note its offset when it lies on ``keys``."""
    if depth is not None and depth > best[1]:
        best[0], best[1] = tokens.offset, depth
    on_path = depth is not None and depth < len(keys)
    if tokens.tok == "{":
        tokens.advance()
        if not on_path:
            tokens.skip_members()  # nothing inside is on the path: no key needs reading
        while tokens.tok != "}":
            child = _child(depth, keys, _key_text(tokens.tok)) if on_path else None
            tokens.advance()  # past the key
            tokens.advance()  # past the colon
            _walk(tokens, child, keys, best)
            if tokens.tok == ",":
                tokens.advance()
    elif tokens.tok == "[":
        tokens.advance()
        if not on_path:
            tokens.skip_scalars()  # nothing inside is on the path: the count does not matter
        n = 0
        while tokens.tok != "]":
            child = _child(depth, keys, n)
            _walk(tokens, child, keys, best)
            n += 1
            if tokens.tok == ",":
                tokens.advance()
    tokens.advance()
