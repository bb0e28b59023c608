"""The rich Console every command prints its reports to stdout with.

On a terminal it takes the terminal's width like any program. Anywhere else (a pipe, a CI log,
a file) rich would assume 80 columns and wrap titles and paths mid-word: there the report gets
``WIDTH`` columns for its tables and rules, and lines of text are never wrapped (``soft_wrap``),
so ``sync diff ... | less`` reads like ``sync diff -o FILE``.
"""

from __future__ import annotations

import os
import sys
from typing import IO, Any

WIDTH = 120


def report_console(file: IO[str] | None = None, **options: Any) -> Any:
    """A Console for a report on ``file`` (default stdout); ``options`` go to rich."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            # rich exits 1 here, which `verify`, `diff` and `generate --check` use to mean
            # "drift": let the CLI say the reader went away instead (see cli.main).
            self.quiet = True
            silence_stdout()
            raise BrokenPipeError

    console = _Console(file=file, highlight=False, **options)
    if not console.is_terminal:
        piped = {**options, "width": WIDTH, "soft_wrap": True}
        console = _Console(file=file, highlight=False, **piped)
    return console


def silence_stdout() -> None:
    """Point stdout at /dev/null once its reader has gone, so the interpreter's last flush does
    not fail again on the closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
