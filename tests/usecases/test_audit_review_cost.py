"""The audit's reviewer diff without this tool's compaction (issue 39.2): the review reads both
module versions through the decoder, so the edited spec is decoded uncompacted
(``encode.plain_module``), the published side is the audit's own decoder, and only the edited
cells are compared. Each is checked against what it replaces: the compacted module's cases,
and the review of the compacted text parsed back with every cell compared (``review_texts``,
as the audit made it before)."""

from __future__ import annotations

from pathlib import Path

import pytest

from syncer.cookbook.decode import Decoder
from syncer.cookbook.jsmodule import parse_module, read_text
from syncer.encoder.cells import ModuleSpec, cells_from_module
from syncer.encoder.encode import compact_module, module_text, plain_module
from syncer.review.matching import ModuleSide
from syncer.review.report import review_markdown, review_report
from syncer.review.review import review_sides, review_texts
from syncer.usecases.audit import NEW_LABEL, audit
from syncer.usecases.audit_trees import SnapshotTrees


def _modules(reference: Path) -> list[Path]:
    found = sorted((reference / "cookbook" / "agentx").rglob("*.jsx"))
    if not found:
        pytest.skip("no reference modules")
    return found


def _cases(decoder: Decoder) -> list[tuple[object, ...]]:
    return [
        (
            c.selection,
            c.cell_id,
            c.kv,
            c.status,
            c.blocks,
            c.router_files(),
            decoder.point_info(c.cell, c.point),
        )
        for c in decoder.cases(fresh=False)  # compared, never changed: not copied
    ]


def test_plain_module_decodes_as_the_compaction(reference: Path) -> None:
    for path in _modules(reference):
        module = parse_module(read_text(path), str(path))
        spec = cells_from_module(module.value, Decoder(module.value, str(path)), str(path))
        plain, compacted = plain_module(spec), compact_module(spec)
        assert plain != compacted  # nothing compacted: the same cases another way
        assert _cases(Decoder(plain, "plain")) == _cases(Decoder(compacted, "compacted"))


DRIFTED = (0, 3)


def _drift(spec: ModuleSpec) -> None:
    """Edits as the audit's drift makes them: a point's blocks of one router (here the next
    cell's, so commands, processes and flags change) and the cell's image."""
    for ci in DRIFTED:
        cell, other = spec.cells[ci], spec.cells[ci + 1]
        router = cell.submitted
        if router in other.points[0].blocks:
            cell.points[0].blocks[router] = other.points[0].blocks[router]
        cell.meta["image"] = "lmsysorg/sglang:drifted"


def test_the_review_is_the_compacted_texts_review(reference: Path) -> None:
    for path in _modules(reference):
        text = read_text(path)
        module = parse_module(text, str(path))
        decoder = Decoder(module.value, str(path))
        spec = cells_from_module(module.value, decoder, str(path), shared=True)
        _drift(spec)
        old_label = f"{path.name} (published)"
        again = module_text(compact_module(spec), module.header)
        before = review_texts(text, again, old_label=old_label, new_label=NEW_LABEL)
        assert before.has_changes
        new = Decoder(plain_module(spec), NEW_LABEL)
        assert new.master_placement == decoder.master_placement
        # every cell compared, then only the edited ones (as the audit does)
        for changed in (None, DRIFTED):
            made = review_sides(ModuleSide(decoder, old_label), ModuleSide(new), changed)
            assert made.json() == before.json()
            for budget in (None, 4000):
                expected = review_report(before).markdown(budget)
                assert review_report(made).markdown(budget) == expected
                # what the audit keeps: the markdown without the review
                assert review_markdown(made)(budget) == expected


def test_reviews_are_kept_only_when_asked_for(reference: Path) -> None:
    cookbook = reference / "cookbook" / "agentx"
    trees = SnapshotTrees(reference / "pairs" / "inferencex")
    kept = audit(cookbook, trees, reviews=True)
    drifted = [m.path for m in kept.modules if m.review is not None]
    assert drifted  # the reference cookbook has drifted modules
    assert all(m.review_markdown(None) for m in kept.modules if m.review is not None)
    bare = audit(cookbook, trees, reviews=False)
    assert [m.review for m in bare.modules] == [None] * len(bare.modules)
    assert [c.as_json() for c in bare.cells] == [c.as_json() for c in kept.cells]
