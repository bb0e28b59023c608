"""``python -m syncer`` as a real process of its own, without the interpreter's start-up each
time: a test process keeps one server that has imported the tool (and everything the tool
imports later, inside its functions) and forks a process for each command a test runs.

The command a test runs is ``python -S forkserver.py ARGS`` (:func:`command`), a small client
that hands the server its own standard streams, arguments, environment, working directory and
umask, forwards the signals it is sent, and ends as the forked process ended (its exit code,
or killed by the same signal). The forked process becomes what ``python -m syncer ARGS`` would
be at that point: the streams made again as the interpreter makes them, the environment,
working directory, umask, time zone and import path of the request, ``__main__`` and
``sys.argv`` as ``-m`` sets them; then it runs the package's ``__main__`` and exits through the
interpreter's own shutdown (exit code, flushes, ``atexit``).

Resource limits lower than the server's are the fork's own to set, and it sets them. The
environment the interpreter reads at its start-up (``PYTHON*`` other than ``PYTHONPATH``, the
locale) a fork cannot make again: a request with another start-up is sent to a server of its
own, which the server starts with the client's start-up variables as the client was started
with them (one per start-up, up to eight). What the server cannot make equal it does not
attempt: when the request's user, groups, a resource limit above the server's or the
interpreter differ from the server's, or there is no server, the client becomes the real thing
(``exec python -m syncer ARGS``).
``tests/test_forkserver.py`` holds the two to the same output, exit code and side effects.

The client imports only the interpreter's built-in modules (``_signal``, ``_socket``,
``marshal``, not ``signal``, ``socket`` or ``json``, which import ``enum`` and ``re``), so that it
starts in a few milliseconds (run with ``-S``)."""

from __future__ import annotations

import _signal
import _socket
import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

# The client is this file run as a command; the server and the tests' side import the rest.
if __name__ != "__main__" or sys.argv[1:2] == ["--serve"]:
    import contextlib
    import resource
    import signal
    import socket
    import subprocess

ENV = "SYNC_TEST_FORKSERVER"  # the server's socket, for the processes a test starts
HERE = os.path.abspath(__file__)
FORWARDED = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP, _signal.SIGQUIT, _signal.SIGUSR1,
             _signal.SIGUSR2)  # fmt: skip
_LIMIT = 64 << 20  # the largest request read (argv and environment)
# Every module is preloaded, esprima too: importing it is 0.7 s of CPU (its tables are 120 MB),
# paid by each command that parses a module off the generator's layout (a forked decode of
# one: 818 -> 115 ms), while a fork that never touches those pages copies none of them (it
# ends through os._exit, not the module teardown that wrote to all of them): no cost
# measured on verify or render.
_NOT_PRELOADED: set[str] = set()


def command() -> list[str]:
    """The command line of ``python -m syncer``, to which a test adds the arguments."""
    return [sys.executable, "-S", HERE]


def real_command() -> list[str]:
    return [sys.executable, "-m", "syncer"]


def interpreter_env() -> dict[str, str]:
    """The variables of this environment that the interpreter reads as it starts (``PYTHON*``
    but ``PYTHONPATH``, which the server applies, and the locale)."""
    return {k: v for k, v in os.environ.items() if _read_at_start_up(k)}


def _read_at_start_up(name: str) -> bool:
    if name.startswith("PYTHON"):
        return name != "PYTHONPATH"
    return name.startswith("LC_") or name == "LANG"


def _started_with() -> dict[str, str]:
    """The start-up variables this process was started with, before the interpreter changed
    them (a C locale is coerced to C.UTF-8 by setting ``LC_CTYPE``): what a server for this
    start-up is started with, to start as this process did."""
    try:
        with open("/proc/self/environ", "rb") as initial:
            items = initial.read().split(b"\0")
    except OSError:
        return interpreter_env()
    pairs = (item.partition(b"=") for item in items)
    return {
        os.fsdecode(name): os.fsdecode(value)
        for name, sep, value in pairs
        if sep and _read_at_start_up(os.fsdecode(name))
    }


def machine_env() -> dict[str, str]:
    """For a test whose command has an environment of its own, the part of this one that is
    the machine's rather than the test's: the interpreter's start-up variables, and the
    server's socket."""
    return {**interpreter_env(), **({ENV: os.environ[ENV]} if ENV in os.environ else {})}


# ---- the client ---------------------------------------------------------------------------


def _client(argv: list[str]) -> None:
    path = os.environ.get(ENV)
    conn = _connect(path) if path else None
    if conn is None:
        _become_real(argv)
    fds = [fd for fd in (0, 1, 2) if _is_open(fd)]
    mask = os.umask(0)
    os.umask(mask)
    request = {
        "argv": argv,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "umask": mask,
        "fds": fds,
        "identity": _identity(),
    }
    payload = marshal.dumps(request)
    message = len(payload).to_bytes(8, "big") + payload
    # SCM_RIGHTS carries the descriptors as an array of C ints.
    rights = b"".join(fd.to_bytes(4, sys.byteorder) for fd in fds)
    lines = _request(conn, message, rights)
    first = next(lines)
    if first.startswith(b"server "):  # another start-up: the server started as this one was
        conn.close()
        conn = _connect(os.fsdecode(first[7:-1]))
        if conn is None:
            _become_real(argv)
        lines = _request(conn, message, rights)
        first = next(lines)
    if first == b"exec\n" or first.startswith(b"server "):
        conn.close()
        _become_real(argv)
    if not first.startswith(b"pid "):
        _lost()
    pid = int(first.split()[1])
    for sig in FORWARDED:
        _signal.signal(sig, lambda number, _frame: os.kill(pid, number))
    last = next(lines)
    if not last.startswith(b"exit "):
        _lost()
    code = int(last.split()[1])
    if code < 0:  # killed by a signal: this process is killed by the same one
        _signal.signal(-code, _signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


def _request(conn: _socket.socket, message: bytes, rights: bytes) -> Iterator[bytes]:
    sent = conn.sendmsg([message], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
    if sent < len(message):  # (sendall of nothing still sends, and the server may be gone)
        conn.sendall(message[sent:])
    return _lines(conn)


def _lines(conn: _socket.socket) -> Iterator[bytes]:
    """The server's answer lines, each with its newline; an empty one once it is gone."""
    pending = b""
    while True:
        end = pending.find(b"\n")
        if end >= 0:
            yield pending[: end + 1]
            pending = pending[end + 1 :]
            continue
        more = conn.recv(4096)  # retried by the interpreter when a forwarded signal comes
        if not more:
            yield pending
            pending = b""
            continue
        pending += more


def _connect(path: str) -> _socket.socket | None:
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        return None
    return conn


def _become_real(argv: list[str]) -> None:
    os.execv(sys.executable, [*real_command(), *argv])


def _lost() -> None:
    os.write(2, b"forkserver: the server went away before the command ended\n")
    os._exit(70)


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _identity() -> dict[str, object]:
    """What of this process the server must share for its fork to be this process."""
    import resource

    limits = {
        name: list(resource.getrlimit(getattr(resource, name)))
        for name in dir(resource)
        if name.startswith("RLIMIT_")
    }
    return {
        "ids": [os.getuid(), os.geteuid(), os.getgid(), os.getegid(), sorted(os.getgroups())],
        "limits": limits,
        "startup": interpreter_env(),
        "origin": _started_with(),
        "executable": sys.executable,
    }


# ---- the server ---------------------------------------------------------------------------


_SERVERS = 8  # the most servers for other start-ups one server starts


class _Servers:
    """The servers this one started for other interpreter start-ups (a locale, a ``PYTHON*``
    variable: what a fork cannot make again), one per start-up, each started as the client's
    process was and serving its forks. Each holds the read end of a pipe whose write end only
    this server has, so that it ends when this one does (killed at the end of a test run)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.started: dict[tuple, tuple[subprocess.Popen, str, int]] = {}  # process, socket, pipe

    def path_for(self, origin: dict[str, str]) -> str | None:
        key = tuple(sorted(origin.items()))
        if key not in self.started:
            if len(self.started) >= _SERVERS:
                return None
            self.started[key] = self._start(origin, len(self.started))
        _proc, path, _pipe = self.started[key]
        return path if path and os.path.exists(path) else None

    def _start(self, origin: dict[str, str], number: int) -> tuple[subprocess.Popen, str, int]:
        import time

        path = os.path.join(self.folder, f"forkserver-{number}.sock")
        env = {k: v for k, v in os.environ.items() if not _read_at_start_up(k)}
        stop_r, stop_w = os.pipe()
        proc = subprocess.Popen(
            [sys.executable, HERE, "--serve", path, str(stop_r)], env={**env, **origin},
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=[stop_r],
        )  # fmt: skip
        os.close(stop_r)
        deadline = time.monotonic() + 10  # it listens first, then imports: a client waits
        while not os.path.exists(path) and time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            time.sleep(0.005)
        return proc, path, stop_w

    def stop(self) -> None:
        """Each server ended (its pipe closed) and waited for, with the commands it forked,
        so that the test run's own time counts theirs; then this one ends."""
        for proc, _path, pipe in self.started.values():
            if pipe >= 0:
                os.close(pipe)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(proc.pid, 0)
        os._exit(0)

    def pipes(self) -> list[int]:
        return [pipe for _proc, _path, pipe in self.started.values() if pipe >= 0]

    def ended(self, pid: int) -> None:
        for key, (proc, _path, pipe) in list(self.started.items()):
            if proc.pid == pid and pipe >= 0:
                proc.returncode = -1  # reaped here, not by Popen
                os.close(pipe)
                self.started[key] = (proc, "", -1)  # not started again: its clients run real


def _serve(path: str, parent: int | None = None) -> None:
    """Serve forks of this interpreter at ``path``; ``parent``: the pipe whose end means the
    server that started this one for its start-up has ended (see :class:`_Servers`)."""
    import select

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # Named at ``path`` only once it listens: whoever waits for the name to appear (the test
    # process, a server that started this one) sends a client that would otherwise find it
    # bound but refusing, and run the real command.
    listener.bind(path + ".new")
    listener.listen(64)  # a client that comes while the imports below run waits in the queue
    os.rename(path + ".new", path)
    if parent is None:
        _preload()
    # else only what the warm-up imports: a server for another start-up serves a few tests'
    # commands, and a command imports the rest itself, as the real one does
    _warm()
    own = _identity()
    servers = _Servers(os.path.dirname(path)) if parent is None else None
    watched = [] if parent is None else [parent]
    base_path = _base_path()
    import gc

    gc.collect()
    gc.freeze()  # what every fork shares, kept out of the collector's (page-copying) passes
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    if servers is not None:  # ended by the test process: the servers it started end with it
        signal.signal(signal.SIGTERM, lambda *_: servers.stop())
    running: dict[int, socket.socket] = {}  # forked process -> its client
    while True:
        ready, _, _ = select.select([listener, wake_r, *watched, *running.values()], [], [])
        if watched and watched[0] in ready:
            os._exit(0)  # the server that started this one has ended
        if wake_r in ready:
            os.read(wake_r, 512)
        _reap(running, servers)
        for conn in [c for c in ready if c in running.values()]:
            # its client went away (killed on a timeout): so does the command
            pid = next(p for p, c in running.items() if c is conn)
            _kill_group(pid)
        if listener in ready:
            conn, _ = listener.accept()
            request, fds = _read_request(conn)
            if request is None or not _can_become(request["identity"], own):
                other = _other_server(request, own, servers)
                _answer(conn, b"exec\n" if other is None else f"server {other}\n".encode())
                conn.close()
                for fd in fds:
                    os.close(fd)
                continue
            pid = os.fork()
            if pid == 0:
                for other in [listener, *running.values()]:
                    other.close()
                for fd in (wake_r, wake_w, *watched, *(servers.pipes() if servers else [])):
                    os.close(fd)
                conn.close()
                _lower_limits(request["identity"]["limits"], own["limits"])
                _become_command(request, fds, base_path)  # does not return
            for fd in fds:
                os.close(fd)
            _answer(conn, f"pid {pid}\n".encode())
            running[pid] = conn


def _other_server(request: dict | None, own: dict, servers: _Servers | None) -> str | None:
    """The socket of the server for the request's interpreter start-up, when that is all that
    differs from this server's (``None``: the client runs the real command)."""
    if request is None or servers is None:
        return None
    identity = request["identity"]
    if not _can_become({**identity, "startup": own["startup"], "origin": own["origin"]}, own):
        return None
    return servers.path_for(identity["origin"])


def _can_become(identity: dict, own: dict) -> bool:
    """Whether a fork of the server can be the client's process: the same user, groups,
    start-up environment and interpreter, and resource limits the fork can set itself (each
    the server's, or lower: what an unprivileged process may do to its own, as the client's
    ``preexec_fn`` did to it; a test of the bounds runs commands under a lowered
    ``RLIMIT_AS``)."""
    if {**identity, "limits": None} != {**own, "limits": None}:
        return False
    limits, ours = identity["limits"], own["limits"]
    return limits.keys() == ours.keys() and all(
        _at_most(limits[name][1], ours[name][1]) for name in limits
    )


def _at_most(limit: int, other: int) -> bool:
    infinity = resource.RLIM_INFINITY
    return other == infinity or (limit != infinity and limit <= other)


def _lower_limits(limits: dict, own: dict) -> None:
    """The fork's resource limits made the client's (the server's or lower: see
    :func:`_can_become`)."""
    for name, (soft, hard) in limits.items():
        if [soft, hard] != own[name]:
            resource.setrlimit(getattr(resource, name), (soft, hard))


def _reap(running: dict[int, socket.socket], servers: _Servers | None) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = running.pop(pid, None)
        if conn is None and servers is not None:
            servers.ended(pid)
        if conn is not None:
            _answer(conn, f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
            conn.close()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def _answer(conn: socket.socket, line: bytes) -> None:
    with contextlib.suppress(OSError):  # its client went away: nobody to tell
        conn.sendall(line)


def _read_request(conn: socket.socket) -> tuple[dict | None, list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    if len(data) < 8:
        return None, fds
    size = int.from_bytes(data[:8], "big")
    if size > _LIMIT:
        return None, fds
    body = bytearray(data[8:])
    while len(body) < size:
        more = conn.recv(size - len(body))
        if not more:
            return None, fds
        body += more
    request = marshal.loads(body)
    if len(fds) != len(request["fds"]):
        return None, fds
    return request, fds


def _become_command(request: dict, fds: list[int], base_path: list[str]) -> None:
    """This fork becomes ``python -m syncer ARGS`` as started by the client."""
    import io
    import runpy
    import tempfile
    import time

    os.setpgid(0, 0)  # so that a timeout's kill reaches what it started too
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # as the server was started
    streams = {0: sys.stdin, 1: sys.stdout, 2: sys.stderr}
    received = dict(zip(request["fds"], fds, strict=True))
    for target in (0, 1, 2):
        if target in received:
            os.dup2(received[target], target)
        else:
            os.close(target)
    for fd in fds:
        if fd not in (0, 1, 2):
            os.close(fd)
    os.umask(request["umask"])
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    tempfile.tempdir = None  # gettempdir() reads TMPDIR of this environment
    extra = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [os.getcwd(), *extra, *base_path]
    # The interpreter's streams as it makes them at start-up (create_stdio): text with "\n"
    # newlines over a buffered file, or a raw one written through (PYTHONUNBUFFERED, which
    # the server shares); line buffering on a terminal, and on stderr always.
    made = []
    for fd, mode, name in ((0, "r", "<stdin>"), (1, "w", "<stdout>"), (2, "w", "<stderr>")):
        old = streams[fd]
        if fd not in received:
            made.append(None)
            continue
        unbuffered = old.write_through
        raw = io.FileIO(fd, mode + "b", closefd=False)
        raw.name = name
        buffer: io.RawIOBase | io.BufferedIOBase = raw
        if mode == "r":
            buffer = io.BufferedReader(raw)
        elif not unbuffered:
            buffer = io.BufferedWriter(raw)
        stream = io.TextIOWrapper(
            buffer, encoding=old.encoding, errors=old.errors, newline="\n",
            line_buffering=not unbuffered and (raw.isatty() or fd == 2),
            write_through=unbuffered,
        )  # fmt: skip
        stream.mode = mode
        made.append(stream)
    sys.stdin, sys.stdout, sys.stderr = made
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = made
    if os.environ.get("SYNC_TEST_FORKSERVER_SAY"):
        sys.stderr.write("forkserver: forked\n")  # for the test that it is
    sys.argv = ["-m", *request["argv"]]  # as -m has it until the module is found
    try:
        runpy.run_module("syncer", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc)
    except KeyboardInterrupt:
        sys.excepthook(*sys.exc_info())
        _finalize(0)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # ended by SIGINT, as the interpreter does
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    os._exit(_finalize(code))


def _exit_code(exc: SystemExit) -> int:
    """The process's exit code for an uncaught ``SystemExit``, as the interpreter makes it."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


def _finalize(code: int) -> int:
    """The interpreter's shutdown up to its last flush of the standard streams (Py_FinalizeEx:
    threads joined, ``atexit``, which runs every ``weakref.finalize`` left too, then stdout
    and stderr flushed, a failure of either being exit code 120), but not the teardown of
    every module after it: in a fork that writes to every page it shares with the server,
    about 40 ms of a command's CPU, for objects that end with the process anyway."""
    import atexit
    import threading

    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        if stream is None or stream.closed:
            continue
        try:
            stream.flush()
        except Exception:  # reported as the interpreter reports it
            if stream is sys.stdout:
                _unraisable(stream)
            code = 120
    return code


def _unraisable(stream: object) -> None:
    """What ``PyErr_WriteUnraisable`` prints for a failed flush of ``stream``."""
    import traceback

    kind, error, _ = sys.exc_info()
    text = "".join(traceback.format_exception_only(kind, error))
    with contextlib.suppress(Exception):
        sys.stderr.write(f"Exception ignored in: {stream!r}\n{text}")
        sys.stderr.flush()


def _base_path() -> list[str]:
    """The import path without the server's script folder and PYTHONPATH: what every command
    has after its own working directory and PYTHONPATH."""
    own = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    rest = sys.path[1:]
    for entry in own:
        if entry in rest:
            rest.remove(entry)
    return rest


# An import statement's line: ``from <module> import`` (absolute), or ``import a.b as c, d``.
_IMPORT_LINE = (
    rb"^[ \t]*(?:from[ \t]+(\w[\w.]*)[ \t]+import\b"
    rb"|import[ \t]+(\w[\w.]*(?:[ \t]+as[ \t]+\w+)?"
    rb"(?:[ \t]*,[ \t]*\w[\w.]*(?:[ \t]+as[ \t]+\w+)?)*))"
)


def _preload() -> None:
    """The tool's modules, and every module they import anywhere (most import inside the
    functions that need them, for the start-up of a real process). The imports are found
    line by line, not by parsing every module (a third of the preload's CPU time, in each
    test process): a docstring line that reads like an import names at most a module that
    is not there, skipped as one only some platforms have is."""
    import importlib
    import re
    from pathlib import Path

    import syncer

    package = Path(syncer.__file__).parent
    statement = re.compile(_IMPORT_LINE, re.MULTILINE)
    names: set[str] = set()
    for source in sorted(package.rglob("*.py")):
        module = ".".join(source.relative_to(package.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        if module.endswith("__main__"):
            continue
        names.add(module)
        # A relative import names one of the tool's modules, all of them imported anyway.
        for found in statement.finditer(source.read_bytes()):
            if found[1]:
                names.add(found[1].decode())
            else:
                names.update(part.split()[0].decode() for part in found[2].split(b","))
    for name in sorted(names - _NOT_PRELOADED):
        with contextlib.suppress(Exception):  # a module only some platforms have
            importlib.import_module(name)


# What a warm server runs once, in the project's own checkout on its bundled example: every
# command reads it, none writes (reencode and generate --check print; audit is offline).
_KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
_MODULE = "cookbook_snippets/deepseek-ai/deepseek-v4_1.jsx"
_WARMING = (
    ["render", _KEY],
    ["verify", _KEY],
    ["verify", _KEY, "--format", "markdown"],
    ["verify", _KEY, "--format", "json"],
    ["generate", "--all", "--check"],
    ["decode", _MODULE, "--all", "--format", "json"],
    ["diff", _MODULE, _MODULE],
    ["list"],
    ["audit", "--offline", "--cookbook", "cookbook_snippets"],
    ["reencode", _MODULE],
)


def _warm() -> None:
    """The commands of :data:`_WARMING` run once in the server, output discarded, so that
    what a command does the first time in a process and keeps for the rest of it (regular
    expressions compiled inside functions, templates loaded, the bundled policy parsed:
    every such cache keyed on its input, a file's by its version) is done before the fork
    rather than in each forked command (on a busy machine, 10 ms to 70 ms of a forked
    verify's 90-200 ms; most of the rest is the fork itself). Nothing the tool reads of the
    request (arguments, environment, working directory) is kept from it.
    ``SYNC_TEST_FORKSERVER_WARM=0``: no warm-up."""
    if os.environ.get(ENV + "_WARM") == "0":
        return
    from click.testing import CliRunner

    from syncer.commands.group import cli

    here = os.getcwd()
    os.chdir(os.path.dirname(os.path.dirname(HERE)))
    try:
        runner = CliRunner()
        for args in _WARMING:
            runner.invoke(cli, args)  # its outcome is no concern of the server's
    finally:
        os.chdir(here)


# ---- the test process's side --------------------------------------------------------------


def start(folder: str) -> None:
    """Start this test process's server (its socket in ``folder``) and name it in the
    environment that every process the tests start inherits."""
    import atexit
    import subprocess
    import time

    path = os.path.join(folder, "forkserver.sock")
    proc = subprocess.Popen(
        [sys.executable, HERE, "--serve", path],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    atexit.register(_stop, proc, path)
    deadline = time.monotonic() + 10
    while not os.path.exists(path) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.005)
    if os.path.exists(path):
        os.environ[ENV] = path


def _stop(proc: object, path: str) -> None:
    import subprocess

    assert isinstance(proc, subprocess.Popen)
    proc.terminate()  # it ends the servers it started, and waits for them
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    with contextlib.suppress(OSError):
        os.unlink(path)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        _serve(sys.argv[2], int(sys.argv[3]) if sys.argv[3:] else None)
    else:
        _client(sys.argv[1:])
