"""Reading and writing files safely: the one atomic write of the project, the all-or-nothing
write of several files, and the size-capped read of every input the tool reads whole.

Both ends refuse what is not a regular file. A FIFO, a device or a directory given where the
tool reads a file would make it hang (a FIFO without a writer), read without end
(``/dev/zero``) or fail half-way; written to, it would be replaced by a regular file (run as
root, ``--out /dev/full`` replaced the device). A symlink is followed on both ends: what it
finally names must be a regular file (or, for a write, not exist yet), and a write replaces
that file, leaving the link in place.

That holds for a file the user names. A file the tool finds or places *inside a folder* (the
modules ``lint --all`` and ``audit`` scan, the module and page ``generate`` writes under
``--out`` and ``--pages``) is another matter: the folder is the user's word, what lies inside
it may come from a checkout anyone can push to. There no symlink is followed out of the
folder (:func:`inside_folder`, :func:`files_in`, ``write_all(..., folders=)``): a link that
stays inside is fine, one that leaves is refused before anything is read or written.
"""

from __future__ import annotations

import os
import stat
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
        # O_NONBLOCK: opening a FIFO without a writer would otherwise wait for one forever;
        # the fstat below refuses it (and devices, directories) before anything is read.
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _unreadable(p, what, exc) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise SyncError(f"cannot read {what}: {_kind(st.st_mode)}", path=str(p))
    except OSError as exc:
        os.close(fd)
        raise _unreadable(p, what, exc) from None
    with os.fdopen(fd, "rb") as handle:
        try:
            os.set_blocking(fd, True)
            if st.st_size > limit:
                raise _too_big(p, what, st.st_size, limit)
            data = handle.read(limit + 1)
        except OSError as exc:
            raise _unreadable(p, what, exc) from None
    if len(data) > limit:
        raise _too_big(p, what, None, limit)
    return data


def _unreadable(path: Path, what: str, exc: OSError) -> SyncError:
    return SyncError(f"cannot read {what}: {exc.strerror or exc}", path=str(path))


def _kind(mode: int) -> str:
    """What a file that is not a regular one is, for a message."""
    if stat.S_ISDIR(mode):
        return "a directory, not a regular file"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe), not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device, not a regular file"
    if stat.S_ISSOCK(mode):
        return "a socket, not a regular file"
    return "not a regular file"


def present(path: Path | str, what: str) -> bool:
    """Whether an optional input is there: False when nothing is at ``path``, True for a
    regular file (after symlinks), and a ``SyncError`` for anything else (a FIFO, a device, a
    directory, a symlink to nothing, a folder that cannot be searched), so what is not a
    regular file is refused like a required input, never taken for one that is absent."""
    p = Path(path)
    try:
        p.lstat()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise _unreadable(p, what, exc) from None
    try:
        st = p.stat()
    except FileNotFoundError:
        raise SyncError(f"cannot read {what}: a symlink to nothing", path=str(p)) from None
    except OSError as exc:
        raise _unreadable(p, what, exc) from None
    if not stat.S_ISREG(st.st_mode):
        raise SyncError(f"cannot read {what}: {_kind(st.st_mode)}", path=str(p))
    return True


def inside_folder(folder: Path | str, path: Path | str, what: str) -> Path:
    """The real place of ``path``, a file the tool reads or writes inside ``folder``, when it
    lies there and every symlink on the way from the folder to it (each component, folders
    and the file itself) stays inside the folder; a ``SyncError`` naming ``path`` otherwise.
    The file need not exist yet (a module written the first time)."""
    base, target = os.path.abspath(folder), os.path.abspath(path)
    if not _under(base, target):
        raise SyncError(f"{what}: outside {folder}, the folder it belongs in", path=str(path))
    real_base, real = os.path.realpath(base), os.path.realpath(target)
    if not _under(real_base, real):
        raise SyncError(
            f"{what}: a symlink, or under one, leading out of {folder}; not followed",
            path=str(path),
        )
    return Path(real)


def _under(base: str, target: str) -> bool:
    return target == base or target.startswith(base.rstrip(os.sep) + os.sep)


def files_in(folder: Path, suffixes: tuple[str, ...], what: str) -> list[Path]:
    """Every entry of ``folder`` (at any depth) named with one of ``suffixes``, folders in
    name order, each folder's files in name order.

    A symlink among them that leads out of ``folder`` is refused (``inside_folder``), never
    read; a symlinked folder is not walked into (``os.walk``'s own rule), so nothing outside
    is ever listed. A folder named like a file is listed too: its reader refuses it ("a
    directory, not a regular file") instead of the scan skipping it silently."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames.sort()
        base = Path(dirpath)
        for name in sorted(n for n in (*dirnames, *filenames) if n.endswith(suffixes)):
            path = base / name
            if path.is_symlink():
                inside_folder(folder, path, f"cannot read {what}")
            found.append(path)
    return found


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


def _stage(path: Path, text: str, staged: list[tuple[Path, str]] | None = None) -> str:
    """Write ``text`` to a temp file beside ``path`` (same directory, so the rename is atomic)
    with ``path``'s final mode; returns the temp file's name, also appended to ``staged`` as
    soon as the file exists (so a signal arriving later still finds it to remove)."""
    import tempfile  # here: most commands only read, and tempfile brings shutil and random

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        # os says "File exists" of a file met where a folder of the path should be
        raise SyncError(
            "cannot write the file: its folder is not a folder", path=str(path)
        ) from None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    if staged is not None:
        staged.append((path, tmp))
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
    A target that is not a regular file (a FIFO, a device, ``/proc/self/fd/1``) is refused
    before anything is written; a symlink to a regular file is written through (the file it
    names is replaced, the link stays).
    """
    write_all({path: text})


def write_all(files: dict[Path, str], *, folders: tuple[Path, ...] = ()) -> None:
    """Write every file or none: all texts are staged in temp files first (the step that
    fails on a full disk, a missing permission or a directory in the way), then renamed into
    place; a rename that still fails puts back the files already replaced.

    ``folders``: the files are placed inside these (``generate``'s ``--out`` and ``--pages``),
    each in the innermost folder that holds it, and no symlink is followed out of it
    (``inside_folder``): every target is checked before the first byte is written.
    """
    files = {_target(path, folders): text for path, text in files.items()}
    staged: list[tuple[Path, str]] = []
    # The old contents, kept only to undo the renames made before one failed.
    done: list[tuple[Path, bytes | None]] = []
    current: Path | None = None
    # BaseException: a SIGTERM (the CLI turns it into an exception) or a Ctrl-C half-way
    # through must leave no temp file and no half-written set behind either.
    try:
        for path, text in files.items():
            current = path
            _stage(path, text, staged)
        for path, tmp in staged:
            current = path
            old = path.read_bytes() if path.is_file() else None
            os.replace(tmp, path)
            done.append((path, old))
    except BaseException as exc:
        for path, old in reversed(done):
            if old is None:
                path.unlink(missing_ok=True)
            else:
                _restore(path, old)
        for _path, tmp in staged:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise SyncError(
                f"cannot write the file: {exc.strerror or exc}", path=str(current)
            ) from None
        raise


def _target(path: Path, folders: tuple[Path, ...] = ()) -> Path:
    """The file a write to ``path`` replaces: ``path``, or the regular file its symlinks name
    (inside its folder, when ``folders`` are given); anything else already there is refused."""
    path = Path(path)
    if folders:
        holders = [f for f in folders if _under(os.path.abspath(f), os.path.abspath(path))]
        folder = max(holders, key=lambda f: len(os.path.abspath(f)), default=folders[0])
        real = inside_folder(folder, path, "cannot write the file")
        if path.is_symlink() and not real.exists():
            raise SyncError("cannot write the file: a symlink to nothing", path=str(path))
        _check_writable_kind(real, path)
        return real
    if not path.is_symlink():
        _check_writable_kind(path, path)
        return path
    final = path.resolve()
    if not final.exists():
        raise SyncError("cannot write the file: a symlink to nothing", path=str(path))
    _check_writable_kind(final, path)
    return final


def _check_writable_kind(final: Path, given: Path) -> None:
    try:
        mode = final.stat().st_mode
    except OSError:
        return  # a new file (or a folder that cannot be read: staging says why)
    # A directory in the way keeps its own message ("cannot write the file: Is a directory").
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise SyncError(f"cannot write the file: {_kind(mode)}", path=str(given))


def _restore(path: Path, old: bytes) -> None:
    tmp = _stage(path, "")
    Path(tmp).write_bytes(old)
    os.replace(tmp, path)
