"""Paths read from an InferenceX checkout stay inside it.

On the bot's path the checkout is a pull request's head, possibly from a fork: whatever it names
(a recipe by an absolute path or through ``..``, a recipe file or folder that is a symlink to
``/etc`` or to the runner's home) would be read, rendered and published in the cookbook PR and
the status comment. Every file the tool reads from a checkout (master configs, recipes, shared
recipe blocks, golden acceptance files) goes through :func:`contained`: its real location, every
symlink on the way followed, must lie under the checkout's real root. Links that stay inside
are fine (the tool never follows one out).
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath

from syncer.errors import SyncError
from syncer.wording import PATH_CHARS, js

# The longest file-name component (bytes) the file systems the tool runs on take (Linux and
# macOS NAME_MAX); a longer one is no file of any checkout, and asking for it is an OS error.
NAME_MAX = 255


def check_name(name: str, *, what: str, path: str | None, line: int | None = None) -> None:
    """A file name a master config gives (``srt-recipe``, ``CONFIG_FILE=``, ``srt-recipe-dir``)
    is relative and never climbs with ``..``: InferenceX names its recipes by plain relative
    paths, and nothing else is looked up. It is a name a file system can hold: no NUL
    character, no part longer than ``NAME_MAX`` bytes."""
    posix, windows = PurePosixPath(name), PureWindowsPath(name)
    too_long = any(len(p.encode("utf-8", "surrogatepass")) > NAME_MAX for p in posix.parts)
    if "\0" in name or too_long:
        raise SyncError(
            f"{what} {js(name)} is not a file name (a NUL character, or a part longer than "
            f"{NAME_MAX} bytes)",
            path=path,
            line=line,
        )
    if posix.is_absolute() or windows.is_absolute() or windows.drive or name.startswith("~"):
        raise SyncError(
            f"{what} {js(name, PATH_CHARS)} is an absolute path; files are read from inside the "
            "InferenceX checkout only",
            path=path,
            line=line,
        )
    if ".." in posix.parts or ".." in windows.parts:
        raise SyncError(
            f"{what} {js(name, PATH_CHARS)} climbs out with '..'; files are read from inside the "
            "InferenceX checkout only",
            path=path,
            line=line,
        )


def relative(path: str | Path, root: Path) -> str:
    """``path`` as reports name a file of ``root`` (a checkout, a cookbook folder): relative
    to it, ``/``-separated, when it lies inside it; else as given. The file keeps its own name
    (a link inside the folder is named as the link, not as what it points to); only the
    folders above it are resolved, for a root reached through another path."""
    item = Path(path)
    for base, named in ((root, item), (root.resolve(), item.parent.resolve() / item.name)):
        try:
            return named.relative_to(base).as_posix()
        except ValueError:
            continue
    return item.as_posix()


def lexically_inside(root: Path, candidate: Path) -> bool:
    """Whether ``candidate`` names a place under ``root`` before any link is looked at (used to
    drop look-up locations such as the checkout's parent folder without touching them)."""
    base = os.path.normpath(os.path.abspath(root))
    target = os.path.normpath(os.path.abspath(candidate))
    return target == base or target.startswith(base.rstrip(os.sep) + os.sep)


def inside(root: Path, candidate: Path) -> bool:
    """Whether ``candidate`` (which exists) really lies under ``root``: every symlink on its path,
    folders included, followed."""
    try:
        real_root = root.resolve(strict=True)
        real = candidate.resolve(strict=True)
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop
        return False
    return real == real_root or real_root in real.parents


def contained(
    root: Path, candidate: Path, *, what: str, path: str | None = None, line: int | None = None
) -> Path:
    """``candidate`` when it really lies inside the checkout ``root``; a ``SyncError`` naming
    ``what`` (and the master row's file and line when given) otherwise."""
    if not lexically_inside(root, candidate):
        raise SyncError(
            f"{what}: {candidate} is outside the InferenceX checkout {root}; not read",
            path=path,
            line=line,
        )
    if not inside(root, candidate):
        shown = os.path.relpath(os.path.abspath(candidate), os.path.abspath(root))
        raise SyncError(
            f"{what}: {shown} is a symlink (or lies under one) pointing outside the InferenceX "
            "checkout; not followed",
            path=path if path is not None else str(candidate),
            line=line,
        )
    return candidate
