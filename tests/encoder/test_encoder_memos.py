"""What the encoder keeps from one call to the next in a process (issue 39): the compaction of
a spec, the blocks found publishable and the module texts found in the generator's layout.
Each is a function of its input alone; what is kept must never leak a caller's change into
another call, nor let a different input pass as one seen before."""

from __future__ import annotations

import copy

import pytest
from conftest import ROOT

from syncer.cookbook.decode import Decoder
from syncer.cookbook.jsmodule import parse_module
from syncer.cookbook.shell import check_publishable_each
from syncer.encoder.cells import cells_from_module
from syncer.encoder.emit import emitted_as
from syncer.encoder.encode import compact_module
from syncer.errors import SyncError

MODULE = ROOT / "cookbook_snippets/deepseek-ai/deepseek-v4_1.jsx"


def _spec():
    value = parse_module(MODULE.read_text(encoding="utf-8")).value
    return cells_from_module(value, Decoder(value, "m"), "m")


def test_a_spec_compacted_again_is_a_fresh_equal_value() -> None:
    spec = _spec()
    first = compact_module(spec)
    kept = copy.deepcopy(first)
    first["cells"].clear()  # the caller's to change
    first["envs"].append({"X": "1"})
    again = compact_module(_spec())
    assert again == kept
    assert again is not first and again["cells"] is not first["cells"]


def test_another_spec_is_compacted_anew() -> None:
    spec = _spec()
    before = compact_module(spec)
    spec.cells[0].meta["image"] = "lmsysorg/sglang:other"
    after = compact_module(spec)
    assert after != before
    assert after["cells"][0]["image"] == "lmsysorg/sglang:other"


def test_a_refused_spec_is_refused_again() -> None:
    spec = _spec()
    spec.cells[0].meta["hw"] = "no-such-chip"
    for _ in range(2):
        with pytest.raises(SyncError, match="not in the hardware list"):
            compact_module(spec)


def test_a_block_that_differs_in_one_value_is_checked_on_its_own() -> None:
    good = {"kind": "worker", "cmd": "python3 -m sglang.launch_server", "args": [["--tp", "8"]]}
    check_publishable_each([("case a", [good])])
    check_publishable_each([("case a", [dict(good)])])  # the same content: passes again
    bad = {**good, "args": [["--tp", "8\nreboot"]]}
    with pytest.raises(SyncError, match=r"case b, block 0"):
        check_publishable_each([("case b", [bad])])
    with pytest.raises(SyncError, match=r"case c, block 1"):
        check_publishable_each([("case c", [good, bad])])


def test_a_text_in_layout_stays_so_and_one_off_layout_is_not_taken_for_it() -> None:
    text = MODULE.read_text(encoding="utf-8")
    module = parse_module(text)
    assert emitted_as(module, text)
    assert emitted_as(module, text)
    other = text.replace('\n "model"', '\n  "model"', 1)
    assert parse_module(other).value == module.value
    assert not emitted_as(parse_module(other), other)
