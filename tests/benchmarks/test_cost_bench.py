"""`python -m bench cost` runs end to end: one table with every event's row, the workflow's
caches taken into account (a repeated `/use` in a new job downloads no artifact again)."""

from __future__ import annotations

import pytest

from bench import cost as bench


@pytest.mark.bench  # runs the benchmark end to end: `pytest -m bench`
def test_bench_cost_prints_one_table_of_every_event(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--prs", "1", "--models", "1"]) == 0
    out = capsys.readouterr().out
    header, _rule, *rows = out.split("\n\n")[0].splitlines()
    columns = [c.strip() for c in header.strip("|").split("|")]
    assert columns[4:] == [
        "GITHUB_TOKEN requests", "all requests", "writes", "git processes", "bytes fetched",
        "trees written", "temp per job (max)", "artifacts downloaded",
    ]  # fmt: skip
    cells = {r.split("|")[3].strip(): [c.strip() for c in r.strip("|").split("|")] for r in rows}
    assert list(cells) == [
        "schedule (nothing changed)", "schedule, empty clones", "push to one PR",
        "/use on one PR", "/use again, a new job",
    ]  # fmt: skip
    assert cells["/use on one PR"][-1] != "0 (0 kB)"
    assert cells["/use again, a new job"][-1] == "0 (0 kB)"
    assert "under a tenth of the GITHUB_TOKEN's" in out
