"""The tests' fork server (tests/forkserver.py) is ``python -m syncer`` as far as a command can
tell: the same output, exit code and side effects, for every way a test runs the command
(arguments, working directory, environment, umask, a pipe closed early, a signal, a timeout)."""

from __future__ import annotations

import ast
import contextlib
import os
import shlex
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import forkserver
import pytest

ROOT = Path(__file__).resolve().parent.parent
KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
MODULE = "cookbook_snippets/deepseek-ai/deepseek-v4_1.jsx"
BOTH = {"real": forkserver.real_command(), "forked": forkserver.command()}


@pytest.fixture(autouse=True)
def _server_on() -> None:
    if os.environ.get(forkserver.ENV) == "0":
        pytest.skip("the fork server is off (SYNC_TEST_FORKSERVER=0)")


CASES = {
    "help": ["--help"],
    "command-help": ["verify", "--help"],
    "usage-error": ["verify"],
    "unknown-command": ["nope"],
    "verify-text": ["verify", KEY],
    "verify-json": ["verify", KEY, "--format", "json"],
    "render": ["render", KEY],
    "decode-all-json": ["decode", MODULE, "--all", "--format", "json"],
    "bad-input": ["decode", "no/such.jsx"],
}


def run(way: str, args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    kw.setdefault("cwd", ROOT)
    return subprocess.run(
        [*BOTH[way], *args],
        capture_output=True,
        text=True,
        timeout=120,
        **kw,  # type: ignore[arg-type]
    )


def outcome(proc: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    return proc.returncode, proc.stdout, proc.stderr


def test_the_server_is_running_for_this_test_process() -> None:
    # otherwise every comparison below compares the real command with itself
    assert os.path.exists(os.environ[forkserver.ENV])
    probe = subprocess.run(
        [*forkserver.command(), "--help"], capture_output=True, text=True, check=True,
        env={**os.environ, "SYNC_TEST_FORKSERVER_SAY": "1"},
    )  # fmt: skip
    assert probe.stderr == "forkserver: forked\n"


def test_a_request_larger_than_one_send_is_forked_whole() -> None:
    # 1 MB of environment (a variable may hold 128 kB): more than the socket takes in one
    # send, so the client sends the rest after the first part, which carried its streams.
    big = {f"BIG_{i}": "x" * (100 << 10) for i in range(10)}
    env = {**os.environ, "SYNC_TEST_FORKSERVER_SAY": "1", **big}
    probe = subprocess.run(
        [*forkserver.command(), "--help"], capture_output=True, text=True, check=True, env=env
    )
    assert probe.stderr == "forkserver: forked\n"
    assert probe.stdout == run("real", ["--help"]).stdout


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_command_says_and_exits_as_the_real_one(case: str) -> None:
    env = {**os.environ, "COLUMNS": "57"}  # the environment reaches the command
    forked = outcome(run("forked", CASES[case], env=env))
    assert forked == outcome(run("real", CASES[case], env=env))


def test_in_another_folder_without_a_sync_yaml(tmp_path: Path) -> None:
    args = ["verify", KEY]
    assert outcome(run("forked", args, cwd=tmp_path)) == outcome(run("real", args, cwd=tmp_path))
    assert run("real", args, cwd=tmp_path).returncode == 2


def test_a_file_written_under_the_callers_umask(tmp_path: Path) -> None:
    modes = {}
    for way in BOTH:
        out = tmp_path / f"{way}.jsx"
        proc = run(way, ["reencode", MODULE, "--out", str(out)], preexec_fn=lambda: os.umask(0o077))
        assert proc.returncode == 0, proc.stderr
        modes[way] = (stat.S_IMODE(out.stat().st_mode), out.read_bytes())
    assert modes["forked"] == modes["real"]
    assert modes["real"][0] == 0o600


def test_a_reader_that_goes_away_is_the_same_exit_code() -> None:
    codes = {}
    for way, cmd in BOTH.items():
        line = " ".join(map(shlex.quote, [*cmd, "decode", MODULE, "--all", "--format", "json"]))
        proc = subprocess.run(
            ["bash", "-c", f'{line} | head -c1 >/dev/null; exit "${{PIPESTATUS[0]}}"'],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        codes[way] = (proc.returncode, proc.stderr)
    assert codes["forked"] == codes["real"]
    assert codes["real"][0] == 141


def test_an_output_that_cannot_be_written_ends_as_the_real_one() -> None:
    seen = {}
    for way in BOTH:
        with open("/dev/full", "w") as full:
            proc = subprocess.run(
                [*BOTH[way], "render", KEY], cwd=ROOT, stdout=full, stderr=subprocess.PIPE,
                text=True, timeout=120,
            )  # fmt: skip
        seen[way] = (proc.returncode, proc.stderr)
    assert seen["forked"] == seen["real"]
    assert seen["real"][0] != 0


def _hanging_git(tmp_path: Path) -> dict[str, str]:
    """An environment whose git never answers (and says its process id)."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    git = bindir / "git"
    git.write_text(f"#!/bin/sh\necho $$ >> {tmp_path}/pids\nexec sleep 600\n")
    git.chmod(0o755)
    return {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}"}


def _started(tmp_path: Path, count: int) -> list[int]:
    pids = tmp_path / "pids"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if pids.exists() and len(pids.read_text().split()) >= count:
            return [int(p) for p in pids.read_text().split()]
        time.sleep(0.01)
    raise AssertionError("the command never ran git")


@pytest.mark.parametrize("sig", [signal.SIGTERM])
def test_a_signal_sent_to_the_command_stops_it_as_the_real_one(tmp_path: Path, sig: int) -> None:
    env = _hanging_git(tmp_path)
    seen = {}
    for count, way in enumerate(BOTH, start=1):
        proc = subprocess.Popen(
            [*BOTH[way], "lint", MODULE, "--sglang", str(tmp_path)], cwd=ROOT, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        git = _started(tmp_path, count)[-1]
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        with contextlib.suppress(ProcessLookupError):  # the command may have stopped it
            os.kill(git, signal.SIGKILL)
        seen[way] = (proc.returncode, out, err)
    assert seen["forked"] == seen["real"]
    assert seen["real"][0] == {signal.SIGTERM: 143, signal.SIGINT: 2}[sig], seen["real"]


def test_a_command_whose_caller_is_killed_on_a_timeout_does_not_run_on(tmp_path: Path) -> None:
    env = _hanging_git(tmp_path)
    proc = subprocess.Popen(
        [*forkserver.command(), "lint", MODULE, "--sglang", str(tmp_path)], cwd=ROOT, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    [git] = _started(tmp_path, 1)
    proc.kill()  # what subprocess.run does on its timeout
    proc.wait()
    deadline = time.monotonic() + 60
    while _alive(git) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _alive(git)  # the command, and the git it started, went with it


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


C_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"}


@pytest.mark.parametrize(
    "startup", [C_LOCALE, {"PYTHONIOENCODING": "ascii"}], ids=["C locale", "ascii"]
)
def test_a_different_interpreter_start_up_is_forked_from_a_server_started_so(
    startup: dict[str, str],
) -> None:
    # A fork cannot make another start-up again (the streams' encoding, the arguments read
    # in the locale's): a server started with the client's start-up variables serves it.
    # "clé" under the C locale is read as undecodable bytes, named escaped: as the real one.
    # (The environment is test_stdout_encoding's, whose commands the same server serves.)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "PYTHONIO"))}
    base.pop("LANG", None)
    env = {**base, **startup}
    args = ["render", "clé—inconnue"]
    forked = run("forked", args, env={**env, "SYNC_TEST_FORKSERVER_SAY": "1"})
    real = run("real", args, env=env)
    assert forked.stderr.startswith("forkserver: forked\n")
    assert outcome(forked)[:2] == outcome(real)[:2]
    assert forked.stderr.removeprefix("forkserver: forked\n") == real.stderr
    assert real.returncode == 2
    if startup is C_LOCALE:
        assert "cl\\udcc3\\udca9" in real.stderr


def test_a_server_for_another_start_up_is_started_as_the_client_was() -> None:
    # Without any locale the interpreter coerces the C locale to C.UTF-8 (LC_CTYPE set, UTF-8
    # mode on); a server started with LC_CTYPE=C.UTF-8 would start differently (UTF-8 mode
    # off). What it is started with is what the client was started with, before coercion.
    base = {k: v for k, v in os.environ.items() if not forkserver._read_at_start_up(k)}
    probe = subprocess.run(
        [sys.executable, "-c", "import forkserver; print(forkserver._identity())"],
        cwd=Path(forkserver.__file__).parent, env=base, capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    identity = ast.literal_eval(probe.stdout)
    assert identity["startup"] == {"LC_CTYPE": "C.UTF-8"}
    assert identity["origin"] == {}


def test_a_start_up_and_a_limit_the_fork_cannot_set_runs_the_real_command() -> None:
    own = forkserver._identity()
    request = {"identity": {**own, "startup": {"PYTHONHASHSEED": "7"}, "executable": "/x"}}
    assert forkserver._other_server(request, own, forkserver._Servers("/nonexistent")) is None
