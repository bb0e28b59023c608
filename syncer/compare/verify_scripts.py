"""`sync verify` for a key launched by a bash script: the cookbook cell against what the run
logged, per point.

There is no recipe to render (the script is never run or interpreted), so each point has one
comparison, **cookbook vs log**: the decoded cookbook point (SGLang arm, the one the script
launched, at its measured KV tier) against the worker argv of ``sglang_command.txt`` and the
``SGLANG_*`` env of ``server.log``'s header, with the same exclusion policy and report formats
as recipe keys. What the logs cannot show is ``not-logged`` and listed per point as "not logged:
cannot verify": env outside ``SGLANG_*`` (or all env, when the header is absent), the router's
command line and env, and the cookbook's derived Dynamo arm, which no script launched.

Result directories are matched to points (master rows x concurrencies) by what they say about
themselves: the ``RESULT_FILENAME`` they are named after (``tp``/``ep``/``dpa``/``conc``), the
``--concurrency`` of their AIPerf command, and the logged argv's parallelism and HiCache flag.
A directory that fits no point, or several, is reported, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from syncer.compare.diff import Comparison, ExclusionLookup, compare_blocks
from syncer.compare.results import LogCheck, PointResult
from syncer.compare.verify import cookbook_cell
from syncer.cookbook.decode import Decoder
from syncer.flags import DP_ATTENTION_FLAG, EP_FLAG, HICACHE_FLAG, TP_FLAG, canonical_flag
from syncer.inferencex.master import ConfigEntry
from syncer.inferencex.recipe_facts import parallel_label
from syncer.inferencex.rows import SearchRow
from syncer.inferencex.scripts import ScriptLaunch
from syncer.model import Selection
from syncer.runs.logs import split_command
from syncer.runs.mapping import Assignment, Unmatched, name_hints
from syncer.runs.scriptrun import ResultDir, logged_blocks

_INT = re.compile(r"[0-9]{1,9}")
SCRIPT_ROUTER = "sglang"  # the scripts launch sglang.launch_server (and sglang_router)


@dataclass
class ScriptPoint:
    """One job of a script-launched key: a master row at one concurrency."""

    index: int
    item: int
    concs: list[int]
    row: SearchRow
    label: str
    script: str

    # How reports and `--conc` name a point's launch: a script has no recipe variant.
    override = None

    @property
    def variant(self) -> str:
        return self.script


def script_points(entry: ConfigEntry, launch: ScriptLaunch) -> list[ScriptPoint]:
    out = []
    for job in entry.jobs():
        row = job.row
        tp = row.tp or 1
        args = {
            "tensor-parallel-size": tp,
            "expert-parallel-size": row.ep or 1,
            "enable-dp-attention": row.dp_attn,
            "data-parallel-size": tp if row.dp_attn else 1,
        }
        label = f"Agg {parallel_label(args, 1)}"
        if _offloads(row):
            label += f" · {row.kv_offload_backend or row.kv_offloading} KV offload"
        out.append(
            ScriptPoint(
                job.index, row.index, list(job.concs), row, label, launch.rows[row.index].name
            )
        )
    return out


def _offloads(row: SearchRow) -> bool:
    return row.kv_offloading not in (None, "none")


def argv_shape(rd: ResultDir) -> tuple[int, int, bool, bool]:
    """(tp, ep, DP attention, HiCache) of the logged server argv (SGLang's defaults when absent)."""
    flags = {canonical_flag(a[0]): a[1:] for a in split_command(rd.argv or [])[2]}

    def number(flag: str) -> int:
        values = flags.get(flag)
        return int(values[0]) if values and _INT.fullmatch(values[0]) else 1

    return (
        number(TP_FLAG),
        number(EP_FLAG),
        DP_ATTENTION_FLAG in flags,
        HICACHE_FLAG in flags,
    )


def assign_dirs(
    dirs: Sequence[ResultDir], points: Sequence[ScriptPoint], *, only: int | None = None
) -> Assignment[ResultDir]:
    out = Assignment[ResultDir]()
    for rd in dirs:
        if rd.eval_job:
            out.evals.append(rd)
            continue
        h = name_hints(rd.name)
        tp, ep, dpa, hicache = argv_shape(rd)
        cands = [
            p
            for p in points
            if (p.row.tp or 1) == tp
            and (p.row.ep or 1) == ep
            and p.row.dp_attn == dpa
            and _offloads(p.row) == hicache
        ]
        how = ["logged tp/ep/dp-attention/HiCache"]
        described = f"tp{tp} ep{ep} dp-attention {str(dpa).lower()} HiCache {str(hicache).lower()}"
        if h.tp is not None and (h.tp, h.ep, h.dpa) != (tp, ep, dpa):
            reason = (
                f"named tp{h.tp} ep{h.ep} dpa {str(h.dpa).lower()} but its command runs {described}"
            )
            out.unmatched.append(Unmatched(rd, reason))
            continue
        conc = h.conc if h.conc is not None else rd.concurrency
        if h.conc is not None and rd.concurrency is not None and h.conc != rd.concurrency:
            reason = (
                f"named conc {h.conc} but its AIPerf command runs --concurrency {rd.concurrency}"
            )
            out.unmatched.append(Unmatched(rd, reason))
            continue
        if conc is not None:
            cands = [p for p in cands if conc in p.concs]
            how.append("result directory name" if h.conc is not None else "AIPerf --concurrency")
            described += f", conc {conc}"
        if len(cands) > 1 and only is not None and conc is None and len(dirs) == 1:
            cands = [p for p in cands if p.index == only]
            how.append("--point")
        if len(cands) != 1:
            if cands:
                names = ", ".join(str(p.index) for p in cands)
                reason = f"fits points {names} ({described}); its concurrency is not logged"
            else:
                reason = f"fits no point of the config ({described})"
            out.unmatched.append(Unmatched(rd, reason))
            continue
        point = cands[0]
        out.by_point.setdefault(point.index, []).append(rd)
        out.how[rd.source] = " + ".join(how)
    return out


def _not_logged(comp: Comparison) -> list[str]:
    """The comparison's not-logged keys, as the report lists them per point."""
    out = []
    for e in comp.entries:
        if e.status != "not-logged":
            continue
        if e.field == "cmd":
            out.append(f"{e.block}: command line, flags and environment")
        elif e.field == "env" and e.key == "(environment)":
            out.append(f"{e.block}: environment (server.log has no SGLANG_* header)")
        elif e.field == "env":
            out.append(f"{e.block} env {e.key}")
        else:
            out.append(f"{e.block} {e.field} {e.key}")
    return out


def compare_script_point(
    p: ScriptPoint,
    *,
    key: str,
    model: str,
    assignment: Assignment[ResultDir],
    lookup: ExclusionLookup,
    decoder: Decoder | None,
    module_path: str | None,
    cookbook: Path | None,
) -> tuple[PointResult, list[str]]:
    """The one comparison of a script point, cookbook against each of its result directories,
    and what no log shows; with the notes on how each directory's blocks were read."""
    notes: list[str] = []
    res = PointResult(p.index, p.label, list(p.concs), p.script, None, p.item, SCRIPT_ROUTER)
    # The one comparison of a script point is the cookbook against the log, kept with the log.
    check = cookbook_cell(decoder, module_path, key, p, cookbook)
    res.cookbook = check
    cell_routers = (
        decoder.routers(check.cell) if decoder is not None and check.cell is not None else []
    )
    for rd in assignment.by_point.get(p.index, []):
        logged, how_notes = logged_blocks(rd, model)
        notes.extend(f"point {p.index}: {n}" for n in how_notes)
        if decoder is not None and check.cell is not None and check.point is not None:
            # The decoder's own blocks, not a copy: compare_blocks only reads them.
            cb = decoder.shown_blocks(Selection(check.cell, check.point, SCRIPT_ROUTER))
            comp = compare_blocks(
                cb,
                logged,
                left="cookbook",
                right="log",
                router=SCRIPT_ROUTER,
                exclusion=lookup,
                placement=True,
                right_logged=True,
            )
        else:
            comp = Comparison("cookbook", "log", SCRIPT_ROUTER)
        res.logs.append(
            LogCheck(
                rd.source,
                None,
                assignment.how.get(rd.source, ""),
                comp,
                list(rd.problems),
            )
        )
    for router in cell_routers:
        if router != SCRIPT_ROUTER:
            res.unverified.append(
                f"the cookbook's {router} arm (derived by the cookbook; the script never "
                "launched it)"
            )
    for lc in res.logs:
        res.unverified.extend(_not_logged(lc.comparison))
    return res, notes
