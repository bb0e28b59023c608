"""Reading and writing files safely: the one atomic write of the project, the all-or-nothing
write of several files, and the size-capped read of every input the tool reads whole."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from syncer.errors import SyncError

MiB = 1024 * 1024


def read_capped(path: Path | str, limit: int, what: str) -> bytes:
    """The bytes of ``path``, refused with a ``SyncError`` when it holds more than ``limit``
    (``what`` names the file in messages: "the event", "data module").

    The size is checked before the read (``stat``) *and* during it (at most ``limit + 1`` bytes
    are read), so a file that grows, a FIFO or ``/dev/zero`` cannot make the tool read
    gigabytes: memory stays bounded by the cap whatever the input claims to be.
    """
    p = Path(path)
    try:
        with p.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                raise _too_big(p, what, size, limit)
            data = handle.read(limit + 1)
    except OSError as exc:
        raise SyncError(f"cannot read {what}: {exc.strerror or exc}", path=str(p)) from None
    if len(data) > limit:
        raise _too_big(p, what, None, limit)
    return data


def _too_big(path: Path, what: str, size: int | None, limit: int) -> SyncError:
    shown = f"{size} bytes" if size is not None else f"more than {limit} bytes"
    return SyncError(
        f"{what} is {shown}, over the {limit}-byte limit (not a file this tool reads)",
        path=str(path),
    )


def _umask() -> int:
    # os.umask can only be read by setting it; set it straight back.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_for(path: Path) -> int:
    """The mode a written file gets: an existing file keeps its own, a new one gets what
    ``open()`` would give it (0666 minus the umask), not mkstemp's private 0600."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _stage(path: Path, text: str) -> str:
    """Write ``text`` to a temp file beside ``path`` (same directory, so the rename is atomic)
    with ``path``'s final mode; returns the temp file's name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, _mode_for(path))
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temp file in the same directory and a rename, so a
    reader (or a crash) never sees a partial module, page or report.

    A target that cannot be written (no permission, a directory in the way, a full disk) is bad
    input from the user's point of view: a ``SyncError`` naming the path, and no temp file left.
    """
    write_all({path: text})


def write_all(files: dict[Path, str]) -> None:
    """Write every file or none: all texts are staged in temp files first (the step that
    fails on a full disk, a missing permission or a directory in the way), then renamed into
    place; a rename that still fails puts back the files already replaced.
    """
    staged: list[tuple[Path, str]] = []
    current: Path | None = None
    try:
        for path, text in files.items():
            current = path
            staged.append((path, _stage(path, text)))
    except OSError as exc:
        for _path, tmp in staged:
            Path(tmp).unlink(missing_ok=True)
        raise SyncError(
            f"cannot write the file: {exc.strerror or exc}", path=str(current)
        ) from None
    # The old contents, kept only to undo a rename that fails half-way through.
    done: list[tuple[Path, bytes | None]] = []
    try:
        for path, tmp in staged:
            current = path
            old = path.read_bytes() if path.is_file() else None
            os.replace(tmp, path)
            done.append((path, old))
    except OSError as exc:
        for path, old in reversed(done):
            if old is None:
                path.unlink(missing_ok=True)
            else:
                _restore(path, old)
        for _path, tmp in staged:
            Path(tmp).unlink(missing_ok=True)
        raise SyncError(
            f"cannot write the file: {exc.strerror or exc}", path=str(current)
        ) from None


def _restore(path: Path, old: bytes) -> None:
    tmp = _stage(path, "")
    Path(tmp).write_bytes(old)
    os.replace(tmp, path)
