"""Writing files so that nothing partial is ever seen: the one atomic write of the project."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from syncer.errors import SyncError


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temp file in the same directory and a rename, so a
    reader (or a crash) never sees a partial module, page or report.

    A target that cannot be written (no permission, a directory in the way, a full disk) is bad
    input from the user's point of view: a ``SyncError`` naming the path, and no temp file left.
    """
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise SyncError(f"cannot write the file: {exc.strerror or exc}", path=str(path)) from None
    finally:
        if tmp is not None and Path(tmp).exists():
            Path(tmp).unlink(missing_ok=True)
