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
* ``real``: whole-process ``sync render KEY --inferencex TREE`` of each SGLang multi-node key
  of a real InferenceX tree (the 843c6254 snapshot of the reference data, when it exists), each
  beside a Python process reading what any renderer has to read, with PyYAML's C loader: the
  master configs and the key's recipe files. Target: at most 1.5x, CPU time.
* ``keys``: one master of 1, then ``--keys`` (default 1,000) copies of the bundled dspark key,
  every key rendered in a fresh process after a warm-up render of the bundled example (so the
  figure is rendering, the master's parse included, not start-up); the cost per config at N
  keys against the cost at 1 key, both measured in the same run. Target: at most 1.2x.
* ``scale``: the bundled single-node config (7 points, one recipe variant each) against the
  same config grown to ``--scale`` times the points (default 16: 112 points, 112 variants,
  every row's concurrencies and every variant copied with its own CONC). Rendering reads the
  whole recipe for every point, so the cost per point stays flat only if each variant is read
  once: the ratio of the per-point costs is the figure (target 1.2 or less).

Medians over ``--runs`` (default 9; the whole-process cases: ``--process-runs``, default 5),
measured interleaved with their reference (``bench/timing.py``). ``--case`` runs only some.
"""

from __future__ import annotations

import copy
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


SNAPSHOT = REFERENCE / "inferencex-snapshots" / "843c6254"
READ_YAML = (
    "import sys, yaml\n"
    "for p in sys.argv[1:]:\n"
    "    yaml.load(open(p, encoding='utf-8').read(), Loader=yaml.CSafeLoader)"
)
REAL_TARGET = 1.5
KEYS_TARGET = 1.2


def real_keys(tree: Path) -> dict[str, list[Path]]:
    """The SGLang multi-node keys of ``tree`` that render, each with the files a renderer must
    read: every master config (duplicate keys across them are refused) and the key's recipes."""
    from syncer.errors import SyncError
    from syncer.inferencex.master import is_sglang, load_master
    from syncer.inferencex.render import render_config

    master = load_master(tree)
    out: dict[str, list[Path]] = {}
    for key, (raw, _) in master.data.items():
        framework = raw.get("framework")
        if not (raw.get("multinode") and isinstance(framework, str) and is_sglang(framework)):
            continue
        try:
            rendered = render_config(tree, key)
        except SyncError:
            continue
        recipes = sorted({master.layout_root / p.recipe for p in rendered.points})
        shared = rendered.entry.shared_block_path()
        out[key] = [*master.files, *recipes, *([shared] if shared else [])]
    return out


def real_case(runs: int) -> None:
    from bench import timing

    if not SNAPSHOT.is_dir():
        print(f"real: skipped, no InferenceX tree at {SNAPSHOT}")
        return
    keys = real_keys(SNAPSHOT)
    commands: dict[str, list[str]] = {}
    for key, files in keys.items():
        commands[f"{key} sync"] = [sys.executable, "-m", "syncer", "render", key]
        commands[f"{key} sync"] += ["--inferencex", str(SNAPSHOT)]
        commands[f"{key} floor"] = [sys.executable, "-c", READ_YAML, *map(str, files)]
    times = timing.processes(commands, runs)
    print(f"real: sync render KEY --inferencex {SNAPSHOT} ({len(keys)} keys, medians of {runs})")
    ratios = []
    for key, files in keys.items():
        ours, floor = times[f"{key} sync"], times[f"{key} floor"]
        ratios.append(ours.cpu / floor.cpu)
        print(
            f"  {key}: {ours.cpu:.3f} s CPU ({ours.wall:.3f} s wall) vs floor {floor.cpu:.3f} s "
            f"CPU ({len(files)} files): {ratios[-1]:.2f}x"
        )
    print(
        f"  ratio {min(ratios):.2f}x to {max(ratios):.2f}x, median "
        f"{statistics.median(ratios):.2f}x (target <= {REAL_TARGET}x CPU)"
    )


# Warm first (imports, the policy, templates: on the bundled example), then time rendering
# every key of a master this process has not read yet, CPU seconds printed last.
RENDER_KEYS = (
    "import sys, time\n"
    "from syncer.inferencex.master import load_master\n"
    "from syncer.inferencex.render import render_config\n"
    "render_config(sys.argv[2], sys.argv[3])\n"
    "start = time.process_time()\n"
    "for key in load_master(sys.argv[1]).keys():\n"
    "    render_config(sys.argv[1], key)\n"
    "print(time.process_time() - start)"
)


def many_keys_checkout(target: Path, keys: int) -> Path:
    """The bundled example whose master holds only ``keys`` copies of the dspark key."""
    shutil.copytree(EXAMPLE, target)
    master_path = target / "inferencex-e2e" / "configs" / "nvidia-master.yaml"
    master = yaml.load(master_path.read_text(encoding="utf-8"), Loader=LOADER)
    # Copies, not one shared object: the dump would write one anchor and aliases to it.
    copies = {f"{DSPARK}-{i}" if i else DSPARK: copy.deepcopy(master[DSPARK]) for i in range(keys)}
    master_path.write_text(yaml.safe_dump(copies, sort_keys=False), encoding="utf-8")
    return target


def keys_case(counts: list[int], runs: int) -> None:
    from bench import timing

    with tempfile.TemporaryDirectory() as tmp:
        commands = {
            n: [
                sys.executable,
                "-c",
                RENDER_KEYS,
                str(many_keys_checkout(Path(tmp) / f"k{n}", n)),
                str(EXAMPLE),
                DSPARK,
            ]
            for n in counts
        }
        seconds = timing.reported(commands, runs)
    per_config = {n: seconds[n] / n for n in counts}
    first = per_config[counts[0]]
    for n in counts:
        print(
            f"keys: one master of {n} keys, every key rendered: {seconds[n]:.3f} s CPU, "
            f"{per_config[n] * 1e3:.2f} ms/config, {per_config[n] / first:.2f}x the cost per "
            f"config at {counts[0]} (target <= {KEYS_TARGET}x)"
        )


CASES = ("master", "render", "scale", "real", "keys")


def master_case(runs: int) -> None:
    from syncer.inferencex.master import find_layout, load_master, read_master

    with tempfile.TemporaryDirectory() as tmp:
        checkout = _big_master(Path(tmp))
        text = (checkout / "inferencex-e2e" / "configs" / "nvidia-master.yaml").read_text(
            encoding="utf-8"
        )
        keys = len(load_master(checkout).keys())
        layout = find_layout(checkout)
        files = [layout / "configs" / "nvidia-master.yaml"]
        ours = _median(lambda: read_master(checkout, layout, files), runs)
        ref = _median(lambda: yaml.load(text, Loader=LOADER), runs)
    print(
        f"master: {keys} keys, {len(text):,} chars: read_master {ours * 1e3:.1f} ms, "
        f"C safe_load {ref * 1e3:.1f} ms, ratio {ours / ref:.2f}x"
    )


def render_case(runs: int) -> None:
    from syncer.inferencex.master import load_master
    from syncer.inferencex.render import render_config

    master = load_master(EXAMPLE)
    configs = [k for k in master.keys() if "agentic" in k and "vllm" not in k]  # noqa: SIM118
    files = sorted({p for p in EXAMPLE.rglob("*.yaml")})
    texts = [f.read_text(encoding="utf-8") for f in files]
    points = sum(len(render_config(EXAMPLE, key).points) for key in configs)
    ours = _median(lambda: [render_config(EXAMPLE, key) for key in configs], runs)
    ref = _median(lambda: [yaml.load(t, Loader=LOADER) for t in texts], runs)
    print(
        f"render: {len(configs)} configs, {points} points: render_config {ours * 1e3:.1f} ms, "
        f"C safe_load of {len(files)} input files {ref * 1e3:.1f} ms, ratio {ours / ref:.2f}x"
    )


def scale_case(scale: int, runs: int) -> None:
    small_points, small, big_points, big = scale_figures(scale, runs)
    per_small, per_big = small / small_points, big / big_points
    print(
        f"scale: {small_points} points {small * 1e3:.1f} ms ({per_small * 1e3:.2f} ms/point), "
        f"{big_points} points {big * 1e3:.1f} ms ({per_big * 1e3:.2f} ms/point), "
        f"per-point ratio {per_big / per_small:.2f}x (target <= 1.2)"
    )


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench render")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--process-runs", type=int, default=5)
    parser.add_argument("--scale", type=int, default=16)
    parser.add_argument("--keys", default="1,1000", help="master sizes of the keys case")
    parser.add_argument("--case", default=",".join(CASES), help=f"some of {', '.join(CASES)}")
    args = parser.parse_args(argv)
    cases = args.case.split(",")
    if "master" in cases:
        master_case(args.runs)
    if "render" in cases:
        render_case(args.runs)
    if "scale" in cases:
        scale_case(args.scale, args.runs)
    if "real" in cases:
        real_case(args.process_runs)
    if "keys" in cases:
        keys_case([int(n) for n in args.keys.split(",")], args.process_runs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
