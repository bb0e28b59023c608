"""Reading the event file: every value the bot takes from it has the type GitHub gives it.

The file is untrusted input. A value of another type is a malformed event (``BadEvent``, exit
2 naming the file), whichever part of the bot reads it first: the router, or a dry run's
offline client, which answers reads from the event before the router has looked at it.
``null`` counts as absent, as GitHub sends it for fields without a value.
"""

from __future__ import annotations

from typing import Any

from syncer.errors import SyncError
from syncer.wording import js, kind

# A JSON object as the event file holds it (its values are checked where they are read).
Payload = dict[str, object]


class BadEvent(SyncError):
    """The event payload is not shaped like GitHub's (the command names the event file)."""


def obj(data: Payload, key: str, where: str = "") -> Payload:
    """``data[key]`` as an object ({} when absent); any other type is a malformed event."""
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadEvent(f"event: {_at(where, key)} must be an object, got {kind(value)}")
    return value


def text(data: Payload, key: str, where: str = "") -> str:
    """``data[key]`` as a string ("" when absent)."""
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadEvent(f"event: {_at(where, key)} must be a string, got {kind(value)}")
    return value


def number(value: object, what: str) -> int:
    """A GitHub id or PR number: a positive integer, not a boolean."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise BadEvent(f"event: {what} must be a positive integer, got {js(value, 40)}")
    return value


# The shapes of the parts of an event the offline client turns into records: a dict is an
# object whose listed keys have those shapes, a one-element list a list of that shape, `list`
# a list of anything (its reader skips what it cannot use: labels), `str` a string, `int` a
# positive integer, `bool` a boolean. Keys not listed are not read.
_USER = {"login": str}
PULL_SHAPE: dict[str, Any] = {
    "number": int,
    "title": str,
    "body": str,
    "state": str,
    "merged": bool,
    "user": _USER,
    "head": {"ref": str, "sha": str, "repo": {"full_name": str}},
    "base": {"ref": str},
    "labels": list,
    "html_url": str,
    "maintainer_can_modify": bool,
}
ISSUE_SHAPE: dict[str, Any] = {
    "number": int,
    "title": str,
    "body": str,
    "state": str,
    "pull_request": {"merged_at": str},
    "user": _USER,
    "labels": list,
    "html_url": str,
}
COMMENT_SHAPE: dict[str, Any] = {
    "id": int,
    "body": str,
    "user": _USER,
    "author_association": str,
    "created_at": str,
    "updated_at": str,
    "html_url": str,
}
EVENT_SHAPE: dict[str, Any] = {
    "repository": {"full_name": str},
    "pull_request": PULL_SHAPE,
    "issue": ISSUE_SHAPE,
    "comment": COMMENT_SHAPE,
}


def check(data: Payload, shape: dict[str, Any], where: str = "") -> None:
    """Raise ``BadEvent`` naming the first value of ``data`` that ``shape`` does not allow."""
    for key, want in shape.items():
        value = data.get(key)
        if value is None:
            continue
        at = _at(where, key)
        if isinstance(want, dict):
            check(obj(data, key, where), want, at)
        elif isinstance(want, list):
            if not isinstance(value, list):
                raise BadEvent(f"event: {at} must be a list, got {kind(value)}")
            for i, item in enumerate(value):
                if not isinstance(item, dict):
                    raise BadEvent(f"event: {at}[{i}] must be an object, got {kind(item)}")
                check(item, want[0], f"{at}[{i}]")
        elif want is list:
            if not isinstance(value, list):
                raise BadEvent(f"event: {at} must be a list, got {kind(value)}")
        elif want is str:
            text(data, key, where)
        elif want is int:
            number(value, at)
        elif want is bool and not isinstance(value, bool):
            raise BadEvent(f"event: {at} must be true or false, got {kind(value)}")


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key
