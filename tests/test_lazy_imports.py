"""Imports inside functions are the ones docs/ARCHITECTURE.md names, each with why.

Outside the entry points (``cli``, ``commands/*``, ``bench/*``) an import belongs at module top
unless it costs the commands that never need it start-up time; the table under "Imports inside
functions" names every such import with its reason. An import inside a function the table does
not name fails here, and so does an entry no function makes any more.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from sources import parsed

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
ENTRY_POINTS = re.compile(r"^syncer/(cli\.py|commands/)")


def documented() -> set[tuple[str, str]]:
    """(module path under syncer/, imported module) from the table's rows."""
    section = ARCHITECTURE.read_text(encoding="utf-8").split("### Imports inside functions", 1)[1]
    rows = [line for line in section.split("\n\n", 3)[2].splitlines() if line.startswith("| `")]
    pairs = set()
    for row in rows:
        modules, imports = row.split("|")[1:3]
        for module in re.findall(r"`([^`]+)`", modules):
            pairs.update((module, name) for name in re.findall(r"`([^`]+)`", imports))
    return pairs


def made() -> set[tuple[str, str]]:
    """(module path under syncer/, imported module) of every import inside a function."""
    pairs = set()
    for path in sorted((ROOT / "syncer").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if ENTRY_POINTS.match(rel):
            continue
        for name in _imported_in_functions(parsed(path), inside=False):
            pairs.add((rel.removeprefix("syncer/"), name))
    return pairs


def _imported_in_functions(node: ast.AST, *, inside: bool) -> Iterator[str]:
    """The modules imported (absolute imports) inside a function, at any depth below ``node``:
    one pass over the tree."""
    for child in ast.iter_child_nodes(node):
        if inside and isinstance(child, ast.Import):
            yield from (a.name for a in child.names)
        elif inside and isinstance(child, ast.ImportFrom) and not child.level:
            yield child.module or ""
        function = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
        yield from _imported_in_functions(child, inside=inside or function)


def test_the_table_parses() -> None:
    table = documented()
    assert ("templating.py", "jinja2") in table and ("compare/diff.py", "deepdiff") in table


def test_every_import_inside_a_function_is_named_with_its_reason() -> None:
    assert sorted(made() - documented()) == []


def test_no_entry_outlives_its_import() -> None:
    assert sorted(documented() - made()) == []
