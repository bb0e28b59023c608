"""InferenceX's git objects read as git reads them, without a git process: the merge base
(git's ``paint_down_to_common``), the paths two commits' trees differ in (``diff-tree -r
--name-only``), a tree listed as ``ls-tree -r`` lists it, a commit's committer date (``%cI``).
Objects come from a clone's :class:`syncer.gitcheckout.ObjectReader`; what such a reading
cannot answer (a missing object, an odd tree) raises :class:`NotPlain`, and the caller
(:mod:`syncer.inferencex.commits`) asks git itself.
"""

from __future__ import annotations

import datetime
import heapq
import re

from syncer.gitcheckout import ObjectReader

MODE_LINK = "120000"
MODE_GITLINK = "160000"


_ONE, _TWO, _STALE = 1, 2, 4
# commit id -> (committer time, parents, that time as git's %cI prints it): commits never
# change, and a reconcile walks main's newest history once per PR.
_COMMITS: dict[str, tuple[int, tuple[str, ...], str]] = {}


def merge_bases(reader: ObjectReader, a: str, b: str) -> list[str]:
    """The candidates git's ``paint_down_to_common`` finds for ``a`` and ``b`` (without a
    commit-graph: commits taken newest first by committer time, ties in the order queued):
    one is the merge base; several are for git to choose from."""
    if a == b:
        return [a]
    flags = {a: _ONE, b: _TWO}
    order = 0
    queue: list[tuple[int, int, str]] = []
    for oid in (a, b):
        heapq.heappush(queue, (-commit_info(reader, oid)[0], order, oid))
        order += 1
    result: list[str] = []
    while any(not flags[oid] & _STALE for _, _, oid in queue):
        _, _, oid = heapq.heappop(queue)
        paint = flags[oid] & (_ONE | _TWO | _STALE)
        if paint == _ONE | _TWO:
            if oid not in result:
                result.append(oid)
            paint |= _STALE
        for parent in commit_info(reader, oid)[1]:
            if flags.get(parent, 0) & paint == paint:
                continue
            flags[parent] = flags.get(parent, 0) | paint
            heapq.heappush(queue, (-commit_info(reader, parent)[0], order, parent))
            order += 1
    return result


def commit_info(reader: ObjectReader, oid: str) -> tuple[int, tuple[str, ...], str]:
    if oid not in _COMMITS:
        found = reader.contents([oid])[0]
        if found is None or found[0] != "commit":
            raise NotPlain(oid)
        parents: list[str] = []
        when: tuple[int, str] | None = None
        for line in found[2].split(b"\n"):
            if not line:
                break  # the message follows
            if line.startswith(b"parent "):
                parents.append(line[7:].decode("ascii"))
            elif line.startswith(b"committer "):
                when = committed(line)
        if when is None:
            raise NotPlain(oid)
        if len(_COMMITS) >= 200_000:
            _COMMITS.clear()
        _COMMITS[oid] = (when[0], tuple(parents), when[1])
    return _COMMITS[oid]


_ZONE = re.compile(rb"[+-][0-9]{4}")


def committed(line: bytes) -> tuple[int, str] | None:
    """A ``committer`` line's time: seconds, and ISO 8601 in its own zone (git's ``%cI``)."""
    *_, stamp, zone = line.rsplit(b" ", 2)
    if not stamp.isdigit() or not _ZONE.fullmatch(zone):
        return None
    minutes = int(zone[1:3]) * 60 + int(zone[3:5])
    offset = datetime.timedelta(minutes=-minutes if zone[:1] == b"-" else minutes)
    try:
        when = datetime.datetime.fromtimestamp(int(stamp), datetime.timezone(offset))
    except (OverflowError, OSError, ValueError):
        return None
    return int(stamp), when.isoformat()


def tree_diff(reader: ObjectReader, base: str, head: str) -> set[str]:
    """What ``diff-tree -r --name-only`` lists, from the reader: trees whose ids are equal are
    not read (a PR changes a few folders of a large tree), one round per depth."""
    ids = []
    for root in reader.contents([f"{base}^{{tree}}", f"{head}^{{tree}}"]):
        if root is None or root[0] != "tree":
            raise NotPlain(head)
        ids.append(root[1])
    width = len(ids[0]) // 2  # bytes of an object id (SHA-1 or SHA-256)
    out: set[str] = set()
    pairs = [(ids[0], ids[1], "")]  # (old tree, new tree, their path); "": no tree there
    while pairs:
        wanted = list(dict.fromkeys(oid for a, b, _ in pairs for oid in (a, b) if oid))
        entries: dict[str, dict[str, tuple[str, str]]] = {}
        for oid, found in zip(wanted, reader.contents(wanted), strict=True):
            if found is None or found[0] != "tree":
                raise NotPlain(oid)
            entries[oid] = {name: (mode, sub) for mode, name, sub in tree_entries(found[2], width)}
        nxt: list[tuple[str, str, str]] = []
        for a, b, prefix in pairs:
            old, new = entries.get(a, {}), entries.get(b, {})
            for name in old.keys() | new.keys():
                was, now = old.get(name), new.get(name)
                if was == now:
                    continue
                was_tree = was[1] if was is not None and was[0] == "040000" else ""
                now_tree = now[1] if now is not None and now[0] == "040000" else ""
                if was_tree or now_tree:
                    nxt.append((was_tree, now_tree, f"{prefix}{name}/"))  # compared next round
                if (was is not None and not was_tree) or (now is not None and not now_tree):
                    out.add(prefix + name)
        pairs = nxt
    return out


class NotPlain(Exception):
    """A tree the walk does not read as ``ls-tree`` would (missing, not a tree...)."""


def walk_trees(reader: ObjectReader, commit: str) -> list[tuple[str, str, str, str]]:
    root = reader.contents([f"{commit}^{{tree}}"])[0]
    if root is None or root[0] != "tree":
        raise NotPlain(commit)
    width = len(root[1]) // 2  # bytes of an object id (SHA-1 or SHA-256)
    trees = {root[1]: tree_entries(root[2], width)}
    wanted = [oid for mode, _, oid in trees[root[1]] if mode == "040000"]
    while wanted:
        wanted = [oid for oid in dict.fromkeys(wanted) if oid not in trees]
        for oid, found in zip(wanted, reader.contents(wanted), strict=True):
            if found is None or found[0] != "tree":
                raise NotPlain(oid)
            trees[oid] = tree_entries(found[2], width)
        wanted = [sub for oid in wanted for mode, _, sub in trees[oid] if mode == "040000"]
    out: list[tuple[str, str, str, str]] = []

    def walk(oid: str, prefix: str) -> None:
        for mode, name, sub in trees[oid]:
            if mode == "040000":
                walk(sub, f"{prefix}{name}/")
            else:
                out.append((mode, "commit" if mode == MODE_GITLINK else "blob", sub, prefix + name))

    walk(root[1], "")
    return out


def tree_entries(data: bytes, width: int) -> list[tuple[str, str, str]]:
    """(mode as ls-tree prints it, name, object) of a tree object's entries, in order."""
    entries = []
    pos = 0
    while pos < len(data):
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        oid = data[nul + 1 : nul + 1 + width]
        if len(oid) != width:
            raise NotPlain("short tree")
        name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
        entries.append((canon_mode(int(data[pos:space], 8)), name, oid.hex()))
        pos = nul + 1 + width
    return entries


def canon_mode(mode: int) -> str:
    """git's ``canon_mode``: what ``ls-tree`` prints for a tree entry's stored mode."""
    kind = mode & 0o170000
    if kind == 0o100000:
        return "100755" if mode & 0o100 else "100644"
    if kind == 0o120000:
        return MODE_LINK
    if kind == 0o040000:
        return "040000"
    return MODE_GITLINK
