"""The cells of a rendered config, as the encoder takes them (``CellSpec`` / ``PointSpec``).

Points are grouped into cells by deployment shape (``group_points``), each with its meta
(hardware, label, image commit, disclosures, KV tiers), its routers and each point's
provenance from the pin; cells that would read the same are told apart (``disambiguate``) and
put in display order. The other way to the same input is ``cells.cells_from_module``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import Any

from syncer import links
from syncer.cookbook.module_data import CellMeta

# Through the module: the refresh proof's tests replace cells_from_module there.
from syncer.encoder.cells import (
    CellSpec,
    ModuleSpec,
    PointSpec,
    RouterSpec,
    config_hardware,
)
from syncer.encoder.kv_donors import Donors, cell_kv, hicache_from
from syncer.errors import SyncError
from syncer.inferencex.releases import branch_commit
from syncer.inferencex.render import RenderedConfig, RenderedPoint
from syncer.syncconfig import ConfigSpec, ModelSpec, Pin, SyncConfig
from syncer.wording import js

_NIGHTLY_COMMIT = re.compile(r":nightly[^@]*-\d{8}-([0-9a-f]{7,12})(?:@|$)")


# --- cell fields -----------------------------------------------------------------------------


def image_commit(image: str) -> str | None:
    """The SGLang commit a nightly image tag names (``…-20261012-e6072935``), else None."""
    m = _NIGHTLY_COMMIT.search(image)
    return m.group(1) if m else None


def pr_run_url(repo: str, run: str | None) -> str | None:
    """A PR's run as a whole in the ``source`` block: no attempt (the attempts rule of
    ``syncer/links.py``)."""
    return links.run_link(repo, run, attempt=False) if run else None


def source_block(config: SyncConfig, pins: dict[str, Pin] | None = None) -> dict[str, object]:
    """``source``: the InferenceX main commit and every PR of the whole sync run (``pins``
    override the configured pins, e.g. a run the bot is pinning right now)."""
    prs: dict[str, Any] = {}
    for pr, pin in config.pr_sources().items():
        pin = (pins or {}).get(pin.config, pin)
        prs[pr] = {"run": pr_run_url(config.repo, pin.run), "sha": pin.sha, "status": pin.status}
    return {"repo": config.repo, "main": config.main, "prs": prs}


# --- cells -----------------------------------------------------------------------------------


def group_points(points: list[Any]) -> list[list[Any]]:
    """Rendered points -> the points of each cell, in render order.

    A cell is one deployment shape (roles, parallelism, worker counts) with one speculative
    decoding setting, since the cell's detail names it. The page picks a point by its
    concurrency, so a search-space row whose concurrencies are already in the cell goes to the
    next cell of that shape (a row's points stay together)."""
    cells: list[list[Any]] = []
    kinds: list[tuple[object, str]] = []
    rows: dict[tuple[object, str, int], list[Any]] = {}
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


def _check_one_image(cfg: ConfigSpec, points: list[RenderedPoint]) -> None:
    """A shape's points share a cell even where their node counts differ (a "spread"
    placement of the same workers): deepseek-v4_1 @2b484a51 shows the 1P2D points of
    dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg (12, 8 and 8 GPUs) as one cell of 12,
    its first point's. One cell has one image, so differing images are refused."""
    first = points[0]
    for point in points:
        if point.image != first.image:
            raise SyncError(
                f"config {cfg.key}: points {first.item} and {point.item} share a deployment "
                "shape but differ in image"
            )


def cells_for_config(
    cfg: ConfigSpec,
    model: ModelSpec,
    rendered: RenderedConfig,
    pin: Pin,
    donors: Donors,
) -> list[CellSpec]:
    missing = rendered.missing_file_error()
    if missing is not None:
        # the module must ship every file its commands name, with srt-slurm's own bytes
        raise missing
    hw = config_hardware(cfg, model)
    own_hicache = hicache_from(rendered, cfg.key, hw)
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
        _check_one_image(cfg, points)
        meta: CellMeta = {
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
            "disclosures": _disclosures(cfg, points),
            "kv": cell_kv(cfg, donors, [p.kv for p in points], own_hicache),
        }
        cells.append(
            CellSpec(
                meta=meta,
                routers=routers,
                points=_cell_points(points, pin, routers, branch_commit(rendered.release)),
            )
        )
    return cells


def _disclosures(cfg: ConfigSpec, points: list[RenderedPoint]) -> list[str]:
    """The cell's disclosures: the config's, synthetic acceptance first when a point ran with
    it, then what the policy removed from the points' commands."""
    disclosures = list(cfg.disclosures)
    if any(p.golden_al for p in points) and "synthetic-acceptance" not in disclosures:
        disclosures.insert(0, "synthetic-acceptance")
    for found in (d for p in points for d in p.disclosures):
        if found not in disclosures:
            disclosures.append(found)
    return disclosures


def _cell_points(
    points: list[RenderedPoint],
    pin: Pin,
    routers: dict[str, RouterSpec],
    srt_commit: str | None = None,
) -> list[PointSpec]:
    """The cell's points: each one's blocks for the cell's routers and the pin's provenance
    with the point's recipe (and ``srt_commit``, the srt-slurm commit a runner's branch was
    taken at, when there is one)."""
    out = []
    for point in points:
        prov = pin.prov()
        prov["recipe"] = point.recipe
        if srt_commit is not None:
            prov["srtSlurm"] = srt_commit
        out.append(
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
    return out


MEASURED_TIER_TEXT = {
    "none": "measured with no KV offload",
    "hicache": "measured with HiCache",
    "mooncake": "measured with a Mooncake store",
}


def disambiguate(cells: list[CellSpec]) -> None:
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


def display_order(
    cells: list[CellSpec], model: ModelSpec, config_order: list[str]
) -> list[CellSpec]:
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


def checkpoint_chips(cells: list[CellSpec]) -> list[dict[str, str]]:
    """The module's checkpoint chips: each cell's checkpoint once, in cell order."""
    seen: dict[str, dict[str, str]] = {}
    for cell in cells:
        seen.setdefault(cell.meta["ckpt"], {"id": cell.meta["ckpt"]})
    return list(seen.values())


def module_files(
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
