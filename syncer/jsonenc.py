"""JSON text of values exactly as the standard library's ``json`` writes it with
``ensure_ascii=False``, written by orjson (PyPI ``orjson``, a declared dependency: a compiled
encoder, about a sixth of the CPU of ``json``'s C encoder on the cases of a module, and most
of ``sync decode --all --format json`` was encoding) when it is installed, else by ``json``.

The two agree byte for byte on JSON's own values (dict with string keys, list, tuple, str,
int, float, bool, None) but for four things, each sent to ``json``: a lone surrogate in a
string and an int beyond 64 bits (orjson refuses both), a float below 1e-4 (``json`` writes
``1e-05``, orjson ``0.00001`` or ``1e-7``: orjson's text of such a float always holds ``e-``
before a digit or ``.0000``, so a text holding neither wrote none), and NaN or an infinity
(``json`` writes ``NaN``, orjson ``null``: a text with a ``null`` is written by ``json``; a
module's cases hold none, many reports do). Any other value
orjson refuses goes to ``json`` too, which then raises what it raises. (orjson also writes an
``Enum``, a UUID or a numpy array, which ``json`` refuses: no report holds one.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from types import ModuleType

ORJSON: ModuleType | None
try:
    import orjson as ORJSON
except ImportError:  # the standard library's encoder, always at hand
    ORJSON = None

NAME = "json" if ORJSON is None else "orjson"

# Without the cycle check (a dict of the id of every container met): the values written are
# data parsed from a text or built from it, which cannot hold a cycle.
_COMPACT: Callable[[object], str] = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), check_circular=False
).encode
_SMALL_FLOAT = re.compile(rb"e-[0-9]")  # starts with a literal: the scan jumps between "e-"
_PASSTHROUGH = (
    0 if ORJSON is None else ORJSON.OPT_PASSTHROUGH_DATACLASS | ORJSON.OPT_PASSTHROUGH_DATETIME
)


def _compiled(value: object, option: int) -> bytes | None:
    """orjson's text of ``value``, or None where it is not ``json``'s."""
    if ORJSON is None:
        return None
    try:
        # orjson writes dataclasses and datetimes, which json refuses: refused here too.
        data: bytes = ORJSON.dumps(value, option=option | _PASSTHROUGH)
    except TypeError:  # orjson.JSONEncodeError is one
        return None
    if b"null" in data:  # maybe NaN or an infinity, which orjson writes as null, json as NaN
        return None
    return None if _maybe_small_float(data) else data


def _maybe_small_float(data: bytes) -> bool:
    """Whether orjson's ``data`` may hold a float below 1e-4, which json writes otherwise (or
    a string holding such text: then written by json, the same text). Asked of each text
    as it is made: one check of many texts joined touched as much new memory again."""
    return b".0000" in data or _SMALL_FLOAT.search(data) is not None


def compact(value: object) -> str:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``: one line. Usable
    piece by piece: the text of a list is ``[`` + its items' texts joined by ``,`` + ``]``."""
    data = _compiled(value, 0)
    return _COMPACT(value) if data is None else data.decode("utf-8")


def indented(value: object, indent: int | None) -> str:
    """``json.dumps(value, indent=indent, ensure_ascii=False)`` (orjson writes indent 2)."""
    data = _compiled(value, ORJSON.OPT_INDENT_2) if ORJSON is not None and indent == 2 else None
    if data is None:
        return json.dumps(value, indent=indent, ensure_ascii=False)
    return data.decode("utf-8")
