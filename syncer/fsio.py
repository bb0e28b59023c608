"""Writing files so that nothing partial is ever seen: the one atomic write of the project."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from syncer.errors import SyncError


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temp file in the same directory and a rename, so a
    reader (or a crash) never sees a partial module, page or report. An unwritable target (a
    path the user gave) is a SyncError naming it, not a traceback."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise SyncError(f"cannot write: {exc.strerror or exc}", path=str(path)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
