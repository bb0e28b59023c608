"""`python -m bench decode [MODULE] [--runs N] [--decoder FILE | --sglang GIT_DIR]`: whole-process
`sync decode --all --format json` on a data module (default: the reference module with the most
cases), start-up included, side by side with references measured in the same run, interleaved:

* the cookbook's own decoder under node (``bench/js/cookbook_decode.js`` running sections 1 and
  2 of the page component ``_agentx.jsx`` unmodified, printing the same cases as JSON): the
  component is read from ``--decoder FILE`` (default ``$SYNC_COOKBOOK_DECODER``), else from
  ``HEAD`` of the SGLang git checkout ``--sglang`` (default ``$SYNC_SGLANG_GIT``); without
  one, or without node, the comparison is skipped and says why. Target: at most 0.3x node,
  CPU time (wall time on a shared machine mostly measures the wait for a core).
* a fresh ``python -c`` that only ``json.load``s the oracle file for the module (interpreter
  start-up plus reading the same amount of JSON), or the module text when there is no oracle.
* where the time goes, start-up against work: ``python -c pass`` (the interpreter), a process
  that imports exactly what the decode imports and does nothing else (``bench startup``'s
  replay), and ``node -e 0`` (node's own start-up). Decode's work is its time beyond that
  import process, node's beyond ``node -e 0``: their ratio, and the work the decode could take
  and still meet the target with its start-up as it is, show what is left and why.

Medians over ``--runs`` (default 7) rounds, wall and CPU time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import REFERENCE
from bench.startup import REPLAY, imports_of

TARGET = 0.3  # issue 39 (0.5 before)
MODULES = REFERENCE / "cookbook" / "agentx"
HARNESS = Path(__file__).parent / "js" / "cookbook_decode.js"
COMPONENT = "docs/src/snippets/_agentx.jsx"
READ_JSON = "import json, sys; json.load(open(sys.argv[1], encoding='utf-8'))"
READ_TEXT = "import sys; open(sys.argv[1], encoding='utf-8').read()"


def largest_module() -> tuple[Path, int] | None:
    """The reference module with the most cases (ties: the larger file), and its case count."""
    from syncer.cookbook.decode import load_decoder

    found = []
    for module in sorted(MODULES.rglob("*.jsx")):
        cases = sum(1 for _ in load_decoder(module).cases())
        found.append((cases, module.stat().st_size, module))
    if not found:
        return None
    cases, _, module = max(found)
    return module, cases


def _oracle_for(module: Path) -> Path | None:
    # reference/cookbook/agentx/<org>/<model>/<commit>.jsx -> reference/oracle/<org>/<model>/...
    parts = module.resolve().parts
    if "agentx" not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index("agentx")
    oracle = Path(*parts[: i - 1], "oracle", *parts[i + 1 :]).with_suffix(".json")
    return oracle if oracle.is_file() else None


def _decoder(args: object, tmp: Path) -> tuple[Path | None, str]:
    """The page component to run under node, or None and why not."""
    if shutil.which("node") is None:
        return None, "node is not installed"
    given: Path | None = getattr(args, "decoder", None)
    if given is None and os.environ.get("SYNC_COOKBOOK_DECODER"):
        given = Path(os.environ["SYNC_COOKBOOK_DECODER"])
    if given is not None:
        return (given, str(given)) if given.is_file() else (None, f"no file at {given}")
    sglang = getattr(args, "sglang", None) or os.environ.get("SYNC_SGLANG_GIT")
    if not sglang:
        return None, "no cookbook decoder given (--decoder FILE, --sglang GIT_DIR)"
    done = subprocess.run(
        ["git", "-C", sglang, "show", f"HEAD:{COMPONENT}"], capture_output=True, check=False
    )
    if done.returncode != 0:
        return None, f"{sglang} has no {COMPONENT} at HEAD"
    path = tmp / "_agentx.jsx"
    path.write_bytes(done.stdout)
    return path, f"{sglang} HEAD:{COMPONENT}"


def main(argv: list[str]) -> int:
    import argparse

    from bench import timing
    from syncer.cookbook.decode import load_decoder
    from syncer.templating import render

    parser = argparse.ArgumentParser(prog="python -m bench decode")
    parser.add_argument("module", nargs="?", type=Path)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--decoder",
        type=Path,
        help="the page component _agentx.jsx (default $SYNC_COOKBOOK_DECODER)",
    )
    parser.add_argument("--sglang", help="an SGLang git checkout (default $SYNC_SGLANG_GIT)")
    args = parser.parse_args(argv)
    if args.module is not None:
        module: Path = args.module
        if not module.is_file():
            print(f"no data module at {module}", file=sys.stderr)
            return 2
        cases = sum(1 for _ in load_decoder(module).cases())
    else:
        largest = largest_module()
        if largest is None:
            print(f"no data module under {MODULES}; give MODULE", file=sys.stderr)
            return 2
        module, cases = largest
    decode_args = ["decode", str(module.resolve()), "--all", "--format", "json"]
    commands = {"decode": [sys.executable, "-m", "syncer", *decode_args]}
    commands["python"] = [sys.executable, "-c", "pass"]
    commands["imports"] = [sys.executable, "-c", REPLAY, *imports_of(decode_args)]
    oracle = _oracle_for(module)
    if oracle:
        commands["reference"] = [sys.executable, "-c", READ_JSON, str(oracle)]
        reference_what = f"python start-up + json.load of {oracle.name} (the oracle file)"
    else:
        commands["reference"] = [sys.executable, "-c", READ_TEXT, str(module)]
        reference_what = f"python start-up + reading {module.name}"
    with tempfile.TemporaryDirectory() as tmp:
        decoder, decoder_what = _decoder(args, Path(tmp))
        if decoder is not None:
            commands["node"] = ["node", str(HARNESS), str(decoder), str(module)]
            commands["node start-up"] = ["node", "-e", "0"]
        try:
            times = timing.processes(commands, args.runs)
        except RuntimeError as exc:
            print(str(exc), file=sys.stderr)
            return 2
    ours, node = times["decode"], times.get("node")
    node_start = times.get("node start-up")
    print(
        render(
            "decode.txt.j2",
            folder=Path(__file__).parent / "templates",
            module=str(module),
            cases=cases,
            runs=args.runs,
            decode=ours,
            reference=times["reference"],
            reference_what=reference_what,
            node=node,
            decoder_what=decoder_what,
            target=TARGET,
            meets=node is not None and ours.cpu / node.cpu <= TARGET,
            python=times["python"],
            imports=times["imports"],
            node_start=node_start,
        ),
        end="",
    )
    return 0
