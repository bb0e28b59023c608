"""Which sweep log belongs to which point of a config.

A sweep log names its variant (``Loaded config: <base>_<suffix>``, the recipe variant the job
ran); the artifact it came in is named after ``RESULT_FILENAME``, which carries ``tp``, ``ep``,
``dpa`` and ``conc``. A log is assigned to the one point those facts select; a log that selects
no point or several points is reported, never guessed. Eval jobs (``eval_…`` artifacts) are
not the launch the cookbook mirrors and are set aside.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from syncer.flags import DP_ATTENTION_FLAG, EP_FLAG, TP_FLAG, canonical_flag
from syncer.model import Block
from syncer.runs.logs import SweepLog
from syncer.wording import js

_RESULT = re.compile(
    r"_tp(?P<tp>[0-9]{1,9})-pp[0-9]+(?:-dcp[0-9]+)?(?:-pcp[0-9]+)?-ep(?P<ep>[0-9]{1,9})"
    r"-dpa(?P<dpa>true|false)_"
)
_CONC = re.compile(r"_conc(?P<conc>[0-9]{1,9})(?:_|$)")
_SMALL_INT = re.compile(r"[0-9]{1,9}")


class PointLike(Protocol):
    index: int
    variant: str
    concs: list[int]
    raw: dict[str, list[Block]]


@dataclass
class Hints:
    variant: str | None = None
    tp: int | None = None
    ep: int | None = None
    dpa: bool | None = None
    conc: int | None = None
    eval_job: bool = False

    def describe(self) -> str:
        parts = []
        if self.variant:
            parts.append(f"variant {self.variant}")
        if self.tp is not None:
            parts.append(f"tp{self.tp} ep{self.ep} dpa {str(self.dpa).lower()}")
        if self.conc is not None:
            parts.append(f"conc {self.conc}")
        return ", ".join(parts) or "no variant name or result file name"


# What is assigned to points: a SweepLog (srt-slurm run) or a script-era ResultDir.
_Log = TypeVar("_Log")


@dataclass
class Unmatched(Generic[_Log]):
    sweep: _Log
    reason: str


@dataclass
class Assignment(Generic[_Log]):
    by_point: dict[int, list[_Log]] = field(default_factory=dict)
    how: dict[str, str] = field(default_factory=dict)  # sweep source -> how it was matched
    unmatched: list[Unmatched[_Log]] = field(default_factory=list)
    evals: list[_Log] = field(default_factory=list)


def hints(sweep: SweepLog) -> Hints:
    h = name_hints(sweep.source)
    h.variant = sweep.config_name
    if h.variant is None and sweep.run_name and sweep.job_id:
        h.variant = sweep.run_name.removesuffix(f"_{sweep.job_id}")
    return h


def name_hints(source: str) -> Hints:
    """What a member path says about its job: eval job or not, and ``tp``/``ep``/``dpa``/``conc``
    from the ``RESULT_FILENAME`` its artifact (or result directory) is named after."""
    h = Hints()
    parts = source.replace("\\", "/").split("/")
    h.eval_job = any(p.startswith(("eval_", "eval-")) for p in parts)
    for part in reversed(parts):
        m = _RESULT.search(part)
        if m:
            h.tp, h.ep, h.dpa = int(m["tp"]), int(m["ep"]), m["dpa"] == "true"
            c = _CONC.search(part[m.end() - 1 :])
            if c:
                h.conc = int(c["conc"])
            break
    return h


def point_shape(point: PointLike) -> tuple[int | None, int | None, bool]:
    """(tp, ep, dp attention) of a point, read from its rendered worker."""
    for blocks in point.raw.values():
        for block in blocks:
            if block.get("kind") != "worker":
                continue
            flags = {canonical_flag(a[0]): a[1:] for a in block.get("args", []) if a}
            tp = flags.get(TP_FLAG)
            ep = flags.get(EP_FLAG)
            return (
                int(tp[0]) if tp and _SMALL_INT.fullmatch(tp[0]) else 1,
                int(ep[0]) if ep and _SMALL_INT.fullmatch(ep[0]) else 1,
                DP_ATTENTION_FLAG in flags,
            )
    return (None, None, False)


def assign(
    sweeps: Sequence[SweepLog], points: Sequence[PointLike], *, only: int | None = None
) -> Assignment[SweepLog]:
    """Assign sweep logs to points. ``only`` = the index of the one point being verified: a
    lone log without a variant name or result file name is then taken for it."""
    out = Assignment[SweepLog]()
    shapes = {p.index: point_shape(p) for p in points}
    for sweep in sweeps:
        h = hints(sweep)
        if h.eval_job:
            out.evals.append(sweep)
            continue
        cands = list(points)
        how: list[str] = []
        if h.variant:
            named = [p for p in cands if p.variant == h.variant]
            if named:
                cands, how = named, ["variant name"]
            elif any(p.variant for p in points):
                out.unmatched.append(
                    Unmatched(
                        sweep, f"ran variant {js(h.variant)}, which no point of the config uses"
                    )
                )
                continue
        if h.conc is not None:
            cands = [p for p in cands if h.conc in p.concs]
            how.append("concurrency")
        if h.tp is not None:
            cands = [p for p in cands if shapes[p.index] == (h.tp, h.ep, h.dpa)]
            how.append("tp/ep/dpa")
        if len(cands) > 1 and only is not None and not how and len(sweeps) == 1:
            cands = [p for p in cands if p.index == only]
            how = ["--point"]
        if len(cands) > 1 and len(points) > 1:
            names = ", ".join(str(p.index) for p in cands)
            # --point settles it only for a run of one log; among several, it would be a guess.
            hint = "pass --point to choose" if len(sweeps) == 1 else "verify it on its own"
            out.unmatched.append(Unmatched(sweep, f"fits points {names} ({h.describe()}); {hint}"))
            continue
        if not cands:
            out.unmatched.append(Unmatched(sweep, f"fits no point of the config ({h.describe()})"))
            continue
        point = cands[0]
        out.by_point.setdefault(point.index, []).append(sweep)
        out.how[sweep.source] = " + ".join(how) or "only point"
    return out
