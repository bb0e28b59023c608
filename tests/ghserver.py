"""A small in-memory model of the GitHub REST endpoints the bot uses, served over real HTTP.

PyGithub is pointed at it with ``base_url`` so the bot's requests, pagination, redirects and
retries are exercised for real. State lives in plain dicts the tests read and change directly
(``server.repo(...)``, ``server.add_comment(...)``); every request is recorded in
``server.log`` so tests can assert that nothing was written. Faults (5xx, rate limits, a
write made and its answer lost) are queued with ``server.fail_next(...)``.

The fidelity rule: every JSON body the server sends must validate against the schema GitHub's
official OpenAPI description gives that operation and status (``ghschema.response_errors``,
data in ``tests/schemas/``); a body that does not is recorded and fails the test that caused it
when the server stops. Behaviour follows GitHub's too: ``GET /pulls`` lists
``pull-request-simple`` objects (no ``merged``), 422s carry ``errors[{resource, code, field,
message}]``, ``updated_at`` moves on every write, ``/pulls/{n}/commits`` stops at 250, an App
installation token (``ghs_``) is refused ``GET /user``, a run keeps every attempt's artifacts.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ghschema import check_event, response_errors

TS = "2026-10-12T10:00:00Z"
WRITE_METHODS = {"POST", "PATCH", "PUT", "DELETE"}
# GET /pulls/{n}/commits lists a PR's first 250 commits, never more (GitHub's documented cap).
MAX_PR_COMMITS = 250
DROP = 0  # fail_next's status for a connection closed before any answer
STALL = -1  # stall_next: the request is read and never answered (until the server stops)
FLOOD = -2  # flood_next: a 200 whose JSON body never ends (until the client hangs up)


@dataclass
class Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    headers: dict[str, str]
    body: dict[str, Any]
    times: int
    apply: bool = False  # make the write, then answer with the fault (a lost response)
    declared: bool = False  # FLOOD: the body's huge length declared in Content-Length
    pace: float = 0.0  # FLOOD: seconds between two bytes (a trickle under the read timeout)
    # A change made to the real answer (already checked against GitHub's schema) before it is
    # sent: the wrong shape a test gives the client on purpose, never held to the schema.
    mangle: Any = None


@dataclass
class Request:
    method: str
    path: str
    body: Any
    at: float
    auth: str | None


@dataclass
class FakeRepo:
    full_name: str
    default_branch: str = "main"
    fork: bool = False
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    runs: dict[int, dict[str, Any]] = field(default_factory=dict)
    artifacts: dict[int, dict[str, Any]] = field(default_factory=dict)
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)  # numbers shared with pulls


class GitHubModel:
    """The state behind the server; ids are global like GitHub's."""

    def __init__(self) -> None:
        self.repos: dict[str, FakeRepo] = {}
        self.users: dict[str, dict[str, Any]] = {}
        self.tokens: dict[str, str] = {}  # token -> login
        self.blobs: dict[int, bytes] = {}
        self.log: list[Request] = []
        self.faults: list[Fault] = []
        self._ids = itertools.count(1000)
        self._clock = datetime.strptime(TS, _STAMP).replace(tzinfo=UTC)
        self._user_ids: dict[str, int] = {}
        self.app_logins: set[str] = set()  # "<slug>[bot]" logins of App installation tokens
        self.orgs: set[str] = set()  # owners that are organizations (their forks: no fork_collab)
        self.git_dirs: dict[str, Path] = {}  # repo -> its bare git, when a test has one
        self._numbers: dict[str, Iterator[int]] = {}
        self.base = ""
        # Every JSON body sent that is not what GitHub sends for that operation and status
        # (``ghschema.response_errors``); GitHubServer fails the test that caused one.
        self.violations: list[str] = []
        self.relative_redirects = False  # HTTP allows a relative Location; GitHub sends absolute
        self.lock = threading.RLock()
        self.released = threading.Event()  # set when the server stops: stalled answers end
        self.flooded = 0  # bytes of FLOOD bodies sent before their clients hung up
        # (method, path regex, fn): fn(model) runs right after a matching request was served,
        # as another job writing in between this job's requests would.
        self.after: list[tuple[str, re.Pattern[str], Any]] = []

    # -- setup helpers used by tests -------------------------------------------------------

    def repo(self, full_name: str, default_branch: str = "main") -> FakeRepo:
        if full_name not in self.repos:
            self.repos[full_name] = FakeRepo(full_name, default_branch)
            self._numbers[full_name] = itertools.count(1)
        return self.repos[full_name]

    def add_token(self, token: str, login: str) -> None:
        """``token`` authenticates as ``login``; a ``ghs_`` token is an App installation's
        (or Actions' ``GITHUB_TOKEN``), which GitHub refuses ``GET /user``."""
        self.tokens[token] = login
        if token.startswith("ghs_"):
            self.app_logins.add(login)

    def next_id(self) -> int:
        return next(self._ids)

    def add_pull(
        self,
        repo: str,
        *,
        head: str,
        base: str = "main",
        title: str = "PR",
        body: str = "",
        user: str = "author",
        commits: list[str] | None = None,
        labels: list[str] | None = None,
        head_repo: str | None = None,
        maintainer_can_modify: bool = False,
        number: int | None = None,
        base_sha: str = "0" * 40,
    ) -> dict[str, Any]:
        fake = self.repo(repo)
        number = number or next(self._numbers[repo])
        commits = list(commits or [f"{number:040x}"])
        made = self.now()
        pull = {
            "number": number,
            "title": title,
            "body": body,
            "state": "open",
            "merged": False,
            "user": user,
            "head_ref": head,
            "head_repo": head_repo or repo,
            "base_ref": base,
            "base_sha": base_sha,  # the base branch's commit GitHub compares the head with
            "commits": commits,
            "labels": list(labels or []),
            "maintainer_can_modify": maintainer_can_modify,
            "created_at": made,
            "updated_at": made,
        }
        fake.pulls[number] = pull
        return pull

    def add_comment(
        self,
        repo: str,
        number: int,
        body: str,
        *,
        user: str = "maintainer",
        association: str = "MEMBER",
        created_at: str = TS,
    ) -> dict[str, Any]:
        self.seen(created_at)
        comment = {
            "id": self.next_id(),
            "issue": number,
            "body": body,
            "user": user,
            "author_association": association,
            "created_at": created_at,
            "updated_at": created_at,
            "reactions": [],
        }
        fake = self.repo(repo)
        fake.comments[comment["id"]] = comment
        if number in fake.pulls:  # activity on the PR: GitHub moves its updated_at
            pull = fake.pulls[number]
            pull["updated_at"] = max(pull["updated_at"], created_at)
        return comment

    def add_run(
        self,
        repo: str,
        run_id: int,
        *,
        head_sha: str,
        head_branch: str = "feature",
        event: str = "pull_request",
        path: str = ".github/workflows/run-sweep.yml",
        status: str = "completed",
        conclusion: str = "success",
        created_at: str = TS,
        artifacts: dict[str, bytes] | None = None,
        expired: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        fake = self.repo(repo)
        self.seen(created_at)
        run: dict[str, Any] = {
            "id": run_id,
            "event": event,
            "path": path,
            "status": status,
            "conclusion": conclusion,
            "head_sha": head_sha,
            "head_branch": head_branch,
            "created_at": created_at,
            "attempts": 1,
            "artifacts": [],
        }
        fake.runs[run_id] = run
        self._upload(fake, run, artifacts or {}, expired)
        return run

    def rerun(
        self,
        repo: str,
        run_id: int,
        *,
        conclusion: str = "success",
        artifacts: dict[str, bytes] | None = None,
    ) -> dict[str, Any]:
        """A new attempt of the run (same id, ``run_attempt`` + 1). As on GitHub, the run's
        artifact list keeps what earlier attempts uploaded next to the new attempt's; the
        earlier attempt keeps its own conclusion under ``/attempts/{n}``."""
        fake = self.repo(repo)
        run = fake.runs[run_id]
        run["attempts"] += 1
        run["status"], run["conclusion"] = "completed", conclusion
        self._upload(fake, run, artifacts or {}, ())
        return run

    def _upload(
        self, fake: FakeRepo, run: dict[str, Any], artifacts: dict[str, bytes], expired: tuple
    ) -> None:
        for name, data in artifacts.items():
            art_id = self.next_id()
            self.blobs[art_id] = data
            fake.artifacts[art_id] = {
                "id": art_id,
                "name": name,
                "expired": name in expired,
                "size": len(data),
                "run": run["id"],
                "attempt": run["attempts"],
            }
            run["artifacts"].append(art_id)

    def add_issue(
        self,
        repo: str,
        *,
        title: str,
        body: str = "",
        user: str = "author",
        labels: list[str] | None = None,
        state: str = "open",
    ) -> dict[str, Any]:
        number = next(self._numbers[repo])
        issue = {
            "number": number,
            "title": title,
            "body": body,
            "user": user,
            "labels": list(labels or []),
            "state": state,
            "state_reason": None if state == "open" else "completed",
            "updated_at": TS,
        }
        self.repo(repo).issues[number] = issue
        return issue

    def comments_on(self, repo: str, number: int) -> list[dict[str, Any]]:
        return [c for c in self.repo(repo).comments.values() if c["issue"] == number]

    def fail_next(
        self,
        method: str,
        path_regex: str,
        status: int,
        *,
        headers: dict[str, str] | None = None,
        message: str = "error",
        times: int = 1,
        apply: bool = False,
    ) -> None:
        """Answer the next ``times`` matching requests with ``status`` (``DROP``: close the
        connection without answering); ``apply``: the request is carried out first (GitHub
        made the write, the answer was lost on the way back)."""
        self.faults.append(
            Fault(
                method,
                re.compile(path_regex),
                status,
                headers or {},
                self.error(message, status=str(status)),
                times,
                apply,
            )
        )

    def stall_next(self, method: str, path_regex: str, *, times: int = 1) -> None:
        """Read the next ``times`` matching requests and never answer them: an API that does
        not answer (the connection stays open until the server stops)."""
        self.faults.append(Fault(method, re.compile(path_regex), STALL, {}, {}, times))

    def flood_next(
        self, method: str, path_regex: str, *, times: int = 1, declared: bool = False
    ) -> None:
        """Answer the next ``times`` matching requests with a 200 whose JSON body never ends
        (bytes until the client hangs up; ``declared``: a length of 2 GiB is announced in
        ``Content-Length``, else none is and the body ends with the connection).
        ``flooded`` counts the bytes sent."""
        self.faults.append(
            Fault(method, re.compile(path_regex), FLOOD, {}, {}, times, declared=declared)
        )

    def trickle_next(self, method: str, path_regex: str, *, every: float) -> None:
        """Answer the next matching request with a 200 whose body comes one byte every
        ``every`` seconds, without end: each read is quicker than a read timeout."""
        self.faults.append(Fault(method, re.compile(path_regex), FLOOD, {}, {}, 1, pace=every))

    def mangle_next(self, method: str, path_regex: str, change: Any, *, times: int = 1) -> None:
        """Answer the next ``times`` matching requests as usual, then ``change(body)`` (it
        returns the body to send, or bytes: a body that is not JSON): a field of the wrong
        shape, which GitHub never sends and
        the client must refuse by name. The answer is checked against the schema before the
        change, and not after."""
        self.faults.append(Fault(method, re.compile(path_regex), 200, {}, {}, times, mangle=change))

    def after_next(self, method: str, path_regex: str, hook: Any) -> None:
        """Run ``hook(model)`` once, right after the next matching request was answered."""
        self.after.append((method, re.compile(path_regex), hook))

    def writes(self) -> list[Request]:
        return [r for r in self.log if r.method in WRITE_METHODS]

    # -- JSON shapes (GitHub's, as tests/schemas holds them) ---------------------------------

    def now(self) -> str:
        """The clock: a second later on every call, and never before a time a test gave, so
        each write gets its own ``updated_at`` as on GitHub."""
        self._clock += timedelta(seconds=1)
        return self._clock.strftime(_STAMP)

    def seen(self, stamp: str) -> None:
        """A time a test set (a comment's, a run's): the clock goes on from there."""
        self._clock = max(self._clock, datetime.strptime(stamp, _STAMP).replace(tzinfo=UTC))

    def user_id(self, login: str) -> int:
        return self._user_ids.setdefault(login, 9_000_000 + len(self._user_ids))

    def _user(self, login: str) -> dict[str, Any]:
        uid = self.user_id(login)
        url = f"{self.base}/users/{login}"
        return {
            "login": login,
            "id": uid,
            "node_id": f"U_{uid}",
            "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4",
            "gravatar_id": "",
            "url": url,
            "html_url": f"https://github.com/{login}",
            "followers_url": f"{url}/followers",
            "following_url": f"{url}/following{{/other_user}}",
            "gists_url": f"{url}/gists{{/gist_id}}",
            "starred_url": f"{url}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{url}/subscriptions",
            "organizations_url": f"{url}/orgs",
            "repos_url": f"{url}/repos",
            "events_url": f"{url}/events{{/privacy}}",
            "received_events_url": f"{url}/received_events",
            # An App's installation acts as "<slug>[bot]", a user of type Bot.
            "type": "Bot" if login.endswith("[bot]") else "User",
            "user_view_type": "public",
            "site_admin": False,
        }

    def private_user(self, login: str) -> dict[str, Any]:
        """``GET /user``: the token's own account, with its private counts."""
        return {
            **self._user(login),
            "user_view_type": "private",
            **dict.fromkeys(("name", "company", "blog", "location", "email", "bio"), None),
            "hireable": None,
            **dict.fromkeys(("public_repos", "public_gists", "followers", "following"), 0),
            "created_at": TS,
            "updated_at": TS,
            **dict.fromkeys(
                ("private_gists", "total_private_repos", "owned_private_repos", "disk_usage"), 0
            ),
            "collaborators": 0,
            "two_factor_authentication": True,
        }

    def repo_json(self, fake: FakeRepo) -> dict[str, Any]:
        owner, name = fake.full_name.split("/")
        api = f"{self.base}/repos/{fake.full_name}"
        rid = abs(zlib.crc32(fake.full_name.encode()))
        urls = {f"{part}_url": f"{api}/{path}" for part, path in _REPO_URLS.items()}
        return {
            "id": rid,
            "node_id": f"R_{rid}",
            "name": name,
            "full_name": fake.full_name,
            "owner": self._user(owner),
            "private": False,
            "html_url": f"https://github.com/{fake.full_name}",
            "description": None,
            "fork": fake.fork,
            "url": api,
            **urls,
            "git_url": f"git://github.com/{fake.full_name}.git",
            "ssh_url": f"git@github.com:{fake.full_name}.git",
            "clone_url": f"https://github.com/{fake.full_name}.git",
            "svn_url": f"https://github.com/{fake.full_name}",
            "mirror_url": None,
            "homepage": None,
            "language": "Python",
            "size": 1,
            **dict.fromkeys(
                ("forks", "forks_count", "open_issues", "open_issues_count", "stargazers_count"), 0
            ),
            "watchers": 0,
            "watchers_count": 0,
            **dict.fromkeys(("has_issues", "has_projects", "has_downloads", "has_wiki"), True),
            "has_pages": False,
            "has_discussions": False,
            "topics": [],
            "visibility": "public",
            "archived": False,
            "disabled": False,
            "license": None,
            "default_branch": fake.default_branch,
            "created_at": TS,
            "updated_at": TS,
            "pushed_at": TS,
        }

    def pull_json(
        self, fake: FakeRepo, pull: dict[str, Any], *, simple: bool = False
    ) -> dict[str, Any]:
        """A PR as ``GET /pulls/{n}`` answers it (``pull-request``), or as the list answers it
        (``simple``: ``pull-request-simple``, with no ``merged`` and no counts: a merge shows
        only as ``merged_at``)."""
        head_repo = self.repo(pull["head_repo"])
        number = pull["number"]
        api = f"{self.base}/repos/{fake.full_name}"
        html = f"https://github.com/{fake.full_name}/pull/{number}"
        merged_at = closed_at = None
        if pull["state"] == "closed":
            closed_at = pull.setdefault("closed_at", pull["updated_at"])
            if pull["merged"]:
                merged_at = pull.setdefault("merged_at", closed_at)
        links = {
            "self": f"{api}/pulls/{number}",
            "html": html,
            "issue": f"{api}/issues/{number}",
            "comments": f"{api}/issues/{number}/comments",
            "review_comments": f"{api}/pulls/{number}/comments",
            "review_comment": f"{api}/pulls/comments{{/number}}",
            "commits": f"{api}/pulls/{number}/commits",
            "statuses": f"{api}/statuses/{pull['commits'][-1]}",
        }
        data = {
            "url": links["self"],
            "id": 5_000_000 + number,
            "node_id": f"PR_{number}",
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": links["issue"],
            "commits_url": links["commits"],
            "review_comments_url": links["review_comments"],
            "review_comment_url": links["review_comment"],
            "comments_url": links["comments"],
            "statuses_url": links["statuses"],
            "number": number,
            "state": pull["state"],
            "locked": False,
            "title": pull["title"],
            "user": self._user(pull["user"]),
            "body": pull["body"] or None,
            "labels": [self._label(fake, name) for name in pull["labels"]],
            "milestone": None,
            "active_lock_reason": None,
            "created_at": pull["created_at"],
            "updated_at": pull["updated_at"],
            "closed_at": closed_at,
            "merged_at": merged_at,
            "merge_commit_sha": f"{number:x}".rjust(40, "e") if merged_at else None,
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "head": self._ref(head_repo, pull["head_ref"], pull["commits"][-1]),
            "base": self._ref(fake, pull["base_ref"], pull.get("base_sha", "0" * 40)),
            "_links": {k: {"href": v} for k, v in links.items()},
            "author_association": "CONTRIBUTOR" if pull["user"] != "maintainer" else "MEMBER",
            "auto_merge": None,
            "draft": False,
        }
        if simple:
            return data
        return {
            **data,
            "merged": pull["merged"],
            "mergeable": None if pull["state"] == "closed" else True,
            "rebaseable": None,
            "mergeable_state": "clean" if pull["state"] == "open" else "unknown",
            "merged_by": self._user("maintainer") if merged_at else None,
            "comments": len(self.comments_on(fake.full_name, number)),
            "review_comments": 0,
            "maintainer_can_modify": pull["maintainer_can_modify"],
            "commits": len(pull["commits"]),
            "additions": 1,
            "deletions": 0,
            "changed_files": 1,
        }

    def _ref(self, fake: FakeRepo, ref: str, sha: str) -> dict[str, Any]:
        owner = fake.full_name.split("/")[0]
        return {
            "label": f"{owner}:{ref}",
            "ref": ref,
            "sha": sha,
            "user": self._user(owner),
            "repo": self.repo_json(fake),
        }

    def _label(self, fake: FakeRepo, name: str) -> dict[str, Any]:
        lid = abs(zlib.crc32(name.encode()))
        return {
            "id": lid,
            "node_id": f"LA_{lid}",
            "url": f"{self.base}/repos/{fake.full_name}/labels/{name}",
            "name": name,
            "description": "",  # a string in pull-request-simple, where null is not allowed
            "color": "ededed",
            "default": False,
        }

    def comment_json(self, fake: FakeRepo, comment: dict[str, Any]) -> dict[str, Any]:
        api = f"{self.base}/repos/{fake.full_name}"
        kind = "pull" if comment["issue"] in fake.pulls else "issues"
        return {
            "id": comment["id"],
            "node_id": f"IC_{comment['id']}",
            "url": f"{api}/issues/comments/{comment['id']}",
            "html_url": f"https://github.com/{fake.full_name}/{kind}/{comment['issue']}"
            f"#issuecomment-{comment['id']}",
            "body": comment["body"],
            "user": self._user(comment["user"]),
            "created_at": comment["created_at"],
            "updated_at": comment["updated_at"],
            "issue_url": f"{api}/issues/{comment['issue']}",
            "author_association": comment["author_association"],
        }

    def listed_issue_json(self, fake: FakeRepo, issue: dict[str, Any]) -> dict[str, Any]:
        """An issue of ``FakeRepo.issues`` as ``/issues`` answers it (``issue_json`` is a PR as
        the issue an event carries)."""
        number = issue["number"]
        url = f"{self.base}/repos/{fake.full_name}/issues/{number}"
        closed = issue["state"] == "closed"
        return {
            "id": 10**6 + number,
            "node_id": f"I_{number}",
            "url": url,
            "repository_url": f"{self.base}/repos/{fake.full_name}",
            "labels_url": f"{url}/labels{{/name}}",
            "comments_url": f"{url}/comments",
            "events_url": f"{url}/events",
            "html_url": f"https://github.com/{fake.full_name}/issues/{number}",
            "number": number,
            "state": issue["state"],
            "state_reason": issue["state_reason"],
            "title": issue["title"],
            "body": issue["body"],
            "user": self._user(issue["user"]),
            "labels": [self._label(fake, name) for name in issue["labels"]],
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "locked": False,
            "active_lock_reason": None,
            "comments": len(self.comments_on(fake.full_name, number)),
            "closed_at": issue["updated_at"] if closed else None,
            "created_at": TS,
            "updated_at": issue["updated_at"],
            "author_association": "NONE",
        }

    def pull_as_issue_json(self, fake: FakeRepo, pull: dict[str, Any]) -> dict[str, Any]:
        """A pull request as GitHub lists it among a repository's issues."""
        as_issue = {**pull, "state_reason": None, "updated_at": TS}
        out = self.listed_issue_json(fake, as_issue)
        out["pull_request"] = {
            "url": f"{self.base}/repos/{fake.full_name}/pulls/{pull['number']}",
            "html_url": f"https://github.com/{fake.full_name}/pull/{pull['number']}",
        }
        return out

    def run_json(
        self, fake: FakeRepo, run: dict[str, Any], attempt: int | None = None
    ) -> dict[str, Any]:
        """A workflow run; ``attempt``: as that attempt was (``/attempts/{n}``), else the
        newest attempt, which is what the run itself shows."""
        api = f"{self.base}/repos/{fake.full_name}/actions/runs/{run['id']}"
        shown = attempt or run["attempts"]
        repo = self.repo_json(fake)
        minimal = {k: v for k, v in repo.items() if k in _MINIMAL_REPO}
        return {
            "id": run["id"],
            "node_id": f"WFR_{run['id']}",
            "name": "Run Sweep",
            "display_title": "Run Sweep",
            "run_number": run["id"] % 10_000,
            "run_attempt": shown,
            "event": run["event"],
            "path": run["path"],
            "workflow_id": 77,
            "status": run["status"] if shown == run["attempts"] else "completed",
            "conclusion": run["conclusion"] if shown == run["attempts"] else "failure",
            "head_sha": run["head_sha"],
            "head_branch": run["head_branch"],
            "head_commit": None,
            "head_repository": minimal,
            "repository": minimal,
            "pull_requests": [],
            "created_at": run.get("created_at", TS),
            "updated_at": run.get("created_at", TS),
            "run_started_at": run.get("created_at", TS),
            "url": api + (f"/attempts/{attempt}" if attempt else ""),
            "html_url": f"https://github.com/{fake.full_name}/actions/runs/{run['id']}",
            "jobs_url": f"{api}/jobs",
            "logs_url": f"{api}/logs",
            "check_suite_url": f"{self.base}/repos/{fake.full_name}/check-suites/{run['id']}",
            "artifacts_url": f"{api}/artifacts",
            "cancel_url": f"{api}/cancel",
            "rerun_url": f"{api}/rerun",
            "previous_attempt_url": f"{api}/attempts/{shown - 1}" if shown > 1 else None,
            "workflow_url": f"{self.base}/repos/{fake.full_name}/actions/workflows/77",
        }

    def artifact_json(self, fake: FakeRepo, art: dict[str, Any]) -> dict[str, Any]:
        api = f"{self.base}/repos/{fake.full_name}/actions/artifacts/{art['id']}"
        run = fake.runs[art["run"]]
        return {
            "id": art["id"],
            "node_id": f"MDg6QXJ0aWZhY3Q{art['id']}",
            "name": art["name"],
            "size_in_bytes": art["size"],
            "url": api,
            "archive_download_url": f"{api}/zip",
            "expired": art["expired"],
            "created_at": TS,
            "expires_at": "2027-01-10T10:00:00Z",
            "updated_at": TS,
            "digest": None,
            "workflow_run": {
                "id": run["id"],
                "repository_id": abs(zlib.crc32(fake.full_name.encode())),
                "head_repository_id": abs(zlib.crc32(fake.full_name.encode())),
                "head_branch": run["head_branch"],
                "head_sha": run["head_sha"],
            },
        }

    def reaction_json(self, reaction: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": reaction["id"],
            "node_id": f"REA_{reaction['id']}",
            "user": self._user(reaction["user"]),
            "content": reaction["content"],
            "created_at": TS,
        }

    def commit_json(self, fake: FakeRepo, sha: str) -> dict[str, Any]:
        api = f"{self.base}/repos/{fake.full_name}"
        person = {"name": "author", "email": "author@example.com", "date": TS}
        return {
            "url": f"{api}/commits/{sha}",
            "sha": sha,
            "node_id": f"C_{sha[:12]}",
            "html_url": f"https://github.com/{fake.full_name}/commit/{sha}",
            "comments_url": f"{api}/commits/{sha}/comments",
            "commit": {
                "url": f"{api}/git/commits/{sha}",
                "author": person,
                "committer": person,
                "message": "c",
                "comment_count": 0,
                "tree": {"sha": "f" * 40, "url": f"{api}/git/trees/{'f' * 40}"},
            },
            "author": None,
            "committer": None,
            "parents": [],
        }

    # -- webhook payloads (GitHub's event shapes, each checked by ghschema.check_event) --------

    def issue_comment_event(
        self,
        repo: str,
        comment: dict[str, Any],
        action: str = "created",
        *,
        association: str | None = None,
    ) -> dict[str, Any]:
        """``issue_comment`` as GitHub sends it for ``comment`` (on a PR) as it is now;
        ``association``: what the event says of the author, when a test makes it differ."""
        fake = self.repo(repo)
        data = {
            **self.comment_json(fake, comment),
            "performed_via_github_app": None,
            "reactions": self._rollup(fake, f"issues/comments/{comment['id']}"),
        }
        if association is not None:
            data["author_association"] = association
        payload: dict[str, Any] = {
            "action": action,
            "issue": self.issue_json(fake, comment["issue"]),
            "comment": data,
            "repository": self.repo_json(fake),
            "sender": self._user(comment["user"]),
        }
        if action == "edited":
            payload["changes"] = {"body": {"from": comment.get("previous_body", "")}}
        return check_event("issue_comment", payload)

    def pull_request_event(
        self, repo: str, number: int, action: str, *, sender: str | None = None
    ) -> dict[str, Any]:
        """``pull_request`` as GitHub sends it for PR ``number`` as it is now."""
        fake = self.repo(repo)
        pull = fake.pulls[number]
        payload: dict[str, Any] = {
            "action": action,
            "number": number,
            "pull_request": self.pull_json(fake, pull),
            "repository": self.repo_json(fake),
            "sender": self._user(sender or pull["user"]),
        }
        if action == "synchronize":
            commits = pull["commits"]
            payload["before"] = commits[-2] if len(commits) > 1 else "0" * 40
            payload["after"] = commits[-1]
        if action == "edited":
            payload["changes"] = {"title": {"from": pull["title"]}}
        return check_event("pull_request", payload)

    def repository_dispatch_event(
        self, repo: str, event_type: str, client_payload: dict[str, Any], *, sender: str
    ) -> dict[str, Any]:
        """``repository_dispatch``: ``event_type`` arrives as the ``action``."""
        fake = self.repo(repo)
        payload = {
            "action": event_type,
            "branch": fake.default_branch,
            "client_payload": client_payload,
            "repository": self.repo_json(fake),
            "sender": self._user(sender),
            "installation": {"id": 4242, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI0Mg=="},
        }
        return check_event("repository_dispatch", payload)

    def workflow_dispatch_event(
        self, repo: str, inputs: dict[str, Any], *, sender: str, workflow: str
    ) -> dict[str, Any]:
        """``workflow_dispatch``: the inputs as the form or the API gave them."""
        fake = self.repo(repo)
        payload = {
            "inputs": inputs,
            "ref": f"refs/heads/{fake.default_branch}",
            "repository": self.repo_json(fake),
            "sender": self._user(sender),
            "workflow": workflow,
        }
        return check_event("workflow_dispatch", payload)

    def issue_json(self, fake: FakeRepo, number: int) -> dict[str, Any]:
        """A PR as the issue it also is (what an ``issue_comment`` event carries)."""
        pull = fake.pulls[number]
        full = self.pull_json(fake, pull)
        api = f"{self.base}/repos/{fake.full_name}"
        return {
            "url": f"{api}/issues/{number}",
            "repository_url": api,
            "labels_url": f"{api}/issues/{number}/labels{{/name}}",
            "comments_url": f"{api}/issues/{number}/comments",
            "events_url": f"{api}/issues/{number}/events",
            "html_url": full["html_url"],
            "id": 7_000_000 + number,
            "node_id": f"I_{number}",
            "number": number,
            "title": pull["title"],
            "user": full["user"],
            "labels": full["labels"],
            "state": pull["state"],
            "locked": False,
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "comments": len(self.comments_on(fake.full_name, number)),
            "created_at": full["created_at"],
            "updated_at": full["updated_at"],
            "closed_at": full["closed_at"],
            "author_association": full["author_association"],
            "active_lock_reason": None,
            "body": full["body"],
            "reactions": self._rollup(fake, f"issues/{number}"),
            "timeline_url": f"{api}/issues/{number}/timeline",
            "performed_via_github_app": None,
            "pull_request": {
                "url": full["url"],
                "html_url": full["html_url"],
                "diff_url": full["diff_url"],
                "patch_url": full["patch_url"],
                "merged_at": full["merged_at"],
            },
        }

    def _rollup(self, fake: FakeRepo, path: str) -> dict[str, Any]:
        contents = ("+1", "-1", "laugh", "confused", "heart", "hooray", "eyes", "rocket")
        return {
            "url": f"{self.base}/repos/{fake.full_name}/{path}/reactions",
            "total_count": 0,
            **dict.fromkeys(contents, 0),
        }

    def error(self, message: str, **extra: Any) -> dict[str, Any]:
        """GitHub's error body (``basic-error``; a 422 adds ``errors``)."""
        return {
            "message": message,
            "documentation_url": "https://docs.github.com/rest",
            **extra,
        }

    def validation_failed(
        self, resource: str, code: str, field: str | None = None, message: str | None = None
    ) -> dict[str, Any]:
        """A 422 as GitHub sends it: ``errors[{resource, code, field[, message]}]``; ``code``
        is ``missing``, ``missing_field``, ``invalid``, ``already_exists``, ``unprocessable``
        or ``custom`` (with a ``message``)."""
        error: dict[str, Any] = {"resource": resource, "code": code}
        if field is not None:
            error["field"] = field
        if message is not None:
            error["message"] = message
        return self.error("Validation Failed", errors=[error])


_STAMP = "%Y-%m-%dT%H:%M:%SZ"


def _git(git_dir: Path, *args: str) -> str | None:
    """A read-only git command in a test's repository; None when git says no."""
    done = subprocess.run(["git", *args], cwd=git_dir, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


# A repository's URL templates, as GitHub spells them (relative to its API URL).
_REPO_URLS = {
    "archive": "{archive_format}{/ref}",
    "assignees": "assignees{/user}",
    "blobs": "git/blobs{/sha}",
    "branches": "branches{/branch}",
    "collaborators": "collaborators{/collaborator}",
    "comments": "comments{/number}",
    "commits": "commits{/sha}",
    "compare": "compare/{base}...{head}",
    "contents": "contents/{+path}",
    "contributors": "contributors",
    "deployments": "deployments",
    "downloads": "downloads",
    "events": "events",
    "forks": "forks",
    "git_commits": "git/commits{/sha}",
    "git_refs": "git/refs{/sha}",
    "git_tags": "git/tags{/sha}",
    "hooks": "hooks",
    "issue_comment": "issues/comments{/number}",
    "issue_events": "issues/events{/number}",
    "issues": "issues{/number}",
    "keys": "keys{/key_id}",
    "labels": "labels{/name}",
    "languages": "languages",
    "merges": "merges",
    "milestones": "milestones{/number}",
    "notifications": "notifications{?since,all,participating}",
    "pulls": "pulls{/number}",
    "releases": "releases{/id}",
    "stargazers": "stargazers",
    "statuses": "statuses/{sha}",
    "subscribers": "subscribers",
    "subscription": "subscription",
    "tags": "tags",
    "teams": "teams",
    "trees": "git/trees{/sha}",
}
# What a ``minimal-repository`` (a run's repository) carries of the full one.
_MINIMAL_REPO = {
    "id", "node_id", "name", "full_name", "owner", "private", "html_url", "description",
    "fork", "url", *(f"{part}_url" for part in _REPO_URLS),
}  # fmt: skip


class _Handler(BaseHTTPRequestHandler):
    model: GitHubModel
    protocol_version = "HTTP/1.1"
    # Headers and body go out as two writes; without TCP_NODELAY the body waits for the
    # client's delayed ACK (~40 ms a response on Linux), most of the bot tests' time.
    disable_nagle_algorithm = True
    _mangle: Any = None  # mangle_next's change of the answer being sent

    def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
        return

    def _any(self) -> None:
        self._dispatch(self.command)  # the request's method, as http.server read it

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _any

    def _send(
        self,
        status: int,
        payload: Any = None,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> None:
        data = (
            raw if raw is not None else (b"" if payload is None else json.dumps(payload).encode())
        )
        if raw is None and payload is not None and not self._request[1].startswith("/_blob/"):
            method, path = self._request
            self.model.violations.extend(response_errors(method, path, status, payload))
        if self._mangle is not None:  # bytes: a body that is not even JSON
            payload, self._mangle = self._mangle(payload), None
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header(
            "Content-Type", "application/zip" if raw is not None else "application/json"
        )
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _dispatch(self, method: str) -> None:
        model = self.model
        parts = urlsplit(self.path)
        path = parts.path
        self._request = (method, path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        auth = self.headers.get("Authorization")
        endless: Fault | None = None
        with model.lock:
            model.log.append(Request(method, path, body, time.monotonic(), auth))
            for fault in model.faults:
                if fault.times > 0 and fault.method == method and fault.pattern.search(path):
                    fault.times -= 1
                    if fault.status in (STALL, FLOOD):
                        endless = fault  # served outside the lock: other requests go on
                        break
                    if fault.mangle is not None:
                        self._mangle = fault.mangle
                        break
                    if fault.apply:
                        token = auth.split(" ", 1)[1] if auth and " " in auth else ""
                        self._route(method, path, query, body, model.tokens[token])
                    if fault.status == DROP:
                        self.close_connection = True  # closed with no answer at all
                        return
                    self._send(fault.status, fault.body, fault.headers)
                    return
            if endless is None and path.startswith("/_blob/"):
                art_id = int(path.rsplit("/", 1)[1])
                self._send(200, raw=model.blobs[art_id])
                return
            if endless is None:
                self._serve(method, path, query, body, auth)
        if endless is not None:
            self._endless(endless)

    def _serve(self, method: str, path: str, query: dict[str, str], body: Any, auth: Any) -> None:
        model = self.model
        token = auth.split(" ", 1)[1] if auth and " " in auth else None
        login = model.tokens.get(token or "")
        if login is None:
            self._send(401, model.error("Bad credentials", status="401"))
            return
        try:
            status, payload, headers = self._route(method, path, query, body, login)
        except KeyError:
            status, payload, headers = 404, model.error("Not Found", status="404"), {}
        self._send(status, payload, headers)
        for verb, pattern, hook in list(model.after):
            if verb == method and pattern.search(path):
                model.after.remove((verb, pattern, hook))
                hook(model)

    def _endless(self, fault: Fault) -> None:
        """A STALL (no answer until the server stops) or a FLOOD (a body without end)."""
        self.close_connection = True
        if fault.status == STALL:
            self.model.released.wait(120)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if fault.declared:
            self.send_header("Content-Length", str(2 << 30))
        self.send_header("Connection", "close")
        self.end_headers()
        chunk = b" " if fault.pace else b'"' + b"x" * 65534 + b'",'
        try:
            self.wfile.write(b"[")
            while self.model.flooded < 8 << 30 and not self.model.released.is_set():
                self.wfile.write(chunk)
                self.model.flooded += len(chunk)
                if fault.pace:
                    self.wfile.flush()
                    self.model.released.wait(fault.pace)
        except OSError:
            return  # the client hung up: what it refused

    def _route(
        self, method: str, path: str, query: dict[str, str], body: Any, login: str
    ) -> tuple[int, Any, dict[str, str]]:
        model = self.model
        if path == "/user" and method == "GET":
            if login in model.app_logins:
                # An App installation token is no user: GitHub refuses it /user.
                return 403, model.error("Resource not accessible by integration", status="403"), {}
            return 200, model.private_user(login), {}
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)(/.*)?", path)
        if not m:
            raise KeyError(path)
        fake = model.repos[m.group(1)]
        rest = m.group(2) or ""
        routes = [
            ("GET", r"/pulls", lambda: self._list_pulls(fake, query)),
            ("POST", r"/pulls", lambda: self._create_pull(fake, body, login)),
            ("GET", r"/pulls/(\d+)", lambda n: (200, model.pull_json(fake, fake.pulls[int(n)]))),
            ("PATCH", r"/pulls/(\d+)", lambda n: self._update_pull(fake, int(n), body)),
            ("GET", r"/pulls/(\d+)/commits", lambda n: self._commits(fake, int(n), query)),
            ("GET", r"/commits", lambda: self._history(fake, query)),
            (
                "GET",
                r"/issues/(\d+)/comments",
                lambda n: (
                    200,
                    [
                        model.comment_json(fake, c)
                        for c in model.comments_on(fake.full_name, int(n))
                    ],
                ),
            ),
            (
                "POST",
                r"/issues/(\d+)/comments",
                lambda n: self._create_comment(fake, int(n), body, login),
            ),
            (
                "GET",
                r"/issues/comments/(\d+)",
                lambda i: (200, model.comment_json(fake, fake.comments[int(i)])),
            ),
            ("PATCH", r"/issues/comments/(\d+)", lambda i: self._edit_comment(fake, int(i), body)),
            (
                "DELETE",
                r"/issues/comments/(\d+)",
                lambda i: (204, fake.comments.pop(int(i)) and None),
            ),
            (
                "GET",
                r"/issues/comments/(\d+)/reactions",
                lambda i: (
                    200,
                    [model.reaction_json(r) for r in fake.comments[int(i)]["reactions"]],
                ),
            ),
            (
                "POST",
                r"/issues/comments/(\d+)/reactions",
                lambda i: self._react(fake, int(i), body, login),
            ),
            (
                "DELETE",
                r"/issues/comments/(\d+)/reactions/(\d+)",
                lambda i, r: self._unreact(fake, int(i), int(r)),
            ),
            (
                "GET",
                r"/actions/runs/(\d+)",
                lambda i: (200, model.run_json(fake, fake.runs[int(i)])),
            ),
            (
                "GET",
                r"/actions/runs/(\d+)/attempts/(\d+)",
                lambda i, n: self._attempt(fake, int(i), int(n)),
            ),
            (
                "GET",
                r"/actions/runs/(\d+)/artifacts",
                lambda i: (200, self._artifacts(fake, int(i))),
            ),
            (
                "GET",
                r"/actions/workflows/([^/]+)/runs",
                lambda w: (200, self._runs(fake, w, query)),
            ),
            ("GET", r"/actions/artifacts/(\d+)/zip", lambda i: self._download(fake, int(i))),
            ("GET", r"/issues", lambda: (200, self._list_issues(fake, query))),
            ("POST", r"/issues", lambda: self._create_issue(fake, body, login)),
            (
                "GET",
                r"/issues/(\d+)",
                lambda n: (200, model.listed_issue_json(fake, fake.issues[int(n)])),
            ),
            ("PATCH", r"/issues/(\d+)", lambda n: self._update_issue(fake, int(n), body)),
        ]
        for verb, pattern, handler in routes:
            hit = re.fullmatch(pattern, rest)
            if verb == method and hit:
                result = handler(*hit.groups())
                status, payload, *extra = result
                if method == "GET" and "page" in query and status == 200:
                    payload = _page(payload, int(query["page"]), int(query.get("per_page", 30)))
                return status, payload, (extra[0] if extra else {})
        raise KeyError(f"{method} {path}")

    def _list_pulls(self, fake: FakeRepo, query: dict[str, str]) -> tuple[int, Any]:
        state = query.get("state", "open")
        found = []
        # GitHub lists newest first (sort=created, direction=desc by default).
        for pull in sorted(fake.pulls.values(), key=lambda p: -p["number"]):
            if state != "all" and pull["state"] != state:
                continue
            if "head" in query:
                owner, _, ref = query["head"].partition(":")
                if pull["head_ref"] != ref or pull["head_repo"].split("/")[0] != owner:
                    continue
            if "base" in query and pull["base_ref"] != query["base"]:
                continue
            found.append(self.model.pull_json(fake, pull, simple=True))
        if query.get("sort") == "updated":
            found.sort(key=lambda p: p["updated_at"], reverse=query.get("direction") != "asc")
        return 200, found

    def _commits(self, fake: FakeRepo, number: int, query: dict[str, str]) -> tuple[int, Any]:
        # GitHub lists at most 250 commits of a PR, however many pages are asked for.
        commits = fake.pulls[number]["commits"][:MAX_PR_COMMITS]
        return 200, [self.model.commit_json(fake, sha) for sha in commits]

    def _history(self, fake: FakeRepo, query: dict[str, str]) -> tuple[int, Any]:
        """``GET /commits?sha=X``: X and its ancestors, newest first (the fake knows the
        history its PRs hold)."""
        sha = query["sha"]
        for pull in fake.pulls.values():
            if sha in pull["commits"]:
                mine = pull["commits"][: pull["commits"].index(sha) + 1]
                return 200, [self.model.commit_json(fake, c) for c in reversed(mine)]
        return 404, self.model.error("No commit found for SHA: " + sha, status="404")

    def _create_pull(self, fake: FakeRepo, body: dict[str, Any], login: str) -> tuple[int, Any]:
        model = self.model
        owner, _, ref = body["head"].rpartition(":")
        head_repo = fake.full_name if not owner else self._repo_of_owner(owner, fake)
        if len(body.get("body") or "") > 65536:
            return 422, model.validation_failed(
                "Issue", "custom", "body", "body is too long (maximum is 65536 characters)"
            )
        if head_repo not in model.repos or not self._has_branch(head_repo, ref):
            return 422, model.validation_failed("PullRequest", "invalid", "head")
        for pull in fake.pulls.values():
            if (
                pull["state"] == "open"
                and pull["head_ref"] == ref
                and pull["head_repo"] == head_repo
            ):
                return 422, model.validation_failed(
                    "PullRequest",
                    "custom",
                    None,
                    f"A pull request already exists for {body['head']}.",
                )
        if self._commits_between(head_repo, body["base"], ref) == 0:
            return 422, model.validation_failed(
                "PullRequest",
                "custom",
                None,
                f"No commits between {body['base']} and {body['head']}",
            )
        allow_edits = bool(body.get("maintainer_can_modify", True))
        if allow_edits and head_repo != fake.full_name and owner in model.orgs:
            # Maintainers can be let push only to branches of user-owned forks.
            return 422, model.validation_failed(
                "PullRequest",
                "custom",
                "fork_collab",
                "Fork collab can't be granted by someone without permission",
            )
        pull = model.add_pull(
            fake.full_name,
            head=ref,
            base=body["base"],
            title=body["title"],
            body=body.get("body") or "",
            user=login,
            head_repo=head_repo,
            maintainer_can_modify=allow_edits and head_repo != fake.full_name,
        )
        return 201, model.pull_json(fake, pull)

    def _has_branch(self, repo: str, ref: str) -> bool:
        """Whether ``repo``'s git (when a test registered one) has branch ``ref``."""
        git_dir = self.model.git_dirs.get(repo)
        if git_dir is None:
            return True
        return _git(git_dir, "rev-parse", "--verify", "--quiet", f"refs/heads/{ref}") is not None

    def _commits_between(self, head_repo: str, base: str, ref: str) -> int | None:
        """Commits on ``ref`` not on the base branch (None: no git registered for the repo)."""
        git_dir = self.model.git_dirs.get(head_repo)
        if git_dir is None:
            return None
        out = _git(git_dir, "rev-list", "--count", f"refs/heads/{base}..refs/heads/{ref}")
        return None if out is None else int(out)

    def _repo_of_owner(self, owner: str, fake: FakeRepo) -> str:
        name = fake.full_name.split("/")[1]
        return f"{owner}/{name}"

    def _update_pull(self, fake: FakeRepo, number: int, body: dict[str, Any]) -> tuple[int, Any]:
        pull = fake.pulls[number]
        if len(body.get("body") or "") > 65536:
            return 422, self.model.validation_failed(
                "Issue", "custom", "body", "body is too long (maximum is 65536 characters)"
            )
        for key in ("title", "body", "state"):
            if key in body:
                pull[key] = body[key]
        pull["updated_at"] = self.model.now()
        if pull["state"] == "closed":
            pull.setdefault("closed_at", pull["updated_at"])
        return 200, self.model.pull_json(fake, pull)

    def _list_issues(self, fake: FakeRepo, query: dict[str, str]) -> list[dict[str, Any]]:
        """Issues and pull requests, newest first, as GitHub lists them (filters: state,
        labels (all of them), creator)."""
        state = query.get("state", "open")
        wanted = [x for x in query.get("labels", "").split(",") if x]
        items = [(i, False) for i in fake.issues.values()]
        items += [({**p, "user": p["user"]}, True) for p in fake.pulls.values()]
        out = []
        for item, is_pull in sorted(items, key=lambda x: -x[0]["number"]):
            if state != "all" and item["state"] != state:
                continue
            if any(label not in item["labels"] for label in wanted):
                continue
            if "creator" in query and item["user"] != query["creator"]:
                continue
            out.append(
                self.model.pull_as_issue_json(fake, item)
                if is_pull
                else self.model.listed_issue_json(fake, item)
            )
        return out

    def _create_issue(self, fake: FakeRepo, body: dict[str, Any], login: str) -> tuple[int, Any]:
        if not body.get("title"):
            return 422, {"message": "Validation Failed"}
        if len(body.get("body") or "") > 65536:
            return 422, {
                "message": "Validation Failed",
                "errors": [{"message": "body is too long (maximum is 65536 characters)"}],
            }
        issue = self.model.add_issue(
            fake.full_name,
            title=body["title"],
            body=body.get("body") or "",
            user=login,
            labels=list(body.get("labels") or []),
        )
        return 201, self.model.listed_issue_json(fake, issue)

    def _update_issue(self, fake: FakeRepo, number: int, body: dict[str, Any]) -> tuple[int, Any]:
        issue = fake.issues[number]
        if len(body.get("body") or "") > 65536:
            return 422, {
                "message": "Validation Failed",
                "errors": [{"message": "body is too long (maximum is 65536 characters)"}],
            }
        if body.get("state") not in (None, "open", "closed"):
            return 422, {"message": "Validation Failed"}
        for key in ("title", "body", "state"):
            if key in body:
                issue[key] = body[key]
        if "state" in body:
            issue["state_reason"] = (
                None if body["state"] == "open" else body.get("state_reason") or "completed"
            )
        issue["updated_at"] = "2026-10-12T11:00:00Z"
        return 200, self.model.listed_issue_json(fake, issue)

    def _create_comment(
        self, fake: FakeRepo, number: int, body: dict[str, Any], login: str
    ) -> tuple[int, Any]:
        if number not in fake.pulls and number not in fake.issues:
            raise KeyError(number)
        if len(body["body"]) > 65536:
            return 422, self.model.validation_failed(
                "IssueComment", "custom", "body", "body is too long (maximum is 65536 characters)"
            )
        at = self.model.now()
        comment = self.model.add_comment(
            fake.full_name, number, body["body"], user=login, association="NONE", created_at=at
        )
        # A new comment is activity on the PR: its updated_at moves too.
        fake.pulls[number]["updated_at"] = at
        return 201, self.model.comment_json(fake, comment)

    def _edit_comment(
        self, fake: FakeRepo, comment_id: int, body: dict[str, Any]
    ) -> tuple[int, Any]:
        comment = fake.comments[comment_id]
        comment["body"] = body["body"]
        comment["updated_at"] = self.model.now()
        return 200, self.model.comment_json(fake, comment)

    def _react(
        self, fake: FakeRepo, comment_id: int, body: dict[str, Any], login: str
    ) -> tuple[int, Any]:
        comment = fake.comments[comment_id]
        for reaction in comment["reactions"]:
            if reaction["content"] == body["content"] and reaction["user"] == login:
                return 200, self.model.reaction_json(reaction)
        reaction = {"id": self.model.next_id(), "content": body["content"], "user": login}
        comment["reactions"].append(reaction)
        return 201, self.model.reaction_json(reaction)

    def _unreact(self, fake: FakeRepo, comment_id: int, reaction_id: int) -> tuple[int, Any]:
        comment = fake.comments[comment_id]
        comment["reactions"] = [r for r in comment["reactions"] if r["id"] != reaction_id]
        return 204, None

    def _attempt(self, fake: FakeRepo, run_id: int, attempt: int) -> tuple[int, Any]:
        run = fake.runs[run_id]
        if not 1 <= attempt <= run["attempts"]:
            return 404, self.model.error("Not Found", status="404")
        return 200, self.model.run_json(fake, run, attempt)

    def _artifacts(self, fake: FakeRepo, run_id: int) -> dict[str, Any]:
        # Every attempt's artifacts, as GitHub lists a re-run run's.
        run = fake.runs[run_id]
        arts = [self.model.artifact_json(fake, fake.artifacts[a]) for a in run["artifacts"]]
        return {"total_count": len(arts), "artifacts": arts}

    def _runs(self, fake: FakeRepo, workflow: str, query: dict[str, str]) -> dict[str, Any]:
        runs = [
            self.model.run_json(fake, run)
            # GitHub lists runs newest first (by creation time).
            for run in sorted(
                fake.runs.values(), key=lambda r: (r.get("created_at", TS), r["id"]), reverse=True
            )
            if run["path"].rsplit("/", 1)[-1] == workflow
            and run["head_branch"] == query.get("branch", run["head_branch"])
            and run["event"] == query.get("event", run["event"])
            and query.get("status") in (None, run["status"], run["conclusion"])
        ]
        return {"total_count": len(runs), "workflow_runs": runs}

    def _download(self, fake: FakeRepo, art_id: int) -> tuple[int, Any, dict[str, str]]:
        art = fake.artifacts[art_id]
        if art["expired"]:
            return 410, self.model.error("Artifact has expired", status="410"), {}
        # GitHub answers with a redirect to signed blob storage; the client must not send its
        # token there.
        base = "" if self.model.relative_redirects else self.model.base
        return 302, None, {"Location": f"{base}/_blob/{art_id}"}


def _page(payload: Any, page: int, per_page: int) -> Any:
    start = (page - 1) * per_page
    if isinstance(payload, list):
        return payload[start : start + per_page]
    for key in ("artifacts", "workflow_runs"):
        if isinstance(payload, dict) and key in payload:
            return {**payload, key: payload[key][start : start + per_page]}
    return payload


class GitHubServer:
    """``with GitHubServer() as gh:`` runs the model on a free loopback port."""

    def __init__(self) -> None:
        self.model = GitHubModel()
        handler = type("Handler", (_Handler,), {"model": self.model})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.model.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        # A short poll interval keeps shutdown (once per test) from costing half a second.
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return self.model.base

    def __enter__(self) -> GitHubModel:
        self.thread.start()
        return self.model

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.model.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        if kind is None and self.model.violations:
            shown = sorted(set(self.model.violations))
            raise AssertionError(
                f"the fake GitHub sent {len(self.model.violations)} bodies GitHub would not "
                "send (tests/schemas, from GitHub's OpenAPI description):\n" + "\n".join(shown[:40])
            )


@contextmanager
def serving(token: str, login: str, *repos: str) -> Iterator[GitHubServer]:
    """A running fake GitHub where ``token`` authenticates as ``login`` and ``repos`` exist."""
    srv = GitHubServer()
    with srv as model:
        model.add_token(token, login)
        for repo in repos:
            model.repo(repo)
        yield srv
