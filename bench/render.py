"""`python -m bench render [--runs N]`: cost of recipe rendering, as ratios.

Two measurements, each against a reference run in the same process:

* ``master``: parsing a large master config (``read_master``, which ``load_master`` does once
  per content; the reference nvidia-master at a6ab0ecb, 149 keys, ~290 KB, when the reference
  data exists, else the bundled example's master repeated to a similar size) against a plain
  PyYAML C ``safe_load`` of the same text. The strict loader (duplicate keys, alias-bomb check)
  is what costs extra.
* ``render``: ``render_config`` of every bundled example config (both routers, raw and cookbook
  form) against ``safe_load`` of the files it reads (master, recipes, shared block, golden AL),
  i.e. against the minimum any renderer has to do.
* ``scale``: the bundled single-node config (7 points, one recipe variant each) against the
  same config grown to ``--scale`` times the points (default 16: 112 points, 112 variants,
  every row's concurrencies and every variant copied with its own CONC). Rendering reads the
  whole recipe for every point, so the cost per point stays flat only if each variant is read
  once: the ratio of the per-point costs is the figure (target 1.2 or less).

Medians over ``--runs`` (default 9).
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from bench import REFERENCE

ROOT = Path(__file__).resolve().parents[1]
BIG_MASTER = (
    REFERENCE / "inferencex" / "inferencex-e2e__configs__nvidia-master.yaml" / "a6ab0ecb.yaml"
)
EXAMPLE = ROOT / "examples" / "inferencex"
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _median(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _big_master(tmp: Path) -> Path:
    target = tmp / "inferencex-e2e" / "configs" / "nvidia-master.yaml"
    target.parent.mkdir(parents=True)
    if BIG_MASTER.is_file():
        target.write_text(BIG_MASTER.read_text(encoding="utf-8"), encoding="utf-8")
    else:
        text = (EXAMPLE / "inferencex-e2e" / "configs" / "nvidia-master.yaml").read_text(
            encoding="utf-8"
        )
        doc = yaml.load(text, Loader=LOADER)
        big = {f"{key}-{i}": value for i in range(40) for key, value in doc.items()}
        target.write_text(yaml.safe_dump(big, sort_keys=False), encoding="utf-8")
    return tmp


DSPARK = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
RECIPE = "benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/gb300-fp4-mtp/agentic.yaml"


def scaled_checkout(target: Path, scale: int) -> Path:
    """The bundled example with the dspark config grown ``scale`` times: copy ``i`` of every
    row measures ``conc + 1000 * i`` and copy ``i`` of every variant carries that CONC, so each
    point still matches exactly one variant."""
    shutil.copytree(EXAMPLE, target)
    layout = target / "inferencex-e2e"
    master_path = layout / "configs" / "nvidia-master.yaml"
    master = yaml.load(master_path.read_text(encoding="utf-8"), Loader=LOADER)
    block = master[DSPARK]["scenarios"]["agentic-coding"][0]
    block["search-space"] = [
        {**row, "conc-list": [c + 1000 * i for c in row["conc-list"]]}
        for i in range(scale)
        for row in block["search-space"]
    ]
    master_path.write_text(yaml.safe_dump(master, sort_keys=False), encoding="utf-8")
    recipe_path = layout / RECIPE
    recipe = yaml.load(recipe_path.read_text(encoding="utf-8"), Loader=LOADER)
    grown = {k: v for k, v in recipe.items() if not k.startswith("override_")}
    for i in range(scale):
        for name, section in recipe.items():
            if not name.startswith("override_"):
                continue
            copy = dict(section)
            bench = dict(copy.get("benchmark") or {})
            env = dict(bench.get("env") or {})
            env["CONC"] = str(int(env["CONC"]) + 1000 * i)
            copy["benchmark"] = {**bench, "env": env}
            grown[f"{name}_x{i}"] = copy
    recipe_path.write_text(yaml.safe_dump(grown, sort_keys=False), encoding="utf-8")
    return target


def scale_figures(scale: int, runs: int) -> tuple[int, float, int, float]:
    """(points, seconds) of rendering the dspark config at 1x and at ``scale`` x."""
    from syncer.inferencex.render import render_config

    out: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for factor in (1, scale):
            root = scaled_checkout(Path(tmp) / f"x{factor}", factor)
            points = len(render_config(root, DSPARK).points)
            out += [points, _median(lambda root=root: render_config(root, DSPARK), runs)]
    small_points, small, big_points, big = out
    return int(small_points), small, int(big_points), big


def main(argv: list[str]) -> int:
    import argparse

    from syncer.inferencex.master import find_layout, load_master, read_master
    from syncer.inferencex.render import render_config

    parser = argparse.ArgumentParser(prog="python -m bench render")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--scale", type=int, default=16)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        checkout = _big_master(Path(tmp))
        text = (checkout / "inferencex-e2e" / "configs" / "nvidia-master.yaml").read_text(
            encoding="utf-8"
        )
        keys = len(load_master(checkout).keys())
        layout = find_layout(checkout)
        files = [layout / "configs" / "nvidia-master.yaml"]
        ours = _median(lambda: read_master(checkout, layout, files), args.runs)
        ref = _median(lambda: yaml.load(text, Loader=LOADER), args.runs)
    print(
        f"master: {keys} keys, {len(text):,} chars: read_master {ours * 1e3:.1f} ms, "
        f"C safe_load {ref * 1e3:.1f} ms, ratio {ours / ref:.2f}x"
    )

    master = load_master(EXAMPLE)
    configs = [k for k in master.keys() if "agentic" in k and "vllm" not in k]  # noqa: SIM118
    files = sorted({p for p in EXAMPLE.rglob("*.yaml")})
    texts = [f.read_text(encoding="utf-8") for f in files]
    points = sum(len(render_config(EXAMPLE, key).points) for key in configs)
    ours = _median(lambda: [render_config(EXAMPLE, key) for key in configs], args.runs)
    ref = _median(lambda: [yaml.load(t, Loader=LOADER) for t in texts], args.runs)
    print(
        f"render: {len(configs)} configs, {points} points: render_config {ours * 1e3:.1f} ms, "
        f"C safe_load of {len(files)} input files {ref * 1e3:.1f} ms, ratio {ours / ref:.2f}x"
    )

    small_points, small, big_points, big = scale_figures(args.scale, args.runs)
    per_small, per_big = small / small_points, big / big_points
    print(
        f"scale: {small_points} points {small * 1e3:.1f} ms ({per_small * 1e3:.2f} ms/point), "
        f"{big_points} points {big * 1e3:.1f} ms ({per_big * 1e3:.2f} ms/point), "
        f"per-point ratio {per_big / per_small:.2f}x (target <= 1.2)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
