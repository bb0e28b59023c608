"""InferenceX master configs: config keys, their search-space rows and the jobs they make.

Both repository layouts are read: the newest keeps everything under ``inferencex-e2e/``
(``inferencex-e2e/configs/*-master.yaml``), the old one at the root (``configs/``). Rows name
their recipe as ``srt-recipe: <file>[:<selector>]`` relative to ``srt-recipe-dir`` (newest),
as a repo-relative path (older), or through ``additional-settings:
["CONFIG_FILE=recipes/<path>:<selector>"]`` (oldest multi-node form).
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from syncer import checkout, identifiers
from syncer.errors import SyncError
from syncer.fsio import read_capped
from syncer.inferencex import yamlsafe
from syncer.inferencex.rows import (
    Job,
    SearchRow,
    names_a_recipe,
    parse_row,
    refuse_unknown_keys,
)
from syncer.locations import user_cache_dir
from syncer.wording import PATH_CHARS, closest, js

ENTRY_KEYS = {
    "image",
    "model",
    "model-prefix",
    "runner",
    "precision",
    "framework",
    "multinode",
    "disagg",
    "router",
    "srt-recipe-dir",
    "scenarios",
    "kv-p2p-transfer",
}
# `duration` is the agentic block's old run-length key (seconds); the job length is not part
# of a launch command, so it is accepted and ignored.
BLOCK_KEYS = {
    "dram-utilization",
    "duration",
    "isl",
    "osl",
    "search-space",
    "trace-source",
    "require-power",
}
AGENTIC = "agentic-coding"


class NotSGLang(SyncError):
    """The config key's framework runs no SGLang worker: nothing here renders it."""


class LaunchedByScript(SyncError):
    """No search-space row names an srt-slurm recipe: InferenceX launches the key from a bash
    script (the old single-node AgentX arms, the AMD multi-node disagg scripts)."""


class RecipeAbsent(SyncError):
    """A row names a recipe file the checkout does not hold (it lives only upstream, in the
    srt-slurm checkout the runner clones)."""


def is_sglang(framework: str) -> bool:
    """Whether a master ``framework`` runs SGLang workers: ``sglang``, ``dynamo-sglang``,
    ``sglang-disagg`` (the engine behind a ``dynamo-*`` framework decides)."""
    return "sglang" in framework.split("-")


@dataclass
class ConfigEntry:
    """One config key of a master config, checked: what rendering it needs."""

    key: str
    path: str  # master file the key lives in
    layout_root: Path  # <checkout>/inferencex-e2e or <checkout>
    image: str
    model: str
    model_prefix: str
    runner: str
    precision: str
    framework: str
    multinode: bool
    disagg: bool
    router: dict[str, object] | None
    kv_p2p_transfer: str | None
    srt_recipe_dir: str | None
    rows: list[SearchRow]
    dram_utilization: float | None = None
    checkout_root: Path | None = None  # every file read for this entry stays inside it

    @property
    def root_dir(self) -> Path:
        return self.checkout_root or self.layout_root

    @property
    def old_layout(self) -> bool:
        """The tree keeps configs at its root (before the move under ``inferencex-e2e/``): its
        runners rewrote recipes themselves (synthetic acceptance only on a row's
        ``SYNTHETIC_ACCEPTANCE=true``), where the newer launcher derives it for every point."""
        return self.layout_root.name != "inferencex-e2e"

    @property
    def hardware(self) -> str:
        """Hardware id as the cookbook names it (``gb300``): the key's GPU part by the naming
        convention ``<model>-<precision>-<gpu>-...``, else the runner's cluster label."""
        parts = self.key.split("-")
        if len(parts) >= 3 and parts[1] == self.precision:
            return parts[2]
        runner = self.runner.removeprefix("cluster:")
        return runner.split("-")[0]

    def jobs(self) -> list[Job]:
        out: list[Job] = []
        for row in self.rows:
            if self.multinode:
                out.append(Job(len(out), row, list(row.concs)))
            else:
                for conc in row.concs:
                    out.append(Job(len(out), row, [conc]))
        return out

    def recipe_path(self, row: SearchRow, *, eval_job: bool = False) -> Path:
        """Absolute path of the row's recipe in the checkout."""
        name = row.eval_recipe if eval_job else row.recipe
        if name is None:
            raise SyncError(
                f"{self.key}: row {row.index} has no "
                f"{'eval-srt-recipe' if eval_job else 'srt-recipe'}",
                path=self.path,
            )
        what = f"{self.key}: row {row.index} {'eval-srt-recipe' if eval_job else 'srt-recipe'}"
        check_entry_name(self, name, what)
        if self.srt_recipe_dir:
            check_entry_name(self, self.srt_recipe_dir, f"{self.key}: srt-recipe-dir")
        lane = "multi_node" if self.multinode else "single_node"
        recipes_root = self.layout_root / "benchmarks" / lane / "srt-slurm-recipes"
        candidates: list[Path] = []
        if row.config_file_style:
            candidates.append(
                self.layout_root / "benchmarks" / "multi_node" / "srt-slurm-recipes" / name
            )
        if self.srt_recipe_dir:
            candidates.append(recipes_root / self.srt_recipe_dir / name)
        candidates += [self.layout_root / name, self.layout_root.parent / name, recipes_root / name]
        candidates = [c for c in candidates if checkout.lexically_inside(self.root_dir, c)]
        for candidate in candidates:
            if candidate.is_file():
                return entry_file(self, candidate, what, row=True)
        raise RecipeAbsent(
            f"{self.key}: recipe {js(name, PATH_CHARS)} of row {row.index} is absent from the tree "
            f"(looked in {', '.join(str(c) for c in candidates[:2])})",
            path=self.path,
        )

    def shared_block_path(self) -> Path | None:
        lane = "agentic-multi.yaml" if self.multinode else "agentic-single.yaml"
        candidate = self.layout_root / "configs" / "srt-recipes" / lane
        if not candidate.is_file():
            return None
        return entry_file(self, candidate, f"{self.key}: shared recipe block")


@dataclass
class Master:
    """A checkout's master configs, parsed: every config key with its raw entry and file."""

    root: Path
    layout_root: Path
    files: list[Path]
    data: dict[str, tuple[dict[str, object], str]]  # key -> (raw entry, file)
    warnings: list[str] = field(default_factory=list)  # keys written twice in one file

    def keys(self) -> list[str]:
        return list(self.data)

    def check_sglang(self, key: str) -> None:
        """Refuse a key whose framework runs no SGLang worker. Callers check it before any
        other refusal: nothing of a vLLM, TRT-LLM or ATOM key is rendered, so its other
        problems (rows, scripts, recipes) are not this tool's to report."""
        if key not in self.data:
            return
        raw, path = self.data[key]
        framework = raw.get("framework")
        if isinstance(framework, str) and not is_sglang(framework):
            raise NotSGLang(
                f"{key}: framework {js(framework)} is not SGLang "
                "(only SGLang workers are rendered)",
                path=path,
                line=yamlsafe.key_line(path, [key, "framework"]),
            )

    def entry(self, key: str, *, script_launched: bool = False) -> ConfigEntry:
        if key not in self.data:
            close = closest(key, list(self.data))
            if not close:
                close = [k for k in self.data if k.split("-")[0] == key.split("-")[0]][:5]
            hint = f"; closest keys: {', '.join(close)}" if close else ""
            raise SyncError(
                f"unknown config key {js(key)}{hint}", path=", ".join(str(f) for f in self.files)
            )
        raw, path = self.data[key]
        self.check_sglang(key)
        entry = parse_entry(key, raw, path, self.layout_root, script_launched=script_launched)
        entry.checkout_root = self.root
        return entry


def find_layout(inferencex_dir: Path) -> Path:
    """The directory holding ``configs/`` and ``benchmarks/`` (newest layout first)."""
    for candidate in (inferencex_dir / "inferencex-e2e", inferencex_dir):
        if any((candidate / "configs").glob("*-master.yaml")):
            return candidate
    if any((inferencex_dir / ".github" / "configs").glob("*-master.yaml")):
        return inferencex_dir
    raise SyncError(
        "no master config found (expected inferencex-e2e/configs/*-master.yaml "
        "or configs/*-master.yaml)",
        path=str(inferencex_dir),
    )


# Parsed master configs by checkout and file contents: every config key rendered (generate,
# the bot, verify) reads the same master files, the slowest part of rendering one key.
_LOADED: dict[tuple[str, tuple[tuple[str, bytes], ...]], Master] = {}
_LOADED_MAX = 8
# The same, by the files' stat signatures, for files last changed well before they were read:
# re-reading and hashing a large master for every key rendered made the cost per key grow with
# the number of keys. A write changes a file's ctime (which no program can set), and one made
# after the read is at least this much later than a change this old; a file changed closer to
# its read (timestamps are coarse) is compared by content, as above.
_BY_STAT: dict[tuple[object, ...], Master] = {}
_SETTLED_NS = 2_000_000_000


def load_master(inferencex_dir: Path | str) -> Master:
    """The checkout's master configs, parsed once per content (a changed file is re-read).
    Callers only read the result."""
    root = Path(inferencex_dir)
    if not root.is_dir():
        raise SyncError("InferenceX checkout not found", path=str(root))
    layout = find_layout(root)
    files = sorted((layout / "configs").glob("*-master.yaml")) or sorted(
        (layout / ".github" / "configs").glob("*-master.yaml")
    )
    for f in files:
        checkout.contained(root, f, what="master config")
    settled = _settled_signature(root, files)
    if settled is not None and settled in _BY_STAT:
        return _BY_STAT[settled]
    try:
        if any(f.stat().st_size > yamlsafe.MAX_FILE_BYTES for f in files):
            raise OSError  # never read whole; yamlsafe.load refuses it with its size
        digests = tuple(
            (
                str(f),
                hashlib.sha256(read_capped(f, yamlsafe.MAX_FILE_BYTES, "master config")).digest(),
            )
            for f in files
        )
    except OSError:
        return read_master(root, layout, files)  # yamlsafe.load names the unreadable file
    key = (str(root), digests)
    if key not in _LOADED:
        if len(_LOADED) >= _LOADED_MAX:
            del _LOADED[next(iter(_LOADED))]
        _LOADED[key] = read_master(root, layout, files, [d for _, d in digests])
    if settled is not None:
        if len(_BY_STAT) >= _LOADED_MAX:
            del _BY_STAT[next(iter(_BY_STAT))]
        _BY_STAT[settled] = _LOADED[key]
    return _LOADED[key]


def _settled_signature(root: Path, files: list[Path]) -> tuple[object, ...] | None:
    """The stat signature of ``files`` when every one was last changed long enough ago to be
    trusted (see ``_BY_STAT``), taken before they are read; else None."""
    now = time.time_ns()
    out: list[object] = [str(root)]
    for f in files:
        try:
            st = f.stat()
        except OSError:
            return None
        if now - max(st.st_ctime_ns, st.st_mtime_ns) < _SETTLED_NS:
            return None
        out.append((str(f), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(out)


def read_master(
    root: Path, layout: Path, files: list[Path], digests: list[bytes] | None = None
) -> Master:
    """Parse the master ``files`` (:func:`load_master` is the entry point, which caches the
    result); with ``digests`` (each file's SHA-256), a file parsed before is not parsed again."""
    data: dict[str, tuple[dict[str, object], str]] = {}
    # A key written twice in one file: the last wins, as InferenceX reads its master configs
    # (yaml.safe_load, utils/matrix_logic/validation.py line 991 @843c6254); twice across
    # files is refused below, as InferenceX refuses it (lines 1002-1008).
    duplicates: list[str] = []
    for n, f in enumerate(files):
        doc = _parsed(f, digests[n] if digests is not None else None, duplicates)
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise SyncError("a master config must be a mapping of config keys", path=str(f))
        for key, value in doc.items():
            _check_identifiers(str(key), value, f)
            if key in data:
                raise SyncError(
                    f"config key {js(key)} defined in two master configs (also in {data[key][1]})",
                    path=str(f),
                    line=yamlsafe.key_line(f, [str(key)]),
                )
            if isinstance(value, dict):
                data[str(key)] = (value, str(f))
    if duplicates:
        import logging  # a cost of every start-up, paid by the reads with a warning only

        for warning in duplicates:
            logging.getLogger("syncer").warning("warning: %s", warning)
    return Master(root=root, layout_root=layout, files=files, data=data, warnings=duplicates)


# Parsed master files by content: the trees of several commits (the pins `sync audit` reads)
# often hold the same master file, and parsing it is most of reading a tree's masters. Only a
# file read without a duplicate-key warning is kept (the warning names the file it was in).
_DOCS: dict[bytes, object] = {}


def _parsed(f: Path, digest: bytes | None, duplicates: list[str]) -> object:
    if digest is None:
        return yamlsafe.load(f, duplicates=duplicates)
    if digest not in _DOCS:
        kept = _kept_file(digest)
        doc = _read_kept(kept) if kept is not None else None
        if doc is None:
            warned = len(duplicates)
            doc = yamlsafe.load(f, duplicates=duplicates)
            if len(duplicates) > warned:
                return doc
            if kept is not None:
                _keep(kept, doc)
        if len(_DOCS) >= _LOADED_MAX:
            del _DOCS[next(iter(_DOCS))]
        _DOCS[digest] = doc
    return _DOCS[digest]


# The same kept on disk, as Python keeps .pyc files and `templating` its compiled templates:
# a process reading a checkout read before loads each master in a tenth of its parse. An
# entry names the file's content and the loader that parsed it (its source, PyYAML's and
# Python's versions); one that cannot be read is parsed again; none is written under
# PYTHONDONTWRITEBYTECODE or where the disk refuses it.


@functools.cache
def _loader_version() -> str:
    made_by = Path(yamlsafe.__file__).read_bytes() + f"|{yaml.__version__}|{sys.version}".encode()
    return hashlib.sha256(made_by).hexdigest()[:16]


def _kept_file(digest: bytes) -> Path | None:
    try:
        return user_cache_dir() / "masters" / f"{digest.hex()}-{_loader_version()}.marshal"
    except RuntimeError:  # no home directory
        return None


# A kept entry is the parse of a file of at most yamlsafe.MAX_FILE_BYTES; its marshal bytes
# are a few times the YAML text at most. Read bounded, as every file the tool reads: a FIFO or
# a device put in the cache is refused, not waited on.
_KEPT_MAX_BYTES = 8 * yamlsafe.MAX_FILE_BYTES


def _read_kept(path: Path) -> dict[object, object] | None:
    try:
        doc = marshal.loads(read_capped(path, _KEPT_MAX_BYTES, "kept master parse"))
    except (SyncError, EOFError, ValueError, TypeError):  # absent, not a file, too big, damaged
        return None
    return doc if isinstance(doc, dict) else None


def _keep(path: Path, doc: object) -> None:
    if sys.dont_write_bytecode or not isinstance(doc, dict):
        return
    try:
        data = marshal.dumps(doc)
    except ValueError:  # a value marshal does not write (a YAML timestamp): parsed each time
        return
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial.write_bytes(data)
        os.replace(partial, path)  # a reader sees the whole entry or none
    except OSError:
        partial.unlink(missing_ok=True)


# The labels of an entry that reports, comments and commit messages name beside its key.
_LABELS = ("model-prefix", "precision", "runner")


def _check_identifiers(key: str, value: object, f: Path) -> None:
    """The key and its entry's labels hold the shapes of :mod:`syncer.identifiers`, before
    any of them is rendered, logged or committed (a PR writes them)."""

    def line(*dotted: str) -> Callable[[], int | None]:
        return lambda: yamlsafe.key_line(f, [key, *dotted])

    identifiers.check(key, identifiers.CONFIG_KEY, "config key", path=str(f), line=line())
    labels = {k: v for k, v in value.items() if k in _LABELS} if isinstance(value, dict) else {}
    for label, text in labels.items():
        if isinstance(text, str):
            identifiers.check(
                text, identifiers.LABEL, f"{key}: {label}", path=str(f), line=line(label)
            )


def agentic_rows(raw: dict[str, object]) -> list[Any]:
    """The search-space rows of a raw entry's agentic blocks, as written (not yet checked)."""
    scenarios = raw.get("scenarios")
    blocks = scenarios.get(AGENTIC) if isinstance(scenarios, dict) else None
    rows: list[object] = []
    for block in blocks if isinstance(blocks, list) else []:
        space = block.get("search-space") if isinstance(block, dict) else None
        rows.extend(space if isinstance(space, list) else [])
    return rows


def launched_by_script(raw: dict[str, object]) -> bool:
    """Whether InferenceX launches a raw entry from a bash script: it has rows and none names
    an srt-slurm recipe. The one rule: the master parser's refusal and
    :mod:`syncer.inferencex.scripts` (which script) both ask it."""
    rows = agentic_rows(raw)
    return bool(rows) and not any(names_a_recipe(row) for row in rows)


def parse_entry(
    key: str,
    raw: dict[str, Any],
    path: str,
    layout_root: Path,
    *,
    script_launched: bool = False,
) -> ConfigEntry:
    """One config key; ``script_launched``: rows name no recipe (see ``inferencex.scripts``)."""
    refuse_unknown_keys(raw, ENTRY_KEYS, key, path, lambda bad: yamlsafe.key_line(path, [key, bad]))
    for required in ("image", "model", "framework"):
        if not isinstance(raw.get(required), str):
            raise SyncError(
                f"{key}: {required} must be set", path=path, line=yamlsafe.key_line(path, [key])
            )
    blocks = _agentic_blocks(key, raw, path)
    multinode = bool(raw.get("multinode", False))
    if not script_launched and launched_by_script(raw):
        raise LaunchedByScript(
            f"{key}: launched by a bash script: no search-space row names an srt-slurm recipe "
            "(no srt-recipe or CONFIG_FILE=)",
            path=path,
            line=yamlsafe.key_line(path, [key]),
        )
    rows, dram = _rows(key, blocks, path, multinode, script_launched)
    router = raw.get("router")
    recipe_dir = raw.get("srt-recipe-dir")
    if recipe_dir is not None and not isinstance(recipe_dir, str):
        raise SyncError(f"{key}: srt-recipe-dir must be a path, got {js(recipe_dir)}", path=path)
    return ConfigEntry(
        key=key,
        path=path,
        layout_root=layout_root,
        image=raw["image"],
        model=raw["model"],
        model_prefix=str(raw.get("model-prefix", "")),
        runner=str(raw.get("runner", "")),
        precision=str(raw.get("precision", "")),
        framework=raw["framework"],
        multinode=multinode,
        disagg=bool(raw.get("disagg", False)),
        router=router if isinstance(router, dict) else None,
        kv_p2p_transfer=raw.get("kv-p2p-transfer"),
        srt_recipe_dir=recipe_dir,
        rows=rows,
        dram_utilization=dram,
    )


def _agentic_blocks(key: str, raw: dict[str, Any], path: str) -> list[Any]:
    """The blocks of the key's agentic scenario; a key without one is refused."""
    scenarios = raw.get("scenarios") or {}
    if not isinstance(scenarios, dict):
        raise SyncError(f"{key}: scenarios must be a mapping", path=path)
    blocks = scenarios.get(AGENTIC)
    if blocks is not None and not isinstance(blocks, list):
        raise SyncError(f"{key}: scenarios.{AGENTIC} must be a list of blocks", path=path)
    if not blocks:
        raise SyncError(
            f"{key}: no {AGENTIC} scenario (scenarios: {', '.join(scenarios) or 'none'})",
            path=path,
            line=yamlsafe.key_line(path, [key]),
        )
    return blocks


def _rows(
    key: str, blocks: list[Any], path: str, multinode: bool, script_launched: bool
) -> tuple[list[SearchRow], Any]:
    """The search-space rows of every block, numbered across blocks, and the last
    ``dram-utilization`` a block gives."""
    rows: list[SearchRow] = []
    dram = None
    for block_index, block in enumerate(blocks):
        if not isinstance(block, dict):
            raise SyncError(f"{key}: {AGENTIC} block must be a mapping", path=path)
        refuse_unknown_keys(block, BLOCK_KEYS, f"{key}: {AGENTIC} block", path)
        dram = block.get("dram-utilization", dram)
        search_space = block.get("search-space") or []
        if not isinstance(search_space, list):
            raise SyncError(f"{key}: search-space must be a list of rows", path=path)
        for row_index, row_raw in enumerate(search_space):
            at: list[str | int] = [
                key,
                "scenarios",
                AGENTIC,
                block_index,
                "search-space",
                row_index,
            ]
            locate = functools.partial(_row_line, path, at)
            rows.append(
                parse_row(key, len(rows), row_raw, path, multinode, script_launched, locate)
            )
    return rows, dram


def entry_file(entry: ConfigEntry, candidate: Path, what: str, *, row: bool = False) -> Path:
    """``candidate``, a file found for master entry ``entry``, when it lies inside the
    checkout; ``row``: the error names the master file and the entry's line (the row's
    recipe name led there)."""
    try:
        return checkout.contained(
            entry.root_dir, candidate, what=what, path=entry.path if row else None
        )
    except SyncError as exc:
        if row:
            exc.line = _entry_line(entry)
        raise


def check_entry_name(entry: ConfigEntry, name: str, what: str) -> None:
    """:func:`syncer.checkout.check_name` for a name master entry ``entry`` gives; the error
    names the master file and the entry's line."""
    try:
        checkout.check_name(name, what=what, path=entry.path)
    except SyncError as exc:
        exc.line = _entry_line(entry)
        raise


def _row_line(path: str, row: list[str | int], keys: list[str]) -> int | None:
    """The line of key ``keys`` of the search-space row at ``row`` (``[]``: the row's own)."""
    return yamlsafe.key_line(path, [*row, *keys])


def _entry_line(entry: ConfigEntry) -> int | None:
    # Looked up only for a message: finding a line reads the whole master file again, and these
    # checks run for every row and file of every key rendered.
    return yamlsafe.key_line(entry.path, [entry.key])
