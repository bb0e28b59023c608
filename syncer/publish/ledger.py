"""What the scheduled run already found settled, kept between runs (``--ledger DIR``).

Every job of the workflow starts on a fresh runner, so what one hourly run learnt is lost to
the next unless it is kept: the workflow restores this directory from ``actions/cache`` (keyed
on the tool's commit and the model) before the job and saves it after. Without it every run
reads every open PR's comments again (the cost grew with every open PR, in every model's job).

A PR is skipped while its head and ``updated_at`` (GitHub moves it with every push, comment,
label and edit of the PR) are what they were when a run last found it settled. What moves
neither (a pinned run's artifacts expiring, an edited comment whose event was dropped) is
caught by a re-check of each PR once a day, in the hour its number falls on (PR n in hour
n mod 24, so the re-checks spread over the day). A closed bot PR whose milestone every
InferenceX PR was told, and a closed InferenceX PR whose closing was caught up, are not read
again. The ledger only ever saves reads: lost, stale or from another tool commit, the run
just reads GitHub as if it had none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from syncer import fsio
from syncer.errors import SyncError
from syncer.github.records import Pull

FORMAT = 1
HOURS = 24
# A PR takes about 120 bytes; the cap is far above any InferenceX's open PRs, and bounded.
MAX_BYTES = 16 * 1024 * 1024


@dataclass
class Ledger:
    """One model's ledger (or every model's, for a run without ``--model``); ``path`` None:
    none kept, every PR is read."""

    path: Path | None = None
    hour: int = 0  # the hour of the day (UTC) this run re-checks PRs in
    seen: dict[int, tuple[str, str]] = field(default_factory=dict)  # PR -> (head, updated_at)
    told: set[int] = field(default_factory=set)  # closed bot PRs every PR was told of
    closed: set[int] = field(default_factory=set)  # closed InferenceX PRs caught up
    _loaded: str = ""

    @classmethod
    def load(cls, folder: Path | None, model: str | None, now: datetime | None = None) -> Ledger:
        hour = (now or datetime.now(UTC)).hour
        if folder is None:
            return cls(None, hour)
        path = folder / (f"{model.replace('/', '__')}.json" if model else "all-models.json")
        ledger = cls(path, hour)
        if fsio.present(path, "ledger"):
            raw = fsio.read_capped(path, MAX_BYTES, "ledger")
            ledger._read(raw.decode("utf-8", "replace"))
            ledger._loaded = ledger._text()
        return ledger

    def _read(self, text: str) -> None:
        try:
            data = json.loads(text)
            if data.get("format") != FORMAT:
                return  # another tool's ledger: read GitHub again
            self.seen = {int(n): (str(h), str(u)) for n, (h, u) in data["seen"].items()}
            self.told = {int(n) for n in data["told"]}
            self.closed = {int(n) for n in data["closed"]}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            # Only this tool writes it; a broken one is someone's mistake, named.
            raise SyncError(f"not a ledger of this tool ({exc})", path=str(self.path)) from None

    def settled(self, pull: Pull) -> bool:
        """Whether ``pull`` is as a run last found it settled, and not due for its daily
        re-check."""
        if pull.number % HOURS == self.hour or not pull.updated_at:
            return False
        return self.seen.get(pull.number) == (pull.head_sha, pull.updated_at)

    def mark(self, pull: Pull) -> None:
        if pull.updated_at:
            self.seen[pull.number] = (pull.head_sha, pull.updated_at)

    def forget(self, number: int) -> None:
        self.seen.pop(number, None)

    def keep_open(self, numbers: set[int]) -> None:
        """Only PRs open now stay among those seen; a reopened PR is no longer caught up."""
        self.seen = {n: v for n, v in self.seen.items() if n in numbers}
        self.closed -= numbers

    def save(self) -> None:
        """Written when it changed (an unchanged ledger is no new cache entry); its folder is
        made by the write (``fsio``), as every file the tool writes."""
        if self.path is None or self._text() == self._loaded:
            return
        fsio.write_atomic(self.path, self._text())
        self._loaded = self._text()

    def _text(self) -> str:
        data = {
            "format": FORMAT,
            "seen": {str(n): list(v) for n, v in sorted(self.seen.items())},
            "told": sorted(self.told),
            "closed": sorted(self.closed),
        }
        return json.dumps(data, indent=1) + "\n"
