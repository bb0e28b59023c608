"""Options several commands share, declared once so their spelling, type and help agree, and
the one way a command prints a report in the ``--format`` asked for.

A path option says whether it names a folder or a file; one with a default shows it in
``--help``. Imported by every command module, so it imports nothing heavy.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from syncer import locations
from syncer.errors import SyncError
from syncer.reporting import Report, write
from syncer.selection import CONC_HELP, POINT_HELP
from syncer.wording import js

F = TypeVar("F", bound=Callable[..., Any])
Decorator = Callable[[F], F]


def folder_option(
    *decls: str, help: str, default: Any = None, exists: bool = False, **extra: Any
) -> Decorator:
    """An option naming a folder (``default`` shown in ``--help`` when given; a callable
    default is computed when the command runs and not shown)."""
    return click.option(
        *decls,
        type=click.Path(file_okay=False, path_type=Path, exists=exists),
        default=default,
        show_default=default is not None and not callable(default),
        help=help,
        **extra,
    )


def file_option(*decls: str, help: str, default: Any = None, **extra: Any) -> Decorator:
    """An option naming a file (``default`` shown in ``--help`` when given). What is not a
    regular file (a directory, a FIFO, a device) is refused by ``fsio`` when the file is read
    or written, in one ``error:`` line, not by click's usage error."""
    return click.option(
        *decls,
        type=click.Path(path_type=Path),
        default=default,
        show_default=default is not None,
        help=help,
        **extra,
    )


def format_option(choices: Sequence[str], *, help: str) -> Decorator:
    """``--format`` (into ``fmt``); the first choice is the default."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(list(choices)),
        default=choices[0],
        show_default=True,
        help=help,
    )


def config_option(help: str = "Sync configuration (models, configs, pins).") -> Decorator:
    return file_option("--config", "config_path", default=Path(locations.SYNC_YAML), help=help)


def inferencex_option(
    default: Path | None = None, help: str = "InferenceX checkout (default: the bundled example)."
) -> Decorator:
    return folder_option("--inferencex", "inferencex", default=default, help=help)


def cookbook_dir_option(*decls: str, help: str) -> Decorator:
    """The folder of the data modules (``<org>/<model>.jsx``)."""
    return folder_option(*decls, default=locations.SNIPPETS, help=help)


def sglang_option(help: str) -> Decorator:
    return folder_option("--sglang", "sglang", help=help)


def srt_slurm_configs_option(help: str) -> Decorator:
    return folder_option(
        "--srt-slurm-configs", "srt_slurm_configs", exists=True, metavar="DIR", help=help
    )


def date_option(help: str) -> Decorator:
    return click.option("--date", "today", metavar="YYYY-MM-DD", help=help)


def selection_options(command: F) -> F:
    """``--point N`` and ``--conc C`` with the help every command shares."""
    command = click.option("--conc", "conc", type=int, metavar="C", help=CONC_HELP)(command)
    return click.option("--point", "point", type=int, metavar="N", help=POINT_HELP)(command)


def float_env(name: str) -> float | None:
    """A number of seconds from the environment (``SYNC_API_PAUSE``), None when unset."""
    value = os.environ.get(name)
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        raise SyncError(f"{name} must be a number of seconds, got {js(value)}") from None


def print_report(report: Report, fmt: str) -> int:
    """``report`` on stdout in the ``--format`` asked for; the command's exit code."""
    return write(report, fmt)
