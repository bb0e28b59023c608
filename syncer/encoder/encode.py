"""Blocks -> the compact data module, proven by decoding it back before anything is written.

Input is a ``ModuleSpec`` (``syncer.encoder.cells``): every point's full blocks per router at
its measured KV tier. Output is the newest module format (cell ``prov``), compacted the way the
upstream generator compacts:

- a block equal or close to a block of an earlier cell is ``{overlay..., diff?, ref: [c, r, b]}``;
- a block of the non-submitted router is ``{from: i, cmd?, diff?}`` on the submitted router's block;
- points after the first carry a per-router ``patch`` relative to point 0 (one element per block,
  ``null`` where unchanged), nothing when their commands equal point 0's;
- environment dicts repeated across full blocks are pooled in ``envs`` and used by ``envRef``.

Each choice is the smallest emitted text among the candidates that decode exactly to the target
(``syncer.encoder.compact``), and ``proof.verify_roundtrip`` decodes the whole result with the
project's decoder before ``write_module`` may write it.
"""

from __future__ import annotations

import contextlib
import copy
import heapq
import json
import marshal
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Through the module: the refresh proof's tests replace cells_from_module there.
from syncer import gcpause
from syncer.cookbook.decode import Decoder
from syncer.cookbook.jsmodule import load_module, parse_module
from syncer.cookbook.jsvalues import clone
from syncer.encoder import cells as cells_mod
from syncer.encoder import compact
from syncer.encoder.cells import PROV_KEYS, CellSpec, ModuleSpec, PointSpec
from syncer.encoder.emit import emit_module
from syncer.encoder.proof import verify_roundtrip
from syncer.errors import SyncError
from syncer.fsio import write_atomic
from syncer.model import Block, block_data
from syncer.recent import Recent, by_value
from syncer.templating import render
from syncer.wording import js

MODULE_NAME = "agentx"
# Depth (nesting level) of a block entry inside ``cells[].routers.<r>.blocks[]`` and of a patch
# list inside ``cells[].points[].patch.<r>``: the emitted indentation the size model charges.
_BLOCK_DEPTH = 6
_PATCH_DEPTH = 5
# Candidates fully built per block after the cheap pre-screen; more finds nothing better on the
# reference modules and only costs time.
_SHORTLIST = 8


class _Signature:
    """A block's parts for the pre-screen: args, env and the other keys, as sets of elements.

    An element costs ``len(str(x)) + 8`` when only the target has it and ``len(str(x[0])) + 8``
    when only the source has it. Both are kept per element (``both``) with each part's totals,
    so an estimate is one set intersection per part: what the two blocks share is what is
    subtracted from the totals."""

    def __init__(self, block: Block) -> None:
        args: set[tuple[str, object]] = {(a[0], tuple(a[1:])) for a in block.get("args") or []}
        env: set[tuple[str, object]] = set((block.get("env") or {}).items())
        other: set[tuple[str, object]] = {
            (k, json.dumps(v, sort_keys=True)) for k, v in block.items() if k not in ("args", "env")
        }
        self.parts: list[tuple[frozenset[object], dict[object, int], int, int]] = []
        for part in (args, env, other):
            as_target = {x: len(str(x)) + 8 for x in part}
            as_source = {x: len(str(x[0])) + 8 for x in part}
            both: dict[object, int] = {x: as_target[x] + as_source[x] for x in part}
            self.parts.append(
                (frozenset(part), both, sum(as_target.values()), sum(as_source.values()))
            )


def _estimate(source_sig: _Signature, target_sig: _Signature) -> int:
    """Rough size of the diff turning a source into the target (pre-screen only): the cost of
    the target's elements the source lacks plus that of the source's the target lacks."""
    cost = 0
    for (s, _, _, s_total), (t, both, t_total, _) in zip(
        source_sig.parts, target_sig.parts, strict=True
    ):
        cost += t_total + s_total - sum(map(both.__getitem__, s & t))
    return cost


class Pool:
    """Earlier cells' materialised blocks, deduplicated, that a ``ref`` may point to."""

    def __init__(self) -> None:
        self.by_kind: dict[str, list[tuple[list[object], Block, _Signature]]] = {}
        self._seen: set[str] = set()

    def add(self, ci: int, router: str, blocks: list[Block]) -> None:
        for bi, block in enumerate(blocks):
            key = json.dumps(compact.canon(block), sort_keys=True)
            if key in self._seen:
                continue
            self._seen.add(key)
            self.by_kind.setdefault(str(block.get("kind")), []).append(
                ([ci, router, bi], block, _Signature(block))
            )

    def shortlist(self, target: Block) -> list[tuple[list[object], Block]]:
        sig = _Signature(target)
        pool = self.by_kind.get(str(target.get("kind")), [])
        # nsmallest is sorted(...)[:n], ties in pool order included, without sorting it all.
        ranked = heapq.nsmallest(_SHORTLIST, pool, key=lambda item: _estimate(item[2], sig))
        return [(ref, block) for ref, block, _ in ranked]


def _candidates(
    target: Block, router: str, cell: CellSpec | None, pool: Pool
) -> Iterator[dict[str, object]]:
    """The entries other than the block itself that decode to ``target``, in the order
    ``best_entry`` weighs them (the first of equal size wins): ``from`` on ``cell``'s submitted
    router (when ``cell`` is given and ``router`` is another), then ``ref`` into ``pool``."""
    if cell is not None and router != cell.submitted and cell.submitted in cell.points[0].blocks:
        for bi, source in enumerate(cell.points[0].blocks[cell.submitted]):
            entry = compact.block_entry(source, target, prefix={"from": bi}, suffix={})
            if entry is not None:
                yield entry
    # (ranked only when asked for: ``writes_whole`` often stops at a ``from``)
    for ref, source in pool.shortlist(target):
        entry = compact.block_entry(source, target, prefix={}, suffix={"ref": ref})
        if entry is not None:
            yield entry


def best_entry(
    target: Block,
    router: str,
    cell: CellSpec | None,
    pool: Pool,
) -> dict[str, object]:
    """The smallest entry decoding to ``target``: the block itself, a ``from`` on ``cell``'s
    submitted router (when ``cell`` is given and ``router`` is another), or a ``ref`` into
    ``pool``."""
    best: dict[str, object] = block_data(target)
    best_size = compact.layout_size(best, _BLOCK_DEPTH)
    for entry in _candidates(target, router, cell, pool):
        # Sized only as far as it takes to know it is not smaller than the best so far.
        size = compact.layout_size(entry, _BLOCK_DEPTH, best_size - 1)
        if size < best_size:
            best, best_size = entry, size
    # The entries share the target's objects (and ``pool_envs`` edits the one kept): a copy.
    kept: dict[str, object] = clone(best)
    return kept


def writes_whole(target: Block, router: str, cell: CellSpec | None, pool: Pool) -> bool:
    """Whether ``best_entry`` keeps the block itself: decided at the first smaller candidate,
    without building or sizing the rest."""
    size = compact.layout_size(block_data(target), _BLOCK_DEPTH)
    return all(
        compact.layout_size(entry, _BLOCK_DEPTH, size - 1) >= size
        for entry in _candidates(target, router, cell, pool)
    )


def _point_value(
    point: PointSpec, patch: dict[str, object], cell_prov: dict[str, str]
) -> dict[str, object]:
    out: dict[str, object] = {"concs": list(point.concs), "item": point.item}
    if point.override is not None:
        out["override"] = point.override
    if point.golden_al is not None:
        out["goldenAL"] = point.golden_al
    out["kv"] = point.kv
    if patch:
        out["patch"] = patch
    for key in PROV_KEYS:
        if key in point.prov and cell_prov.get(key) != point.prov[key]:
            out[key] = point.prov[key]
    return out


def _cell_prov(points: list[PointSpec]) -> dict[str, str]:
    """Provenance every point shares; ``job`` stays per point (one job per measured point)."""
    prov: dict[str, str] = {}
    for key in PROV_KEYS:
        if key == "job":
            continue
        values = [p.prov.get(key) for p in points]
        if values and all(v is not None and v == values[0] for v in values):
            prov[key] = str(values[0])
    return prov


def _check_spec(spec: ModuleSpec) -> None:
    ids: set[str] = set()
    hardware = {h["id"] for h in spec.hardware}
    for cell in spec.cells:
        where = f"cell {cell.id}"
        if cell.id in ids:
            raise SyncError(f"{where}: duplicate cell id")
        ids.add(cell.id)
        if cell.meta.get("hw") not in hardware:
            raise SyncError(
                f"{where}: hardware {js(cell.meta.get('hw'))} is not in the hardware list"
            )
        if not cell.points:
            raise SyncError(f"{where}: a cell needs at least one point")
        if cell.submitted not in cell.routers:
            raise SyncError(f"{where}: submitted router {js(cell.submitted)} has no blocks")
        for pi, point in enumerate(cell.points):
            if set(point.blocks) != set(cell.routers):
                raise SyncError(
                    f"{where} point {pi}: routers {sorted(point.blocks)} differ from the cell's "
                    f"{sorted(cell.routers)}"
                )
    for hw in spec.hardware:
        if not any(c.meta.get("hw") == hw["id"] for c in spec.cells):
            raise SyncError(f"hardware {js(hw['id'])} has no cell; the page needs one per chip")


def pool_envs(cells: list[dict[str, Any]], start: int = 0) -> list[dict[str, str]]:
    """Move env dicts repeated across full router blocks of ``cells`` into the shared ``envs``
    list when that makes the file smaller (pool order = first use). The pooled envs get the
    indices from ``start`` on: an edit appends them to a published pool without renumbering it."""
    uses: dict[str, list[dict[str, Any]]] = {}
    order: list[str] = []
    for cell in cells:
        for router in cell["routers"].values():
            for entry in router["blocks"]:
                env = entry.get("env")
                if "kind" not in entry or not isinstance(env, dict) or not env:
                    continue
                if list(env) != sorted(env):
                    continue  # envRef resolves sorted; an unsorted env must stay inline
                key = json.dumps(env)
                if key not in uses:
                    order.append(key)
                uses.setdefault(key, []).append(entry)
    pooled: list[dict[str, str]] = []
    for key in order:
        entries = uses[key]
        env = entries[0]["env"]
        index = start + len(pooled)
        inline = len(entries) * compact.member_size("env", env, _BLOCK_DEPTH + 1)
        shared = compact.layout_size(env, 2) + 2 + 2
        shared += len(entries) * compact.member_size("envRef", index, _BLOCK_DEPTH + 1)
        if shared >= inline:
            continue
        pooled.append(env)
        for entry in entries:
            del entry["env"]
            entry["envRef"] = index
    return pooled


class _Patches:
    """The router patches of one cell's points, each made once per distinct router blocks: a
    cell's points often repeat a router's blocks (a third of the patches of the reference
    modules). Blocks that marshal to the same bytes are equal key for key, in order, so their
    patch is the same; each use gets its own copy."""

    def __init__(self, point0: PointSpec) -> None:
        self.point0 = point0
        self._made: dict[tuple[str, bytes], object] = {}

    def patch(self, router: str, blocks: list[Block]) -> object:
        try:
            key = (router, marshal.dumps(blocks, 2))
        except ValueError:  # not JSON data: made each time
            return compact.router_patch(self.point0.blocks[router], blocks, _PATCH_DEPTH)
        if key not in self._made:
            self._made[key] = compact.router_patch(self.point0.blocks[router], blocks, _PATCH_DEPTH)
        return clone(self._made[key])


def _replace(base: list[Block], blocks: list[Block]) -> object:
    """The uncompacted patch of a router: none when the point shows point 0's blocks."""
    return None if compact.same_list(base, blocks) else {"replace": clone(blocks)}


def encode_cell(cell: CellSpec, pool: Pool | None) -> dict[str, object]:
    """One cell's value (newest format): its routers' entries against ``pool`` (the blocks of
    the cells before it, or of the cells an edit keeps), its points' patches relative to point
    0, its shared provenance; envs still inline (``pool_envs``). Not yet verified.

    ``pool`` None: nothing compacted (``plain_module``), every block whole and a later point's
    changed router as its ``replace``."""
    point0 = cell.points[0]
    routers_out: dict[str, object] = {}
    for router, meta in cell.routers.items():
        routers_out[router] = {
            "install": list(meta.install),
            "files": list(meta.files),
            "blocks": [
                clone(block_data(block)) if pool is None else best_entry(block, router, cell, pool)
                for block in point0.blocks[router]
            ],
        }
    prov = _cell_prov(cell.points)
    points_out = []
    patches = _Patches(point0)
    for pi, point in enumerate(cell.points):
        patch: dict[str, object] = {}
        if pi > 0:
            for router in cell.routers:
                if pool is None:
                    p = _replace(point0.blocks[router], point.blocks[router])
                else:
                    p = patches.patch(router, point.blocks[router])
                if p is not None:
                    patch[router] = p
        points_out.append(_point_value(point, patch, prov))
    value: dict[str, object] = {**copy.deepcopy(cell.meta)}
    value["prov"] = prov
    value["points"] = points_out
    value["routers"] = routers_out
    return value


def _head(spec: ModuleSpec) -> dict[str, object]:
    """The keys of the module value before its env pool: the spec's own, whatever the encoding
    of its cells."""
    return {
        "model": spec.model,
        "generatedOn": spec.generated_on,
        "source": copy.deepcopy(spec.source),
        "hardware": copy.deepcopy(spec.hardware),
        "checkpoints": copy.deepcopy(spec.checkpoints),
    }


def head_lines(spec: ModuleSpec, header: list[str]) -> list[str]:
    """The lines ``module_text(compact_module(spec), header)`` begins with, up to the line of
    its env pool, without encoding a cell: the layout writes one key per line in order, so what
    comes before ``envs`` is the same whatever the pool and the cells turn out to be. Raises
    the ``SyncError`` compact_module would raise for ``spec``."""
    _check_spec(spec)
    lines = module_text({**_head(spec), "envs": []}, header).split("\n")
    return lines[: next(i for i, line in enumerate(lines) if line.startswith(' "envs": '))]


def head_and_env_lines(spec: ModuleSpec, header: list[str]) -> list[str]:
    """The lines ``module_text(compact_module(spec), header)`` begins with, up to the end of
    its env pool, without encoding a patch or a ``ref``: the pool holds the envs of the blocks
    the encoder writes whole (``writes_whole``), pooled by the rule of ``pool_envs``, and the
    layout writes it the same whatever follows. Raises the ``SyncError`` compact_module would
    raise for ``spec``."""
    _check_spec(spec)
    pool = Pool()
    cells: list[dict[str, Any]] = []
    for ci, cell in enumerate(spec.cells):
        routers: dict[str, object] = {}
        for router in cell.routers:
            # a shallow copy of a block written whole (pool_envs moves its env), {} for the rest
            routers[router] = {
                "blocks": [
                    dict(block_data(b)) if writes_whole(b, router, cell, pool) else {}
                    for b in cell.points[0].blocks[router]
                ]
            }
        cells.append({"routers": routers})
        for router in cell.routers:
            pool.add(ci, router, cell.points[0].blocks[router])
    # "files" stands for the key after the pool (kvMooncake or files): its line ends the pool.
    value = {**_head(spec), "envs": pool_envs(cells), "files": []}
    lines = module_text(value, header).split("\n")
    return lines[: next(i for i, line in enumerate(lines) if line.startswith(' "files": '))]


# Specs compacted in this process (by value) -> the value's marshal bytes.
_COMPACTED: Recent[bytes, bytes] = Recent(16)


def compact_module(spec: ModuleSpec) -> dict[str, object]:
    """The module value (newest format) for ``spec``; not yet verified. A fresh value, the
    caller's to change.

    The same spec is compacted once per process: the compaction is a function of the spec
    alone, and the same module's spec is compacted again where a process reads it twice (the
    audit's round trip of a module that generate or the bot also encoded, each audit of a
    cookbook the bot's runs share); the search costs twenty times the spec's ``repr``, which
    keys it by value (see ``generate._encode_once``). A spec refused is not kept."""
    key = by_value(spec)
    done = _COMPACTED.recall(key)
    if done is not None:
        again: dict[str, object] = marshal.loads(done)
        return again
    value = _compact_module(spec)
    # not JSON data (a str subclass from a caller's spec): not kept
    with contextlib.suppress(ValueError):
        _COMPACTED.keep(key, marshal.dumps(value, 2))
    return value


def _compact_module(spec: ModuleSpec) -> dict[str, object]:
    _check_spec(spec)
    pool = Pool()
    cells_out: list[dict[str, object]] = []
    for ci, cell in enumerate(spec.cells):
        cells_out.append(encode_cell(cell, pool))
        for router in cell.routers:
            pool.add(ci, router, cell.points[0].blocks[router])
    return _module_value(spec, pool_envs(cells_out), cells_out)


def plain_module(spec: ModuleSpec) -> dict[str, object]:
    """A module value (newest format) that decodes as ``compact_module(spec)`` does, with
    nothing compacted: no ``ref``, ``from``, diff or env pool, so it costs a copy of the blocks
    rather than the search. For reading a spec back through the decoder (the audit's reviewer
    diff), never for writing."""
    _check_spec(spec)
    return _module_value(spec, [], [encode_cell(cell, None) for cell in spec.cells])


def _module_value(
    spec: ModuleSpec, envs: list[dict[str, str]], cells_out: list[dict[str, object]]
) -> dict[str, object]:
    out: dict[str, object] = {**_head(spec), "envs": envs}
    if spec.kv_mooncake is not None:
        out["kvMooncake"] = copy.deepcopy(spec.kv_mooncake)
    out["files"] = copy.deepcopy(spec.files)
    out["cells"] = cells_out
    return out


# --- text and writing ------------------------------------------------------------------------


def header_lines(source: dict[str, Any]) -> list[str]:
    """The module's comment header, from ``syncer/templates/module_header.j2``."""
    prs = sorted({str(p) for p in source.get("prs", {})}, key=lambda p: (len(p), p))
    main = str(source.get("main", ""))[:12]
    if not re.fullmatch(r"[0-9a-f]{12}", main):
        raise SyncError(f"source.main {js(source.get('main'))} is not a commit id")
    bad = [p for p in prs if not (p.isascii() and p.isdigit())]
    if bad:
        raise SyncError(f"source.prs has keys that are not PR numbers: {bad}")
    text = render("module_header.j2", main=main, prs=prs)
    return text.rstrip("\n").split("\n")


def module_text(value: dict[str, object], header: list[str]) -> str:
    return emit_module(header, MODULE_NAME, value)


def encode_module(
    spec: ModuleSpec,
    *,
    path: str = "<module>",
    reference: Decoder | None = None,
    keep: set[str] | None = None,
    header: list[str] | None = None,
) -> tuple[dict[str, object], str, int]:
    """Compact, prove and emit ``spec``: returns ``(value, text, cases compared)``; raises
    ``SyncError`` naming the first difference."""
    with gcpause.paused():  # every candidate and every decoded case is alive until the end
        value = compact_module(spec)
        compared = verify_roundtrip(value, spec, path=path, reference=reference, keep=keep)
    text = module_text(value, header if header is not None else header_lines(spec.source))
    # The text is what gets written: parse it back too, so the emitter is covered by the proof.

    parsed = parse_module(text, path)
    if parsed.name != MODULE_NAME or parsed.value != value:
        raise SyncError(
            "roundtrip: the emitted text does not parse back to the encoded value", path=path
        )
    return value, text, compared


def reencode_file(source: Path, out: Path | None = None) -> tuple[str, int]:
    """Decode ``source`` (any module version) completely and encode it again in the newest
    format; the result is written to ``out`` only when it decodes to exactly the same cases.
    Returns the new text and the number of cases compared."""
    module = load_module(source)
    reference = Decoder(module.value, str(source))
    spec = cells_mod.cells_from_module(module.value, reference, str(source))
    # The header names the whole sync run's PRs, which is not always this module's source.prs:
    # keep it as it was.
    _, text, compared = encode_module(
        spec, path=str(source), reference=reference, header=list(module.header)
    )
    if out is not None:
        write_atomic(out, text)
    return text, compared
