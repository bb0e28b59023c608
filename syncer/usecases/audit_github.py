"""What only GitHub can answer in `sync audit`: the ``Api`` protocol the command layer's client
implements (``publish/audit_api.py``), the facts it returns, and the checks made from them
(a PR that is missing, closed unmerged or merged long ago; a re-pin; artifacts gone or about to
expire).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Protocol

from syncer import links
from syncer.model import PointStatus
from syncer.untrusted import Prose
from syncer.usecases.audit_result import AuditFinding, CellRow, Check, NotChecked

# GitHub keeps a run's artifacts 90 days by default; under this many days left is a warning.
ARTIFACT_WARN_DAYS = 14


# An "in progress" cell whose PR merged more than this many days ago should have been synced.
STALE_MERGE_DAYS = 7


MISSING = "missing"  # a PullFacts state: the repository has no such PR


@dataclass(frozen=True)
class PullFacts:
    state: str  # open | closed | missing
    merged: bool
    merged_at: str  # ISO 8601, "" when not merged


@dataclass(frozen=True)
class ArtifactFacts:
    name: str
    expired: bool
    expires_at: str  # ISO 8601, "" when GitHub did not say


class Api(Protocol):
    """The questions only GitHub can answer, asked by the command layer's client."""

    def pull(self, pr: str) -> PullFacts: ...

    def artifacts(self, run: str) -> list[ArtifactFacts]: ...

    def pinned_run(self, pr: str) -> str | None:
        """The run of the PR's latest authorised ``/use`` comment, if any."""
        ...

    def evidence(self, pr: str, key: str) -> dict[str, object] | None:
        """The bot's evidence record of ``key``'s verification on the PR, if one was kept."""
        ...


API_CHECKS = (Check.PR, Check.ARTIFACTS, Check.PIN, Check.EVIDENCE)


# Our words, shown as written in markdown too (``Prose``: only values are escaped).
NO_API = Prose("needs the GitHub API: set GITHUB_TOKEN (offline by default)")


def _days(iso: str, today: _dt.date) -> int | None:
    try:
        when = _dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).date()
    except ValueError:
        return None
    return (when - today).days


def api_checks(cell: CellRow, api: Api, today: _dt.date) -> None:
    prov = cell.provenance
    pr, run = prov.get("pr"), prov.get("run")
    if pr:
        evidence = api.evidence(pr, cell.config_key)
        if evidence is not None:
            cell.evidence = evidence
        facts = api.pull(pr)
        if facts.state == MISSING:
            cell.findings.append(
                AuditFinding(Check.PR, f"InferenceX PR #{pr}, named by the cell, does not exist")
            )
        if facts.state == "closed" and not facts.merged:
            cell.findings.append(
                AuditFinding(
                    Check.PR,
                    f"InferenceX PR #{pr} was closed without merging; the cookbook still shows "
                    "its config",
                )
            )
        ago = _days(facts.merged_at, today) if facts.merged else None
        if ago is not None and -ago > STALE_MERGE_DAYS and cell.status == PointStatus.IN_PROGRESS:
            cell.findings.append(
                AuditFinding(
                    Check.PR,
                    f"still in progress, but InferenceX PR #{pr} merged {-ago} days ago "
                    f"({facts.merged_at[:10]})",
                )
            )
        latest = api.pinned_run(pr)
        if latest and run and links.run_id(latest) != links.run_id(run):
            cell.findings.append(
                AuditFinding(
                    Check.PIN,
                    f"InferenceX PR #{pr} was re-pinned to run {latest}; the cell still shows "
                    f"run {run}",
                )
            )
        elif latest and not run:
            cell.findings.append(
                AuditFinding(
                    Check.PIN,
                    f"InferenceX PR #{pr} pinned run {latest}; the cell still shows no run",
                )
            )
    if run:
        _artifact_check(cell, api.artifacts(run), run, today)


def _artifact_check(
    cell: CellRow, artifacts: list[ArtifactFacts], run: str, today: _dt.date
) -> None:
    kept = " (the bot's evidence record keeps what it compared)" if cell.evidence else ""
    live = [a for a in artifacts if not a.expired]
    if not live:
        if cell.evidence:
            cell.not_checked.append(
                NotChecked(Check.ARTIFACTS, f"run {run}'s artifacts are gone{kept}")
            )
            return
        cell.findings.append(
            AuditFinding(
                Check.ARTIFACTS, f"run {run}'s artifacts are gone: its logs cannot be verified"
            )
        )
        return
    left = [d for d in (_days(a.expires_at, today) for a in live) if d is not None]
    if left and min(left) < ARTIFACT_WARN_DAYS:
        cell.findings.append(
            AuditFinding(
                Check.ARTIFACTS,
                f"run {run}'s artifacts expire in {min(left)} days{kept}",
            )
        )
