"""The package layers of docs/ARCHITECTURE.md hold in the code.

The layer table is read from the document itself, so the map a reader trusts and the rule the
code keeps cannot drift apart: every module of ``syncer`` (and ``bench``) belongs to exactly one
layer, imports only its own layer or lower ones, imports project modules at module top (entry
points excepted: they keep start-up light), and no import cycle exists between modules.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from sources import parsed

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
PACKAGES = ("syncer", "bench")

# Where an import inside a function is allowed: the commands import their work only when run,
# so `sync decode` never pays for PyGithub, jinja2 or rich; a benchmark times the imports of
# what it measures.
LAZY_IMPORTERS = re.compile(r"^(syncer\.(cli|commands\.\w+)|bench\.\w+)$")


@dataclass(frozen=True)
class Import:
    importer: str
    target: str
    line: int
    in_function: bool
    type_only: bool


def layer_patterns(text: str) -> list[tuple[int, str]]:
    """(layer, pattern) from the first code block under "## Layers"; a pattern is a dotted
    module name, ``pkg.*`` for a whole package, braces expanded."""
    section = text.split("## Layers", 1)[1]
    block = section.split("```", 2)[1]
    entries: list[tuple[int, str]] = []
    layer = None
    for line in block.splitlines():
        head = re.match(r"^(\d)\s+\S+(?: \S+)*?\s{2,}(.*)$", line)
        if head:
            layer, rest = int(head.group(1)), head.group(2)
        elif line.strip() and layer is not None:
            rest = line.strip()
        else:
            continue
        rest = re.sub(r"\([^)]*\)", "", rest)
        for entry in re.findall(r"[\w/*]+(?:\{[^}]*\})?[\w*]*", rest):
            brace = re.match(r"^(.*)\{([^}]*)\}(.*)$", entry)
            names = (
                [brace.group(1) + n.strip() + brace.group(3) for n in brace.group(2).split(",")]
                if brace
                else [entry]
            )
            entries.extend((layer, n.replace("/", ".")) for n in names)
    return entries


def module_names() -> dict[str, Path]:
    """Every module by dotted name; a package's ``__init__`` under the package's name."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def packages(modules: dict[str, Path]) -> set[str]:
    return {m for m, p in modules.items() if p.name == "__init__.py"}


def layer_of(module: str, patterns: list[tuple[int, str]]) -> int | None:
    """The layer of the most specific pattern naming ``module`` (``syncer.`` prefix implied;
    a package's ``__init__`` and ``__main__`` go with the package)."""
    name = module.removeprefix("syncer.")
    name = name.removesuffix(".__main__")
    best: tuple[int, int] | None = None  # (specificity, layer)
    for layer, pattern in patterns:
        if pattern.endswith(".*"):
            hit = name == pattern[:-2] or name.startswith(pattern[:-1])
            rank = 1
        else:
            hit = name == pattern
            rank = 2
        if hit and (best is None or rank > best[0]):
            best = (rank, layer)
    return best[1] if best else None


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    tree = parsed(path)
    is_package = path.name == "__init__.py"
    found: list[Import] = []

    def resolve(node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = module.split(".")
        if not is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def visit(node: ast.AST, in_function: bool, type_only: bool) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                visit(child, in_function, True)
            for child in node.orelse:
                visit(child, in_function, type_only)
            return
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            base = resolve(node)
            # `from syncer import links` imports the module syncer.links.
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names
            ]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        for target in targets:
            if target.split(".")[0] in PACKAGES and target in modules and target != module:
                found.append(Import(module, target, node.lineno, in_function, type_only))
        inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for child in ast.iter_child_nodes(node):
            # An import is a statement, and no expression holds one: most of a tree's nodes
            # are expressions, not walked.
            if not isinstance(child, ast.expr):
                visit(child, inner, type_only)

    visit(tree, False, False)
    return found


@pytest.fixture(scope="module")
def graph() -> tuple[dict[str, Path], list[tuple[int, str]], list[Import]]:
    modules = module_names()
    patterns = layer_patterns(ARCHITECTURE.read_text(encoding="utf-8"))
    edges = [i for m, p in modules.items() for i in imports_of(m, p, modules)]
    return modules, patterns, edges


def test_the_layer_table_parses() -> None:
    patterns = dict((p, layer) for layer, p in layer_patterns(ARCHITECTURE.read_text()))
    assert patterns["cli"] == 6 and patterns["commands.*"] == 6 and patterns["bench.*"] == 6
    assert patterns["cookbook.*"] == 2 and patterns["encoder.*"] == 4
    assert patterns["model"] == 1 and patterns["errors"] == 0 and patterns["links"] == 0


def test_packages_only_name_their_modules(graph) -> None:
    """A package's ``__init__`` holds its docstring only, so it sits in no layer: importing
    ``syncer.cookbook.decode`` must not drag in the cookbook's encoder."""
    modules, _, edges = graph
    package = packages(modules)
    assert [i for i in edges if i.importer in package] == []


def test_every_module_has_one_layer(graph) -> None:
    modules, patterns, _ = graph
    package = packages(modules)
    unplaced = [m for m in modules if m not in package and layer_of(m, patterns) is None]
    assert unplaced == [], "modules missing from the layer table of docs/ARCHITECTURE.md"


def test_imports_point_down(graph) -> None:
    modules, patterns, edges = graph
    package = packages(modules)
    upward = [
        f"{i.importer}:{i.line} imports {i.target} "
        f"(layer {layer_of(i.importer, patterns)} -> {layer_of(i.target, patterns)})"
        for i in edges
        if not i.type_only
        and i.target not in package
        and layer_of(i.target, patterns) > layer_of(i.importer, patterns)
    ]
    assert upward == []


def test_project_imports_at_module_top(graph) -> None:
    _, _, edges = graph
    inside = [
        f"{i.importer}:{i.line} imports {i.target} inside a function"
        for i in edges
        if i.in_function and not LAZY_IMPORTERS.match(i.importer)
    ]
    assert inside == []


def cycles_of(edges: list[Import], modules: dict[str, Path], *, type_only: bool) -> list[str]:
    """Every import cycle, each as ``a -> b -> a``; ``type_only``: annotation-only imports
    (under ``TYPE_CHECKING``) count too, since a module naming another's types for its
    annotations depends on it as much as one importing it to run."""
    after: dict[str, set[str]] = {m: set() for m in modules}
    for i in edges:
        if type_only or not i.type_only:
            after[i.importer].add(i.target)
    cycles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def walk(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in sorted(after[module]):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                walk(target)
        path.pop()
        state[module] = 2

    for module in sorted(modules):
        if module not in state:
            walk(module)
    return cycles


def test_no_import_cycles(graph) -> None:
    modules, _, edges = graph
    assert cycles_of(edges, modules, type_only=False) == []


def test_no_import_cycles_even_for_annotations(graph) -> None:
    """A result and its report never import each other, not even for type hints: the report
    module imports the result, the result knows nothing of how it is shown."""
    modules, _, edges = graph
    assert cycles_of(edges, modules, type_only=True) == []


def test_a_type_only_cycle_is_reported(tmp_path: Path) -> None:
    """The cycle check sees imports under ``TYPE_CHECKING``, which the runtime check skips."""
    result = tmp_path / "result.py"
    result.write_text("from syncer.fake import report\n")
    report = tmp_path / "report.py"
    report.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from syncer.fake.result import Result\n"
    )
    modules = {"syncer.fake.result": result, "syncer.fake.report": report}
    edges = [i for m, p in modules.items() for i in imports_of(m, p, modules)]
    assert cycles_of(edges, modules, type_only=False) == []
    assert cycles_of(edges, modules, type_only=True) == [
        "syncer.fake.report -> syncer.fake.result -> syncer.fake.report"
    ]


def test_a_violation_is_reported(tmp_path: Path) -> None:
    """The checks see what they claim to: an upward, lazy import in a made-up module."""
    module = tmp_path / "fake.py"
    module.write_text("def f():\n    from syncer.publish import bot\n")
    modules = {"syncer.model": module, "syncer.publish.bot": module}
    (found,) = imports_of("syncer.model", module, modules)
    assert found.target == "syncer.publish.bot" and found.in_function and found.line == 2
    patterns = layer_patterns(ARCHITECTURE.read_text())
    assert layer_of("syncer.publish.bot", patterns) > layer_of("syncer.model", patterns)
