"""The one bounded memo of the process (syncer/recent.py): at most its size, the least
recently used dropped first; a key by content, not by identity."""

from __future__ import annotations

from dataclasses import dataclass

from syncer.recent import Recent, by_value


def test_the_least_recently_used_is_dropped_first() -> None:
    kept: Recent[str, int] = Recent(2)
    kept.keep("a", 1)
    kept.keep("b", 2)
    assert kept.recall("a") == 1  # now the most recent
    kept.keep("c", 3)
    assert list(kept) == ["a", "c"] and kept.recall("b") is None
    kept.keep("a", 4)  # kept again: the new value, no growth
    assert dict(kept) == {"c": 3, "a": 4}


@dataclass
class _Spec:
    name: str
    args: list[str]


def test_a_key_by_value_is_equal_for_equal_content_and_differs_on_any_change() -> None:
    assert by_value(_Spec("a", ["x"])) == by_value(_Spec("a", ["x"]))
    assert by_value(_Spec("a", ["x"])) != by_value(_Spec("a", ["x", ""]))
    assert by_value(_Spec("a\udc80", [])) != by_value(_Spec("a", []))  # a lone surrogate too
