"""Every git the tool runs, run one way: :func:`run` (a command that ends) and :func:`popen`
(a long-lived ``cat-file``). ``tests/test_gitrun_only.py`` fails when another module of
``syncer`` starts a process.

What each git gets:

- :func:`git_env`: the caller's ``GIT_*`` variables dropped (a ``GIT_DIR`` of the shell must
  not make git answer for another repository), no prompt, no pager, no user or system config
  (hooks, fsmonitor, aliases, ``uploadpack``/``protocol`` settings of the runner), messages in
  English (callers read a few), no optional locks, and only the transports the tool documents
  (``GIT_ALLOW_PROTOCOL``: a local path, https, http, ssh, git; never ``ext::`` or ``fd::``).
- ``-c core.hooksPath=/dev/null -c core.fsmonitor=false``: a repository's own config runs no
  program either.
- Values that come from input (a remote, a URL, a revision, a path) are *operands*, never
  mixed into the options: each one beginning with ``-`` is refused before anything runs, and
  they follow ``--end-of-options`` (and paths ``--``), so git never reads one as an option
  (``--upload-pack=<command>`` as a remote ran the command).
- A bound on the time (``timeout``), and one wording of what went wrong (``SyncError``: git
  missing, a timeout, a failure with git's last line, masked of tokens).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from syncer import costs, secrets
from syncer.errors import SyncError
from syncer.wording import js

if TYPE_CHECKING:
    import subprocess

# A fetch of a big repository takes minutes; the bound is for a remote or filesystem that hangs.
GIT_TIMEOUT = 600.0
# Transports a remote may use; git refuses every other one (``ext::`` runs a command).
ALLOWED_PROTOCOLS = "file:https:http:ssh:git"
_CONFIG = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")
# git's "<transport>::<address>" form hands the address to a remote helper (``ext::sh -c …``).
_HELPER = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every git the tool runs; ``extra`` adds the caller's own (an
    index file, an identity, an askpass helper)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_PAGER="cat",
        GIT_OPTIONAL_LOCKS="0",
        GIT_ALLOW_PROTOCOL=ALLOWED_PROTOCOLS,
        LC_ALL="C",
    )
    env.update(extra or {})
    return env


def operand(value: str, what: str = "git argument") -> str:
    """``value`` unchanged when git can only read it as the operand it is; a ``SyncError``
    naming ``what`` when it begins with ``-`` (git would read it as an option)."""
    if value.startswith("-"):
        raise SyncError(f"{what} {js(value)} begins with '-' (git would read it as an option)")
    return value


def remote(value: str, what: str = "remote") -> str:
    """A remote given by the operator (a remote's name, a URL or a local path): an operand
    (:func:`operand`), one line, and no ``<transport>::`` form, which hands the rest to a
    helper program."""
    operand(value, what)
    if not value:
        raise SyncError(f"{what} is empty")
    if _CONTROL.search(value):
        raise SyncError(f"{what} {js(value)} holds a control character")
    if _HELPER.match(value):
        raise SyncError(f"{what} {js(value)} names a remote helper ('<transport>::'); give a URL")
    return value


def untrusted_url(value: str, what: str) -> str:
    """A URL read from a repository's content (``.gitmodules``): ``https://`` only, or an
    absolute local path (a mirror on the machine, as the offline runs and tests use). Never
    ssh, git, http, ``file://``, a helper or anything relative: content can name any of those,
    and the job fetching it may hold a token."""
    remote(value, what)
    if value.startswith("https://") and len(value) > len("https://"):
        if value[len("https://")] in "-/":
            raise SyncError(f"{what} {js(value)} has no host")
        return value
    if value.startswith("/") and "://" not in value:
        return value
    raise SyncError(f"{what} {js(value)} is not an https:// URL (nor an absolute local path)")


def argv(
    args: Sequence[str],
    *,
    repo: Path | str | None = None,
    git_dir: Path | str | None = None,
    remote_: str | None = None,
    operands: Sequence[str] = (),
    paths: Sequence[str] = (),
) -> list[str]:
    """The command line: git, its config, where (``-C repo`` or ``--git-dir``), ``args``
    (options written in the code), then ``--end-of-options``, the remote and the operands, and
    ``--`` before the paths. Every value from input is checked first (:func:`operand`)."""
    checked = [remote(remote_)] if remote_ is not None else []
    checked += [operand(v) for v in operands]
    for path in paths:
        operand(path, "path")
    cmd = ["git", *_CONFIG]
    if repo is not None:
        cmd += ["-C", str(repo)]
    if git_dir is not None:
        cmd.append(f"--git-dir={git_dir}")
    cmd += args
    if checked:
        cmd += ["--end-of-options", *checked]
    if paths:
        cmd += ["--", *paths]
    return cmd


def run(
    *args: str,
    repo: Path | str | None = None,
    git_dir: Path | str | None = None,
    cwd: Path | str | None = None,
    remote: str | None = None,
    operands: Sequence[str] = (),
    paths: Sequence[str] = (),
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = GIT_TIMEOUT,
    check: bool = True,
    where: str | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git args…`` (see :func:`argv`) and answer what it did (bytes out and err);
    ``check``: a non-zero exit is a ``SyncError`` with git's last line. Git that cannot be
    started or outlives ``timeout`` is a ``SyncError`` whatever ``check`` says. ``where``
    names the repository in an error (default: ``repo``, ``git_dir`` or ``cwd``)."""
    import subprocess  # imported by the runs that ask git only (a cost of every start-up)

    cmd = argv(args, repo=repo, git_dir=git_dir, remote_=remote, operands=operands, paths=paths)
    place = where or str(repo or git_dir or cwd or "")
    name = args[0] if args else "git"
    costs.git_started(args)
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, env=git_env(env), input=input, capture_output=True,
            timeout=timeout, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise SyncError(f"git {name} took over {timeout:g} s", path=place or None) from None
    except OSError as exc:
        raise SyncError(f"cannot run git: {exc.strerror or exc}", path=place or None) from None
    if check and proc.returncode != 0:
        raise SyncError(secrets.mask(f"git {name} failed: {last_line(proc)}"), path=place or None)
    return proc


def text(*args: str, **kw: Any) -> str | None:
    """What :func:`run` printed, decoded (UTF-8, a bad byte replaced), stripped; None when
    git failed or could not run (for questions whose answer may be "no")."""
    try:
        proc = run(*args, check=False, **kw)
    except SyncError:
        return None
    return proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else None


def last_line(proc: subprocess.CompletedProcess[bytes]) -> str:
    """git's last line of complaint (its stderr, else its stdout), or its exit code."""
    for stream in (proc.stderr, proc.stdout):
        lines = (stream or b"").decode("utf-8", "replace").strip().splitlines()
        if lines:
            return lines[-1]
    return f"exit {proc.returncode}"


def popen(
    *args: str,
    repo: Path | str | None = None,
    git_dir: Path | str | None = None,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes] | None:
    """A long-lived ``git args…`` with pipes to its stdin and stdout (stderr dropped), in its
    own process group so that stopping it also stops what it started (a lazy fetch, which
    would otherwise hold the pipe open); None when git cannot be started."""
    import subprocess

    cmd = argv(args, repo=repo, git_dir=git_dir)
    costs.git_started(args)
    try:
        return subprocess.Popen(
            cmd, cwd=cwd, env=git_env(env),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            process_group=0,
        )  # fmt: skip
    except OSError:
        return None
