"""What this process spent on git and the disk: counters for the bench and the tests (issue 40.7).

Counted where the cost is made, each in one place: every git process in :mod:`syncer.gitrun`
(the one runner of git), the objects a fetch brought into a clone (its object store's growth,
:func:`syncer.inferencex.commits.fetch`), and the temporary disk the InferenceX trees take
(:mod:`syncer.inferencex.commits`: written, held now, and the most held at once).

API: ``COSTS`` (the running counts), :func:`snapshot` (a copy), :func:`reset`, and
``since(before)`` (what was spent after a snapshot). Nothing reads them to decide anything.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Costs:
    git_processes: int = 0  # every git started (a command, or a long-lived cat-file)
    fetches: int = 0  # of them, ``git fetch`` runs
    bytes_fetched: int = 0  # the clone's object store grew by this much in fetches
    tree_files: int = 0  # files (and links) written into temporary trees
    tree_bytes_written: int = 0  # their bytes
    tree_bytes_held: int = 0  # bytes of temporary trees on disk now
    tree_bytes_peak: int = 0  # the most held at once
    artifact_downloads: int = 0  # run artifacts downloaded (zip files)
    artifact_bytes: int = 0  # their bytes

    def since(self, before: Costs) -> Costs:
        """What was spent after ``before`` (a peak is the peak seen after it, not a sum)."""
        out = Costs(**{
            f.name: getattr(self, f.name) - getattr(before, f.name)
            for f in dataclasses.fields(self)
        })  # fmt: skip
        out.tree_bytes_held = self.tree_bytes_held
        out.tree_bytes_peak = self.tree_bytes_peak
        return out


COSTS = Costs()


def snapshot() -> Costs:
    return dataclasses.replace(COSTS)


def reset() -> None:
    """All counters back to zero (a bench's or test's start)."""
    for f in dataclasses.fields(COSTS):
        setattr(COSTS, f.name, 0)


def git_started(args: tuple[str, ...] | list[str]) -> None:
    COSTS.git_processes += 1
    if args and args[0] == "fetch":
        COSTS.fetches += 1


def tree_written(nbytes: int) -> None:
    COSTS.tree_files += 1
    COSTS.tree_bytes_written += nbytes
    COSTS.tree_bytes_held += nbytes
    COSTS.tree_bytes_peak = max(COSTS.tree_bytes_peak, COSTS.tree_bytes_held)


def tree_freed(nbytes: int) -> None:
    COSTS.tree_bytes_held -= nbytes


def artifact_downloaded(nbytes: int) -> None:
    COSTS.artifact_downloads += 1
    COSTS.artifact_bytes += nbytes


def disk_usage(path: Path) -> int:
    """Bytes of the regular files under ``path`` (links not followed; 0 when it is gone)."""
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue  # removed meanwhile (a gc, a concurrent fetch's temporary pack)
            total += st.st_size
    return total
