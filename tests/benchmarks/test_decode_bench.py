"""The decode benchmark runs end to end and reports its ratios (no timing is asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TESTS

from bench import decode as bench

FIXTURE = TESTS / "fixtures" / "cookbook" / "agg_sglang.jsx"


def test_bench_reports_ratios(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SYNC_SGLANG_GIT", raising=False)
    assert bench.main([str(FIXTURE), "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "(38 cases, medians of 1 interleaved rounds)" in out
    # no stored node figure: without the cookbook decoder at hand there is no node ratio
    assert "vs node      not measured: no cookbook decoder given (--decoder FILE" in out
    assert "python start-up + reading agg_sglang.jsx" in out  # no oracle for our own fixture
    assert "vs reference" in out


def test_a_decoder_file_that_is_absent_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    absent = tmp_path / "_agentx.jsx"
    assert bench.main([str(FIXTURE), "--runs", "1", "--decoder", str(absent)]) == 0
    out = capsys.readouterr().out
    assert "not measured: " in out and str(absent) in out


def test_bench_missing_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main([str(tmp_path / "none.jsx")]) == 2
    assert "no data module" in capsys.readouterr().err


def test_oracle_found_for_reference_module(reference: Path) -> None:
    module = reference / "cookbook" / "agentx" / "deepseek-ai" / "deepseek-v4_1" / "37da6c0b.jsx"
    oracle = bench._oracle_for(module)
    expected = reference / "oracle" / "deepseek-ai" / "deepseek-v4_1" / "37da6c0b.json"
    assert oracle is not None and oracle.resolve() == expected.resolve()


def test_the_default_module_is_the_one_with_the_most_cases(reference: Path) -> None:
    from syncer.cookbook.decode import load_decoder

    module, cases = bench.largest_module()
    counts = [
        sum(1 for _ in load_decoder(m).cases())
        for m in (reference / "cookbook" / "agentx").rglob("*.jsx")
    ]
    assert cases == max(counts) and len(counts) > 1
    assert sum(1 for _ in load_decoder(module).cases()) == cases


def test_the_node_reference_prints_the_cases_sync_decode_prints(tmp_path: Path) -> None:
    """The node side of the benchmark does the same work: its cases equal ours, as data. Needs
    the cookbook's page component from an SGLang checkout (``SYNC_SGLANG_GIT``)."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    sglang = os.environ.get("SYNC_SGLANG_GIT")
    if not sglang or shutil.which("node") is None:
        pytest.skip("needs node and an SGLang checkout in SYNC_SGLANG_GIT")
    decoder, why = bench._decoder(type("Args", (), {"sglang": sglang})(), tmp_path)
    if decoder is None:
        pytest.skip(why)
    node = subprocess.run(
        ["node", str(bench.HARNESS), str(decoder), str(FIXTURE)], capture_output=True, check=True
    )
    ours = subprocess.run(
        [sys.executable, "-m", "syncer", "decode", str(FIXTURE), "--all", "--format", "json"],
        capture_output=True,
        check=True,
    )
    assert json.loads(node.stdout)["cases"] == json.loads(ours.stdout)["cases"]
