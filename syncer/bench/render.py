"""`python -m syncer.bench render [--runs N]`: cost of recipe rendering, as ratios.

Two measurements, each against a reference run in the same process:

* ``master``: parsing a large master config (``read_master``, which ``load_master`` does once
  per content; the reference nvidia-master at a6ab0ecb, 149 keys, ~290 KB, when the reference
  data exists, else the bundled example's master repeated to a similar size) against a plain
  PyYAML C ``safe_load`` of the same text. The strict loader (duplicate keys, alias-bomb check)
  is what costs extra.
* ``render``: ``render_config`` of every bundled example config (both routers, raw and cookbook
  form) against ``safe_load`` of the files it reads (master, recipes, shared block, golden AL),
  i.e. against the minimum any renderer has to do.

Medians over ``--runs`` (default 9).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from syncer.bench import REFERENCE

ROOT = Path(__file__).resolve().parents[2]
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


def main(argv: list[str]) -> int:
    import argparse

    from syncer.inferencex.master import find_layout, load_master, read_master
    from syncer.inferencex.render import render_config

    parser = argparse.ArgumentParser(prog="python -m syncer.bench render")
    parser.add_argument("--runs", type=int, default=9)
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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
