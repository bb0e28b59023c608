"""`python -m bench decode [MODULE] [--runs N]`: whole-process `sync decode --all --format
json` wall time on a data module (default: the largest reference module, deepseek-v4_1 at
37da6c0b, 564 cases), start-up included.

Reported as ratios, so the figure travels between machines:

* against the issue's node figure: the cookbook's own decoder under node takes 0.38 s on the
  same 564 cases on this machine class (target <= 1.0x, first bar 1.5x);
* against a reference run made here: a fresh ``python -c`` that only ``json.load``s the oracle
  file for the module (interpreter start-up plus reading the same amount of JSON), or the
  module text itself when no oracle file exists.

Each command runs ``--runs`` times (default 7); the median is reported.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import REFERENCE

NODE_SECONDS = 0.38
# The module the node figure was measured on; another module's time is not compared with it.
NODE_MODULE = ("deepseek-ai", "deepseek-v4_1", "37da6c0b.jsx")
TARGET = 1.0
FIRST_BAR = 1.5
DEFAULT_MODULE = REFERENCE.joinpath("cookbook", "agentx", *NODE_MODULE)
READ_JSON = "import json, sys; json.load(open(sys.argv[1], encoding='utf-8'))"
READ_TEXT = "import sys; open(sys.argv[1], encoding='utf-8').read()"


def _run(cmd: list[str], runs: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) seconds of each run of ``cmd``. CPU time is also reported
    because a loaded machine stretches wall time but hardly CPU time."""
    import resource

    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip()
            raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {message}")
    return walls, cpus


def _oracle_for(module: Path) -> Path | None:
    # reference/cookbook/agentx/<org>/<model>/<commit>.jsx -> reference/oracle/<org>/<model>/...
    parts = module.resolve().parts
    if "agentx" not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index("agentx")
    oracle = Path(*parts[: i - 1], "oracle", *parts[i + 1 :]).with_suffix(".json")
    return oracle if oracle.is_file() else None


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench decode")
    parser.add_argument("module", nargs="?", type=Path, default=DEFAULT_MODULE)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    module: Path = args.module
    if not module.is_file():
        print(f"no data module at {module}", file=sys.stderr)
        return 2
    from syncer.cookbook.decode import load_decoder
    from syncer.templating import render

    cases = sum(1 for _ in load_decoder(module).cases())
    oracle = _oracle_for(module)
    decode_cmd = [sys.executable, "-m", "syncer", "decode", str(module), "--all"]
    decode_cmd += ["--format", "json"]
    if oracle:
        reference_cmd = [sys.executable, "-c", READ_JSON, str(oracle)]
        reference_what = f"python start-up + json.load of {oracle.name} (the oracle file)"
    else:
        reference_cmd = [sys.executable, "-c", READ_TEXT, str(module)]
        reference_what = f"python start-up + reading {module.name}"
    try:
        _run(decode_cmd, 1)  # warm the page cache and .pyc files; not counted
        decode_times, decode_cpu = _run(decode_cmd, args.runs)
        reference_times, reference_cpu = _run(reference_cmd, args.runs)
    except RuntimeError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    decode_s = statistics.median(decode_times)
    reference_s = statistics.median(reference_times)
    node_ratio = decode_s / NODE_SECONDS
    verdict = (
        "meets the target"
        if node_ratio <= TARGET
        else "within the first bar"
        if node_ratio <= FIRST_BAR
        else "slower than the first bar"
    )
    node_applies = module.resolve().parts[-3:] == NODE_MODULE
    print(
        render(
            "decode.txt.j2",
            folder=Path(__file__).parent / "templates",
            module=str(module),
            cases=cases,
            runs=args.runs,
            decode_s=decode_s,
            decode_min=min(decode_times),
            reference_s=reference_s,
            reference_what=reference_what,
            node_s=NODE_SECONDS,
            node_applies=node_applies,
            node_module=f"{NODE_MODULE[0]}/{NODE_MODULE[1]}@{Path(NODE_MODULE[2]).stem}",
            node_ratio=node_ratio,
            reference_ratio=decode_s / reference_s,
            decode_cpu=statistics.median(decode_cpu),
            reference_cpu=statistics.median(reference_cpu),
            cpu_node_ratio=statistics.median(decode_cpu) / NODE_SECONDS,
            target=TARGET,
            first_bar=FIRST_BAR,
            verdict=verdict,
        ),
        end="",
    )
    return 0
