"""Which commit a directory has checked out, and a long-lived object reader of a repository;
both run git through :mod:`syncer.gitrun`, as everything does.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import weakref
from pathlib import Path
from typing import IO, TYPE_CHECKING

from syncer import gitrun

if TYPE_CHECKING:
    import subprocess

# Reading one commit's id and date takes milliseconds; the bound is for a hung filesystem.
QUERY_TIMEOUT = 30


def checked_out(path: Path) -> tuple[str, str] | None:
    """The commit checked out at ``path`` and its committer date (ISO 8601), when ``path`` is a
    git repository of its own: the top of a work tree (``.git`` a directory, or the file of a
    linked worktree) or a bare repository. None for anything else, a folder inside some other
    repository included."""
    if (path / ".git").exists():
        top = gitrun.text("rev-parse", "--show-toplevel", repo=path, timeout=QUERY_TIMEOUT)
        if top is None or Path(top).resolve() != path.resolve():
            return None
        out = gitrun.text("log", "-1", "--format=%H %cI", "HEAD", repo=path, timeout=QUERY_TIMEOUT)
    elif (path / "HEAD").is_file() and (path / "objects").is_dir():
        out = gitrun.text(
            "log", "-1", "--format=%H %cI", "HEAD", git_dir=path, timeout=QUERY_TIMEOUT
        )
    else:
        return None
    parts = (out or "").split()
    return (parts[0], parts[1]) if len(parts) == 2 else None


class Unanswered(Exception):
    """The object reader cannot say (a name with a line break, or git gone): ask git another
    way."""


# Names written to a reader before its answers are read: well under a pipe's 64 kB, so git,
# blocked on an answer nobody reads yet, never leaves the writer blocked too.
_NAMES_PER_ROUND = 256


class ObjectReader:
    """One long-lived ``git cat-file --batch-command`` for a repository, asked object after
    object: a run reads objects at many commits, and a git process for each read was most of
    the processes it started. It sees what a later fetch brings (git looks again for an
    object it does not find, and reads refs afresh for every name); it ends with :meth:`close`,
    when it is collected, or with the program. The repository: ``git_dir``, else ``cwd``;
    ``env``: what :func:`gitrun.git_env` adds for it."""

    def __init__(
        self,
        *,
        git_dir: Path | str | None = None,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 600,
    ) -> None:
        self._timeout = timeout
        self._proc = gitrun.popen("cat-file", "--batch-command", git_dir=git_dir, cwd=cwd, env=env)
        if self._proc is None:
            return
        self._finalizer = weakref.finalize(self, ObjectReader._close, self._proc)

    @property
    def alive(self) -> bool:
        return self._proc is not None

    def contents(self, names: list[str]) -> list[tuple[str, str, bytes] | None]:
        """``(type, id, content)`` of the object each name names (``<rev>:<path>``, an id),
        None for one that names none (or more than one)."""
        return self._ask("contents", names)  # type: ignore[return-value]

    def info(self, names: list[str]) -> list[tuple[str, str, int] | None]:
        """``(type, id, size)`` of the object each name names, None as for :meth:`contents`."""
        return self._ask("info", names)  # type: ignore[return-value]

    def close(self) -> None:
        if self._proc is not None:
            self._finalizer()
            self._proc = None

    def _ask(self, command: str, names: list[str]) -> list[tuple[str, str, object] | None]:
        proc = self._proc
        if proc is None or any("\n" in n or "\r" in n or not n for n in names):
            raise Unanswered(command)
        assert proc.stdin is not None and proc.stdout is not None
        answers: list[tuple[str, str, object] | None] = []
        # A hung git (a lazy fetch of a partial clone, a stuck filesystem) is stopped after
        # the bound each git process of a run has; its reads then end, and the names are
        # asked another way, under that process's own bound.
        watchdog = threading.Timer(self._timeout, ObjectReader._stop, (proc,))
        watchdog.daemon = True
        watchdog.start()
        try:
            for start in range(0, len(names), _NAMES_PER_ROUND):
                batch = names[start : start + _NAMES_PER_ROUND]
                proc.stdin.write(b"".join(
                    f"{command} {n}\n".encode("utf-8", "surrogateescape") for n in batch
                ))  # fmt: skip
                proc.stdin.flush()
                for _ in batch:
                    answers.append(self._answer(proc.stdout, command == "contents"))
            return answers
        except (OSError, ValueError):
            pass
        finally:
            watchdog.cancel()
        # git went away or said what a batch does not: this and every later name another way
        self.close()
        raise Unanswered(command)

    @staticmethod
    def _answer(out: IO[bytes], with_content: bool) -> tuple[str, str, object] | None:
        header = out.readline()
        if header.endswith((b" missing\n", b" ambiguous\n")):
            return None
        oid, kind, size = header.decode("ascii").split()
        if not with_content:
            return kind, oid, int(size)
        content = out.read(int(size) + 1)  # and the line break after it
        if len(content) != int(size) + 1:
            raise ValueError("short read")
        return kind, oid, content[:-1]

    @staticmethod
    def _stop(proc: subprocess.Popen[bytes]) -> None:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)

    @staticmethod
    def _close(proc: subprocess.Popen[bytes]) -> None:
        import subprocess

        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
