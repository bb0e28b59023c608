"""JSON-shaped data as the page's JavaScript treats it: its falsiness, its deep copy, how it
turns a value into text (``String(x)``, ECMAScript's Number::toString), the order of an
object's keys, and what an object literal's ``__proto__`` key means.

The one place for JavaScript value semantics: the module reader, the decoder, the KV-tier
transform and the shell text all read a module exactly as the page does through these.
"""

from __future__ import annotations

import marshal
import math
import re
from collections.abc import Iterable
from typing import Any, Final


def is_int(value: object) -> bool:
    """An integer as JSON means it (Python's ``bool`` is an ``int`` subclass; JSON's is not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def js_falsy(value: object) -> bool:
    """JavaScript falsiness (``[]`` and ``{}`` are truthy there, unlike in Python)."""
    return (
        value is None
        or value is False
        or value == ""
        or (isinstance(value, int | float) and not isinstance(value, bool) and value == 0)
    )


_CONTAINERS = (dict, list)


def clone(value: Any) -> Any:
    """Deep copy of JSON-shaped data (the page's ``JSON.parse(JSON.stringify(x))``)."""
    try:
        # In C, half the time of the walk below. Version 2 shares nothing: an object met
        # twice is copied twice, as JSON does (later versions would share it).
        return marshal.loads(marshal.dumps(value, 2))
    except ValueError:  # a value JSON does not hold (a str subclass such as an enum member)
        return _clone(value)


def _clone(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {k: _clone(v) if type(v) in _CONTAINERS else v for k, v in value.items()}
    if kind is list:
        return [_clone(v) if type(v) in _CONTAINERS else v for v in value]
    return value


# ---- text ------------------------------------------------------------------------------------


class _Undefined:
    """JavaScript's ``undefined``: what the page reads for a key a block does not have."""

    _one: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._one is None:
            cls._one = super().__new__(cls)
        return cls._one

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED: Final = _Undefined()

# Beyond 2**53 an integer literal is rounded to the nearest double (ties to even), as Python's
# float() of an int rounds it.
MAX_SAFE_INTEGER = 2**53


def js_string(value: object) -> str:
    """``String(value)``: ``${value}`` in a template string, and what ``quote`` quotes."""
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if value is UNDEFINED:
        return "undefined"
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, list):
        return ",".join(map(js_join_item, value))
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def js_join_item(value: object) -> str:
    """An item as ``Array.prototype.join`` writes it: ``null`` and ``undefined`` as nothing."""
    return "" if value is None or value is UNDEFINED else js_string(value)


def js_number(value: int | float) -> str:
    """ECMAScript's Number::toString of the double ``value`` denotes: the shortest digits that
    read back as the same double, in full from 1e-6 up to 1e21, with an exponent beyond."""
    if isinstance(value, int):
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return str(value)  # every such integer is a double, and its digits are the shortest
        value = to_double(value)
    if not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if value == 0:
        return "0"  # -0 too
    sign = "-" if value < 0 else ""
    digits, point = _shortest(abs(value))
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return f"{sign}{digits[:point]}.{digits[point:]}"
    if -6 < point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    exponent = point - 1
    mantissa = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
    return f"{sign}{mantissa}e{'+' if exponent > 0 else '-'}{abs(exponent)}"


def _shortest(value: float) -> tuple[str, int]:
    """The shortest round-trip digits of a positive finite ``value`` (no leading or trailing
    zeros) and the position of the decimal point: value = 0.DIGITS x 10**point. Python's repr
    gives the same digits ECMAScript asks for (the shortest; of several, the nearest)."""
    mantissa, _, exp = repr(value).partition("e")
    whole, _, fraction = mantissa.partition(".")
    fraction = fraction.rstrip("0")
    all_digits = (whole + fraction).lstrip("0")
    digits = all_digits.rstrip("0")
    scale = int(exp or 0) - len(fraction) + (len(all_digits) - len(digits))
    return digits, scale + len(digits)


def to_double(value: int) -> float:
    """The double an integer literal denotes (rounded beyond 2**53; infinite beyond the
    largest double, as ``1e400`` is)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


# ---- objects -----------------------------------------------------------------------------------

_ARRAY_INDEX = re.compile(r"(?:0|[1-9][0-9]{0,9})\Z")
_MAX_ARRAY_INDEX = 2**32 - 2


def is_array_index(key: str) -> bool:
    """Whether an object lists ``key`` first, before its other keys: an array index (the
    canonical decimal text of 0 .. 2**32 - 2)."""
    return _ARRAY_INDEX.match(key) is not None and int(key) <= _MAX_ARRAY_INDEX


def property_order(keys: Iterable[str]) -> list[str]:
    """``Object.keys`` order of keys created in the order given: array indices first, in
    ascending numeric order, then the other keys in creation order."""
    keys = list(keys)
    if not keys or min(keys) >= ":":  # in C: only a key sorting before ":" can be an index
        return keys
    indices = [key for key in keys if is_array_index(key)]
    if not indices:
        return keys
    first = set(indices)
    return sorted(indices, key=int) + [key for key in keys if key not in first]


def js_sort_key(text: str) -> bytes:
    """The key ``Array.prototype.sort`` compares strings by: UTF-16 code units (a character
    beyond U+FFFF sorts before U+E000..U+FFFF, unlike by code point)."""
    return text.encode("utf-16-be", "surrogatepass")


def sorted_object(obj: dict[str, Any]) -> dict[str, Any]:
    """The page's ``sortedObj``: ``Object.fromEntries`` of the keys sorted as strings, which
    lists array indices first again."""
    keys = sorted(obj)
    if not "".join(keys).isascii() and max("".join(keys)) >= "\ud800":
        keys.sort(key=js_sort_key)  # code point and UTF-16 order differ only from U+D800 on
    return {key: obj[key] for key in property_order(keys)}


PROTO: Final = "__proto__"


class ProtoError(ValueError):
    """An object literal's ``__proto__`` the decoder cannot read as the page does; ``index`` is
    the position of the offending property in the literal."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


def object_literal(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The own properties of an object literal with these ``(key, value)`` properties, in
    source order. A later key replaces an earlier one in place, as in JavaScript and JSON.
    ``__proto__: value`` (the key written plainly or quoted) is no property: an object or
    ``null`` becomes the object's prototype, anything else is ignored. So it is never shown;
    an object prototype is refused (the page would find its keys through every lookup the
    object misses), and a second ``__proto__`` is a SyntaxError that stops the page loading
    the module (``ProtoError``)."""
    out: dict[str, Any] = {}
    seen = -1
    for index, (key, value) in enumerate(pairs):
        if key != PROTO:
            out[key] = value
            continue
        if seen >= 0:
            raise ProtoError(
                "a second `__proto__` in one object literal is a SyntaxError in JavaScript: "
                "the page cannot load this module",
                index,
            )
        seen = index
        if isinstance(value, dict | list):
            raise ProtoError(
                "`__proto__` with an object value sets the object's prototype on the page, "
                "whose keys the page then reads through every lookup: not a data module",
                index,
            )
    return out


# ---- the page's view of a module ---------------------------------------------------------------


class NotADouble(ValueError):
    """A number that is no finite double (``1e400``): ``path`` is where it is in the module."""

    def __init__(self, value: int | float, path: tuple[str | int, ...]) -> None:
        super().__init__(f"number {js_number(value)}")
        self.value = value
        self.path = path


def page_view(value: Any) -> Any:
    """``value`` (a parsed module) as the page's objects hold it: every object's keys in
    JavaScript's order (array indices first), every number the double the page holds, as an
    int where the page writes no fraction and no exponent (``1.0`` is ``1``; beyond 2**53 the
    int of the digits the page writes), so JSON spells it as the page does. Containers that
    need no change are the same objects.

    A number the page reads as Infinity is ``NotADouble``: the page shows it as ``null`` in a
    block it copied through JSON and as ``Infinity`` in one it did not, so no one text is
    what the page shows."""
    try:
        return _view(value)
    except _NonFinite:
        path = _non_finite_path(value, ())
        assert path is not None  # the same walk found it
        raise NotADouble(path[1], path[0]) from None


class _NonFinite(Exception):
    pass


def _number(value: int | float) -> int | float:
    """The number the page holds for ``value`` (raises ``_NonFinite``)."""
    if type(value) is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return value
        double = to_double(value)
    else:
        double = float(value)
    if not math.isfinite(double):
        raise _NonFinite
    if not double.is_integer() or abs(double) >= 1e21:
        return double  # JSON writes these as JavaScript does but below 1e-4 (1e-05, 0.00001)
    # An integer JSON writes as JavaScript's JSON.stringify does: beyond 2**53, the digits
    # String() writes (2**60 as 1152921504606847000), an integer that is the same double.
    return int(double) if abs(double) <= MAX_SAFE_INTEGER else int(js_number(double))


def _view(value: Any) -> Any:
    changed: Any = None
    items: Iterable[tuple[Any, Any]]
    items = value.items() if type(value) is dict else enumerate(value)
    for key, item in items:
        kind = type(item)
        if kind is dict or kind is list:
            new = _view(item)
        elif kind is int:
            if -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                continue  # nearly every number: a count, an index
            new = _number(item)
        elif kind is float:
            new = _number(item)
        else:
            continue
        if new is not item:
            if changed is None:
                changed = value.copy()
            changed[key] = new
    # min() first, in C: only a key sorting before ":" can be an array index.
    if type(value) is dict and value and min(value) < ":":
        order = property_order(value)
        if order != list(value):
            source = value if changed is None else changed
            changed = {key: source[key] for key in order}
    return value if changed is None else changed


def _non_finite_path(
    value: Any, path: tuple[str | int, ...]
) -> tuple[tuple[str | int, ...], int | float] | None:
    items: Iterable[tuple[Any, Any]]
    if type(value) is dict:
        items = value.items()
    elif type(value) is list:
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        if type(item) in (int, float):
            try:
                _number(item)
            except _NonFinite:
                return (*path, key), item
        found = _non_finite_path(item, (*path, key))
        if found is not None:
            return found
    return None
