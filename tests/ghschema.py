"""GitHub's response and webhook schemas, as the tests hold the fake and the events to them.

The data under ``tests/schemas/`` is extracted from GitHub's official descriptions by
``tests/schemas/extract.py`` (which names the npm package versions); nothing here goes to the
network. ``response_errors`` is what the fake GitHub checks each JSON body it sends against;
``check_event`` is what every test that builds an event payload calls before handing it on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, validators

SCHEMAS = Path(__file__).resolve().parent / "schemas"


@cache
def _data(name: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


@cache
def _templates() -> list[tuple[str, re.Pattern[str], str]]:
    """(method, path regex, operation key) for every operation the fake may serve."""
    out = []
    for key in _data("rest.json")["operations"]:
        method, template = key.split(" ", 1)
        pattern = re.sub(r"\\\{[a-z_]+\\\}", "[^/]+", re.escape(template))
        out.append((method, re.compile(pattern), key))
    return out


def operation(method: str, path: str) -> str | None:
    """The OpenAPI operation (``"GET /repos/{owner}/{repo}/pulls"``) a request is, or None."""
    for verb, pattern, key in _templates():
        if verb == method and pattern.fullmatch(path):
            return key
    return None


@cache
def _validator(source: str, section: str, key: str, status: str | None) -> Draft202012Validator:
    data = _data(source)
    if status is None:
        schema = data[section][key]
    else:
        schema = data[section][key][status] if key in data[section] else {"$ref": key}
    return _remembering(source)({"$defs": data["$defs"], "allOf": [schema]})


@cache
def _remembering(source: str) -> type[Draft202012Validator]:
    """The 2020-12 validator for ``source``'s definitions, remembering each value a definition
    was found to hold: the same user, repository or pull request sits inside many different
    answers (every pull request holds two repositories of about a hundred fields), and each
    answer validated it again. A value with an error is validated again each time, so every
    error is reported exactly as jsonschema finds it."""
    valid: set[tuple[str, str]] = set()  # (definition, the value as JSON text)

    def ref(validator: Any, ref: str, instance: Any, schema: Any) -> Iterator[Any]:
        seen = (ref, json.dumps(instance, sort_keys=True))
        if seen in valid:
            return
        errors = list(validator._validate_reference(ref=ref, instance=instance))
        if not errors:
            valid.add(seen)
        yield from errors

    return validators.extend(Draft202012Validator, {"$ref": ref})


# What each validator said of each body it was given (as JSON text): a test run sends the same
# answers again and again (the same PR, comment or check run read by every step of a bot run),
# and validating is most of the fake's own work.
_said: dict[tuple[int, str], list[str]] = {}


def _errors(validator: Draft202012Validator, body: Any) -> list[str]:
    asked = (id(validator), json.dumps(body, sort_keys=True))  # validators live as long (cached)
    if asked not in _said:
        _said[asked] = [
            f"{'/'.join(str(p) for p in err.absolute_path) or '(body)'}: {err.message[:300]}"
            for err in sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
        ]
    return list(_said[asked])


def response_errors(method: str, path: str, status: int, body: Any) -> list[str]:
    """Why ``body`` is not what GitHub answers ``method path`` with ``status`` (empty: it is).

    A status the operation does not describe (a 5xx, a 401, a rate limit) must be GitHub's
    generic error body; a 422 its validation error."""
    key = operation(method, path)
    if key is None:
        return [f"{method} {path}: no operation of GitHub's REST API has this path"]
    described = _data("rest.json")["operations"][key]
    if str(status) in described:
        validator = _validator("rest.json", "operations", key, str(status))
    else:
        generic = "validation-error" if status == 422 else "basic-error"
        validator = _validator("rest.json", "operations", f"#/$defs/{generic}", str(status))
    return [f"{key} {status}: {e}" for e in _errors(validator, body)]


# Events GitHub gives only to Actions workflows, never as a webhook: the webhook description
# has no schema for them, so nothing is checked (the router reads only ``repository``).
ACTIONS_ONLY = frozenset({"schedule"})


def event_errors(event_name: str, payload: Any) -> list[str]:
    """Why ``payload`` is not a ``event_name`` webhook payload as GitHub sends it."""
    if event_name in ACTIONS_ONLY:
        return []
    events = _data("webhooks.json")["events"]
    action = payload.get("action") if isinstance(payload, dict) else None
    key = event_name if event_name in events else f"{event_name}.{action}"
    if event_name == "repository_dispatch":
        key = "repository_dispatch.sample.collected"  # one schema, any event_type as action
    if key not in events:
        return [f"{key}: no webhook schema extracted (add it to tests/schemas/extract.py)"]
    return [
        f"{key}: {e}" for e in _errors(_validator("webhooks.json", "events", key, None), payload)
    ]


def check_event(event_name: str, payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` itself when it validates as GitHub's ``event_name`` payload; else fail."""
    errors = event_errors(event_name, payload)
    assert not errors, "event payload is not GitHub's shape:\n" + "\n".join(errors[:20])
    return payload
