"""Read a run of a script-launched key (see ``syncer.inferencex.scripts``): per point, the
result directory the script wrote.

What such a run leaves behind, per job (one point): the workflow uploads the script's
``$RESULT_DIR`` as the artifact ``agentic_<RESULT_FILENAME>`` (its logs again as
``server_logs_<RESULT_FILENAME>``; eval jobs as ``eval_…``). In it:

* ``sglang_command.txt``: the server argv, written by ``printf '%q '`` (one line; read back by
  :mod:`syncer.runs.shellq`, never by a shell);
* ``server.log``: newer scripts start it with ``=== SGLANG_* env vars at launch ===``, then
  ``env | grep '^SGLANG_' | sort``, then a line of ``=``; older ones have no such header, so
  none of their environment is logged. Only that head is read;
* ``router.log``: present when the script started an SGLang router in front of the worker (the
  router's argv and environment are never logged);
* ``benchmark_command.txt``: the AIPerf command, whose ``--concurrency`` names the point's
  concurrency when the directory name does not (``RESULT_FILENAME`` may be a hash).

A limit of the header: ``env | grep '^SGLANG_'`` keeps only the first line of a value that
holds a newline, so such a value reads truncated; nothing in the file can tell.

The run is opened with the one streamed artifact reader (:mod:`syncer.runs.artifacts`:
directories, archives, nested archives, limits); nothing is extracted or executed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from syncer.errors import SyncError
from syncer.flags import MODEL_PATH_FLAG, canonical_flag
from syncer.model import Block
from syncer.runs.artifacts import Limits, Member, open_run
from syncer.runs.collect import RunData, _read_small
from syncer.runs.logs import split_command
from syncer.runs.shellq import split_printf_q
from syncer.runs.streams import Readable
from syncer.wording import js

COMMAND_FILE = "sglang_command.txt"
SERVER_LOG = "server.log"
ROUTER_LOG = "router.log"
BENCHMARK_COMMAND = "benchmark_command.txt"
ENV_HEADER = "=== SGLANG_* env vars at launch ==="
ENV_PATTERN = "SGLANG_*"
# The header is a few dozen lines; a server.log is gigabytes. Past this, the header is broken.
MAX_HEADER_BYTES = 1 << 20
ARTIFACT_PREFIXES = ("agentic_", "server_logs_")
EVAL_PREFIXES = ("eval_",)
_ENV_LINE = re.compile(r"^(SGLANG_[^=\s]*)=(.*)$")
_CLOSING = re.compile(r"^=+$")
_ARCHIVE = re.compile(r"\.(?:zip|tar\.gz|tgz|tar)$")


@dataclass
class ResultDir:
    """One result directory of the run (one job), as the files it holds describe it."""

    source: str  # the directory, as the run names it (the agentic_… one when both exist)
    name: str  # RESULT_FILENAME (artifact prefix and archive suffix removed)
    eval_job: bool = False
    job_id: str | None = None  # the report's log column; a result directory has no job id
    argv: list[str] | None = None
    command_file: str | None = None
    env: dict[str, str] | None = None  # SGLANG_* at launch; None: not logged
    env_file: str | None = None
    env_line: int | None = None
    router_log: str | None = None
    concurrency: int | None = None  # from benchmark_command.txt
    files: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass
class ScriptRunData(RunData):
    """A script-era run: its result directories (``sweeps`` stays empty)."""

    dirs: list[ResultDir] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # result directories without a command


def _group(member: str, top: str) -> tuple[str, str, bool] | None:
    """``(group key, RESULT_FILENAME, eval job)`` of a member's result directory; a member at
    the run's top level belongs to the run itself (``top``: a result directory given alone)."""
    parent = PurePosixPath(member).parent
    if parent.name == "results":  # the workspace layout: results/ under the job's directory
        parent = parent.parent
    name = _ARCHIVE.sub("", parent.name or top)
    if not name:
        return None
    eval_job = name.startswith(EVAL_PREFIXES)
    for prefix in ARTIFACT_PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    return f"{parent.parent.as_posix()}/{name}", name, eval_job


def _read_command(stream: Readable, where: str) -> list[str]:
    data = _read_small(stream, COMMAND_FILE, where)
    text = data.decode("utf-8", "surrogateescape")
    body = text.rstrip("\n")
    if not body.strip():
        raise SyncError(f"{COMMAND_FILE} is empty; expected the server argv", path=where, line=1)
    if "\n" in body:
        # printf %q never writes a raw newline inside a word: two lines are two commands.
        second = body.index("\n")
        raise SyncError(
            f"{COMMAND_FILE} holds more than one line; expected the one command write_command "
            "writes",
            path=where,
            line=body.count("\n", 0, second) + 2,
        )
    return split_printf_q(body, path=where, first_line=1)


def read_env_header(stream: Readable, where: str) -> tuple[dict[str, str] | None, int | None]:
    """``(SGLANG_* env, line of the header)`` from the head of a ``server.log``, or
    ``(None, None)`` when the log does not start with the header (nothing of the environment was
    logged). A header that is not closed, or holds other lines, is an error with its line."""
    buf = b""
    while b"\n" not in buf and len(buf) <= MAX_HEADER_BYTES:
        chunk = stream.read(64 * 1024)
        if not chunk:
            break
        buf += chunk
    first = buf.split(b"\n", 1)[0].rstrip(b"\r")
    if first.decode("utf-8", "replace") != ENV_HEADER:
        return None, None
    env: dict[str, str] = {}
    lineno = 1
    pos = len(first) + 1
    while True:
        end = buf.find(b"\n", pos)
        while end < 0 and len(buf) <= MAX_HEADER_BYTES:
            chunk = stream.read(64 * 1024)
            if not chunk:
                break
            buf += chunk
            end = buf.find(b"\n", pos)
        if end < 0:
            if len(buf) > MAX_HEADER_BYTES:
                raise SyncError(
                    f"the {js(ENV_HEADER)} header is not closed within {MAX_HEADER_BYTES} bytes",
                    path=where,
                    line=1,
                )
            raise SyncError(
                f"the {js(ENV_HEADER)} header is not closed by a line of '=' (truncated log?)",
                path=where,
                line=1,
            )
        lineno += 1
        line = buf[pos:end].rstrip(b"\r").decode("utf-8", "surrogateescape")
        pos = end + 1
        if _CLOSING.match(line):
            return dict(sorted(env.items())), 1
        m = _ENV_LINE.match(line)
        if m is None:
            raise SyncError(
                f"expected SGLANG_<NAME>=<value> or the closing line of '=' in the env header, "
                f"found {js(line)}",
                path=where,
                line=lineno,
            )
        if m.group(1) in env:
            raise SyncError(
                f"{m.group(1)} is listed twice in the env header", path=where, line=lineno
            )
        env[m.group(1)] = m.group(2)


def _concurrency(stream: Readable, where: str) -> int | None:
    words = _read_small(stream, BENCHMARK_COMMAND, where).decode("utf-8", "replace").split()
    for i, word in enumerate(words[:-1]):
        if word == "--concurrency":
            value = words[i + 1]
            if not re.fullmatch(r"[0-9]{1,9}", value):
                raise SyncError(f"--concurrency {js(value, 40)} is not a number", path=where)
            return int(value)
    return None


def read_script_run(path: str | Path, limits: Limits | None = None) -> ScriptRunData:
    """Every result directory of the run, in one streamed pass."""
    run = open_run(path, limits)
    data = ScriptRunData(str(path))
    base_dir = Path(path) if Path(path).is_dir() else Path(path).parent
    # A result directory (or the one file of it) given alone is named by where it lies.
    top = Path(path).name if Path(path).is_dir() or not run.is_single_file else base_dir.name
    groups: dict[str, ResultDir] = {}
    wanted = (COMMAND_FILE, SERVER_LOG, ROUTER_LOG, BENCHMARK_COMMAND)
    for member in run.members():
        base = PurePosixPath(member.name).name
        if base not in wanted:
            continue
        grouped = _group(member.name, top)
        if grouped is None:
            continue
        key, name, eval_job = grouped
        where = str(base_dir / member.name)
        parent = PurePosixPath(member.name).parent
        directory = parent.as_posix() if parent.name else top
        rd = groups.get(key)
        if rd is None:
            rd = groups[key] = ResultDir(source=directory, name=name, eval_job=eval_job)
        elif PurePosixPath(directory).name.startswith("agentic_"):
            rd.source = directory  # the full result directory names the point in reports
        rd.files.append(member.name)
        _read_file(rd, member, base, where)
    data.skipped = list(run.skipped)
    for rd in groups.values():
        if rd.argv is None:
            data.missing.append(
                f"{rd.source}: no {COMMAND_FILE} (the server command of this job was not logged)"
            )
        else:
            data.dirs.append(rd)
    if not data.dirs:
        raise SyncError(
            f"no {COMMAND_FILE} found in the run (expected one result directory per job, as the "
            f"agentic_<RESULT_FILENAME> artifacts hold it)",
            path=str(path),
        )
    return data


def _read_file(rd: ResultDir, member: Member, base: str, where: str) -> None:
    """What one file of a result directory tells of its job; a second copy that differs is a
    problem of the directory, the first one kept."""
    if base == COMMAND_FILE:
        argv = _read_command(member.open(), where)
        if rd.argv is not None and rd.argv != argv:
            rd.problems.append(f"{member.name} differs from {rd.command_file}")
            return
        rd.argv, rd.command_file = argv, member.name
    elif base == SERVER_LOG:
        env, line = read_env_header(member.open(), where)
        if env is None:
            return
        if rd.env is not None and rd.env != env:
            rd.problems.append(
                f"the SGLANG_* env header of {member.name} differs from {rd.env_file}'s"
            )
            return
        rd.env, rd.env_file, rd.env_line = env, member.name, line
    elif base == ROUTER_LOG:
        rd.router_log = member.name
    else:
        rd.concurrency = _concurrency(member.open(), where)


def logged_blocks(rd: ResultDir, model: str) -> tuple[list[Block], list[str]]:
    """Raw blocks of what ``rd`` logged, and notes on the normalisations made.

    The worker's env is only what the header shows (``logged_env``: every other key is not
    logged); a router's command line and env are never logged. Two values the runner chose are
    read in the cookbook's terms, each with a note: the interpreter path (the cookbook names
    ``python3``) and a ``--model-path`` that is the runner's staged copy of ``model`` (a path
    ending in the checkpoint's name; the cookbook shows the Hugging Face id)."""
    notes: list[str] = []
    wrapper, cmd, args = split_command(rd.argv or [])
    interpreter, sep, module = cmd.partition(" -m ")
    if sep and "/" in interpreter:
        notes.append(f"interpreter {interpreter} read as python3")
        cmd = f"python3 -m {module}"
    model_name = model.rsplit("/", 1)[-1]
    for arg in args:
        staged = (
            canonical_flag(arg[0]) == MODEL_PATH_FLAG
            and len(arg) == 2
            and arg[1].startswith("/")
            and PurePosixPath(arg[1]).name == model_name
        )
        if staged:
            notes.append(f"--model-path {arg[1]} (the runner's copy of {model}) read as {model}")
            arg[1] = model
    worker: Block = {
        "kind": "worker",
        "role": "agg",
        "workers": 1,
        "nodes_per_worker": 1,
        "cmd": cmd,
        "env": dict(rd.env or {}),
        "args": args,
        "logged_by": "the script",
        "source": {"log": rd.command_file, "line": 1},
    }
    if wrapper:
        worker["wrapper"] = wrapper
    if rd.env is None:
        worker["unlogged"] = ["env"]
    else:
        worker["logged_env"] = ENV_PATTERN
    blocks = [worker]
    if rd.router_log is not None:
        blocks.append(
            {
                "kind": "sglang-router",
                "cmd": None,
                "env": {},
                "args": [],
                "unlogged": ["cmd", "args", "env"],
                "logged_by": "the script",
                "source": {"log": rd.router_log, "line": None},
            }
        )
    return blocks, notes
