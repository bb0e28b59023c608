"""`sync generate`: a cookbook model's data module and page section from InferenceX configs and
their pins (``sync.yaml``). Used by the CLI and by the bot.

Per config: render every point (``syncer.inferencex.render``), group points into cells by
deployment shape, attach provenance from the pin, derive the KV tiers from the donors; then
encode, prove by decoding back, and write atomically only what changed.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syncer import links

# Through the module: the refresh proof's tests replace cells_from_module there.
from syncer.cookbook import cells as cells_mod
from syncer.cookbook import encode
from syncer.cookbook.cells import (
    CellSpec,
    ModuleSpec,
    PointSpec,
    RouterSpec,
    replace_config_cells,
)
from syncer.cookbook.decode import Decoder
from syncer.cookbook.jsmodule import load_module, parse_module, read_text
from syncer.cookbook.kvtier import CACHE_OWNING_ROLES, KV_LINKER_FLAGS, is_kv_flag
from syncer.cookbook.page import update_page
from syncer.errors import SyncError
from syncer.fsio import present, read_capped, write_all
from syncer.inferencex import render as render_mod
from syncer.inferencex.render import RenderedConfig
from syncer.inferencex.scripts import ScriptLaunchedError
from syncer.model import Block, PointStatus
from syncer.syncconfig import ConfigSpec, ModelSpec, Pin, SyncConfig
from syncer.wording import js

_NIGHTLY_COMMIT = re.compile(r":nightly[^@]*-\d{8}-([0-9a-f]{7,12})(?:@|$)")


@dataclass
class KeptConfig:
    """A script-launched config whose cells were kept from the existing module as they were:
    there is no recipe to derive them from (its commands come from its run's logs)."""

    key: str
    script: str
    cells: list[str]


@dataclass
class GenerateResult:
    model: str
    path: Path  # the data module
    changed: bool
    text: str
    page_path: Path | None = None
    page_changed: bool = False
    page_conflict: str | None = None  # a hand-edited page section left alone
    page_text: str | None = None  # the page to write when page_changed
    cells: int = 0
    cases: int = 0
    kept: list[KeptConfig] = field(default_factory=list)


# --- cell fields -----------------------------------------------------------------------------


def image_commit(image: str) -> str | None:
    """The SGLang commit a nightly image tag names (``…-20261012-e6072935``), else None."""
    m = _NIGHTLY_COMMIT.search(image)
    return m.group(1) if m else None


def _hardware_of(cfg: ConfigSpec, model: ModelSpec) -> str:
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


def _run_url(repo: str, run: str | None) -> str | None:
    """A PR's run as a whole in the ``source`` block: no attempt (the attempts rule of
    ``syncer/links.py``)."""
    return links.run_link(repo, run, attempt=False) if run else None


def source_block(config: SyncConfig, pins: dict[str, Pin] | None = None) -> dict[str, Any]:
    """``source``: the InferenceX main commit and every PR of the whole sync run (``pins``
    override the configured pins, e.g. a run the bot is pinning right now)."""
    prs: dict[str, Any] = {}
    for pr, pin in config.pr_sources().items():
        pin = (pins or {}).get(pin.config, pin)
        prs[pr] = {"run": _run_url(config.repo, pin.run), "sha": pin.sha, "status": pin.status}
    return {"repo": config.repo, "main": config.main, "prs": prs}


# --- KV tiers --------------------------------------------------------------------------------


@dataclass
class _Donors:
    hicache: dict[str, Any] | None = None  # {args, donor, donorHardware}
    mooncake: dict[str, Any] | None = None  # the module's kvMooncake


def _hicache_from(rendered: RenderedConfig, key: str, hw: str) -> dict[str, Any] | None:
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


def _mooncake_from(rendered: RenderedConfig, key: str, hw: str) -> dict[str, Any] | None:
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


def _cell_kv(cfg: ConfigSpec, donors: _Donors, measured: list[str], own_hicache: Any) -> dict:
    available = ["none"]
    unavailable: dict[str, str] = {}
    hicache = donors.hicache or own_hicache
    if hicache is not None or "hicache" in measured:
        available.append("hicache")
    else:
        unavailable["hicache"] = "no measured HiCache configuration to borrow settings from"
    if (donors.mooncake is not None and not cfg.mooncake_unavailable) or "mooncake" in measured:
        available.append("mooncake")
    else:
        unavailable["mooncake"] = cfg.mooncake_unavailable or "no Mooncake store donor configured"
    out: dict[str, Any] = {"available": available, "unavailable": unavailable}
    if "hicache" in available and hicache is not None:
        out["hicache"] = hicache
    return out


# --- cells -----------------------------------------------------------------------------------


def group_points(points: list[Any]) -> list[list[Any]]:
    """Rendered points -> the points of each cell, in render order.

    A cell is one deployment shape (roles, parallelism, worker counts) with one speculative
    decoding setting, since the cell's detail names it. The page picks a point by its
    concurrency, so a search-space row whose concurrencies are already in the cell goes to the
    next cell of that shape (a row's points stay together)."""
    cells: list[list[Any]] = []
    kinds: list[tuple[Any, str]] = []
    rows: dict[tuple[Any, str, int], list[Any]] = {}
    for point in points:
        rows.setdefault((point.shape, point.detail, point.item), []).append(point)
    for (shape, detail, _), row in rows.items():
        concs = {c for p in row for c in p.concs}
        home = next(
            (
                cell
                for cell, kind in zip(cells, kinds, strict=True)
                if kind == (shape, detail) and not concs & {c for p in cell for c in p.concs}
            ),
            None,
        )
        if home is None:
            cells.append([])
            kinds.append((shape, detail))
            home = cells[-1]
        home.extend(row)
    return cells


def _cells_for_config(
    cfg: ConfigSpec,
    model: ModelSpec,
    rendered: RenderedConfig,
    pin: Pin,
    donors: _Donors,
) -> list[CellSpec]:
    missing = rendered.missing_file_error()
    if missing is not None:
        # the module must ship every file its commands name, with srt-slurm's own bytes
        raise missing
    hw = _hardware_of(cfg, model)
    own_hicache = _hicache_from(rendered, cfg.key, hw)
    cells: list[CellSpec] = []
    ids: set[str] = set()
    for points in group_points(rendered.points):
        first = points[0]
        cell_id = f"{cfg.key}#{first.item}"
        if cell_id in ids:
            cell_id = f"{cell_id}@c{first.concs[0]}"
        ids.add(cell_id)
        submitted = first.submitted
        routers = {
            r: RouterSpec(
                install=list(cfg.install.get(r, [])),
                files=list(dict.fromkeys(f for p in points for f in p.files.get(r, {}))),
            )
            for r in first.cookbook
        }
        if next(iter(routers)) != submitted:
            raise SyncError(f"config {cfg.key}: rendered routers must list {js(submitted)} first")
        for point in points:
            if point.image != first.image or point.gpus != first.gpus:
                raise SyncError(
                    f"config {cfg.key}: points {first.item} and {point.item} share a deployment "
                    "shape but differ in image or GPU count"
                )
        disclosures = list(cfg.disclosures)
        if any(p.golden_al for p in points) and "synthetic-acceptance" not in disclosures:
            disclosures.insert(0, "synthetic-acceptance")
        for found in (d for p in points for d in p.disclosures):
            if found not in disclosures:
                disclosures.append(found)
        meta = {
            "id": cell_id,
            "hw": hw,
            "ckpt": rendered.entry.model,
            "label": first.label,
            "detail": cfg.detail or first.detail,
            "gpus": first.gpus,
            "configKey": cfg.key,
            "image": first.image,
            "imageStatus": cfg.image_status,
            "imageCommit": cfg.image_commit or image_commit(first.image),
            "submitted": submitted,
            "setup": list(cfg.setup),
            "disclosures": disclosures,
            "kv": _cell_kv(cfg, donors, [p.kv for p in points], own_hicache),
        }
        cell_points = []
        for point in points:
            prov = pin.prov()
            prov["recipe"] = point.recipe
            cell_points.append(
                PointSpec(
                    concs=list(point.concs),
                    item=point.item,
                    kv=point.kv,
                    blocks={r: point.cookbook[r] for r in routers},
                    override=point.override,
                    golden_al=point.golden_al,
                    prov=prov,
                )
            )
        cells.append(CellSpec(meta=meta, routers=routers, points=cell_points))
    return cells


MEASURED_TIER_TEXT = {
    "none": "measured with no KV offload",
    "hicache": "measured with HiCache",
    "mooncake": "measured with a Mooncake store",
}


def _disambiguate(cells: list[CellSpec]) -> None:
    """Cells of one (hardware, checkpoint) group with the same label get distinct details, as
    the page's links and cell chips need distinct texts: the config key tells configs apart;
    cells of one config that still read the same are told apart by their measured KV tier, or
    else by the first worker flag whose value differs."""
    groups: dict[tuple[str, str, str], list[CellSpec]] = {}
    for cell in cells:
        groups.setdefault((cell.meta["hw"], cell.meta["ckpt"], cell.meta["label"]), []).append(cell)
    for group in groups.values():
        if len(group) < 2:
            continue
        for cell in group:
            _add_detail(cell, cell.config_key)
        twins: dict[str, list[CellSpec]] = {}
        for cell in group:
            twins.setdefault(str(cell.meta["detail"]), []).append(cell)
        for same in twins.values():
            if len(same) < 2:
                continue
            tiers = {c.points[0].kv for c in same}
            for cell in same:
                text = (
                    MEASURED_TIER_TEXT.get(cell.points[0].kv, cell.points[0].kv)
                    if len(tiers) == len(same)
                    else _differing_flag(cell, same)
                )
                if text:
                    _add_detail(cell, text)


def _add_detail(cell: CellSpec, text: str) -> None:
    # A kept cell (one-config refresh) carries its texts already.
    if text not in str(cell.meta["detail"]).split(" · ")[1:]:
        cell.meta["detail"] = f"{cell.meta['detail']} · {text}"


def _lead_worker_args(cell: CellSpec) -> dict[str, list[str]]:
    for block in cell.points[0].blocks[cell.submitted]:
        if block.get("kind") == "worker":
            return {a[0]: list(a[1:]) for a in block.get("args") or []}
    return {}


def _differing_flag(cell: CellSpec, same: list[CellSpec]) -> str:
    """``--flag value`` of the first worker flag of ``cell`` set differently in another cell."""
    mine = _lead_worker_args(cell)
    others = [_lead_worker_args(c) for c in same if c is not cell]
    for flag, values in mine.items():
        if any(o.get(flag) != values for o in others):
            return " ".join([flag, *values])
    return ""


def _order(cells: list[CellSpec], model: ModelSpec, config_order: list[str]) -> list[CellSpec]:
    """Display order: hardware as listed, then checkpoint, then low latency to high throughput
    (first concurrency), then config order and search-space row."""
    hw_rank = {h["id"]: i for i, h in enumerate(model.hardware)}
    ckpts: dict[str, int] = {}
    for cell in cells:
        ckpts.setdefault(cell.meta["ckpt"], len(ckpts))
    return sorted(
        cells,
        key=lambda c: (
            hw_rank[c.meta["hw"]],
            ckpts[c.meta["ckpt"]],
            c.points[0].concs[0],
            config_order.index(c.config_key),
            c.points[0].item,
        ),
    )


Renderer = Callable[[Path, str], RenderedConfig]


def _default_renderer(inferencex: Path, key: str) -> RenderedConfig:
    # Through the module, at call time: the bot's tests count the renders of one event by
    # replacing ``render_config`` there.
    return render_mod.render_config(inferencex, key)


def _memoised(render: Renderer, inferencex: Path) -> Callable[[str], RenderedConfig]:
    """``render`` once per config key: donors and cells ask for the same configs."""
    cache: dict[str, RenderedConfig] = {}

    def get(key: str) -> RenderedConfig:
        if key not in cache:
            cache[key] = render(inferencex, key)
        return cache[key]

    return get


def _checkpoints(cells: list[CellSpec]) -> list[dict[str, str]]:
    """The module's checkpoint chips: each cell's checkpoint once, in cell order."""
    seen: dict[str, dict[str, str]] = {}
    for cell in cells:
        seen.setdefault(cell.meta["ckpt"], {"id": cell.meta["ckpt"]})
    return list(seen.values())


def _find_donors(
    model: ModelSpec,
    config: SyncConfig,
    get: Callable[[str], Any],
    old: Callable[[], ModuleSpec | None] = lambda: None,
) -> _Donors:
    """The KV-tier settings borrowed from the donor configs named in ``sync.yaml``. A
    script-launched donor cannot be rendered: its settings are the ones the existing module
    (``old()``, read only then) already borrowed from it."""
    donors = _Donors()
    for kind, donor in (("hicache", model.hicache_donor), ("mooncake", model.mooncake_donor)):
        if not donor:
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
        hw = _hardware_of(cfg, owner or model)
        found = (_hicache_from if kind == "hicache" else _mooncake_from)(get(donor), donor, hw)
        if found is None:
            raise SyncError(
                f"model {model.path}: KV donor {donor} has no point measured with {kind}",
                path=config.path,
                line=model.line,
            )
        setattr(donors, kind, found)
    return donors


def _kept_donor(old: ModuleSpec | None, kind: str, donor: str) -> dict[str, Any] | None:
    """The ``kind`` tier settings the existing module borrowed from ``donor``."""
    if old is None:
        return None
    if kind == "mooncake":
        kept = old.kv_mooncake
        return kept if isinstance(kept, dict) and kept.get("donor") == donor else None
    for cell in old.cells:
        hicache = (cell.meta.get("kv") or {}).get("hicache")
        if isinstance(hicache, dict) and hicache.get("donor") == donor:
            return dict(hicache)
    return None


@dataclass
class _Existing:
    """The published module, decoded once, for the cells generation keeps."""

    path: Path | None
    spec: ModuleSpec | None = None
    decoder: Decoder | None = None

    def load(self) -> ModuleSpec | None:
        if self.spec is None and self.path is not None and present(self.path, "data module"):
            old = load_module(self.path)
            self.decoder = Decoder(old.value, str(self.path))
            self.spec = cells_mod.cells_from_module(old.value, self.decoder, str(self.path))
        return self.spec


@dataclass
class BuiltSpec:
    """The encoder's input for a whole model, and what was kept of the existing module."""

    spec: ModuleSpec
    kept: list[KeptConfig]  # script-launched configs whose cells were kept as they were
    existing: Decoder | None  # the existing module's decoder when cells were kept from it


def build_module_spec(
    model: ModelSpec,
    *,
    config: SyncConfig,
    inferencex: Path,
    pins: dict[str, Pin] | None = None,
    today: str | None = None,
    renderer: Renderer | None = None,
    existing_path: Path | None = None,
) -> BuiltSpec:
    """Render every config of ``model`` and assemble the encoder's input (the cells of
    script-launched configs are taken from the module at ``existing_path``)."""
    existing = _Existing(existing_path)
    all_pins = {**config.pins(), **(pins or {})}
    get = _memoised(renderer or _default_renderer, inferencex)
    scripts: dict[str, ScriptLaunchedError] = {}
    for cfg in model.configs:
        try:
            get(cfg.key)
        except ScriptLaunchedError as exc:
            scripts[cfg.key] = exc
    old = existing.load() if scripts else None
    donors = _find_donors(model, config, get, existing.load)
    if donors.mooncake is None:
        # A config measured with a Mooncake store still needs the module's Mooncake settings
        # for its other points' derived tier: take them from the first such config.
        for cfg in model.configs:
            if cfg.key in scripts:
                continue
            found = _mooncake_from(get(cfg.key), cfg.key, _hardware_of(cfg, model))
            if found is not None:
                donors.mooncake = found
                break
    cells: list[CellSpec] = []
    kept: list[KeptConfig] = []
    for cfg in model.configs:
        if cfg.key in scripts:
            # No recipe to derive these cells from, and a run's logs are checked, not
            # published (`sync verify`): the module's cells stay exactly as they are.
            mine = [c for c in (old.cells if old else []) if c.config_key == cfg.key]
            if not mine:
                where = existing.path if existing.path and existing.path.is_file() else None
                raise SyncError(
                    f"{scripts[cfg.key].message}; its cells cannot be generated, and "
                    + (f"{where} has none to keep" if where else "there is no existing module"),
                    path=config.path,
                    line=cfg.line,
                )
            cells.extend(mine)
            kept.append(
                KeptConfig(cfg.key, scripts[cfg.key].launch.describe(), [c.id for c in mine])
            )
            continue
        cells.extend(_cells_for_config(cfg, model, get(cfg.key), all_pins[cfg.key], donors))
    _disambiguate(cells)
    cells = _order(cells, model, [c.key for c in model.configs])
    used_hw = {c.meta["hw"] for c in cells}
    spec = ModuleSpec(
        model=model.model,
        generated_on=today or _dt.datetime.now(_dt.UTC).date().isoformat(),
        source=source_block(config, pins),
        hardware=[dict(h) for h in model.hardware if h["id"] in used_hw],
        checkpoints=_checkpoints(cells),
        kv_mooncake=donors.mooncake,
        files=_files(model, get, scripts, old),
        cells=cells,
    )
    return BuiltSpec(spec, kept, existing.decoder if kept else None)


def _files(
    model: ModelSpec,
    get: Callable[[str], RenderedConfig],
    kept: Collection[str] = (),
    old: ModuleSpec | None = None,
) -> dict[str, dict[str, str]]:
    """Every config file a rendered router ships (e.g. srt-slurm's nats.conf), by file id; the
    cells kept from the existing module (``kept`` configs) keep the files they name."""
    out: dict[str, dict[str, str]] = {}
    if old is not None:
        named = {
            fid
            for cell in old.cells
            if cell.config_key in kept
            for router in cell.routers.values()
            for fid in router.files
        }
        out.update({fid: dict(old.files[fid]) for fid in sorted(named) if fid in old.files})
    for cfg in model.configs:
        if cfg.key in kept:
            continue
        for point in get(cfg.key).points:
            for files in point.files.values():
                for fid, spec in files.items():
                    out.setdefault(fid, dict(spec))
    return out


def refresh_module_spec(
    model: ModelSpec,
    config_key: str,
    existing: Path,
    *,
    config: SyncConfig,
    inferencex: Path,
    pins: dict[str, Pin] | None = None,
    today: str | None = None,
    renderer: Renderer | None = None,
) -> tuple[ModuleSpec, Decoder, set[str]]:
    """The published module at ``existing`` with only ``config_key``'s cells rendered again
    (the bot's update after a pin): every other cell is decoded and kept as it is, so configs
    that are not being touched are never re-rendered. Returns the spec, the old module's
    decoder and the ids of the kept cells (both for the roundtrip proof)."""
    cfg = model.config(config_key)
    old = load_module(existing)
    reference = Decoder(old.value, str(existing))
    old_spec = cells_mod.cells_from_module(old.value, reference, str(existing))
    get = _memoised(renderer or _default_renderer, inferencex)
    donors = _find_donors(model, config, get, lambda: old_spec)
    if donors.mooncake is None:
        donors.mooncake = old_spec.kv_mooncake
    pin = {**config.pins(), **(pins or {})}[config_key]
    fresh = _cells_for_config(cfg, model, get(config_key), pin, donors)
    spec = replace_config_cells(old_spec, config_key, fresh)
    _disambiguate(spec.cells)
    keep = {c.id for c in old_spec.cells if c.config_key != config_key}
    used_hw = {c.meta["hw"] for c in spec.cells}
    order = [h["id"] for h in model.hardware] + [
        h["id"] for h in old_spec.hardware if h["id"] not in {x["id"] for x in model.hardware}
    ]
    labels = {h["id"]: h for h in [*old_spec.hardware, *model.hardware]}
    spec.hardware = [dict(labels[h]) for h in order if h in used_hw]
    spec.checkpoints = _checkpoints(spec.cells)
    spec.source = source_block(config, pins)
    spec.kv_mooncake = donors.mooncake
    spec.generated_on = today or _dt.datetime.now(_dt.UTC).date().isoformat()
    return spec, reference, keep


def _existing_date(text: str | None, path: Path) -> str | None:
    """``generatedOn`` of the existing module's ``text``, if it parses."""
    if text is None:
        return None

    try:
        value = parse_module(text, str(path)).value
    except SyncError:
        return None
    return value.get("generatedOn") if isinstance(value, dict) else None


def generate_model(
    model: str,
    *,
    config: SyncConfig,
    inferencex: Path,
    out_dir: Path,
    pins: dict[str, Pin] | None = None,
    check: bool = False,
    pages_dir: Path | None = None,
    today: str | None = None,
    force_page: bool = False,
    renderer: Renderer | None = None,
    only: str | None = None,
) -> GenerateResult:
    """Generate ``<out_dir>/<org>/<model>.jsx`` (and the page section under ``pages_dir``).

    The module is decoded back and compared with every rendered point before anything is
    written; ``check`` writes nothing and only reports whether anything would change. The
    module keeps its ``generatedOn`` when nothing else changed, so a rerun is a no-op.
    ``only``: re-render just this config and keep every other cell of the existing module as
    decoded (proven case by case against the old module, derived tiers included).
    """
    spec_model = config.model(model)
    path = out_dir / spec_model.module_relpath
    reference: Decoder | None = None
    keep: set[str] | None = None
    kept: list[KeptConfig] = []
    if only is not None and present(path, "data module"):
        spec, reference, keep = refresh_module_spec(
            spec_model, only, path, config=config, inferencex=inferencex, pins=pins,
            today=today, renderer=renderer,
        )  # fmt: skip
    else:
        built = build_module_spec(
            spec_model, config=config, inferencex=inferencex, pins=pins, today=today,
            renderer=renderer, existing_path=path,
        )  # fmt: skip
        spec, kept = built.spec, built.kept
        if kept:
            # The kept cells are proven against the old module case by case, like the
            # one-config refresh's.
            reference = built.existing
            keep = {cell for k in kept for cell in k.cells}
    header = encode.header_lines(spec.source)

    old_text = read_text(path) if present(path, "data module") else None
    old_date = _existing_date(old_text, path)
    value, text, cases = encode.encode_module(
        spec, path=str(path), header=header, reference=reference, keep=keep
    )
    if old_date and old_date != spec.generated_on:
        # Same content under the old date is no change: keep the old text. Only the date
        # differs, so the proven value is emitted again rather than encoded and proven twice.
        value["generatedOn"] = old_date
        if encode.module_text(value, header) == old_text:
            text = old_text
    result = GenerateResult(
        model=spec_model.path,
        path=path,
        changed=text != old_text,
        text=text,
        cells=len(spec.cells),
        cases=cases,
        kept=kept,
    )
    if pages_dir is not None:
        page_path = pages_dir / spec_model.page
        result.page_path = page_path
        if not page_path.is_file():
            raise SyncError("cookbook page not found", path=str(page_path))
        update = update_page(
            _read_page(page_path),
            section=spec_model.section,
            module=spec_model.path,
            path=str(page_path),
            force=force_page,
        )
        result.page_changed = update.changed
        result.page_conflict = update.conflict
        result.page_text = update.text if update.changed else None
    if not check:
        write_result(result)
    return result


# A cookbook page is tens of kB; the cap keeps a hostile or wrong file from being read whole.
MAX_PAGE_BYTES = 8 * 1024 * 1024


def _read_page(path: Path) -> str:
    raw = read_capped(path, MAX_PAGE_BYTES, "cookbook page")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SyncError(
            f"cookbook page is not UTF-8 (byte {exc.start})", path=str(path), line=line
        ) from None


def result_files(result: GenerateResult) -> dict[Path, str]:
    """The files ``result`` changes (module and page), for one all-or-nothing write."""
    files: dict[Path, str] = {}
    if result.changed:
        files[result.path] = result.text
    if result.page_text is not None and result.page_path is not None:
        files[result.page_path] = result.page_text
    return files


def write_results(results: list[GenerateResult]) -> None:
    """Write what ``generate_model(..., check=True)`` found changed, for every model at once:
    all files or none (a page that cannot be written leaves every module as it was)."""
    files: dict[Path, str] = {}
    for result in results:
        files.update(result_files(result))
    write_all(files)


def write_result(result: GenerateResult) -> None:
    """Write one model's module and page, both or neither."""
    write_results([result])
