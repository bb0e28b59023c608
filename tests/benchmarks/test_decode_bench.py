"""The decode benchmark runs end to end and reports its ratios (no timing is asserted)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import TESTS

from bench import decode as bench

FIXTURE = TESTS / "fixtures" / "cookbook" / "agg_sglang.jsx"


@pytest.mark.bench  # runs the benchmark end to end: `pytest -m bench`
def test_bench_reports_ratios(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SYNC_SGLANG_GIT", raising=False)
    monkeypatch.delenv("SYNC_COOKBOOK_DECODER", raising=False)
    assert bench.main([str(FIXTURE), "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "(38 cases, medians of 1 interleaved rounds)" in out
    # no stored node figure: without the cookbook decoder at hand there is no node ratio
    assert "vs node      not measured: no cookbook decoder given (--decoder FILE" in out
    assert "python start-up + reading agg_sglang.jsx" in out  # no oracle for our own fixture
    assert "vs reference" in out
    # the decode's start-up is measured without node; the work split needs node's
    assert re.search(
        r"start-up     \d\.\d{3} s CPU: python -c pass \d\.\d{3} s \+ importing what the decode "
        r"imports -?\d\.\d{3} s\n",
        out,
    )
    assert "work  " not in out


# A page component whose decoder sections decode nothing: node runs the bench's harness on it,
# so the report's work split is tested without the cookbook's own decoder at hand.
NO_OP_COMPONENT = """export const AgentX = ({ data }) => {
  // ==== 1. Decoder ====
  const blocksFor = (ci, pi, router, kv) => [];
  // ==== 2. Shell formatting ====
  const formatBlock = (b) => "";
  // ==== 3. Labels and notes ====
  return null;
};
"""


@pytest.mark.bench  # runs the benchmark end to end: `pytest -m bench`
@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_the_work_split_with_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    component = tmp_path / "_agentx.jsx"
    component.write_text(NO_OP_COMPONENT, encoding="utf-8")
    monkeypatch.setenv("SYNC_COOKBOOK_DECODER", str(component))  # read when --decoder is absent
    assert bench.main([str(FIXTURE), "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert f"the cookbook decoder ({component})" in out
    assert re.search(r"\(node -e 0: \d\.\d{3} s\)\n", out)
    assert re.search(
        r"work         decode -?\d\.\d{3} s CPU beyond its start-up, node -?\d\.\d{3} s beyond "
        r"its own: -?\d+\.\d\dx\n",
        out,
    )
    assert "to the target with this start-up, the decode's work would take at most" in out


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_a_decoder_file_that_is_absent_is_named(tmp_path: Path) -> None:
    # the reason is what the report's "not measured:" line prints (test_bench_reports_ratios)
    absent = tmp_path / "_agentx.jsx"
    args = type("Args", (), {"decoder": absent, "sglang": None})()
    assert bench._decoder(args, tmp_path) == (None, f"no file at {absent}")


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


@pytest.mark.bench  # runs the benchmark end to end: `pytest -m bench`
def test_the_node_reference_prints_the_cases_sync_decode_prints(tmp_path: Path) -> None:
    """The node side of the benchmark does the same work: its cases equal ours, as data. Needs
    the cookbook's page component (``SYNC_COOKBOOK_DECODER``, or an SGLang checkout in
    ``SYNC_SGLANG_GIT``)."""
    import json
    import os
    import subprocess
    import sys

    sglang = os.environ.get("SYNC_SGLANG_GIT")
    component = os.environ.get("SYNC_COOKBOOK_DECODER")
    if not (sglang or component) or shutil.which("node") is None:
        pytest.skip(
            "needs node and the cookbook's page component (SYNC_COOKBOOK_DECODER) or an SGLang "
            "checkout (SYNC_SGLANG_GIT)"
        )
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
