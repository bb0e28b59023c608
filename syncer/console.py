"""The rich Console every command prints its reports to stdout with.

On a terminal it takes the terminal's width like any program. Anywhere else (a pipe, a CI log,
a file) rich would assume 80 columns and wrap titles and paths mid-word: there the report gets
``WIDTH`` columns for its tables and rules, and lines of text are never wrapped (``soft_wrap``),
so ``sync diff ... | less`` reads like ``sync diff -o FILE``.
"""

from __future__ import annotations

from typing import IO, Any

WIDTH = 120


def report_console(file: IO[str] | None = None, **options: Any) -> Any:
    """A Console for a report on ``file`` (default stdout); ``options`` go to rich."""
    from rich.console import Console

    console = Console(file=file, highlight=False, **options)
    if not console.is_terminal:
        piped = {**options, "width": WIDTH, "soft_wrap": True}
        console = Console(file=file, highlight=False, **piped)
    return console
