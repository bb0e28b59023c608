"""The GitHub side of `sync audit` (``usecases.audit_github.AuditApi``): PR states, run
artifacts, the PR's current pin and the bot's evidence records, each asked once per audit."""

from __future__ import annotations

from typing import Any

from syncer import links
from syncer.errors import SyncError
from syncer.github.api import NotFound
from syncer.github.client import GitHubClient
from syncer.github.records import Comment
from syncer.publish import evidence, pins
from syncer.usecases.audit_github import MISSING, ArtifactFacts, PullFacts


class GitHubAudit:
    def __init__(self, gh: GitHubClient, repo: str) -> None:
        self.gh = gh
        self.repo = repo
        # Each PR's and run's answers are asked once, whatever number of cells share them.
        self._pulls: dict[str, PullFacts] = {}
        self._runs: dict[str, list[ArtifactFacts]] = {}
        self._comments: dict[str, list[Comment]] = {}

    def pull(self, pr: str) -> PullFacts:
        if pr not in self._pulls:
            try:
                pull = self.gh.pulls.get(self.repo, _number(pr, "PR"))
            except NotFound:
                self._pulls[pr] = PullFacts(MISSING, False, "")
            else:
                self._pulls[pr] = PullFacts(pull.state, pull.merged, pull.merged_at)
        return self._pulls[pr]

    def artifacts(self, run: str) -> list[ArtifactFacts]:
        run_id = links.run_id(run)
        if run_id not in self._runs:
            try:
                found = self.gh.actions.artifacts(self.repo, _number(run_id, "run"))
            except NotFound:
                found = []  # the run itself is gone (deleted): so are its artifacts
            self._runs[run_id] = [ArtifactFacts(a.name, a.expired, a.expires_at) for a in found]
        return self._runs[run_id]

    def _comments_of(self, pr: str) -> list[Comment]:
        if pr not in self._comments:
            try:
                self._comments[pr] = self.gh.comments.on(self.repo, _number(pr, "PR"))
            except NotFound:
                self._comments[pr] = []
        return self._comments[pr]

    def pinned_run(self, pr: str) -> str | None:
        chosen = pins.pinning_comment(self._comments_of(pr))
        if chosen is None or chosen.command.run_id is None:
            return None
        return str(chosen.command.run_id)

    def evidence(self, pr: str, key: str) -> dict[str, Any] | None:
        return evidence.read_back(self._comments_of(pr), self.gh.login(), key)


def _number(text: str, what: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise SyncError(f"{what} {text!r} in a cell's provenance is not a number")
    return int(text)
