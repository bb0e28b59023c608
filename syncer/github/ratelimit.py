"""How long a refused GitHub request waits before it is sent again, by GitHub's own rules.

Reads and edits are retried by PyGithub's ``GithubRetry`` (:func:`retry_policy`: ``Retry-After``
when GitHub sends it, else until the rate-limit reset, or a minute for a secondary limit);
POSTs, sent again only after the object was looked up (``api.Api.post``), and artifact
downloads, which bypass PyGithub to stream, wait by :func:`limit_wait`, the same rules.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

from github import GithubRetry
from urllib3.util.retry import Retry

from syncer.github.transport import READ_RETRIES

# GitHub's guidance for a secondary rate limit answered without Retry-After: wait at least a
# minute, then exponentially longer while it lasts.
SECONDARY_WAIT = 60.0


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


def retry_policy(retries: int, max_wait: float, backoff: float, secondary_wait: float) -> Retry:
    return _CappedRetry(
        total=retries,
        # A request whose answer timed out is sent again once: an API that does not answer
        # must not hold the bot for every retry's read timeout.
        read=READ_RETRIES,
        backoff_factor=backoff,
        status_forcelist=[*range(500, 600), 429],
        # PATCH is idempotent for every call made here (comment and PR edits). POST is not:
        # GitHub may have made the write when the answer is a 502, so a blind retry posts a
        # second comment. Api.post retries it only after looking the object up.
        allowed_methods=frozenset({"GET", "PATCH", "PUT", "DELETE"}),
        max_rate_limit_wait=max_wait,
        secondary_rate_wait=min(secondary_wait, max_wait),
    )


def limit_wait(
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
    after = header(headers, "retry-after")
    exhausted = header(headers, "x-ratelimit-remaining") == "0"
    secondary = status in (403, 429) and "rate limit" in message
    limited = status == 429 or (status == 403 and (after is not None or exhausted))
    if not (limited or secondary or 500 <= status < 600):
        return None
    wait: float = backoff * (2**attempt)
    reset = header(headers, "x-ratelimit-reset")
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


def header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return str(value)
    return None
