"""How long a GitHub request may take and how much of an answer is read: the bounds of every
request the bot and ``sync audit`` send.

Without them an API that never answered held the bot 488 s per request (a 60 s read timeout,
retried six times) and a 2 GB answer was read whole into memory (4 GB, then a crash). Here:

- every request has a connect and a read timeout (``Limits.connect``, ``Limits.read``), and a
  request that timed out is sent again at most once (``READ_RETRIES``): an API that does not
  answer costs two read timeouts, not seven;
- an answer's body is streamed and refused past ``Limits.max_bytes`` (``AnswerTooLarge``, an
  error naming the request), and a body still arriving ``Limits.deadline`` seconds after its
  headers (a server trickling bytes under the read timeout) is given up (``AnswerTooSlow``).

PyGithub sends the JSON requests; its connection is this module's (``github``), with the
adapter that streams and caps. Artifact downloads stream on their own (``actions``) with
the same timeouts and their own cap.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
from github import Auth, Github
from github.Requester import (
    HTTPRequestsConnectionClass,
    HTTPSRequestsConnectionClass,
    Requester,
)
from requests.adapters import HTTPAdapter
from urllib3.exceptions import HTTPError, ReadTimeoutError
from urllib3.exceptions import TimeoutError as Urllib3Timeout
from urllib3.util.retry import Retry

# GitHub's largest answers the bot reads are pages of 100 comments, PRs or issues, each body at
# most 65,536 characters: under 30 MB even with every character escaped in the JSON.
MAX_ANSWER_BYTES = 64 * 1024 * 1024
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 30.0
# Times a request whose answer timed out is sent again (urllib3's ``read`` retries).
READ_RETRIES = 1
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Limits:
    """A connection's bounds: seconds to connect, seconds between two reads of an answer,
    seconds for a whole body, bytes of a body."""

    connect: float = CONNECT_TIMEOUT
    read: float = READ_TIMEOUT
    deadline: float = 4 * READ_TIMEOUT
    max_bytes: int = MAX_ANSWER_BYTES

    @classmethod
    def of(cls, read: float | None = None, max_bytes: int | None = None) -> Limits:
        """The limits with a read timeout of ``read`` seconds (the connect timeout no longer
        than it, the body's deadline four times it) and a cap of ``max_bytes``; the
        defaults where None."""
        read = READ_TIMEOUT if read is None else read
        return cls(
            connect=min(CONNECT_TIMEOUT, read),
            read=read,
            deadline=4 * read,
            max_bytes=MAX_ANSWER_BYTES if max_bytes is None else max_bytes,
        )

    @property
    def timeout(self) -> tuple[float, float]:
        """The (connect, read) pair requests takes."""
        return (self.connect, self.read)


class AnswerTooLarge(requests.RequestException):
    """An answer's body went past ``Limits.max_bytes``: refused, the connection closed."""


class AnswerTooSlow(requests.Timeout):
    """An answer's body was still arriving ``Limits.deadline`` seconds after its headers."""


def timed_out(exc: BaseException) -> bool:
    """Whether a failed request failed for want of an answer in time: a timeout itself, or
    the retries of timeouts given up (which requests reports as a connection error)."""
    seen: BaseException | None = exc
    for _ in range(8):  # the causes requests and urllib3 chain: a few at most
        if seen is None:
            return False
        if isinstance(seen, requests.Timeout | Urllib3Timeout):
            return True
        reason = getattr(seen, "reason", None)
        nested = seen.args[0] if seen.args and isinstance(seen.args[0], BaseException) else None
        seen = reason if isinstance(reason, BaseException) else nested
    return False


def read_body(response: requests.Response, limits: Limits, what: str) -> bytes:
    """The body of a streamed ``response``, refused past the cap or the deadline (the
    connection is closed then: nothing more is read)."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limits.max_bytes:
        response.close()
        raise AnswerTooLarge(_too_large(what, limits, int(declared)))
    parts: list[bytes] = []
    total, until = 0, time.monotonic() + limits.deadline
    try:
        for chunk in _arriving(response):
            total += len(chunk)
            if total > limits.max_bytes:
                raise AnswerTooLarge(_too_large(what, limits, None))
            if time.monotonic() > until:
                raise AnswerTooSlow(
                    f"the answer to {what} was still arriving after {limits.deadline:g}s"
                )
            parts.append(chunk)
    except BaseException:
        response.close()
        raise
    return b"".join(parts)


def _arriving(response: requests.Response) -> Iterator[bytes]:
    """The body in the pieces it arrives in: ``read1`` returns what the socket has (a body
    trickling a byte at a time is seen byte by byte, so its deadline is checked), where
    ``iter_content`` would wait for a whole chunk. urllib3's errors become requests' (what
    ``iter_content`` does), so the caller sees a timeout as one."""
    read1 = getattr(response.raw, "read1", None)
    if read1 is None:  # an urllib3 without read1: whole chunks, the deadline checked between
        yield from response.iter_content(_CHUNK)
        return
    while True:
        try:
            chunk = read1(_CHUNK, decode_content=True)
        except ReadTimeoutError as exc:
            raise requests.ReadTimeout(str(exc)) from None
        except HTTPError as exc:
            raise requests.ConnectionError(str(exc)) from None
        if not chunk:
            return
        yield chunk


def _too_large(what: str, limits: Limits, size: int | None) -> str:
    shown = f"{size} bytes" if size is not None else f"more than {limits.max_bytes} bytes"
    return f"the answer to {what} is {shown}, over the {limits.max_bytes}-byte cap; refused"


class _CappedAdapter(HTTPAdapter):
    """requests' adapter, every body streamed through :func:`read_body`."""

    def __init__(self, limits: Limits, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.limits = limits

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, stream: bool = False, **kwargs: Any
    ) -> requests.Response:
        response = super().send(request, stream=True, **kwargs)
        if not stream:
            what = f"{request.method} {urlsplit(request.url or '').path}"
            # What requests' own `.content` would do, bounded: the body is the response's.
            response._content = read_body(response, self.limits, what)
            response._content_consumed = True  # type: ignore[attr-defined]
        return response


class _Session(requests.Session):
    """requests' session, the environment's settings for a host read once per session:
    requests reads them on every request (each proxy variable and ``no_proxy``, the whole
    environment scanned three times), 0.6 ms per request, more than the fake GitHub of the
    tests takes to answer one. A session lives one command or event, whose environment does
    not change under it; the settings of a request (its proxies, stream, verify, cert) and
    the session's own are part of the key, so only what the environment adds is kept."""

    def __init__(self) -> None:
        super().__init__()
        # the asked settings -> (requests' answer, what it added to the request's proxies)
        self._merged: dict[str, tuple[Any, dict[str, str] | None]] = {}

    def merge_environment_settings(  # type: ignore[override]
        self, url: str, proxies: Any, stream: Any, verify: Any, cert: Any
    ) -> Any:
        parts = urlsplit(url)
        asked = repr(
            (parts.scheme, parts.netloc, sorted((proxies or {}).items()), stream, verify, cert,
             self.trust_env, self.proxies, self.stream, self.verify, self.cert)
        )  # fmt: skip
        if asked not in self._merged:
            given = dict(proxies) if proxies is not None else None
            answer = super().merge_environment_settings(url, given, stream, verify, cert)
            self._merged[asked] = (answer, given)
        answer, given = self._merged[asked]
        if proxies is not None and given is not None:
            proxies.update(given)  # the environment's proxies, as requests itself leaves them
        return {**answer, "proxies": dict(answer["proxies"])}


def session(limits: Limits) -> requests.Session:
    """A session whose every answer is read through the capped adapter (no retries of its
    own: the caller decides what is sent again)."""
    made = _Session()
    adapter = _CappedAdapter(limits)
    made.mount("http://", adapter)
    made.mount("https://", adapter)
    return made


def github(token: str, base_url: str, retry: Retry, limits: Limits, **options: Any) -> Github:
    """A PyGithub client whose connection has ``limits``: both timeouts on every request, each
    body streamed and capped (``_CappedAdapter``)."""

    def mount(connection: Any, scheme: str) -> None:
        # PyGithub takes a whole number of seconds for both; requests takes the pair.
        connection.timeout = limits.timeout
        own = _Session()
        own.auth = connection.session.auth  # PyGithub's: no .netrc looked up in its place
        connection.session.close()
        connection.session = own
        connection.adapter = _CappedAdapter(
            limits,
            max_retries=connection.retry,
            pool_connections=connection.pool_size,
            pool_maxsize=connection.pool_size,
        )
        connection.session.mount(scheme, connection.adapter)

    class _Http(HTTPRequestsConnectionClass):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            mount(self, "http://")

    class _Https(HTTPSRequestsConnectionClass):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            mount(self, "https://")

    # PyGithub's way to give a client other connections: taken when the client is made, so
    # the classes are put back at once and no other client gets them.
    Requester.injectConnectionClasses(_Http, _Https)
    try:
        return Github(auth=Auth.Token(token), base_url=base_url, retry=retry, **options)
    finally:
        Requester.resetConnectionClasses()
