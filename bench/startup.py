"""`python -m bench startup [--runs N]`: what starting the tool costs, side by side.

* ``sync --help`` against ``python -c pass`` (the interpreter alone), interleaved, whole
  processes. Target: at most 1.5x, CPU time (wall time on a shared machine mostly measures
  the wait for a core).
* ``sync verify KEY`` and ``sync generate --all --check`` on the bundled example, whole
  processes, with the time ``python -X importtime`` attributes to the heavy third-party packages
  each imports (rich, jinja2, markdown-it, PyGithub, click, PyYAML, esprima), as a share of that
  run: a command imports only what its output needs.

Medians over ``--runs`` (default 15) rounds; importtime figures from one run of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from bench import timing

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.5
KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
COMMANDS = {
    "sync --help": ["--help"],
    f"sync verify {KEY}": ["verify", KEY],
    "sync generate --all --check": ["generate", "--all", "--check"],
}
PACKAGES = ("rich", "jinja2", "markdown_it", "github", "click", "yaml", "esprima")


def imported(args: list[str]) -> tuple[float, float, dict[str, float]]:
    """(the run's wall seconds, its whole import time, the import time of each package of
    PACKAGES that ``sync ARGS`` imports), from one run under ``-X importtime``. A package's time
    is the cumulative time of its outermost imports (those not made by the package itself)."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "syncer", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        env=timing.child_env(),
    )
    wall = time.perf_counter() - start
    rows = []
    for line in done.stderr.splitlines():
        fields = line[len("import time:") :].split("|") if line.startswith("import time:") else []
        if len(fields) == 3 and fields[1].strip().isdigit():
            name = fields[2].rstrip()
            rows.append((len(name) - len(name.lstrip()), name.strip(), int(fields[1]) / 1e6))
    total, packages = 0.0, {}
    # -X importtime prints an import after the imports it made: read backwards, parents first.
    parents: list[tuple[int, str]] = []
    for depth, name, cumulative in reversed(rows):
        while parents and parents[-1][0] >= depth:
            parents.pop()
        top = name.split(".")[0]
        if not parents:
            total += cumulative
        if top in PACKAGES and (not parents or parents[-1][1] != top):
            packages[top] = packages.get(top, 0.0) + cumulative
        parents.append((depth, top))
    return wall, total, packages


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench startup")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--warm", type=int, default=1, help="uncounted rounds first")
    args = parser.parse_args(argv)
    commands = {"python -c pass": [sys.executable, "-c", "pass"]}
    commands.update({name: [sys.executable, "-m", "syncer", *a] for name, a in COMMANDS.items()})
    old = os.getcwd()
    os.chdir(ROOT)  # the bundled example is found from the project checkout
    try:
        times = timing.processes(commands, args.runs, warm=args.warm)
    finally:
        os.chdir(old)
    base, helps = times["python -c pass"], times["sync --help"]
    print(f"startup: medians of {args.runs} interleaved rounds, whole processes")
    print(f"  python -c pass     {base.wall * 1e3:6.1f} ms wall, {base.cpu * 1e3:6.1f} ms CPU")
    for name in COMMANDS:
        t = times[name]
        print(f"  {name:<18} {t.wall * 1e3:6.1f} ms wall, {t.cpu * 1e3:6.1f} ms CPU")
    verdict = "meets the target" if helps.cpu / base.cpu <= TARGET else "over the target"
    print(
        f"  sync --help: {helps.wall / base.wall:.2f}x wall, {helps.cpu / base.cpu:.2f}x CPU of "
        f"python -c pass (target <= {TARGET}x CPU): {verdict}"
    )
    for name, a in COMMANDS.items():
        whole, total, packages = imported(a)
        parts = ", ".join(
            f"{p} {s * 1e3:.0f} ms" for p, s in sorted(packages.items(), key=lambda x: -x[1])
        )
        heavy = sum(s for p, s in packages.items() if p in ("rich", "jinja2", "markdown_it"))
        print(
            f"  {name}: imports {total * 1e3:.0f} ms of {whole * 1e3:.0f} ms (-X importtime); "
            f"rich + jinja2 + markdown-it {heavy * 1e3:.0f} ms ({heavy / whole:.0%}); {parts}"
        )
    return 0
