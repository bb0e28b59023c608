"""The shared pieces: the lead-flag order, the error line, the lazy CLI group."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from syncer.errors import SyncError
from syncer.model import sort_worker_args


def test_lead_flags_first_then_code_unit_order_and_repeats_stable() -> None:
    args = [
        ["--trust-remote-code"],
        ["--decode", "http://b"],
        ["--port", "30000"],
        ["--expert-parallel-size", "2"],
        ["--decode", "http://a"],
        ["--ep-size", "2"],
        ["--model-path", "m"],
        ["--kv-events-config", "{}"],
        ["--host", "0.0.0.0"],
    ]
    assert [a[0] for a in sort_worker_args(args)] == [
        "--model-path",
        "--host",
        "--port",
        "--kv-events-config",
        "--decode",
        "--decode",
        "--ep-size",
        "--expert-parallel-size",
        "--trust-remote-code",
    ]
    decodes = [a[1] for a in sort_worker_args(args) if a[0] == "--decode"]
    assert decodes == ["http://b", "http://a"]


def test_error_names_file_line_and_column() -> None:
    assert str(SyncError("expected a mapping", path="r.yaml", line=3, column=7)) == (
        "r.yaml:3:7: expected a mapping"
    )
    assert str(SyncError("no position", path="r.yaml")) == "r.yaml: no position"
    assert str(SyncError("bare")) == "bare"


def test_cli_lists_every_command_and_unknown_command_exits_2() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "syncer", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for name in ("bot", "decode", "diff", "generate", "reencode", "render", "verify"):
        assert f"  {name} " in out
    bad = subprocess.run([sys.executable, "-m", "syncer", "nope"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "No such command" in bad.stderr


def test_both_console_scripts_run_the_cli() -> None:
    from importlib.metadata import entry_points

    scripts = {e.name: e.value for e in entry_points(group="console_scripts")}
    assert scripts["sync"] == scripts["cookbook-sync"] == "syncer.cli:run"
    bindir = Path(sys.executable).parent
    for name in ("sync", "cookbook-sync"):
        done = subprocess.run([str(bindir / name), "--help"], capture_output=True, text=True)
        assert done.returncode == 0 and "  decode " in done.stdout


def test_readme_opens_with_the_two_commands_ci_runs() -> None:
    # .ci/run takes the second line of the README's first code block as the test command.
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("```")[1].strip("\n").splitlines()
    assert len(block) == 2
    setup, tests = block
    assert "python3 -m venv .venv" in setup and "pip install" in setup
    assert "/cookbook-sync verify " in setup
    assert tests.startswith(".venv/bin/python -m pytest")
    assert readme.index("```") < readme.index("\n## ")


def test_the_readme_names_the_program_by_its_unambiguous_name_in_every_command_to_copy() -> None:
    # Issue 37.7: outside the virtualenv `sync` is coreutils' ("sync: error opening 'verify'").
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    blocks = readme.split("```")[1::2]
    lines = [line for block in blocks for line in block.splitlines() if ".venv/bin/" in line]
    assert lines and not [line for line in lines if ".venv/bin/sync " in line]


def test_an_internal_error_is_exit_3_with_its_traceback_not_drift(monkeypatch, capsys) -> None:
    import pytest

    from syncer import cli
    from syncer.commands.group import LazyGroup

    def broken(self, ctx, name):  # a command whose import blows up like a bug would
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(LazyGroup, "get_command", broken)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["decode", "x"])
    assert exit_info.value.code == 3
    err = capsys.readouterr().err
    assert "ZeroDivisionError: boom" in err
    assert err.rstrip().endswith("traceback above)")


def test_a_superscript_digit_cell_selector_is_an_unknown_id_not_a_crash() -> None:
    from pathlib import Path

    import pytest

    from syncer.cookbook.decode import load_decoder

    root = Path(__file__).resolve().parent.parent
    decoder = load_decoder(root / "cookbook_snippets" / "deepseek-ai" / "deepseek-v4_1.jsx")
    with pytest.raises(SyncError, match='no cell with id "²"'):
        decoder.cell_index("²")


def test_a_reader_closing_the_pipe_is_not_drift() -> None:
    """`sync verify KEY | head -1`: the report outlives its reader. That is neither drift (1)
    nor a bug (3): the shell's code for a program a closed pipe stopped, and no traceback. The
    reader is gone before the first write, so the outcome does not depend on timing."""
    import os

    bindir = Path(sys.executable).parent
    read_end, write_end = os.pipe()
    os.close(read_end)
    done = subprocess.run(
        [str(bindir / "sync"), "verify", "dsv41flash-fp4-gb300-sglang-agentic-dspark"],
        stdout=write_end,
        stderr=subprocess.PIPE,
        cwd=Path(__file__).parent.parent,
    )
    os.close(write_end)
    assert done.returncode == 141
    assert done.stderr == b""


def test_the_exit_codes_are_in_the_help() -> None:
    # Issue 37.7: the README's exit codes (0/1/2/3/141/143) were in no --help.
    done = subprocess.run(
        [sys.executable, "-m", "syncer", "--help"], capture_output=True, text=True, check=True
    )
    text = " ".join(done.stdout.split())
    for code in ("0 clean", "1 drift", "2 bad input", "3 an internal error", "141 the reader",
                 "143 stopped by SIGTERM"):  # fmt: skip
        assert f"{code}" in text, code
