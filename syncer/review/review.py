"""The reviewer diff of two module versions: the change model and its rendering entry points.

``review_texts(old, new, ...)`` decodes both module texts, matches cells, points, routers and KV
tiers (``compare.matching``), compares every matched selection process by process
(``compare.review_changes``) and keeps, per cell, the rows a docs reviewer reads: flags and env
added / removed / changed, processes added or removed, the command text diff of every changed
measured selection, and the cell-level facts (image, provenance, status, labels). Changes seen
only in derived selections (the router or KV tier InferenceX did not run) are kept apart from
measured ones.

``Review.json()`` is its JSON document and ``.exit_code`` is 0 when no command changed, 1
otherwise; :mod:`syncer.review.report` makes its report (markdown, terminal).
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from syncer.model import Selection
from syncer.review.changes import (
    KINDS,
    Change,
    block_changes,
    compare_files,
    named_files,
)
from syncer.review.matching import (
    CellPair,
    CellRef,
    ModuleSide,
    PointRef,
    load_side,
    match_cells,
    match_names,
    match_points,
)

SCHEMA = 1

# Provenance keys of the decoder's merged point info (URLs expanded in every module version),
# so an old per-point module and a new ``prov`` module compare key by key; named as a docs
# reviewer reads them.
PROVENANCE_KEYS = {
    "status": "status",
    "sha": "source commit",
    "recipeUrl": "recipe",
    "override": "recipe variant",
    "runUrl": "run",
    "jobUrl": "job",
    "prUrl": "PR",
    "useComment": "/use comment",
    "date": "dashboard date",
    "goldenAL": "golden AL",
    # which selection is the verified one (the page's default tier) moves with it
    "kv": "measured KV tier",
}
# Cell keys that change what a user runs (the rest is how the page labels and credits it).
COMMAND_FIELDS = ("image tag", "image digest", "setup")


@dataclass(frozen=True)
class MetaChange:
    """A cell-level fact that changed; ``points`` None means every point of the cell."""

    field: str
    old: str | None
    new: str | None
    points: tuple[str, ...] | None = None

    @property
    def command(self) -> bool:
        return self.field in COMMAND_FIELDS or self.field.startswith("install")

    def as_json(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "old": self.old,
            "new": self.new,
            "points": None if self.points is None else list(self.points),
            "command": self.command,
        }


@dataclass
class Row:
    """A change and the selections it appears in (point names, or point · router · tier)."""

    change: Change
    where: list[str] = field(default_factory=list)
    all_points: bool = False

    def as_json(self) -> dict[str, Any]:
        return {**self.change.as_json(), "where": list(self.where), "allPoints": self.all_points}


@dataclass
class TextDiff:
    """The unified diff of the "Copy all" text, shared by the selections in ``where``."""

    where: list[str]
    diff: str

    def as_json(self) -> dict[str, Any]:
        return {"where": list(self.where), "diff": self.diff}


@dataclass
class NewText:
    """The full commands of an added cell, shared by the points in ``where``."""

    where: list[str]
    text: str

    def as_json(self) -> dict[str, Any]:
        return {"where": list(self.where), "text": self.text}


@dataclass
class CellReview:
    old: CellRef | None
    new: CellRef | None
    meta: list[MetaChange] = field(default_factory=list)
    points_added: list[str] = field(default_factory=list)
    points_removed: list[str] = field(default_factory=list)
    points_regrouped: list[tuple[str, str]] = field(default_factory=list)
    routers_added: list[str] = field(default_factory=list)
    routers_removed: list[str] = field(default_factory=list)
    tiers_added: list[str] = field(default_factory=list)
    tiers_removed: list[str] = field(default_factory=list)
    measured: list[Row] = field(default_factory=list)
    derived: list[Row] = field(default_factory=list)
    diffs: list[TextDiff] = field(default_factory=list)
    texts: list[NewText] = field(default_factory=list)
    status: str = ""

    @property
    def measured_where(self) -> str:
        """The selection InferenceX ran (a removed cell has none left)."""
        return "" if self.new is None else f"router {self.new.submitted}"

    @property
    def cell(self) -> CellRef:
        cell = self.new or self.old
        assert cell is not None
        return cell

    @property
    def state(self) -> str:
        if self.old is None:
            return "added"
        if self.new is None:
            return "removed"
        if self.command_changes:
            return "changed"
        return "metadata" if self.meta or self.moved else "unchanged"

    @property
    def moved(self) -> bool:
        return self.old is not None and self.new is not None and self.old.id != self.new.id

    @property
    def structural(self) -> int:
        return sum(
            len(x)
            for x in (
                self.points_added,
                self.points_removed,
                self.routers_added,
                self.routers_removed,
                self.tiers_added,
                self.tiers_removed,
            )
        )

    @property
    def command_changes(self) -> int:
        return (
            len(self.measured)
            + len(self.derived)
            + self.structural
            + sum(1 for m in self.meta if m.command)
        )

    def as_json(self) -> dict[str, Any]:
        cell = self.cell
        return {
            "state": self.state,
            "id": cell.id,
            "oldId": None if self.old is None else self.old.id,
            "moved": self.moved,
            "configKey": cell.config_key,
            "hw": cell.hw,
            "ckpt": cell.ckpt,
            "label": cell.label,
            "points": [p.name for p in cell.points],
            "meta": [m.as_json() for m in self.meta],
            "pointsAdded": self.points_added,
            "pointsRemoved": self.points_removed,
            "pointsRegrouped": [list(p) for p in self.points_regrouped],
            "routersAdded": self.routers_added,
            "routersRemoved": self.routers_removed,
            "tiersAdded": self.tiers_added,
            "tiersRemoved": self.tiers_removed,
            "measuredSelection": self.measured_where,
            "measured": [r.as_json() for r in self.measured],
            "derived": [r.as_json() for r in self.derived],
            "diffs": [d.as_json() for d in self.diffs],
            "commands": [t.as_json() for t in self.texts],
            "status": self.status,
        }


@dataclass
class Review:
    """The reviewer diff of two module versions."""

    old_label: str
    new_label: str
    cells: list[CellReview]
    hardware_added: list[str] = field(default_factory=list)
    hardware_removed: list[str] = field(default_factory=list)
    checkpoints_added: list[str] = field(default_factory=list)
    checkpoints_removed: list[str] = field(default_factory=list)
    module: list[MetaChange] = field(default_factory=list)

    @property
    def has_changes(self) -> bool:
        """True when a user would copy or run something different."""
        return bool(
            self.hardware_added
            or self.hardware_removed
            or self.checkpoints_added
            or self.checkpoints_removed
            or any(c.state in ("added", "removed", "changed") for c in self.cells)
        )

    @property
    def exit_code(self) -> int:
        return 1 if self.has_changes else 0

    def by_state(self, state: str) -> list[CellReview]:
        return [c for c in self.cells if c.state == state]

    def counts(self) -> dict[str, Any]:
        def tally(rows: Iterable[Row]) -> dict[str, dict[str, int]]:
            out = {k: {"added": 0, "removed": 0, "changed": 0} for k in KINDS}
            for row in rows:
                out[row.change.kind][row.change.action] += 1
            return out

        matched = [c for c in self.cells if c.old is not None and c.new is not None]
        return {
            "cells": {
                "matched": len(matched),
                "changed": len(self.by_state("changed")),
                "metadataOnly": len(self.by_state("metadata")),
                "unchanged": len(self.by_state("unchanged")),
                "added": len(self.by_state("added")),
                "removed": len(self.by_state("removed")),
                "moved": sum(1 for c in matched if c.moved),
            },
            "hardware": {"added": len(self.hardware_added), "removed": len(self.hardware_removed)},
            "checkpoints": {
                "added": len(self.checkpoints_added),
                "removed": len(self.checkpoints_removed),
            },
            "points": {
                "added": sum(len(c.points_added) for c in matched),
                "removed": sum(len(c.points_removed) for c in matched),
            },
            "routers": {
                "added": sum(len(c.routers_added) for c in matched),
                "removed": sum(len(c.routers_removed) for c in matched),
            },
            "tiers": {
                "added": sum(len(c.tiers_added) for c in matched),
                "removed": sum(len(c.tiers_removed) for c in matched),
            },
            "measured": tally(r for c in matched for r in c.measured),
            "derivedOnly": tally(r for c in matched for r in c.derived),
            "measuredRows": sum(len(c.measured) for c in matched),
            "derivedOnlyRows": sum(len(c.derived) for c in matched),
            "cellFields": sum(len(c.meta) for c in matched),
        }

    def json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "old": self.old_label,
            "new": self.new_label,
            "hasChanges": self.has_changes,
            "exitCode": self.exit_code,
            "counts": self.counts(),
            "module": [m.as_json() for m in self.module],
            "hardware": {"added": self.hardware_added, "removed": self.hardware_removed},
            "checkpoints": {"added": self.checkpoints_added, "removed": self.checkpoints_removed},
            "cells": [c.as_json() for c in self.cells if c.state != "unchanged"],
        }


# ---- building the review -------------------------------------------------------------------


def review_texts(old: str | None, new: str, *, old_label: str, new_label: str) -> Review:
    """Decode both module texts and review them; ``old=None`` means the module is new."""
    new_side = load_side(new, new_label)
    old_side = None if old is None else load_side(old, old_label)
    return review_sides(old_side, new_side)


def review_sides(
    old: ModuleSide | None, new: ModuleSide, changed: Collection[int] | None = None
) -> Review:
    """The review of ``old`` -> ``new``. ``changed``: the indexes of the only cells of ``new``
    that can differ from the old cell of the same id (the audit edits the drifted cells of a
    module and keeps the rest as decoded): a cell outside it, matched to its own id, is
    unchanged without comparing its selections; None compares every matched cell."""
    old_cells = [] if old is None else old.cells
    matching = match_cells(old_cells, new.cells)
    reviews: list[CellReview] = []
    pairs = {id(p.new): p for p in matching.pairs}
    for cell in new.cells:
        pair = pairs.get(id(cell))
        if pair is None:
            reviews.append(_added_cell(new, cell))
        elif changed is not None and cell.index not in changed and not pair.moved:
            reviews.append(CellReview(old=pair.old, new=pair.new))
        else:
            assert old is not None
            reviews.append(_matched_cell(old, new, pair))
    if old is not None:
        reviews.extend(_removed_cell(old, cell) for cell in matching.removed)
    hw_old = [] if old is None else [str(h.get("id")) for h in old.hardware]
    ck_old = [] if old is None else [str(c.get("id")) for c in old.checkpoints]
    _, hw_added, hw_removed = match_names(hw_old, [str(h.get("id")) for h in new.hardware])
    _, ck_added, ck_removed = match_names(ck_old, [str(c.get("id")) for c in new.checkpoints])
    return Review(
        old_label="(none)" if old is None else old.label,
        new_label=new.label,
        cells=reviews,
        hardware_added=hw_added,
        hardware_removed=hw_removed,
        checkpoints_added=ck_added,
        checkpoints_removed=ck_removed,
        module=[] if old is None else _module_meta(old, new),
    )


def _module_meta(old: ModuleSide, new: ModuleSide) -> list[MetaChange]:
    out = []
    for name, get in (
        ("model", lambda d: d.get("model")),
        ("generatedOn", lambda d: d.get("generatedOn")),
        ("InferenceX main", lambda d: (d.get("source") or {}).get("main")),
        (
            "InferenceX PRs",
            lambda d: ", ".join(
                f"#{n}" for n in sorted((d.get("source") or {}).get("prs") or {}, key=_num)
            ),
        ),
    ):
        before, after = _str(get(old.data)), _str(get(new.data))
        if before != after:
            out.append(MetaChange(name, before, after))
    old_hw = {str(h.get("id")): str(h.get("label")) for h in old.hardware}
    for hw in new.hardware:
        hid = str(hw.get("id"))
        if hid in old_hw and old_hw[hid] != str(hw.get("label")):
            out.append(MetaChange(f"hardware label ({hid})", old_hw[hid], str(hw.get("label"))))
    return out


def _num(text: str) -> tuple[int, str]:
    return (int(text), "") if text.isascii() and text.isdigit() else (1 << 62, text)


def _str(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, list):
        return "\n".join(_str(v) or "" for v in value) or None
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_str(v)}" for k, v in value.items()) or None
    return str(value)


def _image_parts(image: Any) -> tuple[str | None, str | None]:
    text = _str(image)
    if text is None:
        return None, None
    tag, _, digest = text.partition("@")
    return tag, digest or None


def _setup_lines(setup: Any) -> str | None:
    lines = []
    for item in setup if isinstance(setup, list) else [setup] if setup else []:
        if isinstance(item, dict):
            lines.append(str(item.get("command") or item.get("script") or ""))
        else:
            lines.append(str(item))
    return "\n".join(lines) or None


def _cell_meta(pair: CellPair) -> list[MetaChange]:
    old, new = pair.old.raw, pair.new.raw
    out: list[MetaChange] = []

    def put(name: str, before: Any, after: Any) -> None:
        if before != after:
            out.append(MetaChange(name, before, after))

    put("label", _str(old.get("label")), _str(new.get("label")))
    put("detail", _str(old.get("detail")), _str(new.get("detail")))
    put("gpus", _str(old.get("gpus")), _str(new.get("gpus")))
    old_tag, old_digest = _image_parts(old.get("image"))
    new_tag, new_digest = _image_parts(new.get("image"))
    put("image tag", old_tag, new_tag)
    put("image digest", old_digest, new_digest)
    put("image status", _str(old.get("imageStatus")), _str(new.get("imageStatus")))
    put("image commit", _str(old.get("imageCommit")), _str(new.get("imageCommit")))
    put("submitted router", _str(old.get("submitted")), _str(new.get("submitted")))
    put("setup", _setup_lines(old.get("setup")), _setup_lines(new.get("setup")))
    put("disclosures", _str(old.get("disclosures")), _str(new.get("disclosures")))
    for router in sorted(set(pair.old.routers) & set(pair.new.routers)):
        put(
            f"install ({router})",
            _str((old["routers"][router] or {}).get("install")),
            _str((new["routers"][router] or {}).get("install")),
        )
    return out


def _provenance(
    old: ModuleSide, new: ModuleSide, pair: CellPair, points: list[Any]
) -> list[MetaChange]:
    """Per-point provenance, collapsed to one row per (key, old, new) with its points."""
    rows: dict[tuple[str, str | None, str | None], list[str]] = {}
    for pp in points:
        before = old.point_info(pair.old.index, pp.old.index)
        after = new.point_info(pair.new.index, pp.new.index)
        for key in PROVENANCE_KEYS:
            b, a = _str(before.get(key)), _str(after.get(key))
            if b != a:
                rows.setdefault((key, b, a), []).append(pp.new.name)
    out = []
    for (key, b, a), where in rows.items():
        name = PROVENANCE_KEYS[key]
        everywhere = len(where) == len(points)
        out.append(MetaChange(name, b, a, None if everywhere else tuple(where)))
    return out


def _selection_name(point: PointRef, router: str, kv: str) -> str:
    return f"{point.name} · {router} · KV {kv}"


def _full_text(side: ModuleSide, sel: Selection) -> str:
    """The copied commands plus the router's config files, which a reviewer must also read."""
    text = side.text(sel)
    files = named_files(side.files(sel.cell, sel.router))
    for name, content in files.items():
        text += f"\n\n# file {name}\n{content}"
    return text


def unified(old_text: str, new_text: str, old_label: str, new_label: str) -> str:
    """Whole-text unified diff: every line shown, so the fold holds both full versions."""
    a, b = old_text.splitlines(), new_text.splitlines()
    lines = difflib.unified_diff(a, b, old_label, new_label, n=max(len(a), len(b)), lineterm="")
    return "\n".join(lines)


def _text_diff(
    old: ModuleSide, new: ModuleSide, old_sel: Selection, new_sel: Selection
) -> str | None:
    """The unified diff of a selection's full "Copy all" texts; None when they are equal."""
    old_text = _full_text(old, old_sel)
    new_text = _full_text(new, new_sel)
    if old_text == new_text:
        return None
    return unified(old_text, new_text, old.label, new.label)


def _matched_cell(old: ModuleSide, new: ModuleSide, pair: CellPair) -> CellReview:
    review = CellReview(old=pair.old, new=pair.new)
    review.meta = _cell_meta(pair)
    points = match_points(pair.old.points, pair.new.points)
    review.points_added = [p.name for p in points.added]
    review.points_removed = [p.name for p in points.removed]
    review.points_regrouped = [(p.old.name, p.new.name) for p in points.pairs if p.regrouped]
    routers, review.routers_added, review.routers_removed = match_names(
        pair.old.routers, pair.new.routers
    )
    tiers, review.tiers_added, review.tiers_removed = match_names(pair.old.tiers, pair.new.tiers)
    review.meta.extend(_provenance(old, new, pair, points.pairs))

    measured: dict[Change, list[str]] = {}
    derived: dict[Change, list[tuple[str, str, str]]] = {}
    diffs: dict[str, list[str]] = {}
    # A router's config files belong to the cell, not to a point or tier: compared once.
    file_changes = {
        router: compare_files(old.files(pair.old.index, router), new.files(pair.new.index, router))
        for router in routers
    }
    compared: dict[tuple[tuple[int, ...], tuple[int, ...]], list[Change]] = {}
    for pp in points.pairs:
        for router in routers:
            for kv in tiers:
                is_measured = old.is_measured(pair.old, pp.old, router, kv) or new.is_measured(
                    pair.new, pp.new, router, kv
                )
                old_sel = Selection(pair.old.index, pp.old.index, router, kv)
                new_sel = Selection(pair.new.index, pp.new.index, router, kv)
                # Points mostly show the same block objects (the cell's etcd, a worker no
                # point patch touches): each pair of them is compared once, not once a point.
                shown = (old.identity(old_sel), new.identity(new_sel))
                if shown not in compared:
                    compared[shown] = block_changes(old.blocks(old_sel), new.blocks(new_sel))
                changes = compared[shown] + file_changes[router]
                if not changes:
                    continue
                if is_measured:
                    for change in changes:
                        measured.setdefault(change, []).append(pp.new.name)
                    diff = _text_diff(old, new, old_sel, new_sel)
                    if diff is not None:
                        diffs.setdefault(diff, []).append(_selection_name(pp.new, router, kv))
                else:
                    for change in changes:
                        derived.setdefault(change, []).append((pp.new.name, router, kv))
    n_points = len(points.pairs)
    review.measured = [
        Row(c, _unique(w), all_points=len(_unique(w)) == n_points) for c, w in measured.items()
    ]
    names = [pp.new.name for pp in points.pairs]
    review.derived = [
        Row(c, _describe_selections(w, names)) for c, w in derived.items() if c not in measured
    ]
    review.diffs = [TextDiff(w, d) for d, w in diffs.items()]
    # New points have no "before": the reviewer reads their full measured commands.
    review.texts = _measured_texts(new, pair.new, points.added)
    return review


def _measured_texts(side: ModuleSide, cell: CellRef, points: list[PointRef]) -> list[NewText]:
    texts: dict[str, list[str]] = {}
    for point in points:
        text = _full_text(side, Selection(cell.index, point.index, cell.submitted, point.kv))
        texts.setdefault(text, []).append(_selection_name(point, cell.submitted, point.kv))
    return [NewText(w, t) for t, w in texts.items()]


def _added_cell(new: ModuleSide, cell: CellRef) -> CellReview:
    review = CellReview(old=None, new=cell)
    review.texts = _measured_texts(new, cell, cell.points)
    review.status = _str(new.point_info(cell.index, 0).get("status")) or ""
    return review


def _removed_cell(old: ModuleSide, cell: CellRef) -> CellReview:
    review = CellReview(old=cell, new=None)
    review.status = _str(old.point_info(cell.index, 0).get("status")) or ""
    return review


def _describe_selections(selections: list[tuple[str, str, str]], points: list[str]) -> list[str]:
    """``router · KV tier: points`` per derived selection group, "all points" when complete."""
    groups: dict[tuple[str, str], list[str]] = {}
    for point, router, kv in selections:
        groups.setdefault((router, kv), []).append(point)
    out = []
    for (router, kv), where in groups.items():
        unique = _unique(where)
        text = "all points" if len(unique) == len(points) else ", ".join(unique)
        out.append(f"{router} · KV {kv}: {text}")
    return out


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
