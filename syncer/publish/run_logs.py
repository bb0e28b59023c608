"""A run's server-log artifacts, downloaded: the logs ``verify`` reads, for the bot's pin and
for ``sync verify KEY --run <run_id>``. InferenceX uploads them as ``server_logs_*`` (single
node) and ``multinode_server_logs_*``; the result artifacts hold no launch and are left.

A cache folder holds one folder per run (``<repository>/<run id>``), the artifacts' zips as
GitHub serves them (``verify`` reads the logs inside them, and a pin's evidence record names
each zip by its digest, so the archives are what is kept, not their unpacked logs), and a
completion record naming each artifact's id: a folder is reused only when its record names
exactly the artifacts the run has now (a re-run attempt adds new ones) and each of their zips
is there. The workflow keeps the bot's folder between jobs (``actions/cache``); what it holds
stays under ``MAX_KEPT_BYTES``: after each download the runs used least recently go first."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from syncer import costs, fsio, links
from syncer.errors import SyncError
from syncer.fsio import write_atomic
from syncer.github.client import GitHubClient
from syncer.github.records import Artifact

LOG_ARTIFACT_PREFIXES = ("server_logs_", "multinode_server_logs_")
COMPLETE = ".complete"  # written into a cached run's folder once every artifact is in
# A completion record names a few hundred artifacts at most (a line each).
MAX_RECORD_BYTES = 1 << 20
# The runs kept in a cache folder: GitHub caps a repository's cache entries (10 GB, shared
# with InferenceX's own workflows) and each download saves a new entry of the whole folder,
# so dozens of pinned runs (a run's server logs are a few MB), not every one.
MAX_KEPT_BYTES = 256 << 20


def log_artifacts(artifacts: list[Artifact]) -> list[Artifact]:
    """The unexpired server-log artifacts among a run's artifacts."""
    return [a for a in artifacts if a.name.startswith(LOG_ARTIFACT_PREFIXES) and not a.expired]


def download_logs(gh: GitHubClient, artifacts: list[Artifact], run_dir: Path) -> Path:
    """Each of ``artifacts`` (already chosen) streamed to ``run_dir/<name>.zip``."""
    for art in artifacts:
        target = run_dir / _zip_name(art.name)
        gh.actions.download(art, target)
        costs.artifact_downloaded(target.stat().st_size if target.is_file() else 0)
    return run_dir


def run_logs(
    gh: GitHubClient, repo: str, run: int, artifacts: list[Artifact], cache: Path
) -> tuple[Path, bool]:
    """The server logs among ``artifacts`` (run ``run``'s, as just listed) in ``cache``: the
    folder an earlier download of exactly these artifacts completed (a re-run attempt adds
    new ones, whose ids differ), else downloaded now; and whether anything was downloaded."""
    logs = log_artifacts(artifacts)
    run_dir = _cache_folder(cache, repo, str(run))
    if _record(run_dir) == _completion(logs) and _holds_exactly(run_dir, logs):
        _used(run_dir)
        return run_dir, False
    _download_into(gh, logs, run_dir, cache)
    return run_dir, True


def kept_logs(cache: Path, repo: str, run: str) -> Path | None:
    """The folder an earlier download of ``run``'s logs completed in ``cache``, or None."""
    run_dir = _cache_folder(cache, repo, run)
    return run_dir if _record(run_dir) is not None else None


def cached_run_logs(gh: GitHubClient, repo: str, run: str, cache: Path) -> tuple[Path, bool]:
    """The server logs of ``run`` (``<id>`` or ``<id>/attempts/<n>``: both name the run's
    artifacts) in ``cache``, downloaded unless an earlier call completed them; the folder and
    whether anything was downloaded. A download cut short leaves no complete folder."""
    kept = kept_logs(cache, repo, run)
    if kept is not None:
        _used(kept)
        return kept, False
    logs = log_artifacts(gh.actions.artifacts(repo, int(links.run_id(run))))
    if not logs:
        raise SyncError(
            f"run {run} of {repo} has no unexpired server-log artifact "
            f"({', '.join(p + '*' for p in LOG_ARTIFACT_PREFIXES)}) to verify against"
        )
    run_dir = _cache_folder(cache, repo, run)
    _download_into(gh, logs, run_dir, cache)
    return run_dir, True


def _download_into(gh: GitHubClient, logs: list[Artifact], run_dir: Path, cache: Path) -> None:
    """``logs`` downloaded into ``run_dir`` afresh, its completion record written last; then
    the other runs of ``cache`` pruned to its bound."""
    shutil.rmtree(run_dir, ignore_errors=True)  # an older attempt's, or a download cut short
    download_logs(gh, logs, run_dir)
    write_atomic(run_dir / COMPLETE, _completion(logs))
    prune(cache, keep=run_dir)


def _completion(logs: list[Artifact]) -> str:
    """What a folder's completion record holds: each artifact's id and name, a line each."""
    return "".join(f"{a.id} {a.name}\n" for a in logs)


def _record(run_dir: Path) -> str | None:
    """The completion record of ``run_dir``, or None when there is none (a download never
    finished, or never started). Read as every input is (``fsio``): bounded, and something
    that is not a regular file (a FIFO, a folder) is refused, not waited on."""
    path = run_dir / COMPLETE
    if not fsio.present(path, "a run's completion record"):
        return None
    data = fsio.read_capped(path, MAX_RECORD_BYTES, "a run's completion record")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None  # not a record this tool wrote: downloaded again


def _holds_exactly(run_dir: Path, logs: list[Artifact]) -> bool:
    """Whether ``run_dir`` holds the zip of each of ``logs`` as a regular file and nothing
    else but its record (a folder the workflow's cache restored may have lost a file; a link
    is not taken for one, and nothing extra may join the files a pin's evidence hashes)."""
    want = {_zip_name(a.name) for a in logs} | {COMPLETE}
    try:
        entries = list(os.scandir(run_dir))
    except OSError:
        return False
    names = {e.name for e in entries if e.is_file(follow_symlinks=False)}
    return names == want and len(entries) == len(want)


def _used(run_dir: Path) -> None:
    """Mark ``run_dir`` used now: :func:`prune` removes the runs used least recently first."""
    # A read-only cache is still read; it is only pruned in another order.
    with contextlib.suppress(OSError):
        os.utime(run_dir / COMPLETE)


def prune(cache: Path, *, keep: Path, limit: int = MAX_KEPT_BYTES) -> list[Path]:
    """The run folders of ``cache`` other than ``keep`` removed, those used least recently
    first, until what the cache holds is at most ``limit`` bytes; folders with no completion
    record (a download cut short) go first. What was removed."""
    folders = [p for repo in _subfolders(cache) for p in _subfolders(repo)]
    sizes = {p: costs.disk_usage(p) for p in folders}
    total = sum(sizes.values())
    removed = []
    for folder in sorted((p for p in folders if p != keep), key=_last_used):
        if total <= limit and _last_used(folder)[0]:
            break
        shutil.rmtree(folder, ignore_errors=True)
        total -= sizes[folder]
        removed.append(folder)
    return removed


def _subfolders(path: Path) -> list[Path]:
    try:
        return [p for p in path.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return []


def _last_used(run_dir: Path) -> tuple[bool, float]:
    """When ``run_dir`` was last used (its completion record's time); a folder without a
    record sorts first."""
    try:
        return True, (run_dir / COMPLETE).lstat().st_mtime
    except OSError:
        return False, 0.0


def _cache_folder(cache: Path, repo: str, run: str) -> Path:
    return cache / safe_name(repo) / links.run_id(run)


def _zip_name(name: str) -> str:
    return f"{safe_name(name)}.zip"


def safe_name(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name)[:200]
