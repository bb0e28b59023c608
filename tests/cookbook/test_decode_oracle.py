"""Conformance with the cookbook's own decoder: every oracle case, blocks equal as data (and in
key order) and each block's text byte for byte. Skips when ../shared/reference is absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from syncer.cookbook.decode import AFTER_CONTROL_PLANE, BEFORE_FIRST_WORKER, load_decoder

ORACLES = [
    ("deepseek-ai/deepseek-v4_1", "c4b47c36", AFTER_CONTROL_PLANE),
    ("deepseek-ai/deepseek-v4_1", "37da6c0b", BEFORE_FIRST_WORKER),
    ("deepseek-ai/deepseek-v4_1", "2b484a51", BEFORE_FIRST_WORKER),
    ("Qwen/qwen3.5", "652614ed", BEFORE_FIRST_WORKER),
]


@pytest.mark.parametrize(("model", "commit", "placement"), ORACLES)
def test_every_oracle_case(reference: Path, model: str, commit: str, placement: str) -> None:
    oracle = json.loads((reference / "oracle" / model / f"{commit}.json").read_text("utf-8"))
    decoder = load_decoder(reference / "cookbook" / "agentx" / model / f"{commit}.jsx")
    assert decoder.master_placement == placement
    cases = list(decoder.cases())
    assert len(cases) == oracle["caseCount"] == len(oracle["cases"])
    mismatches = []
    for case, expected in zip(cases, oracle["cases"], strict=True):
        got = case.as_json()
        selection = {k: got[k] for k in ("cell", "cellId", "point", "router", "kv")}
        if selection != {k: expected[k] for k in selection}:
            mismatches.append(("selection", selection, expected["cellId"]))
        elif got["blocks"] != expected["blocks"]:
            mismatches.append(("blocks", selection))
        elif json.dumps(got["blocks"]) != json.dumps(expected["blocks"]):
            mismatches.append(("key order", selection))
        elif got["text"] != expected["text"]:
            mismatches.append(("text", selection))
    assert not mismatches, f"{len(mismatches)}/{len(cases)} cases differ: {mismatches[:3]}"


def test_both_placements_coincide_on_the_c4b47c36_module(reference: Path) -> None:
    # The c4b47c36 data lists the Dynamo frontend after the workers, so its oracle is also what
    # the newest placement gives: a check that detection is not what makes that module pass.
    model = "deepseek-ai/deepseek-v4_1"
    oracle = json.loads((reference / "oracle" / model / "c4b47c36.json").read_text("utf-8"))
    decoder = load_decoder(reference / "cookbook" / "agentx" / model / "c4b47c36.jsx")
    decoder._placement = BEFORE_FIRST_WORKER
    for case, expected in zip(decoder.cases(), oracle["cases"], strict=True):
        assert case.blocks == expected["blocks"]


def test_37da6c0b_module_needs_the_newest_placement(reference: Path) -> None:
    # The README: pairing this module with the c4b47c36 rule changes 94 dynamo/mooncake cases.
    model = "deepseek-ai/deepseek-v4_1"
    oracle = json.loads((reference / "oracle" / model / "37da6c0b.json").read_text("utf-8"))
    decoder = load_decoder(reference / "cookbook" / "agentx" / model / "37da6c0b.jsx")
    decoder._placement = AFTER_CONTROL_PLANE
    differ = [
        (c.router, c.kv)
        for c, e in zip(decoder.cases(), oracle["cases"], strict=True)
        if c.blocks != e["blocks"]
    ]
    assert len(differ) == 94
    assert set(differ) == {("dynamo", "mooncake")}
