"""`python -m bench audit [COOKBOOK] [--inferencex-trees DIR] [--runs N] [--scale N]
[--decoder FILE | --sglang GIT_DIR]`: whole-process `sync audit --offline` of a cookbook, its JSON
and its markdown report (the reviewer diffs made, as the dashboard job does), side by side with
the cookbook's own decoder under node over the same modules (``bench/js/cookbook_decode.js``, one
process per module, every case decoded and its commands formatted; the page component as
``bench decode`` finds it), interleaved in the same run.

Also the cost per cell as the cookbook grows: the same audits (JSON and markdown) of a cookbook
of ``--scale`` (default 8) copies of every module, their CPU per cell and peak RSS beside the 1x
audits', and the memory each added cell holds to the end (the growth of the peak RSS).

COOKBOOK defaults to the reference copies of the published modules and the trees to the pairs'
InferenceX files (``reference/pairs/inferencex/<commit>/``).

Targets (issue 39): each report <= 1.0x node's CPU (the user cache of compiled templates and
parsed master files filled, as on a maintainer's machine or a runner restoring the workflow's
cache; the JSON audit with that cache empty is printed beside it, for information); CPU per
cell and peak RSS at ``--scale`` x within 10% of the 1x audit's (flat). Medians of ``--runs``
(default 5) rounds after an uncounted one.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench import REFERENCE, timing
from bench.decode import HARNESS, _decoder

TARGET = 1.0
# runs its arguments with XDG_CACHE_HOME a new empty folder, removed after
_EMPTY_CACHE = 'd=$(mktemp -d) && XDG_CACHE_HOME="$d" "$@"; c=$?; rm -rf "$d"; exit $c'
FLAT = 1.1


def _cells(paths: list[Path]) -> int:
    from syncer.cookbook.decode import load_decoder

    return sum(len(load_decoder(p).cells) for p in paths)


def _scaled(cookbook: Path, paths: list[Path], scale: int, where: Path) -> Path:
    """``scale`` copies of every module of ``cookbook``, each copy a model folder of its own."""
    for path in paths:
        rel = path.relative_to(cookbook)
        for k in range(scale):
            dest = where / rel.parent.parent / f"{rel.parent.name}-{k}" / rel.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
    return where


def main(argv: list[str]) -> int:
    from syncer.usecases.audit import module_paths

    parser = argparse.ArgumentParser(prog="python -m bench audit")
    parser.add_argument("cookbook", nargs="?", type=Path)
    parser.add_argument("--inferencex-trees", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--scale", type=int, default=8)
    parser.add_argument("--decoder", type=Path, help="the page component _agentx.jsx")
    parser.add_argument("--sglang", help="an SGLang git checkout (default $SYNC_SGLANG_GIT)")
    args = parser.parse_args(argv)
    cookbook: Path = args.cookbook or REFERENCE / "cookbook" / "agentx"
    trees: Path = args.inferencex_trees or REFERENCE / "pairs" / "inferencex"
    if not cookbook.is_dir() or not trees.is_dir():
        print(f"no cookbook at {cookbook} or no InferenceX trees at {trees}", file=sys.stderr)
        return 2
    paths = module_paths(cookbook)
    cells = _cells(paths)

    def audit(where: Path, form: str) -> list[str]:
        inputs = ["--cookbook", str(where), "--inferencex-trees", str(trees)]
        return [sys.executable, "-m", "syncer", "audit", *inputs, "--offline", "--format", form]

    with tempfile.TemporaryDirectory(prefix="sync-bench-audit-") as tmp:
        decoder, decoder_what = _decoder(args, Path(tmp))
        scaled = _scaled(cookbook, paths, args.scale, Path(tmp) / "scaled")
        commands = {
            "json": audit(cookbook, "json"),
            "markdown": audit(cookbook, "markdown"),
            "scaled json": audit(scaled, "json"),
            "scaled markdown": audit(scaled, "markdown"),
            # a first run on a machine: the user cache (compiled templates, parsed masters)
            # empty, made again in a fresh folder each round
            "cold json": ["bash", "-c", _EMPTY_CACHE, "bash", *audit(cookbook, "json")],
        }
        if decoder is not None:
            loop = " ".join(f"'{p}'" for p in paths)
            commands["node"] = [
                "bash",
                "-c",
                f"for m in {loop}; do node '{HARNESS}' '{decoder}' \"$m\" || exit 2; done "
                "> /dev/null",
            ]
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        rss: dict[str, list[float]] = {name: [] for name in commands}
        for round_ in range(1 + args.runs):
            for name, cmd in commands.items():
                seconds, peak, code = timing.rusage_run(cmd)
                if code not in (0, 1):  # 1: the audit has findings
                    print(f"{' '.join(cmd)} exited {code}", file=sys.stderr)
                    return 2
                if round_:
                    cpu[name].append(seconds)
                    rss[name].append(peak)
    med = {name: statistics.median(values) for name, values in cpu.items()}
    print(
        f"cookbook {cookbook}: {len(paths)} modules, {cells} cells "
        f"(medians of {args.runs} interleaved rounds, CPU)"
    )
    ok = True
    if "node" in med:
        print(f"  node         {med['node']:.3f} s: the cookbook decoder ({decoder_what})")
    else:
        print(f"  node         not measured: {decoder_what}")
    for form in ("json", "markdown"):
        line = f"  audit {form:<8} {med[form]:.3f} s, {med[form] / cells * 1000:.1f} ms per cell"
        if "node" in med:
            ratio = med[form] / med["node"]
            ok = ok and ratio <= TARGET
            line += f": {ratio:.2f}x node (target <= {TARGET}x)"
        print(line + f", peak RSS {max(rss[form]):.0f} MB")
    cold = f"  audit json, empty user cache {med['cold json']:.3f} s"
    if "node" in med:
        cold += f": {med['cold json'] / med['node']:.2f}x node"
    print(cold + " (a first run on a machine, for information: not held to the target)")
    for form in ("json", "markdown"):
        at = f"scaled {form}"
        per_cell, per_cell_scaled = med[form] / cells, med[at] / (cells * args.scale)
        peak, peak_scaled = max(rss[form]), max(rss[at])
        held = (peak_scaled - peak) * 1024 / (cells * (args.scale - 1))
        flat = per_cell_scaled <= FLAT * per_cell and peak_scaled <= FLAT * peak
        ok = ok and flat
        print(
            f"  at {args.scale}x {form:<8} {med[at]:.3f} s for {cells * args.scale} cells, "
            f"{per_cell_scaled * 1000:.1f} ms per cell: {per_cell_scaled / per_cell:.2f}x the "
            f"1x cost per cell; peak RSS {peak_scaled:.0f} MB ({peak:.0f} MB at 1x, "
            f"{held:.1f} KiB per added cell): target <= {FLAT}x both, "
            f"{'flat' if flat else 'NOT flat'}"
        )
    print("PASS" if ok and "node" in med else "FAIL")
    return 0
