"""The GitHub API as the bot uses it: PyGithub underneath, plain records on top.

Everything returns small dataclasses (``Pull``, ``Comment``, ``WorkflowRun``, ``Artifact``) so
the bot's logic never touches lazy PyGithub objects (which hide extra requests) and
``--dry-run`` can answer writes without a server. Writes go through :class:`GitHubClient`
methods that consult ``plan``: in dry-run they are described there and not sent.

Retries: 5xx, 429 and 403 rate limits of reads and edits are retried by PyGithub's
``GithubRetry`` (``Retry-After`` when GitHub sends it, else until the rate-limit reset, or a
minute for a secondary limit); artifact downloads, which bypass PyGithub to stream, and POSTs,
sent again only after the object was looked up (:meth:`GitHubClient._post`), wait by the same
rules in :func:`_limit_wait`. The token is registered with :mod:`syncer.secrets` and never
appears in messages.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, TypedDict, TypeVar
from urllib.parse import urljoin

import requests
from github import Auth, Github, GithubException, GithubRetry
from urllib3.util.retry import Retry

from syncer import links, progress, secrets
from syncer.errors import SyncError
from syncer.wording import js

API_URL = links.API_URL
# Artifacts hold logs, not models: anything bigger is not what the bot expects.
MAX_ARTIFACT_BYTES = 2 * 1024**3
# GitHub's guidance for a secondary rate limit answered without Retry-After: wait at least a
# minute, then exponentially longer while it lasts.
SECONDARY_WAIT = 60.0
# GET /pulls/{n}/commits never lists more than a PR's first 250 commits.
MAX_PR_COMMITS = 250
# How far back from a long PR's head its newer commits are looked for (100 a page).
MAX_WALK_PAGES = 20
_CHUNK = 1 << 16

T = TypeVar("T")


# GitHub's JSON as ``_pull``, ``_run`` and ``_comment`` read it (and the offline client from an
# event file): read-through shapes, so a parser's argument says which object it expects. Every
# key may be missing or null in what a server or an event file sends; the parsers default them.
class UserData(TypedDict, total=False):
    login: str


class RepoData(TypedDict, total=False):
    full_name: str | None


class RefData(TypedDict, total=False):
    ref: str | None
    sha: str | None
    repo: RepoData | None


class LabelData(TypedDict):
    name: str


class PullData(TypedDict, total=False):
    number: int
    title: str | None
    body: str | None
    state: str | None
    merged: bool | None  # the single PR's GET only: a listed PR (pull-request-simple) lacks it
    merged_at: str | None
    user: UserData | None
    head: RefData | None
    base: RefData | None
    labels: list[LabelData] | None
    html_url: str | None
    maintainer_can_modify: bool | None


class IssueData(TypedDict, total=False):
    number: int
    title: str | None
    body: str | None
    state: str | None
    user: UserData | None
    labels: list[LabelData] | None
    html_url: str | None
    pull_request: dict[str, object] | None


class WorkflowRunData(TypedDict, total=False):
    id: int
    event: str | None
    path: str | None
    status: str | None
    conclusion: str | None
    head_sha: str | None
    head_branch: str | None
    html_url: str | None
    created_at: str | None


class CommentData(TypedDict, total=False):
    id: int
    body: str | None
    user: UserData | None
    author_association: str | None
    created_at: str | None
    updated_at: str | None
    html_url: str | None


class PullState(StrEnum):
    """A pull request's ``state`` as GitHub spells it (merged PRs are ``closed``, with
    ``merged`` set)."""

    OPEN = "open"
    CLOSED = "closed"


@dataclass(frozen=True)
class Pull:
    repo: str
    number: int
    title: str
    body: str
    state: str  # a PullState's value, kept as GitHub sent it
    merged: bool
    user: str
    head_ref: str
    head_sha: str
    head_repo: str
    base_ref: str
    labels: tuple[str, ...]
    html_url: str
    maintainer_can_modify: bool = False
    merged_at: str = ""  # ISO 8601; "" when not merged


@dataclass(frozen=True)
class Issue:
    repo: str
    number: int
    title: str
    body: str
    state: str  # open | closed
    user: str
    labels: tuple[str, ...]
    html_url: str


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    user: str
    association: str
    created_at: str
    updated_at: str
    html_url: str = ""


@dataclass(frozen=True)
class Reaction:
    id: int
    content: str
    user: str


@dataclass(frozen=True)
class WorkflowRun:
    id: int
    event: str
    path: str
    status: str
    conclusion: str | None
    head_sha: str
    head_branch: str
    html_url: str
    created_at: str = ""


@dataclass(frozen=True)
class Artifact:
    id: int
    name: str
    expired: bool
    size: int
    download_url: str
    expires_at: str = ""  # ISO 8601, as GitHub gives it


@dataclass
class Plan:
    """Writes, in order: made (``dry_run=False``) or only described (``dry_run=True``)."""

    dry_run: bool = False
    writes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        self.writes.append(secrets.mask(text))


class NotFound(SyncError):
    """The API answered 404 (deleted comment, unknown PR or run, or no access)."""


class _NoUser(Exception):
    """``GET /user`` refused (403): the token is no user's."""


class RateLimitTooLong(Exception):
    """GitHub asked for a longer wait than the bot may spend."""


class _CappedRetry(GithubRetry):
    """GithubRetry, but a ``Retry-After`` beyond ``max_rate_limit_wait`` fails instead of
    sleeping (urllib3 would sleep for whatever the server asks, even on a 429)."""

    def get_retry_after(self, response: Any) -> float | None:
        wait = super().get_retry_after(response)
        cap = self.max_rate_limit_wait
        if wait is not None and cap is not None and wait > cap:
            raise RateLimitTooLong(f"GitHub asks to retry in {wait:.0f}s, over the {cap:.0f}s cap")
        return wait


def _retry(retries: int, max_wait: float, backoff: float, secondary_wait: float) -> Retry:
    return _CappedRetry(
        total=retries,
        backoff_factor=backoff,
        status_forcelist=[*range(500, 600), 429],
        # PATCH is idempotent for every call made here (comment and PR edits). POST is not:
        # GitHub may have made the write when the answer is a 502, so a blind retry posts a
        # second comment. GitHubClient._post retries it only after looking the object up.
        allowed_methods=frozenset({"GET", "PATCH", "PUT", "DELETE"}),
        max_rate_limit_wait=max_wait,
        secondary_rate_wait=min(secondary_wait, max_wait),
    )


def _limit_wait(
    status: int,
    headers: Mapping[str, str],
    message: str,
    attempt: int,
    *,
    backoff: float,
    secondary_wait: float,
    max_wait: float,
) -> float | None:
    """Seconds before a refused request may be sent again; None: the refusal is final.

    GitHub's documented rules: ``Retry-After`` when sent; else, with no requests left, until
    ``X-RateLimit-Reset``; else a secondary rate limit (403 or 429 whose message says so, often
    with requests left and no header) waits ``secondary_wait`` (at least a minute), doubled on
    each further refusal; a 5xx or a bare 429 backs off exponentially. A wait over
    ``max_wait`` raises :class:`RateLimitTooLong`."""
    after = _header(headers, "retry-after")
    exhausted = _header(headers, "x-ratelimit-remaining") == "0"
    secondary = status in (403, 429) and "rate limit" in message
    limited = status == 429 or (status == 403 and (after is not None or exhausted))
    if not (limited or secondary or 500 <= status < 600):
        return None
    wait = backoff * (2**attempt)
    reset = _header(headers, "x-ratelimit-reset")
    if after is not None:
        try:
            wait = float(after)
        except ValueError:
            with contextlib.suppress(TypeError, ValueError):
                wait = parsedate_to_datetime(after).timestamp() - time.time()
    elif exhausted and reset is not None:
        with contextlib.suppress(ValueError):
            wait = float(reset) - time.time() + 1
    elif secondary:
        wait = secondary_wait * (2**attempt)
    wait = max(0.0, wait)
    if wait > max_wait:
        raise RateLimitTooLong(f"GitHub asks to retry in {wait:.0f}s, over the {max_wait:.0f}s cap")
    return wait


class GitHubClient:
    """One authenticated connection; ``plan`` decides whether writes happen."""

    # True for publish.offline.EventGitHub, which answers from the event file without a token.
    offline = False

    def __init__(
        self,
        token: str,
        *,
        base_url: str = API_URL,
        plan: Plan | None = None,
        retries: int = 6,
        max_wait: float = 300.0,
        backoff: float = 1.0,
        pause: float | None = None,
        login: str | None = None,
        secondary_wait: float = SECONDARY_WAIT,
    ) -> None:
        secrets.register(token)
        self._token = token
        self.base_url = base_url.rstrip("/")
        self.plan = plan or Plan()
        self.retries = retries
        self.max_wait = max_wait
        self.backoff = backoff
        self.secondary_wait = secondary_wait
        self._login = login
        # GitHub's guidance against secondary limits: space requests, and writes more.
        between = 0.25 if pause is None else pause
        self._gh = Github(
            auth=Auth.Token(token),
            base_url=self.base_url,
            retry=_retry(retries, max_wait, backoff, secondary_wait),
            seconds_between_requests=between,
            seconds_between_writes=1.0 if pause is None else pause,
            timeout=60,
        )
        self._session = requests.Session()
        self._dry_ids = iter(range(-1, -(10**9), -1))

    # -- plumbing ---------------------------------------------------------------------------

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except GithubException as exc:
            kind = NotFound if exc.status == 404 else SyncError
            detail = error_text(exc.data)
            raise kind(secrets.mask(f"GitHub API {exc.status} on {what}: {detail}")) from None
        except RateLimitTooLong as exc:
            raise SyncError(f"GitHub rate limit on {what}: {exc}") from None
        except requests.exceptions.RetryError as exc:
            reason = getattr(getattr(exc.args[0], "reason", None), "args", [exc])[0]
            raise SyncError(
                secrets.mask(
                    f"GitHub API on {what}: gave up after {self.retries} retries ({reason})"
                )
            ) from None
        except requests.RequestException as exc:
            raise SyncError(secrets.mask(f"GitHub API unreachable on {what}: {exc}")) from None

    def _json(
        self,
        verb: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        body: dict[str, Any] | None = None,
    ) -> Any:
        url = f"{self.base_url}{path}"

        def go() -> Any:
            _headers, data = self._gh.requester.requestJsonAndCheck(
                verb, url, parameters=params, input=body
            )
            return data

        return self._call(f"{verb} {path}", go)

    def _post(
        self,
        path: str,
        body: dict[str, Any],
        find: Callable[[], Any | None] | None,
        *,
        exists: Callable[[GithubException], bool] = lambda exc: False,
        amend: Callable[[GithubException, dict[str, Any]], dict[str, Any] | None] | None = None,
    ) -> Any:
        """POST ``body`` once, and again only after looking the object up.

        A 5xx, a timeout or a dropped connection does not say whether GitHub made the write, and
        a rate limit's answer may come from a proxy after it did: before each new attempt
        ``find()`` looks the object up (by its hidden marker or its branch) and returns it when
        it is there; only when it is not is the POST sent again. ``exists(exc)`` marks an
        error that means "it is already there" (422 for a PR), answered by ``find()`` too.
        ``find=None``: a POST GitHub itself makes idempotent (a reaction). ``amend(exc, body)``
        may answer a refusal with another body to send at once (GitHub made nothing).
        """
        url = f"{self.base_url}{path}"

        def go() -> Any:
            attempt, sent = 0, body
            while True:
                try:
                    return self._gh.requester.requestJsonAndCheck("POST", url, input=sent)[1]
                except GithubException as exc:
                    if exists(exc) and find is not None:
                        found = find()
                        if found is not None:
                            return found
                        raise
                    amended = amend(exc, sent) if amend is not None else None
                    if amended is not None and attempt < self.retries:
                        sent, attempt = amended, attempt + 1
                        continue
                    wait = self._post_wait(exc, attempt)
                    if wait is None or attempt >= self.retries:
                        raise
                except (requests.ConnectionError, requests.Timeout):
                    if attempt >= self.retries:
                        raise
                    wait = self.backoff * (2**attempt)
                if find is not None:
                    found = find()
                    if found is not None:
                        return found
                time.sleep(wait)
                attempt += 1

        return self._call(f"POST {path}", go)

    def _post_wait(self, exc: GithubException, attempt: int) -> float | None:
        """Seconds before a failed POST may be sent again (``_limit_wait``'s rules)."""
        data = exc.data if isinstance(exc.data, dict) else {}
        message = data.get("message")
        return _limit_wait(
            exc.status,
            exc.headers or {},
            message if isinstance(message, str) else "",
            attempt,
            backoff=self.backoff,
            secondary_wait=self.secondary_wait,
            max_wait=self.max_wait,
        )

    def _pages(self, path: str, key: str | None = None) -> list[Any]:
        """Every item of a paginated list (``per_page=100``, following ``page`` until short).

        Items stay raw JSON objects: one pager serves comments, commits, reactions and
        artifacts, and each caller hands them to the parser of its kind (typed by its
        ``*Data`` TypedDict), so an item is as untyped as ``_json``'s answer."""
        items: list[Any] = []
        page = 1
        while True:
            data = self._json("GET", path, params={"per_page": 100, "page": page})
            chunk = data.get(key, []) if key else data
            items.extend(chunk)
            if len(chunk) < 100:
                return items
            page += 1

    # -- reads ------------------------------------------------------------------------------

    def login(self) -> str:
        """The token's user (the author of the bot's own comments and PRs): given, or asked of
        ``GET /user``, which GitHub refuses an App installation token (and Actions'
        ``GITHUB_TOKEN``): their login is ``<app-slug>[bot]`` and must be given."""
        if self._login is None:

            def whoami() -> Any:
                try:
                    return self._gh.requester.requestJsonAndCheck("GET", f"{self.base_url}/user")[1]
                except GithubException as exc:
                    if exc.status == 403:
                        raise _NoUser from None
                    raise

            try:
                self._login = self._call("GET /user", whoami)["login"]
            except _NoUser:
                raise SyncError(
                    "GitHub refuses GET /user to this token (an App installation token or "
                    "GITHUB_TOKEN): give the bot's login, <app-slug>[bot], in SYNC_INFX_LOGIN "
                    "or SYNC_COOKBOOK_LOGIN"
                ) from None
        return self._login

    def pull(self, repo: str, number: int) -> Pull:
        return _pull(repo, self._json("GET", f"/repos/{repo}/pulls/{number}"))

    def pull_commits(self, repo: str, number: int) -> list[str]:
        """The PR's commits, oldest first. GitHub lists at most the first 250 of them; the
        newer ones of a longer PR are walked back from its head (``GET /commits?sha=``, newest
        first) until a listed one is met."""
        listed = [c["sha"] for c in self._pages(f"/repos/{repo}/pulls/{number}/commits")]
        if len(listed) < MAX_PR_COMMITS:
            return listed
        known, newer = set(listed), list[str]()
        head = self.pull(repo, number).head_sha
        for page in range(1, MAX_WALK_PAGES + 1):
            params = {"sha": head, "per_page": 100, "page": page}
            data = self._json("GET", f"/repos/{repo}/commits", params=params)
            for commit in data:
                if commit["sha"] in known:
                    return listed + newer[::-1]
                newer.append(commit["sha"])
            if len(data) < 100:
                break
        return listed + newer[::-1]

    def comments(self, repo: str, number: int) -> list[Comment]:
        return [_comment(c) for c in self._pages(f"/repos/{repo}/issues/{number}/comments")]

    def comment(self, repo: str, comment_id: int) -> Comment:
        return _comment(self._json("GET", f"/repos/{repo}/issues/comments/{comment_id}"))

    def reactions(self, repo: str, comment_id: int) -> list[Reaction]:
        return [
            Reaction(r["id"], r["content"], (r.get("user") or {}).get("login", ""))
            for r in self._pages(f"/repos/{repo}/issues/comments/{comment_id}/reactions")
        ]

    def open_pulls(self, repo: str) -> list[Pull]:
        """The repository's open pull requests (every page), oldest first."""
        return sorted(
            (_pull(repo, p) for p in self._pages(f"/repos/{repo}/pulls")), key=lambda p: p.number
        )

    def find_pulls(self, repo: str, head: str, *, state: str = "all") -> list[Pull]:
        """Pull requests whose head is ``owner:branch``, newest first."""
        data = self._json(
            "GET", f"/repos/{repo}/pulls", params={"head": head, "state": state, "per_page": 100}
        )
        return sorted((_pull(repo, p) for p in data), key=lambda p: -p.number)

    def issues(self, repo: str, *, label: str, creator: str) -> list[Issue]:
        """Every issue (open or closed) of ``creator`` carrying ``label``, oldest first; pull
        requests, which GitHub lists among issues, are left out."""
        found: list[Issue] = []
        page = 1
        while True:
            params = {"labels": label, "creator": creator, "state": "all", "per_page": 100}
            chunk = self._json("GET", f"/repos/{repo}/issues", params={**params, "page": page})
            found.extend(_issue(repo, i) for i in chunk if not i.get("pull_request"))
            if len(chunk) < 100:
                return sorted(found, key=lambda i: i.number)
            page += 1

    def run(self, repo: str, run_id: int) -> WorkflowRun:
        return _run(self._json("GET", f"/repos/{repo}/actions/runs/{run_id}"))

    def workflow_runs(
        self, repo: str, workflow: str, *, branch: str, event: str, status: str
    ) -> list[WorkflowRun]:
        """Runs of ``workflow`` (a file name or path) on ``branch``, newest first (first page)."""
        name = workflow.rsplit("/", 1)[-1]
        data = self._json(
            "GET",
            f"/repos/{repo}/actions/workflows/{name}/runs",
            params={"branch": branch, "event": event, "status": status, "per_page": 100},
        )
        return [_run(r) for r in data.get("workflow_runs", [])]

    def artifacts(self, repo: str, run_id: int) -> list[Artifact]:
        return [
            Artifact(
                id=int(a["id"]),
                name=a["name"],
                expired=bool(a.get("expired")),
                size=int(a.get("size_in_bytes") or 0),
                download_url=a["archive_download_url"],
                expires_at=a.get("expires_at") or "",
            )
            for a in self._pages(f"/repos/{repo}/actions/runs/{run_id}/artifacts", "artifacts")
        ]

    def download_artifact(
        self, artifact: Artifact, dest: Path, *, max_bytes: int = MAX_ARTIFACT_BYTES
    ) -> Path:
        """Stream ``artifact``'s zip to ``dest`` (atomically); the token never leaves the API host.

        GitHub answers with a redirect to signed storage, which is fetched without the token.
        """
        if artifact.size > max_bytes:
            raise SyncError(f"artifact {artifact.name} is {artifact.size} bytes, over {max_bytes}")
        url = artifact.download_url
        auth = {"Authorization": f"Bearer {self._token}", "Accept": "application/vnd.github+json"}
        for attempt in range(self.retries + 1):
            try:
                response = self._session.get(
                    url, headers=auth, allow_redirects=False, stream=True, timeout=60
                )
                if response.is_redirect:
                    location = urljoin(url, response.headers["Location"])
                    response.close()
                    response = self._session.get(location, stream=True, timeout=60)
                wait = self._download_wait(response, attempt)
                if wait is not None and attempt < self.retries:
                    response.close()
                    time.sleep(wait)
                    continue
                if response.status_code != 200:
                    raise SyncError(
                        secrets.mask(
                            f"artifact {artifact.name}: download answered {response.status_code}"
                        )
                    )
                return _stream_to(response, dest, max_bytes, artifact.name, artifact.size)
            except requests.RequestException as exc:
                if attempt >= self.retries:
                    raise SyncError(secrets.mask(f"artifact {artifact.name}: {exc}")) from None
                time.sleep(self.backoff * (2**attempt))
        raise SyncError(f"artifact {artifact.name}: download failed after {self.retries} retries")

    def _download_wait(self, response: requests.Response, attempt: int) -> float | None:
        """``_limit_wait`` for a streamed download (its error body read only when it may be a
        secondary rate limit's)."""
        status = response.status_code
        message = response.text[:2000] if status in (403, 429) else ""
        try:
            return _limit_wait(
                status,
                response.headers,
                message,
                attempt,
                backoff=self.backoff,
                secondary_wait=self.secondary_wait,
                max_wait=self.max_wait,
            )
        except RateLimitTooLong as exc:
            raise SyncError(f"GitHub rate limit: {exc}") from None

    # -- writes (planned in dry-run) ---------------------------------------------------------

    def create_comment(
        self, repo: str, number: int, body: str, *, marker: str | None = None
    ) -> Comment:
        """Post a comment. When the answer is lost, the bot's own comment carrying ``marker``
        (or this very body) is looked up before posting again: one comment, never two."""
        self.plan.note(f"POST /repos/{repo}/issues/{number}/comments ({len(body)} chars)\n{body}")
        if self.plan.dry_run:
            return Comment(next(self._dry_ids), body, self.login(), "NONE", "", "")
        me = self.login()

        def find() -> CommentData | None:
            mine = [
                c
                for c in self._pages(f"/repos/{repo}/issues/{number}/comments")
                if (c.get("user") or {}).get("login") == me
                and (
                    c.get("body") == body
                    or (marker is not None and marker in (c.get("body") or ""))
                )
            ]
            return mine[-1] if mine else None

        return _comment(self._post(f"/repos/{repo}/issues/{number}/comments", {"body": body}, find))

    def create_issue(
        self, repo: str, title: str, body: str, *, labels: list[str], marker: str
    ) -> Issue:
        """Open an issue. When the answer is lost, the bot's own issue carrying ``marker`` is
        looked up before posting again: one issue, never two."""
        self.plan.note(f"POST /repos/{repo}/issues {title!r} ({len(body)} chars)\n{body}")
        if self.plan.dry_run:
            return Issue(repo, next(self._dry_ids), title, body, "open", self.login(), (), "")
        me = self.login()

        def find() -> IssueData | None:
            mine = [
                i
                for i in self._json(
                    "GET",
                    f"/repos/{repo}/issues",
                    params={"creator": me, "state": "all", "per_page": 100},
                )
                if not i.get("pull_request") and marker in (i.get("body") or "")
            ]
            return mine[0] if mine else None

        data = self._post(
            f"/repos/{repo}/issues", {"title": title, "body": body, "labels": labels}, find
        )
        return _issue(repo, data)

    def update_issue(
        self,
        repo: str,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: str | None = None,
    ) -> None:
        """Edit an issue in place: its title, body, and state (``open`` / ``closed``)."""
        change: dict[str, Any] = {
            k: v for k, v in (("title", title), ("body", body), ("state", state)) if v is not None
        }
        if state == "closed":
            change["state_reason"] = "completed"
        size = f" ({len(body)} chars)" if body is not None else ""
        what = ", ".join(k for k in change if k != "body") or "body"
        self.plan.note(f"PATCH /repos/{repo}/issues/{number} {what}{size}\n{body or ''}")
        if not self.plan.dry_run:
            self._json("PATCH", f"/repos/{repo}/issues/{number}", body=change)

    def edit_comment(self, repo: str, comment_id: int, body: str) -> None:
        self.plan.note(
            f"PATCH /repos/{repo}/issues/comments/{comment_id} ({len(body)} chars)\n{body}"
        )
        if not self.plan.dry_run:
            self._json("PATCH", f"/repos/{repo}/issues/comments/{comment_id}", body={"body": body})

    def add_reaction(self, repo: str, comment_id: int, content: str) -> None:
        self.plan.note(f"POST /repos/{repo}/issues/comments/{comment_id}/reactions {content}")
        if not self.plan.dry_run:
            # GitHub answers an existing reaction with 200: posting it again is harmless.
            self._post(
                f"/repos/{repo}/issues/comments/{comment_id}/reactions",
                {"content": content},
                None,
            )

    def delete_comment(self, repo: str, comment_id: int) -> None:
        """Delete a comment; one already gone is not an error (another job deleted it)."""
        self.plan.note(f"DELETE /repos/{repo}/issues/comments/{comment_id}")
        if not self.plan.dry_run:
            with contextlib.suppress(NotFound):
                self._json("DELETE", f"/repos/{repo}/issues/comments/{comment_id}")

    def remove_reaction(self, repo: str, comment_id: int, reaction_id: int) -> None:
        self.plan.note(f"DELETE /repos/{repo}/issues/comments/{comment_id}/reactions/{reaction_id}")
        if not self.plan.dry_run:
            self._json(
                "DELETE", f"/repos/{repo}/issues/comments/{comment_id}/reactions/{reaction_id}"
            )

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
        self.plan.note(
            f"POST /repos/{repo}/pulls head={head} base={base} title={js(title, None)} "
            f"({len(body)} chars)\n{body}"
        )
        if self.plan.dry_run:
            return Pull(
                repo,
                0,
                title,
                body,
                PullState.OPEN,
                False,
                self.login(),
                head.split(":")[-1],
                "",
                head.split(":")[0],
                base,
                (),
                "",
            )
        me = self.login()

        def find() -> PullData | None:
            # The open PR of this head made by the bot: the one a lost answer created.
            found = self._json(
                "GET", f"/repos/{repo}/pulls", params={"head": head, "state": str(PullState.OPEN)}
            )
            mine = [p for p in found if (p.get("user") or {}).get("login") == me]
            return mine[0] if mine else None

        def without_edits(exc: GithubException, sent: dict[str, Any]) -> dict[str, Any] | None:
            # GitHub refuses to let maintainers push to a branch of an organization's fork:
            # the PR is opened without it (the caller sees maintainer_can_modify false).
            if sent.get("maintainer_can_modify") and _fork_collab_refused(exc):
                return {**sent, "maintainer_can_modify": False}
            return None

        data = self._post(
            f"/repos/{repo}/pulls",
            {
                "title": title,
                "body": body,
                "head": head,
                "base": base,
                "maintainer_can_modify": maintainer_can_modify,
            },
            find,
            exists=_already_exists,
            amend=without_edits,
        )
        if "maintainer_can_modify" not in data:
            # Found in the list, whose pull-request-simple objects leave out what only the
            # PR itself says (merged, maintainer_can_modify).
            data = self._json("GET", f"/repos/{repo}/pulls/{data['number']}")
        if (data.get("title"), data.get("body") or "") != (title, body):
            # Found rather than made (an earlier run's PR the listing had not shown yet): it
            # gets this run's title and body, as the one PR of this head must.
            data = self._json(
                "PATCH",
                f"/repos/{repo}/pulls/{data['number']}",
                body={"title": title, "body": body},
            )
        return _pull(repo, data)

    def update_pull(
        self,
        repo: str,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: PullState | None = None,
    ) -> None:
        # str(): the plan shows and the API gets a state as GitHub spells it.
        fields = {
            k: str(v)
            for k, v in (("title", title), ("body", body), ("state", state))
            if v is not None
        }
        shown = ", ".join(
            f"{k}" + (f"={js(v, None)}" if k != "body" else f" ({len(v)} chars)")
            for k, v in fields.items()
        )
        self.plan.note(
            f"PATCH /repos/{repo}/pulls/{number} {shown}"
            + (f"\n{body}" if body is not None else "")
        )
        if not self.plan.dry_run:
            self._json("PATCH", f"/repos/{repo}/pulls/{number}", body=fields)


def error_text(data: object) -> str:
    """GitHub's error body as one line: its ``message``, then each of its validation
    ``errors`` (``{resource, field, code, message}``): the message when GitHub wrote one, else
    what ``code`` says of ``resource.field`` ("PullRequest.head invalid")."""
    if not isinstance(data, dict):
        return js(data)
    parts: list[str] = []
    for error in data.get("errors") or []:
        if not isinstance(error, dict):
            parts.append(js(error))
        elif isinstance(error.get("message"), str) and error["message"]:
            parts.append(error["message"])
        else:
            where = ".".join(str(error[k]) for k in ("resource", "field") if error.get(k))
            parts.append(f"{where} {error.get('code', 'invalid')}".strip())
    message = data.get("message")
    head = message if isinstance(message, str) else js(message)
    return f"{head}: {'; '.join(parts)}" if parts else head


def _codes(exc: GithubException) -> list[tuple[str, str, str]]:
    """(field, code, message) of each validation error in a 422's body."""
    data = exc.data if isinstance(exc.data, dict) else {}
    return [
        (str(e.get("field") or ""), str(e.get("code") or ""), str(e.get("message") or ""))
        for e in data.get("errors") or []
        if isinstance(e, dict)
    ]


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return str(value)
    return None


def _already_exists(exc: GithubException) -> bool:
    """GitHub's 422 for a second PR of the same head ("A pull request already exists for
    owner:branch."): the PR is there, made by an earlier attempt whose answer was lost."""
    return exc.status == 422 and any("already exists" in m for _f, _c, m in _codes(exc))


def _fork_collab_refused(exc: GithubException) -> bool:
    """GitHub's 422 when maintainers may not be let push to the head branch (a fork owned by
    an organization): ``{"field": "fork_collab", "code": "custom"}``."""
    return exc.status == 422 and any(
        field == "fork_collab" or "fork collab" in message.lower()
        for field, _code, message in _codes(exc)
    )


def _stream_to(
    response: requests.Response, dest: Path, max_bytes: int, name: str, size: int
) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".part")
    total = 0
    try:
        with (
            response,
            open(tmp, "wb") as out,
            progress.byte_task(f"downloading {name}", size) as advance,
        ):
            for chunk in response.iter_content(_CHUNK):
                total += len(chunk)
                if total > max_bytes:
                    raise SyncError(f"artifact {name}: more than {max_bytes} bytes, refused")
                out.write(chunk)
                advance(len(chunk))
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def _pull(repo: str, data: PullData) -> Pull:
    head = data.get("head") or {}
    head_repo = (head.get("repo") or {}).get("full_name") or repo
    return Pull(
        repo=repo,
        number=int(data["number"]),
        title=data.get("title") or "",
        body=data.get("body") or "",
        state=data.get("state") or "",
        merged=_merged(data),
        user=(data.get("user") or {}).get("login", ""),
        head_ref=head.get("ref") or "",
        head_sha=head.get("sha") or "",
        head_repo=head_repo,
        base_ref=(data.get("base") or {}).get("ref") or "",
        labels=label_names(data.get("labels")),
        html_url=data.get("html_url") or "",
        maintainer_can_modify=bool(data.get("maintainer_can_modify")),
        merged_at=data.get("merged_at") or "",
    )


def _issue(repo: str, data: IssueData) -> Issue:
    return Issue(
        repo=repo,
        number=int(data["number"]),
        title=data.get("title") or "",
        body=data.get("body") or "",
        state=data.get("state") or "",
        user=(data.get("user") or {}).get("login", ""),
        labels=label_names(data.get("labels")),
        html_url=data.get("html_url") or "",
    )


def _merged(data: PullData) -> bool:
    """Whether the PR was merged: ``GET /pulls/{n}`` says so in ``merged``; ``GET /pulls``
    lists ``pull-request-simple`` objects, which have no ``merged``, only ``merged_at``."""
    merged = data.get("merged")
    if merged is None:
        return data.get("merged_at") is not None
    return bool(merged)


def label_names(labels: Sequence[object] | None) -> tuple[str, ...]:
    """The names of a PR's labels; an entry without a string name is skipped (an event file's
    labels are not GitHub's own answer and may hold anything)."""
    return tuple(
        label["name"]
        for label in labels or []
        if isinstance(label, dict) and isinstance(label.get("name"), str) and label["name"]
    )


def _run(data: WorkflowRunData) -> WorkflowRun:
    return WorkflowRun(
        id=int(data["id"]),
        event=data.get("event") or "",
        path=data.get("path") or "",
        status=data.get("status") or "",
        conclusion=data.get("conclusion"),
        head_sha=data.get("head_sha") or "",
        head_branch=data.get("head_branch") or "",
        html_url=data.get("html_url") or "",
        created_at=data.get("created_at") or "",
    )


def _comment(data: CommentData) -> Comment:
    return Comment(
        id=int(data["id"]),
        body=data.get("body") or "",
        user=(data.get("user") or {}).get("login", ""),
        association=data.get("author_association") or "NONE",
        created_at=data.get("created_at") or "",
        updated_at=data.get("updated_at") or "",
        html_url=data.get("html_url") or "",
    )
