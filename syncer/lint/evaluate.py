"""Static evaluation of the expressions a source file builds its option strings from.

An expression's value is the frozenset of constants it can take, or one of two markers: the
file does not pin it down (``UNKNOWN``), or it is a function parameter known only at a call site
(``PARAM``). An environment maps names to such values. Nothing is imported or run: only
constants, f-strings, ``+``, ``not``, ``str.replace`` with constant arguments, conditional
expressions, and literal lists, tuples and dicts are understood.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Iterable
from typing import Any

UNKNOWN = "<unknown>"  # the file does not pin the value down
PARAM = "<param>"  # a parameter without a constant default: known only at a call site
Values = Any  # frozenset[object] | str (one of the markers)

# Bounds on the static evaluation, so a pathological file costs little and never recurses deep:
# alternatives per value, loop elements, the length of one string (an option string is a few
# dozen characters; a chain of `.replace` doubling one grew to 4.3 GB) and how deep one
# expression nests. A value past a bound is UNKNOWN: the flag is reported as unresolved.
MAX_COMBINATIONS = 256
MAX_LOOP_VALUES = 4096
MAX_STRING_CHARS = 1024
MAX_EXPRESSION_DEPTH = 64
_depth = 0

_ORDERING = frozenset({"sorted", "list", "tuple", "reversed", "set", "frozenset"})
_DICT_VIEWS = frozenset({"items", "keys", "values"})


class _Mapping(tuple[tuple[object, object], ...]):
    """A dict literal's ``(key, value)`` pairs, in order."""


class _Many(frozenset[object]):
    """Alternatives for one loop element (an element that is a conditional expression)."""


def known(values: Values) -> bool:
    return isinstance(values, frozenset)


def evaluate(node: ast.expr, env: dict[str, Values]) -> Values:
    """The values ``node`` can take with the names of ``env`` bound (``UNKNOWN`` past the
    bounds above)."""
    global _depth
    if _depth >= MAX_EXPRESSION_DEPTH:
        return UNKNOWN
    _depth += 1
    try:
        return _bounded(_evaluate(node, env))
    finally:
        _depth -= 1


def _bounded(values: Values) -> Values:
    if known(values) and any(isinstance(v, str) and len(v) > MAX_STRING_CHARS for v in values):
        return UNKNOWN
    return values


def _evaluate(node: ast.expr, env: dict[str, Values]) -> Values:
    if isinstance(node, ast.Constant):
        return frozenset({node.value})
    if isinstance(node, ast.Name):
        return env.get(node.id, UNKNOWN)
    if isinstance(node, ast.JoinedStr):
        return _fstring(node, env)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _combine(
            [evaluate(node.left, env), evaluate(node.right, env)],
            lambda combo: combo[0] + combo[1],
        )
    if isinstance(node, ast.IfExp):
        test = evaluate(node.test, env)
        if known(test) and len({bool(v) for v in test}) == 1:
            chosen = node.body if next(iter(test)) else node.orelse
            return evaluate(chosen, env)
        body, orelse = evaluate(node.body, env), evaluate(node.orelse, env)
        if known(body) and known(orelse):
            return body | orelse
        return UNKNOWN if UNKNOWN in (body, orelse) else PARAM
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = evaluate(node.operand, env)
        return frozenset(not v for v in inner) if known(inner) else inner
    if isinstance(node, ast.Dict):
        pairs = []
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:  # **other: not a literal mapping
                return UNKNOWN
            k, v = _literal(key, env), _literal(value, env)
            if UNKNOWN in (k, v) or isinstance(k, _Many) or isinstance(v, _Many):
                return UNKNOWN
            pairs.append((k, v))
        return frozenset({_Mapping(pairs)})
    if isinstance(node, ast.List | ast.Tuple):
        items = [_literal(e, env) for e in node.elts]
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
        return _replace(node.func.value, node.args[0], node.args[1], env)
    return UNKNOWN


def _fstring(node: ast.JoinedStr, env: dict[str, Values]) -> Values:
    parts: list[Values] = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(frozenset({str(value.value)}))
        elif (
            isinstance(value, ast.FormattedValue)
            and value.conversion == -1
            and value.format_spec is None
        ):
            inner = evaluate(value.value, env)
            if known(inner):
                inner = frozenset(v if isinstance(v, str) else str(v) for v in inner)
            parts.append(inner)
        else:
            return UNKNOWN  # `!r` or a format spec: the text is not evaluated
    return _combine(parts, lambda combo: "".join(combo))


def _replace(
    string: ast.expr, old_node: ast.expr, new_node: ast.expr, env: dict[str, Values]
) -> Values:
    """``string.replace(old, new)`` with a constant ``old`` and ``new``."""
    old, new = evaluate(old_node, env), evaluate(new_node, env)
    target = evaluate(string, env)
    if not (known(old) and known(new) and len(old) == len(new) == 1):
        return UNKNOWN
    o, n = next(iter(old)), next(iter(new))
    if not (isinstance(o, str) and isinstance(n, str)):
        return UNKNOWN
    if known(target):
        if not all(isinstance(t, str) for t in target):
            return UNKNOWN
        # The result's length is known before it is built: never build one past the bound.
        grow = len(n) - len(o)
        if any(
            len(t) + (t.count(o) if o else len(t) + 1) * grow > MAX_STRING_CHARS for t in target
        ):
            return UNKNOWN
        return frozenset(t.replace(o, n) for t in target)
    return target  # still unknown, or still a parameter the call site pins down


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


def _literal(node: ast.expr, env: dict[str, Values]) -> Any:
    """A loop element: a constant, a tuple of constants, or ``_Many`` alternatives."""
    if isinstance(node, ast.Tuple):
        parts = [evaluate(e, env) for e in node.elts]
        if not all(known(p) and len(p) == 1 for p in parts):
            return UNKNOWN
        return tuple(next(iter(p)) for p in parts)
    values = evaluate(node, env)
    if not known(values):
        return UNKNOWN
    return _Many(values) if len(values) != 1 else next(iter(values))


def iter_values(node: ast.expr, env: dict[str, Values]) -> list[Any] | None:
    """The elements a loop runs over, each a constant or a tuple of constants; None when the
    file does not pin them down."""
    if isinstance(node, ast.Name | ast.Dict):
        values = evaluate(node, env)
        if known(values) and len(values) == 1:
            only = next(iter(values))
            if isinstance(only, _Mapping):  # iterating a dict: its keys
                return [key for key, _ in only]
            if isinstance(only, tuple):
                return list(only)
        return None
    if isinstance(node, ast.Call) and len(node.args) <= 1 and not node.keywords:
        func = node.func
        if isinstance(func, ast.Name) and func.id in _ORDERING and len(node.args) == 1:
            return iter_values(node.args[0], env)
        if isinstance(func, ast.Attribute) and func.attr in _DICT_VIEWS and not node.args:
            mapping = evaluate(func.value, env)
            if not (known(mapping) and len(mapping) == 1):
                return None
            only = next(iter(mapping))
            if not isinstance(only, _Mapping):
                return None
            if func.attr == "items":
                return [tuple(pair) for pair in only]
            return [pair[0] if func.attr == "keys" else pair[1] for pair in only]
        return None
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        out: list[Any] = []
        for elt in node.elts:
            value = _literal(elt, env)
            if value is UNKNOWN:
                return None
            out.extend(value if isinstance(value, _Many) else [value])
            if len(out) > MAX_LOOP_VALUES:
                return None
        return out
    return None


def decided(test: ast.expr, env: dict[str, Values]) -> bool | None:
    """The truth of an ``if`` test when every value it can take agrees, else None."""
    values = evaluate(test, env)
    if not known(values) or not values:
        return None
    truths = {bool(v) for v in values}
    return next(iter(truths)) if len(truths) == 1 else None


def constants(body: list[ast.stmt], env: dict[str, Values]) -> dict[str, Values]:
    """Names ``body`` binds to values the file pins down (in any order of use)."""
    out: dict[str, Values] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                bind(out, target.id, evaluate(stmt.value, {**env, **out}))
        elif (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and stmt.value is not None
        ):
            bind(out, stmt.target.id, evaluate(stmt.value, {**env, **out}))
    return out


def bind(env: dict[str, Values], name: str, value: Values) -> None:
    # A name bound twice may hold either value; unknown wins over known.
    old = env.get(name)
    if old is None:
        env[name] = value
    elif known(old) and known(value):
        env[name] = old | value
    elif old != value:
        env[name] = UNKNOWN


def bind_target(target: ast.expr, item: Any, env: dict[str, Values]) -> bool:
    """Bind a loop target (a name or a tuple of names) to one element of ``iter_values``;
    False when the element does not unpack into it."""
    if isinstance(target, ast.Name):
        env[target.id] = frozenset({item})
        return True
    if isinstance(target, ast.Tuple | ast.List) and isinstance(item, tuple):
        if len(target.elts) != len(item):
            return False
        return all(bind_target(t, v, env) for t, v in zip(target.elts, item, strict=True))
    return False


def target_names(target: ast.expr) -> Iterable[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def depends_on_param(node: ast.expr, env: dict[str, Values]) -> bool:
    return any(isinstance(n, ast.Name) and env.get(n.id) == PARAM for n in ast.walk(node))


def freeze(value: Values) -> Any:
    """A hashable form of ``value`` (a key for the call sites already walked)."""
    return tuple(sorted(map(repr, value))) if known(value) else value
