"""Tokens: read from the environment only, and masked in everything the tool writes out.

The bot holds a token that can push to the cookbook; a PR author controls much of what the bot
prints (recipe values, comment bodies, error messages quoting them). So every output path —
``click.echo`` of results, ``--dry-run`` plans, error lines, log records and tracebacks — goes
through :func:`mask`, which replaces the tokens this process read plus anything shaped like a
GitHub token.
"""

from __future__ import annotations

import io
import os
import re
import sys
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

from syncer.errors import SyncError

if TYPE_CHECKING:
    import logging

MASK = "***"
# Classic (ghp_, gho_, ghu_, ghs_, ghr_) and fine-grained (github_pat_) GitHub token shapes.
_TOKEN_SHAPES = re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{20,255})")
_TOKEN_PREFIXES = re.compile(r"g(?:h[pousr]_|ithub_pat_)")
TOKEN_ENV_NAMES = ("COOKBOOK_TOKEN", "GITHUB_TOKEN", "GH_TOKEN")
# Credentials inside a URL (a git remote or push URL such as https://x-access-token:T@host/):
# the token may have any shape, so the user-info part of an http(s) URL, and any user:password
# pair, is hidden whole. ``git@github.com:org/repo`` (no scheme, no password) stays readable.
_URL_CREDENTIALS = re.compile(
    r"(?i)\b(https?://)[^\s/@]+@|\b([a-z][a-z0-9+.-]*://)[^\s/@:]*:[^\s/@]+@"
)

_known: set[str] = set()
_lock = threading.Lock()


def register(value: str | None) -> None:
    """Remember ``value`` as a secret so :func:`mask` hides it wherever it appears."""
    # Very short values would mask ordinary words; real tokens are long.
    if value and len(value) >= 8:
        with _lock:
            _known.add(value)


def mask(text: object) -> str:
    """``text`` with every known secret, every token-shaped string and every credential in a
    URL replaced by ``***``."""
    out = "" if text is None else str(text)
    # Longest first, so a secret containing another is masked whole.
    for secret in sorted(_known, key=len, reverse=True):
        if secret in out:
            out = out.replace(secret, MASK)
    out = _url_credentials_masked(out)
    # Every token shape holds one of these literals; searching for them is a fast scan, where
    # the shapes' leading \b makes the regex try every position of a body of many KB.
    if _TOKEN_PREFIXES.search(out):
        out = _TOKEN_SHAPES.sub(MASK, out)
    return out


def _url_credentials_masked(text: str) -> str:
    """``text`` with :data:`_URL_CREDENTIALS` masked, applied only to the lines holding ``://``.

    Every match holds ``://`` and no whitespace, so no match crosses a ``\n``, and a line's
    start is a word boundary exactly as the text's start is: per line is the same substitution
    as over the whole text, at a fraction of the cost (the pattern tries every word of a body,
    and a PR body is mostly commands without a URL).
    """
    found = text.find("://")
    if found < 0:
        return text
    pieces: list[str] = []
    done = 0
    while found >= 0:
        # past the first line, text[done] is the line break that ended the last one
        start = text.rfind("\n", done, found) + 1
        end = text.find("\n", found)
        end = len(text) if end < 0 else end
        pieces += (text[done:start], _URL_CREDENTIALS.sub(_credentials_hidden, text[start:end]))
        done = end
        found = text.find("://", done)
    pieces.append(text[done:])
    return "".join(pieces)


def _credentials_hidden(match: re.Match[str]) -> str:
    return f"{match.group(1) or match.group(2)}{MASK}@"


def token_from_env(names: Iterable[str] = TOKEN_ENV_NAMES, *, required: bool = True) -> str | None:
    """The first non-empty token among the environment variables ``names``, registered as secret.

    Tokens never come from arguments or files: command lines end up in process lists and shell
    history, files in artifacts.
    """
    names = tuple(names)
    for name in TOKEN_ENV_NAMES + names:
        register(os.environ.get(name))
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    if required:
        raise SyncError(f"no GitHub token: set one of {', '.join(names)} in the environment")
    return None


class MaskingStream(io.TextIOBase):
    """A text stream that masks secrets on the way to the wrapped stream."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        # A text stream refuses bytes; accepting them would make click take this for a binary
        # stream and hand it encoded bytes.
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.inner.write(mask(text))
        return len(text)

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return self.inner.isatty()

    def fileno(self) -> int:
        # The CLI asks the descriptor whether a reader is still there (the 141 rule of a closed
        # pipe) and points it at /dev/null once the reader has gone.
        return self.inner.fileno()

    # typeshed declares TextIOBase.encoding a plain attribute; at run time it is a read-only
    # property, and this one reads the wrapped stream's
    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "encoding", "utf-8")


class MaskingFilter:
    """Masks the formatted message (and any exception text) of every log record. logging
    takes any object with a ``filter`` method, so this module imports logging only when
    :func:`install` runs (most commands never log, and start-up time counts)."""

    def filter(self, record: logging.LogRecord) -> bool:
        import logging

        record.msg = mask(record.getMessage())
        record.args = None
        if record.exc_info:
            record.exc_text = mask(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


def install() -> None:
    """Mask stdout, stderr and logging for the rest of the process (idempotent).

    A token-shaped string split across two ``write`` calls is not caught here; callers write
    whole lines, which is what click and logging do.
    """
    if not isinstance(sys.stdout, MaskingStream):
        sys.stdout = MaskingStream(sys.stdout)
    if not isinstance(sys.stderr, MaskingStream):
        sys.stderr = MaskingStream(sys.stderr)
    import logging

    root = logging.getLogger()
    if not any(isinstance(f, MaskingFilter) for f in root.filters):
        root.addFilter(MaskingFilter())
    for handler in root.handlers:
        if not any(isinstance(f, MaskingFilter) for f in handler.filters):
            handler.addFilter(MaskingFilter())
