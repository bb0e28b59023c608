"""Which commit a directory has checked out, asked of git the one way every layer asks it.

``git_env`` is the environment every git the tool runs gets: the caller's ``GIT_*`` variables
dropped (a ``GIT_DIR`` of the shell must not make git answer for another repository), no
prompt, no pager, no user or system config (hooks, fsmonitor, aliases of the runner).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

# Reading one commit's id and date takes milliseconds; the bound is for a hung filesystem.
QUERY_TIMEOUT = 30


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_PAGER="cat",
    )
    return env


def checked_out(path: Path) -> tuple[str, str] | None:
    """The commit checked out at ``path`` and its committer date (ISO 8601), when ``path`` is a
    git repository of its own: the top of a work tree (``.git`` a directory, or the file of a
    linked worktree) or a bare repository. None for anything else, a folder inside some other
    repository included."""
    if (path / ".git").exists():
        top = _query("-C", str(path), "rev-parse", "--show-toplevel")
        if top is None or Path(top).resolve() != path.resolve():
            return None
        out = _query("-C", str(path), "log", "-1", "--format=%H %cI", "HEAD")
    elif (path / "HEAD").is_file() and (path / "objects").is_dir():
        out = _query("--git-dir", str(path), "log", "-1", "--format=%H %cI", "HEAD")
    else:
        return None
    parts = (out or "").split()
    return (parts[0], parts[1]) if len(parts) == 2 else None


def _query(*args: str) -> str | None:
    import subprocess  # imported by the runs that ask git only (a cost of every start-up)

    try:
        proc = subprocess.run(
            ["git", *args], capture_output=True, encoding="utf-8", env=git_env(),
            timeout=QUERY_TIMEOUT, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


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
    when it is collected, or with the program. ``git``: the command up to the subcommand
    (``["git", "--git-dir", path]``)."""

    def __init__(
        self, git: list[str], env: dict[str, str], cwd: Path | None = None, *, timeout: float = 600
    ) -> None:
        import subprocess  # imported by the runs that ask git only (a cost of every start-up)
        import weakref

        self._proc: subprocess.Popen[bytes] | None = None
        self._timeout = timeout
        try:
            self._proc = subprocess.Popen(
                [*git, "cat-file", "--batch-command"], cwd=cwd, env=env,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                # its own process group, so that stopping it also stops what it started (a
                # lazy fetch), which would otherwise hold the pipe open and the read hung
                process_group=0,
            )  # fmt: skip
        except OSError:
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
        import threading

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
        import signal

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
