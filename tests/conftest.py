"""Shared fixtures. Reference data is read from ../shared/reference when it exists; tests that
need it skip cleanly when it does not (it is never copied into the project)."""

from __future__ import annotations

import io
import os
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


def pytest_sessionstart(session: pytest.Session) -> None:
    """The project's bytecode, compiled once per run (stale files only): hundreds of tests run
    the real command in a fresh process, and under ``PYTHONDONTWRITEBYTECODE`` each of them
    would compile every module it imports from source again, a fifth of such a test's CPU
    time. The ``.pyc`` files go where Python puts them (``__pycache__``, ignored by git)."""
    import compileall

    for package in ("syncer", "bench"):
        compileall.compile_dir(ROOT / package, quiet=2)


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
