"""`python -m bench audit [COOKBOOK] [--inferencex CLONE | --inferencex-trees DIR]`: `sync audit`
of a whole cookbook, relative to decoding the same cookbook (the reference run, made in the
same process): parse every module and decode every (cell, point, router, tier) case with its
"Copy all" text, as ``sync decode --all`` does for each module.

The audit run is complete and offline: every module parsed and decoded, its round trip through
the generator (compaction and emission), every (config, pinned commit) rendered from the
InferenceX trees and compared point by point, the master checks, and the JSON report built. The
markdown report's reviewer diffs are made too (``--markdown``), as the dashboard job does.

COOKBOOK defaults to the reference copies of the published modules and the trees to the pairs'
InferenceX files (``reference/pairs/inferencex/<commit>/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench import REFERENCE, timing

ROUNDS = 5


def _decode_all(paths: list[Path]) -> int:
    from syncer.cookbook.decode import decoder_for_text
    from syncer.cookbook.jsmodule import read_text

    cases = 0
    for path in paths:
        for case in decoder_for_text(read_text(path), str(path)).cases():
            _ = case.copy_all
            cases += 1
    return cases


def main(argv: list[str]) -> int:
    from syncer.untrusted import json_text
    from syncer.usecases.audit import audit, module_paths
    from syncer.usecases.audit_report import audit_report
    from syncer.usecases.audit_trees import GitTrees, SnapshotTrees

    args = list(argv)
    markdown = "--markdown" in args
    if markdown:
        args.remove("--markdown")
    make_trees = None
    for flag in ("--inferencex", "--inferencex-trees"):
        if flag in args:
            i = args.index(flag)
            where = Path(args[i + 1])
            del args[i : i + 2]
            make_trees = (
                (lambda w=where: GitTrees(w))
                if flag == "--inferencex"
                else (lambda w=where: SnapshotTrees(w))
            )
    cookbook = Path(args[0]) if args else REFERENCE / "cookbook" / "agentx"
    if make_trees is None:
        trees_dir = REFERENCE / "pairs" / "inferencex"
        make_trees = lambda: SnapshotTrees(trees_dir)  # noqa: E731
    if not cookbook.is_dir():
        print(f"no cookbook at {cookbook}", file=sys.stderr)
        return 2
    paths = module_paths(cookbook)

    def run_audit() -> object:
        trees = make_trees()
        try:
            result = audit(cookbook, trees)
            report = audit_report(result)
            json_text(report.json())
            if markdown:
                report.markdown()
            return result
        finally:
            close = getattr(trees, "close", None)
            if close is not None:
                close()

    cases = _decode_all(paths)
    result = run_audit()
    # Interleaved with the reference (bench/timing.py), so load from other processes falls
    # on both alike; CPU medians are compared (waiting for a core stretches wall time only).
    times = timing.calls({"reference": lambda: _decode_all(paths), "audit": run_audit}, ROUNDS)
    reference, took = times["reference"], times["audit"]
    counts = result.counts()  # type: ignore[attr-defined]
    cells = counts["cells"]
    print(
        f"cookbook {cookbook}: {len(paths)} modules, {cells} cells, {cases} cases; "
        f"recipe {counts['recipe']}"
    )
    print(
        f"reference: decode + Copy-all text of every case, {reference.cpu * 1000:.0f} ms CPU "
        f"({reference.wall * 1000:.0f} ms wall)"
    )
    print(
        f"audit    {took.cpu / reference.cpu:6.2f}x reference CPU ({took.cpu * 1000:.0f} ms CPU, "
        f"{took.wall * 1000:.0f} ms wall, {took.cpu / max(cells, 1) * 1000:.1f} ms CPU per cell"
        f"{', markdown' if markdown else ''}), {counts['findings']} findings"
    )
    return 0
