"""The data module's shape as types (docs/cookbook-module-format.md): what
``validate.ModuleValidator.module`` has checked a module to be.

Every key is optional where the format makes it so; values the format leaves open (a point's
``patch``, a router's block entries, which are blocks or ``ref`` / ``from`` entries overlaid on
one) stay ``object``.
"""

from __future__ import annotations

from typing import Any, TypedDict

from syncer.model import Args, Block, Env


class RouterData(TypedDict, total=False):
    # a block, or an entry that materialises one (``ref`` / ``from``, ``drop``, ``diff``)
    blocks: list[dict[str, object]]
    install: list[str]
    files: list[str]  # ids into the module's ``files``


class HiCacheTier(TypedDict, total=False):
    args: Args
    donor: str
    donorHardware: str


class CellKv(TypedDict, total=False):
    available: list[str]
    unavailable: dict[str, str]
    hicache: HiCacheTier


class PointData(TypedDict, total=False):
    """A point: its concurrencies, measured tier, provenance (ids, or the full URLs older
    modules stored) and per-router patch."""

    concs: list[int]
    item: int
    kv: str
    override: str
    goldenAL: str
    sha: str
    recipe: str
    run: str
    job: str
    pr: str
    comment: str
    status: str
    date: str
    srtSlurm: str  # the srt-slurm commit a runner's branch was taken at (this tool's key)
    recipeUrl: str
    runUrl: str
    jobUrl: str
    prUrl: str
    useComment: str
    patch: dict[str, object]


class CellMeta(TypedDict, total=False):
    """A cell's own keys (``cells.CELL_META_KEYS``), before ``prov``, ``points``, ``routers``."""

    id: str
    hw: str
    ckpt: str
    label: str
    detail: str
    gpus: int
    configKey: str
    image: str
    imageStatus: str
    imageCommit: str | None
    submitted: str
    setup: list[dict[str, str]]  # {command | script, reason}
    disclosures: list[str]
    kv: CellKv


class CellData(CellMeta, total=False):
    prov: dict[str, str]
    points: list[PointData]
    routers: dict[str, RouterData]


class MooncakeTier(TypedDict, total=False):
    """``kvMooncake``: the Mooncake store tier's settings, borrowed from a donor."""

    donor: str
    donorHardware: str
    master: dict[str, Block]  # router -> the derived master block
    args: Args
    env: Env
    decode_env: Env


class ModuleData(TypedDict, total=False):
    model: str
    generatedOn: str
    source: dict[str, Any]  # repo, main, prs
    hardware: list[dict[str, str]]
    checkpoints: list[dict[str, str]]
    envs: list[Env]
    files: dict[str, dict[str, str]]  # file id -> {name, content}
    kvMooncake: MooncakeTier
    cells: list[CellData]
