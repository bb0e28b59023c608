"""Issue 36 point 13: messages that say what is wrong, through the real command.

A bad option value, an unknown option or command, a missing argument: one ``error:`` line
naming the command, exit 2 (click printed a four-line usage block). ``sync diff`` of a FIFO
or a directory says what is there (it said "no such file").
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_hardening import MODULE, copy_project, error_line, sync


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["decode", MODULE, "--point", "abc"],
            "error: sync decode: Invalid value for '--point': 'abc' is not a valid integer "
            "(see sync decode --help)",
        ),
        (
            ["decode", MODULE, "--format", "yaml"],
            "error: sync decode: Invalid value for '--format': 'yaml' is not one of 'text', "
            "'markdown', 'json' (see sync decode --help)",
        ),
        (
            ["diff", MODULE, MODULE, "--budget", "0"],
            "error: sync diff: Invalid value for '--budget': 0 is not in the range x>=1 "
            "(see sync diff --help)",
        ),
        (
            ["render", "--bogus"],
            "error: sync render: No such option '--bogus' (see sync render --help)",
        ),
        (["decode"], "error: sync decode: Missing argument 'MODULE' (see sync decode --help)"),
        (["nosuch"], "error: sync: No such command 'nosuch' (see sync --help)"),
        (
            ["verify", "--format", "\x1b[2J"],
            "error: sync verify: Invalid value for '--format': '\\x1b[2J' is not one of "
            "'text', 'markdown', 'json' (see sync verify --help)",
        ),
    ],
)
def test_click_refusals_are_one_error_line(tmp_path: Path, args: list[str], expected: str) -> None:
    project = copy_project(tmp_path)
    # run as `python -m syncer`, which click names so (installed, it is `sync`)
    assert error_line(sync(project, *args)).replace("python -m syncer", "sync") == expected


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_diff_names_what_a_side_is_when_it_is_no_file(tmp_path: Path, kind: str) -> None:
    project = copy_project(tmp_path / "project")
    side = tmp_path / "side.jsx"
    if kind == "fifo":
        os.mkfifo(side)
        what = "a FIFO (named pipe), not a regular file"
    else:
        side.mkdir()
        what = "a directory, not a regular file"
    line = error_line(sync(project, "diff", str(side), MODULE))
    assert line == f"error: {side}: cannot read data module: {what}"
