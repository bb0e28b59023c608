"""What an edited module lists beside its cells: the chips, checkpoints and files the cells
use. The published entries still used stay as published, in their order; an entry new cells
bring is added (a chip where the model's hardware order puts it); one no cell uses any more
leaves (:mod:`syncer.encoder.edit`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from syncer.errors import SyncError

Cells = list[dict[str, Any]]
# The precision tokens of a config key, for a checkpoint new cells bring to an older module.
_PRECISIONS = ("fp4", "nvfp4", "mxfp4", "fp8", "bf16", "fp16", "int4", "int8")


def hardware(
    old: Mapping[str, Any], model_chips: list[dict[str, Any]], cells: Cells, path: str
) -> tuple[Cells, list[str], list[str]]:
    """The published chips still used, in their order, a chip new cells bring where the
    model's order (``model_chips``) puts it; and the chips added and removed."""
    used = {c.get("hw") for c in cells}
    published = list(old.get("hardware") or [])
    out = [copy.deepcopy(h) for h in published if h.get("id") in used]
    removed = [str(h.get("id")) for h in published if h.get("id") not in used]
    added: list[str] = []
    order = [h["id"] for h in model_chips]
    for chip in model_chips:
        if chip["id"] not in used or any(h.get("id") == chip["id"] for h in out):
            continue
        rank = order.index(chip["id"])
        at = next(
            (i for i, h in enumerate(out) if h.get("id") in order and order.index(h["id"]) > rank),
            len(out),
        )
        out.insert(at, dict(chip))
        added.append(chip["id"])
    missing = used - {h.get("id") for h in out}
    if missing:
        raise SyncError(
            f"edit: hardware {sorted(map(str, missing))} is neither published nor a chip "
            "of the model",
            path=path,
        )
    return out, added, removed


def checkpoints(old: Mapping[str, Any], cells: Cells, *, legacy: bool) -> Cells:
    """The published checkpoints still used, then the new cells' (an older-format module's
    with the precision its config key names)."""
    used = [str(c.get("ckpt")) for c in cells if c.get("ckpt")]
    out = [copy.deepcopy(c) for c in old.get("checkpoints") or [] if c.get("id") in used]
    for ckpt in dict.fromkeys(used):
        if any(c.get("id") == ckpt for c in out):
            continue
        entry: dict[str, Any] = {"id": ckpt}
        if legacy:
            keys = [str(c.get("configKey", "")) for c in cells if c.get("ckpt") == ckpt]
            tokens = keys[0].split("-") if keys else []
            precision = next((p for p in _PRECISIONS if p in tokens), None)
            if precision is not None:
                entry["precision"] = precision
        out.append(entry)
    return out


def files(
    old: Mapping[str, Any], old_cells: Cells, cells: Cells, given: Mapping[str, Any]
) -> dict[str, Any]:
    """The published files still used (and any no cell used before), then the new cells'."""
    now, before = _used_by(cells), _used_by(old_cells)
    published = dict(old.get("files") or {})
    out = {k: copy.deepcopy(v) for k, v in published.items() if k in now or k not in before}
    for fid in sorted(now - set(out)):
        if fid not in given:
            raise SyncError(f"edit: file {fid} is named by a new cell but not given")
        out[fid] = copy.deepcopy(given[fid])
    return out


def _used_by(cells: Cells) -> set[str]:
    routers = (r for c in cells for r in (c.get("routers") or {}).values())
    return {str(f) for r in routers for f in r.get("files") or []}
