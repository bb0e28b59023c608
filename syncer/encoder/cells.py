"""The encoder's input: a model's cells with every point's full blocks, no compaction yet.

Two paths build it and meet here without a converter: ``syncer.encoder.rendered_cells`` (from
rendered InferenceX configs and their pins) and ``cells_from_module`` (from an existing data
module, decoded completely: ``sync reencode`` and the bot, which keeps the other configs' cells
of a published module and replaces one config's cells).

A point holds, per router, the blocks at its *measured* KV tier; derived tiers are not stored,
the decoder computes them from the cell's ``kv`` and the module's ``kvMooncake``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any, cast

from syncer import links
from syncer.cookbook.decode import Decoder
from syncer.cookbook.module_data import CellMeta, MooncakeTier
from syncer.errors import SyncError
from syncer.inferencex.cookbook_layout import NEWEST_LAYOUT, layout_of, layout_order
from syncer.model import Block, Selection
from syncer.syncconfig import ConfigSpec, ModelSpec
from syncer.wording import js, kind

# Provenance keys in module key order (cell ``prov`` and per-point overrides). ``srtSlurm``:
# the srt-slurm commit applied when the key's runner cloned a branch (resolved at the run's
# date, ``releases.at_date``); a tag or the submodule pin needs none.
PROV_KEYS = ("sha", "recipe", "run", "job", "pr", "comment", "status", "date", "srtSlurm")
# Cell keys before ``prov``/``points``/``routers``, in module key order.
CELL_META_KEYS = (
    "id",
    "hw",
    "ckpt",
    "label",
    "detail",
    "gpus",
    "configKey",
    "image",
    "imageStatus",
    "imageCommit",
    "submitted",
    "setup",
    "disclosures",
    "kv",
)


@dataclass
class PointSpec:
    concs: list[int]
    item: int
    kv: str
    blocks: dict[str, list[Block]]  # router -> blocks at the measured tier
    override: str | None = None
    golden_al: str | None = None
    prov: dict[str, str] = field(default_factory=dict)  # sha, recipe, run, job, pr, comment, ...


@dataclass
class RouterSpec:
    install: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


@dataclass
class CellSpec:
    meta: CellMeta  # CELL_META_KEYS
    routers: dict[str, RouterSpec]  # submitted router first
    points: list[PointSpec]

    @property
    def id(self) -> str:
        return str(self.meta["id"])

    @property
    def submitted(self) -> str:
        return str(self.meta["submitted"])

    @property
    def config_key(self) -> str:
        return str(self.meta["configKey"])


@dataclass
class ModuleSpec:
    model: str
    generated_on: str
    source: dict[str, object]  # repo, main, prs
    hardware: list[dict[str, str]]
    checkpoints: list[dict[str, str]]
    kv_mooncake: MooncakeTier | None
    files: dict[str, dict[str, str]]
    cells: list[CellSpec]


def module_layout(decoder: Decoder) -> str:
    """The block order of the generator version that wrote a module, read from its own cells
    (``cookbook_layout.layout_of``); the newest when no cell tells the orders apart, as for a
    module that does not exist yet."""
    deployments = (  # only the kinds are read: the decoder's own blocks, not copies
        decoder.shown_blocks(Selection(ci, 0, router, None))
        for ci, cell in enumerate(decoder.data.get("cells") or [])
        for router in cell.get("routers") or {}
    )
    return layout_of(deployments) or NEWEST_LAYOUT


def laid_out(cells: list[CellSpec], layout: str) -> list[CellSpec]:
    """``cells`` with every point's blocks in ``layout``'s order, so that cells written into a
    module stand as its own cells do (rendered cells come in the newest order)."""
    if layout == NEWEST_LAYOUT:
        return cells
    return [
        replace(
            cell,
            points=[
                replace(p, blocks={r: layout_order(b, layout) for r, b in p.blocks.items()})
                for p in cell.points
            ],
        )
        for cell in cells
    ]


# The full-URL provenance keys of old-format points (read by ``point_prov_from_urls``).
_URL_KEYS = ("recipeUrl", "runUrl", "jobUrl", "prUrl", "useComment")


def _strip(url: str, prefix: str, where: str) -> str:
    if not url.startswith(prefix) or len(url) == len(prefix):
        raise SyncError(f"{where}: {js(url)} is not under {js(prefix)}; cannot express it as an id")
    return url[len(prefix) :]


def point_prov_from_urls(point: dict[str, Any], repo: str, where: str) -> dict[str, str]:
    """Provenance ids of an old-format point (full URLs) in the newest format's terms."""
    out: dict[str, str] = {}
    for key in ("sha", "pr", "status", "date"):
        if point.get(key) is not None:
            out[key] = str(point[key])
    if point.get("recipeUrl"):
        rest = _strip(point["recipeUrl"], f"{repo}{links.BLOB}", where)
        sha, _, recipe = rest.partition("/")
        if not recipe:
            raise SyncError(f"{where}: recipeUrl {js(point['recipeUrl'])} has no path")
        if "sha" in out and out["sha"] != sha:
            raise SyncError(
                f"{where}: recipeUrl commit {sha} differs from the point's sha {out['sha']}; "
                "the newest format links the recipe at the point's sha"
            )
        out["sha"] = sha
        out["recipe"] = recipe
    if point.get("runUrl"):
        out["run"] = _strip(point["runUrl"], f"{repo}{links.RUNS}", where)
    if point.get("jobUrl"):
        out["job"] = _strip(point["jobUrl"], f"{repo}{links.RUNS}", where)
    if point.get("prUrl"):
        pr = _strip(point["prUrl"], f"{repo}{links.PULL}", where)
        if "pr" in out and out["pr"] != pr:
            raise SyncError(f"{where}: prUrl names PR {pr}, the point says {out['pr']}")
        out["pr"] = pr
    if point.get("useComment"):
        rest = _strip(point["useComment"], f"{repo}{links.PULL}", where)
        pr, sep, comment = rest.partition(links.COMMENT)
        if not sep or not comment or pr != out.get("pr"):
            raise SyncError(
                f"{where}: useComment {js(point['useComment'])} is not a comment of the PR"
            )
        out["comment"] = comment
    return {k: out[k] for k in PROV_KEYS if k in out}


_POINT_KEYS = ("concs", "item", "override", "goldenAL", "kv", "patch")


def _need(obj: dict[str, object], key: str, where: str) -> Any:
    if key not in obj:
        raise SyncError(f"{where}: missing {js(key)}; cannot re-encode")
    if obj[key] is None:
        raise SyncError(f"{where}: {js(key)} is null; cannot re-encode")
    return obj[key]


def _need_text(obj: dict[str, object], key: str, where: str) -> str:
    value = _need(obj, key, where)
    if not isinstance(value, str):
        raise SyncError(f"{where}: {js(key)} must be a string, got {kind(value)}; cannot re-encode")
    return value


def cells_from_module(
    data: dict[str, Any], decoder: Decoder, path: str = "<module>", *, shared: bool = False
) -> ModuleSpec:
    """Decode a data module of any version completely into the encoder's input.

    ``decoder`` is a ``syncer.cookbook.decode.Decoder`` over ``data``; its ``blocks_for`` gives
    every point's blocks at the measured tier, so the result no longer depends on how the old
    module was compacted. ``shared``: the points' blocks are the decoder's own objects
    (``shown_blocks``), not copies, for a reader that never changes a block (the audit reads
    the spec and replaces whole router lists); most of the cost is those copies.
    """
    blocks_of = decoder.shown_blocks if shared else decoder.blocks_for
    repo = str(data.get("source", {}).get("repo", "")).rstrip("/")
    cells: list[CellSpec] = []
    for ci, cell in enumerate(data.get("cells", [])):
        where = f"{path}: cell {ci} ({cell.get('id')})"
        for key in ("id", "hw"):  # the cell's name and its hardware chip (CellSpec, _check_spec)
            _need_text(cell, key, where)
        meta = cast(CellMeta, {k: copy.deepcopy(cell[k]) for k in CELL_META_KEYS if k in cell})
        unknown = set(cell) - set(CELL_META_KEYS) - {"prov", "points", "routers"}
        if unknown:
            raise SyncError(f"{where}: unknown cell keys {sorted(unknown)}; cannot re-encode")
        if "kv" not in meta:
            # The oldest modules had no KV dimension: every point is the GPU-only tier.
            meta["kv"] = {"available": ["none"], "unavailable": {}}
        routers = _routers(cell, where)
        base_prov = {k: str(v) for k, v in (cell.get("prov") or {}).items()}
        points: list[PointSpec] = []
        for pi, point in enumerate(_need(cell, "points", where)):
            pwhere = f"{where} point {pi}"
            prov = _point_prov(cell, point, base_prov, repo, pwhere)
            blocks = {r: blocks_of(Selection(ci, pi, r, None)) for r in cell["routers"]}
            points.append(
                PointSpec(
                    concs=list(_need(point, "concs", pwhere)),
                    item=_need(point, "item", pwhere),
                    kv=point.get("kv") or "none",
                    blocks=blocks,
                    override=point.get("override"),
                    golden_al=point.get("goldenAL"),
                    prov={k: prov[k] for k in PROV_KEYS if k in prov},
                )
            )
        cells.append(CellSpec(meta=meta, routers=routers, points=points))
    checkpoints = [{"id": c["id"]} for c in data.get("checkpoints", [])]
    known = {"model", "generatedOn", "source", "hardware", "checkpoints", "envs", "kvMooncake"}
    unknown = set(data) - known - {"files", "cells"}
    if unknown:
        raise SyncError(f"{path}: unknown top-level keys {sorted(unknown)}; cannot re-encode")
    return ModuleSpec(
        model=_need(data, "model", path),
        generated_on=_need(data, "generatedOn", path),
        source=copy.deepcopy(_need(data, "source", path)),
        hardware=copy.deepcopy(_need(data, "hardware", path)),
        checkpoints=checkpoints,
        kv_mooncake=copy.deepcopy(data.get("kvMooncake")),
        files=copy.deepcopy(data.get("files", {})),
        cells=cells,
    )


def _routers(cell: dict[str, Any], where: str) -> dict[str, RouterSpec]:
    routers: dict[str, RouterSpec] = {}
    for name, r in _need(cell, "routers", where).items():
        # Router ``notes`` (oldest format) are computed from the blocks by later decoders.
        bad = set(r) - {"install", "files", "blocks", "notes"}
        if bad:
            raise SyncError(f"{where} router {name}: unknown keys {sorted(bad)}")
        routers[name] = RouterSpec(
            install=list(r.get("install") or []), files=list(r.get("files") or [])
        )
    return routers


def _point_prov(
    cell: dict[str, Any], point: dict[str, Any], base_prov: dict[str, str], repo: str, where: str
) -> dict[str, str]:
    """A point's provenance: the cell's ``prov`` with the point's own keys over it, or (older
    modules) read from the point's URLs."""
    if "prov" in cell:
        extra = {k: v for k, v in point.items() if k not in _POINT_KEYS}
        bad = set(extra) - set(PROV_KEYS)
        if bad:
            raise SyncError(f"{where}: unknown point keys {sorted(bad)}; cannot re-encode")
        return {**base_prov, **{k: str(v) for k, v in extra.items()}}
    bad = set(point) - set(_POINT_KEYS) - set(_URL_KEYS) - {"sha", "pr", "status", "date"}
    if bad:
        raise SyncError(f"{where}: unknown point keys {sorted(bad)}; cannot re-encode")
    return point_prov_from_urls(point, repo, where)


def config_hardware(cfg: ConfigSpec, model: ModelSpec) -> str:
    """The hardware id a config's cells show: its ``hw``, else the first of ``model``'s
    hardware ids that is a part of its key."""
    if cfg.hw:
        return cfg.hw
    tokens = cfg.key.split("-")
    for hw in model.hardware:
        if hw["id"] in tokens:
            return hw["id"]
    raise SyncError(
        f"config {cfg.key}: no hardware id of model {model.path} appears in the key; set 'hw'",
        line=cfg.line,
    )
