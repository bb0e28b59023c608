"""Launch records a sweep log contradicts itself on.

srt-slurm logs one ``Command:`` line per worker block. A block with two different ones does not
say what ran: taking either would let a point "agree" with the recipe on the strength of half
the log, so the conflict is a consistency problem of the launch (verify exits 1), like workers of
one role that were launched differently.
"""

from __future__ import annotations

from syncer.runs.logs import LoggedProcess, SweepLog
from syncer.wording import js


def command_conflicts(sweep: SweepLog) -> list[str]:
    """One problem per process whose block logs a second ``Command:`` that differs from the
    first (an identical repeat says nothing new and is not one)."""
    problems = []
    for proc in sweep.processes:
        for line, argv in proc.repeats:
            if argv != proc.argv:
                problems.append(
                    f"{_who(proc)} (line {proc.line}) logs two different Command: lines; the one "
                    f"on line {line} {_difference(proc.argv or [], argv)}"
                )
    return problems


def _who(proc: LoggedProcess) -> str:
    if proc.kind == "worker":
        return f"{proc.role} worker {proc.index} on {proc.node}"
    return f"{proc.kind} {proc.index} on {proc.node}"


def _difference(first: list[str], second: list[str]) -> str:
    """Where ``second`` leaves ``first``, in a few words (both are whole argv lists)."""
    for i, (a, b) in enumerate(zip(first, second, strict=False)):
        if a != b:
            return f"has {js(b)} where the first has {js(a)} (argument {i})"
    if len(second) > len(first):
        return f"adds {js(' '.join(second[len(first) :]), 120)}"
    return f"drops {js(' '.join(first[len(second) :]), 120)}"
