"""GitHub as the event file shows it: what ``sync bot --dry-run`` reads without a token.

A dry run must work where no token and no API are at hand (a maintainer trying an event file
locally). Each side without a token gets an :class:`EventGitHub`: its reads answer from the
event payload (the PR, the issue and the comment it carries) and know nothing else, so there is
no earlier bot PR, status comment or reaction. An ``issue_comment`` event does not name the PR's
head: it is the ``refs/pull/<n>/head`` the bot's InferenceX clone fetches from its remote
(``--inferencex-clone``: a local mirror needs no network), else the commit checked out in the
``--inferencex`` checkout when that is a git repository of its own, never the commit of some
repository around it (a folder inside this tool's checkout would name the tool's own HEAD);
a head neither tells is an error, asked only when the PR is read. Runs cannot be checked
without the API: the bot says so and leaves the pin alone (see ``Bot._choose_pin``). Its
writes are ``GitHubClient``'s own dry-run writes, planned in full (titles, bodies) and never
sent; any request that would reach the network is an internal error rather than a silent call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn, TypedDict, cast

from syncer.errors import SyncError
from syncer.gitcheckout import checked_out
from syncer.github import event
from syncer.github.actions import Actions
from syncer.github.api import Api, NotFound
from syncer.github.client import GitHubClient
from syncer.github.comments import Comments
from syncer.github.plan import Plan
from syncer.github.pulls import Pulls
from syncer.github.records import (
    Artifact,
    Comment,
    CommentData,
    Pull,
    PullData,
    PullState,
    Reaction,
    RepoData,
    UserData,
    WorkflowRun,
    comment_record,
    label_names,
    pull_record,
)
from syncer.github.shapes import Fields

# Who the bot's own comments and PRs would be by: unknown without a token.
UNKNOWN_LOGIN = "(the bot: no token)"


class IssuePullRef(TypedDict, total=False):
    merged_at: str | None


class EventIssue(TypedDict, total=False):
    """The ``issue`` of an ``issue_comment`` event (a PR's, when ``pull_request`` is set)."""

    number: int
    title: str | None
    body: str | None
    state: str | None
    pull_request: IssuePullRef | None
    user: UserData | None
    labels: list[object] | None  # objects with a ``name``; anything else is skipped
    html_url: str | None


class EventData(TypedDict, total=False):
    """The parts of a GitHub event payload a dry run answers reads from. The file is untrusted
    (``routing`` type-checks every field it routes on), so the reads here check types too."""

    repository: RepoData | None
    pull_request: PullData | None
    issue: EventIssue | None
    comment: CommentData | None


class _NoApi(Api):
    """No connection: any request is an internal error rather than a silent call; the login is
    the one given (or unknown)."""

    def __init__(self, login: str) -> None:
        # No super().__init__: there is no token to register and no connection to open.
        self._login: str = login
        self.base_url = ""
        self.retries = 0

    def json(self, verb: str, path: str, **_: Any) -> NoReturn:
        raise AssertionError(f"an offline dry run asked GitHub for {verb} {path}")

    def login(self) -> str:
        return self._login


class EventGitHub(GitHubClient):
    """Reads from the event payload, writes planned only (dry runs without a token)."""

    offline = True

    def __init__(
        self,
        event_payload: Mapping[str, object],
        *,
        plan: Plan,
        checkout: Path | None = None,
        login: str | None = None,
        head_of: Callable[[int], str | None] | None = None,
    ) -> None:
        if not plan.dry_run:
            raise SyncError("GitHub cannot be written without a token (a dry run can)")
        api = _NoApi(login or UNKNOWN_LOGIN)
        self._connect(api, plan)
        # Read before the router has looked at the event: every part taken from it is checked
        # here, so a malformed one is bad input (exit 2), as the router would say.
        event.check(dict(event_payload), event.EVENT_SHAPE)
        payload = cast("EventData", event_payload)  # (the shape just checked)
        repo = (payload.get("repository") or {}).get("full_name") or ""
        pulls: dict[tuple[str, int], Pull] = {}
        headless: set[tuple[str, int]] = set()  # comment events' PRs: head asked when read
        comments: dict[tuple[str, int], list[Comment]] = {}
        pr = payload.get("pull_request")
        if isinstance(pr, dict) and isinstance(pr.get("number"), int):
            pulls[(repo, pr["number"])] = pull_record(repo, pr)
        issue = payload.get("issue")
        if (
            isinstance(issue, dict)
            and issue.get("pull_request")
            and isinstance(issue.get("number"), int)
        ):
            number = issue["number"]
            pulls[(repo, number)] = _issue_pull(repo, issue, "")
            headless.add((repo, number))
            comment = payload.get("comment")
            if isinstance(comment, dict) and isinstance(comment.get("id"), int):
                comments[(repo, number)] = [comment_record(comment)]
        # The readers answer from the event; the writers are the client's own, planned only.
        self.pulls = _EventPulls(pulls, api, plan, self.dry_ids)
        self.pulls.headless = _Heads(headless, checkout, head_of)
        self.comments = _EventComments(comments, api, plan, self.dry_ids)
        self.actions = _NoActions(api)


class _EventPulls(Pulls):
    """The PRs the event carries, nothing else (no earlier bot PR)."""

    def __init__(
        self, found: dict[tuple[str, int], Pull], api: Api, plan: Plan, dry_ids: Iterator[int]
    ) -> None:
        super().__init__(api, plan, dry_ids)
        self.found = found

    headless: _Heads | None = None

    def get(self, repo: str, number: int) -> Pull:
        pull = self.found.get((repo, number))
        if pull is None:
            raise NotFound(f"{repo}#{number} is not in the event (no token: GitHub not read)")
        if self.headless is not None and (repo, number) in self.headless.pending:
            head = self.headless.head(number)
            pull = self.found[(repo, number)] = dataclasses.replace(pull, head_sha=head)
            self.headless.pending.discard((repo, number))
        return pull

    def commits(self, repo: str, number: int) -> list[str]:
        head = self.get(repo, number).head_sha
        return [head] if head else []

    def open(self, repo: str) -> list[Pull]:
        pulls = sorted(self.found.items())
        return [p for (r, _), p in pulls if r == repo and p.state == PullState.OPEN]

    def recently_closed(self, repo: str) -> list[Pull]:
        pulls = sorted(self.found.items())
        return [p for (r, _), p in pulls if r == repo and p.state == PullState.CLOSED]

    def find(self, repo: str, head: str, *, state: str = "all") -> list[Pull]:
        return []


class _EventComments(Comments):
    """The comment the event carries, nothing else (no status comment, no reaction)."""

    def __init__(
        self,
        found: dict[tuple[str, int], list[Comment]],
        api: Api,
        plan: Plan,
        dry_ids: Iterator[int],
    ) -> None:
        super().__init__(api, plan, dry_ids)
        self.found = found

    def on(self, repo: str, number: int) -> list[Comment]:
        return list(self.found.get((repo, number), []))

    def get(self, repo: str, comment_id: int) -> Comment:
        for comments in self.found.values():
            for comment in comments:
                if comment.id == comment_id:
                    return comment
        raise NotFound(f"comment {comment_id} is not in the event (no token: GitHub not read)")

    def reactions(self, repo: str, comment_id: int) -> list[Reaction]:
        return []


class _NoActions(Actions):
    """Runs cannot be checked without the API: the bot says so and leaves the pin alone."""

    def run(self, repo: str, run_id: int) -> WorkflowRun:
        raise NotFound(f"run {run_id}: not checked (no token: GitHub not read)")

    def workflow_runs(
        self, repo: str, workflow: str, *, branch: str, event: str, status: str
    ) -> list[WorkflowRun]:
        return []

    def artifacts(self, repo: str, run_id: int) -> list[Artifact]:
        return []

    def download(self, artifact: Artifact, dest: Path, **_: Any) -> Path:
        raise SyncError(f"artifact {artifact.name}: not downloaded (no token: GitHub not read)")


def _issue_pull(repo: str, issue: EventIssue, head_sha: str) -> Pull:
    """The PR an ``issue_comment`` event names (its head is found when it is read)."""
    return Pull(
        repo=repo,
        number=int(issue["number"]),
        title=issue.get("title") or "",
        body=issue.get("body") or "",
        state=issue.get("state") or PullState.OPEN,
        merged=bool((issue.get("pull_request") or {}).get("merged_at")),
        user=(issue.get("user") or {}).get("login", ""),
        head_ref="",
        head_sha=head_sha,
        head_repo=repo,
        base_ref="",
        labels=label_names(Fields(issue, "issue")),
        html_url=issue.get("html_url") or "",
    )


@dataclasses.dataclass
class _Heads:
    """The heads of the PRs an ``issue_comment`` event names without them (see the module)."""

    pending: set[tuple[str, int]]
    checkout: Path | None
    head_of: Callable[[int], str | None] | None

    def head(self, number: int) -> str:
        if self.head_of is not None:
            head = self.head_of(number)
            if head:
                return head
            raise SyncError(
                f"PR #{number}: the event does not name its head and the InferenceX remote has "
                f"no refs/pull/{number}/head (no token: GitHub not read)"
            )
        found = checked_out(self.checkout) if self.checkout is not None else None
        if found is not None:
            return found[0]
        where = (
            f"{self.checkout} is not a git repository of its own"
            if self.checkout is not None
            else "no InferenceX checkout was given"
        )
        raise SyncError(
            f"PR #{number}: the event does not name its head and without a token GitHub is not "
            f"read; {where}: give --inferencex a git checkout of the PR's head, or "
            "--inferencex-clone (its remote's refs/pull/<n>/head)"
        )
