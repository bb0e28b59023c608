"""Split an srt-slurm ``Env:`` payload back into a map.

srt-slurm logs ``" ".join(f"{k}={v}")`` over the keys in sorted order with the values unquoted,
so a value may itself contain spaces, ``=`` or something that looks like ``KEY=``. The split
uses three facts: keys are ``[A-Za-z_][A-Za-z0-9_]*``, they appear in strictly ascending
(Python string) order, and — when known — the keys and values the recipe expects. Among all
readings that respect the first two facts the best one is chosen by a score (expected keys,
then expected values, then more boundaries); when two readings tie, the split is reported as
ambiguous with both readings instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from syncer.wording import js

_KEY_AT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# srt-slurm logs the few dozen variables it sets; the split is quadratic in this count, so a
# hostile line of thousands of KEY= tokens is refused rather than costing seconds per line.
MAX_CANDIDATES = 512

# Score weights: an expected key outweighs any number of value matches and boundaries; a
# matching value outweighs any number of extra boundaries.
_W_KEY = 1_000_000
_W_VALUE = 1_000


@dataclass
class EnvSplit:
    env: dict[str, str]
    ambiguous: bool = False
    readings: list[dict[str, str]] = field(default_factory=list)

    def describe_ambiguity(self) -> str:
        """Where the readings disagree, e.g. ``A="x Z=1", B="2"  or  A="x", Z="1 B=2"``."""
        shown = []
        for reading in self.readings[:2]:
            shown.append(", ".join(f"{k}={js(v)}" for k, v in reading.items()))
        return "  or  ".join(shown)


def _candidates(payload: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    pos = 0
    while True:
        m = _KEY_AT.match(payload, pos)
        if m and (pos == 0 or payload[pos - 1] == " "):
            out.append((pos, m.group(0)[:-1]))
        nxt = payload.find(" ", pos)
        if nxt < 0:
            return out
        pos = nxt + 1


def split_env(payload: str, expected: Mapping[str, str] | None = None) -> EnvSplit:
    """Split ``payload`` (the text after ``Env: ``). Raises ``ValueError`` when it does not
    start with ``KEY=``."""
    if payload.strip() == "":
        return EnvSplit({})
    cands = _candidates(payload)
    if not cands or cands[0][0] != 0:
        raise ValueError("an Env: payload must start with KEY=")
    if len(cands) > MAX_CANDIDATES:
        raise ValueError(f"more than {MAX_CANDIDATES} KEY= tokens in one Env: line")
    exp = dict(expected or {})
    n = len(cands)

    def seg_score(i: int, end: int) -> int:
        start, key = cands[i]
        score = 1
        if key in exp:
            score += _W_KEY
            if exp[key] == payload[start + len(key) + 1 : end]:
                score += _W_VALUE
        return score

    # best[i] = (score, number of optimal readings, optimal next candidates; -1 = end) over
    # readings whose first key is candidate i. Consecutive keys ascending => all ascending.
    best: list[tuple[int, int, list[int]]] = [(0, 0, [])] * n
    for i in range(n - 1, -1, -1):
        key_i = cands[i][1]
        top, ways, nexts = seg_score(i, len(payload)), 1, [-1]
        for j in range(i + 1, n):
            if cands[j][1] <= key_i:
                continue
            score = seg_score(i, cands[j][0] - 1) + best[j][0]
            if score > top:
                top, ways, nexts = score, best[j][1], [j]
            elif score == top:
                ways += best[j][1]
                nexts.append(j)
        best[i] = (top, ways, nexts)

    def reading(branch_first: bool) -> dict[str, str]:
        chain, branched = [0], not branch_first
        while True:
            nexts = best[chain[-1]][2]
            pick = nexts[0]
            if not branched and len(nexts) > 1:
                pick, branched = nexts[1], True
            if pick < 0:
                break
            chain.append(pick)
        env: dict[str, str] = {}
        for k, i in enumerate(chain):
            start, key = cands[i]
            end = cands[chain[k + 1]][0] - 1 if k + 1 < len(chain) else len(payload)
            env[key] = payload[start + len(key) + 1 : end]
        return env

    main = reading(False)
    if best[0][1] == 1:
        return EnvSplit(main)
    # Several readings score the same: name two of them and let the caller report it.
    return EnvSplit(main, ambiguous=True, readings=[main, reading(True)])
