"""`python -m bench encode [RUNS]`: CPU time of re-encoding each reference module (decode it,
build the cells, compact, prove by decoding back, emit: ``reencode_file``, what `sync reencode`
and, after rendering, `sync generate` spend in the encoder) relative to one full decode of the
same module (parse and every case), the reference measured in the same run, the two calls
interleaved ``RUNS`` times (default 5); medians.

Modules: ``cookbook/agentx`` of the reference data (``SYNC_REFERENCE_DIR``, else
``../shared/reference`` next to the project).
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

from bench import REFERENCE
from bench.timing import calls


def main(argv: list[str]) -> int:
    runs = int(argv[0]) if argv else 5
    modules = sorted((REFERENCE / "cookbook" / "agentx").rglob("*.jsx"))
    if not modules:
        print(f"no .jsx modules under {REFERENCE / 'cookbook' / 'agentx'}", file=sys.stderr)
        return 2
    from syncer.cookbook.decode import load_decoder
    from syncer.encoder.encode import reencode_file

    def decode(path: Path) -> None:
        for _ in load_decoder(path).cases():
            pass

    total_encode = total_decode = 0.0
    print(f"{'module':42} {'cases':>6} {'decode':>8} {'encode':>8} {'ratio':>6}")
    for path in modules:
        timings = calls(
            {"decode": partial(decode, path), "encode": partial(reencode_file, path)}, runs
        )
        dec, enc = timings["decode"].cpu, timings["encode"].cpu
        total_decode += dec
        total_encode += enc
        cases = sum(1 for _ in load_decoder(path).cases())
        name = str(path.relative_to(REFERENCE / "cookbook" / "agentx"))
        print(f"{name:42} {cases:6d} {dec:7.3f}s {enc:7.3f}s {enc / dec:5.2f}x")
    print(
        f"all modules: encode {total_encode:.3f}s CPU / decode {total_decode:.3f}s CPU = "
        f"{total_encode / total_decode:.2f}x (median of {runs} interleaved runs each)"
    )
    return 0
