"""One decoded selection of a data module, as the cookbook decoder's oracle lists it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from syncer.cookbook.shell import copy_all
from syncer.model import Block, Selection


@dataclass(slots=True)  # one per case: no instance dict to build
class Case:
    """The blocks, status and block texts of one (cell, point, router, KV tier) selection.
    ``kv`` is the tier as the oracle names it (``none`` for a point without one)."""

    selection: Selection
    cell_id: str
    kv: str
    status: str
    blocks: list[Block]
    # Each block's command text, built when :attr:`text` is first read: the proofs and
    # comparisons read a case's blocks alone, and building every case's text was about a
    # tenth of a module edit.
    texts: Callable[[], list[str]] = field(default=list, repr=False, compare=False)
    # The router's config files (file id -> content), read only when the "Copy all" text is
    # built: most users of a case want its blocks alone, and must not fail on a file entry.
    router_files: Callable[[], dict[str, str]] = field(default=dict, repr=False, compare=False)
    _text: list[str] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def cell(self) -> int:
        return self.selection.cell

    @property
    def point(self) -> int:
        return self.selection.point

    @property
    def router(self) -> str:
        return self.selection.router

    @property
    def text(self) -> list[str]:
        """Each block's command text (``shell.format_block``), as the oracle lists it."""
        # (not functools.cached_property: its lock cost more than the texts of a case)
        if self._text is None:
            self._text = self.texts()
        return self._text

    @property
    def copy_all(self) -> str:
        """The selection's "Copy all" text, exactly as the page copies it (files included)."""
        return copy_all(self.blocks, self.router_files())

    def as_json(self) -> dict[str, object]:
        sel = self.selection  # (its fields read directly: `sync decode --all` asks every case)
        return {
            "cell": sel.cell,
            "cellId": self.cell_id,
            "point": sel.point,
            "router": sel.router,
            "kv": self.kv,
            "status": self.status,
            "blocks": self.blocks,
            "text": self.text,
        }
