"""What sync.yaml's reader (``yamlsafe.Nodes``) composes, beside what PyYAML's pure-Python
composer does: every node's kind, tag, start line and column, and value, the marks each message
names (tests/inferencex/test_yamlsafe_pyyaml.py, test_yaml_backslash_fast.py)."""

from __future__ import annotations

import yaml

from syncer.errors import SyncError
from syncer.inferencex import yamlsafe

Marks = list[tuple[str, str, int, int, str | None]]


def start_marks(root: yaml.Node | None) -> Marks:
    """Every node's kind, tag, start line and column and (scalars) value, in document order;
    a node met again through an alias is listed and not walked twice."""
    out: Marks = []
    stack, seen = [root] if root is not None else [], set()
    while stack:
        node = stack.pop()
        value = node.value if isinstance(node, yaml.ScalarNode) else None
        out.append((type(node).__name__, node.tag, *_line_column(node), value))
        if id(node) in seen or isinstance(node, yaml.ScalarNode):
            continue
        seen.add(id(node))
        children = node.value if isinstance(node, yaml.SequenceNode) else []
        if isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        stack.extend(reversed(children))
    return out


def _line_column(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line, node.start_mark.column


def both(text: str, name: str = "doc.yaml") -> tuple[Marks | str, Marks | str]:
    """The pure-Python composer's marks of ``text`` and ``yamlsafe.Nodes``', each ``"refused"``
    where it refuses the document."""
    try:
        expected: Marks | str = start_marks(yaml.SafeLoader(text).get_single_node())
    except yaml.YAMLError:
        expected = "refused"
    try:
        got: Marks | str = start_marks(yamlsafe.Nodes(text, name).root())
    except SyncError:
        got = "refused"
    return expected, got
