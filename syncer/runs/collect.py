"""One streamed pass over a run: its sweep logs, srt-slurm commit and worker fingerprints.

Which members are read: ``sweep_<job>.log`` (also ``.gz``) anywhere in the run, or the file
itself when the run is a single log; ``srt-slurm-sha.txt``; ``fingerprint_*.json``;
``srt-*submission.json`` (job id). Everything else is streamed past unread.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from syncer.errors import SyncError
from syncer.runs.artifacts import Limits, Skipped, open_run
from syncer.runs.logs import SweepLog, parse_sweep_log
from syncer.runs.streams import Readable
from syncer.wording import PATH_CHARS, count, js

_SWEEP = re.compile(r"^sweep_[\w.-]*\.log$")
_JOB_IN_NAME = re.compile(r"^sweep_(\d+)\.log$")
_MANIFEST = re.compile(r"^srt-[\w-]*submission\.json$")
_SHA = re.compile(r"^[0-9a-f]{7,40}$")
SMALL = 1 << 20  # metadata files are tiny; refuse to buffer more than this


@dataclass
class Fingerprint:
    source: str
    versions: dict[str, str]


@dataclass
class RunData:
    path: str
    sweeps: list[SweepLog] = field(default_factory=list)
    srt_slurm_shas: dict[str, str] = field(default_factory=dict)  # member -> sha
    fingerprints: list[Fingerprint] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)  # sweep logs that launched nothing

    def versions(self) -> dict[str, list[str]]:
        """package -> distinct versions reported by the worker fingerprints."""
        out: dict[str, list[str]] = {}
        for fp in self.fingerprints:
            for pkg, ver in fp.versions.items():
                seen = out.setdefault(pkg, [])
                if ver not in seen:
                    seen.append(ver)
        return out


def _read_small(stream: Readable, name: str, where: str) -> bytes:
    data = stream.read(SMALL + 1)
    if len(data) > SMALL:
        raise SyncError(
            f"{js(name, PATH_CHARS)} is larger than {SMALL} bytes; expected a small metadata file",
            path=where,
        )
    return data


_PACKAGES = ("sglang", "sglang-router", "sglang_router", "ai-dynamo", "dynamo", "torch")


def _json_object(data: bytes) -> dict[str, object] | None:
    """A metadata file's JSON object, or None when it is not one (these files are optional, so
    a broken one is passed over: bad UTF-8, bad JSON, nesting too deep to parse)."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def _fingerprint(data: bytes, name: str) -> Fingerprint | None:
    doc = _json_object(data)
    if doc is None:
        return None
    packages = doc.get("packages")
    pool = packages if isinstance(packages, dict) else doc
    versions = {}
    for pkg in _PACKAGES:
        value = pool.get(pkg)
        if isinstance(value, str | int | float):
            versions[pkg.replace("_", "-")] = str(value)
    return Fingerprint(name, versions)


def _manifest(data: bytes) -> tuple[str | None, str | None]:
    """(job id, variant name) of an srtctl submission manifest, when it states both."""
    doc = _json_object(data)
    if doc is None:
        return None, None
    job = next((doc[k] for k in ("job_id", "jobId", "job") if k in doc), None)
    name = next((doc[k] for k in ("job_name", "name", "config_name") if k in doc), None)
    if not isinstance(job, str | int) or not isinstance(name, str):
        return None, None
    return str(job), name


def read_run(path: str | Path, limits: Limits | None = None) -> RunData:
    """Read every sweep log and the run's metadata in one streamed pass."""
    run = open_run(path, limits)
    data = RunData(str(path))
    single = run.is_single_file
    # Errors name a log by where it is: the file itself, a file of the run directory, or a
    # member path beside the archive (``run.zip/logs/sweep_1.log``).
    base_dir = Path(path) if Path(path).is_dir() else Path(path).parent
    seen_jobs: dict[str, str] = {}
    manifests: dict[str, str] = {}  # job id -> variant name, from srtctl's submission manifests
    for member in run.members():
        base = PurePosixPath(member.name).name
        if single or _SWEEP.match(base):
            where = str(path) if single else str(base_dir / member.name)
            sweep = parse_sweep_log(member.open(), member.name, where)
            _add_sweep(data, sweep, base, member.name, seen_jobs)
        elif base == "srt-slurm-sha.txt":
            text = _read_small(member.open(), member.name, str(path)).decode("utf-8", "replace")
            data.srt_slurm_shas[member.name] = _srt_slurm_sha(text, member.name, str(path))
        elif _MANIFEST.match(base):
            job, name = _manifest(_read_small(member.open(), member.name, str(path)))
            if job and name:
                manifests[job] = name
        elif base.startswith("fingerprint_") and base.endswith(".json"):
            fp = _fingerprint(_read_small(member.open(), member.name, str(path)), member.name)
            if fp is not None:
                data.fingerprints.append(fp)
    for sweep in data.sweeps:
        if sweep.config_name is None and sweep.job_id in manifests:
            sweep.config_name = manifests[sweep.job_id]
    data.skipped = list(run.skipped)
    _check_found(data, str(path))
    return data


def _add_sweep(
    data: RunData, sweep: SweepLog, base: str, name: str, seen_jobs: dict[str, str]
) -> None:
    """A sweep log of the run kept, unless its job was seen already or it launched nothing."""
    named = _JOB_IN_NAME.match(base)
    if sweep.job_id is None and named:
        sweep.job_id = named.group(1)
    key = sweep.job_id or ""
    if key and key in seen_jobs:
        data.duplicates.append(f"{name} repeats job {key} of {seen_jobs[key]}")
        return
    if key:
        seen_jobs[key] = name
    if sweep.processes:
        data.sweeps.append(sweep)
    else:
        data.empty.append(name)


def _srt_slurm_sha(text: str, name: str, path: str) -> str:
    sha = text.strip()
    if not _SHA.match(sha):
        raise SyncError(
            f"{js(name, PATH_CHARS)} should hold an srt-slurm commit (hex), found {js(sha, 60)}",
            path=path,
        )
    return sha


def _check_found(data: RunData, path: str) -> None:
    """Refuses a run with no sweep log, or none that launched a worker."""
    if not data.sweeps and data.empty:
        n = len(data.empty)
        logs = "the sweep log" if n == 1 else f"the {count(n, 'sweep log')}"
        raise SyncError(
            f"no srt-slurm worker launch in {logs} (expected 'Starting <mode> worker "
            "<i> on <node>' followed by Env: and Command: lines)",
            path=path,
        )
    if not data.sweeps:
        raise SyncError(
            "no srt-slurm sweep log found (expected logs/sweep_<job>.log in the run, or a log "
            "file given directly)",
            path=path,
        )
