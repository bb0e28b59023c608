"""A run's server-log artifacts, downloaded: the logs ``verify`` reads, for the bot's pin and
for ``sync verify KEY --run <run_id>``. InferenceX uploads them as ``server_logs_*`` (single
node) and ``multinode_server_logs_*``; the result artifacts hold no launch and are left."""

from __future__ import annotations

import shutil
from pathlib import Path

from syncer import costs, links
from syncer.errors import SyncError
from syncer.fsio import write_atomic
from syncer.github.client import GitHubClient
from syncer.github.records import Artifact

LOG_ARTIFACT_PREFIXES = ("server_logs_", "multinode_server_logs_")
COMPLETE = ".complete"  # written into a cached run's folder once every artifact is in


def log_artifacts(artifacts: list[Artifact]) -> list[Artifact]:
    """The unexpired server-log artifacts among a run's artifacts."""
    return [a for a in artifacts if a.name.startswith(LOG_ARTIFACT_PREFIXES) and not a.expired]


def download_logs(gh: GitHubClient, artifacts: list[Artifact], run_dir: Path) -> Path:
    """Each of ``artifacts`` (already chosen) streamed to ``run_dir/<name>.zip``."""
    for art in artifacts:
        target = run_dir / f"{safe_name(art.name)}.zip"
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
    done = _completion(logs)
    try:
        if (run_dir / COMPLETE).read_text("utf-8") == done:
            return run_dir, False
    except (OSError, UnicodeDecodeError):
        pass
    shutil.rmtree(run_dir, ignore_errors=True)  # an older attempt's, or a download cut short
    download_logs(gh, logs, run_dir)
    write_atomic(run_dir / COMPLETE, done)
    return run_dir, True


def _completion(logs: list[Artifact]) -> str:
    """What a folder's completion record holds: each artifact's id and name, a line each."""
    return "".join(f"{a.id} {a.name}\n" for a in logs)


def kept_logs(cache: Path, repo: str, run: str) -> Path | None:
    """The folder an earlier download of ``run``'s logs completed in ``cache``, or None."""
    run_dir = _cache_folder(cache, repo, run)
    return run_dir if (run_dir / COMPLETE).is_file() else None


def cached_run_logs(gh: GitHubClient, repo: str, run: str, cache: Path) -> tuple[Path, bool]:
    """The server logs of ``run`` (``<id>`` or ``<id>/attempts/<n>``: both name the run's
    artifacts) in ``cache``, downloaded unless an earlier call completed them; the folder and
    whether anything was downloaded. A download cut short leaves no complete folder."""
    kept = kept_logs(cache, repo, run)
    if kept is not None:
        return kept, False
    run_dir = _cache_folder(cache, repo, run)
    logs = log_artifacts(gh.actions.artifacts(repo, int(links.run_id(run))))
    if not logs:
        raise SyncError(
            f"run {run} of {repo} has no unexpired server-log artifact "
            f"({', '.join(p + '*' for p in LOG_ARTIFACT_PREFIXES)}) to verify against"
        )
    shutil.rmtree(run_dir, ignore_errors=True)  # what an interrupted download left
    download_logs(gh, logs, run_dir)
    write_atomic(run_dir / COMPLETE, _completion(logs))
    return run_dir, True


def _cache_folder(cache: Path, repo: str, run: str) -> Path:
    return cache / safe_name(repo) / links.run_id(run)


def safe_name(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name)[:200]
