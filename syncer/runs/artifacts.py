"""Open a run as it was downloaded: a directory, a ``.tar.gz``/``.tgz``/``.tar``/``.zip`` archive
(GitHub Actions artifacts are zips that may hold ``srt-single-node-logs.tar.gz``), nested
archives, or a single log file.

Everything here is untrusted (artifacts are produced by whoever opened the InferenceX PR), so
members are streamed one at a time and never extracted: nothing is written except a nested zip
spooled to a private temporary file (zip needs random access), and nothing is followed. Members
with absolute paths, ``..`` parts, links or device/FIFO entries are skipped and recorded. Limits
on the total decompressed size, the member count, the nesting depth and the compression ratio
stop archive bombs with a clear error while keeping memory flat.
"""

from __future__ import annotations

import os
import stat
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, BinaryIO, cast

from syncer import progress
from syncer.errors import SyncError
from syncer.runs import streams
from syncer.runs.streams import Readable
from syncer.wording import PATH_CHARS, js

if TYPE_CHECKING:
    import zipfile

GiB = 1 << 30
MiB = 1 << 20
CHUNK = streams.CHUNK


@dataclass(frozen=True)
class Limits:
    """Bounds for one run; every archive layer counts against the same budget."""

    max_total_bytes: int = 4 * GiB
    max_members: int = 100_000
    max_depth: int = 3
    # A ratio this high only comes from padding or a deliberate bomb; real logs compress ~5-30x.
    max_ratio: float = 250.0
    ratio_floor_bytes: int = 32 * MiB


@dataclass(frozen=True)
class Skipped:
    name: str
    reason: str


@dataclass
class Member:
    """One regular file of the run. ``open()`` is valid only until the iteration moves on."""

    name: str
    size: int | None
    open: Callable[[], Readable]


@dataclass
class _Budget:
    limits: Limits
    where: str
    total: int = 0
    members: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    # member name -> (its position, what identifies its content when the archive says it)
    seen: dict[str, tuple[int, object]] = field(default_factory=dict)

    def is_repeat(self, name: str, content: object = None) -> bool:
        """Whether ``name`` was already read (then skip it): a second member of the same name
        and the same declared content (a zip's CRC and size) is the same file; with other or
        unknown content (a tar stream) which of the two the run meant cannot be known, and
        reading whichever comes first would let the member order decide the verdict."""
        if name not in self.seen:
            self.seen[name] = (self.members, content)
            return False
        first, known = self.seen[name]
        if content is not None and content == known:
            return True
        raise SyncError(
            f"{js(name.rsplit('/', 1)[-1])} appears twice, members {first + 1} and "
            f"{self.members + 1} of the run ({js(name, PATH_CHARS)}), with different or unknown "
            "contents; refusing to pick one",
            path=self.where,
        )

    def count_member(self, name: str) -> None:
        self.members += 1
        if self.members > self.limits.max_members:
            raise SyncError(
                f"the run holds more than {self.limits.max_members} members "
                f"(refused at {js(name, PATH_CHARS)}; an archive bomb or the wrong file)",
                path=self.where,
            )

    def skip(self, name: str, reason: str) -> None:
        """Record a member that is not read; it counts against the member limit, so an archive
        of millions of links cannot grow this list without bound."""
        self.count_member(name)
        self.skipped.append(Skipped(name, reason))

    def add(self, n: int, name: str) -> None:
        self.total += n
        if self.total > self.limits.max_total_bytes:
            raise SyncError(
                f"the run decompresses to more than {_size(self.limits.max_total_bytes)} "
                f"(refused while reading {js(name, PATH_CHARS)}; "
                "an archive bomb or the wrong file)",
                path=self.where,
            )

    def check_ratio(self, name: str, out_bytes: int, in_bytes: int) -> None:
        if out_bytes < self.limits.ratio_floor_bytes:
            return
        if out_bytes > self.limits.max_ratio * max(in_bytes, 1):
            raise SyncError(
                f"{js(name, PATH_CHARS)} expands more than {self.limits.max_ratio:g}x "
                f"({_size(in_bytes)} compressed to over {_size(out_bytes)}): refused as an "
                "archive bomb",
                path=self.where,
            )


def _size(n: int) -> str:
    for unit, scale in (("GiB", GiB), ("MiB", MiB), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


class _CountingReader:
    """A read-only stream that counts bytes and, when ``budget`` is given, charges them."""

    def __init__(
        self,
        raw: Readable,
        budget: _Budget | None = None,
        name: str = "",
        compressed: _CountingReader | None = None,
    ) -> None:
        self.raw = raw
        self.budget = budget
        self.name = name
        self.compressed = compressed
        self.count = 0

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = CHUNK
        try:
            data = self.raw.read(n)
        except _read_errors() as exc:
            raise SyncError(
                f"{js(self.name, PATH_CHARS)} is corrupt or truncated: {exc}", path=self._where()
            ) from None
        self.count += len(data)
        if self.budget is not None and data:
            self.budget.add(len(data), self.name)
            if self.compressed is not None:
                self.budget.check_ratio(self.name, self.count, self.compressed.count)
        return data

    def readable(self) -> bool:
        return True

    def _where(self) -> str | None:
        return self.budget.where if self.budget else None


def _unsafe_name(name: str) -> str | None:
    """Why a member name may not be used, or None when it is a plain relative path."""
    if not name or "\x00" in name:
        return "empty or NUL in the name"
    norm = name.replace("\\", "/")
    if norm.startswith("/") or (len(norm) > 1 and norm[1] == ":"):
        return "absolute path"
    if ".." in PurePosixPath(norm).parts:
        return "'..' in the path"
    return None


def _archive_kind(name: str) -> str | None:
    lower = name.lower()
    if lower.endswith((".tar.gz", ".tgz")):
        return "tgz"
    if lower.endswith(".tar"):
        return "tar"
    if lower.endswith(".zip"):
        return "zip"
    if lower.endswith(".gz"):
        return "gz"
    return None


class Run:
    """A run opened for streaming. Iterate ``members()`` once per pass."""

    def __init__(self, path: Path, limits: Limits | None = None) -> None:
        self.path = path
        self.limits = limits or Limits()
        self.skipped: list[Skipped] = []
        if not path.exists() and not path.is_symlink():
            raise SyncError("no such run directory, archive or log file", path=str(path))
        if path.is_symlink() and not path.exists():
            raise SyncError("the run path is a dangling link", path=str(path))

    @property
    def is_single_file(self) -> bool:
        return self.path.is_file() and _archive_kind(self.path.name) not in ("tgz", "tar", "zip")

    def members(self) -> Iterator[Member]:
        budget = _Budget(self.limits, str(self.path))
        self.skipped = budget.skipped
        path = self.path
        if path.is_dir():
            yield from self._walk_dir(path, budget)
            return
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise SyncError("the run is not a directory or a regular file", path=str(path))
        kind = _archive_kind(path.name)
        budget.count_member(path.name)
        with _open(path) as raw, progress.reading(raw, path.name, st.st_size) as fh:
            if kind is None:
                yield Member(path.name, st.st_size, _opener(fh, budget, path.name))
            else:
                yield from self._archive(fh, kind, path.name, "", budget, depth=1, seekable=fh)

    # -- sources -------------------------------------------------------------------------

    def _walk_dir(self, root: Path, budget: _Budget) -> Iterator[Member]:
        # A folder that cannot be listed is refused, not skipped: skipping it silently made its
        # points "no log" drift.
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False, onerror=_unlistable):
            dirnames.sort()
            base = Path(dirpath)
            for d in list(dirnames):
                if (base / d).is_symlink():
                    rel = (base / d).relative_to(root).as_posix()
                    budget.skip(rel, "symbolic link (never followed)")
                    dirnames.remove(d)
            for fname in sorted(filenames):
                full = base / fname
                rel = full.relative_to(root).as_posix()
                st = full.lstat()
                if stat.S_ISLNK(st.st_mode):
                    budget.skip(rel, "symbolic link (never followed)")
                    continue
                if not stat.S_ISREG(st.st_mode):
                    budget.skip(rel, "device, FIFO or socket (never read)")
                    continue
                budget.count_member(rel)
                kind = _archive_kind(fname)
                with _open(full) as raw, progress.reading(raw, rel, st.st_size) as fh:
                    if kind is None:
                        yield Member(rel, st.st_size, _opener(fh, budget, rel))
                    else:
                        yield from self._archive(fh, kind, rel, "", budget, 1, seekable=fh)

    def _archive(
        self,
        fh: Readable,
        kind: str,
        name: str,
        prefix: str,
        budget: _Budget,
        depth: int,
        seekable: BinaryIO | None = None,
    ) -> Iterator[Member]:
        # ``seekable`` is ``fh`` itself when it is a file zipfile can seek in.
        if depth > self.limits.max_depth:
            raise SyncError(
                f"{js(prefix + name, PATH_CHARS)} nests archives deeper than "
                f"{self.limits.max_depth} levels "
                "(refused as an archive bomb)",
                path=budget.where,
            )
        label = prefix + name
        if kind == "zip":
            if seekable is not None:
                yield from self._zip(seekable, label, budget, depth)
            else:
                import tempfile

                with tempfile.TemporaryFile(prefix="sync-run-") as spool:
                    src = _CountingReader(fh, budget, label)
                    while chunk := src.read(CHUNK):
                        spool.write(chunk)
                    spool.seek(0)
                    yield from self._zip(spool, label, budget, depth)
            return
        if kind == "gz":
            yield Member(label[: -len(".gz")], None, _gz_opener(fh, budget, label))
            return
        yield from self._tar(fh, kind, label, budget, depth)

    def _tar(
        self, fh: Readable, kind: str, label: str, budget: _Budget, depth: int
    ) -> Iterator[Member]:
        import tarfile  # see _read_errors

        plain = (
            _gunzipped(fh, budget, label) if kind == "tgz" else _CountingReader(fh, budget, label)
        )
        try:
            # Random-access mode on a stream that seeks forwards only (``streams.Forward``);
            # typeshed asks a fileobj for write too, which reading never calls.
            stream = cast(IO[bytes], streams.Forward(plain))
            tar = tarfile.open(fileobj=stream, mode="r:")  # noqa: SIM115
        except tarfile.TarError as exc:
            raise SyncError(
                f"{js(label, PATH_CHARS)} is not a readable tar archive: {exc}", path=budget.where
            ) from None
        with tar:
            while True:
                try:
                    info = tar.next()
                except tarfile.TarError as exc:
                    raise SyncError(
                        f"{js(label, PATH_CHARS)} is corrupt or truncated: {exc}", path=budget.where
                    ) from None
                # Stream mode keeps every header it has seen; drop them so memory stays flat
                # (``members``, an instance attribute typeshed does not declare).
                vars(tar)["members"].clear()
                if info is None:
                    break
                name = f"{label}/{info.name}"
                if info.isdir():
                    continue
                reason = _unsafe_name(info.name)
                if reason is None and (info.issym() or info.islnk()):
                    reason = "link (never followed)"
                elif reason is None and not info.isreg():
                    reason = "device, FIFO or special entry (never read)"
                if reason:
                    budget.skip(name, reason)
                    continue
                if budget.is_repeat(name):
                    continue  # (never: a repeat in a tar stream is refused)
                budget.count_member(name)
                sub = _archive_kind(info.name)
                member_fh = tar.extractfile(info)
                if member_fh is None:
                    continue
                if sub is None:
                    yield Member(name, info.size, _opener(member_fh, None, name))
                else:
                    yield from self._archive(
                        member_fh, sub, info.name, label + "/", budget, depth + 1
                    )

    def _zip(self, fh: BinaryIO, label: str, budget: _Budget, depth: int) -> Iterator[Member]:
        import zipfile  # see _read_errors

        # The member count the end-of-central-directory record declares, refused before
        # zipfile builds one ZipInfo per entry (a million empty members cost 8 s and 600 MB).
        declared_members = _declared_members(fh)
        if declared_members is not None and (
            declared_members + budget.members > self.limits.max_members
        ):
            raise SyncError(
                f"{js(label, PATH_CHARS)} declares {declared_members} members, more than the "
                f"limit of {self.limits.max_members} (refused as an archive bomb)",
                path=budget.where,
            )
        try:
            zf = zipfile.ZipFile(fh)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise SyncError(
                f"{js(label, PATH_CHARS)} is not a readable zip archive: {exc}", path=budget.where
            ) from None
        with zf:
            infos = zf.infolist()
            self._zip_within_limits(infos, label, budget)
            for info in infos:
                name = f"{label}/{info.filename}"
                if info.is_dir():
                    continue
                reason = _zip_entry_refused(info)
                if reason:
                    budget.skip(name, reason)
                    continue
                self._zip_ratio_checked(info, name, budget)
                if budget.is_repeat(name, (info.CRC, info.file_size)):
                    budget.skip(name, "the same name and content as an earlier member")
                    continue
                budget.count_member(name)
                sub = _archive_kind(info.filename)
                try:
                    raw = zf.open(info)
                except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError) as exc:
                    raise SyncError(
                        f"{js(name, PATH_CHARS)} cannot be read: {exc}", path=budget.where
                    ) from None
                # zipfile never returns more than the declared size (and checks the CRC), so
                # the header checks above bound what reading can cost.
                with raw:
                    if sub is None:
                        yield Member(name, info.file_size, _opener(raw, budget, name))
                    else:
                        counted = _CountingReader(raw, budget, name)
                        yield from self._archive(
                            counted, sub, info.filename, label + "/", budget, depth + 1
                        )

    def _zip_within_limits(self, infos: list[zipfile.ZipInfo], label: str, budget: _Budget) -> None:
        """A zip's directory against the limits: its members and its declared content."""
        if len(infos) + budget.members > self.limits.max_members:
            raise SyncError(
                f"{js(label, PATH_CHARS)} lists {len(infos)} members, more than the limit of "
                f"{self.limits.max_members} (refused as an archive bomb)",
                path=budget.where,
            )
        declared = sum(i.file_size for i in infos)
        if budget.total + declared > self.limits.max_total_bytes:
            raise SyncError(
                f"{js(label, PATH_CHARS)} declares {_size(declared)} of content, "
                "more than the limit of "
                f"{_size(self.limits.max_total_bytes)} (refused as an archive bomb)",
                path=budget.where,
            )

    def _zip_ratio_checked(self, info: zipfile.ZipInfo, name: str, budget: _Budget) -> None:
        """A member that would expand past the compression ratio allowed is refused."""
        if (
            info.file_size >= self.limits.ratio_floor_bytes
            and info.file_size > self.limits.max_ratio * max(info.compress_size, 1)
        ):
            raise SyncError(
                f"{js(name, PATH_CHARS)} expands more than {self.limits.max_ratio:g}x "
                f"({_size(info.compress_size)} compressed to {_size(info.file_size)}): "
                "refused as an archive bomb",
                path=budget.where,
            )


def _zip_entry_refused(info: zipfile.ZipInfo) -> str | None:
    """Why a zip entry is never read (an unsafe name, a link, a device), or None."""
    mode = info.external_attr >> 16
    reason = _unsafe_name(info.filename)
    if reason is None and stat.S_ISLNK(mode):
        reason = "link (never followed)"
    elif reason is None and mode and stat.S_IFMT(mode) and not stat.S_ISREG(mode):
        reason = "device, FIFO or special entry (never read)"
    return reason


def _read_errors() -> tuple[type[BaseException], ...]:
    """What reading a member can raise: a file's errors, and the formats' of the archives read
    (tarfile and zipfile are imported by the runs that have an archive only, a cost of every
    start-up otherwise; a format not imported raised nothing)."""
    errors: list[type[BaseException]] = [OSError, EOFError, zlib.error]
    for module, name in (("zipfile", "BadZipFile"), ("tarfile", "TarError")):
        if module in sys.modules:
            errors.append(getattr(sys.modules[module], name))
    return tuple(errors)


def _opener(fh: Readable, budget: _Budget | None, name: str) -> Callable[[], Readable]:
    def open_member() -> Readable:
        return _CountingReader(fh, budget, name)

    return open_member


def _gunzipped(fh: Readable, budget: _Budget, name: str) -> _CountingReader:
    """``fh`` decompressed, the output charged to ``budget`` and its ratio to the input checked."""
    compressed = _CountingReader(fh, None, name)
    inner = streams.Gunzip(compressed)
    return _CountingReader(inner, budget, name, compressed=compressed)


def _gz_opener(fh: Readable, budget: _Budget, name: str) -> Callable[[], Readable]:
    return lambda: _gunzipped(fh, budget, name)


def open_run(path: str | os.PathLike[str], limits: Limits | None = None) -> Run:
    """Open ``path`` (directory, archive or single log) for streaming."""
    return Run(Path(path), limits)


def _unlistable(exc: OSError) -> None:
    raise SyncError(
        f"cannot read the run folder: {exc.strerror or exc}", path=str(exc.filename)
    ) from None


def _open(path: Path) -> BinaryIO:
    try:
        return path.open("rb")
    except OSError as exc:
        raise SyncError(
            f"cannot read the run file: {exc.strerror or exc}", path=str(path)
        ) from None


_EOCD = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_EOCD = b"PK\x06\x06"


def _declared_members(fh: BinaryIO) -> int | None:
    """The total entry count a zip's end-of-central-directory record declares (its zip64
    record's when the classic field is saturated), or None when it cannot be found (zipfile
    then says why the archive is unreadable)."""
    try:
        end = fh.seek(0, os.SEEK_END)
        start = max(0, end - (22 + 0xFFFF))  # the record, then at most a 64 KiB comment
        fh.seek(start)
        tail = fh.read(end - start)
        fh.seek(0)
    except (OSError, ValueError):
        return None
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) < at + 22:
        return None
    total = int.from_bytes(tail[at + 10 : at + 12], "little")
    if total != 0xFFFF:
        return total
    loc = at - 20
    if loc < 0 or tail[loc : loc + 4] != _ZIP64_LOCATOR:
        return total
    offset = int.from_bytes(tail[loc + 8 : loc + 16], "little")
    try:
        fh.seek(offset)
        record = fh.read(56)
        fh.seek(0)
    except (OSError, ValueError, OverflowError):
        return None
    if record[:4] != _ZIP64_EOCD or len(record) < 40:
        return None
    return int.from_bytes(record[32:40], "little")
