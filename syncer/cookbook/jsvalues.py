"""JSON-shaped data as the page's JavaScript treats it: its falsiness and its deep copy.

Shared by the decoder and the KV-tier transform, which must both read a module exactly as the
page does.
"""

from __future__ import annotations

from typing import Any


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
    kind = type(value)
    if kind is dict:
        return {k: clone(v) if type(v) in _CONTAINERS else v for k, v in value.items()}
    if kind is list:
        return [clone(v) if type(v) in _CONTAINERS else v for v in value]
    return value
