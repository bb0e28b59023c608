"""An InferenceX PR's head as data: fetched into the clone, checked out in a scratch copy.

The workflow checks out the InferenceX default branch only (``--inferencex``, with
``--pull-heads``): every PR the bot handles, the event's or one the scheduled run reconciles,
from the repository or from a fork, is fetched as ``refs/pull/<n>/head`` into that clone and
written into a scratch directory that shares its objects. Nothing there is run: git runs with
no hooks and no system or user configuration (so no filter driver either), and the tool reads
the files through its contained-path rules.

The srt-slurm submodule is checked out at the commit the PR's tree pins (its gitlink), from the
URL the *base* repository's ``.gitmodules`` names: a PR that points ``.gitmodules`` elsewhere
changes nothing that is fetched.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from syncer.errors import SyncError
from syncer.inferencex.srtconfigs import SUBMODULE

# Where fetched PR heads are kept in the clone (outside refs/heads and refs/remotes).
PULL_REFS = "refs/infx-sync/pull"
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


def is_clone(path: Path) -> bool:
    return (path / ".git").exists()


def pull_tree(clone: Path, number: int, sha: str, dest: Path) -> Path:
    """PR ``number`` at commit ``sha`` (its head as the API gave it), written under ``dest``."""
    _git(
        clone,
        "fetch",
        "--quiet",
        "--no-tags",
        "origin",
        f"+refs/pull/{number}/head:{PULL_REFS}/{number}",
    )
    if not _git(clone, "cat-file", "-t", f"{sha}^{{commit}}", check=False).strip():
        raise SyncError(
            f"PR #{number}: its head {sha[:12]} is not in refs/pull/{number}/head (pushed again "
            "since it was read); the next run takes the new head",
            path=str(clone),
        )
    dest.mkdir(parents=True, exist_ok=True)
    tree = dest / f"pr-{number}"
    _git(dest, "clone", "--quiet", "--shared", "--no-checkout", str(clone.resolve()), tree.name)
    _git(tree, "checkout", "--quiet", "--detach", sha)
    _srt_slurm(clone, tree)
    return tree


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


def gitlink(tree: Path) -> str | None:
    """The srt-slurm commit ``tree``'s HEAD pins (its gitlink), or None."""
    fields = _git(tree, "ls-tree", "HEAD", "--", SUBMODULE).split()
    return fields[2] if len(fields) >= 3 and fields[1] == "commit" else None


def _srt_slurm(clone: Path, tree: Path) -> None:
    pin, url = gitlink(tree), base_submodule_url(clone)
    if pin is None or url is None:
        return
    sub = tree / SUBMODULE
    sub.mkdir(parents=True, exist_ok=True)
    _git(sub, "init", "--quiet")
    _git(sub, "fetch", "--quiet", "--depth", "1", url, pin)
    _git(sub, "checkout", "--quiet", "--detach", "FETCH_HEAD")
