"""Matching two decoded versions of one cookbook data module, for the reviewer diff.

Reviewers think in deployments, not in array positions: a cell keeps its identity when the
generator renumbers it (its id carries the search-space index of its first point), and a point
is "the same point" when it measures the same concurrencies. So cells are matched by id when the
deployment is unchanged, then by config key and deployment shape (a renumbered cell is a move,
not a delete plus an add); a cell whose id survives but whose deployment shape changed is a
different deployment (added plus removed). Points are matched by concurrency list, routers,
KV tiers and processes (blocks) by name.

Both sides are decoded with the project's decoder; nothing here formats a command.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from syncer.compare.diff import block_key
from syncer.cookbook import decode, shell
from syncer.cookbook.module_data import CellData
from syncer.errors import SyncError
from syncer.flags import DP_ATTENTION_FLAG, DP_FLAG, EP_FLAG, TP_FLAG, canonical_flag
from syncer.model import WORKER_ROLES, Block, Selection


@dataclass(frozen=True)
class PointRef:
    """One point of a cell: what it measured and where its provenance says it came from."""

    index: int
    concs: tuple[int, ...]
    kv: str

    @property
    def name(self) -> str:
        return "c" + "/".join(str(c) for c in self.concs)


@dataclass
class CellRef:
    """One cell (deployment) of a module, with the facts matching and reports need."""

    index: int
    id: str
    config_key: str
    hw: str
    ckpt: str
    label: str
    submitted: str
    routers: tuple[str, ...]
    tiers: tuple[str, ...]
    points: list[PointRef]
    shape: tuple[Any, ...]
    raw: CellData = field(repr=False)

    def concs(self) -> set[int]:
        return {c for p in self.points for c in p.concs}


class ModuleSide:
    """One decoded module version: cells, points and memoised decoded blocks and texts."""

    def __init__(self, decoder: decode.Decoder, label: str | None = None) -> None:
        # The decoder has checked the module's shape (lists of objects where the format has
        # them), so only what matching needs beyond decoding is checked here.
        self.data = decoder.data
        self.decoder = decoder
        self.label = decoder.path if label is None else label
        self._blocks: dict[Selection, list[Block]] = {}
        self._shown: dict[Selection, list[Block]] = {}
        self._texts: dict[Selection, str] = {}
        self.hardware = [dict(h) for h in self.data.get("hardware") or []]
        self.checkpoints = [dict(c) for c in self.data.get("checkpoints") or []]
        self.cells = [self._cell(i, c) for i, c in enumerate(decoder.cells)]

    def _cell(self, index: int, cell: CellData) -> CellRef:
        # Matching needs two things decoding does not: a cell id and each point's concs.
        if "id" not in cell:
            raise SyncError(f"cells[{index}]: a cell needs an `id` to be matched", path=self.label)
        points = []
        for i, point in enumerate(cell["points"]):
            if point.get("concs") is None:
                raise SyncError(
                    f"cells[{index}].points[{i}]: a point needs `concs` to be matched",
                    path=self.label,
                )
            points.append(PointRef(i, tuple(point["concs"]), point.get("kv") or "none"))
        ref = CellRef(
            index=index,
            id=str(cell["id"]),
            config_key=str(cell.get("configKey", "")),
            hw=str(cell.get("hw", "")),
            ckpt=str(cell.get("ckpt", "")),
            label=str(cell.get("label", "")),
            submitted=cell["submitted"],
            routers=tuple(sorted(cell["routers"])),
            tiers=tuple((cell.get("kv") or {}).get("available") or ("none",)),
            points=points,
            shape=(),
            raw=cell,
        )
        measured = self.blocks(Selection(index, 0, ref.submitted, points[0].kv))
        ref.shape = deployment_shape(measured)
        return ref

    def blocks(self, sel: Selection) -> list[Block]:
        """The blocks of ``sel`` (do not mutate them): a new object per block, since matching
        knows blocks by id, but their values the decoder's own, which nothing here changes
        (a deep copy per selection was most of a review's decoding)."""
        if sel not in self._blocks:
            shown = self.decoder.shown_blocks(sel)
            self._shown[sel] = shown
            self._blocks[sel] = [block.copy() for block in shown]
        return self._blocks[sel]

    def identity(self, sel: Selection) -> tuple[int, ...]:
        """Which of the decoder's block objects ``sel`` shows: selections with the same
        identity show the same blocks (kept alive here, so an id is never reused)."""
        self.blocks(sel)
        return tuple(id(block) for block in self._shown[sel])

    def files(self, ci: int, router: str) -> dict[str, str]:
        return self.decoder.router_files(ci, router)

    def text(self, sel: Selection) -> str:
        """The "Copy all" text of one selection, exactly as the page would copy it."""
        if sel not in self._texts:
            self._texts[sel] = shell.copy_all(self.blocks(sel), self.files(sel.cell, sel.router))
        return self._texts[sel]

    def point_info(self, ci: int, pi: int) -> dict[str, Any]:
        return self.decoder.point_info(ci, pi)

    def is_measured(self, cell: CellRef, point: PointRef, router: str, kv: str) -> bool:
        return router == cell.submitted and kv == point.kv


def load_side(text: str, label: str) -> ModuleSide:
    """Parse and decode one module text; ``label`` names it in errors and reports."""
    return ModuleSide(decode.decoder_for_text(text, label))


def _as_int(value: Any, default: int) -> int:
    # A malformed count or size only makes the shape unknown to matching, never a crash.
    try:
        return int(value) if value else default
    except (TypeError, ValueError):
        return default


def _int_flag(block: Block, flag: str, default: int) -> int:
    for arg in block.get("args") or ():
        if arg and len(arg) > 1 and canonical_flag(arg[0]) == flag:
            return _as_int(arg[1], default)
    return default


def deployment_shape(blocks: Iterable[Block]) -> tuple[Any, ...]:
    """Roles, worker counts, nodes and parallelism of a deployment's workers.

    The same deployment keeps this shape across module versions even when its label wording,
    its id or any non-parallelism flag changes.
    """
    roles = []
    for block in blocks:
        if block.get("kind") != "worker":
            continue
        flags = {canonical_flag(arg[0]) for arg in block.get("args") or () if arg}
        roles.append(
            (
                str(block.get("role", "agg")),
                _as_int(block.get("workers"), 1),
                _as_int(block.get("nodes_per_worker"), 1),
                _int_flag(block, TP_FLAG, 1),
                _int_flag(block, EP_FLAG, 1),
                _int_flag(block, DP_FLAG, 1),
                DP_ATTENTION_FLAG in flags,
            )
        )
    order = {role: i for i, role in enumerate(WORKER_ROLES)}
    return tuple(sorted(roles, key=lambda r: (order.get(r[0], len(order)), r)))


@dataclass
class CellPair:
    old: CellRef
    new: CellRef

    @property
    def moved(self) -> bool:
        """Renumbered: the same deployment under a new id."""
        return self.old.id != self.new.id


@dataclass
class CellMatching:
    pairs: list[CellPair]
    added: list[CellRef]
    removed: list[CellRef]


def _deployment_key(cell: CellRef) -> tuple[Any, ...]:
    return (cell.config_key, cell.hw, cell.ckpt, cell.shape)


def _overlap(a: set[int], b: set[int]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def match_cells(old: Sequence[CellRef], new: Sequence[CellRef]) -> CellMatching:
    """Pair the cells of two versions; pairs come out in the new version's order."""
    pairs: dict[int, CellRef] = {}  # new index -> old cell
    old_left = {c.index: c for c in old}
    by_id = {c.id: c for c in old}
    for cell in new:
        twin = by_id.get(cell.id)
        if (
            twin is not None
            and twin.index in old_left
            and _deployment_key(twin) == _deployment_key(cell)
        ):
            pairs[cell.index] = old_left.pop(twin.index)
    # Renumbered cells: the same deployment of the same config under another id; when several
    # candidates share a deployment (ids with @c<conc> suffixes), the concurrencies decide.
    for cell in new:
        if cell.index in pairs:
            continue
        candidates = [c for c in old_left.values() if _deployment_key(c) == _deployment_key(cell)]
        if not candidates:
            continue
        best = max(candidates, key=lambda c: (_overlap(c.concs(), cell.concs()), -c.index))
        pairs[cell.index] = old_left.pop(best.index)
    matched = [CellPair(pairs[c.index], c) for c in new if c.index in pairs]
    added = [c for c in new if c.index not in pairs]
    removed = sorted(old_left.values(), key=lambda c: c.index)
    return CellMatching(matched, added, removed)


@dataclass
class PointPair:
    old: PointRef
    new: PointRef

    @property
    def regrouped(self) -> bool:
        """Matched by overlapping concurrencies rather than an identical list."""
        return self.old.concs != self.new.concs


@dataclass
class PointMatching:
    pairs: list[PointPair]
    added: list[PointRef]
    removed: list[PointRef]


def match_points(old: Sequence[PointRef], new: Sequence[PointRef]) -> PointMatching:
    """Points are the same when they measure the same concurrency list.

    A point whose concurrency list was regrouped (``[1, 2, 4]`` split into ``[1, 2]`` and
    ``[4]``) is paired with the old point it overlaps most, so its commands are still compared.
    """
    old_left = {p.index: p for p in old}
    pairs: dict[int, PointRef] = {}
    by_concs = {p.concs: p for p in old}
    for point in new:
        twin = by_concs.get(point.concs)
        if twin is not None and twin.index in old_left:
            pairs[point.index] = old_left.pop(twin.index)
    for point in new:
        if point.index in pairs:
            continue
        candidates = [p for p in old_left.values() if set(p.concs) & set(point.concs)]
        if candidates:
            best = max(candidates, key=lambda p: (len(set(p.concs) & set(point.concs)), -p.index))
            pairs[point.index] = old_left.pop(best.index)
    return PointMatching(
        [PointPair(pairs[p.index], p) for p in new if p.index in pairs],
        [p for p in new if p.index not in pairs],
        sorted(old_left.values(), key=lambda p: p.index),
    )


T = TypeVar("T")


def match_names(old: Iterable[T], new: Iterable[T]) -> tuple[list[T], list[T], list[T]]:
    """(in both, only in new, only in old) for routers, tiers, hardware or checkpoint ids."""
    old_list, new_list = list(old), list(new)
    old_set, new_set = set(old_list), set(new_list)
    return (
        [n for n in new_list if n in old_set],
        [n for n in new_list if n not in old_set],
        [o for o in old_list if o not in new_set],
    )


@dataclass
class BlockPair:
    title: str
    old: Block | None
    new: Block | None


def match_blocks(
    old: Sequence[Block], new: Sequence[Block], title: Callable[[Block], str] = shell.block_title
) -> list[BlockPair]:
    """Processes paired by kind and role, the n-th of a kind with the n-th; new order first."""
    seen: dict[tuple[str, str], int] = {}
    old_by_key: dict[tuple[tuple[str, str], int], Block] = {}
    for block in old:
        key = block_key(block)
        old_by_key[(key, seen.get(key, 0))] = block
        seen[key] = seen.get(key, 0) + 1
    counts: dict[tuple[str, str], int] = {}
    pairs = []
    for block in new:
        key = block_key(block)
        n = counts.get(key, 0)
        counts[key] = n + 1
        pairs.append(BlockPair(_titled(title(block), n), old_by_key.pop((key, n), None), block))
    for (_key, n), block in old_by_key.items():
        pairs.append(BlockPair(_titled(title(block), n), block, None))
    return pairs


def _titled(title: str, n: int) -> str:
    return title if n == 0 else f"{title} ({n + 1})"
