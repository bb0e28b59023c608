"""The roundtrip proof of an encoded module: decoded back with the project's decoder, every
(cell, point, router) must give exactly the blocks it was built from, every case of the module it
re-encodes or edits must decode identically (blocks, status, provenance), and every block must be
safe to paste; the first difference is the error."""

from __future__ import annotations

from syncer.cookbook.case import Case
from syncer.cookbook.decode import Decoder
from syncer.cookbook.shell import check_publishable_each
from syncer.encoder import compact
from syncer.encoder.cells import ModuleSpec
from syncer.errors import SyncError
from syncer.model import Block, Selection, block_data
from syncer.wording import js


def _describe(expected: list[Block], got: list[Block]) -> str:
    if len(expected) != len(got):
        kinds_e = [b.get("kind") for b in expected]
        kinds_g = [b.get("kind") for b in got]
        return f"{len(expected)} blocks {kinds_e} expected, {len(got)} decoded {kinds_g}"
    for i, (eb, gb) in enumerate(zip(expected, got, strict=True)):
        e, g = block_data(eb), block_data(gb)
        if compact.same(eb, gb):
            continue
        where = f"block {i} ({e.get('kind')})"
        for key in sorted(set(e) | set(g)):
            if key == "args" and e.get(key) != g.get(key):
                ea = {a[0]: a[1:] for a in e.get("args") or []}
                ga = {a[0]: a[1:] for a in g.get("args") or []}
                for flag in list(ea) + [f for f in ga if f not in ea]:
                    if ea.get(flag) != ga.get(flag):
                        return f"{where}: {flag} expected {ea.get(flag)}, decoded {ga.get(flag)}"
                return f"{where}: argument order differs"
            if key == "env" and list((e.get(key) or {}).items()) != list(
                (g.get(key) or {}).items()
            ):
                ee, ge = e.get(key) or {}, g.get(key) or {}
                for name in list(ee) + [n for n in ge if n not in ee]:
                    if ee.get(name) != ge.get(name):
                        return (
                            f"{where}: env {name} expected {js(ee.get(name))}, "
                            f"decoded {js(ge.get(name))}"
                        )
                return f"{where}: env order differs"
            ev, gv = e.get(key, "<absent>"), g.get(key, "<absent>")
            if ev != gv:
                return f"{where}: {key} expected {js(ev)}, decoded {js(gv)}"
    return "blocks differ"


def verify_roundtrip(
    value: dict[str, object],
    spec: ModuleSpec,
    *,
    path: str = "<module>",
    reference: Decoder | None = None,
    keep: set[str] | None = None,
) -> int:
    """Decode ``value`` with the project's decoder and compare with what it was built from.

    Every (cell, point, router) at the measured tier must give exactly the spec's blocks; with
    ``reference`` (the decoder of the module being re-encoded) every case of it, derived KV
    tiers, status and provenance included, must decode identically (only the cells whose ids
    are in ``keep`` when given: the cells kept from a published module). Every decoded block must be
    safe to paste. Returns the number of cases of the module (each decoded, and compared where
    there is something to compare it with); raises ``SyncError`` naming the first difference.
    """
    decoder = Decoder(value, path)
    compared = 0
    for ci, cell in enumerate(spec.cells):
        for pi, point in enumerate(cell.points):
            for router in cell.routers:
                got = decoder.shown_blocks(Selection(ci, pi, router, None))
                if not compact.same_list(point.blocks[router], got):
                    raise SyncError(
                        f"roundtrip: cell {cell.id} point {pi} router {router} tier {point.kv}: "
                        + _describe(point.blocks[router], got),
                        path=path,
                    )
                compared += 1
    # Decoded once, shared by both checks below; nothing here mutates a block.
    cases = list(decoder.cases(fresh=False))
    if reference is not None:
        compare_reference(cases, decoder, reference, path, keep)
    check_publishable_each(
        (f"{path}: {case.cell_id} point {case.point} {case.router} {case.kv}", case.blocks)
        for case in cases
    )
    # The number reported is the module's cases, (cell, point, router, KV tier) as the page
    # offers them and `sync decode --all` lists them: one meaning in every command (it was
    # the comparisons made, 18 in generate and 54 in reencode for a module of 36 cases).
    return len(cases)


def compare_reference(
    cases: list[Case],
    decoder: Decoder,
    reference: Decoder,
    path: str,
    keep: set[str] | None = None,
) -> int:
    """Every case of ``reference`` (of the cells whose id is in ``keep``, or all) must decode
    identically from the new module (``cases``, every case of ``decoder``): blocks, status and
    provenance. Cells are matched by id, so kept cells may move when another config's cells are
    replaced."""
    compared = 0
    seen_points: set[tuple[str, int]] = set()
    new_cases = {(c.cell_id, c.point, c.router, c.kv): c for c in cases}
    new_index = {c.cell_id: c.cell for c in new_cases.values()}
    for case in reference.cases(fresh=False):
        if keep is not None and case.cell_id not in keep:
            continue
        where = (
            f"roundtrip: cell {case.cell_id} point {case.point} router {case.router} tier {case.kv}"
        )
        mine = new_cases.pop((case.cell_id, case.point, case.router, case.kv), None)
        if mine is None:
            raise SyncError(f"{where}: missing from the new module", path=path)
        if not compact.same_list(case.blocks, mine.blocks):
            raise SyncError(f"{where}: {_describe(case.blocks, mine.blocks)}", path=path)
        if mine.status != case.status:
            raise SyncError(
                f"{where}: status {js(case.status)} decoded as {js(mine.status)}", path=path
            )
        if (case.cell_id, case.point) not in seen_points:
            seen_points.add((case.cell_id, case.point))
            old_info = _comparable_info(reference.point_info(case.cell, case.point))
            new_info = _comparable_info(decoder.point_info(new_index[case.cell_id], case.point))
            if old_info != new_info:
                keys = sorted(
                    k for k in set(old_info) | set(new_info) if old_info.get(k) != new_info.get(k)
                )
                detail = ", ".join(
                    f"{k}: {js(old_info.get(k))} -> {js(new_info.get(k))}" for k in keys
                )
                raise SyncError(
                    f"roundtrip: cell {case.cell_id} point {case.point}: "
                    f"provenance differs ({detail})",
                    path=path,
                )
        compared += 1
    if keep is None and new_cases:
        extra = sorted(new_cases)[0]
        raise SyncError(
            f"roundtrip: the new module has a case the old one lacks: {extra}", path=path
        )
    return compared


# Point info keys that describe *what was measured* (provenance and links); layout keys such as
# ``patch`` and the version-specific raw ids are not part of the comparison.
_INFO_KEYS = (
    "concs",
    "item",
    "override",
    "goldenAL",
    "kv",
    "status",
    "pr",
    "date",
    "sha",
    "recipeUrl",
    "runUrl",
    "jobUrl",
    "prUrl",
    "useComment",
)


def _comparable_info(info: dict[str, object]) -> dict[str, object]:
    out = {k: info[k] for k in _INFO_KEYS if info.get(k) is not None}
    # A point without a tier (modules older than the KV dimension) was measured GPU-only.
    out["kv"] = info.get("kv") or "none"
    return out
