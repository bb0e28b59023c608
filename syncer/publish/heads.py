"""An InferenceX PR's head as data: fetched into the clone, read from git objects.

The workflow checks out the InferenceX default branch only (``--inferencex``, with
``--pull-heads``): every PR the bot handles, the event's or one the scheduled run reconciles,
from the repository or from a fork, is fetched as ``refs/pull/<n>/head`` into that clone and its
data files are written from git objects (``inferencex/commits.py``: nothing of the PR is
checked out, no filter or hook runs).

The srt-slurm submodule is checked out at the commit the PR's tree pins (its gitlink), from the
URL the *base* repository's ``.gitmodules`` names (the clone's checked-out default branch): a PR
that points ``.gitmodules`` elsewhere changes nothing that is fetched.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

from syncer.errors import SyncError
from syncer.inferencex import commits
from syncer.inferencex.srtconfigs import SUBMODULE

GIT_TIMEOUT = 600


def _git(cwd: Path, *args: str, check: bool = True) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    try:
        proc = subprocess.run(
            ["git", "-c", "core.hooksPath=/dev/null", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise SyncError(f"git {args[0]} took more than {GIT_TIMEOUT} s", path=str(cwd)) from None
    if check and proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        raise SyncError(
            f"git {args[0]} failed: {lines[-1] if lines else proc.returncode}", path=str(cwd)
        )
    return proc.stdout


@contextlib.contextmanager
def pull_tree(clone: Path, number: int, sha: str) -> Iterator[Path]:
    """PR ``number`` at commit ``sha`` (its head as the API gave it), as a private tree."""
    commits.fetch(clone, "origin", [f"refs/pull/{number}/head"])
    if not commits.has_commit(clone, sha):
        raise SyncError(
            f"PR #{number}: its head {sha[:12]} is not in refs/pull/{number}/head (pushed again "
            "since it was read); the next run takes the new head",
            path=str(clone),
        )
    with commits.tree_at(clone, sha) as tree:
        _srt_slurm(clone, tree, commits.gitlink(tree, SUBMODULE))
        yield tree


def base_submodule_url(clone: Path) -> str | None:
    """The URL the base repository's ``.gitmodules`` (the clone's checked-out default branch)
    gives the srt-slurm submodule, or None when it has none."""
    paths = _git(
        clone,
        "config",
        "--blob",
        "HEAD:.gitmodules",
        "--get-regexp",
        r"^submodule\..*\.path$",
        check=False,
    )
    for line in paths.splitlines():
        key, _, value = line.partition(" ")
        if value.strip() == SUBMODULE:
            name = key[len("submodule.") : -len(".path")]
            url = _git(
                clone,
                "config",
                "--blob",
                "HEAD:.gitmodules",
                "--get",
                f"submodule.{name}.url",
                check=False,
            ).strip()
            return url or None
    return None


def _srt_slurm(clone: Path, tree: Path, pin: str | None) -> None:
    url = base_submodule_url(clone) if pin is not None else None
    if pin is None or url is None:
        return
    sub = tree / SUBMODULE
    sub.mkdir(parents=True, exist_ok=True)
    _git(sub, "init", "--quiet")
    _git(sub, "fetch", "--quiet", "--depth", "1", url, pin)
    _git(sub, "checkout", "--quiet", "--detach", "FETCH_HEAD")
