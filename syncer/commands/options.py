"""Options several commands share, declared once so their spelling, type and help agree, and
the one way a command prints a report in the ``--format`` asked for.

A path option says whether it names a folder or a file; one with a default shows it in
``--help``. Imported by every command module, so it imports nothing heavy.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import click

from syncer import links, locations
from syncer.errors import SyncError
from syncer.point_options import CONC_HELP, POINT_HELP
from syncer.wording import js

if TYPE_CHECKING:
    from syncer.github.client import GitHubClient
    from syncer.github.plan import Plan
    from syncer.reporting import Report

F = TypeVar("F", bound=Callable[..., Any])


class Decorator(Protocol):
    """What ``click.option`` gives: a decorator returning the command it is given."""

    def __call__(self, command: F, /) -> F: ...


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


def repo_option(*decls: str, default: str, help: str) -> Decorator:
    """An option naming a GitHub repository (``owner/name``), its default shown."""
    return click.option(*decls, default=default, show_default=True, help=help)


def api_url_option() -> Decorator:
    """``--api-url``: the GitHub API (GitHub Enterprise's, or Actions' ``GITHUB_API_URL``)."""
    return click.option(
        "--api-url",
        default=lambda: os.environ.get("GITHUB_API_URL", links.API_URL),
        help="GitHub API base URL.",
    )


def srt_slurm_history_options(command: F) -> F:
    """``--srt-slurm-repo DIR`` and ``--as-of DATE``: where a branch a runner cloned is read
    as it was when the run happened (``releases.at_date``)."""
    command = click.option(
        "--as-of",
        "as_of",
        metavar="DATE",
        help="Date a branch ref of srt-slurm is taken at (YYYY-MM-DD[THH:MM:SS]; default: the "
        "run's date where one is known (verify: its sweep logs; generate: the pin's date in "
        "sync.yaml), else the InferenceX checkout's commit date).",
    )(command)
    return srt_slurm_repo_option(command)


def srt_slurm_repo_option(command: F) -> F:
    """``--srt-slurm-repo DIR`` alone (``audit``: each pin is taken at its own date)."""
    return folder_option(
        "--srt-slurm-repo",
        "srt_repo",
        exists=True,
        metavar="DIR",
        help="A git clone of NVIDIA/srt-slurm (bare or not; a fork as a remote of it): a "
        "branch ref a runner cloned is resolved to its newest commit at that date.",
    )(command)


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


def int_env(name: str) -> int | None:
    """A positive whole number from the environment (``SYNC_API_MAX_BYTES``), None when unset."""
    value = os.environ.get(name)
    if not value:
        return None
    if not (value.isascii() and value.isdigit() and int(value) > 0 and len(value) <= 20):
        raise SyncError(f"{name} must be a positive whole number, got {js(value)}")
    return int(value)


def github_client(
    token: str, api_url: str, *, login_env: str, plan: Plan | None = None
) -> GitHubClient:
    """The GitHub client of a command: ``SYNC_API_PAUSE`` seconds between requests (default:
    GitHub's guidance), ``SYNC_API_TIMEOUT`` and ``SYNC_API_MAX_BYTES`` its bounds (default:
    ``transport.Limits``), the bot's login from ``login_env`` when given (an App token cannot
    ask for it). PyGithub is imported only here, when a command talks to GitHub."""
    from syncer.github.client import GitHubClient
    from syncer.github.transport import Limits

    login = os.environ.get(login_env) or None
    pause = float_env("SYNC_API_PAUSE")
    # SYNC_API_TIMEOUT: seconds an answer may keep the bot waiting between two reads (a
    # network that slow, or a test's); SYNC_API_MAX_BYTES: the cap of an answer.
    limits = Limits.of(float_env("SYNC_API_TIMEOUT") or None, int_env("SYNC_API_MAX_BYTES"))
    return GitHubClient(token, base_url=api_url, plan=plan, pause=pause, login=login, limits=limits)


def print_report(report: Report, fmt: str) -> int:
    """``report`` on stdout in the ``--format`` asked for; the command's exit code."""
    from syncer.reporting import write  # the commands that print no report (decode) need none of it

    return write(report, fmt)
