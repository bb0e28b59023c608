"""`python -m bench reencode [DIR]`: size of every re-encoded reference module relative to
the original file (upstream generator output on the same data); target <= 1.0 with an exact
roundtrip (``reencode_file`` refuses otherwise). Also the encode time relative to decoding the
same module once, the reference run made in the same process.

DIR defaults to ``cookbook/agentx`` of the reference data (``SYNC_REFERENCE_DIR``, else
``../shared/reference`` next to the project).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from bench import REFERENCE
from syncer.errors import SyncError

DEFAULT_DIR = REFERENCE / "cookbook"


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else DEFAULT_DIR / "agentx"
    modules = sorted(root.rglob("*.jsx"))
    if not modules:
        print(f"no .jsx modules under {root}", file=sys.stderr)
        return 2
    from syncer.cookbook.decode import load_decoder
    from syncer.encoder.encode import reencode_file

    worst = 0.0
    print(f"{'module':50} {'cases':>6} {'original':>9} {'reencoded':>9} {'size':>6} {'time':>6}")
    for path in modules:
        start = time.perf_counter()
        decoder = load_decoder(path)
        for _ in decoder.cases():
            pass
        decode_time = time.perf_counter() - start
        start = time.perf_counter()
        try:
            text, cases = reencode_file(path)
        except SyncError as exc:
            print(f"{path}: roundtrip refused: {exc}", file=sys.stderr)
            return 1
        encode_time = time.perf_counter() - start
        original = path.stat().st_size
        size = len(text.encode("utf-8"))
        ratio = size / original
        worst = max(worst, ratio)
        name = str(path.relative_to(root))
        print(
            f"{name:50} {cases:6d} {original:9d} {size:9d} {ratio:6.3f} "
            f"{encode_time / decode_time:5.1f}x"
        )
    print(f"worst size ratio {worst:.3f} (target <= 1.000); time = reencode / one full decode")
    return 0 if worst <= 1.0 else 1
