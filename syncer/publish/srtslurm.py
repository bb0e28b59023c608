"""srt-slurm's files for a PR's tree: the PR's pin, the base repository's URL.

A tree the bot renders from (``inferencex/commits.py``: a PR head's or main's data files, from
git objects) records the commit it pins for the srt-slurm submodule (its gitlink). A recipe may
pass a file of srt-slurm's checkout by ``/configs`` path, and the cookbook ships that file, so
the bot needs srt-slurm's ``configs/`` at exactly that commit. Its objects are fetched into the
bot's InferenceX clone from the URL the *base* repository's ``.gitmodules`` names (InferenceX
``main``), never from the PR's own ``.gitmodules``: a PR that points the submodule elsewhere
changes nothing that is fetched, and a pin srt-slurm does not have is an error naming it.
Nothing is checked out; the files are written from git objects like the tree itself.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from syncer import gitrun
from syncer.errors import SyncError
from syncer.inferencex import commits
from syncer.inferencex.srtconfigs import SUBMODULE

GIT_TIMEOUT = 60


def base_submodule_url(clone: Path, base: str) -> str | None:
    """The URL ``base``'s ``.gitmodules`` gives the submodule at ``SUBMODULE``, or None (read
    once per clone and commit: every tree of an event asks it of the same ``main``)."""
    if not commits.SHA.fullmatch(base):
        return _submodule_url(clone, base)  # a name: what it names may move
    key = (str(clone), base)
    if key not in _URLS:
        if len(_URLS) >= 64:
            _URLS.clear()
        _URLS[key] = _submodule_url(clone, base)
    return _URLS[key]


# (clone, commit) -> the URL its .gitmodules gives srt-slurm (a commit's content never changes).
_URLS: dict[tuple[str, str], str | None] = {}


def _submodule_url(clone: Path, base: str) -> str | None:
    blob = f"{base}:.gitmodules"
    for line in _config(clone, blob, "--get-regexp", key=r"^submodule\..*\.path$").splitlines():
        key, _, value = line.partition(" ")
        if value.strip() == SUBMODULE:
            name = key[len("submodule.") : -len(".path")]
            url = _config(clone, blob, "--get", key=f"submodule.{name}.url").strip()
            if not url:
                return None
            # main's content, read by the job that holds the cookbook token: https only
            return gitrun.untrusted_url(url, f"{base[:12]}:.gitmodules submodule.{name}.url")
    return None


def add_srt_slurm(clone: Path, base: str, tree: Path, trees: commits.Trees) -> None:
    """Write srt-slurm's ``configs/`` at the commit ``tree`` pins into ``tree``'s submodule
    path (where ``srtconfigs.discover`` finds it); nothing when the tree pins no srt-slurm or
    the base names no URL for it."""
    pin = commits.gitlink(tree, SUBMODULE)
    url = base_submodule_url(clone, base) if pin is not None else None
    if pin is None or url is None:
        return
    if not commits.has_commit(clone, pin):
        commits.fetch(clone, url, [pin])
    if not commits.has_commit(clone, pin):
        raise SyncError(
            f"the srt-slurm pin {pin[:12]} of this tree is not in {url} (the URL InferenceX "
            f"main's .gitmodules gives {SUBMODULE}); its files cannot be read",
            path=str(clone),
        )
    source = trees.at(pin) / "configs"
    if source.is_dir():
        # Linked, not copied: the srt-slurm tree's files are already in the event's blob
        # store, so each InferenceX tree pinning it costs names, not its bytes again.
        shutil.copytree(
            source, tree / SUBMODULE / "configs", symlinks=True, dirs_exist_ok=True,
            copy_function=_link,
        )  # fmt: skip


def _link(source: str, target: str) -> None:
    """``target`` as another name of ``source`` (a tree's file, never written to); a copy
    where the filesystem has no hard links."""
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError:
        shutil.copy2(source, target, follow_symlinks=False)


def _config(clone: Path, blob: str, *args: str, key: str) -> str:
    """``git config --blob`` of the clone (bare or not): the value(s) of ``key`` (``args``
    say how it is matched)."""
    git_dir = clone / ".git" if (clone / ".git").is_dir() else clone
    done = gitrun.run(
        "config", f"--blob={blob}", *args, git_dir=git_dir, operands=[key], timeout=GIT_TIMEOUT,
        check=False, where=str(clone),
    )  # fmt: skip
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else ""
