"""srt-slurm's recipe override bundles, expanded the way srt-slurm expands them.

A bundle is a ``base`` recipe with ``override_*`` sections (one variant each) and
``zip_override_*`` groups (list-valued leaves zipped into one variant per index); each variant
is the base with its section deep-merged over it (mappings recurse, lists and scalars replace,
``null`` deletes). The lane's shared block of the InferenceX fragment era is merged under the
fragment the same way (``compose_shared``). docs/srt-slurm-rules.md, Recipes.
"""

from __future__ import annotations

import copy
import fnmatch
import re
from typing import Any

from syncer.errors import SyncError
from syncer.inferencex import yamlsafe
from syncer.wording import closest, js


def deep_merge(base: object, override: object) -> Any:
    """srt-slurm's override merge: mappings recurse, ``None`` deletes the key, lists and
    scalars replace. Base keys keep their order, new keys are appended. Never mutates either
    side (aliased YAML blocks are shared objects)."""
    if not isinstance(base, dict) or not isinstance(override, dict):
        return copy.deepcopy(override)
    out: dict[object, object] = {}
    for key, value in base.items():
        if key in override:
            new = override[key]
            if new is None:
                continue
            out[key] = (
                deep_merge(value, new)
                if isinstance(value, dict) and isinstance(new, dict)
                else copy.deepcopy(new)
            )
        else:
            out[key] = copy.deepcopy(value)
    for key, new in override.items():
        if key not in base and new is not None:
            out[key] = copy.deepcopy(new)
    return out


def _drop_nulls(value: object) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def is_bundle(doc: object) -> bool:
    return isinstance(doc, dict) and "base" in doc


def variant_names(doc: dict[str, object]) -> list[str]:
    """Selectable names of an override bundle: override keys, then zip members."""
    names = sorted(k for k in doc if isinstance(k, str) and k.startswith("override_"))
    for group in sorted(k for k in doc if isinstance(k, str) and k.startswith("zip_override_")):
        n = _zip_length(doc[group], group)
        names.extend(f"{group}[{i}]" for i in range(n))
    return names


def _zip_leaves(
    value: object, prefix: tuple[object, ...] = ()
) -> list[tuple[tuple[object, ...], object]]:
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            out.extend(_zip_leaves(v, (*prefix, k)))
        return out
    return [(prefix, value)]


def _zip_length(section: object, group: str) -> int:
    if not isinstance(section, dict):
        raise SyncError(f"{group} must be a mapping")
    lengths = {len(v) for _, v in _zip_leaves(section) if isinstance(v, list) and len(v) != 1}
    if len(lengths) > 1:
        raise SyncError(f"{group}: list-valued leaves have different lengths {sorted(lengths)}")
    return lengths.pop() if lengths else 1


def _zip_member(section: dict[str, object], index: int) -> dict[str, object]:
    def pick(value: object) -> Any:
        if isinstance(value, dict):
            return {k: pick(v) for k, v in value.items()}
        if isinstance(value, list):
            return value[0] if len(value) == 1 else value[index]
        return value

    member: dict[str, object] = pick(section)
    return member


def expand_variants(
    doc: object, selector: str | None = None, *, path: str = "<recipe>"
) -> dict[str, dict[str, object]]:
    """Variants of a recipe document as ``{selector name: merged recipe}``.

    A plain recipe (no ``base``) is its own single variant ``""``. A bundle expands per
    srt-slurm: no selector = every ``override_*`` then every zip member (base excluded);
    ``base``; ``override_x``; ``zip_override_g`` (the group); ``zip_override_g[i]``; or an
    fnmatch pattern. An unknown selector lists the variants.
    """
    if not isinstance(doc, dict):
        raise SyncError("a recipe must be a mapping", path=path)
    if not is_bundle(doc):
        if selector not in (None, "", "base"):
            raise SyncError(
                f"selector {js(selector)} given but the recipe has no base/override_* variants",
                path=path,
            )
        return {"": doc}
    bundle = _Bundle(doc, path)
    return {name: bundle.variant(name) for name in bundle.selected(selector)}


class _Bundle:
    """An override bundle (``base`` + ``override_*`` / ``zip_override_*``) and its variants."""

    def __init__(self, doc: dict[str, Any], path: str) -> None:
        base = doc["base"]
        if not isinstance(base, dict):
            raise SyncError(
                "base must be a mapping", path=path, line=yamlsafe.key_line(path, ["base"])
            )
        self.doc, self.base, self.path = doc, base, path
        self.top_schema = doc.get("schema")

    def selected(self, selector: str | None) -> list[str]:
        """The variant names ``selector`` names, in srt-slurm's order."""
        doc = self.doc
        if selector in (None, ""):
            return variant_names(doc)
        if selector == "base":
            return ["base"]
        if selector.startswith("zip_override_") and "[" not in selector:
            if selector not in doc:
                raise self.unknown(selector)
            return [f"{selector}[{i}]" for i in range(_zip_length(doc[selector], selector))]
        if any(ch in selector for ch in "*?"):
            matched = [
                n
                for n in variant_names(doc)
                if fnmatch.fnmatchcase(n.split("[")[0], selector)
                or fnmatch.fnmatchcase(n, selector)
            ]
            if not matched:
                raise self.unknown(selector)
            return matched
        return [selector]

    def variant(self, name: str) -> dict[str, object]:
        """One variant: ``base``, a zip member ``zip_override_g[i]`` or an ``override_x``,
        merged over the base."""
        base = self.base
        if name == "base":
            return self.finish(copy.deepcopy(base), "base", {"name": base.get("name")})
        m = re.fullmatch(r"(zip_override_[^\[]+)\[(\d+)\]", name)
        if m:
            group, index = m.group(1), int(m.group(2))
            section = self.doc.get(group)
            if section is None or index >= _zip_length(section, group):
                raise self.unknown(name)
            member = _drop_nulls(_zip_member(section, index))
            merged = _drop_nulls(deep_merge(base, member))
            return self.finish(merged, f"{group[len('zip_override_') :]}_{index}", member)
        section = self.doc.get(name)
        if not name.startswith("override_") or not isinstance(section, dict):
            raise self.unknown(name)
        return self.finish(deep_merge(base, section), name[len("override_") :], section)

    def finish(
        self, merged: dict[str, object], suffix: str, section: dict[str, object]
    ) -> dict[str, object]:
        if self.top_schema is not None and "schema" not in merged:
            merged = {"schema": self.top_schema, **merged}
        if "name" not in section and isinstance(self.base.get("name"), str):
            merged["name"] = f"{self.base['name']}_{suffix}"
        return merged

    def unknown(self, name: str) -> SyncError:
        names = variant_names(self.doc)
        close = closest(name, names, n=3)
        hint = f"; closest: {', '.join(close)}" if close else ""
        return SyncError(
            f"unknown recipe selector {js(name)}{hint}; variants: {', '.join(names) or '(none)'}",
            path=self.path,
        )


def compose_shared(shared: dict[str, object] | None, doc: object) -> object:
    """Merge the lane's shared block *under* a fragment (under ``base`` for bundles)."""
    if not shared or not isinstance(doc, dict):
        return doc
    if is_bundle(doc):
        out = dict(doc)
        out["base"] = deep_merge(shared, doc["base"])
        return out
    return deep_merge(shared, doc)
