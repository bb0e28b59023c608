"""Write a data module byte for byte in the generator's layout.

The layout is ``json.dumps(value, indent=1, ensure_ascii=False)`` with one difference: an array
whose elements are all scalars is written on one line (``[a, b, c]``). Key order is kept as
given. A module is three ``//`` header lines, ``export const <name> = ``, that JSON, ``;`` and a
newline. Parsing a reference module and emitting it again reproduces the file exactly (tested).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence

from syncer.cookbook.jsmodule import JsModule, is_identifier
from syncer.errors import SyncError
from syncer.recent import Recent
from syncer.wording import js

_encode_string = json.JSONEncoder(ensure_ascii=False).encode
# Characters that end a `//` comment in JavaScript (so a header line could smuggle code).
_LINE_BREAKS = ("\n", "\r", "\u2028", "\u2029")


# A lone surrogate: a JavaScript string may hold one (a module's "\\ud800"), UTF-8 text cannot.
_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(value: object) -> str:
    """``value`` in the generator's JSON layout (no trailing newline). A lone surrogate is
    written as its escape, the one way a module's text can hold it (only a string can)."""
    parts: list[str] = []
    _write(value, 0, parts)
    text = "".join(parts)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def emit_module(header_lines: Sequence[str], name: str, value: object) -> str:
    """The whole module text: header comment lines, ``export const <name> = <json>;\\n``.

    ``header_lines`` are the comment lines as ``JsModule.header`` holds them (starting with
    ``//``); a line without the marker gets ``// `` put in front of it.
    """
    if not is_identifier(name):
        raise SyncError(f"cannot export {js(name)}: not a JavaScript identifier")
    lines = []
    for line in header_lines:
        if any(brk in line for brk in _LINE_BREAKS):
            raise SyncError(f"header line {js(line)} contains a line break")
        lines.append(line if line.startswith("//") else f"// {line}")
    head = "".join(f"{line}\n" for line in lines)
    return f"{head}export const {name} = {dumps(value)};\n"


def _scalar(value: object) -> str:
    if isinstance(value, str):
        return _encode_string(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SyncError(f"cannot write {js(value)} in a data module (not a JSON number)")
        return float.__repr__(value)
    raise SyncError(f"cannot write a {type(value).__name__} in a data module")


def _write(value: object, depth: int, out: list[str]) -> None:
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        pad = "\n" + " " * (depth + 1)
        out.append("{")
        first = True
        for key, item in value.items():
            if not isinstance(key, str):
                raise SyncError(f"cannot write object key {js(key)}: keys must be strings")
            out.append(pad if first else "," + pad)
            first = False
            out.append(_encode_string(key))
            out.append(": ")
            _write(item, depth + 1, out)
        out.append("\n" + " " * depth + "}")
        return
    if isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        if not any(isinstance(item, dict | list | tuple) for item in value):
            out.append("[" + ", ".join(_scalar(item) for item in value) + "]")
            return
        pad = "\n" + " " * (depth + 1)
        out.append("[")
        for i, item in enumerate(value):
            out.append(pad if i == 0 else "," + pad)
            _write(item, depth + 1, out)
        out.append("\n" + " " * depth + "]")
        return
    out.append(_scalar(value))


# Digests of the module texts found in the generator's layout in this process: the same
# published module is edited again for each config a run changes (and by every bot run's trial
# and publish), and emitting a module whole to compare is a tenth of an edit.
_LAID_OUT: Recent[bytes, bool] = Recent(256)


def emitted_as(module: JsModule, text: str) -> bool:
    """Whether ``text`` (parsed as ``module``) is byte for byte what :func:`emit_module`
    writes for it: a module an edit may rewrite in place."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    if _LAID_OUT.recall(digest):
        return True
    if emit_module(module.header, module.name, module.value) != text:
        return False
    _LAID_OUT.keep(digest, True)
    return True
