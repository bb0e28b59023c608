"""Shared fixtures. Reference data is read from ../shared/reference when it exists; tests that
need it skip cleanly when it does not (it is never copied into the project)."""

from __future__ import annotations

import gc
import io
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from syncer.runs.logs import SweepLog

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
REFERENCE = Path(os.environ.get("SYNC_REFERENCE_DIR", ROOT.parent / "shared" / "reference"))
EXAMPLES = ROOT / "examples"
GOLDEN = ROOT / "golden"

# Tests make commits in throwaway repositories; a fresh machine has no git identity, and the
# test run must not need (or set) the machine's global one.
for _var, _value in (
    ("GIT_AUTHOR_NAME", "sync tests"),
    ("GIT_AUTHOR_EMAIL", "tests@localhost"),
    ("GIT_COMMITTER_NAME", "sync tests"),
    ("GIT_COMMITTER_EMAIL", "tests@localhost"),
):
    os.environ.setdefault(_var, _value)

# git's housekeeping after each commit, fetch and push (``git maintenance run --auto`` and, in
# the repository pushed to, ``gc --auto``: a process each, 850 in a run of the suite) has
# nothing to do in a repository that lives one test. Off for every git the tests start
# themselves (the helpers that give git an environment of their own add it); the tool's own
# git drops every GIT_* variable, by design, and keeps its housekeeping.
QUIET_GIT = {
    "GIT_CONFIG_COUNT": "3",
    "GIT_CONFIG_KEY_0": "maintenance.auto",
    "GIT_CONFIG_VALUE_0": "false",
    "GIT_CONFIG_KEY_1": "gc.auto",
    "GIT_CONFIG_VALUE_1": "0",
    "GIT_CONFIG_KEY_2": "receive.autogc",
    "GIT_CONFIG_VALUE_2": "false",
}
for _var, _value in QUIET_GIT.items():
    os.environ.setdefault(_var, _value)


SHM = Path("/dev/shm")
SHM_NEEDED = 2 << 30  # free bytes /dev/shm must have to take a run's files, with room to spare
_IN_MEMORY = pytest.StashKey[Path]()  # the run's folder there, when it has one


_CACHE = pytest.StashKey[Path]()  # the run's own user cache


@pytest.hookimpl(tryfirst=True)  # before pytest reads --basetemp
def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return  # the workers inherit the controller's environment
    _temp_in_memory(config)
    # The tool keeps what it can make again (compiled templates, the bot's clones) in the
    # user's cache: a test run keeps its own, so it neither writes into the home directory nor
    # reads what another run or version left there.
    config.stash[_CACHE] = Path(tempfile.mkdtemp(prefix="sync-cache-"))
    os.environ["XDG_CACHE_HOME"] = str(config.stash[_CACHE])


def _temp_in_memory(config: pytest.Config) -> None:
    """Temporary files in memory where the machine has a tmpfs for them (``/dev/shm``, shared
    and sticky like ``/tmp``), unless ``TMPDIR`` or ``--basetemp`` says where: the tests build
    git repositories, InferenceX trees and cookbook checkouts by the thousand files and remove
    them again, and on a busy disk creating and removing them took longer than all the work
    done with them (a bot test of 55 s ran in 12 s). The run's own folder there
    (``/dev/shm/sync-XXXXXXXX``) is shorter than pytest's default under ``/tmp``, so no error
    line that quotes a test's path is cut where it was not; it is removed after a run that
    passed, kept after one that failed. Set in the controller, before pytest-xdist starts its
    workers: they and every process a test starts inherit it."""
    if os.environ.get("TMPDIR") or config.option.basetemp:
        return
    try:
        info = SHM.stat()
    except OSError:
        return
    if not (stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_ISVTX):
        return  # not a shared temporary directory
    if not os.access(SHM, os.W_OK | os.X_OK):
        return
    fs = os.statvfs(SHM)
    if fs.f_bavail * fs.f_frsize < SHM_NEEDED:
        return  # a container's small /dev/shm (64 MB by default) would fill up: use the disk
    config.option.basetemp = tempfile.mkdtemp(prefix="sync-", dir=SHM)
    config.stash[_IN_MEMORY] = Path(config.option.basetemp)
    os.environ["TMPDIR"] = str(SHM)
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    root = session.config.stash.get(_IN_MEMORY, None)
    if root is not None and exitstatus == 0:
        shutil.rmtree(root, ignore_errors=True)
    cache = session.config.stash.get(_CACHE, None)
    if cache is not None:
        shutil.rmtree(cache, ignore_errors=True)


def pytest_sessionstart(session: pytest.Session) -> None:
    """The project's bytecode, compiled once per run (stale files only): hundreds of tests run
    the real command in a fresh process, and under ``PYTHONDONTWRITEBYTECODE`` each of them
    would compile every module it imports from source again, a fifth of such a test's CPU
    time. The ``.pyc`` files go where Python puts them (``__pycache__``, ignored by git)."""
    import compileall

    for package in ("syncer", "bench"):
        compileall.compile_dir(ROOT / package, quiet=2)
    if not hasattr(session.config, "workerinput"):
        _compile_templates()
    if _runs_tests(session.config) and os.environ.get("SYNC_TEST_FORKSERVER") != "0":
        _start_forkserver()


def _compile_templates() -> None:
    """The templates compiled once per run into the run's user cache, as a user's first
    command leaves them (the same :func:`syncer.templating.compiled_templates`), even under
    ``PYTHONDONTWRITEBYTECODE``, which otherwise has every command a test runs compile each
    template it renders again: a fifth of a forked bot or verify command's CPU time. The
    workers and every command a test starts inherit the cache's location."""
    from syncer import templating

    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        for folder in (None, ROOT / "bench" / "templates"):
            env = templating.environment(folder)
            for name in env.list_templates():
                env.get_template(name)
    finally:
        sys.dont_write_bytecode = saved


def _runs_tests(config: pytest.Config) -> bool:
    """A pytest-xdist worker, or a run without workers (its controller runs no test)."""
    if hasattr(config, "workerinput"):
        return True
    return not getattr(config.option, "numprocesses", None) and not config.option.collectonly


def _start_forkserver() -> None:
    """The real command, in a process of its own, forked from one that has already imported
    the tool (tests/forkserver.py): about 0.2 s of CPU saved per command, in the 300 a run
    starts. Its socket is named in the environment, which the processes a test starts inherit;
    a process whose interpreter start-up would differ runs the command itself.
    ``SYNC_TEST_FORKSERVER=0`` runs every command as a process of its own."""
    import atexit

    import forkserver

    folder = tempfile.mkdtemp(prefix="sync-fs-")
    atexit.register(shutil.rmtree, folder, True)
    forkserver.start(folder)


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[None]:
    """The test modules' assertion-rewritten code cached where pytest keeps it (``.pyc`` files
    in ``__pycache__``) even under ``PYTHONDONTWRITEBYTECODE``, which otherwise has every test
    process of every run rewrite all of them again: 5.5 s of CPU per process, more than
    collecting takes without it. Only while collecting; the rest of the run is as the
    environment says.

    Then what collecting made (the modules, their tests, what they imported: most of the
    objects a test process holds, and never garbage) is moved out of the cyclic garbage
    collector's sight (``gc.freeze``), which otherwise walks all of it again in each of its
    full passes: about half of a test process's collector time (bot, cookbook and usecases
    tests in one process: 3.6 s -> 1.6-2.0 s)."""
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        yield
    finally:
        sys.dont_write_bytecode = saved
    gc.freeze()


@pytest.fixture
def reference() -> Path:
    if not REFERENCE.is_dir():
        pytest.skip(f"reference data not present at {REFERENCE}")
    return REFERENCE


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


@pytest.fixture
def golden() -> Path:
    return GOLDEN


def match_golden(path: Path, text: str) -> None:
    """``text`` must equal the golden file under ``golden/`` byte for byte (JSON goldens are
    compared as the text the test dumps, so key order counts too). The one way to regenerate
    any golden file: ``SYNC_UPDATE_GOLDEN=1`` rewrites it (on purpose only: read the diff
    before committing)."""
    if os.environ.get("SYNC_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"missing golden {path} (set SYNC_UPDATE_GOLDEN=1 to write it)"
    assert text == path.read_text(encoding="utf-8")


def parse_sweep_text(text: str, source: str = "<log>") -> SweepLog:
    """A sweep log held in memory, parsed as the run reader parses a log member."""
    from syncer.runs.logs import parse_sweep_log

    return parse_sweep_log(io.BytesIO(text.encode("utf-8")), source)


@pytest.fixture
def world(tmp_path):
    """The bot's world (botworld.World) around a fresh local GitHub server."""
    from botworld import World
    from ghserver import GitHubServer

    server = GitHubServer()
    with server:
        yield World(tmp_path, server)


@pytest.fixture
def replay(tmp_path):
    """The InferenceX side as real repositories (botworld.Replay) around a local GitHub."""
    from botworld import Replay
    from ghserver import GitHubServer

    server = GitHubServer()
    with server:
        yield Replay(tmp_path, server)


class _Stderr(io.StringIO):
    """A stderr that says whether it is a terminal, as a pseudo-terminal or a pipe would."""

    def __init__(self, terminal: bool) -> None:
        super().__init__()
        self.terminal = terminal

    def isatty(self) -> bool:
        return self.terminal


@pytest.fixture
def stderr_as(monkeypatch: pytest.MonkeyPatch) -> Callable[[bool], io.StringIO]:
    """``stderr_as(terminal)``: sys.stderr replaced by a buffer that is a terminal (of 120
    columns) or not, which is how ``syncer.progress`` decides to show anything."""
    for name in ("TTY_COMPATIBLE", "FORCE_COLOR", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "120")

    def use(terminal: bool) -> io.StringIO:
        buf = _Stderr(terminal)
        monkeypatch.setattr(sys, "stderr", buf)
        return buf

    return use
