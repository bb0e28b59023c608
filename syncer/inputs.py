"""What a report read: every report says which ``sync.yaml``, InferenceX checkout, run,
cookbook module(s) and SGLang checkout it was made from, so "all agree" is never said about data
the user did not name.

A ``Read`` is one input, its path as reports show paths (relative to the working directory
when inside it), the commit of a checkout that is a git repository of its own, a run's id, and
whether it is the bundled example: the files of the source checkout this package runs from,
read only when the user runs the tool inside that checkout. The templates ``read.txt.j2`` and
``read.md.j2`` show the list; JSON reports carry it as ``"read"`` (``as_json``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from syncer.gitcheckout import checked_out

# The source checkout of an editable install (site-packages for an installed one, which holds
# no sync.yaml, so nothing there is ever the bundled example).
SOURCE_CHECKOUT = Path(__file__).resolve().parent.parent


class Input(StrEnum):
    """The kinds of input a report names; JSON spells these, the templates print ``label``."""

    SYNC_YAML = "sync.yaml"
    INFERENCEX = "inferencex"
    RUN = "run"
    MODULE = "cookbook-module"
    COOKBOOK = "cookbook"
    SGLANG = "sglang"

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Input.SYNC_YAML: "sync.yaml",
    Input.INFERENCEX: "InferenceX checkout",
    Input.RUN: "run",
    Input.MODULE: "cookbook module",
    Input.COOKBOOK: "cookbook modules",
    Input.SGLANG: "SGLang checkout",
}


@dataclass(frozen=True)
class Read:
    """One input a command read: its kind, path and, for a git checkout, its commit."""

    input: Input
    path: str
    commit: str | None = None
    id: str | None = None
    bundled: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "path": self.path,
            "commit": self.commit,
            "id": self.id,
            "bundled": self.bundled,
        }


def shown(path: str | Path) -> str:
    """A path as reports show it: relative to the working directory when inside it."""
    rel = os.path.relpath(os.path.abspath(path))
    return str(path) if rel.startswith("..") else Path(rel).as_posix()


def is_bundled(path: str | Path) -> bool:
    """Whether ``path`` is one of the bundled example's files (inside the source checkout)."""
    if not (SOURCE_CHECKOUT / "sync.yaml").is_file():
        return False
    return Path(path).resolve().is_relative_to(SOURCE_CHECKOUT)


def record(input: Input, path: str | Path, *, id: str | None = None) -> Read:
    """The record of ``path`` read as ``input``; a checkout's commit when it is a git
    repository of its own (a folder inside another repository has none: its files are not
    that repository's commit)."""
    commit = head_commit(Path(path)) if input in (Input.INFERENCEX, Input.SGLANG) else None
    return Read(input, shown(path), commit=commit, id=id, bundled=is_bundled(path))


def head_commit(path: Path) -> str | None:
    """The commit checked out in ``path`` when it is a git repository of its own, else None."""
    found = checked_out(path)
    return found[0] if found else None
