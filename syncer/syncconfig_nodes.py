"""``sync.yaml`` read node by node: each value with its line, every error naming file and line.

A value of a fixed shape (an id, a commit, a date) is the text the user wrote, quoted or not,
never what YAML 1.1 makes of it (an octal number, a date object); keys YAML reads as something
other than a string, duplicate and unknown keys and lone surrogates are refused.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

import yaml

from syncer.errors import SyncError
from syncer.inferencex import yamlsafe
from syncer.untrusted import clip
from syncer.wording import VALUE_CHARS, js, kind


class NodeReader:
    """Typed access to composed YAML nodes, every error with file and line. ``ids``: the
    patterns of GitHub ids (a pin's run, comment and PR), which never start with 0."""

    def __init__(self, path: str, text: str, *, ids: tuple[re.Pattern[str], ...]) -> None:
        self.path = path
        self.nodes = yamlsafe.Nodes(text, path)
        self.ids = ids

    def root(self) -> yaml.Node:
        node = self.nodes.root()
        if node is None:
            raise SyncError("empty file; expected a mapping with 'models'", path=self.path)
        return node

    def fail(self, node: yaml.Node, message: str) -> SyncError:
        return self.nodes.fail(node, message)

    def mapping(self, node: yaml.Node, what: str, allowed: tuple[str, ...]) -> dict[str, yaml.Node]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{what}: expected a mapping")
        out: dict[str, yaml.Node] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.fail(key_node, f"{what}: keys must be strings, got {_kind(key_node)}")
            key = self.value(key_node)
            if not isinstance(key, str):
                raise self.fail(
                    key_node, f"{what}: keys must be strings, got {_scalar(key_node, key)}"
                )
            if key in out:
                raise self.fail(key_node, f"{what}: duplicate key {js(key)}")
            if key not in allowed:
                raise self.fail(
                    key_node, f"{what}: unknown key {js(key)}; expected one of {', '.join(allowed)}"
                )
            out[key] = value_node
        return out

    def sequence(self, node: yaml.Node, what: str) -> list[yaml.Node]:
        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, f"{what}: expected a list")
        return list(node.value)

    def value(self, node: yaml.Node) -> object:
        value = self.nodes.construct(node)
        if isinstance(value, str) and _SURROGATE.search(value):
            # A "\ud800" escape: no page, module header or commit can hold it as text.
            found = _SURROGATE.search(value)
            assert found is not None
            raise self.fail(
                node,
                f"a lone surrogate (\\u{ord(found.group()):04x}) in {js(value)}: "
                "no text can hold it; write the character itself",
            )
        return value

    def text(
        self, node: yaml.Node, what: str, pattern: re.Pattern[str] | None = None, hint: str = ""
    ) -> str:
        if not isinstance(node, yaml.ScalarNode):
            # Named by kind, never repr'd: an aliased list can expand to gigabytes of text.
            raise self.fail(node, f"{what}: expected a string, got {_kind(node)}")
        if pattern is not None and node.tag in _IMPLICIT_TAGS:
            # A value of a fixed shape (a run, comment or PR id, a commit, a date) is the text
            # the user wrote, quoted or not: YAML 1.1 reads `run: 041000000001` as the octal
            # 4429185025 and `date: 2026-10-13` as a date object.
            # A commit may start with 0 (and be all digits); an id never does.
            if pattern in self.ids and _LEADING_ZERO.fullmatch(node.value):
                unquoted = (
                    f" (unquoted, YAML 1.1 reads it as the number {_octal(node.value)})"
                    if not node.style  # plain: None from PyYAML's composer, "" from libyaml's
                    else ""
                )
                raise self.fail(
                    node,
                    f"{what}: {js(node.value)} starts with 0, which no GitHub id does"
                    f"{unquoted}; write the id itself",
                )
            text: str = node.value
            if pattern.fullmatch(text):
                return text
        value = self.value(node)
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise self.fail(node, f"{what}: expected a string, got {_scalar(node, value)}")
        text = str(value)
        if text == "" or (pattern is not None and not pattern.fullmatch(text)):
            raise self.fail(
                node, f"{what}: expected {hint or 'a non-empty string'}, got {js(text)}"
            )
        return text

    def optional_text(
        self, nodes: dict[str, yaml.Node], key: str, what: str, **kw: Any
    ) -> str | None:
        node = nodes.get(key)
        # null, ~ or nothing written (read from the tag: building the value could fail first)
        if node is None or node.tag == "tag:yaml.org,2002:null":
            return None
        return self.text(node, f"{what}.{key}", **kw)


_SURROGATE = re.compile("[\ud800-\udfff]")
_LEADING_ZERO = re.compile(r"0[0-9]+(?:/.*)?")
# The tags YAML 1.1 resolves a plain or quoted scalar to (no explicit `!tag` written).
_IMPLICIT_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "timestamp")
)


def _octal(text: str) -> str:
    """What YAML 1.1 makes of a plain ``0...`` id: an octal number when its digits allow."""
    digits = text.split("/")[0]
    return f"{int(digits, 8)}, octal" if set(digits) <= set("01234567") else str(int(digits))


def _kind(node: yaml.Node) -> str:
    return "a mapping" if isinstance(node, yaml.MappingNode) else "a list"


def _scalar(node: yaml.ScalarNode, value: object) -> str:
    """A YAML scalar as written in the file, with what YAML 1.1 made of it (``yes (a
    boolean)``, ``2026-10-13 (a date)``), never Python's repr (``True``, ``datetime.date(...)``)."""
    what = "a date" if isinstance(value, datetime.date) else kind(value)
    return f"{clip(str(node.value), VALUE_CHARS)} ({what})"
