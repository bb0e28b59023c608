"""Parse srt-slurm sweep logs (``sweep_<job>.log``) into the processes they launched.

What is read (srt-slurm 1.x and 2.x; summarised in ``docs/srt-slurm-rules.md``, Sweep logs):

* worker blocks ``Starting <mode> worker <i> on <node>`` / ``Env: …`` / ``Command: …`` /
  ``Log: …`` (one block per node of a multi-node worker);
* routers and frontends: 2.x ``Starting sglang-router <i> on <node>: <argv>``, 1.x
  ``Starting sglang-router <i> on <node>`` + ``Router command: <argv>``, Dynamo's
  ``Starting dynamo frontend <i> on <node>`` (its argv is never logged), and the 2.x
  ``frontend.type=sglang: no separate frontend process`` line;
* the benchmark ``Command:`` (after ``Script:``), kept apart from the workers;
* the job id and the variant name (``Job ID:``, ``Loaded config:``).

Lines may carry a GitHub Actions timestamp, the orchestrator's ``<date> <time> [LEVEL]`` prefix,
or none (batch-script banners, ``uv`` output, continuation lines of a value holding a newline).
Commands are ``shlex.join`` output, so ``shlex.split`` inverts them (as
:func:`syncer.shellwords.split`, its faster equal); wrappers such as ``nsys`` or ``numactl``
before ``python3 -m`` are recognised and kept apart. ``Env:`` payloads are split
later (:mod:`syncer.runs.envline`), when the keys the recipe expects are known.

Logs are read in 1 MiB chunks; chunks holding none of the markers above are only counted, so a
large log costs little more than its decompression, and memory stays flat.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from syncer import shellwords
from syncer.errors import SyncError
from syncer.model import group_argv
from syncer.untrusted import ANSI_ESCAPE, clip

if TYPE_CHECKING:
    from syncer.runs.streams import Readable

CHUNK = 1 << 20
MAX_LINE = 4 << 20  # one logged command or Env line; anything longer is not srt-slurm output
MAX_INDEX_DIGITS = 9  # int() refuses strings of over 4300 digits with a ValueError

_MARKERS = (
    b"Starting ",
    b"Env:",
    b"ommand: ",
    b"Log: ",
    b"Script: ",
    b"frontend.type=",
    b"Job ID: ",
    b"Loaded config: ",
)

_ACTIONS = re.compile(r"^\ufeff?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?")
_RECORD = re.compile(
    r"^(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)? \[(?P<level>[A-Z]+)\] ?"
    r"|\d\d:\d\d:\d\d(?:\.\d+)? \| (?P<mlevel>[A-Z]+) *\| )"
)
_STAMP = re.compile(r"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)")
_KEYWORDS = re.compile(r"^(?:Starting |Env:|Command: |Log: |Router command: |Script: )")

_WORKER = re.compile(
    r"^Starting (?P<mode>prefill|decode|agg|aggregated) worker (?P<index>[0-9]+)"
    r"(?: shadow engine (?P<engine>[0-9]+))?"
    r" on (?:(?P<count>[0-9]+) nodes \((?P<nodes>[^)]*)\)|(?P<node>\S+))"
)
_FRONTEND = re.compile(
    r"^Starting (?P<type>dynamo frontend|[A-Za-z][\w.-]*) (?P<index>[0-9]+) on "
    r"(?P<node>[^\s:]+)(?::? ?$|: (?P<argv>.*)$)"
)
# 2.x services layer: one line per instance, argv after templating (real addresses).
_SERVICE = re.compile(
    r"^Starting service (?P<name>\S+) \((?P<type>[A-Za-z][\w-]*)\) on (?P<node>[^\s:]+)"
    r"(?: for \S+ worker [0-9]+)?: (?P<argv>.*)$"
)
_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)?)?$")
_MODES = {"aggregated": "agg"}


@dataclass
class LoggedProcess:
    """One launch in a sweep log: a worker (one node of it), a router or a frontend."""

    kind: str  # worker | sglang-router | dynamo-frontend | <frontend type>
    index: int
    node: str
    line: int
    role: str | None = None
    engine: int | None = None
    env_text: str | None = None
    env_line: int | None = None
    argv: list[str] | None = None
    log: str | None = None
    service: str | None = None  # the service's name, for ``Starting service`` lines
    # Further Command: lines of the same block, (line, argv): reported by runs/conflicts.py.
    repeats: list[tuple[int, list[str]]] = field(default_factory=list)

    @property
    def split(self) -> tuple[list[str], str, list[list[str]]]:
        """``(wrapper tokens, cmd, args)`` of the logged argv."""
        return split_command(self.argv or [])


@dataclass
class BenchmarkCommand:
    line: int
    argv: list[str]
    script: str | None


@dataclass
class SweepLog:
    """Everything one sweep log says about its launch."""

    source: str
    job_id: str | None = None
    config_name: str | None = None
    run_name: str | None = None
    processes: list[LoggedProcess] = field(default_factory=list)
    benchmarks: list[BenchmarkCommand] = field(default_factory=list)
    direct_frontend: bool = False
    router_style: str | None = None  # "2.x" (argv on the Starting line) or "1.x" (Router command:)
    lines: int = 0
    # the first timestamp of a launch line ("YYYY-MM-DDTHH:MM:SS"): when the run happened
    started: str | None = None

    @property
    def workers(self) -> list[LoggedProcess]:
        return [p for p in self.processes if p.kind == "worker"]

    @property
    def frontends(self) -> list[LoggedProcess]:
        return [p for p in self.processes if p.kind != "worker" and p.service is None]

    @property
    def services(self) -> list[LoggedProcess]:
        """Service instances (``Starting service <name> (<type>) on <node>: <argv>``)."""
        return [p for p in self.processes if p.service is not None]


def split_command(argv: list[str]) -> tuple[list[str], str, list[list[str]]]:
    """Split a logged argv into wrapper tokens (``nsys …``, ``numactl …``), the command
    (``python3 -m sglang.launch_server``) and ``[flag, value...]`` args (``--a=b`` split)."""
    start = None
    for i, tok in enumerate(argv):
        base = tok.rsplit("/", 1)[-1]
        if _PYTHON.match(base) and i + 2 < len(argv) and argv[i + 1] == "-m":
            start = i
            break
    if start is None:
        # Not a python module launch (e.g. a bare binary): the first token is the command.
        if not argv:
            return [], "", []
        return [], argv[0], parse_args(argv[1:])
    cmd = f"{argv[start]} -m {argv[start + 2]}"
    return argv[:start], cmd, parse_args(argv[start + 3 :])


def parse_args(tokens: list[str]) -> list[list[str]]:
    return group_argv(tokens)


def _strip(line: str) -> tuple[bool, str]:
    """``(is_record, message)``: the message without Actions and orchestrator prefixes."""
    if "\x1b" in line:
        line = ANSI_ESCAPE.sub("", line)  # Actions logs keep colour codes
    line = _ACTIONS.sub("", line, count=1)
    m = _RECORD.match(line)
    if m:
        return True, line[m.end() :]
    if _KEYWORDS.match(line):
        return True, line
    return False, line


class _Parser:
    def __init__(self, source: str, where: str | None = None) -> None:
        self.log = SweepLog(source)
        self.where = where or source
        self.current: LoggedProcess | None = None  # open worker block
        self.pending_router: LoggedProcess | None = None
        self.env_open: LoggedProcess | None = None  # Env: record that may continue
        self.env_parts: list[str] = []  # its lines, joined when it ends
        # a Command: whose quote is still open: its process, line, lines so far, the quote
        self.command_open: tuple[LoggedProcess | None, int, list[str], str] | None = None
        self.open_size = 0  # characters of the open record so far
        self.script: str | None = None

    @property
    def busy(self) -> bool:
        return self.env_open is not None or self.command_open is not None

    def error(self, message: str, line: int) -> SyncError:
        return SyncError(message, path=self.where, line=line)

    def feed(self, lineno: int, raw: str) -> None:
        if self.log.started is None and (when := _STAMP.match(raw.lstrip("\ufeff"))):
            self.log.started = f"{when.group(1)}T{when.group(2)}"
        is_record, msg = _strip(raw)
        if self.command_open is not None:
            proc, start, lines, quote = self.command_open
            if is_record:
                raise self.error(
                    "Command: line has an unterminated quote (truncated or not shlex output)",
                    start,
                )
            self._grow(msg, "Command:", start)
            lines.append(msg)
            still = shellwords.open_quote(msg, quote)
            if still in ("'", '"'):
                self.command_open = (proc, start, lines, still)
                return
            self.command_open = None
            self._command(proc, start, "\n".join(lines))
            return
        if not is_record:
            if self.env_open is not None:
                # A value holding a newline continues on the next physical line.
                self._grow(msg, "Env:", self.env_open.env_line or lineno)
                self.env_parts.append(msg)
            return
        self._close_env()
        self._message(lineno, msg)

    def _grow(self, line: str, what: str, start: int) -> None:
        """Count ``line`` into the open record; a record longer than ``MAX_LINE`` over all its
        lines is no srt-slurm output (and joining it again for every line cost its square)."""
        self.open_size += len(line) + 1
        if self.open_size > MAX_LINE:
            raise self.error(
                f"a logged {what} record is longer than {MAX_LINE >> 20} MiB over its lines "
                "(not srt-slurm output)",
                start,
            )

    def _close_env(self) -> None:
        if self.env_open is not None:
            self.env_open.env_text = "\n".join(self.env_parts)
        self.env_open, self.env_parts = None, []

    def _message(self, lineno: int, msg: str) -> None:
        if msg.startswith("Env:"):
            if self.current is not None and self.current.env_text is None:
                self.current.env_text = msg[4:].removeprefix(" ")
                self.current.env_line = lineno
                self.env_open, self.env_parts = self.current, [self.current.env_text]
                self.open_size = len(self.current.env_text)
            return
        if msg.startswith("Command: "):
            # Inside a worker block every Command: is the worker's (a second one is a conflict to
            # report, not the benchmark's); the benchmark's comes after its Script: line.
            proc = self.current if self.script is None else None
            self._command(proc, lineno, msg[len("Command: ") :])
            return
        if msg.startswith("Router command: "):
            proc = self.pending_router
            if proc is None:
                proc = LoggedProcess("sglang-router", len(self.log.frontends), "", lineno)
                self.log.processes.append(proc)
            self.pending_router = None
            self.log.router_style = "1.x"
            self._command(proc, lineno, msg[len("Router command: ") :])
            return
        if msg.startswith("Log: "):
            if self.current is not None:
                self._close_worker(lineno)
                self.current.log = msg[5:].strip()
                self.current = None
            return
        if msg.startswith("Script: "):
            self.script = msg[len("Script: ") :].strip()
            return
        if msg.startswith("Starting "):
            self._starting(lineno, msg)
            return
        if msg.startswith("frontend.type=sglang"):
            self.log.direct_frontend = True
        elif msg.startswith("Job ID: ") and self.log.job_id is None:
            self.log.job_id = msg[len("Job ID: ") :].strip()
        elif msg.startswith("Loaded config: ") and self.log.config_name is None:
            self.log.config_name = msg[len("Loaded config: ") :].strip()
        elif msg.startswith("Run name: ") and self.log.run_name is None:
            self.log.run_name = msg[len("Run name: ") :].strip()

    def number(self, text: str, lineno: int) -> int:
        """A process index as srt-slurm logs it; thousands of digits are not a log's."""
        if len(text) > MAX_INDEX_DIGITS:
            shown = clip(text, MAX_INDEX_DIGITS)  # cut, saying how much was left out
            raise self.error(f"process index {shown} is not a number srt-slurm logs", lineno)
        return int(text)

    def _starting(self, lineno: int, msg: str) -> None:
        svc = _SERVICE.match(msg)
        if svc:
            name = svc.group("name")
            proc = LoggedProcess(
                svc.group("type"),
                sum(p.service == name for p in self.log.processes),
                svc.group("node"),
                lineno,
                service=name,
            )
            self._close_worker(lineno)
            self.current = None
            self.log.processes.append(proc)
            self._command(proc, lineno, svc.group("argv"))
            return
        m = _WORKER.match(msg)
        if m:
            self._close_worker(lineno)
            node = m.group("node") or (m.group("nodes") or "").split(",")[0].strip()
            mode = m.group("mode")
            proc = LoggedProcess(
                "worker",
                self.number(m.group("index"), lineno),
                node,
                lineno,
                role=_MODES.get(mode, mode),
                engine=self.number(m.group("engine"), lineno) if m.group("engine") else None,
            )
            self.log.processes.append(proc)
            self.current = proc
            return
        f = _FRONTEND.match(msg)
        if not f or f.group("type") in ("backend", "frontend", "infrastructure"):
            return
        ftype = f.group("type")
        kind = {"dynamo frontend": "dynamo-frontend", "sglang": "sglang-router"}.get(ftype, ftype)
        proc = LoggedProcess(
            kind,
            self.number(f.group("index"), lineno),
            f.group("node"),
            lineno,
        )
        self._close_worker(lineno)
        self.current = None
        self.log.processes.append(proc)
        if f.group("argv") is not None:
            self.log.router_style = "2.x"
            self._command(proc, lineno, f.group("argv"))
        elif kind == "sglang-router":
            self.pending_router = proc

    def _close_worker(self, lineno: int) -> None:
        proc = self.current
        if proc is not None and proc.argv is None and self.command_open is None:
            raise self.error(
                f"{proc.role} worker {proc.index} on {proc.node} has no Command: line "
                f"before line {lineno} (truncated or not an srt-slurm sweep log)",
                proc.line,
            )

    def _command(self, proc: LoggedProcess | None, lineno: int, text: str) -> None:
        try:
            argv = shellwords.split(text)
        except ValueError as exc:
            if "closing quotation" in str(exc):
                # shlex.join keeps a newline inside quotes: the argument continues below.
                quote = shellwords.open_quote(text)
                assert quote in ("'", '"')
                self.command_open = (proc, lineno, [text], quote)
                self.open_size = len(text)
                return
            raise self.error(f"cannot split the logged command: {exc}", lineno) from None
        if proc is None:
            self.log.benchmarks.append(BenchmarkCommand(lineno, argv, self.script))
            self.script = None
            return
        if proc.argv is not None:
            proc.repeats.append((lineno, argv))
            return
        proc.argv = argv

    def finish(self) -> SweepLog:
        self._close_env()
        if self.command_open is not None:
            raise self.error(
                "the log ends inside a Command: line (unterminated quote; truncated log)",
                self.command_open[1],
            )
        if self.current is not None:
            # srt-slurm prints Log: right after Command:, so a block still open at the end of
            # the file was cut off (possibly in the middle of its Command: line).
            missing = "Command: and Log: lines" if self.current.argv is None else "Log: line"
            raise self.error(
                f"the log ends inside the block of {self.current.role} worker "
                f"{self.current.index} (no {missing}; truncated log)",
                self.current.line,
            )
        for proc in self.log.processes:
            if proc.kind == "sglang-router" and proc.argv is None:
                raise self.error(
                    f"sglang-router {proc.index} on {proc.node} was started but its command is "
                    "not in the log (truncated log?)",
                    proc.line,
                )
        return self.log


def _scan(stream: Readable, parser: _Parser) -> None:
    """Feed ``parser`` the lines it needs, reading ``stream`` in chunks: chunks without any
    marker are only counted, and inside a chunk only the lines holding a marker (and, while a
    record may continue, the lines after it) are decoded."""
    lineno = 0
    tail = b""
    skipping_long = False
    while True:
        chunk = stream.read(CHUNK)
        if not chunk:
            break
        if b"\x00" in chunk:
            data = tail + chunk
            raise SyncError(
                "binary data (NUL bytes) in what should be a text sweep log",
                path=parser.where,
                line=lineno + 1 + data.count(b"\n", 0, data.find(b"\x00")),
            )
        data = tail + chunk if tail else chunk
        cut = data.rfind(b"\n")
        if cut < 0:
            if len(data) > MAX_LINE:
                _check_long(data, parser, lineno + 1)
                skipping_long, tail = True, b""
            else:
                tail = data
            continue
        body, tail = data[: cut + 1], data[cut + 1 :]
        if skipping_long:
            first = body.find(b"\n")
            body = body[first + 1 :]
            lineno += 1
            skipping_long = False
        _feed_body(body, lineno, parser)
        lineno += body.count(b"\n")
    if tail and not skipping_long:
        lineno += 1
        _feed_line(tail, lineno, parser)
    parser.log.lines = lineno


def _feed_body(body: bytes, lineno: int, parser: _Parser) -> None:
    """``body`` holds complete lines; ``lineno`` lines come before it."""
    starts = {0} if parser.busy else set()
    for marker in _MARKERS:
        i = body.find(marker)
        while i >= 0:
            starts.add(body.rfind(b"\n", 0, i) + 1)
            i = body.find(marker, body.find(b"\n", i))
    pos = 0  # every line before ``pos`` is counted in ``lineno``
    for start in sorted(starts):
        if start < pos:
            continue
        lineno += body.count(b"\n", pos, start)
        pos = start
        while pos < len(body):
            end = body.find(b"\n", pos)
            lineno += 1
            _feed_line(body[pos:end], lineno, parser)
            pos = end + 1
            if not parser.busy:
                break


def _feed_line(line: bytes, lineno: int, parser: _Parser) -> None:
    if len(line) > MAX_LINE:
        _check_long(line, parser, lineno)
        return
    parser.feed(lineno, line.decode("utf-8", errors="replace").rstrip("\r"))


def _check_long(line: bytes, parser: _Parser, lineno: int) -> None:
    if any(m in line[:4096] for m in _MARKERS):
        raise SyncError(
            f"a logged line is longer than {MAX_LINE >> 20} MiB (not srt-slurm output)",
            path=parser.where,
            line=lineno,
        )


def parse_sweep_log(stream: Readable, source: str, where: str | None = None) -> SweepLog:
    """Parse one sweep log read from ``stream`` (bytes). ``source`` is its name inside the run;
    ``where`` (default ``source``) names it in errors."""
    parser = _Parser(source, where)
    _scan(stream, parser)
    return parser.finish()
