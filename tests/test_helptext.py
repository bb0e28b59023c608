"""`sync --help` printed from the stored text is click's own help, for every way the program is
started, and click prints it itself whenever the stored text would not be its output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import match_golden

from syncer import helptext
from syncer.commands.group import cli

BINDIR = Path(sys.executable).parent


def clicks_help(prog: str, width: int = helptext.WIDTH) -> str:
    """What click prints for ``prog --help`` at ``width`` columns."""
    done = CliRunner().invoke(cli, ["--help"], prog_name=prog, terminal_width=width)
    assert done.exit_code == 0, done.output
    return done.output


def test_stored_help_is_clicks_help() -> None:
    # SYNC_UPDATE_GOLDEN=1 writes it again after a command or its one-line help changed.
    match_golden(Path(helptext.HELP_FILE), clicks_help(helptext.PROG))


def _run(cmd: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run(
        cmd, capture_output=True, text=True, env={**environment, **env}, check=False
    )


@pytest.mark.parametrize(
    ("cmd", "prog"),
    [
        ([str(BINDIR / "sync"), "--help"], "sync"),
        ([str(BINDIR / "cookbook-sync"), "-h"], "cookbook-sync"),
        ([sys.executable, "-m", "syncer", "--help"], "python -m syncer"),
    ],
)
def test_the_real_command_prints_clicks_help(cmd: list[str], prog: str) -> None:
    done = _run(cmd)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == clicks_help(prog)


def test_the_stored_help_is_printed_without_importing_click() -> None:
    probe = (
        "import sys\n"
        "from syncer.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "finally:\n"
        "    print('click' in sys.modules, file=sys.stderr)\n"
    )
    done = _run([sys.executable, "-c", probe])
    assert done.returncode == 0
    assert done.stderr == "False\n"
    assert done.stdout == clicks_help("-c")


def test_a_narrow_terminal_gets_clicks_wrapping() -> None:
    # 60 columns: click wraps at 58, so the stored (78-column) text is not its output.
    done = _run([str(BINDIR / "sync"), "--help"], COLUMNS="60")
    assert done.returncode == 0
    assert done.stdout == clicks_help("sync", width=58)
    assert done.stdout != clicks_help("sync")


def test_anything_but_the_groups_help_goes_through_click(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert helptext.stored_help(["--help"], "sync") is not None
    for args in (["render", "--help"], ["--version"], [], ["--help", "x"]):
        assert helptext.stored_help(args, "sync") is None
    # A name long enough to wrap the usage line at the stored width.
    assert helptext.stored_help(["--help"], "x" * 60) is None


@pytest.mark.parametrize("columns", ["100", "60"])  # the stored text, then click's own
def test_a_reader_gone_before_the_last_byte_is_141_as_for_every_command(columns: str) -> None:
    def piped(reader: str) -> int:
        line = f"{sys.executable} -m syncer --help | {reader}; exit ${{PIPESTATUS[0]}}"
        return _run(["bash", "-c", line], COLUMNS=columns).returncode

    assert piped("head -c1 >/dev/null") == 141
    assert piped("cat >/dev/null") == 0
