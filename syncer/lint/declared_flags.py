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
  around. The rebuild is proven (the file stays complete) in the shapes SGLang uses: the class's
  annotations merged with the first result of a helper that loops over ``fields(...)`` of each
  class in a list of readable classes, and a struct rebuilt from ``C.__annotations__.items()``;
  any other rebuild marks the file as declaring dynamically (the merge itself is code);
- ``if`` statements whose test the file decides (a parameter's constant default, a module
  constant) take one branch; a test on a helper's parameter is decided at each call site.

SGLang's ``Deprecated*`` argparse actions (in ``add_argument`` or ``Arg(action=...)``) declare
their flags as deprecated, with the ``new_flag`` they name (``FlagSet.deprecated``); whether a
retired flag (``DeprecatedAction``) stops the server is read from that class's ``__call__``,
found in the file or the module it is imported from (``Deprecation.stops``); a parser
built with ``allow_abbrev=False`` anywhere in the file turns argparse's prefix matching off
(``FlagSet.abbreviations``).

Anything else that could declare a flag (an option string that depends on a value the file
does not pin down, a dataclass the file imports from a module that cannot be read) is recorded
in ``FlagSet.dynamic`` with its line: the set of flags is then a lower bound, and a flag missing
from it is only *possibly* undeclared (see ``syncer.lint.lint``).

This module walks the statements, functions and helper calls where declarations can be; the
parts live beside it: ``evaluate`` (values of expressions), ``pyfile`` (parsed files and the
classes they name), ``declarations`` (the record, and the ``Deprecated*`` actions),
``dataclass_fields`` and ``rebuilds`` (the dataclass helper's fields).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from syncer.errors import SyncError
from syncer.lint.dataclass_fields import DATACLASS_HELPER, DataclassFields
from syncer.lint.declarations import Declarations, Deprecation
from syncer.lint.evaluate import (
    MAX_LOOP_VALUES,
    PARAM,
    UNKNOWN,
    Values,
    bind,
    bind_target,
    constants,
    decided,
    depends_on_param,
    evaluate,
    freeze,
    iter_values,
    known,
    target_names,
)
from syncer.lint.pyfile import ModuleReader, ModuleSource, PyFile, call_name, parse_python

__all__ = ["Deprecation", "FlagSet", "ModuleSource", "collect_flags"]

# Helper calls are followed this deep, so a pathological file costs little.
MAX_CALL_DEPTH = 4
# Loop iterations unrolled over one file's walk: one loop over the longest literal list read
# (MAX_LOOP_VALUES). SGLang's own loops over literal lists run a few dozen times; nested
# literal loops multiply (three of 1,000 names never ended), so past this a loop's body is
# walked once with its target unknown, and a flag it declares is reported as one the file does
# not pin down.
MAX_UNROLLED = MAX_LOOP_VALUES

_NO_ABBREV = re.compile(r"\ballow_abbrev\s*=\s*False\b")

Function = ast.FunctionDef | ast.AsyncFunctionDef


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
    tree = parse_python(source, path)
    reader = ModuleReader(modules)
    declared = Declarations(path, reader)
    try:
        _Walker(PyFile(tree, path, source), reader, declared).run()
    except RecursionError:
        raise SyncError("expressions nested too deeply to evaluate", path=path) from None
    return FlagSet(
        path=path,
        flags=frozenset(declared.flags),
        dynamic=sorted(set(declared.dynamic), key=_line_key),
        extra_sources=sorted(reader.read),
        abbreviations=not _NO_ABBREV.search(source),
        deprecated=declared.only_deprecated(),
    )


def _line_key(note: str) -> tuple[int, str]:
    head = note.split(":", 1)[0].removeprefix("line ")
    return (int(head) if head.isdigit() else 0, note)


class _Walker:
    """Walks the file's module body and the functions that can declare a flag, evaluating
    names as it goes, and hands each declaration it meets to ``declared``."""

    def __init__(self, main: PyFile, reader: ModuleReader, declared: Declarations) -> None:
        self.main = main
        self.declared = declared
        self.dataclasses = DataclassFields(reader, declared)
        self._called: set[str] = set()  # functions a declaring function calls
        self._walked_calls: set[tuple[int, tuple[tuple[str, Any], ...]]] = set()
        self._depth = 0
        self._unrolled = 0  # loop iterations walked so far (MAX_UNROLLED)

    def run(self) -> None:
        module = self.main
        relevant = _declaring_functions(module)
        texts = [module.body_text(fn) for fn in relevant]
        for name in module.functions:
            call = re.compile(rf"\b{re.escape(name)}\s*\(")
            if any(call.search(text) for text in texts):
                self._called.add(name)
        self._block(module.tree.body, dict(module.constants))
        for fn in relevant:
            self._function(fn, None)

    def _function(self, fn: Function, bound: dict[str, Values] | None) -> None:
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
                env[arg.arg] = evaluate(default, {})
            else:
                env[arg.arg] = PARAM if bound is None else UNKNOWN
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                env[extra.arg] = PARAM if bound is None else UNKNOWN
        # Local constants first, so a name used before a later rebinding still resolves.
        env.update(constants(fn.body, env))
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
        if isinstance(stmt, ast.If):
            self._exprs(stmt.test, env, called)
            # A test the file decides (a parameter's constant default, a module constant)
            # takes one branch, as the f-string prefix a conditional expression picks does:
            # RouterArgs declares `--router-*` only flags under `if use_router_prefix:`,
            # which `launch_router` (prefix off) never reaches.
            taken = decided(stmt.test, env)
            if taken is None and called and evaluate(stmt.test, env) == PARAM:
                return  # a helper's parameter decides: each call site's walk takes a branch
            if taken is not False:
                self._block(stmt.body, env, called=called)
            if taken is not True:
                self._block(stmt.orelse, env, called=called)
            return
        if isinstance(stmt, ast.While):
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
                bind(env, target.id, evaluate(stmt.value, env))
        self._exprs(stmt, env, called)

    def _loop(self, stmt: ast.For | ast.AsyncFor, env: dict[str, Values], called: bool) -> None:
        items = iter_values(stmt.iter, env)
        if items is not None and self._unrolled + len(items) > MAX_UNROLLED:
            items = None
        if items is None:
            inner = dict(env)
            for name in target_names(stmt.target):
                inner[name] = UNKNOWN
            self._block(stmt.body, inner, called=called)
            return
        self._unrolled += len(items)
        for item in items:
            inner = dict(env)
            if not bind_target(stmt.target, item, inner):
                for name in target_names(stmt.target):
                    inner[name] = UNKNOWN
            self._block(stmt.body, inner, called=called)

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
        name = call_name(call.func)
        if name == "add_argument" and isinstance(call.func, ast.Attribute):
            self._add_argument(call, env, called)
        elif name == DATACLASS_HELPER:
            self.dataclasses.from_call(call, env, self.main)
        elif name in self.main.functions and self._depth < MAX_CALL_DEPTH:
            self._helper_call(name, call, env)

    def _add_argument(self, call: ast.Call, env: dict[str, Values], called: bool) -> None:
        names: set[str] = set()
        for arg in call.args:
            if isinstance(arg, ast.Starred):
                items = iter_values(arg.value, env)
                values: Values = (
                    frozenset(i for i in items if isinstance(i, str)) if items else UNKNOWN
                )
                if items is None and depends_on_param(arg.value, env):
                    values = PARAM
            else:
                values = evaluate(arg, env)
            if values == PARAM and called:
                continue  # this helper's call sites declare it, with their arguments
            if not known(values):
                self.declared.note(call, "an option string the file does not pin down")
                continue
            names.update(v for v in values if isinstance(v, str) and v.startswith("-"))
        kwargs = {k.arg: k.value for k in call.keywords if k.arg}
        self.declared.declare(names, kwargs.get("action"), kwargs, env, self.main)

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
                bound[param] = evaluate(arg, env)
            for kw in call.keywords:
                if kw.arg is not None:
                    bound[kw.arg] = evaluate(kw.value, env)
            key = (id(fn), tuple(sorted((k, freeze(v)) for k, v in bound.items())))
            if key in self._walked_calls:
                continue
            self._walked_calls.add(key)
            self._depth += 1
            try:
                self._function(fn, bound)
            finally:
                self._depth -= 1


def _declaring_functions(module: PyFile) -> list[Function]:
    """The functions that can declare a flag: those whose text names ``add_argument``, the
    dataclass helper, or (transitively) such a function. A server_args.py is mostly
    validation code; its expressions are walked only where declarations can be."""
    pending = [fn for defs in module.functions.values() for fn in defs]
    texts = {id(fn): module.body_text(fn) for fn in pending}
    tokens = {"add_argument", DATACLASS_HELPER}
    relevant: list[Function] = []
    while True:
        pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(tokens))) + r")\b")
        found = [fn for fn in pending if pattern.search(texts[id(fn)])]
        if not found:
            return relevant
        relevant += found
        tokens.update(fn.name for fn in found)
        pending = [fn for fn in pending if fn not in found]
