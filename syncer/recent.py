"""What a process keeps of its own work, bounded: the most recently used results by key.

A command or bot event meets the same inputs again and again (a module proven, then encoded
for its trial and its publish; the same recipe in every tree of an audit), and each place that
remembers a pure function's result keeps at most ``size`` of them here, the least recently
used dropped first, so that no input grows the process without bound.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Recent(OrderedDict[K, V]):
    """At most ``size`` values by key, oldest use first."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def recall(self, key: K) -> V | None:
        """The value kept for ``key`` (now the most recent), or None."""
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def keep(self, key: K, value: V) -> None:
        self[key] = value
        self.move_to_end(key)
        if len(self) > self.size:
            self.popitem(last=False)


def by_value(value: object) -> bytes:
    """A key for ``value`` by its content: the digest of its ``repr``, which for dataclasses
    over JSON values is their whole content (a pickle would also record which equal strings
    happen to be one object)."""
    return hashlib.sha256(repr(value).encode("utf-8", "surrogatepass")).digest()
