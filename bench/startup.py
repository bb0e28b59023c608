"""`python -m bench startup [--runs N]`: what starting the tool costs, side by side.

* ``sync --help`` against ``python -c pass`` (the interpreter alone), interleaved, whole
  processes. Target: at most 1.5x, CPU time (wall time on a shared machine mostly measures
  the wait for a core).
* ``sync verify KEY`` and ``sync generate --all --check`` on the bundled example, whole
  processes.
* The import share of each command, in CPU time: beside each command runs a process that
  imports exactly the modules the command imports (read from a ``python -X importtime`` run of
  it) and does nothing else; its CPU time against the command's, both beyond ``python -c pass``
  (the interpreter, whose own imports both have), is the share of the command's work that is
  importing. A command imports only what its output needs. The same importtime run gives the
  time of the heavy third-party packages (rich, jinja2, markdown-it, PyGithub, click, PyYAML,
  esprima) it imports.

Medians over ``--runs`` (default 15) interleaved rounds; importtime figures from one run each.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
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


# Imports the modules named on the command line, in order, and nothing else.
REPLAY = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)"
# Runs `sync ARGS` and writes the names of the modules it imported, in the order it imported
# them (a module's place in ``sys.modules``), to the file named first.
LIST_MODULES = (
    "import atexit, runpy, sys\n"
    "out = sys.argv.pop(1)\n"
    "def dump():\n"
    "    with open(out, 'w', encoding='utf-8') as f:\n"
    "        f.write('\\n'.join(sys.modules))\n"
    "atexit.register(dump)\n"
    "runpy.run_module('syncer', run_name='__main__', alter_sys=True)\n"
)


def imports_of(args: list[str]) -> list[str]:
    """Every module ``sync ARGS`` imports, in the order it imports them (the entry module,
    which runs the command, left out). Read from ``sys.modules`` at its exit, not from
    ``-X importtime``, which does not see a module ``importlib.import_module`` imports (each
    command module: ``commands/group.py``)."""
    with tempfile.TemporaryDirectory() as tmp:
        listing = Path(tmp) / "modules.txt"
        subprocess.run(
            [sys.executable, "-c", LIST_MODULES, str(listing), *args],
            capture_output=True,
            cwd=ROOT,
            check=False,
            env=timing.child_env(),
        )
        names = listing.read_text(encoding="utf-8").split("\n")
    return [n for n in names if n and "__main__" not in n]


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench startup")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--warm", type=int, default=1, help="uncounted rounds first")
    args = parser.parse_args(argv)
    commands = {"python -c pass": [sys.executable, "-c", "pass"]}
    for name, a in COMMANDS.items():
        commands[name] = [sys.executable, "-m", "syncer", *a]
        commands[f"imports of {name}"] = [sys.executable, "-c", REPLAY, *imports_of(a)]
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
    print("  import share, CPU beyond python -c pass (a process importing what the command does):")
    for name, a in COMMANDS.items():
        if name == "sync --help":
            continue  # the stored text: its imports are the ratio above
        work = times[name].cpu - base.cpu
        imports = times[f"imports of {name}"].cpu - base.cpu
        _, _, packages = imported(a)
        parts = ", ".join(
            f"{p} {s * 1e3:.0f} ms" for p, s in sorted(packages.items(), key=lambda x: -x[1])
        )
        print(
            f"  {name}: imports {imports * 1e3:.1f} ms of {work * 1e3:.1f} ms CPU "
            f"({imports / work:.0%}); -X importtime: {parts or 'none of the heavy packages'}"
        )
    return 0
