"""The cookbook's AgentX decoder, rule for rule (docs/cookbook-module-format.md).

``Decoder(data).blocks_for(Selection(ci, pi, router, kv))`` returns exactly the blocks the
page's ``blocksFor`` yields: materialise the cell's base blocks (``ref`` / ``from`` / overlays /
``diff`` / ``envRef``), apply the point's patch, then the KV-offload transform. Every module
version is read: per-point provenance with full URLs and cell-level ``prov`` with ids, modules
with or without KV tiers, and both placements of a derived Mooncake master.

Where the page would crash on malformed data (a ``ref`` cycle, an index past the end, an unknown
router) this raises ``SyncError`` naming the file and the offending entry instead.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from syncer import links
from syncer.cookbook import kvtier
from syncer.cookbook.case import Case
from syncer.cookbook.jsmodule import locate, parse_module, read_text
from syncer.cookbook.jsvalues import NotADouble, clone, js_falsy, js_sort_key, page_view
from syncer.cookbook.kvtier import (  # the placements are part of the decoder's interface
    AFTER_CONTROL_PLANE,
    BEFORE_FIRST_WORKER,
    KvMemo,
    kv_transform,
)
from syncer.cookbook.materialise import (
    OVERLAY_SKIP,
    Expansion,
    Materialiser,
    apply_diff,
    overlay,
)
from syncer.cookbook.shell import format_block
from syncer.cookbook.validate import Locate, ModuleValidator
from syncer.errors import SyncError
from syncer.model import Block, PointStatus, Selection, block_data
from syncer.untrusted import may_hide
from syncer.wording import closest, js

if TYPE_CHECKING:  # annotations only: the TypedDicts cost a millisecond to create
    from syncer.cookbook.module_data import CellData, ModuleData, RouterData

__all__ = [
    "AFTER_CONTROL_PLANE",
    "BEFORE_FIRST_WORKER",
    "OVERLAY_SKIP",
    "Decoder",
    "apply_diff",
    "decoder_for_text",
    "load_decoder",
    "overlay",
    "provenance_urls",
]

_PROV_URLS: tuple[tuple[str, str, Callable[[str, dict[str, Any]], str]], ...] = (
    # (url key, id key, url under the repository)
    ("recipeUrl", "recipe", lambda repo, p: links.blob_link(repo, p["sha"], p["recipe"])),
    ("runUrl", "run", lambda repo, p: links.run_link(repo, p["run"])),
    ("jobUrl", "job", lambda repo, p: links.job_link(repo, p["job"])),
    ("prUrl", "pr", lambda repo, p: links.pr_link(repo, p["pr"])),
    ("useComment", "comment", lambda repo, p: links.comment_link(repo, p["pr"], p["comment"])),
)


def load_decoder(path: str | Path) -> Decoder:
    """Parse the data module at ``path`` and return its decoder."""
    return decoder_for_text(read_text(path), str(path))


def decoder_for_text(text: str, path: str) -> Decoder:
    """The decoder of module source ``text``; its errors name ``path`` and the entry's line."""
    module = parse_module(text, path)
    decoder = Decoder(module.value, path, locate=lambda keys: locate(text, keys))
    decoder.may_hide = may_hide(text)
    return decoder


def provenance_urls(repo: str, info: dict[str, object]) -> dict[str, str]:
    """The GitHub URLs older modules stored for the ids of ``info`` (a point's merged
    provenance), those ``info`` does not hold already: what the page shows either way."""
    out: dict[str, str] = {}
    for url_key, id_key, build in _PROV_URLS:
        if url_key in info or info.get(id_key) in (None, ""):
            continue
        if url_key == "recipeUrl" and not info.get("sha"):
            continue
        if url_key == "useComment" and not info.get("pr"):
            continue
        out[url_key] = build(repo, info)
    return out


class Decoder:
    """Decodes one data module (the ``agentx`` object). Materialisation is memoised per
    (cell, router), as on the page, so decoding every case of a module stays cheap."""

    def __init__(
        self,
        data: Any,
        path: str = "<module>",
        *,
        locate: Locate | None = None,
    ) -> None:
        self.path = path
        # Whether a string the module shows may hold a control or invisible character
        # (untrusted.may_hide of its text; a decoder of data alone cannot tell).
        self.may_hide = True
        self.check = ModuleValidator(path, locate)
        # Read as the page's objects hold the module (key order, doubles), the caller's data
        # left as it was parsed (re-encoding writes it back in its own order).
        try:
            data = page_view(data)
        except NotADouble as exc:
            raise self.check.error(
                _where(exc.path),
                f"{exc}: beyond JavaScript's numbers (the page reads it as Infinity and shows "
                "it as null or Infinity depending on the block), so no text is what it shows",
            ) from None
        self.data: ModuleData = data
        self.check.module(data)
        self.cells: list[CellData] = data["cells"]
        self.expansion = Expansion(self.check)
        self.base = Materialiser(data, self.check, self.expansion)
        # The checked cell of an index: every case asks for it a few times, so the
        # materialiser's own method rather than a call through one of this class.
        self._cell: Callable[[int], CellData] = self.base.cell
        self._measured_memo: dict[tuple[int, int, str], list[Block]] = {}
        self._kv_memo: KvMemo = {}
        # One object per distinct block shown (by marshal bytes, equal only for equal blocks:
        # same keys in the same order, same values and types), and the object each block
        # shown so far stands for (id -> the block, kept so that its id names it; its object).
        self._canonical: dict[bytes, Block] = {}
        self._canonical_of: dict[int, tuple[Block, Block]] = {}
        self._texts: dict[int, tuple[Block, str]] = {}  # id -> the block, its text
        self._placement: str | None = None

    def _router(self, ci: int, router: str) -> RouterData:
        return self.base.router(ci, router)

    def materialise(self, ci: int, router: str) -> list[Block]:
        """Base (point-0, measured-tier) blocks of (cell, router). Shared memo: do not mutate."""
        return self.base.blocks(ci, router)

    # ---- 2-5. blocksFor -----------------------------------------------------------------

    def _point_index(self, ci: int, pi: int) -> int:
        points = self._cell(ci)["points"]
        if isinstance(pi, bool) or not isinstance(pi, int) or pi < 0:
            raise self.check.error(f"cells[{ci}]", f"point index {js(pi)} must be >= 0")
        return min(pi, len(points) - 1)

    def available_tiers(self, ci: int) -> list[str]:
        return list(self._available(ci))

    def _available(self, ci: int) -> list[str]:
        """The cell's ``kv.available`` itself (do not mutate): every case asks for it."""
        kv = self._cell(ci).get("kv")
        return kv["available"] if kv else []

    def measured_tier(self, ci: int, pi: int) -> str | None:
        return self._cell(ci)["points"][self._point_index(ci, pi)].get("kv")

    def target_tier(self, ci: int, pi: int, kv: str | None) -> str | None:
        """The tier actually shown: ``kv`` when the cell offers it, else the measured tier."""
        return self._shown_tier(ci, kv, self.measured_tier(ci, pi))

    def _shown_tier(self, ci: int, kv: str | None, measured: str | None) -> str | None:
        """:meth:`target_tier` given the point's ``measured`` tier (every case knows it)."""
        return kv if kv is not None and kv in self._available(ci) else measured

    def blocks_for(self, sel: Selection) -> list[Block]:
        """The page's ``blocksFor``: fresh blocks for (cell, point, router, KV tier)."""
        blocks: list[Block] = clone(self.shown_blocks(sel))
        return blocks

    def shown_blocks(self, sel: Selection) -> list[Block]:
        """:meth:`blocks_for`'s blocks, shared with the decoder's memos and the module's data:
        do not mutate them (nor the list). A block two selections show alike (the cell's etcd
        at every point, a worker at the tiers that do not change it) is mostly one object."""
        return self._shown(sel)[0]

    def _shown(self, sel: Selection) -> tuple[list[Block], bool]:
        """:meth:`shown_blocks`, and whether they are at the point's measured tier."""
        ci, router, kv = sel.cell, sel.router, sel.kv
        cell = self._cell(ci)
        pi = self._point_index(ci, sel.point)
        measured = self._measured(ci, pi, router)
        source = cell["points"][pi].get("kv")
        target = self._shown_tier(ci, kv, source)
        if source == target:
            return measured, True
        shown = kv_transform(
            measured,
            source,
            target,
            data=self.data,
            ci=ci,
            router=router,
            placement=lambda: self.master_placement,
            check=self.check,
            memo=self._kv_memo,
        )
        where = f"cells[{ci}].kv"
        return [self._one_of(block, where) for block in shown], False

    def _one_of(self, block: Block, where: str | None = None) -> Block:
        """The one object of the blocks equal to ``block`` (``block`` when it is the first)."""
        seen = self._canonical_of.get(id(block))
        if seen is not None:
            return seen[1]
        if where is not None:  # a block built for a point or a KV tier: counted
            self.expansion.block(block, where)
        try:
            key = marshal.dumps(block_data(block), 2)
        except ValueError:  # not JSON data (a str subclass): not from a module's text
            one = block
        else:
            one = self._canonical.setdefault(key, block)
        self._canonical_of[id(block)] = (block, one)
        return one

    def _measured(self, ci: int, pi: int, router: str) -> list[Block]:
        """The blocks of (cell, point, router) at the point's measured tier, checked; memoised
        (do not mutate), since every KV tier of the point starts from them."""
        key = (ci, pi, router)
        done = self._measured_memo.get(key)
        if done is not None:
            return done
        base = [self._one_of(block) for block in self.materialise(ci, router)]
        if pi == 0:
            done = base
        else:
            patches = self._cell(ci)["points"][pi].get("patch") or {}
            where = f"cells[{ci}].points[{pi}].patch"
            if not isinstance(patches, dict):
                raise self.check.error(where, "expected an object of router -> patch")
            done = self._apply_patch(base, patches.get(router), f"{where}.{router}")
        self._measured_memo[key] = done
        return done

    def _apply_patch(self, base: list[Block], patch: object, where: str) -> list[Block]:
        """Point blocks from the checked base; only what the patch changed needs checking
        again (this runs for every case, so unchanged blocks are not walked twice)."""
        if js_falsy(patch):
            return base
        if isinstance(patch, list):
            out = []
            for i, block in enumerate(base):
                diff = patch[i] if i < len(patch) else None
                if js_falsy(diff):
                    out.append(block)  # shared with the base: the memos are not mutated
                    continue
                try:
                    changed = apply_diff(block, diff)
                except SyncError as exc:
                    raise self.check.error(f"{where}[{i}]", exc.message) from None
                one = self._one_of(changed, f"{where}[{i}]")
                if one is changed:  # an equal block was checked before
                    self.check.block(changed, f"{where}[{i}]")
                out.append(one)
            return out
        if isinstance(patch, dict) and isinstance(patch.get("replace"), list):
            out = clone(patch["replace"])
            for i, block in enumerate(out):
                self.check.block(block, f"{where}[{i}]")
            return [self._one_of(block, f"{where}[{i}]") for i, block in enumerate(out)]
        raise self.check.error(
            where, "expected null, a list of per-block diffs or {replace: [...]}"
        )

    # ---- Mooncake master placement ------------------------------------------------------

    @property
    def master_placement(self) -> str:
        """The module's decoder generation's Mooncake-master placement (``kvtier``), read once
        from its Dynamo routers."""
        if self._placement is None:
            self._placement = kvtier.master_placement(
                self.materialise(ci, "dynamo")
                for ci, cell in enumerate(self.cells)
                if "dynamo" in cell["routers"]
            )
        return self._placement

    # ---- status, provenance, files, cases ------------------------------------------------

    def status_for(self, sel: Selection) -> str:
        """``verified`` / ``verified-pr`` / ``in-progress`` for the measured selection, else
        ``derived``."""
        ci, pi, router, kv = sel.cell, sel.point, sel.router, sel.kv
        self._cell(ci)
        self._router(ci, router)
        measured = self.target_tier(ci, pi, kv) == self.measured_tier(ci, pi)
        return self._status(ci, pi, router, measured)

    def _status(self, ci: int, pi: int, router: str, measured: bool) -> str:
        """:meth:`status_for` of a checked selection, ``measured``: at the point's tier."""
        if not measured or router != self.cells[ci]["submitted"]:
            return PointStatus.DERIVED
        status = self._provenance(ci, pi).get("status")
        if not isinstance(status, str):
            raise self.check.error(f"cells[{ci}].points[{pi}]", "no provenance `status`")
        return status

    def point_info(self, ci: int, pi: int) -> dict[str, object]:
        """Provenance of a point: cell ``prov`` merged with the point's own keys, ids expanded
        to the GitHub URLs older modules stored (``recipeUrl``, ``runUrl``, ``jobUrl``,
        ``prUrl``, ``useComment``)."""
        info = self._provenance(ci, pi)
        repo = ((self.data.get("source") or {}).get("repo") or "").rstrip("/")
        info.update(provenance_urls(repo, info))
        return info

    def _provenance(self, ci: int, pi: int) -> dict[str, object]:
        """:meth:`point_info` without the URLs: what a point's status is read from (every
        case asks, and building the URLs was most of the cost of its status)."""
        cell = self._cell(ci)
        point = cell["points"][self._point_index(ci, pi)]
        info: dict[str, object] = dict(cell.get("prov") or {})
        info.update((k, v) for k, v in point.items() if k != "patch")
        return info

    def router_files(self, ci: int, router: str) -> dict[str, str]:
        """Config files the router's commands read: file id -> content."""
        files = self.data.get("files") or {}
        out: dict[str, str] = {}
        for fid in self._router(ci, router).get("files") or []:
            entry = files.get(fid) if isinstance(files, dict) else None
            if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
                raise self.check.error(
                    f"cells[{ci}].routers.{router}.files", f"unknown file {js(fid)}"
                )
            out[fid] = entry["content"]
        return out

    def cell_index(self, selector: str | int) -> int:
        """A cell by index, id (``configKey#n``) or config key (a config shown in one cell);
        unknown ids list the close ones."""
        # isdigit() alone accepts "²", which int() refuses.
        numeric = isinstance(selector, str) and selector.isascii() and selector.isdigit()
        if isinstance(selector, int) or numeric:
            index = int(selector)
            self._cell(index)
            return index
        for ci, cell in enumerate(self.cells):
            if cell.get("id") == selector:
                return ci
        of_config = [ci for ci, cell in enumerate(self.cells) if cell.get("configKey") == selector]
        if len(of_config) == 1:
            return of_config[0]  # a config shown in one cell is named by its key alone
        if of_config:
            listed = ", ".join(str(self.cells[ci].get("id")) for ci in of_config)
            shown = f"config {js(selector)} is shown in {len(of_config)} cells: {listed}; give one"
            raise self.check.error("cells", shown)
        ids = [str(c.get("id")) for c in self.cells]
        close = closest(str(selector), ids)
        hint = f"; closest: {', '.join(close)}" if close else ""
        raise self.check.error("cells", f"no cell with id {js(selector)}{hint}")

    def default_cell(self) -> int:
        """The page's first selection: first hardware, its first checkpoint, first cell."""
        hardware = self.data.get("hardware") or []
        hw = hardware[0].get("id") if hardware and isinstance(hardware[0], dict) else None
        for ci, cell in enumerate(self.cells):
            if hw is None or cell.get("hw") == hw:
                return ci
        raise self.check.error("hardware", f"first hardware {js(hw)} has no cell")

    def routers(self, ci: int) -> list[str]:
        return sorted(self._cell(ci)["routers"], key=js_sort_key)  # as the oracle's .sort()

    def case(self, sel: Selection, *, fresh: bool = True) -> Case:
        """One selection as the oracle lists it (``kv`` None: the measured tier, shown as
        ``none`` when the point has none), each block's text by ``shell.format_block`` (built
        when the case's ``text`` is first read, from the blocks as decoded).
        ``fresh=False``: the case's blocks are :meth:`shown_blocks`' (do not mutate them)."""
        shown, measured = self._shown(sel)  # the cell, point and router checked
        ci, router = sel.cell, sel.router
        return Case(
            selection=sel,
            cell_id=str(self.cells[ci].get("id", ci)),
            kv=sel.kv or "none",
            status=self._status(ci, sel.point, router, measured),
            blocks=clone(shown) if fresh else shown,
            texts=partial(self._texts_of, shown),
            router_files=partial(self.router_files, ci, router),
        )

    def _texts_of(self, shown: list[Block]) -> list[str]:
        """``format_block`` of each block :meth:`shown_blocks` returned (a case's ``text``,
        when read), once per distinct block: two cases of a module mostly show the same
        blocks (its etcd, its frontend, a worker at every KV tier it does not change), about
        two in three of them on a real module, and equal blocks shown are one object."""
        texts = self._texts
        out = []
        for block in shown:
            seen = texts.get(id(block))
            if seen is None:
                seen = texts[id(block)] = (block, format_block(block))
            out.append(seen[1])
        return out

    def selections(self, ci: int) -> Iterator[Selection]:
        """Every selection of cell ``ci`` in the oracle's order: point, router sorted by name,
        tier in ``kv.available`` (else the point's measured tier, ``none`` when it has none)."""
        tiers = self.available_tiers(ci)
        for pi, point in enumerate(self._cell(ci)["points"]):
            for router in self.routers(ci):
                for kv in tiers or [point.get("kv") or "none"]:
                    yield Selection(ci, pi, router, kv)

    def cases(self, *, fresh: bool = True) -> Iterator[Case]:
        """Every case of the module, as the oracle lists them (``fresh``: as :meth:`case`)."""
        for ci in range(len(self.cells)):
            for sel in self.selections(ci):
                yield self.case(sel, fresh=fresh)


def _where(path: tuple[str | int, ...]) -> str:
    """A key path as the validator names an entry: ``cells[3].routers.sglang``."""
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else f".{key}" if text else key
    return text or "module"
