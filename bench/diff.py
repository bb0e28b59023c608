"""`python -m bench diff [OLD NEW]`: the reviewer diff's cost relative to the least any
command diff must do, the reference run made in the same process: decode every (cell, point,
router, tier) of both modules and format its "Copy all" text.

Reports review time / reference time (the matching, per-selection comparison and unified diffs
on top of decoding), markdown render time / reference time, and the markdown size against a PR
body's 65,536 characters with and without that budget. OLD and NEW default to the two
deepseek-v4_1 versions in ``../shared/reference``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from bench import REFERENCE

DEFAULT_DIR = REFERENCE / "cookbook" / "agentx" / "deepseek-ai" / "deepseek-v4_1"
ROUNDS = 3


def _reference(texts: list[str]) -> int:
    from syncer.cookbook.decode import Decoder
    from syncer.cookbook.jsmodule import parse_module

    cases = 0
    for i, text in enumerate(texts):
        decoder = Decoder(parse_module(text, f"side{i}").value, f"side{i}")
        for case in decoder.cases():
            _ = case.copy_all
            cases += 1
    return cases


def _best(run: object, rounds: int = ROUNDS) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str]) -> int:
    from syncer.fitting import GITHUB_TEXT_LIMIT
    from syncer.review.report import review_report
    from syncer.review.review import review_texts

    if len(argv) not in (0, 2):
        print("usage: python -m bench diff [OLD NEW]", file=sys.stderr)
        return 2
    paths = [Path(a) for a in argv] or [DEFAULT_DIR / "37da6c0b.jsx", DEFAULT_DIR / "2b484a51.jsx"]
    missing = [p for p in paths if not p.is_file()]
    if missing:
        print(f"no module at {missing[0]}", file=sys.stderr)
        return 2
    texts = [p.read_text(encoding="utf-8") for p in paths]
    cases = _reference(texts)
    reference = _best(lambda: _reference(texts))
    review_time = _best(
        lambda: review_texts(texts[0], texts[1], old_label=str(paths[0]), new_label=str(paths[1]))
    )
    review = review_texts(texts[0], texts[1], old_label=str(paths[0]), new_label=str(paths[1]))
    markdown_time = _best(lambda: review_report(review).markdown())
    full = review_report(review).markdown()
    budgeted_time = _best(lambda: review_report(review).markdown(GITHUB_TEXT_LIMIT))
    budgeted = review_report(review).markdown(GITHUB_TEXT_LIMIT)
    print(f"reference: decode + Copy-all text of {cases} selections, {reference * 1000:.0f} ms")
    print(f"review   {review_time / reference:6.2f}x reference")
    print(f"markdown {markdown_time / reference:6.2f}x reference, {len(full)} characters")
    print(
        f"budgeted {budgeted_time / reference:6.2f}x reference, {len(budgeted)} characters "
        f"(budget {GITHUB_TEXT_LIMIT})"
    )
    return 0 if len(budgeted) <= GITHUB_TEXT_LIMIT else 1
