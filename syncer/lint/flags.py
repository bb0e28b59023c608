"""The command-line flags a Python source file declares, proven statically with ``ast``.

The file is parsed, never imported or executed. What counts as a declaration:

- any ``<x>.add_argument(...)`` call (a parser, an argument group, a sub-parser): every
  positional option string that starts with ``-``; ``action=BooleanOptionalAction`` also
  declares the ``--no-`` form of each ``--`` name, as argparse does;
- option strings built from values the file pins down: string constants, f-strings and ``+``
  over them, ``str.replace`` with constant arguments, conditional expressions (a test that
  cannot be decided counts both branches), names bound to such values (module level or in the
  function), function parameters through their constant defaults, and ``for`` loops over
  literal lists, tuples and dicts (``.items()``/``.keys()``/``.values()``, ``sorted(...)``),
  or names bound to one;
- calls to helper functions defined in the same file (a deprecated-alias helper such as
  ``_deprecated(parser, "--old", "--new")``): the helper's body is read with its parameters
  bound to the call's arguments;
- ``add_cli_args_from_dataclass(parser, Cls)``: every field of ``Cls`` annotated
  ``A[T, "help"]`` / ``Annotated[T, Arg(...)]`` declares ``Arg(cli_name=...)`` or
  ``--field-name``, plus ``Arg(aliases=[...])``; ``Arg(no_cli=True)`` fields declare nothing.
  Fields of base classes are read too when the class is in this file or in a module the
  ``modules`` callback can supply (``from m import Cls``, ``m.Cls``), e.g.
  ``sglang.srt.arg_groups.fields.exec_`` at the same commit. A class whose fields are rebuilt
  at module level after its body (``C.__annotations__ = {...}`` merged from a list of namespace
  classes, ``C = msgspec.defstruct(...)``) also gets the fields of the classes that code passes
  around, and the file is marked as declaring dynamically (the merge itself is code).

SGLang's ``Deprecated*`` argparse actions (in ``add_argument`` or ``Arg(action=...)``) declare
their flags as deprecated, with the ``new_flag`` they name (``FlagSet.deprecated``); a parser
built with ``allow_abbrev=False`` anywhere in the file turns argparse's prefix matching off
(``FlagSet.abbreviations``).

Anything else that could declare a flag (an option string that depends on a value the file
does not pin down, a dataclass the file imports from a module that cannot be read) is recorded
in ``FlagSet.dynamic`` with its line: the set of flags is then a lower bound, and a flag missing
from it is only *possibly* undeclared (see ``syncer.lint.lint``).
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from syncer.errors import SyncError

# An expression's possible values: a frozenset of constants, or one of two markers.
UNKNOWN = "<unknown>"  # the file does not pin the value down
PARAM = "<param>"  # a parameter without a constant default: known only at a call site
Values = Any  # frozenset[object] | str (one of the markers)

# Bounds on the static evaluation, so a pathological file costs little and never recurses deep.
MAX_COMBINATIONS = 256
MAX_CALL_DEPTH = 4
MAX_LOOP_VALUES = 4096

DATACLASS_HELPER = "add_cli_args_from_dataclass"
_NO_ABBREV = re.compile(r"\ballow_abbrev\s*=\s*False\b")
ANNOTATED_NAMES = frozenset({"A", "Annotated"})

# (dotted module name) -> that module's source, or None when it cannot be read.
ModuleSource = Callable[[str], "str | None"]


@dataclass(frozen=True)
class Deprecation:
    """A flag declared only through one of SGLang's ``Deprecated*`` argparse actions."""

    action: str  # e.g. DeprecatedAction, DeprecatedAliasStoreAction, DeprecatedStoreTrueAction
    new_flag: str | None  # the flag to use instead, when the declaration names it
    stops: bool  # declared with an error message: the parser stops when it is given

    def describe(self) -> str:
        use = f"; use {self.new_flag}" if self.new_flag else ""
        if self.action == "DeprecatedAction":
            # Older SGLang versions raise on any DeprecatedAction flag, newer ones only when it
            # carries an error message; which one applies lives in another file.
            when = "stops the server" if self.stops else "may stop the server (version-dependent)"
            return f"retired ({self.action}): {when}{use}"
        return f"deprecated ({self.action}): accepted with a warning{use}"


@dataclass
class FlagSet:
    """The flags one source file declares, and what it declares in ways ``ast`` cannot prove."""

    path: str
    flags: frozenset[str]
    dynamic: list[str] = field(default_factory=list)  # "line N: why", one per unresolved site
    extra_sources: list[str] = field(default_factory=list)  # other files whose fields were read
    # argparse takes a unique prefix of a long option unless the parser says allow_abbrev=False.
    abbreviations: bool = True
    deprecated: dict[str, Deprecation] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return not self.dynamic


def collect_flags(source: str, path: str, *, modules: ModuleSource | None = None) -> FlagSet:
    """Parse ``source`` (the text of ``path``) and return the flags it declares.

    A file that is not valid Python is bad input: ``SyncError`` with the file and line."""
    tree = _parse(source, path)
    collector = _Collector(tree, path, source, modules)
    try:
        collector.run()
    except RecursionError:
        raise SyncError("expressions nested too deeply to evaluate", path=path) from None
    return FlagSet(
        path=path,
        flags=frozenset(collector.flags),
        dynamic=sorted(set(collector.dynamic), key=_line_key),
        extra_sources=sorted(collector.read_modules),
        abbreviations=not _NO_ABBREV.search(source),
        deprecated={
            k: v for k, v in sorted(collector.deprecated.items()) if k not in collector.current
        },
    )


def _parse(source: str, path: str) -> ast.Module:
    try:
        return ast.parse(source, filename=path)
    except SyntaxError as exc:
        raise SyncError(
            f"not valid Python: {exc.msg}", path=path, line=exc.lineno, column=exc.offset
        ) from None
    except (ValueError, RecursionError) as exc:
        raise SyncError(f"cannot be parsed: {exc}", path=path) from None


def _line_key(note: str) -> tuple[int, str]:
    head = note.split(":", 1)[0].removeprefix("line ")
    return (int(head) if head.isdigit() else 0, note)


def _known(values: Values) -> bool:
    return isinstance(values, frozenset)


def _combine(parts: list[Values], join: Callable[[tuple[Any, ...]], Any]) -> Values:
    if any(p == UNKNOWN for p in parts):
        return UNKNOWN
    if any(p == PARAM for p in parts):
        return PARAM
    total = 1
    for p in parts:
        total *= max(len(p), 1)
    if total > MAX_COMBINATIONS:
        return UNKNOWN
    try:
        return frozenset(join(combo) for combo in itertools.product(*parts))
    except TypeError:  # e.g. str + int: not an option string the file builds
        return UNKNOWN


def _call_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


class _Module:
    """One parsed file: its functions, classes, constants and imported names."""

    def __init__(self, tree: ast.Module, path: str, source: str) -> None:
        self.tree = tree
        self.path = path
        self.lines = source.splitlines()
        self.functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.imports: dict[str, tuple[str, str]] = {}  # local name -> (module, name)
        self.constants: dict[str, Values] = {}
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


class _Collector:
    def __init__(
        self, tree: ast.Module, path: str, source: str, modules: ModuleSource | None
    ) -> None:
        self.main = _Module(tree, path, source)
        self.path = path
        self.modules = modules
        self.flags: set[str] = set()
        self.dynamic: list[str] = []
        self.read_modules: set[str] = set()
        self.current: set[str] = set()  # declared by a non-deprecated action somewhere
        self.deprecated: dict[str, Deprecation] = {}
        self._module_cache: dict[str, _Module | None] = {}
        self._called: set[str] = set()
        self._walked_calls: set[tuple[int, tuple[tuple[str, Any], ...]]] = set()
        self._depth = 0

    # ---- driver ---------------------------------------------------------------------------

    def run(self) -> None:
        module = self.main
        relevant = self._relevant()
        texts = [module.body_text(fn) for fn in relevant]
        for name in module.functions:
            call = re.compile(rf"\b{re.escape(name)}\s*\(")
            if any(call.search(text) for text in texts):
                self._called.add(name)
        module.constants = self._constants(module.tree.body, {})
        self._block(module.tree.body, dict(module.constants))
        for fn in relevant:
            self._function(fn, None)

    def _relevant(self) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        """The functions that can declare a flag: those whose text names ``add_argument``, the
        dataclass helper, or (transitively) such a function. A server_args.py is mostly
        validation code; its expressions are walked only where declarations can be."""
        module = self.main
        pending = [fn for defs in module.functions.values() for fn in defs]
        texts = {id(fn): module.body_text(fn) for fn in pending}
        tokens = {"add_argument", DATACLASS_HELPER}
        relevant: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        while True:
            pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(tokens))) + r")\b")
            found = [fn for fn in pending if pattern.search(texts[id(fn)])]
            if not found:
                return relevant
            relevant += found
            tokens.update(fn.name for fn in found)
            pending = [fn for fn in pending if fn not in found]

    def _constants(self, body: list[ast.stmt], env: dict[str, Values]) -> dict[str, Values]:
        """Names bound at module level to values the file pins down (in any order of use)."""
        out: dict[str, Values] = {}
        for stmt in body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if isinstance(target, ast.Name):
                    self._bind(out, target.id, self._eval(stmt.value, {**env, **out}))
            elif (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.value is not None
            ):
                self._bind(out, stmt.target.id, self._eval(stmt.value, {**env, **out}))
        return out

    @staticmethod
    def _bind(env: dict[str, Values], name: str, value: Values) -> None:
        # A name bound twice may hold either value; unknown wins over known.
        old = env.get(name)
        if old is None:
            env[name] = value
        elif _known(old) and _known(value):
            env[name] = old | value
        elif old != value:
            env[name] = UNKNOWN

    def _function(
        self, fn: ast.FunctionDef | ast.AsyncFunctionDef, bound: dict[str, Values] | None
    ) -> None:
        """Walk ``fn``'s body: standalone (``bound`` None: parameters from their constant
        defaults) or for one call site (``bound``: the call's argument values)."""
        env: dict[str, Values] = dict(self.main.constants)
        args = fn.args
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
        defaults += list(args.defaults)
        pairs = list(zip(positional, defaults, strict=True))
        pairs += list(zip(args.kwonlyargs, args.kw_defaults, strict=True))
        for arg, default in pairs:
            if bound is not None and arg.arg in bound:
                env[arg.arg] = bound[arg.arg]
            elif default is not None:
                env[arg.arg] = self._eval(default, {})
            else:
                env[arg.arg] = PARAM if bound is None else UNKNOWN
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                env[extra.arg] = PARAM if bound is None else UNKNOWN
        # Local constants first, so a name used before a later rebinding still resolves.
        env.update(self._constants(fn.body, env))
        self._block(fn.body, env, called=fn.name in self._called and bound is None)

    # ---- statements -----------------------------------------------------------------------

    def _block(self, body: list[ast.stmt], env: dict[str, Values], *, called: bool = False) -> None:
        for stmt in body:
            self._stmt(stmt, env, called)

    def _stmt(self, stmt: ast.stmt, env: dict[str, Values], called: bool) -> None:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return  # walked on their own
        if isinstance(stmt, ast.For | ast.AsyncFor):
            self._exprs(stmt.iter, env, called)
            self._loop(stmt, env, called)
            self._block(stmt.orelse, env, called=called)
            return
        if isinstance(stmt, ast.If | ast.While):
            self._exprs(stmt.test, env, called)
            self._block(stmt.body, env, called=called)
            self._block(stmt.orelse, env, called=called)
            return
        if isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                self._exprs(item.context_expr, env, called)
            self._block(stmt.body, env, called=called)
            return
        if isinstance(stmt, ast.Try):
            self._block(stmt.body, env, called=called)
            for handler in stmt.handlers:
                self._block(handler.body, env, called=called)
            self._block(stmt.orelse, env, called=called)
            self._block(stmt.finalbody, env, called=called)
            return
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                self._bind(env, target.id, self._eval(stmt.value, env))
        self._exprs(stmt, env, called)

    def _loop(self, stmt: ast.For | ast.AsyncFor, env: dict[str, Values], called: bool) -> None:
        items = self._iter_values(stmt.iter, env)
        if items is None:
            inner = dict(env)
            for name in _target_names(stmt.target):
                inner[name] = UNKNOWN
            self._block(stmt.body, inner, called=called)
            return
        for item in items:
            inner = dict(env)
            if not _bind_target(stmt.target, item, inner):
                for name in _target_names(stmt.target):
                    inner[name] = UNKNOWN
            self._block(stmt.body, inner, called=called)

    def _iter_values(self, node: ast.expr, env: dict[str, Values]) -> list[Any] | None:
        """The elements a loop runs over, each a constant or a tuple of constants; None when
        the file does not pin them down."""
        if isinstance(node, ast.Name | ast.Dict):
            values = self._eval(node, env)
            if _known(values) and len(values) == 1:
                only = next(iter(values))
                if isinstance(only, _Mapping):  # iterating a dict: its keys
                    return [key for key, _ in only]
                if isinstance(only, tuple):
                    return list(only)
            return None
        if isinstance(node, ast.Call) and len(node.args) <= 1 and not node.keywords:
            name = _call_name(node.func)
            if isinstance(node.func, ast.Name) and name in _ORDERING and len(node.args) == 1:
                return self._iter_values(node.args[0], env)
            if isinstance(node.func, ast.Attribute) and name in _DICT_VIEWS and not node.args:
                mapping = self._eval(node.func.value, env)
                if not (_known(mapping) and len(mapping) == 1):
                    return None
                only = next(iter(mapping))
                if not isinstance(only, _Mapping):
                    return None
                if name == "items":
                    return [tuple(pair) for pair in only]
                return [pair[0] if name == "keys" else pair[1] for pair in only]
            return None
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            out: list[Any] = []
            for elt in node.elts:
                value = self._literal(elt, env)
                if value is UNKNOWN:
                    return None
                out.extend(value if isinstance(value, _Many) else [value])
                if len(out) > MAX_LOOP_VALUES:
                    return None
            return out
        return None

    def _literal(self, node: ast.expr, env: dict[str, Values]) -> Any:
        """A loop element: a constant, a tuple of constants, or ``_Many`` alternatives."""
        if isinstance(node, ast.Tuple):
            parts = [self._eval(e, env) for e in node.elts]
            if not all(_known(p) and len(p) == 1 for p in parts):
                return UNKNOWN
            return tuple(next(iter(p)) for p in parts)
        values = self._eval(node, env)
        if not _known(values):
            return UNKNOWN
        return _Many(values) if len(values) != 1 else next(iter(values))

    # ---- expressions ----------------------------------------------------------------------

    def _exprs(self, node: ast.AST, env: dict[str, Values], called: bool) -> None:
        """Every declaration call inside ``node`` (not inside nested functions or lambdas)."""
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, ast.Call):
                self._call(current, env, called)
            for child in ast.iter_child_nodes(current):
                if not isinstance(
                    child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
                ):
                    stack.append(child)

    def _call(self, call: ast.Call, env: dict[str, Values], called: bool) -> None:
        name = _call_name(call.func)
        if name == "add_argument" and isinstance(call.func, ast.Attribute):
            self._add_argument(call, env, called)
        elif name == DATACLASS_HELPER:
            self._from_dataclass(call, env)
        elif name in self.main.functions and self._depth < MAX_CALL_DEPTH:
            self._helper_call(name, call, env)

    def _add_argument(self, call: ast.Call, env: dict[str, Values], called: bool) -> None:
        names: set[str] = set()
        for arg in call.args:
            if isinstance(arg, ast.Starred):
                items = self._iter_values(arg.value, env)
                values: Values = (
                    frozenset(i for i in items if isinstance(i, str)) if items else UNKNOWN
                )
                if items is None and self._depends_on_param(arg.value, env):
                    values = PARAM
            else:
                values = self._eval(arg, env)
            if values == PARAM and called:
                continue  # this helper's call sites declare it, with their arguments
            if not _known(values):
                self._note(call, "an option string the file does not pin down")
                continue
            names.update(v for v in values if isinstance(v, str) and v.startswith("-"))
        kwargs = {k.arg: k.value for k in call.keywords if k.arg}
        self._declare(names, kwargs.get("action"), kwargs, env)

    def _declare(
        self,
        names: set[str],
        action: ast.expr | None,
        kwargs: dict[str, ast.expr],
        env: dict[str, Values],
    ) -> None:
        """Record ``names`` as declared, with their negations (``BooleanOptionalAction``) or as
        deprecated (SGLang's ``Deprecated*`` actions, with the ``new_flag`` they point to)."""
        names = {n for n in names if n.startswith("-")}
        action_name = _call_name(action) if action is not None else None
        if action_name == "BooleanOptionalAction":
            names.update(f"--no-{n[2:]}" for n in list(names) if n.startswith("--"))
        self.flags.update(names)
        if not (action_name and action_name.startswith("Deprecated")):
            self.current.update(names)
            return
        new_flag = None
        if "new_flag" in kwargs:
            value = self._eval(kwargs["new_flag"], env)
            if _known(value) and len(value) == 1 and isinstance(next(iter(value)), str):
                new_flag = next(iter(value))
        stops = "error_message" in kwargs
        for name in names:
            self.deprecated[name] = Deprecation(action_name, new_flag, stops)

    def _depends_on_param(self, node: ast.expr, env: dict[str, Values]) -> bool:
        return any(isinstance(n, ast.Name) and env.get(n.id) == PARAM for n in ast.walk(node))

    def _helper_call(self, name: str, call: ast.Call, env: dict[str, Values]) -> None:
        for fn in self.main.functions[name]:
            bound: dict[str, Values] = {}
            params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
            args = list(call.args)
            # A method called as self.x(...) / cls.x(...) / Cls.x(...): skip the bound first
            # parameter when the call passes one argument fewer than the function takes.
            if isinstance(call.func, ast.Attribute) and params and params[0] in ("self", "cls"):
                params = params[1:]
            if any(isinstance(a, ast.Starred) for a in args):
                continue
            for param, arg in zip(params, args, strict=False):
                bound[param] = self._eval(arg, env)
            for kw in call.keywords:
                if kw.arg is not None:
                    bound[kw.arg] = self._eval(kw.value, env)
            key = (id(fn), tuple(sorted((k, _freeze(v)) for k, v in bound.items())))
            if key in self._walked_calls:
                continue
            self._walked_calls.add(key)
            self._depth += 1
            try:
                self._function(fn, bound)
            finally:
                self._depth -= 1

    def _eval(self, node: ast.expr, env: dict[str, Values]) -> Values:
        if isinstance(node, ast.Constant):
            return frozenset({node.value})
        if isinstance(node, ast.Name):
            return env.get(node.id, UNKNOWN)
        if isinstance(node, ast.JoinedStr):
            parts: list[Values] = []
            for value in node.values:
                if isinstance(value, ast.Constant):
                    parts.append(frozenset({str(value.value)}))
                elif (
                    isinstance(value, ast.FormattedValue)
                    and value.conversion == -1
                    and value.format_spec is None
                ):
                    inner = self._eval(value.value, env)
                    if _known(inner):
                        inner = frozenset(v if isinstance(v, str) else str(v) for v in inner)
                    parts.append(inner)
                else:
                    return UNKNOWN
            return _combine(parts, lambda combo: "".join(combo))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return _combine(
                [self._eval(node.left, env), self._eval(node.right, env)],
                lambda combo: combo[0] + combo[1],
            )
        if isinstance(node, ast.IfExp):
            test = self._eval(node.test, env)
            if _known(test) and len({bool(v) for v in test}) == 1:
                chosen = node.body if next(iter(test)) else node.orelse
                return self._eval(chosen, env)
            body, orelse = self._eval(node.body, env), self._eval(node.orelse, env)
            if _known(body) and _known(orelse):
                return body | orelse
            return UNKNOWN if UNKNOWN in (body, orelse) else PARAM
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self._eval(node.operand, env)
            return frozenset(not v for v in inner) if _known(inner) else inner
        if isinstance(node, ast.Dict):
            pairs = []
            for key, value in zip(node.keys, node.values, strict=True):
                if key is None:  # **other: not a literal mapping
                    return UNKNOWN
                k, v = self._literal(key, env), self._literal(value, env)
                if UNKNOWN in (k, v) or isinstance(k, _Many) or isinstance(v, _Many):
                    return UNKNOWN
                pairs.append((k, v))
            return frozenset({_Mapping(pairs)})
        if isinstance(node, ast.List | ast.Tuple):
            items = [self._literal(e, env) for e in node.elts]
            if any(i is UNKNOWN or isinstance(i, _Many) for i in items):
                return UNKNOWN
            return frozenset({tuple(items)})
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "replace"
            and len(node.args) == 2
            and not node.keywords
        ):
            old, new = self._eval(node.args[0], env), self._eval(node.args[1], env)
            target = self._eval(node.func.value, env)
            if not (_known(old) and _known(new) and len(old) == len(new) == 1):
                return UNKNOWN
            o, n = next(iter(old)), next(iter(new))
            if not (isinstance(o, str) and isinstance(n, str)):
                return UNKNOWN
            if _known(target):
                if not all(isinstance(t, str) for t in target):
                    return UNKNOWN
                return frozenset(t.replace(o, n) for t in target)
            return target
        return UNKNOWN

    def _note(self, node: ast.AST, why: str, path: str | None = None) -> None:
        where = f"line {getattr(node, 'lineno', 0)}"
        if path and path != self.path:
            where = f"{path}: {where}"
        self.dynamic.append(f"{where}: {why}")

    # ---- dataclass fields -----------------------------------------------------------------

    def _from_dataclass(self, call: ast.Call, env: dict[str, Values]) -> None:
        if len(call.args) < 2 or _dotted(call.args[1]) is None:
            self._note(call, f"{DATACLASS_HELPER} on a class the file does not name")
            return
        only: frozenset[str] | None = None
        for kw in call.keywords:
            if kw.arg == "fields":
                value = self._eval(kw.value, env)
                if _known(value) and len(value) == 1 and isinstance(next(iter(value)), tuple):
                    only = frozenset(next(iter(value)))
                elif not (_known(value) and value == frozenset({None})):
                    self._note(call, f"{DATACLASS_HELPER}(fields=...) the file does not pin down")
                    return
        self._class_flags(_dotted(call.args[1]) or "", self.main, call, only, seen=set())

    def _class_flags(
        self,
        name: str,
        module: _Module,
        site: ast.AST,
        only: frozenset[str] | None,
        seen: set[tuple[str, str]],
    ) -> None:
        found = self._find_class(name, module)
        if found is None:
            origin = module.imports.get(name)
            where = f"{origin[0]}.{origin[1]}" if origin else name
            self._note(site, f"fields of {where}, which could not be read", module.path)
            return
        owner, cls = found
        key = (owner.path, cls.name)
        if key in seen:
            return
        seen = seen | {key}
        for base in cls.bases:
            base_name = _dotted(base)
            if base_name is None or base_name.rsplit(".", 1)[-1] in ("object", "Struct"):
                continue  # Generic[T], calls and the like declare no fields
            self._class_flags(base_name, owner, cls, only, seen)
        for stmt in cls.body:
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and (only is None or stmt.target.id in only)
            ):
                self._field(stmt, stmt.target.id, owner)
        for stmt in owner.rebuilt.get(cls.name, []):
            # The fields are replaced at run time, typically merged from a list of namespace
            # classes. Their fields are read (the likely outcome), but what the merging code
            # does is not proven, so the file stays incomplete.
            refs = self._class_refs(stmt.value, owner, cls.name, 2)
            for ref in refs:
                self._class_flags(ref, owner, stmt, only, seen)
            read = f"; fields of {', '.join(refs)} read" if refs else ""
            self._note(stmt, f"{cls.name}'s fields are rebuilt at run time{read}", owner.path)

    def _class_refs(self, expr: ast.expr, module: _Module, itself: str, depth: int) -> list[str]:
        """Classes an expression passes around (not the functions it calls), following
        module-level names bound to lists or calls ``depth`` steps."""
        refs: list[str] = []
        stack: list[ast.AST] = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Call):
                # Reversed pushes keep the source order (refs are reported in it).
                stack.extend(reversed([*node.args, *(k.value for k in node.keywords)]))
                continue
            dotted = _dotted(node) if isinstance(node, ast.expr) else None
            if dotted is not None and dotted != itself:
                if self._find_class(dotted, module) is not None:
                    if dotted not in refs:
                        refs.append(dotted)
                    continue
                bound = module.assigned.get(dotted)
                if bound is not None and depth > 0:
                    for ref in self._class_refs(bound, module, itself, depth - 1):
                        if ref not in refs:
                            refs.append(ref)
                    continue
            stack.extend(reversed(list(ast.iter_child_nodes(node))))
        return refs

    def _find_class(self, name: str, module: _Module) -> tuple[_Module, ast.ClassDef] | None:
        """``Cls`` or ``imported_module.Cls`` (``name`` dotted as written in the file)."""
        if name in module.classes:
            return module, module.classes[name]
        head, _, rest = name.partition(".")
        origin = module.imports.get(head)
        if origin is None or self.modules is None:
            return None
        if not rest:  # from m import Cls
            dotted, cls_name = origin
        else:  # from a import m; m.Cls  /  import a.m as m; m.Cls  /  m.sub.Cls
            parts = [p for p in (origin[0], origin[1], *rest.split(".")[:-1]) if p]
            dotted, cls_name = ".".join(parts), rest.rsplit(".", 1)[-1]
        other = self._load(dotted)
        if other is None or cls_name not in other.classes:
            return None
        return other, other.classes[cls_name]

    def _load(self, dotted: str) -> _Module | None:
        if dotted not in self._module_cache:
            source = self.modules(dotted) if self.modules else None
            parsed = None
            if source is not None:
                tree = _parse(source, dotted)
                parsed = _Module(tree, dotted, source)
                parsed.constants = self._constants(tree.body, {})
                self.read_modules.add(dotted)
            self._module_cache[dotted] = parsed
        return self._module_cache[dotted]

    def _field(self, stmt: ast.AnnAssign, name: str, module: _Module) -> None:
        meta = _annotation_meta(stmt.annotation)
        if meta is None:
            return  # a plain field: the dataclass helper skips it, so does this
        if isinstance(meta, ast.Constant):
            self.flags.add("--" + name.replace("_", "-"))
            return
        kwargs = {kw.arg: kw.value for kw in meta.keywords if kw.arg}
        env = module.constants
        if "no_cli" in kwargs:
            no_cli = self._eval(kwargs["no_cli"], env)
            if not _known(no_cli):
                self._note(stmt, f"field {name}: no_cli the file does not pin down", module.path)
                return
            if all(no_cli):
                return
        names: set[str] = set()
        if "cli_name" in kwargs:
            cli = self._eval(kwargs["cli_name"], env)
            if not _known(cli):
                why = f"field {name}: a cli_name the file does not pin down"
                self._note(stmt, why, module.path)
            else:
                names.update(v for v in cli if isinstance(v, str))
        else:
            names.add("--" + name.replace("_", "-"))
        if "aliases" in kwargs:
            aliases = self._iter_values(kwargs["aliases"], env)
            if aliases is None and not (
                isinstance(kwargs["aliases"], ast.Constant) and kwargs["aliases"].value is None
            ):
                self._note(stmt, f"field {name}: aliases the file does not pin down", module.path)
            for alias in aliases or []:
                if isinstance(alias, str):
                    names.add(alias)
        extra: dict[str, ast.expr] = {}
        action_kwargs = kwargs.get("action_kwargs")
        if isinstance(action_kwargs, ast.Dict):
            for key, value in zip(action_kwargs.keys, action_kwargs.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    extra[key.value] = value
        self._declare(names, kwargs.get("action"), extra, env)


class _Mapping(tuple):  # type: ignore[type-arg]
    """A dict literal's ``(key, value)`` pairs, in order."""


_ORDERING = frozenset({"sorted", "list", "tuple", "reversed", "set", "frozenset"})
_DICT_VIEWS = frozenset({"items", "keys", "values"})


class _Many(frozenset):  # type: ignore[type-arg]
    """Alternatives for one loop element (an element that is a conditional expression)."""


def _dotted(node: ast.expr) -> str | None:
    """``a.b.C`` for a name or an attribute chain, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def _freeze(value: Values) -> Any:
    return tuple(sorted(map(repr, value))) if _known(value) else value


def _target_names(target: ast.expr) -> Iterable[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _bind_target(target: ast.expr, item: Any, env: dict[str, Values]) -> bool:
    if isinstance(target, ast.Name):
        env[target.id] = frozenset({item})
        return True
    if isinstance(target, ast.Tuple | ast.List) and isinstance(item, tuple):
        if len(target.elts) != len(item):
            return False
        return all(_bind_target(t, v, env) for t, v in zip(target.elts, item, strict=True))
    return False


def _annotation_meta(annotation: ast.expr) -> ast.Constant | ast.Call | None:
    """The CLI metadata of ``A[T, "help"]`` / ``A[T, Arg(...)]``: the string or the ``Arg``
    call; None for any other annotation (a string annotation is parsed first)."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    if not isinstance(annotation, ast.Subscript):
        return None
    if _call_name(annotation.value) not in ANNOTATED_NAMES:
        return None
    elts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else []
    for meta in elts[1:]:
        if isinstance(meta, ast.Call) and _call_name(meta.func) == "Arg":
            return meta
        if isinstance(meta, ast.Constant) and isinstance(meta.value, str):
            return meta
    return None
