"""Dataclasses whose fields are rebuilt at module level after the class body
(``C.__annotations__ = {...}``, ``C = msgspec.defstruct(...)``): the classes a rebuild passes
around, and the two shapes SGLang uses in which the rebuilt fields are proven to be those read."""

from __future__ import annotations

import ast

from syncer.lint.pyfile import ModuleReader, PyFile, call_name, dotted


def class_refs(
    reader: ModuleReader, expr: ast.expr, module: PyFile, itself: str, depth: int
) -> list[str]:
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
        name = dotted(node) if isinstance(node, ast.expr) else None
        if name is not None and name != itself:
            if reader.find_class(name, module) is not None:
                if name not in refs:
                    refs.append(name)
                continue
            bound = module.assigned.get(name)
            if bound is not None and depth > 0:
                for ref in class_refs(reader, bound, module, itself, depth - 1):
                    if ref not in refs:
                        refs.append(ref)
                continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return refs


def merge_is_proven(reader: ModuleReader, stmt: ast.Assign, module: PyFile, cls: str) -> bool:
    """Whether a module-level rebuild of ``cls`` adds exactly the fields already read.

    - ``C.__annotations__ = {**collected, **C.__annotations__}``: every ``**`` entry is the
      class's own annotations or the first value a field-collecting helper (below) returns
      for one list of classes that can all be read;
    - ``C = <m>.defstruct("C", [... for n, a in C.__annotations__.items()], ...)`` or
      ``list(C.__annotations__.items())``: the struct gets the class's own annotations."""
    own = f"{cls}.__annotations__"
    value = stmt.value
    target = stmt.targets[0] if len(stmt.targets) == 1 else None
    if isinstance(target, ast.Attribute) and isinstance(value, ast.Dict):
        if not value.keys or any(k is not None for k in value.keys):
            return False
        return all(dotted(v) == own or _collected_fields(reader, v, module) for v in value.values)
    if isinstance(target, ast.Name) and isinstance(value, ast.Call):
        if call_name(value.func) != "defstruct" or len(value.args) < 2:
            return False
        fields = value.args[1]
        if isinstance(fields, ast.Call) and call_name(fields.func) == "list":
            source = fields.args[0] if len(fields.args) == 1 else None
        elif isinstance(fields, ast.ListComp) and len(fields.generators) == 1:
            source = fields.generators[0].iter
        else:
            return False
        return (
            isinstance(source, ast.Call)
            and not source.args
            and isinstance(source.func, ast.Attribute)
            and source.func.attr == "items"
            and dotted(source.func.value) == own
        )
    return False


def _collected_fields(reader: ModuleReader, node: ast.expr, module: PyFile) -> bool:
    """``node`` names the first value bound by ``x, ... = helper(CLASSES)`` (or ``x =``),
    where every element of ``CLASSES`` (a list, or a name bound to one) is a class that can
    be read and ``helper`` iterates the fields of each class it is given."""
    if not isinstance(node, ast.Name):
        return False
    call = None
    for stmt in module.tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target = stmt.targets[0]
        first = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else target
        if isinstance(first, ast.Name) and first.id == node.id:
            if call is not None:
                return False  # bound twice: which binding the merge sees is not proven
            call = stmt.value
    if not (isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords):
        return False
    classes = call.args[0]
    if isinstance(classes, ast.Name):
        classes = module.assigned.get(classes.id, classes)
    if not isinstance(classes, ast.List | ast.Tuple) or not classes.elts:
        return False
    for elt in classes.elts:
        name = dotted(elt)
        if name is None or reader.find_class(name, module) is None:
            return False
    helper = dotted(call.func)
    return helper is not None and _iterates_fields(reader, helper, module)


def _iterates_fields(reader: ModuleReader, name: str, module: PyFile) -> bool:
    """A function (in this file or imported from a readable one) whose first parameter is
    looped over, with a nested loop over ``fields(...)`` of the loop variable: how SGLang's
    namespace helper gathers the annotations of the classes it is handed."""
    fn = None
    if name in module.functions:
        fn = module.functions[name][0]
    elif name in module.imports:
        module_name, attr = module.imports[name]
        other = reader.load(module_name) if attr else None
        if other is not None and attr in other.functions:
            fn = other.functions[attr][0]
    if fn is None or not fn.args.args:
        return False
    param = fn.args.args[0].arg
    for loop in ast.walk(fn):
        if not (
            isinstance(loop, ast.For)
            and isinstance(loop.iter, ast.Name)
            and loop.iter.id == param
            and isinstance(loop.target, ast.Name)
        ):
            continue
        var = loop.target.id
        for inner in ast.walk(loop):
            if (
                isinstance(inner, ast.For)
                and isinstance(inner.iter, ast.Call)
                and call_name(inner.iter.func) == "fields"
                and len(inner.iter.args) == 1
                and isinstance(inner.iter.args[0], ast.Name)
                and inner.iter.args[0].id == var
            ):
                return True
    return False
