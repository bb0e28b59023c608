"""The start-up benchmark runs end to end and reports its ratio and import shares (no timing
is asserted)."""

from __future__ import annotations

import pytest

from bench import startup as bench


@pytest.mark.bench  # runs the benchmark end to end: `pytest -m bench`
def test_bench_reports_the_ratio_and_the_imports(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--runs", "1", "--warm", "0"]) == 0
    out = capsys.readouterr().out
    assert "x CPU of python -c pass (target <= 1.5x CPU)" in out
    assert "sync generate --all --check: imports " in out


@pytest.mark.bench  # runs the benchmark end to end: `pytest -m bench`
def test_importtime_is_read_per_package() -> None:
    wall, total, packages = bench.imported(["decode", "--help"])
    assert 0 < total < wall
    assert "click" in packages  # every command parses its options with click
    # ...but the group's own help is the stored text (syncer/helptext.py).
    assert "click" not in bench.imported(["--help"])[2]


@pytest.mark.bench  # runs the benchmark end to end: `pytest -m bench`
def test_the_import_replay_imports_what_the_command_imports_and_runs_nothing() -> None:
    modules = bench.imports_of(["verify", "--help"])
    assert "click" in modules and "syncer.commands.verify" in modules
    assert not [m for m in modules if "__main__" in m]  # which would run the command
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", bench.REPLAY, *modules],
        capture_output=True,
        text=True,
        cwd=bench.ROOT,
        check=True,
    )
    assert done.stdout == ""  # imported, never run
