"""Where `sync audit` reads each pin's InferenceX tree: a ``TreeSource``.

``GitTrees`` (a clone: each pinned commit written from git objects through
:mod:`syncer.inferencex.commits`, fetched with ``--fetch``), ``FolderTree`` (one plain
checkout for every pin) and ``SnapshotTrees`` (trees named by the leading hex of their commit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from syncer.errors import SyncError
from syncer.inferencex import commits
from syncer.untrusted import Prose


class TreeSource(Protocol):
    """An InferenceX tree per commit: ``at(sha)`` gives the folder the renderer reads for a
    pin (or None and why not); ``main()`` the default branch's tree, if there is one."""

    label: str
    note: str | None

    def at(self, sha: str | None) -> tuple[Path | None, str | None]: ...

    def main(self) -> Path | None: ...

    def on_main(self, sha: str | None) -> bool | None:
        """Whether the default branch contains commit ``sha`` (None: cannot tell)."""
        ...

    def date(self, sha: str | None) -> str | None:
        """The committer date of commit ``sha`` (None: the tree's own checkout date, if any,
        is what the renderer reads)."""
        ...


@dataclass
class FolderTree:
    """A plain InferenceX checkout: the one tree every pin is read from (it cannot show a
    pin at its own commit; the report says so)."""

    path: Path
    label: str = ""
    note: str | None = None

    def __post_init__(self) -> None:
        self.label = self.label or str(self.path)
        self.note = Prose(
            "{label} is a folder, not a git clone: every pin was read from this one tree, "
            "not at its own commit",
            label=self.label,
        )

    def at(self, sha: str | None) -> tuple[Path | None, str | None]:
        return self.path, None

    def main(self) -> Path | None:
        return self.path

    def on_main(self, sha: str | None) -> bool | None:
        return None

    def date(self, sha: str | None) -> str | None:
        return None


@dataclass
class SnapshotTrees:
    """A folder of InferenceX trees named by the leading hex of their commit
    (``<dir>/0f45d5f4/``), as copies of files at several commits are kept. There is no
    default-branch tree."""

    path: Path
    label: str = ""
    note: str | None = None
    _names: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.label = self.label or str(self.path)
        if not self.path.is_dir():
            raise SyncError("no such folder of InferenceX trees", path=str(self.path))
        self._names = sorted(
            d.name
            for d in self.path.iterdir()
            if d.is_dir() and len(d.name) >= 7 and all(c in "0123456789abcdef" for c in d.name)
        )
        if not self._names:
            raise SyncError(
                "no tree folders named by a commit (7 to 40 hex digits) here", path=str(self.path)
            )

    def at(self, sha: str | None) -> tuple[Path | None, str | None]:
        if not sha:
            return None, "the cell names no InferenceX commit"
        for name in self._names:
            if sha.startswith(name) or name.startswith(sha):
                return self.path / name, None
        return None, f"no tree of commit {sha[:12]} in {self.label}"

    def main(self) -> Path | None:
        return None

    def on_main(self, sha: str | None) -> bool | None:
        return None

    def date(self, sha: str | None) -> str | None:
        return None


@dataclass
class GitTrees:
    """An InferenceX git clone: each pin's tree read at its own commit from git objects
    (``inferencex.commits``; nothing checked out), the default branch at ``main_rev``. Call
    ``close()`` (or use it as a context manager) to remove the written trees."""

    clone: Path
    main_rev: str = "origin/main"
    remote: str | None = None  # fetch a pinned commit the clone lacks from here (by its id)
    label: str = ""
    note: str | None = None
    _trees: commits.Trees | None = None
    _main: str | None = None

    def __post_init__(self) -> None:
        self.label = self.label or str(self.clone)
        self._trees = commits.Trees(self.clone)
        for rev in (self.main_rev, "main", "HEAD"):
            self._main = commits.resolve(self.clone, rev)
            if self._main:
                break
        if self._main is None:
            self.note = Prose(
                "{label}: no default branch ({rev}) to check the master at",
                label=self.label,
                rev=self.main_rev,
            )
        elif commits.resolve(self.clone, self.main_rev) != self._main:
            self.note = Prose(
                "{label}: {rev} not found; the master is read at {commit}",
                label=self.label,
                rev=self.main_rev,
                commit=self._main[:12],
            )

    def at(self, sha: str | None) -> tuple[Path | None, str | None]:
        if not sha:
            return None, "the cell names no InferenceX commit"
        full = commits.resolve(self.clone, sha) if re.fullmatch(r"[0-9a-f]{7,40}", sha) else None
        if full is None and self.remote is not None and commits.SHA.fullmatch(sha):
            full = commits.fetch(self.clone, self.remote, [sha])[sha]
        if full is None:
            return None, f"commit {sha[:12]} is not in the InferenceX clone {self.label}"
        assert self._trees is not None
        return self._trees.at(full), None

    def main(self) -> Path | None:
        return self.at(self._main)[0] if self._main else None

    def on_main(self, sha: str | None) -> bool | None:
        if not sha or self._main is None:
            return None
        full = commits.resolve(self.clone, sha) if re.fullmatch(r"[0-9a-f]{7,40}", sha) else None
        if full is None:
            return False  # the clone lacks it, so its default branch does not have it
        return commits.merge_base(self.clone, full, self._main) == full

    def date(self, sha: str | None) -> str | None:
        full = (
            commits.resolve(self.clone, sha)
            if sha and re.fullmatch(r"[0-9a-f]{7,40}", sha)
            else None
        )
        return commits.commit_date(self.clone, full) if full else None

    def close(self) -> None:
        if self._trees is not None:
            self._trees.close()

    def __enter__(self) -> GitTrees:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
