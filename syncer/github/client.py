"""The GitHub API as the bot uses it: one client, each concern a collaborator of its own.

``client.pulls`` (``pulls.Pulls``), ``client.comments`` (comments and reactions),
``client.issues`` and ``client.actions`` (workflow runs, artifacts, the streamed download)
answer with the plain records of ``records`` (``Pull``, ``Comment``, ``WorkflowRun``...), never
with lazy PyGithub objects. Their requests go through one ``api.Api`` (retries and rate limits
by ``ratelimit``; a POST sent again only after the object was looked up). Writes consult
``plan``: in a dry run they are described there and not sent. The offline client of a dry run
without a token (``offline.EventGitHub``) is this client with reads answered from the event
file.
"""

from __future__ import annotations

import itertools
from typing import Unpack

from syncer.github.actions import Actions
from syncer.github.api import Api, Connection
from syncer.github.comments import Comments
from syncer.github.issues import Issues
from syncer.github.plan import Plan
from syncer.github.pulls import Pulls


class GitHubClient:
    """One authenticated connection; ``plan`` decides whether writes happen."""

    # True for publish.offline.EventGitHub, which answers from the event file without a token.
    offline = False
    # A setting written on the client instead of the collaborator that holds it (the API's
    # waits live on ``client.api``) fails loudly instead of being ignored.
    __slots__ = ("actions", "api", "comments", "dry_ids", "issues", "plan", "pulls")

    def __init__(
        self, token: str, *, plan: Plan | None = None, **connection: Unpack[Connection]
    ) -> None:
        self._connect(Api(token, **connection), plan or Plan())

    def _connect(self, api: Api, plan: Plan) -> None:
        self.api, self.plan = api, plan
        # A dry run's comments and issues get ids GitHub never gives (negative), one series
        # per client.
        self.dry_ids = itertools.count(-1, -1)
        self.pulls = Pulls(api, plan, self.dry_ids)
        self.comments = Comments(api, plan, self.dry_ids)
        self.issues = Issues(api, plan, self.dry_ids)
        self.actions = Actions(api)

    def login(self) -> str:
        """The token's user: the author of the bot's own comments and PRs."""
        return self.api.login()
