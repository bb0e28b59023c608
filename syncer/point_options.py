"""`--point N` / `--conc C`: one selection rule and one set of messages for every command.

The rule: ``--point N`` selects the job (or cell point) at index N; ``--conc C`` selects
*every* one measured at concurrency C; neither selects all. A command that needs exactly one
(``sync decode`` without ``--all``) asks for it with :func:`only_one`, whose error lists the
candidates with the ``--point`` that chooses each.

Imported by ``sync decode``, so it imports nothing beyond ``syncer.errors`` (start-up time is
part of the decode benchmark).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from syncer.errors import SyncError

T = TypeVar("T")

# The same help in every command, so `render --conc` and `verify --conc` cannot drift apart.
POINT_HELP = "Only the job at index N (master-config order, as `sync render` lists them)."
CONC_HELP = "Only the jobs measured at concurrency C (every one of them)."


def select_points(
    items: Sequence[T],
    *,
    point: int | None,
    conc: int | None,
    concs: Callable[[T], Iterable[int]],
    owner: str,
    noun: str = "job",
    hint: Callable[[], str] | None = None,
    path: str | None = None,
) -> list[T]:
    """The items ``--point``/``--conc`` select (all of them when neither is given).

    ``owner`` names what is indexed (a config key, a cell) at the start of every message;
    ``hint`` adds to the no-match message (e.g. which other cells measure C)."""
    if point is not None and conc is not None:
        raise SyncError("give --point or --conc, not both", path=path)
    if point is not None:
        if not 0 <= point < len(items):
            raise SyncError(
                f"{owner}: --point {point} out of range (0..{len(items) - 1})", path=path
            )
        return [items[point]]
    if conc is None:
        return list(items)
    hits = [item for item in items if conc in concs(item)]
    if not hits:
        measured = sorted({c for item in items for c in concs(item)})
        extra = hint() if hint is not None else ""
        raise SyncError(
            f"{owner}: no {noun} at concurrency {conc} "
            f"(concurrencies: {', '.join(map(str, measured))}){extra}",
            path=path,
        )
    return hits


def only_one(
    selected: Sequence[T],
    *,
    conc: int | None,
    index: Callable[[T], int],
    describe: Callable[[T], str],
    owner: str,
    noun: str = "job",
    path: str | None = None,
) -> T:
    """The one item of ``selected``; several (only ``--conc`` can select several) is an error
    listing each candidate with the ``--point`` that chooses it."""
    if len(selected) == 1:
        return selected[0]
    listed = "; ".join(f"--point {index(item)} ({describe(item)})" for item in selected)
    raise SyncError(
        f"{owner}: concurrency {conc} matches {len(selected)} {noun}s and one is needed; "
        f"choose with {listed}",
        path=path,
    )
