"""Side-by-side timing: whole processes (or in-process calls) measured interleaved in one run,
so a loaded machine slows the measured command and its reference alike and the ratio holds.

Every benchmark compares against a reference measured here, never against a stored figure.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass


def child_env() -> dict[str, str]:
    """The environment every measured process runs in: this one, but with Python free to
    write bytecode, so the warm-up round leaves the ``.pyc`` files an installed tool has (pip
    compiles them at install time). With ``PYTHONDONTWRITEBYTECODE`` set, every run of an
    editable install would compile the project's sources again while the reference's
    libraries load compiled: a cost no user pays, charged to one side only."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


@dataclass(frozen=True)
class Timing:
    """Medians of one command's runs: wall and CPU (user + system) seconds. CPU time is the
    steadier figure on a shared machine: waiting for a core stretches wall time only."""

    wall: float
    cpu: float
    wall_min: float
    runs: int


def _median(walls: list[float], cpus: list[float]) -> Timing:
    return Timing(statistics.median(walls), statistics.median(cpus), min(walls), len(walls))


def processes(
    commands: Mapping[str, Sequence[str]], runs: int, *, warm: int = 1
) -> dict[str, Timing]:
    """Each command of ``commands`` run ``runs`` times, round-robin (command A, B, C, A, B, ...),
    after ``warm`` uncounted rounds (page cache, .pyc files). A command that exits non-zero
    (other than 1, the tools' "drift" code) is an error: a failing run measures nothing."""
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    env = child_env()
    for round_ in range(warm + runs):
        for name, cmd in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(
                list(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=env
            )
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode not in (0, 1):
                message = done.stderr.decode("utf-8", "replace").strip()[-2000:]
                raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {message}")
            if round_ >= warm:
                walls[name].append(wall)
                cpus[name].append(
                    after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                )
    return {name: _median(walls[name], cpus[name]) for name in commands}


def calls(functions: Mapping[str, Callable[[], object]], runs: int) -> dict[str, Timing]:
    """In-process calls, round-robin like :func:`processes` (one uncounted warm-up round)."""
    walls: dict[str, list[float]] = {name: [] for name in functions}
    cpus: dict[str, list[float]] = {name: [] for name in functions}
    for round_ in range(1 + runs):
        for name, fn in functions.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            if round_:
                walls[name].append(time.perf_counter() - start)
                cpus[name].append(time.process_time() - start_cpu)
    return {name: _median(walls[name], cpus[name]) for name in functions}


def reported(commands: Mapping[str, Sequence[str]], runs: int) -> dict[str, float]:
    """Median of the seconds each command prints as its last line (a process that times its own
    region, after its start-up), run round-robin like :func:`processes`, one fresh process per
    run so no cache survives from one run to the next."""
    seconds: dict[str, list[float]] = {name: [] for name in commands}
    env = child_env()
    for _ in range(runs):
        for name, cmd in commands.items():
            done = subprocess.run(list(cmd), capture_output=True, text=True, check=False, env=env)
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr}")
            seconds[name].append(float(done.stdout.split()[-1]))
    return {name: statistics.median(values) for name, values in seconds.items()}


def rusage_run(
    cmd: Sequence[str], cwd: str | os.PathLike[str] | None = None
) -> tuple[float, float, int]:
    """One run of ``cmd``: its CPU seconds (user + system, with the descendants it waited for,
    as a shell pipeline's), its peak RSS in MB and its exit code (``os.wait4`` of the child)."""
    proc = subprocess.Popen(list(cmd), stdout=subprocess.DEVNULL, cwd=cwd, env=child_env())
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode  # KiB
