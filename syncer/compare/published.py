"""A published cookbook point against the recipe's cookbook form of it: the comparison `sync
verify` makes of a point's cookbook cell and `sync audit` of every pinned point.

A module of its own so that the audit, which reads no run, imports no run reader
(``compare.verify`` reads the sweep logs beside it).
"""

from __future__ import annotations

from syncer.compare.diff import Comparison, compare_blocks
from syncer.cookbook.decode import Decoder
from syncer.inferencex.render import RenderedPoint
from syncer.model import Selection


def compare_published(decoder: Decoder, ci: int, pi: int, p: RenderedPoint) -> list[Comparison]:
    """Cookbook point ``(ci, pi)`` against the recipe's cookbook form of ``p``, one comparison
    per router either side has (``sync verify`` and ``sync audit``)."""
    cell_routers = decoder.routers(ci)
    out = []
    for router in [*p.cookbook, *(r for r in cell_routers if r not in p.cookbook)]:
        # The decoder's own blocks, not a copy: compare_blocks only reads them.
        cb_blocks = (
            decoder.shown_blocks(Selection(ci, pi, router)) if router in cell_routers else []
        )
        recipe_blocks = p.cookbook.get(router, [])
        out.append(
            compare_blocks(cb_blocks, recipe_blocks, left="cookbook", right="recipe", router=router)
        )
    return out
