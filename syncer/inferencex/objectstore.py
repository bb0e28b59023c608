"""Which objects a clone holds, read from its object store's files without running git.

The bot's InferenceX clone is a partial clone (``--filter=blob:none``: commits and trees, no
blobs until they are read). Asked for an object it lacks, git fetches it from the promisor
remote on its own, one object at a time (a missing commit with its whole history), or, when
that fails, ends the long-lived reader. So the bot asks here first: a blob it is about to read
is fetched in one batch with the others it lacks, and a commit that is not there is "not in
the clone", as in a full clone.

Read: loose objects (``objects/xx/yyyy…``) and pack indexes (``objects/pack/*.idx``, version 2,
the only one git writes). A store this cannot read (alternates, an older index) answers None:
the caller asks git instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

_IDX_MAGIC = b"\xfftOc"
_FANOUT = 8 + 256 * 4  # magic, version, then 256 counts
# pack index path -> its object ids (a pack and its index never change once written).
_INDEXES: dict[str, frozenset[bytes]] = {}
_MAX_INDEXES = 512


def present(git_dir: Path, oids: Iterable[str]) -> set[str] | None:
    """The ``oids`` (hex) the store at ``git_dir`` holds, or None when it cannot tell."""
    wanted = list(oids)
    objects = git_dir / "objects"
    if (objects / "info" / "alternates").exists() or not wanted:
        return None if wanted else set()
    width = len(wanted[0]) // 2  # 20 bytes (SHA-1) or 32 (SHA-256)
    packs: list[frozenset[bytes]] = []
    for idx in sorted((objects / "pack").glob("*.idx")):
        names = _index(idx, width)
        if names is None:
            return None
        packs.append(names)
    out = set()
    for oid in wanted:
        try:
            raw = bytes.fromhex(oid)
        except ValueError:
            continue
        if any(raw in names for names in packs) or (objects / oid[:2] / oid[2:]).is_file():
            out.add(oid)
    return out


def _index(path: Path, width: int) -> frozenset[bytes] | None:
    key = str(path)
    if key not in _INDEXES:
        try:
            data = path.read_bytes()
        except OSError:
            return None  # removed by a repack meanwhile: ask git
        if data[:4] != _IDX_MAGIC or int.from_bytes(data[4:8], "big") != 2 or len(data) < _FANOUT:
            return None
        count = int.from_bytes(data[_FANOUT - 4 : _FANOUT], "big")
        # After the names: a CRC and an offset (4 bytes each) per object, the large offsets
        # (8 each), and two checksums of the names' width.
        extra = len(data) - (_FANOUT + count * (width + 8) + 2 * width)
        if extra < 0 or extra % 8:
            return None
        names = data[_FANOUT : _FANOUT + count * width]
        if len(_INDEXES) >= _MAX_INDEXES:
            _INDEXES.clear()
        _INDEXES[key] = frozenset(names[i : i + width] for i in range(0, len(names), width))
    return _INDEXES[key]
