"""Each field the bot reads from GitHub's JSON, checked for the shape GitHub gives it.

An answer of another shape (a proxy's page, an API that changed, a fake) made the parsers exit
3 (``KeyError`` / ``ValueError`` in ``comment_record``) or take a wrong value silently (an id
``"12"`` read as 12, a ``user`` string read as no user). Here a field is read only with its
shape: a missing or null optional field is its default, anything else of the wrong type is a
:class:`ShapeError` naming the field; ``api.Api`` adds the request it answered, so the user
sees one ``error:`` line (exit 2) naming the endpoint and the field.
"""

from __future__ import annotations

from typing import Any

from syncer.errors import SyncError
from syncer.links import GITHUB_ID_DIGITS
from syncer.wording import js, kind

# The largest id or count GitHub's answers hold (ids are at most 20 digits, links.py).
_MAX_ID = 10**GITHUB_ID_DIGITS - 1


class ShapeError(SyncError):
    """A field of a GitHub answer (or of an event file read the same way) that is not the
    shape GitHub gives it; ``field`` is its path (``user.login``, ``[3].id``)."""

    def __init__(self, field: str, value: object, expected: str) -> None:
        shown = f"{js(value)} ({kind(value)})" if value is not None else "missing or null"
        super().__init__(f"{field or 'the answer'} is {shown}, expected {expected}")
        self.field = field


class Fields:
    """One JSON object of an answer, at ``at`` (the path of the object in the answer)."""

    def __init__(self, data: object, at: str = "") -> None:
        if not isinstance(data, dict):
            raise ShapeError(at, data, "an object")
        self.data: dict[str, Any] = data
        self.at = at

    def name(self, key: str) -> str:
        return f"{self.at}.{key}" if self.at else key

    def has(self, key: str) -> bool:
        """Whether ``key`` is there and not null (``pull_request`` marks an issue as a PR)."""
        return self.data.get(key) is not None

    def text(self, key: str, *, required: bool = False) -> str:
        """A string; "" when missing or null, unless ``required``."""
        value = self.data.get(key)
        if value is None and not required:
            return ""
        if not isinstance(value, str):
            raise ShapeError(self.name(key), value, "a string")
        return value

    def maybe_text(self, key: str) -> str | None:
        """A string or null (a run's ``conclusion`` while it runs)."""
        value = self.data.get(key)
        return None if value is None else self.text(key)

    def id(self, key: str) -> int:
        """A required whole number of at most 20 digits (an id, a PR's number)."""
        value = self.data.get(key)
        if not (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_ID):
            raise ShapeError(
                self.name(key), value, f"a whole number of 1 to {GITHUB_ID_DIGITS} digits"
            )
        return value

    def size(self, key: str) -> int:
        """A whole number of bytes; 0 when missing or null."""
        return 0 if self.data.get(key) is None else self.id(key)

    def flag(self, key: str) -> bool | None:
        """``true``, ``false``, or None when missing or null."""
        value = self.data.get(key)
        if value is not None and not isinstance(value, bool):
            raise ShapeError(self.name(key), value, "true or false")
        return value

    def object(self, key: str) -> Fields:
        """A nested object; an empty one when missing or null (a deleted user, a PR's head
        repository that is gone)."""
        value = self.data.get(key)
        return Fields({} if value is None else value, self.name(key))

    def items(self, key: str) -> list[Any]:
        """An array; [] when missing or null."""
        value = self.data.get(key)
        if value is None:
            return []
        return array(value, self.name(key))


def array(value: object, at: str = "") -> list[Any]:
    """An array of the answer (a page of a list)."""
    if not isinstance(value, list):
        raise ShapeError(at, value, "an array")
    return value


def each(value: object, at: str = "") -> list[tuple[str, Any]]:
    """The items of an array with their paths (``[3]``, ``artifacts[3]``)."""
    return [(f"{at}[{i}]", item) for i, item in enumerate(array(value, at))]
