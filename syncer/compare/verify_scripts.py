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
from typing import TYPE_CHECKING, Any

from syncer.compare.diff import Comparison, compare_blocks
from syncer.errors import SyncError
from syncer.flags import DP_ATTENTION_FLAG, EP_FLAG, HICACHE_FLAG, TP_FLAG, canonical_flag
from syncer.inferencex.master import ConfigEntry, Row
from syncer.inferencex.scripts import ScriptLaunch
from syncer.runs.mapping import Assignment, Unmatched, name_hints
from syncer.runs.scriptrun import ResultDir, logged_blocks, read_script_run
from syncer.selection import select

if TYPE_CHECKING:
    from syncer.compare.verify import CookbookCheck, VerifyResult

_INT = re.compile(r"[0-9]{1,9}")
SCRIPT_ROUTER = "sglang"  # the scripts launch sglang.launch_server (and sglang_router)


@dataclass
class ScriptPoint:
    """One job of a script-launched key: a master row at one concurrency."""

    index: int
    item: int
    concs: list[int]
    row: Row
    label: str
    script: str

    # How reports and `--conc` name a point's launch: a script has no recipe variant.
    override = None

    @property
    def variant(self) -> str:
        return self.script


def script_points(entry: ConfigEntry, launch: ScriptLaunch) -> list[ScriptPoint]:
    from syncer.inferencex.render import _parallel

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
        label = f"Agg {_parallel(args, 1)}"
        if _offloads(row):
            label += f" · {row.kv_offload_backend or row.kv_offloading} KV offload"
        out.append(
            ScriptPoint(
                job.index, row.index, list(job.concs), row, label, launch.rows[row.index].name
            )
        )
    return out


def _offloads(row: Row) -> bool:
    return row.kv_offloading not in (None, "none")


def argv_shape(rd: ResultDir) -> tuple[int, int, bool, bool]:
    """(tp, ep, DP attention, HiCache) of the logged server argv (SGLang's defaults when absent)."""
    from syncer.runs.logs import split_command

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
) -> Assignment:
    out = Assignment()
    for rd in dirs:
        if rd.eval_job:
            out.evals.append(rd)  # type: ignore[arg-type]
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
            out.unmatched.append(Unmatched(rd, reason))  # type: ignore[arg-type]
            continue
        conc = h.conc if h.conc is not None else rd.concurrency
        if h.conc is not None and rd.concurrency is not None and h.conc != rd.concurrency:
            reason = (
                f"named conc {h.conc} but its AIPerf command runs --concurrency {rd.concurrency}"
            )
            out.unmatched.append(Unmatched(rd, reason))  # type: ignore[arg-type]
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
            out.unmatched.append(Unmatched(rd, reason))  # type: ignore[arg-type]
            continue
        point = cands[0]
        out.by_point.setdefault(point.index, []).append(rd)  # type: ignore[arg-type]
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


def verify_script_config(
    key: str,
    launch: ScriptLaunch,
    *,
    inferencex: Path,
    run: Path | None,
    cookbook: Path | None,
    point: int | None = None,
    conc: int | None = None,
) -> VerifyResult:
    """Verify every point of the script-launched ``key``, or those ``--point``/``--conc``
    select (:mod:`syncer.selection`), against ``run``."""
    from syncer.compare.verify import (
        LogCheck,
        PointResult,
        VerifyResult,
        _cookbook_module,
        _policy_lookup,
        _shown,
        pinned_run,
        project_root,
    )
    from syncer.inferencex.master import load_master
    from syncer.inferencex.policy import load_policy

    if launch.multinode:
        raise SyncError(
            f"{key}: launched by a multi-node bash script ({launch.describe()}); its run's logs "
            "are not read by this tool",
            path=launch.master_path,
            line=launch.line,
        )
    entry = load_master(inferencex).entry(key, script_launched=True)
    points = script_points(entry, launch)
    selected = select(points, point=point, conc=conc, concs=lambda p: p.concs, owner=key)
    # A lone nameless result directory is taken for the verified point only when one is.
    only = selected[0].index if len(selected) == 1 and (point, conc) != (None, None) else None
    root = project_root()
    run_path = run if run is not None else pinned_run(key, root)
    data = read_script_run(run_path)
    assignment = assign_dirs(data.dirs, points, only=only)
    lookup = _policy_lookup(load_policy())
    decoder, module_path = _cookbook_module(
        key, cookbook if cookbook is not None else root / "cookbook_snippets"
    )
    notes: list[str] = list(data.missing)
    results = []
    for p in selected:
        res = PointResult(p.index, p.label, list(p.concs), p.script, None, p.item, SCRIPT_ROUTER)
        check = _cell_of(decoder, module_path, key, p, cookbook)
        res.cookbook = check
        cell_routers = decoder.routers(check.cell) if check.cell is not None else []
        for rd in assignment.by_point.get(p.index, []):
            logged, how_notes = logged_blocks(rd, entry.model)  # type: ignore[arg-type]
            notes.extend(f"point {p.index}: {n}" for n in how_notes)
            if check.cell is not None and check.point is not None:
                cb = decoder.blocks_for(check.cell, check.point, SCRIPT_ROUTER)
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
                    rd.source,  # type: ignore[attr-defined]
                    None,
                    assignment.how.get(rd.source, ""),  # type: ignore[attr-defined]
                    comp,
                    list(rd.problems),  # type: ignore[attr-defined]
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
        results.append(res)
    return VerifyResult(
        key=key,
        inferencex=_shown(inferencex),
        run=_shown(run_path),
        cookbook=_shown(module_path) if module_path else None,
        points=results,
        run_data=data,
        assignment=assignment,
        srt_version="",
        notes=notes,
        launched_by=launch.describe(),
    )


def _cell_of(
    decoder: Any, module_path: str | None, key: str, p: ScriptPoint, cookbook: Path | None
) -> CookbookCheck:
    """The cookbook point of ``p`` (a ``CookbookCheck`` without comparisons: the one comparison
    of a script point is the cookbook against the log, kept with the log)."""
    from syncer.compare.verify import CookbookCheck, _cookbook_point

    if decoder is None or module_path is None:
        where = str(cookbook) if cookbook is not None else "cookbook_snippets/"
        return CookbookCheck(
            where, None, None, None, missing=f"no cookbook module in {where} has a cell for {key}"
        )
    found = _cookbook_point(decoder, key, p)
    if found is None:
        return CookbookCheck(
            module_path,
            None,
            None,
            None,
            missing=f"the cookbook has no point of {key} for item {p.item} at concurrency "
            f"{', '.join(str(c) for c in p.concs)}",
        )
    ci, pi = found
    return CookbookCheck(module_path, decoder.cells[ci].get("id"), ci, pi)
