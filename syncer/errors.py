"""The one error type users see: where the bad input is and what was expected.

Every command turns a ``SyncError`` into a single line on stderr and exit code 2; anything else
is a bug and keeps its traceback.
"""

from __future__ import annotations


class SyncError(Exception):
    """Bad input: names the file, the position (when known) and what was expected."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.column = column

    def where(self) -> str:
        parts = [str(self.path)] if self.path else []
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def __str__(self) -> str:
        where = self.where()
        return f"{where}: {self.message}" if where else self.message


class ReaderGone(Exception):
    """The reader of stdout went away (a closed pipe): exit 141, not drift and not a bug."""
