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

# a KEY= at the start or after a space (no key holds a space, so none starts inside another)
_CANDIDATE = re.compile(r"(?<![^ ])([A-Za-z_][A-Za-z0-9_]*)=")
# srt-slurm logs the few dozen variables it sets: a line of thousands of KEY= tokens is refused
# as the hostile line it is.
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
    """Each ``KEY=`` at the start of the payload or after a space: its position and key."""
    return [(m.start(), m.group(1)) for m in _CANDIDATE.finditer(payload)]


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
    best = _best_readings(payload, cands, exp)

    def reading(branch_first: bool) -> dict[str, str]:
        chain, branched = [0], not branch_first
        while True:
            nexts = best[chain[-1]].nexts
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
    if best[0].ways == 1:
        return EnvSplit(main)
    # Several readings score the same: name two of them and let the caller report it.
    return EnvSplit(main, ambiguous=True, readings=[main, reading(True)])


@dataclass(frozen=True)
class _Best:
    """The best readings from one candidate on: their score, how many there are (counted up
    to 2: only "one" or "several" is asked) and the first two of their next candidates, in
    order (-1: the line ends)."""

    score: int
    ways: int
    nexts: tuple[int, ...]


_NONE = _Best(-1, 0, ())


def _better(a: _Best, b: _Best) -> _Best:
    if a.score != b.score:
        return a if a.score > b.score else b
    return _Best(a.score, min(a.ways + b.ways, 2), tuple(sorted({*a.nexts, *b.nexts}))[:2])


def _best_readings(
    payload: str, cands: list[tuple[int, str]], exp: Mapping[str, str]
) -> list[_Best]:
    """``best[i]``: the best readings whose first key is candidate ``i``. A reading's keys
    ascend, and a segment scores 1, plus ``_W_KEY`` for an expected key, plus ``_W_VALUE``
    when its value is the expected one, which happens for one end at most: so the best next
    candidate is the best of all later ones with a greater key (a running maximum by key
    rank, O(log n) a step) or that one end. Linear in the line's length, n log n in its
    candidates; a segment's value is compared where it can match, never copied."""
    n = len(cands)
    ranks = {key: r for r, key in enumerate(sorted({key for _, key in cands}))}
    size = len(ranks)
    tree = [_NONE] * (size + 1)  # Fenwick tree of maxima, keys in descending order
    at = {start: i for i, (start, _) in enumerate(cands)}
    best = [_NONE] * n
    for i in range(n - 1, -1, -1):
        start, key = cands[i]
        value_at = start + len(key) + 1
        base = 1 + (_W_KEY if key in exp else 0)
        wanted = exp.get(key)
        matched_end = None
        if wanted is not None and payload.startswith(wanted, value_at):
            matched_end = value_at + len(wanted)
        top = _Best(base + (_W_VALUE if matched_end == len(payload) else 0), 1, (-1,))
        q = size - 1 - ranks[key]  # the keys greater than this one
        later = _NONE
        while q > 0:
            later = _better(later, tree[q])
            q -= q & -q
        if later.ways:
            top = _better(top, _Best(base + later.score, later.ways, later.nexts))
        m = at.get(matched_end + 1) if matched_end is not None else None
        if m is not None and cands[m][1] > key:
            top = _better(top, _Best(base + _W_VALUE + best[m].score, best[m].ways, (m,)))
        best[i] = top
        p = size - ranks[key]
        mine = _Best(top.score, top.ways, (i,))
        while p <= size:
            tree[p] = _better(tree[p], mine)
            p += p & -p
    return best
