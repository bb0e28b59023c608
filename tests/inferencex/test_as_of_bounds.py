"""Issue 36, point 9: ``--as-of`` is a real date git can resolve a branch at, or one ``error:``
line. ``2026-13-45`` was taken (git read something else and its commit was stated as what
ran); ``9999-12-31`` gave a false "no commit at or before" (git reads no year past 2099)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_releases import AGG, _cli, _render_json, _runner_cloning, srt_history

__all__ = ["srt_history"]  # the fixture, used by name


@pytest.mark.parametrize(
    ("when", "problem"),
    [
        ("2026-13-45", "is not a date: month must be in 1..12"),
        ("2026-02-30", "is not a date: day is out of range for month"),
        ("2026-08-05T25:00", "is not a date: hour must be in 0..23"),
        ("9999-12-31", "is outside the dates git can resolve a branch at (1970-01-01 to "
         "2099-12-31)"),
        ("1969-12-31", "is outside the dates git can resolve a branch at"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("command", ["render", "verify", "generate"])
def test_an_as_of_that_is_no_date_git_resolves_is_one_error_line(
    tmp_path: Path, srt_history: dict[str, str], when: str, problem: str, command: str
) -> None:
    tree = _runner_cloning(tmp_path, "git checkout main")
    target = ["--all"] if command == "generate" else [AGG]
    proc = _cli(
        command, *target, "--inferencex", str(tree), "--srt-slurm-repo", srt_history["repo"],
        "--as-of", when,
    )  # fmt: skip
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.startswith(f'error: --as-of "{when}" {problem}'), proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stdout == ""


def test_the_last_date_git_reads_gives_the_branch_as_the_clone_holds_it(
    tmp_path: Path, srt_history: dict[str, str]
) -> None:
    tree = _runner_cloning(tmp_path, "git checkout main")
    doc = _render_json(tree, "--srt-slurm-repo", srt_history["repo"], "--as-of", "2099-12-31")
    assert doc["srt_slurm"]["commit"] == srt_history["v58"]
