"""Issue 36.12: a standard output whose encoding is not UTF-8 (``PYTHONIOENCODING=ascii``, or
``LC_ALL=C`` with ``PYTHONUTF8=0``) made every report holding a ``—`` exit 3.

What a user expects: the same bytes as anywhere else. The reports are UTF-8 by their format
(JSON, markdown for a PR body) or commands to paste, which an escape would change; so every
command writes UTF-8 whatever the locale, exit 0, byte for byte what a UTF-8 locale gets.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import forkserver
import pytest
from test_hardening import KEY, MODULE, copy_project

NARROW = {
    "ascii": {"PYTHONIOENCODING": "ascii"},
    "C locale": {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"},
}
UTF8 = {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}

COMMANDS = {
    "render": ["render", KEY],
    "render-json": ["render", KEY, "--format", "json"],
    "decode": ["decode", MODULE, "--all"],
    "verify": ["verify", KEY],
    "verify-markdown": ["verify", KEY, "--format", "markdown"],
    "diff": ["diff", MODULE, MODULE],
    "audit": ["audit", "--cookbook", "cookbook_snippets"],
    "generate-check": ["generate", "--all", "--check"],
    "help": ["--help"],
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_project(tmp_path_factory.mktemp("encoding"))


def _run(project: Path, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "PYTHONIO"))}
    base.pop("LANG", None)
    return subprocess.run(
        [*forkserver.command(), *args],
        cwd=project,
        capture_output=True,
        env={**base, "PYTHONPATH": str(Path(forkserver.__file__).parent.parent), **env},
        timeout=120,
    )


_WIDE: dict[tuple[Path, str], subprocess.CompletedProcess[bytes]] = {}


def _wide(project: Path, command: str) -> subprocess.CompletedProcess[bytes]:
    """The command's outcome in a UTF-8 locale, run once for both narrow outputs (the project
    is the module's, and none of the commands writes to it)."""
    if (project, command) not in _WIDE:
        _WIDE[project, command] = _run(project, COMMANDS[command], UTF8)
    return _WIDE[project, command]


@pytest.mark.parametrize("narrow", NARROW, ids=list(NARROW))
@pytest.mark.parametrize("command", COMMANDS, ids=list(COMMANDS))
def test_every_command_writes_utf8_on_a_narrow_stdout(
    project: Path, command: str, narrow: str
) -> None:
    args = COMMANDS[command]
    wide = _wide(project, command)
    proc = _run(project, args, NARROW[narrow])
    assert proc.returncode == wide.returncode, proc.stderr.decode("utf-8", "replace")[-2000:]
    assert proc.returncode in (0, 1)
    assert proc.stdout == wide.stdout
    assert proc.stdout.decode("utf-8")  # UTF-8, and not empty


def test_the_reports_hold_characters_ascii_cannot(project: Path) -> None:
    # What made the narrow stdout fail: the check above would be empty without one.
    out = _wide(project, "verify").stdout.decode("utf-8")
    assert any(ord(c) > 127 for c in out)


@pytest.mark.parametrize("narrow", NARROW, ids=list(NARROW))
def test_an_error_naming_a_non_ascii_value_is_one_utf8_line(project: Path, narrow: str) -> None:
    proc = _run(project, ["render", "clé—inconnue"], NARROW[narrow])
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.decode("utf-8").splitlines()
    assert line.startswith("error: ") and "unknown config key" in line
    if narrow == "ascii":  # the argument was read as UTF-8: named as typed
        assert "clé—inconnue" in line
    else:  # the C locale reads it as undecodable bytes: named, escaped (stderr never fails)
        assert "cl\\udcc3\\udca9" in line


@pytest.mark.parametrize("narrow", NARROW, ids=list(NARROW))
def test_the_bot_dry_run_prints_its_plan_in_utf8(world, narrow: str) -> None:
    # The bot masks its streams (secrets.install wraps them): the wrapper writes UTF-8 too.
    from botworld import RUN, sync_bot

    comment = world.comment(f"/use {RUN}")
    event = world.comment_event(comment)
    wide = sync_bot(world, event, "--dry-run", extra_env=UTF8)
    proc = sync_bot(world, event, "--dry-run", extra_env=NARROW[narrow])
    assert (proc.returncode, wide.returncode) == (0, 0), proc.stderr[-3000:]
    assert any(ord(c) > 127 for c in proc.stdout)
    assert proc.stdout == wide.stdout
    assert world.gh.writes() == []
