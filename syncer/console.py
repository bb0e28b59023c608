"""The rich Console every command prints its reports to stdout with.

On a terminal it takes the terminal's width like any program. Anywhere else (a pipe, a CI log,
a file) rich would assume 80 columns and wrap titles and paths mid-word: there the report gets
``COLUMNS`` (else ``WIDTH``) columns for its tables and rules, lines of text are never wrapped
(``soft_wrap``), and a table whose longest words do not fit is printed as wide as they need,
so no flag, cell id, path or URL is ever split (``sync lint ... | grep -- --flag`` finds it).
"""

from __future__ import annotations

import os
import sys
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    # The mixin is only ever mixed into a Console: typed as one, imported lazily when run.
    _ConsoleBase = Console
else:
    _ConsoleBase = object

WIDTH = 120


def _piped_width() -> int:
    """``COLUMNS`` when it is set (a user or a CI log asking for a width), else ``WIDTH``."""
    try:
        return max(20, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        return WIDTH


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

    class _PipedConsole(_PipedMixin, _Console):
        pass

    console = _Console(file=file, highlight=False, **options)
    if not console.is_terminal:
        piped = {**options, "width": _piped_width(), "soft_wrap": True}
        console = _PipedConsole(file=file, highlight=False, **piped)
    return console


class _PipedMixin(_ConsoleBase):
    def print(self, *objects: Any, **options: Any) -> None:
        # A table never splits a word on a pipe (a flag, a cell id, a path, a URL that
        # `grep` looks for): printed as wide as its longest words need when that is wider.
        if "rich.table" not in sys.modules:
            # no table was made (rich.table brings fractions and decimal: a report without
            # one does not import it), so none is printed here
            super().print(*objects, **options)
            return
        from rich.measure import Measurement
        from rich.table import Table

        wide = self.options.update(width=1 << 20)
        for table in (o for o in objects if isinstance(o, Table)):
            # rich narrows the widest wrapping column first, below its longest word: pin each
            # column at its longest word so only the spaces between words wrap.
            for column in table.columns:
                if column.min_width is None:
                    cells = [column.header, *column.cells]
                    column.min_width = max(
                        (Measurement.get(self, wide, c).minimum for c in cells), default=0
                    )
        needed = max(
            (Measurement.get(self, wide, o).minimum for o in objects if isinstance(o, Table)),
            default=0,
        )
        width = self.width
        if needed > width:
            # (rich caps a print's own width= at the console's: widen the console meanwhile)
            self.width = needed
        try:
            super().print(*objects, **options)
        finally:
            self.width = width


def silence_stdout() -> None:
    """Point stdout at /dev/null once its reader has gone, so the interpreter's last flush does
    not fail again on the closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
