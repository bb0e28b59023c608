"""A clone of srt-slurm read for its history: a branch a runner cloned as it was at a date
(:func:`branch_ref`, :func:`newest_before`), the release tag a commit carries
(:func:`newest_tag`), and the bot's clone brought up to date (:func:`fetch_branches`). Every
git runs through :func:`syncer.inferencex.commits._git` (and so :mod:`syncer.gitrun`).
"""

from __future__ import annotations

from pathlib import Path

from syncer.inferencex import commits


def fetch_branches(clone: Path, remote: str) -> None:
    """Fetch every branch and release tag of ``remote`` into the clone, each branch as
    ``origin``'s (where :func:`branch_ref` looks for the upstream's): the bot's srt-slurm
    clone, whose branches are then read as they were at a date. A remote that cannot be
    fetched is an error naming it."""
    commits._git(
        clone, "fetch", "--quiet", "--prune", "--no-tags", remote=remote,
        operands=["+refs/heads/*:refs/remotes/origin/*", "+refs/tags/v*:refs/tags/v*"],
    )  # fmt: skip


def branch_ref(clone: Path, branch: str, url: str | None = None) -> str | None:
    """Where ``branch`` is in a clone of srt-slurm: for the upstream repository (``url``
    None) the local branch or ``origin``'s; for a fork, the branch of the remote whose URL is
    the fork's. None when the clone has no such branch."""
    if branch.startswith("-"):
        return None
    if url is None:
        candidates = [f"refs/heads/{branch}", f"refs/remotes/origin/{branch}"]
    else:
        candidates = [f"refs/remotes/{name}/{branch}" for name in _remotes_at(clone, url)]
    return next((ref for ref in candidates if commits.resolve(clone, ref) is not None), None)


def _remotes_at(clone: Path, url: str) -> list[str]:
    want = _plain_url(url)
    out = commits._git(clone, "config", "--get-regexp", r"^remote\..*\.url$", check=False)
    names = []
    for line in out.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        if _plain_url(value) == want:
            names.append(key.removeprefix("remote.").removesuffix(".url"))
    return names


def _plain_url(url: str) -> str:
    return url.strip().removesuffix("/").removesuffix(".git").lower()


def newest_before(clone: Path, ref: str, when: str) -> str | None:
    """The newest commit on ``ref``'s first-parent line committed at or before ``when`` (the
    branch as it was then), or None."""
    if ref.startswith("-"):
        return None
    out = commits._git(
        clone, "rev-list", "-1", "--first-parent", f"--before={when}", operands=[ref], check=False
    )
    sha = out.decode("ascii", "replace").strip()
    return sha if commits.SHA.fullmatch(sha) else None


def newest_tag(clone: Path, commit: str) -> str | None:
    """The newest release tag (``v<digits>...``) ``commit`` contains, or None."""
    out = commits._git(
        clone, "describe", "--tags", "--abbrev=0", "--match", "v[0-9]*", operands=[commit],
        check=False,
    )  # fmt: skip
    tag = out.decode("utf-8", "replace").strip()
    return tag or None
