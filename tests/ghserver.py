"""A small in-memory model of the GitHub REST endpoints the bot uses, served over real HTTP.

PyGithub is pointed at it with ``base_url`` so the bot's requests, pagination, redirects and
retries are exercised for real. State lives in plain dicts the tests read and change directly
(``server.repo(...)``, ``server.add_comment(...)``); every request is recorded in
``server.log`` so tests can assert that nothing was written. Faults (5xx, rate limits with
``Retry-After``) are queued with ``server.fail_next(...)``.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TS = "2026-10-12T10:00:00Z"
WRITE_METHODS = {"POST", "PATCH", "PUT", "DELETE"}


@dataclass
class Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    headers: dict[str, str]
    body: dict[str, Any]
    times: int
    apply: bool = False  # make the write, then answer with the fault (a lost response)


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
        self._numbers: dict[str, Iterator[int]] = {}
        self.base = ""
        self.relative_redirects = False  # HTTP allows a relative Location; GitHub sends absolute
        self.lock = threading.RLock()
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
        self.tokens[token] = login

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
    ) -> dict[str, Any]:
        fake = self.repo(repo)
        number = number or next(self._numbers[repo])
        commits = list(commits or [f"{number:040x}"])
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
            "commits": commits,
            "labels": list(labels or []),
            "maintainer_can_modify": maintainer_can_modify,
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
        self.repo(repo).comments[comment["id"]] = comment
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
        run = {
            "id": run_id,
            "event": event,
            "path": path,
            "status": status,
            "conclusion": conclusion,
            "head_sha": head_sha,
            "head_branch": head_branch,
            "created_at": created_at,
            "artifacts": [],
        }
        for name, data in (artifacts or {}).items():
            art_id = self.next_id()
            self.blobs[art_id] = data
            fake.artifacts[art_id] = {
                "id": art_id,
                "name": name,
                "expired": name in expired,
                "size": len(data),
                "run": run_id,
            }
            run["artifacts"].append(art_id)
        fake.runs[run_id] = run
        return run

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
        """Answer the next ``times`` matching requests with ``status``; ``apply``: the request
        is carried out first (GitHub made the write, the answer was lost on the way back)."""
        self.faults.append(
            Fault(
                method,
                re.compile(path_regex),
                status,
                headers or {},
                {"message": message},
                times,
                apply,
            )
        )

    def after_next(self, method: str, path_regex: str, hook: Any) -> None:
        """Run ``hook(model)`` once, right after the next matching request was answered."""
        self.after.append((method, re.compile(path_regex), hook))

    def writes(self) -> list[Request]:
        return [r for r in self.log if r.method in WRITE_METHODS]

    # -- JSON shapes -------------------------------------------------------------------------

    def _user(self, login: str) -> dict[str, Any]:
        return {"login": login, "id": abs(hash(login)) % 10**6, "type": "User"}

    def repo_json(self, fake: FakeRepo) -> dict[str, Any]:
        owner, name = fake.full_name.split("/")
        return {
            "id": abs(hash(fake.full_name)) % 10**6,
            "name": name,
            "full_name": fake.full_name,
            "owner": self._user(owner),
            "default_branch": fake.default_branch,
            "url": f"{self.base}/repos/{fake.full_name}",
            "html_url": f"https://github.com/{fake.full_name}",
        }

    def pull_json(self, fake: FakeRepo, pull: dict[str, Any]) -> dict[str, Any]:
        head_repo = self.repo(pull["head_repo"])
        number = pull["number"]
        return {
            "id": number,
            "number": number,
            "title": pull["title"],
            "body": pull["body"],
            "state": pull["state"],
            "merged": pull["merged"],
            "merged_at": pull.get("merged_at") or (TS if pull["merged"] else None),
            "draft": False,
            "user": self._user(pull["user"]),
            "labels": [{"name": name} for name in pull["labels"]],
            "maintainer_can_modify": pull["maintainer_can_modify"],
            "head": {
                "ref": pull["head_ref"],
                "sha": pull["commits"][-1],
                "label": f"{pull['head_repo'].split('/')[0]}:{pull['head_ref']}",
                "repo": self.repo_json(head_repo),
            },
            "base": {"ref": pull["base_ref"], "sha": "0" * 40, "repo": self.repo_json(fake)},
            "url": f"{self.base}/repos/{fake.full_name}/pulls/{number}",
            "html_url": f"https://github.com/{fake.full_name}/pull/{number}",
            "issue_url": f"{self.base}/repos/{fake.full_name}/issues/{number}",
        }

    def comment_json(self, fake: FakeRepo, comment: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": comment["id"],
            "body": comment["body"],
            "user": self._user(comment["user"]),
            "author_association": comment["author_association"],
            "created_at": comment["created_at"],
            "updated_at": comment["updated_at"],
            "url": f"{self.base}/repos/{fake.full_name}/issues/comments/{comment['id']}",
            "html_url": f"https://github.com/{fake.full_name}/pull/{comment['issue']}"
            f"#issuecomment-{comment['id']}",
            "issue_url": f"{self.base}/repos/{fake.full_name}/issues/{comment['issue']}",
        }

    def issue_json(self, fake: FakeRepo, issue: dict[str, Any]) -> dict[str, Any]:
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
            "labels": [{"name": name} for name in issue["labels"]],
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
        out = self.issue_json(fake, as_issue)
        out["pull_request"] = {
            "url": f"{self.base}/repos/{fake.full_name}/pulls/{pull['number']}",
            "html_url": f"https://github.com/{fake.full_name}/pull/{pull['number']}",
        }
        return out

    def run_json(self, fake: FakeRepo, run: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": run["id"],
            "name": "Run Sweep",
            "event": run["event"],
            "path": run["path"],
            "status": run["status"],
            "conclusion": run["conclusion"],
            "head_sha": run["head_sha"],
            "head_branch": run["head_branch"],
            "run_attempt": 1,
            "created_at": run.get("created_at", TS),
            "updated_at": TS,
            "url": f"{self.base}/repos/{fake.full_name}/actions/runs/{run['id']}",
            "html_url": f"https://github.com/{fake.full_name}/actions/runs/{run['id']}",
            "artifacts_url": f"{self.base}/repos/{fake.full_name}/actions/runs/{run['id']}"
            "/artifacts",
        }

    def artifact_json(self, fake: FakeRepo, art: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": art["id"],
            "name": art["name"],
            "expired": art["expired"],
            "size_in_bytes": art["size"],
            "created_at": TS,
            "expires_at": "2027-01-10T10:00:00Z",
            "url": f"{self.base}/repos/{fake.full_name}/actions/artifacts/{art['id']}",
            "archive_download_url": (
                f"{self.base}/repos/{fake.full_name}/actions/artifacts/{art['id']}/zip"
            ),
        }


class _Handler(BaseHTTPRequestHandler):
    model: GitHubModel
    protocol_version = "HTTP/1.1"
    # Headers and body go out as two writes; without TCP_NODELAY the body waits for the
    # client's delayed ACK (~40 ms a response on Linux), most of the bot tests' time.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
        return

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

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
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        auth = self.headers.get("Authorization")
        with model.lock:
            model.log.append(Request(method, path, body, time.monotonic(), auth))
            for fault in model.faults:
                if fault.times > 0 and fault.method == method and fault.pattern.search(path):
                    fault.times -= 1
                    if fault.apply:
                        token = auth.split(" ", 1)[1] if auth and " " in auth else ""
                        self._route(method, path, query, body, model.tokens[token])
                    self._send(fault.status, fault.body, fault.headers)
                    return
            if path.startswith("/_blob/"):
                art_id = int(path.rsplit("/", 1)[1])
                self._send(200, raw=model.blobs[art_id])
                return
            token = auth.split(" ", 1)[1] if auth and " " in auth else None
            login = model.tokens.get(token or "")
            if login is None:
                self._send(401, {"message": "Bad credentials"})
                return
            try:
                status, payload, headers = self._route(method, path, query, body, login)
            except KeyError as exc:
                status, payload, headers = 404, {"message": f"Not Found: {exc}"}, {}
            self._send(status, payload, headers)
            for verb, pattern, hook in list(model.after):
                if verb == method and pattern.search(path):
                    model.after.remove((verb, pattern, hook))
                    hook(model)

    def _route(
        self, method: str, path: str, query: dict[str, str], body: Any, login: str
    ) -> tuple[int, Any, dict[str, str]]:
        model = self.model
        if path == "/user" and method == "GET":
            return 200, model._user(login), {}
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
            (
                "GET",
                r"/pulls/(\d+)/commits",
                lambda n: (
                    200,
                    [
                        {"sha": sha, "commit": {"message": "c"}}
                        for sha in fake.pulls[int(n)]["commits"]
                    ],
                ),
            ),
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
                    [self._reaction_json(r) for r in fake.comments[int(i)]["reactions"]],
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
            ("GET", r"/issues/(\d+)", lambda n: (200, model.issue_json(fake, fake.issues[int(n)]))),
            ("PATCH", r"/issues/(\d+)", lambda n: self._update_issue(fake, int(n), body)),
        ]
        for verb, pattern, handler in routes:
            hit = re.fullmatch(pattern, rest)
            if verb == method and hit:
                result = handler(*hit.groups())
                status, payload, *extra = result
                if method == "GET" and "page" in query:
                    payload = _page(payload, int(query["page"]), int(query.get("per_page", 30)))
                return status, payload, (extra[0] if extra else {})
        raise KeyError(f"{method} {path}")

    def _list_pulls(self, fake: FakeRepo, query: dict[str, str]) -> tuple[int, Any]:
        state = query.get("state", "open")
        found = []
        for pull in fake.pulls.values():
            if state != "all" and pull["state"] != state:
                continue
            if "head" in query:
                owner, _, ref = query["head"].partition(":")
                if pull["head_ref"] != ref or pull["head_repo"].split("/")[0] != owner:
                    continue
            if "base" in query and pull["base_ref"] != query["base"]:
                continue
            found.append(self.model.pull_json(fake, pull))
        return 200, found

    def _create_pull(self, fake: FakeRepo, body: dict[str, Any], login: str) -> tuple[int, Any]:
        owner, _, ref = body["head"].rpartition(":")
        head_repo = fake.full_name if not owner else self._repo_of_owner(owner, fake)
        for pull in fake.pulls.values():
            if (
                pull["state"] == "open"
                and pull["head_ref"] == ref
                and pull["head_repo"] == head_repo
            ):
                return 422, {
                    "message": "Validation Failed",
                    "errors": [{"message": f"A pull request already exists for {body['head']}."}],
                }
        if len(body.get("body") or "") > 65536:
            return 422, {
                "message": "Validation Failed",
                "errors": [{"message": "body is too long (maximum is 65536 characters)"}],
            }
        pull = self.model.add_pull(
            fake.full_name,
            head=ref,
            base=body["base"],
            title=body["title"],
            body=body.get("body") or "",
            user=login,
            head_repo=head_repo,
            maintainer_can_modify=bool(body.get("maintainer_can_modify")),
        )
        return 201, self.model.pull_json(fake, pull)

    def _repo_of_owner(self, owner: str, fake: FakeRepo) -> str:
        name = fake.full_name.split("/")[1]
        return f"{owner}/{name}"

    def _update_pull(self, fake: FakeRepo, number: int, body: dict[str, Any]) -> tuple[int, Any]:
        pull = fake.pulls[number]
        if len(body.get("body") or "") > 65536:
            return 422, {
                "message": "Validation Failed",
                "errors": [{"message": "body is too long (maximum is 65536 characters)"}],
            }
        for key in ("title", "body", "state"):
            if key in body:
                pull[key] = body[key]
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
                else self.model.issue_json(fake, item)
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
        return 201, self.model.issue_json(fake, issue)

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
        return 200, self.model.issue_json(fake, issue)

    def _create_comment(
        self, fake: FakeRepo, number: int, body: dict[str, Any], login: str
    ) -> tuple[int, Any]:
        if number not in fake.pulls and number not in fake.issues:
            raise KeyError(number)
        if len(body["body"]) > 65536:
            return 422, {"message": "Validation Failed"}
        comment = self.model.add_comment(
            fake.full_name, number, body["body"], user=login, association="NONE"
        )
        return 201, self.model.comment_json(fake, comment)

    def _edit_comment(
        self, fake: FakeRepo, comment_id: int, body: dict[str, Any]
    ) -> tuple[int, Any]:
        comment = fake.comments[comment_id]
        comment["body"] = body["body"]
        comment["updated_at"] = "2026-10-12T11:00:00Z"
        return 200, self.model.comment_json(fake, comment)

    def _reaction_json(self, reaction: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": reaction["id"],
            "content": reaction["content"],
            "user": self.model._user(reaction["user"]),
            "created_at": TS,
        }

    def _react(
        self, fake: FakeRepo, comment_id: int, body: dict[str, Any], login: str
    ) -> tuple[int, Any]:
        comment = fake.comments[comment_id]
        for reaction in comment["reactions"]:
            if reaction["content"] == body["content"] and reaction["user"] == login:
                return 200, self._reaction_json(reaction)
        reaction = {"id": self.model.next_id(), "content": body["content"], "user": login}
        comment["reactions"].append(reaction)
        return 201, self._reaction_json(reaction)

    def _unreact(self, fake: FakeRepo, comment_id: int, reaction_id: int) -> tuple[int, Any]:
        comment = fake.comments[comment_id]
        comment["reactions"] = [r for r in comment["reactions"] if r["id"] != reaction_id]
        return 204, None

    def _artifacts(self, fake: FakeRepo, run_id: int) -> dict[str, Any]:
        arts = [
            self.model.artifact_json(fake, fake.artifacts[a])
            for a in fake.runs[run_id]["artifacts"]
        ]
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
            return 410, {"message": "Artifact has expired"}, {}
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

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
