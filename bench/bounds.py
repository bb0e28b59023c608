"""`python -m bench bounds [STEP ...]`: how the cost of each input-driven step grows with its
input (issue 36, point 7), as the ratio of its time on an input twice as large to its time on
the input itself. A linear step reads about 2, a quadratic one about 4; each step is also timed
at the largest size, the hostile input the trial found.

Steps: ``env-lines`` (an ``Env:`` record continued over many lines of a sweep log),
``env-split`` (one ``Env:`` line of 500 keys, split against the recipe's env), ``command-lines``
(a ``Command:`` whose quote stays open over many lines), ``diff`` (the reviewer diff of a
module with itself, one cell given many points), ``aliases`` (the launcher's bindings of a
recipe block written with nested aliases: its cost follows the document, not the expansion,
so doubling the expansion leaves the time about the same).
"""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOG = next((ROOT / "examples" / "runs").rglob("sweep_5230101.log"), None)
ROUNDS = 3


def _best(run: Callable[[], object], rounds: int = ROUNDS) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def _log_with(after_env: str) -> bytes:
    assert LOG is not None
    text = LOG.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines(keepends=True) if "] Env: " in x)
    return text.replace(line, line + after_env, 1).encode("utf-8")


def _parse(data: bytes) -> Callable[[], object]:
    from syncer.runs.logs import parse_sweep_log

    return lambda: parse_sweep_log(io.BytesIO(data), "sweep.log")


def env_lines(size: int) -> Callable[[], object]:
    """An Env: record continued over ``size`` lines of 4 characters."""
    return _parse(_log_with("a b\n" * size))


def command_lines(size: int) -> Callable[[], object]:
    """A Command: whose quote stays open over ``size`` lines, each closing and reopening it."""
    assert LOG is not None
    text = LOG.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines(keepends=True) if "] Command: " in x)
    opened = line.rstrip("\n") + " '\n" + "x' 'y\n" * size + "'\n"
    return _parse(text.replace(line, opened, 1).encode("utf-8"))


def env_split(size: int) -> Callable[[], object]:
    """One Env: line of 500 keys whose values hold ``size`` characters in all."""
    from syncer.runs.envline import split_env

    keys = [f"K{i:04d}" for i in range(500)]
    value = "v " * max(1, size // 1000)
    payload = " ".join(f"{k}={value}" for k in keys)
    expected = dict.fromkeys(keys, value)
    return lambda: split_env(payload, expected)


def _module_with_points(size: int) -> str:
    import json

    module = ROOT / "cookbook_snippets" / "deepseek-ai" / "deepseek-v4_1.jsx"
    head, _, body = module.read_text(encoding="utf-8").partition("export const agentx = ")
    data = json.loads(body.rstrip().rstrip(";"))
    cell = data["cells"][0]
    point = cell["points"][0]
    cell["points"] = [dict(point, concs=[k + 1], override=f"o{k}") for k in range(size)]
    return head + "export const agentx = " + json.dumps(data, indent=1) + ";\n"


def diff(size: int) -> Callable[[], object]:
    """The reviewer diff of a module against itself, one of its cells given ``size`` points."""
    from syncer.review.report import review_report
    from syncer.review.review import review_texts

    text = _module_with_points(size)
    return lambda: review_report(review_texts(text, text, old_label="a", new_label="b"))


def aliases(size: int) -> Callable[[], object]:
    """The launcher's bindings of a recipe block written as ``size`` levels of nested aliases,
    each level ten of the one below: doubling the levels doubles the document and multiplies
    its expansion by 10**size; each binding walks what the document holds, so its time
    doubles too (it grew with the expansion before)."""
    from syncer.inferencex.variants import resolve_cluster_values
    from syncer.inferencex.yamlsafe import loads

    levels = "".join(
        f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, size + 1)
    )
    doc = loads(f"x:\n  l0: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n{levels}", "bench.yaml")
    return lambda: [resolve_cluster_values(doc) for _ in range(100)]


STEPS: dict[str, tuple[Callable[[int], Callable[[], object]], int]] = {
    "env-lines": (env_lines, 500_000),
    "command-lines": (command_lines, 300_000),
    "env-split": (env_split, 4_000_000),
    "diff": (diff, 2_000),
    "aliases": (aliases, 4),
}


def main(argv: list[str]) -> int:
    names = argv or list(STEPS)
    unknown = [n for n in names if n not in STEPS]
    if unknown:
        print(f"usage: python -m bench bounds [{'|'.join(STEPS)} ...]", file=sys.stderr)
        return 2
    for name in names:
        make, size = STEPS[name]
        half, full = _best(make(size // 2)), _best(make(size))
        ratio = full / half if half > 0 else float("inf")
        print(f"{name}: x2 input -> x{ratio:.2f} time ({full:.3f} s at size {size})")
    return 0
