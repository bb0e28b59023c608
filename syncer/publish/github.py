"""The GitHub API as the bot uses it: one client, each concern in a collaborator of its own.

The client answers with the plain records of ``records`` (``Pull``, ``Comment``,
``WorkflowRun``, ``Artifact``...), never with lazy PyGithub objects. Its requests go through
one ``api.Api`` (retries and rate limits by ``ratelimit``; a POST sent again only after the
object was looked up); what each request means lives in ``pulls``, ``comments``, ``issues`` and
``actions``. Writes consult ``plan``: in a dry run they are described there and not sent. The
offline client of a dry run without a token (``offline.EventGitHub``) is this client with
reads answered from the event file.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from syncer import links
from syncer.publish.actions import MAX_ARTIFACT_BYTES, Actions
from syncer.publish.api import Api
from syncer.publish.comments import Comments
from syncer.publish.issues import Issues
from syncer.publish.pulls import Pulls
from syncer.publish.ratelimit import SECONDARY_WAIT
from syncer.publish.records import (
    Artifact,
    Comment,
    Issue,
    Pull,
    PullState,
    Reaction,
    WorkflowRun,
)
from syncer.publish.settings import Plan


class GitHubClient:
    """One authenticated connection; ``plan`` decides whether writes happen."""

    # True for publish.offline.EventGitHub, which answers from the event file without a token.
    offline = False

    def __init__(
        self,
        token: str,
        *,
        base_url: str = links.API_URL,
        plan: Plan | None = None,
        retries: int = 6,
        max_wait: float = 300.0,
        backoff: float = 1.0,
        pause: float | None = None,
        login: str | None = None,
        secondary_wait: float = SECONDARY_WAIT,
    ) -> None:
        api = Api(
            token,
            base_url=base_url,
            retries=retries,
            max_wait=max_wait,
            backoff=backoff,
            pause=pause,
            login=login,
            secondary_wait=secondary_wait,
        )
        self._connect(api, plan or Plan())

    def _connect(self, api: Api, plan: Plan) -> None:
        self.api, self.plan = api, plan
        # A dry run's comments and issues get ids GitHub never gives (negative), one series
        # per client.
        dry_ids = itertools.count(-1, -1)
        self._pulls = Pulls(api, plan, dry_ids)
        self._comments = Comments(api, plan, dry_ids)
        self._issues = Issues(api, plan, dry_ids)
        self._actions = Actions(api)

    def login(self) -> str:
        return self.api.login()

    # -- pull requests ----------------------------------------------------------------------

    def pull(self, repo: str, number: int) -> Pull:
        return self._pulls.get(repo, number)

    def pull_commits(self, repo: str, number: int) -> list[str]:
        return self._pulls.commits(repo, number)

    def open_pulls(self, repo: str) -> list[Pull]:
        return self._pulls.open(repo)

    def find_pulls(self, repo: str, head: str, *, state: str = "all") -> list[Pull]:
        return self._pulls.find(repo, head, state=state)

    def create_pull(
        self,
        repo: str,
        *,
        title: str,
        body: str,
        head: str,
        base: str,
        maintainer_can_modify: bool = True,
    ) -> Pull:
        return self._pulls.create(
            repo,
            title=title,
            body=body,
            head=head,
            base=base,
            maintainer_can_modify=maintainer_can_modify,
        )

    def update_pull(
        self,
        repo: str,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: PullState | None = None,
    ) -> None:
        self._pulls.update(repo, number, title=title, body=body, state=state)

    # -- comments and reactions -------------------------------------------------------------

    def comments(self, repo: str, number: int) -> list[Comment]:
        return self._comments.on(repo, number)

    def comment(self, repo: str, comment_id: int) -> Comment:
        return self._comments.get(repo, comment_id)

    def reactions(self, repo: str, comment_id: int) -> list[Reaction]:
        return self._comments.reactions(repo, comment_id)

    def create_comment(
        self, repo: str, number: int, body: str, *, marker: str | None = None
    ) -> Comment:
        return self._comments.create(repo, number, body, marker=marker)

    def edit_comment(self, repo: str, comment_id: int, body: str) -> None:
        self._comments.edit(repo, comment_id, body)

    def delete_comment(self, repo: str, comment_id: int) -> None:
        self._comments.delete(repo, comment_id)

    def add_reaction(self, repo: str, comment_id: int, content: str) -> None:
        self._comments.react(repo, comment_id, content)

    def remove_reaction(self, repo: str, comment_id: int, reaction_id: int) -> None:
        self._comments.unreact(repo, comment_id, reaction_id)

    # -- issues -----------------------------------------------------------------------------

    def issues(self, repo: str, *, label: str, creator: str) -> list[Issue]:
        return self._issues.labelled(repo, label=label, creator=creator)

    def create_issue(
        self, repo: str, title: str, body: str, *, labels: list[str], marker: str
    ) -> Issue:
        return self._issues.create(repo, title, body, labels=labels, marker=marker)

    def update_issue(
        self,
        repo: str,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: str | None = None,
    ) -> None:
        self._issues.update(repo, number, title=title, body=body, state=state)

    # -- workflow runs and artifacts --------------------------------------------------------

    def run(self, repo: str, run_id: int) -> WorkflowRun:
        return self._actions.run(repo, run_id)

    def workflow_runs(
        self, repo: str, workflow: str, *, branch: str, event: str, status: str
    ) -> list[WorkflowRun]:
        return self._actions.workflow_runs(
            repo, workflow, branch=branch, event=event, status=status
        )

    def artifacts(self, repo: str, run_id: int) -> list[Artifact]:
        return self._actions.artifacts(repo, run_id)

    def download_artifact(
        self, artifact: Artifact, dest: Path, *, max_bytes: int = MAX_ARTIFACT_BYTES
    ) -> Path:
        return self._actions.download(artifact, dest, max_bytes=max_bytes)
