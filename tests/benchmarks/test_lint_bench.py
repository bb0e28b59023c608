"""`python -m bench lint` runs end to end (its figures are for people, not asserted)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT

from bench import lint as bench


@pytest.mark.bench  # runs the benchmark end to end: `pytest -m bench`
def test_bench_lints_a_module_against_one_scratch_version(
    capsys: pytest.CaptureFixture[str],
) -> None:
    module = ROOT / "cookbook_snippets" / "deepseek-ai" / "deepseek-v4_1.jsx"
    code = bench.main([str(module)])
    out = capsys.readouterr().out
    assert code in (0, 1)  # 1: over the target, which a module this small may be
    assert re.search(r"module deepseek-v4_1\.jsx: \d+ cases; version [0-9a-f]{12}", out)
    # The scratch version declares every flag of the module: no findings, one parse per file.
    assert re.search(r"lint +\d+\.\d\dx reference .* 0 findings, files parsed once: 2", out)


def test_bench_missing_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main([str(tmp_path / "none.jsx")]) == 2
    assert "no module at" in capsys.readouterr().err
