"""Compaction primitives of the encoder: block entries (``ref``/``from`` with overlay and
``diff``), point patches, and the emitted size that decides between candidates.

The encoder searches among many candidate encodings of each block, so it checks each candidate
on its own (the decoder's own ``overlay`` and ``apply_diff``) instead of decoding a whole
module each time. That is only a filter: every module is decoded again by the project's decoder
(``syncer.cookbook.decode``) and compared before anything is written.
"""

from __future__ import annotations

import copy
import json

from syncer.cookbook.materialise import OVERLAY_SKIP
from syncer.cookbook.materialise import overlay as materialise_entry
from syncer.errors import SyncError
from syncer.model import Block, block_data

# --- what the decoder makes of an entry -------------------------------------------------------


def canon(block: Block) -> dict[str, object]:
    """A block in a form whose equality is the decoder's output equality: key order of the
    block does not change a printed command, env order does (env lines print in dict order)."""
    return {
        k: (list(v.items()) if k == "env" and isinstance(v, dict) else v) for k, v in block.items()
    }


def same(a: Block, b: Block) -> bool:
    return canon(a) == canon(b)


def same_list(a: list[Block], b: list[Block]) -> bool:
    return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))


# --- emitted size ----------------------------------------------------------------------------


# What ``json.dumps(text, ensure_ascii=False)`` does for a string, without building an encoder
# each time: the size model asks it for every scalar of every candidate (most are strings).
_encode_string = json.encoder.encode_basestring


def _scalar(value: object) -> str:
    if isinstance(value, str):
        return _encode_string(value)
    return json.dumps(value, ensure_ascii=False)


def layout_size(value: object, depth: int) -> int:
    """Characters the generator layout (1-space indent, scalar arrays on one line) spends on
    ``value`` written at nesting ``depth``, from its first character to its last."""
    if isinstance(value, dict):
        if not value:
            return 2
        inner = depth + 1
        total = 2 + depth + 1  # "{" "\n" ... indent "}"
        for key, item in value.items():
            total += inner + len(_scalar(key)) + 2 + layout_size(item, inner) + 2  # ",\n"
        return total - 1  # no comma after the last member
    if isinstance(value, list):
        if not value:
            return 2
        if all(not isinstance(v, (dict, list)) for v in value):
            return 2 + sum(len(_scalar(v)) for v in value) + 2 * (len(value) - 1)
        inner = depth + 1
        total = 2 + depth + 1
        for item in value:
            total += inner + layout_size(item, inner) + 2
        return total - 1
    return len(_scalar(value))


def member_size(key: str, value: object, depth: int) -> int:
    """Size of one object member line ``"key": value,\n`` at ``depth``."""
    return depth + len(_scalar(key)) + 2 + layout_size(value, depth) + 2


# --- building entries ------------------------------------------------------------------------


def _occurrences(args: list[list[str]]) -> dict[str, list[list[str]]]:
    occ: dict[str, list[list[str]]] = {}
    for arg in args:
        occ.setdefault(arg[0], []).append(list(arg[1:]))
    return occ


def args_env_diff(base: Block, target: Block) -> dict[str, object] | None:
    """The ``diff`` turning ``base`` into ``target`` (args and env only), or None when no diff
    can (repeated flags with different values, args out of order for a non-worker...)."""
    worker = base.get("kind") == "worker"
    b_occ = _occurrences(base.get("args") or [])
    t_occ = _occurrences(target.get("args") or [])
    replaced: dict[str, list[str]] = {}
    added: dict[str, list[str]] = {}
    for flag, values in t_occ.items():
        if flag in b_occ:
            if b_occ[flag] == values:
                continue
            if len(values) != len(b_occ[flag]) or any(v != values[0] for v in values):
                return None
            replaced[flag] = values[0]
        else:
            if len(values) != 1:
                return None
            added[flag] = values[0]
    removed = [flag for flag in b_occ if flag not in t_occ]
    if worker:
        sets = {f: ({**replaced, **added})[f] for f in sorted({**replaced, **added})}
    else:
        # Non-worker args keep their order: additions are appended in diff key order.
        sets = {f: replaced[f] for f in sorted(replaced)}
        sets.update(added)
    dargs: dict[str, object] = {**sets, **dict.fromkeys(removed)}
    b_env = base.get("env") or {}
    t_env = target.get("env") or {}
    env_sets = {k: t_env[k] for k in sorted(t_env) if b_env.get(k) != t_env[k] or k not in b_env}
    denv: dict[str, object] = {**env_sets, **{k: None for k in b_env if k not in t_env}}
    d: dict[str, object] = {}
    if dargs:
        d["args"] = dargs
    if denv:
        d["env"] = denv
    return d if _decodes_to(base, {"diff": d}, target) else None


def block_entry(
    source: Block,
    target: Block,
    *,
    prefix: dict[str, object],
    suffix: dict[str, object],
) -> dict[str, object] | None:
    """An entry ``{prefix, drop?, overlay..., diff?, suffix}`` (``prefix`` = ``{"from": i}``,
    ``suffix`` = ``{"ref": [...]}``) that materialises ``source`` into ``target``, or None."""
    if source.get("kind") != target.get("kind"):
        return None
    drop = [k for k in source if k not in target and k not in ("args", "env")]
    overlay = {
        k: copy.deepcopy(v)
        for k, v in target.items()
        if k not in ("args", "env") and (k not in source or block_data(source)[k] != v)
    }
    if any(k in OVERLAY_SKIP for k in overlay):
        return None
    entry: dict[str, object] = dict(prefix)
    if drop:
        entry["drop"] = drop
    entry.update(overlay)
    try:
        base = materialise_entry(source, {**entry, **suffix})
    except SyncError:
        return None
    if not same(base, target):
        d = args_env_diff(base, target)
        if d is None:
            return None
        entry["diff"] = d
    entry.update(suffix)
    return entry if _decodes_to(source, entry, target) else None


def _decodes_to(source: Block, entry: dict[str, object], target: Block) -> bool:
    try:
        return same(materialise_entry(source, entry), target)
    except SyncError:
        return False


def patch_element(base: Block, target: Block, depth: int) -> object:
    """The cheapest patch list element turning point 0's ``base`` into ``target``."""
    if same(base, target):
        return None
    full = {"block": copy.deepcopy(target)}
    d = args_env_diff(base, target) if _only_args_env_differ(base, target) else None
    if d is not None and layout_size(d, depth) <= layout_size(full, depth):
        return d
    return full


def _only_args_env_differ(a: Block, b: Block) -> bool:
    keys = (set(a) | set(b)) - {"args", "env"}
    return all(a.get(k, _MISSING) == b.get(k, _MISSING) for k in keys)


_MISSING = object()


def router_patch(base: list[Block], target: list[Block], depth: int) -> object:
    """The patch of one router for a point (``None`` when the point equals point 0)."""
    if same_list(base, target):
        return None
    replace = {"replace": copy.deepcopy(target)}
    if len(base) != len(target):
        return replace
    elements = [patch_element(b, t, depth + 1) for b, t in zip(base, target, strict=True)]
    if layout_size(elements, depth) <= layout_size(replace, depth):
        return elements
    return replace
