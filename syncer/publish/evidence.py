"""The evidence record: what the bot compared when it verified a pinned run, kept in a folded
comment of the InferenceX PR (one per config, edited in place) so it stays reviewable after
GitHub expires the run's artifacts (90 days), and read back by `sync audit`.

A record holds, per point, the logged command and env after the InferenceX-only exclusions
(every key the log comparison matched, with the logged value), which log it came from, the run
and attempt, and the SHA-256 of each file of the downloaded run; the JSON sits in a fenced block
under a hidden marker naming the config, so ``read_back`` finds it without reading prose.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from syncer import fitting
from syncer.compare.results import VerifyResult
from syncer.compare.verdicts import Verdict
from syncer.github.client import GitHubClient
from syncer.github.records import Comment
from syncer.publish.run_logs import COMPLETE
from syncer.templating import render

SCHEMA = 1
_PREFIX = "<!-- infx-cookbook-sync:evidence "
_FENCE = "```json"
# A run directory holds a few MB of logs; hashing is bounded so no run can stall the bot.
MAX_HASHED_BYTES = 8 << 30


def marker(key: str) -> str:
    return f"{_PREFIX}{json.dumps(key)} -->"


def is_record(body: str) -> bool:
    """Whether a comment body is an evidence record (of any config)."""
    return body.startswith(_PREFIX)


def digests(run_dir: Path) -> dict[str, str]:
    """``relative path -> sha256`` of every file of the downloaded run (not the record of a
    completed download the bot's cache keeps beside them)."""
    out: dict[str, str] = {}
    if run_dir.is_file():
        return {run_dir.name: _sha256(run_dir)}
    budget = MAX_HASHED_BYTES
    files = (p for p in run_dir.rglob("*") if p.is_file() and not p.is_symlink())
    for path in sorted(p for p in files if p != run_dir / COMPLETE):
        budget -= path.stat().st_size
        if budget < 0:
            break
        out[path.relative_to(run_dir).as_posix()] = _sha256(path)
    return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def record(result: VerifyResult, *, run: str, pr: int, sha: str, run_dir: Path) -> dict[str, Any]:
    """The record of one verified config (``result``: its ``sync verify`` result)."""
    points = []
    for p in result.points:
        logs = []
        for lc in p.logs:
            matched = [
                {"block": e.block, "field": e.field, "key": e.key, "value": e.right}
                for e in lc.comparison.entries
                if e.status == Verdict.MATCH
            ]
            excluded = sorted(
                {f"{e.key} ({e.exclusion.name})" for e in lc.comparison.entries if e.exclusion}
            )
            logs.append(
                {"log": lc.source, "job": lc.job_id, "launched": matched, "excluded": excluded}
            )
        points.append({"point": p.index, "concs": p.concs, "verdict": p.verdict, "logs": logs})
    return {
        "schema": SCHEMA,
        "config": result.key,
        "pr": pr,
        "sha": sha,
        "run": run,
        "srtSlurm": result.srt_version,
        "artifacts": digests(run_dir),
        "points": points,
    }


def comment_body(rec: dict[str, Any]) -> str:
    text = render(
        "evidence_comment.md.j2",
        marker=marker(rec["config"]),
        rec=rec,
        data=json.dumps(rec, indent=1, ensure_ascii=False),
    )
    return fitting.within(text, f"the evidence record of {rec['config']}")


def keep(gh: GitHubClient, repo: str, pr: int, rec: dict[str, Any]) -> None:
    """Post the record, or edit the bot's earlier record of the same config in place."""
    body = comment_body(rec)
    mark = marker(rec["config"])
    mine = [c for c in gh.comments.on(repo, pr) if c.user == gh.login() and mark in c.body]
    if not mine:
        gh.comments.create(repo, pr, body, marker=mark)
    elif mine[0].body != body:
        gh.comments.edit(repo, mine[0].id, body)


def read_back(comments: list[Comment], login: str, key: str) -> dict[str, Any] | None:
    """The record of ``key`` in the bot's own comment (``login``), or None. A comment of
    anyone else is never read: the record is only what the bot itself compared."""
    mark = marker(key)
    for comment in comments:
        if comment.user != login or mark not in comment.body:
            continue
        _, _, rest = comment.body.partition(mark)
        _, _, block = rest.partition(_FENCE + "\n")
        data, _, _ = block.partition("\n```")
        try:
            rec = json.loads(data)
        except json.JSONDecodeError:
            return None
        if isinstance(rec, dict) and rec.get("config") == key and rec.get("schema") == SCHEMA:
            return rec
    return None
