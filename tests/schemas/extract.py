"""Extract the parts of GitHub's official API descriptions the tests validate against.

The fake GitHub (``tests/ghserver.py``) checks every JSON body it returns against the response
schema of the operation and status it answers, and the tests check every event payload they
feed the bot against the webhook payload schema of that event. Both schemas come from the npm
packages named below; this script reads the packed tarballs and writes only what the tests
need, with every ``$ref`` those schemas reach kept under ``$defs``, as plain JSON Schema
(draft 2020-12: the REST description's OpenAPI 3.0 ``nullable`` is turned into a ``null``
type), without descriptions and examples:

    npm pack @octokit/openapi@23.0.2 @octokit/openapi-webhooks@12.1.0
    python tests/schemas/extract.py octokit-openapi-23.0.2.tgz octokit-openapi-webhooks-12.1.0.tgz

A new operation the fake serves, or a new event a test sends, is added to ``OPERATIONS`` or
``EVENTS`` and the script run again.
"""

from __future__ import annotations

import json
import sys
import tarfile
from pathlib import Path
from typing import Any

REST_PACKAGE = "@octokit/openapi@23.0.2"
WEBHOOKS_PACKAGE = "@octokit/openapi-webhooks@12.1.0"
MEMBER = "package/generated/api.github.com.json"
HERE = Path(__file__).resolve().parent

# (method, OpenAPI path template, the statuses whose JSON body the fake may send)
OPERATIONS: list[tuple[str, str, tuple[str, ...]]] = [
    ("get", "/user", ("200", "401", "403")),
    ("get", "/repos/{owner}/{repo}/pulls", ("200", "422")),
    ("post", "/repos/{owner}/{repo}/pulls", ("201", "403", "422")),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}", ("200", "404")),
    ("patch", "/repos/{owner}/{repo}/pulls/{pull_number}", ("200", "403", "422")),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/commits", ("200",)),
    ("get", "/repos/{owner}/{repo}/commits", ("200",)),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments", ("200", "404")),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments", ("201", "403", "404", "422")),
    ("get", "/repos/{owner}/{repo}/issues/comments/{comment_id}", ("200", "404")),
    ("patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}", ("200", "422")),
    ("delete", "/repos/{owner}/{repo}/issues/comments/{comment_id}", ()),
    ("get", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", ("200", "404")),
    ("post", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", ("200", "201", "422")),
    ("delete", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions/{reaction_id}", ()),
    ("get", "/repos/{owner}/{repo}/actions/runs/{run_id}", ("200",)),
    ("get", "/repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}", ("200",)),
    ("get", "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts", ("200",)),
    ("get", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs", ("200",)),
    ("get", "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}", ("410",)),
    # sync audit's dashboard issue
    ("get", "/repos/{owner}/{repo}/issues", ("200", "404")),
    ("post", "/repos/{owner}/{repo}/issues", ("201", "403", "404", "422")),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}", ("200", "404")),
    ("patch", "/repos/{owner}/{repo}/issues/{issue_number}", ("200", "403", "404", "422")),
]

GENERIC_ERRORS = ("basic-error", "validation-error")

# GitHub's event name -> the webhook actions the tests send (None: an event without actions)
EVENTS: dict[str, tuple[str | None, ...]] = {
    "issue_comment": ("created", "edited", "deleted"),
    "pull_request": ("opened", "reopened", "synchronize", "edited", "closed", "labeled"),
    "repository_dispatch": ("sample.collected",),
    "workflow_dispatch": (None,),
}

# Schema keywords whose value is one schema, a list of schemas, or a mapping of schemas.
_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("properties", "patternProperties", "$defs")
_DROPPED = {"description", "example", "examples", "title", "externalDocs", "deprecated"}


def _load(tarball: Path) -> dict[str, Any]:
    with tarfile.open(tarball) as tar:
        member = tar.extractfile(MEMBER)
        if member is None:
            raise SystemExit(f"{tarball}: no {MEMBER}")
        return json.load(member)


class Collector:
    """Copies schemas out of one description, following ``$ref``s into ``$defs``."""

    def __init__(self, doc: dict[str, Any], *, nullable: bool) -> None:
        self.doc = doc
        self.nullable = nullable  # OpenAPI 3.0: rewrite ``nullable: true`` as a null type
        self.defs: dict[str, Any] = {}

    def resolve(self, ref: str) -> Any:
        node: Any = self.doc
        for part in ref.removeprefix("#/").split("/"):
            node = node[part]
        return node

    def schema(self, node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            ref = node["$ref"]
            name = ref.rsplit("/", 1)[1]
            if name not in self.defs:
                self.defs[name] = None  # placeholder: a recursive ref stops here
                self.defs[name] = self.schema(self.resolve(ref))
            return {"$ref": f"#/$defs/{name}"}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED or key.startswith("x-") or key == "nullable":
                continue
            if key in _ONE and isinstance(value, dict):
                out[key] = self.schema(value)
            elif key in _MANY:
                out[key] = [self.schema(v) for v in value]
            elif key in _MAP:
                out[key] = {k: self.schema(v) for k, v in value.items()}
            else:
                out[key] = value
        if self.nullable and node.get("nullable") is True:
            out = _with_null(out)
        return out


def _with_null(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str) and "allOf" not in schema and "anyOf" not in schema:
        schema = {**schema, "type": [kind, "null"]}
        if "enum" in schema and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
        return schema
    return {"anyOf": [schema, {"type": "null"}]}


def _json_schema(collector: Collector, response: dict[str, Any]) -> Any | None:
    if "$ref" in response:
        response = collector.resolve(response["$ref"])
    content = (response.get("content") or {}).get("application/json")
    return None if content is None else collector.schema(content["schema"])


def rest(doc: dict[str, Any]) -> dict[str, Any]:
    collector = Collector(doc, nullable=True)
    operations: dict[str, dict[str, Any]] = {}
    for method, path, statuses in OPERATIONS:
        responses = doc["paths"][path][method]["responses"]
        found: dict[str, Any] = {}
        for status in statuses:
            if status not in responses:
                raise SystemExit(f"{method.upper()} {path}: no {status} response in {REST_PACKAGE}")
            schema = _json_schema(collector, responses[status])
            if schema is None:
                raise SystemExit(f"{method.upper()} {path} {status}: no JSON body")
            found[status] = schema
        operations[f"{method.upper()} {path}"] = found
    # The bodies of statuses an operation does not describe (a 5xx, a 404 of a list): GitHub's
    # generic error and its validation error.
    for name in GENERIC_ERRORS:
        collector.schema({"$ref": f"#/components/schemas/{name}"})
    return {"source": REST_PACKAGE, "operations": operations, "$defs": collector.defs}


def webhooks(doc: dict[str, Any]) -> dict[str, Any]:
    collector = Collector(doc, nullable=False)
    events: dict[str, Any] = {}
    for event, actions in EVENTS.items():
        for action in actions:
            name = event.replace("_", "-") + (f"-{action}" if action else "")
            body = doc["webhooks"][name]["post"]["requestBody"]["content"]["application/json"]
            events[f"{event}.{action}" if action else event] = collector.schema(body["schema"])
    return {"source": WEBHOOKS_PACKAGE, "events": events, "$defs": collector.defs}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    outputs = {
        "rest.json": rest(_load(Path(argv[0]))),
        "webhooks.json": webhooks(_load(Path(argv[1]))),
    }
    for name, data in outputs.items():
        text = json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n"
        (HERE / name).write_text(text, encoding="utf-8")
        print(f"{name}: {len(text)} bytes from {data['source']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
