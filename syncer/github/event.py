"""Reading the event file: its JSON loaded within GitHub's limits, and every value the bot takes
from it of the type GitHub gives it.

The file is untrusted input. A value of another type is a malformed event (``BadEvent``, exit
2 naming the file), whichever part of the bot reads it first: the router, or a dry run's
offline client, which answers reads from the event before the router has looked at it.
``null`` counts as absent, as GitHub sends it for fields without a value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from syncer import links
from syncer.errors import SyncError
from syncer.fsio import read_capped
from syncer.wording import js, kind

# A JSON object as the event file holds it (its values are checked where they are read).
Payload = dict[str, object]


class BadEvent(SyncError):
    """The event payload is not shaped like GitHub's (the command names the event file)."""


# GitHub caps webhook payloads at 25 MB; a bigger "event" is not GitHub's.
MAX_EVENT_BYTES = 25 * 1024 * 1024
# Every number in a GitHub event is an id, a count or a size: an id's digits hold any of them.
# int() of thousands of digits raises, and only after parsing.
MAX_EVENT_DIGITS = links.GITHUB_ID_DIGITS


def _number(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > MAX_EVENT_DIGITS:
        raise SyncError(
            f"event: a number of {len(digits)} digits (GitHub's ids have at most "
            f"{MAX_EVENT_DIGITS})"
        )
    return int(text)


def load(path: Path) -> Payload:
    """The event file as GitHub writes it (UTF-8 JSON, one object, within GitHub's size cap);
    anything else is a ``SyncError`` naming the file (and the line, when there is one)."""
    raw = read_capped(path, MAX_EVENT_BYTES, "the event")
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SyncError(
            f"the event is not UTF-8 (byte {exc.start}); GitHub sends UTF-8 JSON",
            path=str(path),
            line=line,
        ) from None
    try:
        payload = json.loads(decoded, parse_int=_number)
    except json.JSONDecodeError as exc:
        raise SyncError(
            f"not JSON: {exc.msg}", path=str(path), line=exc.lineno, column=exc.colno
        ) from None
    except RecursionError:
        # GitHub's payloads nest a handful of levels; the parser's own limit is the bound here.
        raise SyncError(
            "the event nests too deeply to be a GitHub event payload", path=str(path)
        ) from None
    except SyncError as exc:
        exc.path = str(path)
        raise
    if not isinstance(payload, dict):
        raise SyncError("expected a JSON object (a GitHub event payload)", path=str(path))
    return payload


# workflow_dispatch's inputs: a merged or closed bot PR of the cookbook, or the InferenceX PR
# whose push (on a branch of InferenceX) the workflow's ``dispatch`` job hands on.
DISPATCH_INPUTS = ("cookbook_pr", "inferencex_pr")


def is_schedule(event_name: str, payload: Payload) -> bool:
    """A schedule event, or a workflow_dispatch that names no PR (run by hand): the
    reconcile. A dispatch naming an InferenceX PR (a push to it) brings that PR alone up to
    date, whatever else is open."""
    if event_name == "schedule":
        return True
    # An ``inputs`` of another type is a malformed event, not "no PR named".
    inputs = obj(payload, "inputs")
    return event_name == "workflow_dispatch" and all(
        inputs.get(name) in (None, "") for name in DISPATCH_INPUTS
    )


def dispatch_number(payload: Payload, name: str) -> int | None:
    """workflow_dispatch input ``name`` (always a string on GitHub) as a PR number; None when
    empty or absent, a malformed event when it is not a number."""
    raw = obj(payload, "inputs").get(name)
    if raw in (None, ""):
        return None
    digits = raw.strip() if isinstance(raw, str) else ""
    # At most as many digits as any GitHub id: int() of thousands of digits raises.
    plain = digits.isascii() and digits.isdigit() and len(digits) <= links.GITHUB_ID_DIGITS
    return number(int(digits) if plain else raw, f"inputs.{name}")


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
