"""A config's own HiCache donor (`hicache_donor` in sync.yaml, issue 35): the published modules
borrow HiCache settings per hardware, not once per model, and `sync adopt` states them so."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT

from syncer.errors import SyncError
from syncer.syncconfig import parse_sync_config
from syncer.usecases.generate import generate_model

MODEL = "deepseek-ai/deepseek-v4_1"
DSPARK = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
DISAGG = "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"


def config_with(donor_line: str):
    text = (ROOT / "sync.yaml").read_text(encoding="utf-8")
    # No model-wide HiCache donor: only the config's own names one.
    text = text.replace(f"      hicache: {DISAGG}\n", "")
    text = text.replace(
        f"      - key: {DSPARK}\n", f"      - key: {DSPARK}\n        hicache_donor: {donor_line}\n"
    )
    return parse_sync_config(text, "sync.yaml")


def cells(config, tmp_path: Path) -> dict[str, dict]:
    result = generate_model(
        MODEL, config=config, inferencex=ROOT / "examples/inferencex", out_dir=tmp_path,
        check=True, today="2026-10-13",
    )  # fmt: skip
    from syncer.cookbook.jsmodule import parse_module

    return {c["id"]: c for c in parse_module(result.text).value["cells"]}


def test_a_config_borrows_from_its_own_donor(tmp_path: Path) -> None:
    config = config_with(DISAGG)
    assert config.model(MODEL).config(DSPARK).hicache_donor == DISAGG
    got = cells(config, tmp_path)
    for cell in got.values():
        if cell["configKey"] == DSPARK:
            assert cell["kv"]["hicache"]["donor"] == DISAGG
            assert "hicache" in cell["kv"]["available"]
    # Without it (and no model-wide donor) the same cells offer no HiCache tier.
    text = (
        (ROOT / "sync.yaml").read_text(encoding="utf-8").replace(f"      hicache: {DISAGG}\n", "")
    )
    for cell in cells(parse_sync_config(text, "sync.yaml"), tmp_path).values():
        if cell["configKey"] == DSPARK:
            assert "hicache" not in cell["kv"]["available"] and "hicache" not in cell["kv"]


def test_a_donor_without_hicache_is_refused_naming_the_config(tmp_path: Path) -> None:
    config = config_with(DSPARK)
    with pytest.raises(
        SyncError, match=f"config {DSPARK}: HiCache donor {DSPARK} has no point"
    ) as e:
        cells(config, tmp_path)
    assert e.value.path == "sync.yaml" and e.value.line == config.model(MODEL).config(DSPARK).line
