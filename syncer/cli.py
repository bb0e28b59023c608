"""`sync` / `cookbook-sync` entry point.

Subcommands live in ``syncer.commands.<name>`` and are imported only when invoked, so a
``sync decode`` pays for esprima and not for PyGithub (start-up time is part of the decode
benchmark).
"""

from __future__ import annotations

import errno
import gc
import os
import signal
import sys

from syncer.errors import ReaderGone, SyncError
from syncer.helptext import prog_name, stored_help

# typing's constant without importing typing, a start-up cost `sync --help` need not pay;
# mypy takes any `TYPE_CHECKING` as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

    import click


BROKEN_PIPE = 141
TERMINATED = 128 + signal.SIGTERM


class Terminated(BaseException):
    """SIGTERM, raised where the program is so that every ``finally`` and cleanup runs (the
    default action would kill it and leave temp files behind, as SIGINT does not)."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def run() -> None:
    """The process entry (``sync``, ``python -m syncer``): :func:`main`, then an exit that
    skips the collector's last passes over every object the run made (a few full
    collections, about a tenth of a short command's CPU), since the process ends anyway and
    nothing it must flush hangs on a cycle. An in-process caller uses :func:`main`."""
    utf8_streams()
    try:
        main()
    finally:
        gc.freeze()


def utf8_streams() -> None:
    """Standard output and error written as UTF-8, whatever the locale or ``PYTHONIOENCODING``
    say (``LC_ALL=C``, ``ascii``): what the tool prints is UTF-8 by its format (JSON, the
    markdown of a PR body, a data module) or a command to paste, which must stay byte for byte
    what the cookbook shows, so no character is escaped or replaced for a narrower encoding
    (one that cannot hold a ``—`` made every such report exit 3). A terminal that really
    shows only ASCII shows those few characters as it shows any UTF-8 program's. Each stream
    keeps its error handler (``reconfigure`` would make it strict): stderr's never fails, and
    in the C locale stdout's writes an argument's undecodable bytes back as they came."""
    import codecs

    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        reconfigure = getattr(stream, "reconfigure", None)
        if encoding and reconfigure and codecs.lookup(encoding).name != "utf-8":
            reconfigure(encoding="utf-8", errors=stream.errors)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; bad input is one line on stderr and exit code 2, never a traceback.

    Exit codes: 0 clean, 1 drift or changes, 2 bad input, 3 an internal error (a bug), 141 the
    reader of the output went away before it was all written, 143 a SIGTERM stopped it (temp
    files removed, nothing half-written)."""
    try:
        previous = signal.signal(signal.SIGTERM, _terminate)
    except ValueError:
        _run(argv)  # only the main thread can take signals (an in-process caller's worker)
        return
    try:
        _run(argv)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(argv: list[str] | None) -> None:
    prog = prog_name()
    text = stored_help(sys.argv[1:] if argv is None else argv, prog)
    if text is not None:
        _print_help(text)
        return
    import click

    from syncer.commands.group import cli

    try:
        code = cli.main(args=argv, prog_name=prog, standalone_mode=False)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except SyncError as exc:
        # Messages quote recipe, log and archive text: keep the line one line, free of escape
        # sequences and tokens, whichever command raised it.

        # A value the message did not cut itself (a path, a number, a flag value of any
        # length) is cut here: the line stays one line a person can read. Imported here:
        # `sync --help` is start-up time only, and these bring logging and threading.
        from syncer.untrusted import term_line
        from syncer.wording import cut_long_words

        text = cut_long_words(term_line(exc))
        click.echo(f"error: {text}", err=True)
        sys.exit(2)
    except click.ClickException as exc:
        _click_error(exc)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(2)
    except Terminated:
        click.echo("terminated", err=True)
        sys.exit(TERMINATED)
    except (BrokenPipeError, ReaderGone):
        _reader_went_away()
    except OSError as exc:
        if exc.errno not in _NO_ROOM:
            _internal_error()
        _no_room(exc)
    except Exception:
        _internal_error()
    try:
        sys.stdout.flush()
        wait_until_read(sys.stdout)
    except (BrokenPipeError, ReaderGone):
        _reader_went_away()
    except OSError as exc:
        if exc.errno not in _NO_ROOM:
            raise
        _no_room(exc)
    except Terminated:
        click.echo("terminated", err=True)
        sys.exit(TERMINATED)
    sys.exit(code if isinstance(code, int) else 0)


# A write that found no room (`sync render KEY > /dev/full`, a full disk or quota).
_NO_ROOM = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})


def _no_room(exc: OSError) -> NoReturn:
    """One line naming what could not be written: the file the error names, else the
    standard output (every file the tool writes goes through ``fsio``, which names it in a
    SyncError, and a write to a stream names no file)."""
    from syncer.console import silence_stdout

    silence_stdout()  # what is still buffered would fail again as the interpreter exits
    where = exc.filename if exc.filename is not None else "the output (standard output)"
    sys.stderr.write(f"error: cannot write {where}: {exc.strerror}\n")
    sys.exit(2)


def _click_error(exc: click.ClickException) -> NoReturn:
    """click's own refusals (a bad option value, an unknown option or command, a missing
    argument) as every other bad input: one ``error:`` line naming the command, exit 2, not
    click's block of usage, hint and message."""
    import click

    from syncer.untrusted import term_text

    message = term_text(exc.format_message()).replace(chr(10), "⏎").rstrip(".")
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        message = f"{ctx.command_path}: {message} (see {ctx.command_path} --help)"
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def _internal_error() -> NoReturn:
    """Called in an ``except``: the exception being handled is a bug."""
    # A bug, not bad input: keep the traceback for the report, but never exit 1, which
    # `verify`, `diff` and `generate --check` use to mean "drift".
    import traceback

    import click

    from syncer.secrets import mask

    click.echo(mask(traceback.format_exc()), err=True, nl=False)
    click.echo("error: internal error (a bug in infx-cookbook-sync; traceback above)", err=True)
    sys.exit(3)


def _print_help(text: str) -> None:
    """The stored help, ended as every command ends (a reader gone before the last byte: 141)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
        wait_until_read(sys.stdout)
    except (BrokenPipeError, ReaderGone):
        _reader_went_away()
    except OSError as exc:
        if exc.errno not in _NO_ROOM:
            raise
        _no_room(exc)
    except Terminated:
        sys.stderr.write("terminated\n")
        sys.exit(TERMINATED)
    sys.exit(0)


def _reader_went_away() -> NoReturn:
    # The reader of stdout went away (`sync verify KEY | head`): not drift and not a bug.
    # 141 is what a shell reports for a program a closed pipe stopped (128 + SIGPIPE).
    from syncer.console import silence_stdout

    silence_stdout()
    sys.exit(BROKEN_PIPE)


def wait_until_read(stream: object) -> None:
    """Return once the reader of a pipe on ``stream`` has read everything written to it; raise
    ``ReaderGone`` when it closed the pipe first.

    An output that fits in the pipe's buffer is written before a reader such as ``head -c1``
    has read a byte of it, so no write ever fails: without this wait the same closed pipe
    would be 141 for a long output and 0 for a short one. Here the end of the program is the
    last write, as if the pipe had no buffer. Anything but a pipe (a file, a terminal, an
    in-process caller's buffer) returns at once, as does a system that cannot tell how much a
    pipe holds."""
    import stat

    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return
    except (AttributeError, OSError, ValueError):
        return
    # a pipe only: the rest of every start-up (a file, a terminal) never needs these
    import fcntl
    import select
    import struct
    import termios

    poller = select.poll()
    poller.register(fd, 0)  # POLLERR (no reader left) is reported whatever is asked for
    pause = 0.001
    while True:
        try:
            unread = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]
        except OSError:
            return
        if unread == 0:
            return
        # A read does not wake a poll that asks for nothing: look again after a pause that
        # grows, so a reader that reads at once costs a millisecond and a slow one no CPU.
        if any(events & select.POLLERR for _, events in poller.poll(pause * 1000)):
            raise ReaderGone
        pause = min(pause * 2, 0.05)
