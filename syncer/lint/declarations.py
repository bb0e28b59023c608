"""What a file declares, as the collector finds it: flags, the ones declared only through
SGLang's ``Deprecated*`` argparse actions (with the flag to use instead, and whether a retired
flag stops the server, read from the action class's ``__call__`` at the same commit), and the
sites whose declarations cannot be proven."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from syncer.lint.evaluate import UNKNOWN, Values, evaluate, known
from syncer.lint.pyfile import ModuleReader, PyFile, call_name, dotted


@dataclass(frozen=True)
class Deprecation:
    """A flag declared only through one of SGLang's ``Deprecated*`` argparse actions."""

    action: str  # e.g. DeprecatedAction, DeprecatedAliasStoreAction, DeprecatedStoreTrueAction
    new_flag: str | None  # the flag to use instead, when the declaration names it
    # Whether giving the flag stops the server: True / False as the action's code (read at the
    # same commit) decides, None when that code could not be read.
    stops: bool | None

    def describe(self) -> str:
        use = f"; use {self.new_flag}" if self.new_flag else ""
        if self.action == "DeprecatedAction":
            # SGLang's DeprecatedAction raised on every use at first, then only warned, then
            # stopped only when declared with an error message (see RETIRED_* below).
            when = {
                True: "stops the server",
                False: "accepted with a warning, ignored",
                None: "may stop the server (its action could not be read)",
            }[self.stops]
            return f"retired ({self.action}): {when}{use}"
        return f"deprecated ({self.action}): accepted with a warning{use}"


# What a retired-flag action's ``__call__`` does, as read from its class.
RETIRED_ALWAYS = "always"  # raises (or calls parser.error) unconditionally
RETIRED_NEVER = "never"  # neither raises nor calls parser.error: warns and goes on
RETIRED_IF_MESSAGE = "if-error-message"  # stops only under `if self.error_message ...`


class Declarations:
    """The flags declared in the file at ``path`` (and the modules ``reader`` reads for it)."""

    def __init__(self, path: str, reader: ModuleReader) -> None:
        self.path = path
        self.reader = reader
        self.flags: set[str] = set()
        self.dynamic: list[str] = []  # "line N: why", one per site that cannot be proven
        self.current: set[str] = set()  # declared by a non-deprecated action somewhere
        self.deprecated: dict[str, Deprecation] = {}
        self._behaviours: dict[tuple[str, str], str | None] = {}

    def note(self, node: ast.AST, why: str, path: str | None = None) -> None:
        """Record a site that could declare flags the file does not pin down."""
        where = f"line {getattr(node, 'lineno', 0)}"
        if path and path != self.path:
            where = f"{path}: {where}"
        self.dynamic.append(f"{where}: {why}")

    def declare(
        self,
        names: set[str],
        action: ast.expr | None,
        kwargs: dict[str, ast.expr],
        env: dict[str, Values],
        module: PyFile,
    ) -> None:
        """Record ``names`` as declared, with their negations (``BooleanOptionalAction``) or as
        deprecated (SGLang's ``Deprecated*`` actions, with the ``new_flag`` they point to).
        ``module`` is the file the declaration is in (where its action's name is looked up)."""
        names = {n for n in names if n.startswith("-")}
        action_name = call_name(action) if action is not None else None
        if action_name == "BooleanOptionalAction":
            names.update(f"--no-{n[2:]}" for n in list(names) if n.startswith("--"))
        self.flags.update(names)
        if not (action_name and action_name.startswith("Deprecated")):
            self.current.update(names)
            return
        new_flag = None
        if "new_flag" in kwargs:
            value = evaluate(kwargs["new_flag"], env)
            if known(value) and len(value) == 1 and isinstance(next(iter(value)), str):
                new_flag = next(iter(value))
        stops: bool | None = "error_message" in kwargs
        if action_name == "DeprecatedAction":
            stops = self._retired_stops(action, kwargs, env, module)
        for name in names:
            self.deprecated[name] = Deprecation(action_name, new_flag, stops)

    def only_deprecated(self) -> dict[str, Deprecation]:
        """The deprecated flags no current action declares too, sorted."""
        return {k: v for k, v in sorted(self.deprecated.items()) if k not in self.current}

    def _retired_stops(
        self,
        action: ast.expr | None,
        kwargs: dict[str, ast.expr],
        env: dict[str, Values],
        module: PyFile,
    ) -> bool | None:
        """Whether a flag declared with a retired-flag action stops the server, from what the
        action class (in this file or a module it imports) does when the flag is given."""
        message = kwargs.get("error_message")
        has_message: bool | None = message is not None
        if message is not None:
            value = evaluate(message, env)
            if known(value):
                has_message = any(v is not None for v in value)
            else:
                has_message = None if value == UNKNOWN else True
        name = dotted(action) if action is not None else None
        behaviour = self._action_behaviour(name, module) if name else None
        if behaviour == RETIRED_ALWAYS:
            return True
        if behaviour == RETIRED_NEVER:
            return False
        if behaviour == RETIRED_IF_MESSAGE:
            return has_message
        # The action's code could not be read: an error message is what every version that
        # takes one stops on; without one it depends on the version.
        return True if has_message else None

    def _action_behaviour(self, name: str, module: PyFile) -> str | None:
        found = self.reader.find_class(name, module)
        if found is None:
            return None
        owner, cls = found
        key = (owner.path, cls.name)
        if key not in self._behaviours:
            call = next(
                (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__call__"),
                None,
            )
            self._behaviours[key] = _retired_behaviour(call) if call else None
        return self._behaviours[key]


def _retired_behaviour(call: ast.FunctionDef) -> str | None:
    """What a retired-flag action's ``__call__`` does: stop always, never, or only when the
    action carries an error message; None for any other shape (a raise the test of which is
    not the message, one inside a loop, a ``try``...)."""
    stopping = [n for n in ast.walk(call) if isinstance(n, ast.stmt) and _stops(n)]
    if not stopping:
        return RETIRED_NEVER
    if any(_stops(stmt) for stmt in call.body):
        return RETIRED_ALWAYS
    for stmt in call.body:
        if (
            isinstance(stmt, ast.If)
            and not stmt.orelse
            and all(_stops(s) for s in stmt.body)
            and _tests_message(stmt.test)
            and len(stopping) == len(stmt.body)
        ):
            return RETIRED_IF_MESSAGE
    return None


def _stops(stmt: ast.stmt) -> bool:
    """``raise ...`` or ``<parser>.error(...)`` (argparse's exit on bad input)."""
    if isinstance(stmt, ast.Raise):
        return True
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and call_name(stmt.value.func) == "error"
    )


def _tests_message(test: ast.expr) -> bool:
    """``self.error_message`` or ``self.error_message is not None``: true when one is given."""
    if isinstance(test, ast.Compare):
        if not (
            len(test.ops) == 1
            and isinstance(test.ops[0], ast.IsNot)
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
        ):
            return False
        test = test.left
    return isinstance(test, ast.Attribute) and test.attr == "error_message"
