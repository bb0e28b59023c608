"""Compaction primitives of the encoder: block entries (``ref``/``from`` with overlay and
``diff``), point patches, and the emitted size that decides between candidates.

The encoder searches among many candidate encodings of each block, so it checks each candidate
on its own (the decoder's own ``overlay`` and ``apply_diff``) instead of decoding a whole
module each time. That is only a filter: every module is decoded again by the project's decoder
(``syncer.cookbook.decode``) and compared before anything is written.
"""

from __future__ import annotations

import json

from syncer.cookbook.jsvalues import clone
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


# A bound no size reaches: ``layout_size`` without one walks the whole value.
_NO_LIMIT = 1 << 62


def layout_size(value: object, depth: int, limit: int = _NO_LIMIT) -> int:
    """Characters the generator layout (1-space indent, scalar arrays on one line) spends on
    ``value`` written at nesting ``depth``, from its first character to its last.

    With ``limit``: the exact size when it is at most ``limit``, else some number above it (the
    walk stops there). The encoder compares every candidate with the best one so far, and most
    candidates are larger: the comparison ``layout_size(x, d, best - 1) < best`` decides as the
    full size would, without walking the rest of a candidate already past the best."""
    if isinstance(value, dict):
        if not value:
            return 2
        inner = depth + 1
        total = 2 + depth + 1 - 1  # "{" "\n" ... indent "}", no comma after the last member
        for key, item in value.items():
            total += inner + len(_scalar(key)) + 2 + 2  # ",\n"
            # Every later member only adds: an item past this budget puts the whole past limit.
            total += layout_size(item, inner, limit - total)
            if total > limit:
                return total
        return total
    if isinstance(value, list):
        if not value:
            return 2
        if all(not isinstance(v, (dict, list)) for v in value):
            return 2 + sum(len(_scalar(v)) for v in value) + 2 * (len(value) - 1)
        inner = depth + 1
        total = 2 + depth + 1 - 1
        for item in value:
            total += inner + 2
            total += layout_size(item, inner, limit - total)
            if total > limit:
                return total
        return total
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
    d = _args_env_diff(base, target)
    return d if d is not None and _decodes_to(base, {"diff": d}, target) else None


def _args_env_diff(base: Block, target: Block) -> dict[str, object] | None:
    """:func:`args_env_diff` before the check that it decodes to ``target``."""
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
    return d


def block_entry(
    source: Block,
    target: Block,
    *,
    prefix: dict[str, object],
    suffix: dict[str, object],
) -> dict[str, object] | None:
    """An entry ``{prefix, drop?, overlay..., diff?, suffix}`` (``prefix`` = ``{"from": i}``,
    ``suffix`` = ``{"ref": [...]}``) that materialises ``source`` into ``target``, or None.

    The entry's values are ``target``'s own objects, not copies (the encoder copies the entry
    it keeps): do not mutate them."""
    if source.get("kind") != target.get("kind"):
        return None
    drop = [k for k in source if k not in target and k not in ("args", "env")]
    overlay = {
        k: v
        for k, v in target.items()
        if k not in ("args", "env") and (k not in source or block_data(source)[k] != v)
    }
    if any(k in OVERLAY_SKIP for k in overlay):
        return None
    entry: dict[str, object] = dict(prefix)
    if drop:
        entry["drop"] = drop
    entry.update(overlay)
    # ``prefix`` and ``suffix`` hold only keys the overlay skips: ``source`` under ``drop`` and
    # the overlay is the entry's base whichever they are, and the entry with a diff decodes to
    # that base with the diff applied. So each candidate is materialised once: without a diff
    # when that already gives ``target``, else with the diff, which is the whole entry's decode.
    try:
        base = materialise_entry(source, entry)
    except SyncError:
        return None
    if not same(base, target):
        d = _args_env_diff(base, target)
        if d is None or not _decodes_to(base, {"diff": d}, target):
            return None
        entry["diff"] = d
    entry.update(suffix)
    return entry


def _decodes_to(source: Block, entry: dict[str, object], target: Block) -> bool:
    try:
        return same(materialise_entry(source, entry), target)
    except SyncError:
        return False


def patch_element(base: Block, target: Block, depth: int) -> object:
    """The cheapest patch list element turning point 0's ``base`` into ``target``."""
    if same(base, target):
        return None
    d = args_env_diff(base, target) if _only_args_env_differ(base, target) else None
    if d is not None:
        # The diff when it is no larger than the whole block, which is sized only as far as
        # that decides and copied only when it is the element kept.
        diff_size = layout_size(d, depth)
        if layout_size({"block": target}, depth, diff_size - 1) >= diff_size:
            return d
    return {"block": clone(target)}


def _only_args_env_differ(a: Block, b: Block) -> bool:
    keys = (set(a) | set(b)) - {"args", "env"}
    return all(a.get(k, _MISSING) == b.get(k, _MISSING) for k in keys)


_MISSING = object()


def router_patch(base: list[Block], target: list[Block], depth: int) -> object:
    """The patch of one router for a point (``None`` when the point equals point 0)."""
    if same_list(base, target):
        return None
    if len(base) != len(target):
        return {"replace": clone(target)}
    elements = [patch_element(b, t, depth + 1) for b, t in zip(base, target, strict=True)]
    # ``replace`` is sized in place and copied only when it is the patch kept.
    replace_size = layout_size({"replace": target}, depth)
    if layout_size(elements, depth, replace_size) <= replace_size:
        return elements
    return {"replace": clone(target)}
