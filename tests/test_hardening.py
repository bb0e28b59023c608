"""Issue 22, the second hostile trial: each class through the real command (``python -m
syncer`` in a copy of the project), failing on the code before the fix.

Paste safety, files that are not regular, closed pipes, signals, bounded work, honest output.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import forkserver
import pytest
from botworld import sync_bot

ROOT = Path(__file__).resolve().parent.parent
KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
MODULE = "cookbook_snippets/deepseek-ai/deepseek-v4_1.jsx"
RECIPE = (
    "examples/inferencex/inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/"
    "dsv41flash/sglang/gb300-fp4-mtp/agentic.yaml"
)
MASTER = "examples/inferencex/inferencex-e2e/configs/nvidia-master.yaml"
PAGE = "examples/cookbook/docs/cookbook/autoregressive/DeepSeek/DeepSeek-V4_1.mdx"


def copy_project(dest: Path) -> Path:
    """A copy of the project's own inputs in ``dest``, the working directory of a command."""
    dest.mkdir(exist_ok=True)
    for name in ("sync.yaml", "examples", "cookbook_snippets"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name)
        else:
            shutil.copy(source, dest / name)
    return dest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the project's own inputs, the working directory of every command."""
    return copy_project(tmp_path)


def sync(
    cwd: Path, *args: str, timeout: float = 60, bound_by_modes: bool = False
) -> subprocess.CompletedProcess[str]:
    """``sync ARGS`` as a user runs it (``bound_by_modes``: a root whose permission checks are not
    bypassed, for permission tests)."""
    cmd = [*forkserver.command(), *args]
    if bound_by_modes:  # started as itself: setpriv execs it with the capabilities dropped
        cmd = ["setpriv", f"--bounding-set={UNBOUND}", f"--inh-caps={UNBOUND}"]
        cmd += [*forkserver.real_command(), *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def piped(cwd: Path, args: list[str], reader: str) -> int:
    """The exit code of ``sync ARGS | READER`` (the writer's, as ``PIPESTATUS`` has it)."""
    proc = start_piped(cwd, args, reader)
    proc.communicate(timeout=60)
    return proc.returncode


def start_piped(cwd: Path, args: list[str], reader: str) -> subprocess.Popen[bytes]:
    line = " ".join(map(shlex.quote, [*forkserver.command(), *args]))
    return subprocess.Popen(
        ["bash", "-c", f'{line} | {reader}; exit "${{PIPESTATUS[0]}}"'],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


# ---- 2. writing onto what is not a regular file ----------------------------------------------


def test_output_onto_a_fifo_or_a_device_is_refused_and_left_alone(project: Path) -> None:
    os.mkfifo(project / "fifo")
    line = error_line(sync(project, "diff", MODULE, MODULE, "-o", "fifo"))
    assert line == "error: fifo: cannot write the file: a FIFO (named pipe), not a regular file"
    assert stat.S_ISFIFO((project / "fifo").lstat().st_mode)
    if os.geteuid() == 0:  # making a device node needs root; /dev/full's numbers
        os.mknod(project / "full", 0o666 | stat.S_IFCHR, os.makedev(1, 7))
        line = error_line(sync(project, "reencode", MODULE, "--out", "full"))
        assert line == "error: full: cannot write the file: a device, not a regular file"
        assert stat.S_ISCHR((project / "full").lstat().st_mode)
    assert sorted(p.name for p in project.iterdir() if p.name.endswith(".tmp")) == []


def test_output_through_a_symlink_replaces_the_file_and_keeps_the_link(project: Path) -> None:
    (project / "real.txt").write_text("old\n")
    (project / "link.txt").symlink_to("real.txt")
    proc = sync(project, "diff", MODULE, MODULE, "-o", "link.txt", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert (project / "link.txt").is_symlink()
    assert (project / "real.txt").read_text().startswith("{")
    (project / "dangling").symlink_to("nowhere/at/all")
    line = error_line(sync(project, "diff", MODULE, MODULE, "-o", "dangling"))
    assert line == "error: dangling: cannot write the file: a symlink to nothing"


@pytest.mark.parametrize(
    "args",
    [
        ["render", KEY],
        ["decode", MODULE, "--all", "--format", "json"],
        ["verify", KEY],
        ["--help"],  # the stored help, written without click
        ["verify", "--help"],
    ],
    ids=["render", "decode-json", "verify-text", "help", "command-help"],
)
def test_standard_output_with_no_room_is_one_error_line_not_a_traceback(
    project: Path, args: list[str]
) -> None:
    # `sync render KEY > /dev/full`: the write fails with ENOSPC, as on a full disk.
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [*forkserver.command(), *args], cwd=project, stdout=full, stderr=subprocess.PIPE,
            text=True, timeout=60,
        )  # fmt: skip
    line = error_line(proc)
    assert line == "error: cannot write the output (standard output): No space left on device"


# ---- 4. reading what is not a regular file ----------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_module_master_sync_yaml_or_event_that_is_no_regular_file_is_one_error(
    project: Path, kind: str
) -> None:
    def replace(rel: str) -> None:
        path = project / rel
        if path.exists():
            path.unlink()
        os.mkfifo(path) if kind == "fifo" else path.mkdir()

    word = "a FIFO (named pipe)" if kind == "fifo" else "a directory"
    replace("module.jsx")
    line = error_line(sync(project, "decode", "module.jsx", timeout=20))
    assert line == f"error: module.jsx: cannot read data module: {word}, not a regular file"
    line = error_line(sync(project, "reencode", "module.jsx", timeout=20))
    assert line == f"error: module.jsx: cannot read data module: {word}, not a regular file"
    replace("event.json")
    line = error_line(sync(project, "bot", "--event", "event.json", "--dry-run", timeout=20))
    assert line == f"error: event.json: cannot read the event: {word}, not a regular file"
    replace(MASTER)
    line = error_line(sync(project, "render", KEY, timeout=20))
    assert line.endswith(f"{MASTER}: cannot read master config: {word}, not a regular file")
    replace("sync.yaml")
    line = error_line(sync(project, "generate", "--all", "--check", timeout=20))
    assert f"sync.yaml: cannot read the sync configuration: {word}, not a regular file" in line


GOLDEN = "examples/inferencex/inferencex-e2e/infx/golden_al_distribution/dsv41flash_dspark.yaml"


@pytest.mark.parametrize("kind", ["fifo", "directory", "dangling symlink"])
def test_an_optional_input_that_is_no_regular_file_is_refused_not_taken_as_absent(
    project: Path, kind: str
) -> None:
    # Found by the fuzz campaign: the golden AL file and the existing module (which generate
    # compares with, and keeps cells of) were taken as absent: render printed no golden AL,
    # generate --check said "would change" (exit 1), verify found no module (exit 1).
    def replace(rel: str) -> None:
        path = project / rel
        path.unlink()
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "directory":
            path.mkdir()
        else:
            path.symlink_to("no/such/file")

    word = {
        "fifo": "a FIFO (named pipe), not a regular file",
        "directory": "a directory, not a regular file",
        "dangling symlink": "a symlink to nothing",
    }[kind]
    replace(GOLDEN)
    line = error_line(sync(project, "render", KEY, timeout=20))
    assert line.endswith(f"{GOLDEN}: cannot read golden AL file: {word}"), line
    (project / GOLDEN).unlink() if kind != "directory" else (project / GOLDEN).rmdir()
    shutil.copy(ROOT / GOLDEN, project / GOLDEN)
    replace(MODULE)
    line = error_line(sync(project, "generate", "--all", "--check", timeout=20))
    assert line.endswith(f"{MODULE}: cannot read data module: {word}"), line
    if kind == "directory":
        line = error_line(sync(project, "verify", KEY, timeout=20))
        assert line.endswith(f"{MODULE}: cannot read data module: {word}"), line


# ---- 5. permissions ---------------------------------------------------------------------------

# Root reads a file of mode 0 through these two capabilities. Dropping them, rather than running
# as another user, keeps the process the owner of the checkout and its virtualenv, so the test
# passes wherever the project is cloned (a home directory of mode 700 included).
UNBOUND = "-dac_override,-dac_read_search"
needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to drop the capabilities that bypass file modes",
)


@needs_root
def test_an_unreadable_recipe_or_log_folder_is_exit_2_naming_the_path(project: Path) -> None:
    (project / RECIPE).chmod(0)
    line = error_line(sync(project, "render", KEY, bound_by_modes=True))
    assert line.endswith(f"{RECIPE}: cannot read YAML file: Permission denied")
    (project / RECIPE).chmod(0o644)
    logs = next((project / "examples/runs/41000000001").glob("*conc1_*"))
    (logs / "srt-single-node-logs/logs").chmod(0)
    line = error_line(sync(project, "verify", KEY, bound_by_modes=True))
    assert line.endswith(" cannot read the run folder: Permission denied"), line


@needs_root
def test_the_permission_check_runs_from_a_virtualenv_only_its_owner_can_enter(
    project: Path, tmp_path: Path
) -> None:
    # Issue 37: with the project's virtualenv under a home of mode 700, the tool run as another
    # user could not start ("No module named syncer"), so this check failed wherever such a user
    # cloned. A virtualenv made there, seeing this one's packages, stands for that clone.
    home = tmp_path / "home"
    venv = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "outer.pth").write_text("\n".join([str(ROOT), *sysconfig_paths()]) + "\n")
    home.chmod(0o700)
    (project / RECIPE).chmod(0)
    cmd = ["setpriv", f"--bounding-set={UNBOUND}", f"--inh-caps={UNBOUND}"]
    ran = subprocess.run(
        [*cmd, str(venv / "bin" / "python"), "-m", "syncer", "render", KEY], cwd=project,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert error_line(ran).endswith(f"{RECIPE}: cannot read YAML file: Permission denied")


def sysconfig_paths() -> list[str]:
    return [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]


# ---- 11. a reader that goes away --------------------------------------------------------------

PIPED = {
    "verify-json": ["verify", KEY, "--format", "json"],
    "verify-text": ["verify", KEY],
    "render": ["render", KEY],
    "decode": ["decode", MODULE],
    "decode-all-json": ["decode", MODULE, "--all", "--format", "json"],
    "reencode": ["reencode", MODULE],
    "diff": ["diff", MODULE, MODULE],
    "generate-check": ["generate", "--all", "--check", "--date", "2026-10-13"],
    "lint": ["lint", MODULE, "--sglang", "sglang"],
    "audit": ["audit"],
}


@pytest.fixture(scope="session")
def pipes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the pipe tests share across the run's test processes (pytest-xdist's
    workers each have their own temporary folder, under the run's)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    (root / "pipes").mkdir(exist_ok=True)
    return root / "pipes"


@contextmanager
def pipes_lock(pipes: Path, name: str) -> Iterator[None]:
    """Held by one test process at a time (the others wait for what it makes)."""
    with open(pipes / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture
def piped_project(pipes: Path) -> Path:
    """A copy of the project with a one-flag SGLang checkout beside it for ``lint``: one for
    all the pipe tests of a run, since none of the commands piped writes into it."""
    from lintrepo import commit_files, git

    project = pipes / "project"
    with pipes_lock(pipes, "project"):
        if project.is_dir():
            return project
        shutil.rmtree(pipes / "copying", ignore_errors=True)  # a copy a failure cut short
        copy_project(pipes / "copying")
        repo = pipes / "copying" / "sglang"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        server_args = (
            "import argparse\n\n\nclass ServerArgs:\n    @staticmethod\n"
            "    def add_cli_args(parser):\n        parser.add_argument('--model-path')\n"
        )
        commit_files(repo, {"python/sglang/srt/server_args.py": server_args}, "v")
        (pipes / "copying").rename(project)
    return project


# `true` leaves before reading anything, often before the first write; `head -c1` reads one
# byte of an output that fits in the pipe's buffer, so every write succeeded before it left;
# the last one leaves after the command has written everything (LATE_READER: the ten commands
# run at once).
SLOW_READER = "late"
READERS = ["true", "head -c1", SLOW_READER]
# Reads one byte once the pipe holds the command's whole output (its size, read to the end,
# is the argument) or is full (a write end of its own polled: no room), then leaves: the moment
# the command has written all it can, without guessing how long that takes (it was `sleep 2`
# for all ten; 30 s at most here, the byte read then whatever the pipe holds).
LATE_READER = """
import fcntl, os, select, sys, termios, time
size, room = int(sys.argv[1]), select.poll()
room.register(os.open("/proc/self/fd/0", os.O_WRONLY), select.POLLOUT)
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    held = int.from_bytes(fcntl.ioctl(0, termios.FIONREAD, bytes(4)), sys.byteorder)
    if held >= size or not room.poll(0):
        break
    time.sleep(0.01)
os.read(0, 1)
"""


def late_reader(size: int) -> str:
    """The shell words of LATE_READER for an output of ``size`` bytes."""
    return shlex.join([sys.executable, "-S", "-c", LATE_READER, str(size)])


def read_to_the_end(project: Path, name: str) -> dict:
    """Command ``name`` of PIPED with its output read whole (exit code, whether it printed,
    the end of its stderr) and its exit code through a pipe read to the end. The same for
    every reader of the command, so run once per run in whichever test process asks first
    and read back by the others (the commands piped write nothing, so no run changes the
    next)."""
    args = PIPED[name]
    with pipes_lock(project.parent, name):
        known = project.parent / f"{name}.json"
        if not known.is_file():
            read = subprocess.run(
                [*forkserver.command(), *args], cwd=project, capture_output=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60,
            )  # fmt: skip
            outcome = {
                "returncode": read.returncode,
                "printed": bool(read.stdout),
                "size": len(read.stdout),
                "stderr": read.stderr[-2000:].decode(errors="replace"),
                "through a pipe": piped(project, args, "cat >/dev/null"),
            }
            known.write_text(json.dumps(outcome))
        return json.loads(known.read_text())


def slow_reader_codes(project: Path) -> dict[str, int]:
    """The exit code of every command of PIPED read by the late reader: all of them at once,
    once per run (each waits on its reader, and nothing else), read back by the tests of
    every test process."""
    sizes = {name: read_to_the_end(project, name)["size"] for name in PIPED}
    with pipes_lock(project.parent, "slow-reader"):
        known = project.parent / "slow-reader.json"
        if not known.is_file():
            running = {
                name: start_piped(project, args, late_reader(sizes[name]))
                for name, args in PIPED.items()
            }
            for proc in running.values():
                proc.communicate(timeout=60)
            known.write_text(json.dumps({name: p.returncode for name, p in running.items()}))
        return json.loads(known.read_text())


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("name", PIPED)
def test_a_closed_pipe_is_exit_141_not_the_drift_code(
    piped_project: Path, name: str, reader: str
) -> None:
    # the command's own code when its reader reads everything, so the output is not empty
    # and 141 is the closed pipe's, not the command's
    read = read_to_the_end(piped_project, name)
    assert read["returncode"] in (0, 1) and read["printed"], read["stderr"]
    assert read["through a pipe"] == read["returncode"]
    if reader == SLOW_READER:
        assert slow_reader_codes(piped_project)[name] == 141
    else:
        assert piped(piped_project, PIPED[name], reader) == 141


def test_drift_read_to_the_end_is_1_and_cut_short_is_141(project: Path) -> None:
    edit(project / RECIPE, "watchdog-timeout: 3600", "watchdog-timeout: 3601")
    for args in (["verify", KEY, "--format", "json"], ["verify", KEY]):
        assert piped(project, args, "cat >/dev/null") == 1
        assert piped(project, args, "head -c1 >/dev/null") == 141
    # a command that prints nothing has nothing left unread
    assert piped(project, ["diff", MODULE, MODULE, "-o", "diff.txt"], "true") == 0


# ---- 14. SIGTERM while writing ----------------------------------------------------------------


def test_sigterm_while_writing_leaves_no_temp_file_and_no_half_set(project: Path) -> None:
    # The signal is sent by the process itself at the moment the first module has been staged
    # and nothing is renamed yet: the window a real SIGTERM hits.
    script = (
        "import os, signal, sys\n"
        "import syncer.fsio as f\n"
        "real = f._stage\n"
        "def stage(path, text, staged=None):\n"
        "    name = real(path, text, staged)\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    return name\n"
        "f._stage = stage\n"
        "from syncer.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    edit(project / RECIPE, "watchdog-timeout: 3600", "watchdog-timeout: 3601")
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    proc = subprocess.run(
        [sys.executable, "-c", script, "generate", "--all", "--date", "2026-10-13"],
        cwd=project, capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
    assert proc.stderr == "terminated\n"
    after = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    assert after == before


# ---- 1. paste safety of `sync render` ---------------------------------------------------------

ARGS_END = "        enable-metrics: true\n"
PARSER = "        reasoning-parser: auto\n"


@pytest.mark.parametrize("raw", [False, True], ids=["cookbook", "raw"])
@pytest.mark.parametrize(
    ("old", "new", "what"),
    [
        (ARGS_END, ARGS_END + '        "x $(touch PWNED)": 1\n', 'flag = "--x $(touch PWNED)"'),
        (ARGS_END, ARGS_END + '        "semi;id": true\n', 'flag = "--semi;id"'),
        (
            "      env:\n        PYTHONNOUSERSITE",
            "      env:\n        \"A;touch x;B\": '1'\n        PYTHONNOUSERSITE",
            'env key = "A;touch x;B"',
        ),
    ],
    ids=["subshell-flag", "semicolon-flag", "env-key"],
)
def test_render_refuses_what_generate_refuses(
    project: Path, raw: bool, old: str, new: str, what: str
) -> None:
    edit(project / RECIPE, old, new)
    line = error_line(sync(project, "render", KEY, "--point", "0", *(["--raw"] if raw else [])))
    assert f"{KEY} point 0 router sglang, block 0 (Worker): {what} is printed unquoted" in line
    assert line.endswith("refusing to print it")
    assert not (project / "PWNED").exists()
    # generate refuses the same recipe (the one rule, in the shell module)
    assert "refusing to publish it" in error_line(sync(project, "generate", "--all", "--check"))


def test_raw_render_passes_a_dollar_literally_as_srt_slurm_did(project: Path) -> None:
    edit(project / RECIPE, PARSER, "        reasoning-parser: ${HOME}/x\n")
    proc = sync(project, "render", KEY, "--point", "0", "--raw")
    assert proc.returncode == 0, proc.stderr
    assert "  --reasoning-parser '${HOME}/x' \\" in proc.stdout.splitlines()
    # the renderer's own cluster tokens stay expandable
    proc = sync(project, "render", "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg", "--raw")
    assert 'ETCD_ENDPOINTS="http://$INFRA_IP:2379" \\' in proc.stdout.splitlines()
    # the cookbook form refuses it, as generate does
    line = error_line(sync(project, "render", KEY, "--point", "0"))
    assert "expands $HOME, which is not a known placeholder; refusing to print it" in line


# ---- 3. terminal and invisible characters -----------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ('"au\\u200bto"', '"au\\u200bto"'),
        ('"a\\e[31mred"', '"a\\u001b[31mred"'),
        ('"a\\u202eb"', '"a\\u202eb"'),
        ('"a\\u2028b"', '"a\\u2028b"'),
    ],
    ids=["zero-width", "escape", "bidi", "line-separator"],
)
def test_invisible_characters_are_refused_in_what_is_published_and_shown(
    project: Path, value: str, shown: str
) -> None:
    edit(project / RECIPE, PARSER, f"        reasoning-parser: {value}\n")
    before = (project / MODULE).read_bytes()
    for args in (["generate", "--all", "--date", "2026-10-13"], ["render", KEY, "--point", "0"]):
        line = error_line(sync(project, *args))
        assert f"flag --reasoning-parser = {shown} contains a line break" in line, line
    assert (project / MODULE).read_bytes() == before


def test_reports_show_invisible_characters_escaped(project: Path) -> None:
    # A zero-width character in a module the report names is shown, not passed through.
    module = project / MODULE
    edit(module, '"dsv41flash-fp4-gb300-sglang-agentic-dspark#0"', '"dsv41flash\\u200b#0"')
    proc = sync(project, "decode", MODULE, "--all")
    assert proc.returncode == 0, proc.stderr
    assert "dsv41flash\\u200b#0" in proc.stdout and "\u200b" not in proc.stdout


HOSTILE = {"\u200b": "\\u200b", "\x1b": "\\x1b", "\u202e": "\\u202e", "\u2028": "\\u2028"}


@pytest.mark.parametrize("args", [[], ["--all"]], ids=["default-case", "all"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_decode_of_a_foreign_module_shows_hidden_characters_escaped_and_says_so(
    project: Path, args: list[str], fmt: str
) -> None:
    import json

    # Someone else's module: a zero-width space, an escape sequence, a bidi override and a
    # line separator in a flag value of every cell's workers (the shared args pool).
    value = "au\u200bto\x1b[31mred\u202eb\u2028c"
    edit(
        project / MODULE,
        '["--reasoning-parser", "auto"]',
        json.dumps(["--reasoning-parser", value]),
    )
    proc = sync(project, "decode", MODULE, *args, "--format", fmt)
    assert proc.returncode == 0, proc.stderr
    assert not any(char in proc.stdout + proc.stderr for char in HOSTILE), "printed raw"
    if fmt == "text":
        assert "--reasoning-parser 'au\\u200bto\\x1b[31mred\\u202eb\\u2028c'" in proc.stdout
    else:  # JSON escapes: the values read back are the module's own
        doc = json.loads(proc.stdout)
        texts = [t for case in doc.get("cases", [doc]) for t in case["text"]]
        assert any(value in t for t in texts) and "\\u200b" in proc.stdout
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning: ")]
    cells = ["dsv41flash-fp4-gb300-sglang-agentic-dspark#0"]
    if args:
        cells = [c["id"] for c in _module_cells(project)]
    where = ", point 0, router sglang, KV tier none" if not args else ""
    shown = (
        "written as \\u escapes (the JSON values are unchanged)"
        if fmt == "json"
        else "printed as escapes, so the text is not the module's own: do not paste it as it is"
    )
    assert sorted(warnings) == sorted(
        f"warning: {MODULE}: cell {cell}{where} holds control or invisible characters "
        f"(\\x1b, \\u200b, \\u2028, \\u202e), {shown}"
        for cell in cells
    )
    # the project's own module has none, and no warning
    own = sync(ROOT, "decode", MODULE, *args, "--format", fmt)
    assert own.returncode == 0 and "warning" not in own.stderr


def _module_cells(project: Path) -> list[dict]:
    from syncer.cookbook.jsmodule import load_module

    return load_module(project / MODULE).value["cells"]


# ---- 7. sync.yaml values ----------------------------------------------------------------------


def test_run_ids_and_dates_are_the_text_written_or_a_clear_refusal(project: Path) -> None:
    config = project / "sync.yaml"
    good = config.read_text()
    config.write_text(good.replace('run: "41000000001"', "run: 41000000001"))
    assert sync(project, "verify", KEY).returncode == 0
    config.write_text(good.replace('date: "2026-10-13"', "date: 2026-10-13"))
    assert sync(project, "verify", KEY).returncode == 0
    for written in ("041000000001", '"041000000001"'):
        config.write_text(good.replace('run: "41000000001"', f"run: {written}"))
        line = error_line(sync(project, "verify", KEY))
        assert f'{KEY}.pin.run: "041000000001" starts with 0, which no GitHub id does' in line
        # only the plain scalar is one YAML 1.1 reads as an octal number
        assert ("4429185025, octal" in line) == (written == "041000000001")
    config.write_text(good.replace('date: "2026-10-13"', "date: 2026-13-45"))
    assert '"2026-13-45" is not a calendar date' in error_line(sync(project, "verify", KEY))


def test_deep_nesting_is_refused_naming_the_file(project: Path) -> None:
    config = project / "sync.yaml"
    edit(config, "mooncake: null", "mooncake: " + "[" * 400 + "]" * 400)
    line = error_line(sync(project, "verify", KEY))
    assert line.endswith("sync.yaml: YAML nesting deeper than 200 levels; refusing it")
    edit(project / RECIPE, PARSER, "        x: " + "[" * 300 + "]" * 300 + "\n")
    line = error_line(sync(project, "render", KEY))
    assert line.endswith(f"{RECIPE}: YAML nesting deeper than 200 levels; refusing it")


# ---- 8. YAML 1.1 keys and merge keys ----------------------------------------------------------


@pytest.mark.parametrize("key", ["on", "off", "yes", "No", "TRUE", "~", "null"])
def test_recipe_keys_yaml_reads_as_booleans_are_refused_naming_the_line(
    project: Path, key: str
) -> None:
    edit(project / RECIPE, ARGS_END, ARGS_END + f"        {key}: 1\n")
    line = error_line(sync(project, "render", KEY, "--point", "0"))
    number = (project / RECIPE).read_text().splitlines().index(f"        {key}: 1") + 1
    assert f"{RECIPE}:{number}:9: key {key!r}".replace("'", '"') in line
    assert "is read by YAML 1.1 as the boolean" in line or "is read by YAML 1.1 as null" in line
    if key.isalpha():  # quoted, it is a name (`--~` is no flag and refused as one)
        edit(project / RECIPE, f"        {key}: 1\n", f"        '{key}': 1\n")
        assert f"--{key} 1" in sync(project, "render", KEY, "--point", "0").stdout


def test_a_merge_list_gives_the_first_mapping_precedence_as_srt_slurm_read_it(
    project: Path,
) -> None:
    recipe = project / RECIPE
    anchors = "_a: &a {watchdog-timeout: 111}\n_b: &b {watchdog-timeout: 222}\n"
    edit(recipe, "base:\n", anchors + "base:\n")
    edit(recipe, "        watchdog-timeout: 3600\n", "        <<: [*a, *b]\n")
    proc = sync(project, "render", KEY, "--point", "0", "--raw")
    assert proc.returncode == 0, proc.stderr
    assert "  --watchdog-timeout 111" in proc.stdout.splitlines()


# ---- 6. no sync.yaml here ---------------------------------------------------------------------


def test_without_a_sync_yaml_here_the_packages_own_example_is_never_read(tmp_path: Path) -> None:
    line = error_line(sync(tmp_path, "verify", KEY))
    assert "no InferenceX checkout given and no bundled example" in line
    ix = str(ROOT / "examples/inferencex")
    line = error_line(sync(tmp_path, "verify", KEY, "--inferencex", ix))
    assert line.endswith("no sync.yaml to find the pinned run in; pass --run PATH")
    (tmp_path / "sync.yaml").mkdir()
    line = error_line(sync(tmp_path, "verify", KEY, "--inferencex", ix))
    assert line.endswith("cannot read the sync configuration: a directory, not a regular file")
    line = error_line(sync(tmp_path, "generate", "--all", "--check"))
    assert line.endswith("cannot read the sync configuration: a directory, not a regular file")


# ---- 9. run archives --------------------------------------------------------------------------

RUN = "examples/runs/41000000001"


def empty_members_zip(count: int) -> bytes:
    """A zip of ``count`` empty stored members named 0, 1, ..., with zip64 end records, as
    zipfile writes it; built with ``struct`` because zipfile takes 3 s for 100,001 members."""
    import struct

    # Signatures and layouts of APPNOTE.TXT: local header, central entry, zip64 end record,
    # its locator, the classic end record. Version 20 (45 for zip64), DOS date 1980-01-01.
    local_header, central_entry = "<IHHHHHIIIHH", "<IHHHHHHIIIHHHHHII"
    local, central, offset = [], [], 0
    for i in range(count):
        name = str(i).encode()
        header = struct.pack(local_header, 0x04034B50, 20, 0, 0, 0, 33, 0, 0, 0, len(name), 0)
        entry = (0x02014B50, 20, 20, 0, 0, 0, 33, 0, 0, 0, len(name), 0, 0, 0, 0, 0, offset)
        local.append(header + name)
        central.append(struct.pack(central_entry, *entry) + name)
        offset += len(header) + len(name)
    directory = b"".join(central)
    size, classic = len(directory), min(count, 0xFFFF)
    zip64_end = (0x06064B50, 44, 45, 45, 0, 0, count, count, size, offset)
    locator = (0x07064B50, 0, offset + size, 1)
    end = (0x06054B50, 0, 0, classic, classic, min(size, 0xFFFFFFFF), min(offset, 0xFFFFFFFF), 0)
    return b"".join(
        [
            *local,
            directory,
            struct.pack("<IQHHIIQQQQ", *zip64_end),
            struct.pack("<IIQI", *locator),
            struct.pack("<IHHHHIIH", *end),
        ]
    )


def test_the_hand_built_zip_is_one_zipfile_reads() -> None:
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(empty_members_zip(3))) as zf:
        assert zf.namelist() == ["0", "1", "2"]
        assert [zf.read(n) for n in zf.namelist()] == [b"", b"", b""]
        assert zf.testzip() is None


def test_a_zip_declaring_too_many_members_is_refused_from_its_end_record(project: Path) -> None:
    # 100,001 empty members: over the limit by one, refused from the (zip64) end record's count.
    (project / "many.zip").write_bytes(empty_members_zip(100_001))
    line = error_line(sync(project, "verify", KEY, "--run", "many.zip"))
    assert '"many.zip" declares 100001 members, more than the limit of 100000' in line


@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_the_same_log_twice_with_different_contents_is_refused_naming_it(
    project: Path, kind: str
) -> None:
    import tarfile
    import warnings
    import zipfile

    run = project / RUN
    files = sorted(f for f in run.rglob("*") if f.is_file())
    log = next(f for f in files if f.name == "sweep_5230101.log")
    changed = log.read_bytes().replace(b"--watchdog-timeout 3600", b"--watchdog-timeout 9")
    assert changed != log.read_bytes()
    members = [(f.relative_to(run).as_posix(), f.read_bytes()) for f in files]
    for order, extra in (("good first", changed), ("bad first", None)):
        target = project / f"run.{kind}"
        listed = [*members, (log.relative_to(run).as_posix(), changed)]
        if extra is None:  # the changed copy first
            listed = [(log.relative_to(run).as_posix(), changed), *members]
        if kind == "zip":
            with warnings.catch_warnings(), zipfile.ZipFile(target, "w") as zf:
                warnings.simplefilter("ignore")  # zipfile warns about the duplicate name
                for name, data in listed:
                    zf.writestr(name, data)
        else:
            import io

            with tarfile.open(target, "w:gz") as tf:
                for name, data in listed:
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    tf.addfile(info, io.BytesIO(data))
        line = error_line(sync(project, "verify", KEY, "--run", target.name))
        assert '"sweep_5230101.log" appears twice, members ' in line, (order, line)
    # the same file twice (same content) is read once, as before
    with warnings.catch_warnings(), zipfile.ZipFile(project / "same.zip", "w") as zf:
        warnings.simplefilter("ignore")
        for name, data in [*members, (log.relative_to(run).as_posix(), log.read_bytes())]:
            zf.writestr(name, data)
    assert sync(project, "verify", KEY, "--run", "same.zip").returncode == 0


# ---- 14. all or nothing -----------------------------------------------------------------------


@pytest.mark.parametrize("check", [False, True], ids=["write", "check"])
def test_a_hand_edited_page_section_stops_generate_before_anything_is_written(
    project: Path, check: bool
) -> None:
    edit(project / PAGE, "<Warning>\n", "A hand-written note.\n\n<Warning>\n")
    edit(project / RECIPE, "watchdog-timeout: 3600", "watchdog-timeout: 3601")
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    args = ["generate", "--all", "--date", "2026-10-13", *(["--check"] if check else [])]
    line = error_line(sync(project, *args))
    assert "was edited by hand since it was generated" in line
    assert line.endswith("--force-page; nothing was written")
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before


# ---- 15. the bot's askpass helper -------------------------------------------------------------


def test_the_bot_leaves_no_askpass_helper_in_the_temp_directory(world) -> None:
    from botworld import RUN as PINNED_RUN

    comment = world.comment(f"/use {PINNED_RUN}")
    proc = sync_bot(world, world.comment_event(comment))
    assert proc.returncode == 0, proc.stderr
    assert "opened" in proc.stdout  # it pushed, so git asked the helper for the token
    assert sorted(p.name for p in (world.tmp / "tmp").iterdir()) == []


# ---- 13. a dry run that fails -----------------------------------------------------------------


def test_a_failing_dry_run_prints_its_writes_and_the_status_comment_with_the_error(
    world,
) -> None:
    from botworld import RUN as PINNED_RUN

    checkout = world.tmp / "inferencex"
    shutil.copytree(ROOT / "examples/inferencex", checkout)
    recipe = next(checkout.rglob("gb300-fp4-mtp/agentic.yaml"))
    edit(recipe, "SGLANG_DSV41_REASONING_EFFORT: high", 'SGLANG_DSV41_REASONING_EFFORT: "a\\nb"')
    world.inferencex = checkout
    comment = world.comment(f"/use {PINNED_RUN}")
    proc = sync_bot(world, world.comment_event(comment), "--dry-run")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "SGLANG_DSV41_REASONING_EFFORT" in proc.stderr
    assert "dry run: " in proc.stdout and "not made (stopped by the error below)" in proc.stdout
    status = [w for w in proc.stdout.split("would: ") if "/comments (" in w.split("\n")[0]]
    assert status, proc.stdout
    assert "The cookbook sync stopped before publishing anything" in status[-1]
    assert world.gh.writes() == []


# ---- 10. bounded lint evaluation --------------------------------------------------------------

# 24 doublings: a 16-million-character option string (40 grew to gigabytes and never ended);
# a sum nested 100 deep.
GROWING_SERVER_ARGS = (
    "import argparse\n\nFLAG = '--x'\n"
    + "FLAG = FLAG.replace('x', 'xx')\n" * 24
    + "DEEP = " + "'-' + (" * 100 + "'-deep'" + ")" * 100 + "\n"
    + "\n\nclass ServerArgs:\n    @staticmethod\n    def add_cli_args(parser):\n"
    "        parser.add_argument('--model-path')\n"
    "        parser.add_argument(FLAG)\n"
    "        parser.add_argument(DEEP)\n"
)  # fmt: skip


def test_lint_bounds_every_evaluated_value_and_reports_the_flag_unresolved(
    tmp_path: Path,
) -> None:
    from lintrepo import _cell, commit_files, git, module_text

    repo = tmp_path / "sglang"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit = commit_files(
        repo, {"python/sglang/srt/server_args.py": GROWING_SERVER_ARGS}, "growing flag"
    )
    (tmp_path / "m.jsx").write_text(
        module_text([_cell("c#0", "lmsysorg/sglang:v0.5.9", commit, [["--model-path", "m"]])])
    )
    proc = sync(tmp_path, "lint", "m.jsx", "--sglang", str(repo), "--format", "json", timeout=120)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    import json

    report = json.loads(proc.stdout)
    lines = GROWING_SERVER_ARGS.splitlines()
    flag_line = lines.index("        parser.add_argument(FLAG)") + 1
    [version] = report["versions"]
    assert version["worker"]["dynamic"] == [
        f"line {flag_line}: an option string the file does not pin down",
        f"line {flag_line + 1}: an option string the file does not pin down",
    ]
    assert report["counts"]["possibly-undeclared"] > 0  # the file is not taken as complete


# ---- 12. tables on a pipe ---------------------------------------------------------------------


@pytest.mark.parametrize("columns", [None, "60"])
def test_tables_on_a_pipe_never_split_a_flag_or_a_url(tmp_path: Path, columns: str | None) -> None:
    from lintrepo import _cell, commit_files, git, module_text

    repo = tmp_path / "sglang"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    server_args = (
        "import argparse\n\n\nclass ServerArgs:\n    @staticmethod\n"
        "    def add_cli_args(parser):\n        parser.add_argument('--model-path')\n"
    )
    commit = commit_files(repo, {"python/sglang/srt/server_args.py": server_args}, "v")
    flags = [["--model-path", "m"], ["--mamba-max-states-per-path", "4"]]
    (tmp_path / "m.jsx").write_text(
        module_text([_cell("c#0", "lmsysorg/sglang:v0.5.9", commit, flags)])
    )
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns:
        env["COLUMNS"] = columns
    done = subprocess.run(
        [*forkserver.command(), "lint", "m.jsx", "--sglang", str(repo)],
        cwd=tmp_path, capture_output=True, text=True, env={**env, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    table = [line for line in done.stdout.splitlines() if line.startswith("│")]
    assert any("--mamba-max-states-per-path" in line for line in table), done.stdout
    assert any("--enable-hierarchical-cache" in line for line in table), done.stdout
    if columns:  # honoured: the rule line above the table is that wide
        assert max(len(line) for line in done.stdout.splitlines() if "─" in line) >= 60


# ---- 16. what a new user meets ----------------------------------------------------------------


def test_cases_mean_one_thing_and_have_one_number_in_every_command(project: Path) -> None:
    import json
    import re

    decoded = sync(project, "decode", MODULE, "--all", "--format", "json")
    cases = len(json.loads(decoded.stdout)["cases"])
    check = sync(project, "generate", "--all", "--check", "--date", "2026-10-13")
    reencoded = sync(project, "reencode", MODULE)
    said = {
        "generate --check": re.search(r"(\d+) cases decoded back", check.stdout),
        "reencode": re.search(r"(\d+) cases decoded back", reencoded.stderr),
    }
    assert {k: int(m.group(1)) for k, m in said.items() if m} == {k: cases for k in said}


def test_decode_without_a_selector_says_which_case_it_printed(project: Path) -> None:
    proc = sync(project, "decode", MODULE)
    assert proc.returncode == 0 and proc.stdout.startswith("# ")
    assert proc.stderr == (
        "decoded the page's default case: cell dsv41flash-fp4-gb300-sglang-agentic-dspark#0, "
        "point 0 (c1), router sglang, KV tier none; choose another with --cell, --point or "
        "--conc, --router, --kv (--all: every case)\n"
    )
    assert "one is needed" not in sync(project, "decode", "--help").stdout


def test_a_render_header_without_a_variant_has_no_dash(project: Path) -> None:
    import yaml

    from syncer.inferencex.recipe_bundles import deep_merge

    # A plain recipe (no override variants) for one row: its point has no variant name.
    recipe = project / RECIPE
    bundle = yaml.safe_load(recipe.read_text())
    recipe.write_text(yaml.safe_dump(deep_merge(bundle["base"], bundle["override_tp4_c1"])))
    master = project / MASTER
    text = master.read_text()
    rows = text[text.index(f"{KEY}:") :].split("search-space:\n", 1)[1].splitlines()[:3]
    edit(master, "\n".join(rows), rows[0].replace("conc-list: [1, 4, 16]", "conc-list: [1]"))
    proc = sync(project, "render", KEY, "--point", "0")
    assert proc.returncode == 0, proc.stderr
    # the first point header (the output opens with the srt-slurm rules line)
    header = next(line for line in proc.stdout.splitlines() if line.startswith("#### "))
    assert header.startswith(f"#### {KEY} · point 0 (c1) · Agg TP4 · router sglang"), header


def test_diff_of_a_directory_at_a_revision_says_so(project: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", "cookbook_snippets"], cwd=project, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "m"],
        cwd=project, check=True,
    )  # fmt: skip
    line = error_line(sync(project, "diff", "HEAD:cookbook_snippets", MODULE))
    assert line.endswith("cookbook_snippets is a directory at HEAD, not a module file")


def test_markdown_reasons_are_not_over_escaped(project: Path) -> None:
    proc = sync(project, "verify", KEY, "--format", "markdown")
    assert proc.returncode == 0
    assert "(srt-slurm 2.x also adds it to direct workers)" in proc.stdout
    assert "\\(srt\\-slurm" not in proc.stdout


DISAGG = "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"
DISAGG_RECIPE = (
    "examples/inferencex/inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/"
    "dsv41flash/sglang/gb300-fp4/agentx/disagg-variants.yaml"
)


def test_the_files_line_says_what_the_ids_are(project: Path) -> None:
    import hashlib
    import json

    # A NATS payload limit: srt-slurm writes a nats.conf, and the cookbook form ships it.
    nats = "    - name: nats\n      type: nats\n      placement:\n        node: infra\n"
    edit(project / DISAGG_RECIPE, nats, nats + "      options:\n        max_payload_mb: 32\n")
    proc = sync(project, "render", DISAGG, "--point", "0")
    assert proc.returncode == 0, proc.stderr
    content = 'max_payload: 33554432\njetstream { store_dir: "/tmp/nats" }\n'
    fid = "nats.conf#" + hashlib.sha256(content.encode()).hexdigest()[:8]
    lines = [line for line in proc.stdout.splitlines() if line.startswith("files: ")]
    assert lines and {line.split(" ", 2)[1] for line in lines} == {fid}, proc.stdout
    for line in lines:
        assert line.endswith(
            " (config files the commands above read from their working directory, which the "
            "page offers beside them; each named <file>#<first 8 hex of its SHA-256>; "
            "`--format json` shows their content)"
        )
    assert "nats-server -c nats.conf" in proc.stdout
    shown = json.loads(sync(project, "render", DISAGG, "--point", "0", "--format", "json").stdout)
    assert any(
        point["files"].get(router, {}).get(fid) == {"name": "nats.conf", "content": content}
        for point in shown["points"]
        for router in point["files"]
    ), shown


# ---- 16. verify's text lines line up -----------------------------------------------------------


def test_verify_text_lines_are_aligned(project: Path) -> None:
    proc = sync(project, "verify", KEY)
    assert proc.returncode == 0, proc.stderr
    points = [line for line in proc.stdout.splitlines() if line.startswith("  ✓ point ")]
    assert len(points) == 7
    # labels of different widths (Agg TP4, Agg TP2·EP2, Agg DEP2): the next columns still line up
    for column in ("override_", "sweep_"):
        assert len({line.index(column) for line in points}) == 1, column


def test_raw_render_shows_the_nats_preamble_that_bash_ran(project: Path, tmp_path: Path) -> None:
    """A NATS payload limit makes srt-slurm write its config with a ``printf`` whose quoted
    text holds line breaks; the raw form prints that line as it ran, and bash run on it
    writes the config srt-slurm wrote."""
    recipe = (
        project / "examples/inferencex/inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes"
        "/dsv41flash/sglang/gb300-fp4/agentx/disagg-variants.yaml"
    )
    edit(
        recipe,
        "      type: nats\n      placement:\n        node: infra\n",
        "      type: nats\n      placement:\n        node: infra\n      options:\n"
        "        max_payload_mb: 32\n",
    )
    key = "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"
    proc = sync(project, "render", key, "--point", "0", "--raw")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("printf %s '"))
    end = next(i for i in range(start, len(lines)) if lines[i].endswith("> /tmp/nats.conf\n"))
    printf = "".join(lines[start : end + 1]).replace("/tmp/nats.conf", str(tmp_path / "c"))
    subprocess.run(["bash", "-c", printf], check=True, timeout=30)
    written = (tmp_path / "c").read_text()
    assert written.startswith("max_payload: 33554432\n") and written.count("\n") > 1
