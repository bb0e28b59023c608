"""The KV tiers a model's cells offer, borrowed from the donor configs ``sync.yaml`` names.

A cell shows every tier (none, HiCache, Mooncake store) its page can derive: HiCache from a
donor's (or its own) measured HiCache worker flags, Mooncake from a donor point measured with a
Mooncake store (its masters for both routers, the linker flags, the store env). A script-launched
donor cannot be rendered: the existing module's borrowed settings are kept. An edit of a published
module (``published``) takes a donor whose own inputs did not change from the settings the module
already borrowed from it, without rendering it: only the configs of the event are rendered.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from syncer.cookbook.kvtier import CACHE_OWNING_ROLES, KV_LINKER_FLAGS, is_kv_flag
from syncer.cookbook.module_data import CellKv, HiCacheTier, MooncakeTier
from syncer.encoder.cells import (
    ModuleSpec,
    config_hardware,
)
from syncer.errors import SyncError
from syncer.inferencex.render import RenderedConfig
from syncer.inferencex.scripts import ScriptLaunchedError
from syncer.model import Block, PointStatus
from syncer.syncconfig import ConfigSpec, ModelSpec, Pin, SyncConfig


@dataclass
class Donors:
    hicache: HiCacheTier | None = None
    mooncake: MooncakeTier | None = None  # the module's kvMooncake
    # config key -> the HiCache settings of its own donor (sync.yaml's per-config hicache_donor)
    per_config: dict[str, HiCacheTier] = field(default_factory=dict)

    def hicache_for(self, key: str) -> HiCacheTier | None:
        return self.per_config.get(key) or self.hicache


def hicache_from(rendered: RenderedConfig, key: str, hw: str) -> HiCacheTier | None:
    # The flags and roles are the decoder's: it strips and re-adds exactly these for a tier.
    for point in rendered.points:
        if point.kv != "hicache":
            continue
        blocks = point.cookbook[point.submitted]
        for block in blocks:
            if block.get("kind") == "worker" and block.get("role") in CACHE_OWNING_ROLES:
                args = [
                    list(a)
                    for a in block.get("args") or []
                    if is_kv_flag(a[0]) and a[0] not in KV_LINKER_FLAGS
                ]
                if args:
                    return {"args": args, "donor": key, "donorHardware": hw}
    return None


def _mooncake_env(block: Block) -> dict[str, str]:
    env = block.get("env") or {}
    return {k: env[k] for k in sorted(env) if k.startswith(("MC_", "MOONCAKE_"))}


def mooncake_from(rendered: RenderedConfig, key: str, hw: str) -> MooncakeTier | None:
    for point in rendered.points:
        if point.kv != "mooncake":
            continue
        masters: dict[str, Block] = {}
        for router, blocks in point.cookbook.items():
            for block in blocks:
                if block.get("kind") == "mooncake-master":
                    masters[router] = block
        blocks = point.cookbook[point.submitted]
        owner = next(
            (
                b
                for b in blocks
                if b.get("kind") == "worker" and b.get("role") in CACHE_OWNING_ROLES
            ),
            None,
        )
        decode = next(
            (b for b in blocks if b.get("kind") == "worker" and b.get("role") == "decode"), None
        )
        if owner is None or set(masters) != {"sglang", "dynamo"}:
            continue
        return {
            "donor": key,
            "donorHardware": hw,
            "master": {"dynamo": masters["dynamo"], "sglang": masters["sglang"]},
            "args": [list(a) for a in owner.get("args") or [] if a[0] in KV_LINKER_FLAGS],
            "env": _mooncake_env(owner),
            "decode_env": _mooncake_env(decode) if decode else {},
        }
    return None


def cell_kv(
    cfg: ConfigSpec, donors: Donors, measured: list[str], own_hicache: HiCacheTier | None
) -> CellKv:
    available = ["none"]
    unavailable: dict[str, str] = {}
    hicache = donors.hicache_for(cfg.key) or own_hicache
    if hicache is not None or "hicache" in measured:
        available.append("hicache")
    else:
        unavailable["hicache"] = "no measured HiCache configuration to borrow settings from"
    if (donors.mooncake is not None and not cfg.mooncake_unavailable) or "mooncake" in measured:
        available.append("mooncake")
    else:
        unavailable["mooncake"] = cfg.mooncake_unavailable or "no Mooncake store donor configured"
    out: CellKv = {"available": available, "unavailable": unavailable}
    if "hicache" in available and hicache is not None:
        out["hicache"] = hicache
    return out


def find_donors(
    model: ModelSpec,
    config: SyncConfig,
    get: Callable[[str], Any],
    old: Callable[[], ModuleSpec | None] = lambda: None,
    *,
    published: Callable[[str], bool] = lambda _donor: False,
    configs: Collection[ConfigSpec] | None = None,
) -> Donors:
    """The KV-tier settings borrowed from the donor configs named in ``sync.yaml``, for the
    cells of ``configs`` (default: every config of ``model``). A donor for which
    ``published(donor)`` holds (an edit: its own inputs did not change in this event) lends
    the settings the existing module (``old()``, read only then) already borrowed from it,
    unrendered; so does a script-launched donor, which cannot be rendered. A donor the module
    borrowed nothing from yet is rendered."""
    donors = Donors()
    for kind, donor in (("hicache", model.hicache_donor), ("mooncake", model.mooncake_donor)):
        if not donor:
            continue
        if published(donor):
            kept = _kept_donor(old(), kind, donor)
            if kept is not None:
                setattr(donors, kind, kept)
                continue
        try:
            get(donor)
        except ScriptLaunchedError as exc:
            kept = _kept_donor(old(), kind, donor)
            if kept is None:
                raise SyncError(
                    f"model {model.path}: KV donor {donor} is launched by a bash script and the "
                    f"existing module has no {kind} settings borrowed from it ({exc.message})",
                    path=config.path,
                    line=model.line,
                ) from None
            setattr(donors, kind, kept)
            continue
        owner = config.model_of(donor)
        cfg = (
            owner.config(donor)
            if owner is not None
            else ConfigSpec(
                key=donor,
                source="main",
                pin=Pin(donor, None, config.main, None, None, PointStatus.VERIFIED, None),
            )
        )
        hw = config_hardware(cfg, owner or model)
        found = (hicache_from if kind == "hicache" else mooncake_from)(get(donor), donor, hw)
        if found is None:
            raise SyncError(
                f"model {model.path}: KV donor {donor} has no point measured with {kind}",
                path=config.path,
                line=model.line,
            )
        setattr(donors, kind, found)
    for cfg in model.configs if configs is None else configs:
        if cfg.hicache_donor:
            donors.per_config[cfg.key] = _config_donor(cfg, model, config, get, old, published)
    return donors


def _config_donor(
    cfg: ConfigSpec,
    model: ModelSpec,
    config: SyncConfig,
    get: Callable[[str], Any],
    old: Callable[[], ModuleSpec | None],
    published: Callable[[str], bool],
) -> HiCacheTier:
    """The HiCache settings config ``cfg`` borrows from its own donor (``hicache_donor``)."""
    donor = str(cfg.hicache_donor)
    if published(donor):
        kept = _kept_donor(old(), "hicache", donor)
        if kept is not None:
            return kept
    try:
        rendered = get(donor)
    except ScriptLaunchedError as exc:
        kept = _kept_donor(old(), "hicache", donor)
        if kept is None:
            raise SyncError(
                f"config {cfg.key}: HiCache donor {donor} is launched by a bash script and the "
                f"existing module has no HiCache settings borrowed from it ({exc.message})",
                path=config.path,
                line=cfg.line,
            ) from None
        return kept
    owner = config.model_of(donor) or model
    listed = owner.listed(donor)
    hw = config_hardware(listed or ConfigSpec(donor, "main", cfg.pin), owner)
    found = hicache_from(rendered, donor, hw)
    if found is None:
        raise SyncError(
            f"config {cfg.key}: HiCache donor {donor} has no point measured with HiCache",
            path=config.path,
            line=cfg.line,
        )
    return found


def _kept_donor(old: ModuleSpec | None, kind: str, donor: str) -> HiCacheTier | MooncakeTier | None:
    """The ``kind`` tier settings the existing module borrowed from ``donor``."""
    if old is None:
        return None
    if kind == "mooncake":
        kept = old.kv_mooncake
        return kept if isinstance(kept, dict) and kept.get("donor") == donor else None
    for cell in old.cells:
        hicache = (cell.meta.get("kv") or {}).get("hicache")
        if isinstance(hicache, dict) and hicache.get("donor") == donor:
            return hicache.copy()
    return None
