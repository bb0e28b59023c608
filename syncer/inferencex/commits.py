"""InferenceX at a commit, read from git objects: nothing of a PR is ever checked out.

The bot keeps one InferenceX clone (bare or not; only its object store and refs are used).
PR heads and ``main`` are fetched into it as git objects (:func:`fetch`), and a commit's tree
is handed to the renderer as a private directory holding the data files only
(:func:`tree_at`): master configs, recipes, shared recipe blocks, golden acceptance files,
runner launch scripts (read as data, never run) and ``.gitmodules``, written from
``ls-tree`` / ``cat-file --batch``. The rules of :mod:`syncer.checkout` hold for what is
written: a path that is absolute, climbs with ``..`` or names ``.git`` is refused; a symbolic
link is written as the link it is, so every reader's ``checkout.contained`` refuses one that
points out of the tree, exactly as for a checkout; a submodule (gitlink) is recorded, not
fetched (:func:`gitlink`).

API (also for ``sync audit``): ``fetch(clone, remote, refs)``, ``has_remote``,
``resolve(clone, rev)``, ``merge_base(clone, a, b)``, ``changed_paths(clone, base, head)``,
``commit_date``, ``tree_at(clone, commit)``
(a context manager yielding the tree's root) and :class:`Trees` (each commit's tree written
once for an event, removed at the end).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from syncer import checkout, costs, gitrun
from syncer.errors import SyncError
from syncer.gitcheckout import ObjectReader, Unanswered, checked_out
from syncer.inferencex import gitobjects, objectstore
from syncer.wording import PATH_CHARS, js

SHA = re.compile(r"[0-9a-f]{40}")
# Where fetched refs are kept in the clone: never a branch a human works on.
REF_PREFIX = "refs/infx-sync/"
# The parts of a tree the renderer reads, under each layout root ("" old, "inferencex-e2e/").
LAYOUT_ROOTS = ("", "inferencex-e2e/")
DATA_DIRS = (
    "configs/",
    "runners/",
    ".github/configs/",
    "benchmarks/",
    "infx/golden_al_distribution/",
    "golden_al_distribution/",
)
DATA_FILES = (".gitmodules",)
# A data file of InferenceX is a few kB to a few MB; a bigger blob is not written (a reader
# then finds it absent, and says so), so no tree can fill the disk.
MAX_BLOB_BYTES = 16 * 1024 * 1024
GIT_TIMEOUT = 600

_MODE_BLOB = ("100644", "100755")
_MODE_LINK = gitobjects.MODE_LINK
_MODE_GITLINK = gitobjects.MODE_GITLINK
# tree root (resolved) -> {path: commit} of the submodules a written tree pins.
_GITLINKS: dict[str, dict[str, str]] = {}


def _git(
    clone: Path,
    *args: str,
    remote: str | None = None,
    operands: tuple[str, ...] | list[str] = (),
    input: bytes | None = None,
    check: bool = True,
) -> bytes:
    proc = gitrun.run(
        *args, git_dir=_git_dir(clone), remote=remote, operands=operands, input=input,
        timeout=GIT_TIMEOUT, check=check, where=str(clone),
    )  # fmt: skip
    return proc.stdout


def _git_dir(clone: Path) -> Path:
    dot = clone / ".git"
    return dot if dot.is_dir() else clone


# git dir -> its object reader, the most recently asked last. A run asks one or two clones
# (InferenceX's, srt-slurm's); a process that asks many (the test suite) keeps a few readers.
_READERS: dict[str, ObjectReader] = {}
_MAX_READERS = 4


def _reader(clone: Path) -> ObjectReader:
    """The clone's long-lived ``cat-file`` (:class:`~syncer.gitcheckout.ObjectReader`): a
    process per object read was most of the git processes an event started."""
    key = str(_git_dir(clone))
    reader = _READERS.pop(key, None)
    if reader is None or not reader.alive:
        reader = ObjectReader(git_dir=key, timeout=GIT_TIMEOUT)
    _READERS[key] = reader
    while len(_READERS) > _MAX_READERS:
        _READERS.pop(next(iter(_READERS))).close()
    return reader


def is_clone(path: Path) -> bool:
    """Whether ``path`` is a git repository of its own (its top level, or a bare one)."""
    if not path.is_dir():
        return False
    if (path / ".git").is_dir():
        return True
    return (path / "objects").is_dir() and (path / "HEAD").is_file()


def init_bare(path: Path) -> None:
    """A new bare repository at ``path`` (the bot's clone on its first run)."""
    gitrun.operand(str(path), "clone path")
    path.mkdir(parents=True, exist_ok=True)
    gitrun.run("init", "--quiet", "--bare", operands=[str(path)], timeout=GIT_TIMEOUT)


def has_remote(clone: Path, name: str) -> bool:
    """Whether the clone has a remote ``name`` (an ``actions/checkout`` clone has ``origin``)."""
    out = _git(clone, "config", "--get", operands=[f"remote.{name}.url"], check=False)
    return bool(out.strip())


def local_ref(ref: str) -> str:
    """Where :func:`fetch` keeps ``ref`` (``refs/pull/3859/head``, ``main``) in the clone."""
    name = ref.removeprefix("refs/")
    if not ref.startswith("refs/"):
        name = f"heads/{ref}"
    return REF_PREFIX + name


def fetch(
    clone: Path, remote: str, refs: list[str], *, partial: bool = False
) -> dict[str, str | None]:
    """Fetch ``refs`` (``main``, ``refs/pull/<n>/head``, a 40-hex commit) of ``remote`` into the
    clone, and answer each one's commit (None: the remote has no such ref). One fetch for them
    all; when it fails (a deleted PR head), each ref is fetched on its own, so one missing ref
    does not stop the others. A commit the clone has is not fetched again.

    ``partial``: the clone is the bot's partial clone of ``remote`` (:data:`PROMISOR`, commits
    and trees only, blobs fetched when read: :func:`_batch`). A remote that does not filter (a
    local path) sends every object instead, and nothing else changes."""
    gitrun.remote(remote)
    for ref in refs:
        gitrun.operand(ref, "ref")
    source = _promisor(clone, remote) if partial else remote
    names = list(dict.fromkeys(ref for ref in refs if not SHA.fullmatch(ref)))
    _fetch_all(clone, source, [f"+{ref}:{local_ref(ref)}" for ref in names], partial)
    # Commits by id after the refs: a PR's head is most often its ref's tip, just fetched.
    shas = list(dict.fromkeys(ref for ref in refs if SHA.fullmatch(ref)))
    _fetch_all(clone, source, [sha for sha in shas if not has_commit(clone, sha)], partial)
    out: dict[str, str | None] = {}
    for ref in refs:
        if SHA.fullmatch(ref):
            out[ref] = ref if has_commit(clone, ref) else None
        else:
            out[ref] = resolve(clone, local_ref(ref))
    return out


# The bot's InferenceX clone fetches from this remote (its URL set by :func:`fetch`): the
# promisor remote of a partial clone, from which the blobs a tree needs are fetched.
PROMISOR = "infx-sync"


def _fetch_all(clone: Path, source: str, specs: list[str], partial: bool) -> None:
    if specs and not _fetch(clone, source, specs, partial) and len(specs) > 1:
        for spec in specs:
            _fetch(clone, source, [spec], partial)


def _fetch(clone: Path, source: str, specs: list[str], partial: bool) -> bool:
    """One ``git fetch`` of ``specs``; whether it succeeded. The bytes it added to the clone's
    object store are counted (:mod:`syncer.costs`)."""
    objects = _git_dir(clone) / "objects"
    before = costs.disk_usage(objects)
    filters = ("--filter=blob:none",) if partial else ()
    proc = gitrun.run(
        "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", *filters, git_dir=_git_dir(clone),
        remote=source, operands=specs, timeout=GIT_TIMEOUT, check=False, where=str(clone),
    )  # fmt: skip
    costs.COSTS.bytes_fetched += max(0, costs.disk_usage(objects) - before)
    return proc.returncode == 0


def _promisor(clone: Path, url: str) -> str:
    """:data:`PROMISOR`, its URL set to ``url`` (one git process, only when it changes)."""
    if _config_value(clone, "remote", PROMISOR, "url") != url:
        _git(clone, "config", operands=[f"remote.{PROMISOR}.url", url])
    return PROMISOR


def _config_value(clone: Path, section: str, sub: str | None, key: str) -> str | None:
    """A value of the clone's own config file as the tool writes it (``git config``'s layout:
    ``[section "sub"]`` then ``\tkey = value``), read without a git process; None when absent
    or written otherwise (then the caller asks git, or sets it)."""
    try:
        text = (_git_dir(clone) / "config").read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    header = f'[{section} "{sub}"]' if sub is not None else f"[{section}]"
    current = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            current = stripped
            continue
        name, eq, value = stripped.partition("=")
        if current == header and eq and name.strip().lower() == key.lower():
            return value.strip()
    return None


def is_partial(clone: Path) -> bool:
    """Whether the clone is a partial clone (blobs fetched when read): a clone made with a
    filter, or one whose remote a filtered fetch made a promisor."""
    return (
        _config_value(clone, "extensions", None, "partialclone") is not None
        or (_config_value(clone, "remote", PROMISOR, "promisor") or "").lower() == "true"
    )


def origin_url(clone: Path) -> str | None:
    """The URL of the clone's ``origin`` remote, when it has one (a clone made from a local
    mirror fetches from it, never from GitHub)."""
    out = _git(clone, "config", "--get", "remote.origin.url", check=False)
    url = out.decode("utf-8", "replace").strip()
    return url or None


def resolve(clone: Path, rev: str) -> str | None:
    """The commit ``rev`` names in the clone, or None."""
    if rev.startswith("-"):
        return None
    try:
        found = _reader(clone).info([f"{rev}^{{commit}}"])[0]
        sha = found[1] if found is not None and found[0] == "commit" else ""
    except Unanswered:
        out = _git(
            clone, "rev-parse", "--verify", "--quiet", operands=[f"{rev}^{{commit}}"], check=False
        )
        sha = out.decode("ascii", "replace").strip()
    return sha if SHA.fullmatch(sha) else None


def commit_date(clone: Path, rev: str = "HEAD") -> str | None:
    """The committer date of ``rev`` (ISO 8601), or None."""
    sha = resolve(clone, rev)
    if sha is None:
        return None
    try:
        return gitobjects.commit_info(_reader(clone), sha)[2]
    except (Unanswered, gitobjects.NotPlain):
        pass  # git says what it makes of such a commit
    out = _git(clone, "log", "-1", "--format=%cI", operands=[sha], check=False).decode(
        "ascii", "replace"
    )
    return out.strip() or None


def checkout_date(path: Path) -> str | None:
    """The committer date of the commit checked out at ``path`` (the top of a work tree, a
    linked worktree whose ``.git`` is a file, or a bare clone), or None for a directory that is
    no checkout of its own."""
    found = checked_out(path)
    return found[1] if found else None


def has_commit(clone: Path, sha: str) -> bool:
    if not SHA.fullmatch(sha):
        return False
    if is_partial(clone) and objectstore.present(_git_dir(clone), [sha]) == set():
        return False  # asking git would fetch it (and its history) from the promisor remote
    return resolve(clone, sha) == sha


def merge_base(clone: Path, a: str, b: str) -> str | None:
    """The best common ancestor of two commits (what a PR's "Files changed" compares against):
    found by the clone's reader as ``git merge-base`` finds it; git itself is asked when there
    are several candidates (criss-cross merges: git chooses among them) or the reader cannot
    walk the commits."""
    if SHA.fullmatch(a) and SHA.fullmatch(b):
        try:
            found = gitobjects.merge_bases(_reader(clone), a, b)
        except (Unanswered, gitobjects.NotPlain):
            found = []
        if len(found) == 1:
            return found[0]
    raw = _git(clone, "merge-base", operands=[a, b], check=False)
    out = raw.decode("ascii", "replace").strip()
    return out if SHA.fullmatch(out) else None


def changed_paths(clone: Path, base: str | None, head: str) -> set[str]:
    """Every path whose blob, link or gitlink differs between two commits (``base`` None: every
    path of ``head``), submodule pins included."""
    if base is None:
        return {path for _mode, _kind, _sha, path in _ls_tree(clone, head)}
    try:
        return gitobjects.tree_diff(_reader(clone), base, head)
    except (Unanswered, gitobjects.NotPlain):
        pass  # git says what is wrong with such a tree
    raw = _git(clone, "diff-tree", "-r", "-z", "--no-renames", "--name-only", operands=[base, head])
    return {p for p in raw.decode("utf-8", "surrogateescape").split("\0") if p}


# The master configs alone (``tree_at(..., only=MASTERS)``): what comparing entries needs.
MASTERS = ("configs/", ".github/configs/")


def is_data_path(path: str, dirs: tuple[str, ...] = DATA_DIRS) -> bool:
    """Whether a tree path is one of the data files a tree is written with (``dirs``: under
    which folders of each layout root)."""
    for root in LAYOUT_ROOTS:
        if dirs is DATA_DIRS and path in (f"{root}{f}" for f in DATA_FILES):
            return True
        if any(path.startswith(f"{root}{d}") for d in dirs):
            return True
    return False


def _ls_tree(clone: Path, commit: str) -> list[tuple[str, str, str, str]]:
    """(mode, type, object, path) of every entry of ``commit``'s tree, recursively, as
    ``ls-tree -r`` lists them: read from the clone's reader, one round per tree depth."""
    try:
        return gitobjects.walk_trees(_reader(clone), commit)
    except (Unanswered, gitobjects.NotPlain):
        return _ls_tree_process(clone, commit)  # says what git says of such a tree


def _ls_tree_process(clone: Path, commit: str) -> list[tuple[str, str, str, str]]:
    raw = _git(clone, "ls-tree", "-r", "-z", "--full-tree", operands=[commit])
    out = []
    for record in raw.decode("utf-8", "surrogateescape").split("\0"):
        if not record:
            continue
        meta, _, path = record.partition("\t")
        mode, kind, sha = meta.split(" ")
        out.append((mode, kind, sha, path))
    return out


def _safe_parts(path: str, commit: str) -> tuple[str, ...]:
    """A tree path's parts under the written tree, held to checkout's rules (a path found
    plain once is not checked again: the trees of one event share most of their paths)."""
    if path in _PLAIN:
        return _PLAIN[path]
    where = f"InferenceX tree {commit[:12]}"
    checkout.check_name(path, what=f"{where}: path", path=None)
    parts = tuple(path.split("/"))
    if any(p in (".", "", ".git") for p in parts):
        raise SyncError(f"{where}: path {js(path, PATH_CHARS)} is not a plain relative path")
    if len(_PLAIN) >= 100_000:
        _PLAIN.clear()
    _PLAIN[path] = parts
    return parts


_PLAIN: dict[str, tuple[str, ...]] = {}


def _data_blobs(
    clone: Path, commit: str, dirs: tuple[str, ...]
) -> tuple[list[tuple[str, tuple[str, ...], str]], dict[str, str]]:
    """``commit``'s data files under ``dirs`` as (blob, path parts, mode), and its gitlinks."""
    blobs: list[tuple[str, tuple[str, ...], str]] = []
    gitlinks: dict[str, str] = {}
    for mode, _kind, sha, path in _ls_tree(clone, commit):
        if mode == _MODE_GITLINK:
            gitlinks[path] = sha
            continue
        if not is_data_path(path, dirs) or (mode not in _MODE_BLOB and mode != _MODE_LINK):
            continue
        blobs.append((sha, _safe_parts(path, commit), mode))
    return blobs, gitlinks


def _write_tree(
    clone: Path,
    commit: str,
    root: Path,
    dirs: tuple[str, ...] = DATA_DIRS,
    store: Path | None = None,
) -> tuple[dict[str, str], int]:
    """Write ``commit``'s data files under ``root``; answer its gitlinks {path: commit} and the
    bytes written. ``store``: a folder of blobs by id shared by the trees of one event (each
    blob read and written once, then linked into every tree that has it: the trees of
    InferenceX's open PRs differ from main's in a few files)."""
    blobs, gitlinks = _data_blobs(clone, commit, dirs)
    stored = {sha for sha, _, m in blobs if store is not None and m != _MODE_LINK}
    stored = {sha for sha in stored if os.path.isfile(os.path.join(store, sha))} if store else set()
    new = [sha for sha, _, _ in blobs if sha not in stored]
    sizes = _batch(clone, new, check_only=True)
    wanted = [(s, p, m) for s, p, m in blobs if s in stored or sizes.get(s, 0) <= MAX_BLOB_BYTES]
    contents = _batch(clone, sorted({s for s, _, _ in wanted if s not in stored}))
    written = 0
    base = os.fspath(root)
    made: set[str] = set()  # folders made under root (each tree's own: a private directory)
    links: set[str] = set()  # links written there
    for sha, parts, mode in wanted:
        # A folder on the way is ours (made here), never a link written earlier: a tree
        # cannot hold both a link and a folder at one path, and a crafted one is refused.
        above = ["/".join(parts[:depth]) for depth in range(1, len(parts))]
        if any(folder in links for folder in above):
            raise SyncError(
                f"InferenceX tree {commit[:12]}: {js('/'.join(parts), PATH_CHARS)} lies under a "
                "symbolic link; not written"
            )
        if above and above[-1] not in made:
            os.makedirs(os.path.join(base, *parts[:-1]), exist_ok=True)
            made.update(above)
        target = os.path.join(base, *parts)
        if mode == _MODE_LINK:
            # Written as the link it is: readers refuse one that leads out of the tree
            # (checkout.contained), as they do in a checkout.
            data = contents[sha] if sha in contents else (store or root).joinpath(sha).read_bytes()
            os.symlink(os.fsdecode(data), target)
            links.add("/".join(parts))
            continue
        if store is not None:
            kept = os.path.join(store, sha)
            if sha not in stored:
                _write_new(kept, contents[sha])  # freed with the store (Trees.close)
                stored.add(sha)
            try:
                os.link(kept, target)  # the file's name only: no bytes written
                continue
            except OSError:
                pass  # a filesystem without hard links: the file itself, as without a store
            with open(kept, "rb") as fh:
                written += _write_new(target, fh.read())
            continue
        written += _write_new(target, contents[sha])
    return gitlinks, written


def _write_new(target: str, data: bytes) -> int:
    """``data`` as the new file ``target`` (never through a link, never over a file)."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    costs.tree_written(len(data))
    return len(data)


def _batch(clone: Path, shas: list[str], *, check_only: bool = False) -> dict[str, Any]:
    """Object sizes (``check_only``) or contents of ``shas``, from the clone's reader."""
    if not shas:
        return {}
    unique = list(dict.fromkeys(shas))
    _fetch_missing(clone, unique)
    try:
        reader = _reader(clone)
        found: list[Any] = reader.info(unique) if check_only else reader.contents(unique)
    except Unanswered:
        found = _batch_process(clone, unique, check_only)
    out: dict[str, object] = {}
    for sha, answer in zip(unique, found, strict=True):
        if answer is None or answer[1] != sha:
            raise SyncError(f"git cat-file: no object {sha}", path=str(clone))
        out[sha] = answer[2]
    return out


def _fetch_missing(clone: Path, oids: list[str]) -> None:
    """The objects of ``oids`` a partial clone lacks, fetched in one go from its promisor
    remote (git would fetch each one on its own when read)."""
    if not is_partial(clone):
        return
    held = objectstore.present(_git_dir(clone), oids)
    missing = [oid for oid in oids if held is not None and oid not in held]
    if not missing:
        return
    objects = _git_dir(clone) / "objects"
    before = costs.disk_usage(objects)
    # As git's own fetch of a promisor's objects: no "have" lines, which would let the remote
    # leave out blobs of commits the clone has (the very blobs a partial clone lacks).
    noop = {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "fetch.negotiationAlgorithm",
        "GIT_CONFIG_VALUE_0": "noop",
    }
    gitrun.run(
        "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no",
        "--filter=blob:none", "--stdin", git_dir=_git_dir(clone), remote=PROMISOR,
        input=("\n".join(missing) + "\n").encode("ascii"), env=noop, timeout=GIT_TIMEOUT,
        check=False, where=str(clone),
    )  # fmt: skip
    costs.COSTS.bytes_fetched += max(0, costs.disk_usage(objects) - before)


def _batch_process(clone: Path, unique: list[str], check_only: bool) -> list[Any]:
    """As :func:`_batch`, in a ``cat-file --batch`` of its own (the reader cannot answer)."""
    mode = "--batch-check" if check_only else "--batch"
    raw = _git(clone, "cat-file", mode, input=("\n".join(unique) + "\n").encode("ascii"))
    found: list[Any] = []
    pos = 0
    for _sha in unique:
        end = raw.index(b"\n", pos)
        header = raw[pos:end].decode("ascii", "replace").split(" ")
        pos = end + 1
        if len(header) != 3:
            found.append(None)
            continue
        oid, kind, size = header[0], header[1], int(header[2])
        found.append((kind, oid, size if check_only else raw[pos : pos + size]))
        if not check_only:
            pos += size + 1  # the object, then a newline
    return found


@contextlib.contextmanager
def tree_at(
    clone: Path, commit: str, only: tuple[str, ...] = DATA_DIRS, store: Path | None = None
) -> Iterator[Path]:
    """The InferenceX data files of ``commit`` as a private directory (removed on exit), laid
    out as a checkout of that commit would have them; read it like a checkout (``load_master``,
    ``render_config``). ``commit`` must be in the clone (:func:`fetch` first). ``only``: the
    folders written (``MASTERS``: the master configs alone); ``store``: see :class:`Trees`."""
    if not has_commit(clone, commit):
        raise SyncError(
            f"commit {js(commit)} is not in the InferenceX clone (fetch it first)", path=str(clone)
        )
    scratch = Path(tempfile.mkdtemp(prefix=f"infx-tree-{commit[:12]}-"))
    root = scratch / "tree"
    root.mkdir()
    key = str(root.resolve())
    written = 0
    try:
        _GITLINKS[key], written = _write_tree(clone, commit, root, only, store)
        yield root
    finally:
        _GITLINKS.pop(key, None)
        shutil.rmtree(scratch, ignore_errors=True)
        costs.tree_freed(written)


def gitlink(tree: Path, path: str) -> str | None:
    """The commit a tree written by :func:`tree_at` pins for the submodule at ``path`` (None:
    not such a tree, or no submodule there)."""
    links = _GITLINKS.get(str(tree.resolve()))
    return links.get(path) if links is not None else None


class Trees:
    """Each commit's tree written once (for one event), all removed by :meth:`close`. Their
    files are hard links into one folder of blobs by id: a blob the trees share (most of an
    open PR's tree is main's) is read from git and written once."""

    def __init__(self, clone: Path) -> None:
        self.clone = clone
        self._stack = contextlib.ExitStack()
        self._trees: dict[tuple[str, tuple[str, ...]], Path] = {}
        self._store: Path | None = None

    def at(self, commit: str, only: tuple[str, ...] = DATA_DIRS) -> Path:
        if (commit, only) not in self._trees:
            tree = self._stack.enter_context(tree_at(self.clone, commit, only, self._blobs()))
            self._trees[commit, only] = tree
        return self._trees[commit, only]

    def _blobs(self) -> Path:
        if self._store is None:
            scratch = Path(tempfile.mkdtemp(prefix="infx-blobs-"))
            self._stack.callback(self._free, scratch)
            self._store = scratch
        return self._store

    @staticmethod
    def _free(scratch: Path) -> None:
        costs.tree_freed(costs.disk_usage(scratch))
        shutil.rmtree(scratch, ignore_errors=True)

    def close(self) -> None:
        self._stack.close()
        self._trees.clear()
        self._store = None

    def __enter__(self) -> Trees:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
