"""Progress of long work on stderr (a run's artifacts downloaded, bytes of a run archive read,
points rendered, a large module parsed), shown with rich only when stderr is a terminal.

CI logs and pipes get nothing: no bars, no carriage returns, not even an import of rich (the
check is ``isatty`` first), so ``sync decode``'s start-up and the benchmarks pay nothing when
nobody watches.

Tasks nest (verify reads an archive while points are rendered): every task of the process
shares one rich ``Progress``, because rich allows one live display at a time.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO, TypeVar, cast

from syncer.untrusted import term_text

T = TypeVar("T")

Advance = Callable[[int], None]

# Work shorter than this is not worth a bar (a spinner flashing for a 20 KiB module is noise).
MIN_BYTES = 8 << 20

_live: Any = None  # the rich Progress of the outermost open task
_depth = 0


def _noop(n: int = 1) -> None:
    return None


def _console() -> object:
    try:
        if not sys.stderr.isatty():
            return None
    except (AttributeError, ValueError):  # a replaced or closed stderr
        return None
    from rich.console import Console

    console = Console(stderr=True)
    return console if console.is_terminal else None


def _start(console: Any) -> object:
    from rich.filesize import decimal
    from rich.progress import BarColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    class Amount(ProgressColumn):
        """``1.2/3.4 GB`` for bytes, ``3/7 points`` otherwise; ``?`` for an unknown total."""

        def render(self, task: Any) -> Text:
            unit = task.fields.get("unit", "")
            size = decimal if unit == "bytes" else str
            total = "?" if task.total is None else size(int(task.total))
            suffix = "" if unit == "bytes" else f" {unit}"
            return Text(f"{size(int(task.completed))}/{total}{suffix}", style="progress.download")

    live = Progress(
        TextColumn("{task.description}", markup=False),  # file names are not markup
        BarColumn(),
        Amount(),
        TimeElapsedColumn(),
        console=console,
        transient=True,  # the bars go when the work is done; the command's output stays
    )
    live.start()
    return live


@contextmanager
def task(description: str, total: int | None = None, *, unit: str = "bytes") -> Iterator[Advance]:
    """A progress task; yields ``advance(n)``, a no-op when nobody watches."""
    global _live, _depth
    if _live is None:
        console = _console()
        if console is None:
            yield _noop
            return
        _live = _start(console)

    live = _live
    _depth += 1
    task_id = live.add_task(term_text(description), total=total, unit=unit)

    def advance(n: int = 1) -> None:
        live.advance(task_id, n)

    try:
        yield advance
    finally:
        live.remove_task(task_id)
        _depth -= 1
        if _depth == 0:
            live.stop()
            _live = None


def track(items: Iterable[T], description: str, total: int, *, unit: str) -> Iterator[T]:
    """``items``, one step of a ``unit`` task per item."""
    with task(description, total, unit=unit) as advance:
        for item in items:
            yield item
            advance(1)


class _Reader:
    """A binary file whose reads advance a task; everything else (seek, tell, ...) is the
    file's own, so zipfile and tarfile use it as the file itself."""

    def __init__(self, raw: BinaryIO, advance: Advance) -> None:
        self._raw = raw
        self._advance = advance

    def read(self, n: int = -1) -> bytes:
        data = self._raw.read(n)
        self._advance(len(data))
        return data

    def __getattr__(self, name: str) -> object:
        return getattr(self._raw, name)


@contextmanager
def byte_task(description: str, size: int) -> Iterator[Advance]:
    """A bytes task over ``size``; a no-op below ``MIN_BYTES`` (not worth a bar)."""
    if size < MIN_BYTES:
        yield _noop
        return
    with task(description, size) as advance:
        yield advance


@contextmanager
def reading(raw: BinaryIO, name: str, size: int) -> Iterator[BinaryIO]:
    """``raw`` with a "reading NAME" bytes task over its ``size``; ``raw`` itself (no wrapper,
    no cost) when the file is small or nobody watches."""
    with byte_task(f"reading {name}", size) as advance:
        # _Reader passes every other attribute through to ``raw``
        yield raw if advance is _noop else cast(BinaryIO, _Reader(raw, advance))
