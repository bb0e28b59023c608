"""The writes one run makes or, in a dry run, only describes: every write of the GitHub client and
the cookbook clone is noted here, masked, in order."""

from __future__ import annotations

from dataclasses import dataclass, field

from syncer import secrets


@dataclass
class Plan:
    """Writes, in order: made (``dry_run=False``) or only described (``dry_run=True``)."""

    dry_run: bool = False
    writes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        self.writes.append(secrets.mask(text))
