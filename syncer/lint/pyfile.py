"""Parsed Python files: the file being linted and the modules it imports from, each indexed once
(its functions, classes, module constants and imported names), and the lookup of a class by the
name a file gives it, across those files."""

from __future__ import annotations

import ast
from collections.abc import Callable

from syncer.errors import SyncError
from syncer.lint.evaluate import Values, constants

# (dotted module name) -> that module's source, or None when it cannot be read.
ModuleSource = Callable[[str], "str | None"]


def parse_python(source: str, path: str) -> ast.Module:
    """``source`` parsed; a file that is not valid Python is bad input (``SyncError``)."""
    try:
        return ast.parse(source, filename=path)
    except SyntaxError as exc:
        raise SyncError(
            f"not valid Python: {exc.msg}", path=path, line=exc.lineno, column=exc.offset
        ) from None
    except (ValueError, RecursionError) as exc:
        raise SyncError(f"cannot be parsed: {exc}", path=path) from None


class PyFile:
    """One parsed file: its functions, classes, constants and imported names."""

    def __init__(self, tree: ast.Module, path: str, source: str) -> None:
        self.tree = tree
        self.path = path
        self.lines = source.splitlines()
        self.functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.imports: dict[str, tuple[str, str]] = {}  # local name -> (module, name)
        self.assigned: dict[str, ast.expr] = {}  # module-level name -> the value bound to it
        # class name -> module-level statements that replace its fields after the class body
        # (`C.__annotations__ = ...`, `C = make_struct(...)`): its body is then not all of them.
        self.rebuilt: dict[str, list[ast.Assign]] = {}
        # Functions and classes are statements: walking statement bodies finds them all
        # without visiting every expression node of a file that is mostly expressions.
        stack: list[ast.stmt] = list(tree.body)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.functions.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.ClassDef):
                self.classes.setdefault(node.name, node)
            for name in ("body", "orelse", "finalbody"):
                stack.extend(getattr(node, name, None) or [])
            for handler in getattr(node, "handlers", None) or []:
                stack.extend(handler.body)
        for node in tree.body:
            if isinstance(node, ast.Assign):
                self._index_assign(node)
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (node.module, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:  # `import a.b as c`: c names module a.b
                        self.imports[alias.asname] = (alias.name, "")
        self.constants: dict[str, Values] = constants(tree.body, {})

    def _index_assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            names = target.elts if isinstance(target, ast.Tuple) else [target]
            for name in names:
                if isinstance(name, ast.Name):
                    self.assigned[name.id] = node.value
                    if name.id in self.classes:
                        self.rebuilt.setdefault(name.id, []).append(node)
                elif (
                    isinstance(name, ast.Attribute)
                    and name.attr == "__annotations__"
                    and isinstance(name.value, ast.Name)
                ):
                    self.rebuilt.setdefault(name.value.id, []).append(node)

    def body_text(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
        """The source of ``fn`` after its ``def`` line."""
        return "\n".join(self.lines[fn.lineno : fn.end_lineno or fn.lineno])


class ModuleReader:
    """The modules a file imports from, read through the ``modules`` callback (at the same
    commit) and parsed once each."""

    def __init__(self, modules: ModuleSource | None) -> None:
        self.modules = modules
        self.read: set[str] = set()  # the modules whose source was found
        self._cache: dict[str, PyFile | None] = {}

    def find_class(self, name: str, module: PyFile) -> tuple[PyFile, ast.ClassDef] | None:
        """``Cls`` or ``imported_module.Cls`` (``name`` dotted as written in ``module``)."""
        if name in module.classes:
            return module, module.classes[name]
        head, _, rest = name.partition(".")
        origin = module.imports.get(head)
        if origin is None or self.modules is None:
            return None
        if not rest:  # from m import Cls
            module_name, cls_name = origin
        else:  # from a import m; m.Cls  /  import a.m as m; m.Cls  /  m.sub.Cls
            parts = [p for p in (origin[0], origin[1], *rest.split(".")[:-1]) if p]
            module_name, cls_name = ".".join(parts), rest.rsplit(".", 1)[-1]
        other = self.load(module_name)
        if other is None or cls_name not in other.classes:
            return None
        return other, other.classes[cls_name]

    def load(self, module_name: str) -> PyFile | None:
        """The module named ``a.b.c``, parsed; None when its source cannot be read."""
        if module_name not in self._cache:
            source = self.modules(module_name) if self.modules else None
            parsed = None
            if source is not None:
                parsed = PyFile(parse_python(source, module_name), module_name, source)
                self.read.add(module_name)
            self._cache[module_name] = parsed
        return self._cache[module_name]


def call_name(func: ast.expr) -> str | None:
    """The name a call's function goes by: ``f`` in ``f(...)`` and ``x.f(...)``."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def dotted(node: ast.expr) -> str | None:
    """``a.b.C`` for a name or an attribute chain, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None
