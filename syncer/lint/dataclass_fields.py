"""The flags ``add_cli_args_from_dataclass(parser, Cls)`` declares: one per field of ``Cls``
annotated ``A[T, "help"]`` / ``Annotated[T, Arg(...)]``, read from the class, its base classes
and the classes a module-level rebuild of its fields passes around, in this file or in the
modules it imports from."""

from __future__ import annotations

import ast

from syncer.lint.declarations import Declarations
from syncer.lint.evaluate import Values, evaluate, iter_values, known
from syncer.lint.pyfile import ModuleReader, PyFile, call_name, dotted
from syncer.lint.rebuilds import class_refs, merge_is_proven

DATACLASS_HELPER = "add_cli_args_from_dataclass"
ANNOTATED_NAMES = frozenset({"A", "Annotated"})


class DataclassFields:
    """Declares the fields of the classes handed to the dataclass helper into ``declared``."""

    def __init__(self, reader: ModuleReader, declared: Declarations) -> None:
        self.reader = reader
        self.declared = declared

    def from_call(self, call: ast.Call, env: dict[str, Values], module: PyFile) -> None:
        """``add_cli_args_from_dataclass(parser, Cls[, fields=...])`` called in ``module``."""
        if len(call.args) < 2 or dotted(call.args[1]) is None:
            self.declared.note(call, f"{DATACLASS_HELPER} on a class the file does not name")
            return
        only: frozenset[str] | None = None
        for kw in call.keywords:
            if kw.arg == "fields":
                value = evaluate(kw.value, env)
                if known(value) and len(value) == 1 and isinstance(next(iter(value)), tuple):
                    only = frozenset(next(iter(value)))
                elif not (known(value) and value == frozenset({None})):
                    why = f"{DATACLASS_HELPER}(fields=...) the file does not pin down"
                    self.declared.note(call, why)
                    return
        self._class_flags(dotted(call.args[1]) or "", module, call, only, seen=set())

    def _class_flags(
        self,
        name: str,
        module: PyFile,
        site: ast.AST,
        only: frozenset[str] | None,
        seen: set[tuple[str, str]],
    ) -> None:
        found = self.reader.find_class(name, module)
        if found is None:
            origin = module.imports.get(name)
            where = f"{origin[0]}.{origin[1]}" if origin else name
            self.declared.note(site, f"fields of {where}, which could not be read", module.path)
            return
        owner, cls = found
        key = (owner.path, cls.name)
        if key in seen:
            return
        seen = seen | {key}
        for base in cls.bases:
            base_name = dotted(base)
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
            # classes. Their fields are read (the likely outcome). The file stays incomplete
            # unless the statement is one of the two shapes whose outcome is known: a merge of
            # the class's own annotations with those a field-collecting helper returns for a
            # list of readable classes, or a struct rebuilt from its own annotations.
            refs = class_refs(self.reader, stmt.value, owner, cls.name, 2)
            for ref in refs:
                self._class_flags(ref, owner, stmt, only, seen)
            if merge_is_proven(self.reader, stmt, owner, cls.name):
                continue
            read = f"; fields of {', '.join(refs)} read" if refs else ""
            why = f"{cls.name}'s fields are rebuilt at run time{read}"
            self.declared.note(stmt, why, owner.path)

    def _field(self, stmt: ast.AnnAssign, name: str, module: PyFile) -> None:
        meta = _annotation_meta(stmt.annotation)
        if meta is None:
            return  # a plain field: the dataclass helper skips it, so does this
        if isinstance(meta, ast.Constant):
            self.declared.flags.add("--" + name.replace("_", "-"))
            return
        kwargs = {kw.arg: kw.value for kw in meta.keywords if kw.arg}
        env = module.constants
        note = self.declared.note
        if "no_cli" in kwargs:
            no_cli = evaluate(kwargs["no_cli"], env)
            if not known(no_cli):
                note(stmt, f"field {name}: no_cli the file does not pin down", module.path)
                return
            if all(no_cli):
                return
        names: set[str] = set()
        if "cli_name" in kwargs:
            cli = evaluate(kwargs["cli_name"], env)
            if not known(cli):
                note(stmt, f"field {name}: a cli_name the file does not pin down", module.path)
            else:
                names.update(v for v in cli if isinstance(v, str))
        else:
            names.add("--" + name.replace("_", "-"))
        if "aliases" in kwargs:
            aliases = iter_values(kwargs["aliases"], env)
            if aliases is None and not (
                isinstance(kwargs["aliases"], ast.Constant) and kwargs["aliases"].value is None
            ):
                note(stmt, f"field {name}: aliases the file does not pin down", module.path)
            for alias in aliases or []:
                if isinstance(alias, str):
                    names.add(alias)
        extra: dict[str, ast.expr] = {}
        action_kwargs = kwargs.get("action_kwargs")
        if isinstance(action_kwargs, ast.Dict):
            for key, value in zip(action_kwargs.keys, action_kwargs.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    extra[key.value] = value
        self.declared.declare(names, kwargs.get("action"), extra, env, module)


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
    if call_name(annotation.value) not in ANNOTATED_NAMES:
        return None
    elts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else []
    for meta in elts[1:]:
        if isinstance(meta, ast.Call) and call_name(meta.func) == "Arg":
            return meta
        if isinstance(meta, ast.Constant) and isinstance(meta.value, str):
            return meta
    return None
