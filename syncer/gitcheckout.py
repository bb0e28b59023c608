"""Which commit a directory has checked out, asked of git the one way every layer asks it.

``git_env`` is the environment every git the tool runs gets: the caller's ``GIT_*`` variables
dropped (a ``GIT_DIR`` of the shell must not make git answer for another repository), no
prompt, no pager, no user or system config (hooks, fsmonitor, aliases of the runner).
"""

from __future__ import annotations

import os
from pathlib import Path

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
            ["git", *args], capture_output=True, text=True, env=git_env(),
            timeout=QUERY_TIMEOUT, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None
