"""`sync audit` marks a cell it could not check apart from one checked and clean, and counts
such cells in its verdict (issue 37.4: 81 of 105 real cells were "not checked", shown ✓)."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT, TESTS

from syncer.cli import main

SCRIPTERA = TESTS / "fixtures" / "scriptera"
ARGS = ["--cookbook", str(SCRIPTERA / "cookbook"), "--inferencex", str(SCRIPTERA / "inferencex")]


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "INFX_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def audit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(["audit", *args])
    return int(exc.value.code or 0), capsys.readouterr().out


def test_cells_never_checked_are_marked_and_counted_not_shown_clean(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = audit(capsys, *ARGS)
    assert code == 0  # nothing found is still no finding
    cells = [line for line in out.splitlines() if "m1-fp8-b300-sglang-agentic-mtp#" in line]
    assert len(cells) == 3 and all(line.startswith("  ? ") for line in cells)
    assert out.splitlines()[-1] == (
        "? 3 cells of 1 module: no findings, but 3 of them not checked against their recipe (?)"
    )
    code, out = audit(capsys, *ARGS, "--format", "json")
    assert json.loads(out)["counts"]["cellsNotChecked"] == 3
    code, out = audit(capsys, *ARGS, "--format", "markdown")
    assert out.startswith("## ❔ Cookbook audit (`sync audit`)\n\nNo findings, but **3 of the 3")
    assert "❔ example-org/m1.jsx (M1): 3 cells, 0 with findings, 3 not checked</summary>" in out


def test_cells_checked_and_clean_keep_their_tick(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = audit(capsys)  # the bundled example: every cell's recipe compared
    assert code == 0
    assert out.splitlines()[-1] == "✓ 5 cells of 1 module: no findings"
    assert sum(line.startswith("  ✓ ") for line in out.splitlines()) == 5
