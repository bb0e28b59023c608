"""One authenticated connection to GitHub's REST API: the requests every concern of the client
shares (``pulls``, ``comments``, ``issues``, ``actions``).

PyGithub's requester sends them, with its retries of reads and edits (``ratelimit``); a POST is
sent again only after the object was looked up (:meth:`Api.post`), so a lost answer never
makes a second comment or PR. Every failure is a ``SyncError`` whose text is masked (the token
is registered with :mod:`syncer.secrets` and never appears in messages), a 404 a
:class:`NotFound`, and a 422's validation errors are worded as one line (:func:`error_text`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from json import JSONDecodeError
from typing import Any, TypedDict, TypeVar

import requests
from github import GithubException

from syncer import links, secrets
from syncer.errors import SyncError
from syncer.github import transport
from syncer.github.ratelimit import SECONDARY_WAIT, RateLimitTooLong, limit_wait, retry_policy
from syncer.github.shapes import Fields, ShapeError, each
from syncer.github.transport import AnswerTooLarge, Limits
from syncer.wording import js

T = TypeVar("T")
# A request's answer: GitHub's JSON, as untyped as PyGithub gives it (each caller hands it to
# the parser of its kind in ``records``).
Json = Any


def _as_is(data: Json) -> Any:
    return data


class NotFound(SyncError):
    """The API answered 404 (deleted comment, unknown PR or run, or no access)."""


class Connection(TypedDict, total=False):
    """How a client connects (``Api``'s keyword arguments): the API's URL, retries and waits,
    the pause between requests, the bot's login when the token cannot ask for it, the
    timeouts and the size cap of an answer (``transport.Limits``)."""

    base_url: str
    retries: int
    max_wait: float
    backoff: float
    pause: float | None
    login: str | None
    secondary_wait: float
    limits: Limits


class _NoUser(Exception):
    """``GET /user`` refused (403): the token is no user's."""


class Api:
    """The transport: JSON requests, pages, the POST that looks before it sends again, and the
    token's login."""

    def __init__(
        self,
        token: str,
        *,
        base_url: str = links.API_URL,
        retries: int = 6,
        max_wait: float = 300.0,
        backoff: float = 1.0,
        pause: float | None = None,
        login: str | None = None,
        secondary_wait: float = SECONDARY_WAIT,
        limits: Limits | None = None,
    ) -> None:
        secrets.register(token)
        self._token = token
        self.base_url = base_url.rstrip("/")
        self.retries = retries
        self.max_wait = max_wait
        self.backoff = backoff
        self.secondary_wait = secondary_wait
        self._login = login
        self.limits = limits or Limits()
        # GitHub's guidance against secondary limits: space requests, and writes more.
        between = 0.25 if pause is None else pause
        self._gh = transport.github(
            token,
            self.base_url,
            retry_policy(retries, max_wait, backoff, secondary_wait),
            self.limits,
            seconds_between_requests=between,
            seconds_between_writes=1.0 if pause is None else pause,
        )
        # Streamed downloads: the same timeouts, each download capped by its caller.
        self.session = transport.session(self.limits)

    def auth_headers(self) -> dict[str, str]:
        """The headers of a request sent past PyGithub (a streamed download)."""
        return {"Authorization": f"Bearer {self._token}", "Accept": "application/vnd.github+json"}

    def call(self, what: str, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except JSONDecodeError as exc:
            # A proxy's page, a cut answer: PyGithub's json.loads of the body failed.
            raise SyncError(
                secrets.mask(f"GitHub's answer to {what} is not JSON ({exc.msg}, byte {exc.pos})")
            ) from None
        except ShapeError as exc:
            raise SyncError(
                secrets.mask(f"GitHub's answer to {what} is not of GitHub's shape: {exc.message}")
            ) from None
        except GithubException as exc:
            kind = NotFound if exc.status == 404 else SyncError
            detail = error_text(exc.data)
            raise kind(secrets.mask(f"GitHub API {exc.status} on {what}: {detail}")) from None
        except RateLimitTooLong as exc:
            raise SyncError(f"GitHub rate limit on {what}: {exc}") from None
        except AnswerTooLarge as exc:
            raise SyncError(secrets.mask(f"GitHub API: {exc}")) from None
        except requests.exceptions.RetryError as exc:
            reason = getattr(getattr(exc.args[0], "reason", None), "args", [exc])[0]
            raise SyncError(
                secrets.mask(
                    f"GitHub API on {what}: gave up after {self.retries} retries ({reason})"
                )
            ) from None
        except requests.RequestException as exc:
            if not transport.timed_out(exc):
                raise SyncError(secrets.mask(f"GitHub API unreachable on {what}: {exc}")) from None
            raise SyncError(
                secrets.mask(
                    f"GitHub API did not answer {what} in time (connect {self.limits.connect:g}s, "
                    f"read {self.limits.read:g}s, whole answer {self.limits.deadline:g}s; "
                    f"sent at most {1 + transport.READ_RETRIES} times)"
                )
            ) from None

    def json(
        self,
        verb: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        body: dict[str, Any] | None = None,
        parse: Callable[[Json], T] = _as_is,
    ) -> T:
        """The answer to one request, read by ``parse`` (a ``records`` parser): a field of
        the wrong shape is an error naming this request and the field."""
        url = f"{self.base_url}{path}"

        def go() -> T:
            _headers, data = self._gh.requester.requestJsonAndCheck(
                verb, url, parameters=params, input=body
            )
            return parse(data)

        return self.call(f"{verb} {path}", go)

    def post(
        self,
        path: str,
        body: dict[str, Any],
        find: Callable[[], T | None] | None,
        *,
        parse: Callable[[Json], T],
        exists: Callable[[GithubException], bool] = lambda exc: False,
        amend: Callable[[GithubException, dict[str, Any]], dict[str, Any] | None] | None = None,
    ) -> T:
        """POST ``body`` once, and again only after looking the object up.

        A 5xx, a timeout or a dropped connection does not say whether GitHub made the write, and
        a rate limit's answer may come from a proxy after it did: before each new attempt
        ``find()`` looks the object up (by its hidden marker or its branch) and returns it when
        it is there; only when it is not is the POST sent again. ``exists(exc)`` marks an
        error that means "it is already there" (422 for a PR), answered by ``find()`` too.
        ``find=None``: a POST GitHub itself makes idempotent (a reaction). ``amend(exc, body)``
        may answer a refusal with another body to send at once (GitHub made nothing).
        ``parse`` reads the answer (``find`` returns what it found read the same way).
        """
        url = f"{self.base_url}{path}"

        def go() -> T:
            attempt, sent = 0, body
            while True:
                try:
                    return parse(self._gh.requester.requestJsonAndCheck("POST", url, input=sent)[1])
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
                    wait = self.post_wait(exc, attempt)
                    if wait is None or attempt >= self.retries:
                        raise
                except (requests.ConnectionError, requests.Timeout) as exc:
                    # An API that does not answer is asked once more, not every retry.
                    tries = transport.READ_RETRIES if transport.timed_out(exc) else self.retries
                    if attempt >= tries:
                        raise
                    wait = self.backoff * (2**attempt)
                if find is not None:
                    found = find()
                    if found is not None:
                        return found
                time.sleep(wait)
                attempt += 1

        return self.call(f"POST {path}", go)

    def post_wait(self, exc: GithubException, attempt: int) -> float | None:
        """Seconds before a failed POST may be sent again (``limit_wait``'s rules)."""
        data = exc.data if isinstance(exc.data, dict) else {}
        message = data.get("message")
        return self.limit_wait(
            exc.status, exc.headers or {}, message if isinstance(message, str) else "", attempt
        )

    def limit_wait(self, status: int, headers: Any, message: str, attempt: int) -> float | None:
        """:func:`ratelimit.limit_wait` with this connection's backoff and caps."""
        return limit_wait(
            status,
            headers,
            message,
            attempt,
            backoff=self.backoff,
            secondary_wait=self.secondary_wait,
            max_wait=self.max_wait,
        )

    def pages(self, path: str, parse: Callable[[Json, str], T], key: str | None = None) -> list[T]:
        """Every item of a paginated list (``per_page=100``, following ``page`` until short),
        each read by ``parse(item, where)`` (a ``records`` parser; ``where`` is the item's
        place in the page, ``[3]`` or ``artifacts[3]``, for a message). The page is the
        answer itself, or its ``key`` (``artifacts``)."""

        def read(data: Json) -> list[T]:
            listed = Fields(data).items(key) if key else data
            return [parse(item, at) for at, item in each(listed, key or "")]

        items: list[T] = []
        page = 1
        while True:
            chunk = self.json("GET", path, params={"per_page": 100, "page": page}, parse=read)
            items.extend(chunk)
            if len(chunk) < 100:
                return items
            page += 1

    def login(self) -> str:
        """The token's user (the author of the bot's own comments and PRs): given, or asked of
        ``GET /user``, which GitHub refuses an App installation token (and Actions'
        ``GITHUB_TOKEN``): their login is ``<app-slug>[bot]`` and must be given."""
        if self._login is None:

            def whoami() -> str:
                try:
                    answer = self._gh.requester.requestJsonAndCheck("GET", f"{self.base_url}/user")
                except GithubException as exc:
                    if exc.status == 403:
                        raise _NoUser from None
                    raise
                return Fields(answer[1]).text("login", required=True)

            try:
                self._login = self.call("GET /user", whoami)
            except _NoUser:
                raise SyncError(
                    "GitHub refuses GET /user to this token (an App installation token or "
                    "GITHUB_TOKEN): give the bot's login, <app-slug>[bot], in SYNC_INFX_LOGIN "
                    "or SYNC_COOKBOOK_LOGIN"
                ) from None
        return self._login


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


def validation_errors(exc: GithubException) -> list[tuple[str, str, str]]:
    """(field, code, message) of each validation error in a 422's body."""
    data = exc.data if isinstance(exc.data, dict) else {}
    return [
        (str(e.get("field") or ""), str(e.get("code") or ""), str(e.get("message") or ""))
        for e in data.get("errors") or []
        if isinstance(e, dict)
    ]
