"""The decode benchmark runs end to end and reports its ratios (no timing is asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import decode as bench

FIXTURE = Path(__file__).parent / "fixtures" / "cookbook" / "agg_sglang.jsx"


def test_bench_reports_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main([str(FIXTURE), "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "(38 cases, median of 1 runs)" in out
    # the node figure was measured on another module: no ratio against it
    assert (
        "vs node      not compared: the node figure (0.38 s) is for "
        "deepseek-ai/deepseek-v4_1@37da6c0b only\n" in out
    )
    assert "x wall of the cookbook decoder" not in out
    assert "python start-up + reading agg_sglang.jsx" in out  # no oracle for our own fixture


def test_bench_missing_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main([str(tmp_path / "none.jsx")]) == 2
    assert "no data module" in capsys.readouterr().err


def test_oracle_found_for_reference_module(reference: Path) -> None:
    module = reference / "cookbook" / "agentx" / "deepseek-ai" / "deepseek-v4_1" / "37da6c0b.jsx"
    oracle = bench._oracle_for(module)
    expected = reference / "oracle" / "deepseek-ai" / "deepseek-v4_1" / "37da6c0b.json"
    assert oracle is not None and oracle.resolve() == expected.resolve()


def test_bench_compares_with_node_on_the_module_node_was_timed_on(
    reference: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = reference / "cookbook" / "agentx" / "deepseek-ai" / "deepseek-v4_1" / "37da6c0b.jsx"
    assert bench.main([str(module), "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "(564 cases, median of 1 runs)" in out
    assert "x wall of the cookbook decoder under node (0.38 s wall; target <= 1.0x" in out
    assert "json.load of 37da6c0b.json (the oracle file)" in out
