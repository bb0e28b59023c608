"""Editing a published module (issue 35): only the changed configs' cells are written again,
every other byte stays as published, in the module's own format, and the edit is proven.

The modules edited: the real published ones (``../shared/reference``, skipped without it), the
bundled example's, and a fixture of ours in the older per-point URL format."""

from __future__ import annotations

import copy
import difflib
import json
import marshal
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, TESTS

from syncer.cookbook.decode import Decoder
from syncer.cookbook.jsmodule import parse_module
from syncer.encoder.cells import CellSpec, cells_from_module
from syncer.encoder.edit import LAYOUT_REFUSED, EditInputs, ModuleEdit, edit_module
from syncer.encoder.emit import emit_module
from syncer.errors import SyncError

REAL = (
    "deepseek-ai/deepseek-v4_1/2b484a51.jsx",
    "deepseek-ai/deepseek-v4_1/37da6c0b.jsx",
    "Qwen/qwen3.5/652614ed.jsx",
)
OURS = {
    "bundled": ROOT / "cookbook_snippets/deepseek-ai/deepseek-v4_1.jsx",
    "legacy": TESTS / "fixtures/edit/legacy-deepseek-v4_1.jsx",
}
NEW_PR = "3999"
NEW_SHA = "ab" * 20
NEW_RUN = "42000000001"
SOURCE = {
    "prs": {
        NEW_PR: {
            "run": f"https://github.com/SemiAnalysisAI/InferenceX/actions/runs/{NEW_RUN}",
            "sha": NEW_SHA,
            "status": "verified-pr",
        }
    }
}


def _text(which: str, reference: Path | None) -> str:
    if which in OURS:
        return OURS[which].read_text(encoding="utf-8")
    assert reference is not None
    return (reference / "cookbook/agentx" / which).read_text(encoding="utf-8")


@pytest.fixture(params=[*OURS, *REAL])
def published(request) -> tuple[str, str]:
    which = request.param
    reference = None
    if which in REAL:
        reference = request.getfixturevalue("reference")
    return which, _text(which, reference)


def _config_of(cell: dict[str, Any]) -> str:
    return str(cell.get("configKey") or cell["id"].partition("#")[0])


def _cross_ref_target(value: dict[str, Any]) -> str:
    """A config another config's cell refers to (so changing it moves a kept cell's ref),
    else the first cell's."""
    cells = value["cells"]
    for cell in cells:
        for router in cell["routers"].values():
            for entry in router["blocks"]:
                ref = entry.get("ref")
                if ref and _config_of(cells[ref[0]]) != _config_of(cell):
                    return _config_of(cells[ref[0]])
    return _config_of(cells[0])


def _pinned_again(value: dict[str, Any], key: str, *, change: bool) -> list[CellSpec]:
    """``key``'s cells as the module has them, pinned to another run; with ``change`` every
    worker of them launched with one more flag."""
    spec = _memo(value, "spec", lambda: cells_from_module(value, Decoder(value, "m"), "m"))
    mine = [copy.deepcopy(c) for c in spec.cells if c.config_key == key]
    for cell in mine:
        for point in cell.points:
            point.prov.update(pr=NEW_PR, sha=NEW_SHA, run=NEW_RUN, comment="77", date="2026-10-13")
            point.prov["status"] = "verified-pr"
            point.prov.pop("job", None)
            if change:
                for blocks in point.blocks.values():
                    for block in blocks:
                        if block.get("kind") == "worker":
                            block["args"] = [*block["args"], ["--new-flag", "1"]]
    return mine


def _edit(text: str, key: str, cells: list[CellSpec], **kw: Any) -> ModuleEdit:
    value = parse_module(text).value
    inputs = EditInputs(
        fresh={key: cells} if cells else {},
        source=SOURCE,
        generated_on="2026-10-13",
        hardware=list(value["hardware"]),
        **kw,
    )
    return edit_module(text, inputs, path="module.jsx")


def _without(value: dict[str, Any], keys: set[str], envs: int, ids: Collection[str] = ()) -> str:
    """``value``'s text without the cells of ``keys`` (and the cells ``ids``), ``generatedOn``,
    ``source.prs`` and pool entries past ``envs``: what an edit of ``keys`` must leave byte for
    byte."""
    rest = copy.deepcopy(value)
    rest["cells"] = [c for c in rest["cells"] if _config_of(c) not in keys and c["id"] not in ids]
    rest["generatedOn"] = ""
    rest["source"].pop("prs", None)
    rest["envs"] = rest["envs"][:envs]
    return emit_module([], "agentx", rest)


def _changed_lines(old: str, new: str) -> int:
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
    return sum(1 for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))


def _cases(value: dict[str, Any], keys: set[str]) -> dict[tuple[str, int, str, str], Any]:
    return {
        where: case
        for where, case in _memo(value, "cases", lambda: _every_case(value)).items()
        if not (
            where[0].partition("#")[0] in keys or any(where[0].startswith(k + "#") for k in keys)
        )
    }


def _every_case(value: dict[str, Any]) -> dict[tuple[str, int, str, str], Any]:
    decoder = Decoder(value, "m")
    out = {}
    for case in decoder.cases(fresh=False):  # compared, never changed
        info = decoder.point_info(case.cell, case.point)
        out[case.cell_id, case.point, case.router, case.kv] = (
            case.blocks,
            case.status,
            {k: v for k, v in info.items() if k != "patch"},
        )
    return out


# What the helpers above make of a module value, by its content: the tests decode each
# published module (and its spec) in several tests and params; none changes what it is given.
_MEMO: dict[tuple[bytes, str], Any] = {}


def _memo(value: dict[str, Any], what: str, make: Callable[[], Any]) -> Any:
    key = (marshal.dumps(value), what)
    if key not in _MEMO:
        if len(_MEMO) > 8:
            _MEMO.clear()
        _MEMO[key] = make()
    return _MEMO[key]


@pytest.mark.parametrize("change", [False, True], ids=["same-commands", "new-commands"])
def test_an_edit_touches_only_the_config_it_is_about(published, change) -> None:
    which, text = published
    old = parse_module(text).value
    key = _cross_ref_target(old)
    edit = _edit(text, key, _pinned_again(old, key, change=change))
    new = parse_module(edit.text).value
    # Every byte outside that config's cells, the date, the PR list and appended envs: as is
    # (but for a kept cell whose ref meant a block that changed, written out as that block).
    moved = edit.repointed
    assert not moved or change
    assert _without(new, {key}, len(old["envs"]), moved) == _without(
        old, {key}, len(old["envs"]), moved
    )
    assert new["envs"][: len(old["envs"])] == old["envs"]
    assert edit.text.splitlines()[:2] == text.splitlines()[:2]
    # Every other cell decodes exactly as published; nothing is lost.
    others = {c["id"] for c in old["cells"] if _config_of(c) != key}
    assert {c["id"] for c in new["cells"]} == {c["id"] for c in old["cells"]}
    assert _cases(new, {key}) == _cases(old, {key})
    assert [h["id"] for h in new["hardware"]] == [h["id"] for h in old["hardware"]]
    assert new["checkpoints"] == old["checkpoints"]
    assert not edit.removed and not edit.added
    # The config's cells show the new pin, in the module's own provenance format.
    mine = [c for c in new["cells"] if _config_of(c) == key]
    legacy = not any("prov" in c for c in old["cells"])
    for cell in mine:
        assert ("prov" in cell) != legacy
        for point in cell["points"]:
            info = {**cell.get("prov", {}), **point}
            assert info["pr"] == NEW_PR and info["sha"] == NEW_SHA
            if legacy:
                assert point["runUrl"].endswith(f"/actions/runs/{NEW_RUN}")
                assert "run" not in point
    assert NEW_PR in new["source"]["prs"]
    assert f"#{NEW_PR}" in edit.text.splitlines()[2]
    assert new["generatedOn"] == "2026-10-13"
    if not change:
        assert edit.unchanged == [c["id"] for c in mine]
        # The same commands: router entries and patches as published, only provenance moves.
        for cell in mine:
            before = next(c for c in old["cells"] if c["id"] == cell["id"])
            assert cell["routers"] == before["routers"]
            assert [p.get("patch") for p in cell["points"]] == [
                p.get("patch") for p in before["points"]
            ]
    else:
        # A kept cell whose ref meant a block of a changed cell is written out as that block.
        assert set(edit.repointed) <= others
    if which in REAL:
        # One config of many: a small part of the module (a whole reencode rewrote a third).
        assert _changed_lines(text, edit.text) < len(text.splitlines()) // 10, which


def test_a_second_edit_is_as_small(published) -> None:
    _, text = published
    old = parse_module(text).value
    key = _cross_ref_target(old)
    first = _edit(text, key, _pinned_again(old, key, change=False))
    once = parse_module(first.text).value
    again = _pinned_again(once, key, change=False)
    for cell in again:
        for point in cell.points:
            point.prov["run"] = "42000000002"
    second = _edit(first.text, key, again)
    twice = parse_module(second.text).value
    assert _without(twice, {key}, len(once["envs"])) == _without(once, {key}, len(once["envs"]))
    assert twice["envs"] == once["envs"]
    assert _changed_lines(first.text, second.text) <= _changed_lines(text, first.text)
    assert _cases(twice, {key}) == _cases(once, {key})


def test_an_edit_with_nothing_to_change_changes_only_the_date(published) -> None:
    _, text = published
    edit = _edit(text, "", [])
    assert edit.text.replace('"generatedOn": "2026-10-13"', "") == _date_less(text)


def _date_less(text: str) -> str:
    value = parse_module(text).value
    return text.replace(f'"generatedOn": {json.dumps(value["generatedOn"])}', "")


def test_a_config_that_left_takes_its_cells_chip_and_pr_with_it() -> None:
    text = OURS["bundled"].read_text(encoding="utf-8")
    old = parse_module(text).value
    key = _cross_ref_target(old)
    edit = _edit(text, "", [], gone={key})
    new = parse_module(edit.text).value
    assert edit.removed == [c["id"] for c in old["cells"] if _config_of(c) == key]
    assert all(_config_of(c) != key for c in new["cells"])
    # The cells that referred to its blocks still decode as published.
    assert _cases(new, {key}) == _cases(old, {key})
    assert edit.repointed
    gone_prs = {str(c["prov"]["pr"]) for c in old["cells"] if _config_of(c) == key}
    still = {str(c["prov"]["pr"]) for c in new["cells"]}
    assert not (gone_prs - still) & set(new["source"]["prs"])


def test_a_new_config_is_added_after_its_chip_without_renumbering(published) -> None:
    _, text = published
    old = parse_module(text).value
    key = _config_of(old["cells"][0])
    cells = _pinned_again(old, key, change=True)
    for cell in cells:
        cell.meta["id"] = cell.id.replace(key, key + "-new")
        cell.meta["configKey"] = key + "-new"
    edit = _edit(text, key + "-new", cells)
    new = parse_module(edit.text).value
    assert edit.added == [c.id for c in cells]
    assert _cases(new, {key + "-new"}) == _cases(old, set())
    # Kept cells keep their text (their refs renumbered where a new cell went before them).
    assert new["envs"][: len(old["envs"])] == old["envs"]
    # After its chip's last cell, or last where that would renumber a kept cell's ref.
    at = [c["id"] for c in new["cells"]].index(cells[0].id)
    assert new["cells"][at - 1]["hw"] == cells[0].meta["hw"] or at == len(old["cells"])
    kept = [c for c in new["cells"] if not c["id"].startswith(key + "-new#")]
    assert kept == old["cells"]


def test_a_module_in_another_layout_is_refused_not_rewritten() -> None:
    text = OURS["bundled"].read_text(encoding="utf-8")
    module = parse_module(text)
    other = text.replace('\n "model"', '\n  "model"', 1)
    assert parse_module(other).value == module.value
    with pytest.raises(SyncError, match="generator's layout") as exc:
        _edit(other, "", [])
    assert LAYOUT_REFUSED in exc.value.message
