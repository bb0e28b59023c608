"""The gate's findings handed to each model's job (``--handoff FILE``): the open InferenceX PRs
and the AgentX configs each adds or changes, listed and discovered once per event.

The workflow runs one publish job per model. Each used to list every open PR and discover
every PR's configs from its commits again, so a second model's job repeated all of it. The
gate job (``--models-only --handoff FILE``) now does it once, for the scheduled run, and its
output reaches every model's job, which looks only at the PRs of its model. The file is this
tool's own (same commit, one workflow run); it is still read as input: a file of another shape
is an error naming it, never a reason to skip a PR.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from syncer import fsio
from syncer.errors import SyncError
from syncer.publish.prconfigs import PRKeys
from syncer.publish.records import Pull, PullState
from syncer.syncconfig import SyncConfig

FORMAT = 1
MAX_BYTES = 16 << 20


@dataclass(frozen=True)
class Listed:
    """An open PR as the gate listed it, with the configs it found (``keys`` None: discovery
    failed there, and the job finds them again, reporting the error as usual)."""

    number: int
    head: str
    updated_at: str
    keys: PRKeys | None

    def pull(self, repo: str) -> Pull:
        """What the listing said of the PR: enough to decide whether it moved, nothing more
        (the job reads the PR itself before it acts on it)."""
        return Pull(
            repo, self.number, "", "", PullState.OPEN, False, "", "", self.head, repo, "", (),
            "", updated_at=self.updated_at,
        )  # fmt: skip

    def concerns(self, model: str | None, config: SyncConfig) -> bool:
        """Whether the job of ``model`` (None: every model) has work on this PR: configs of
        the model, or the keys no page takes when this model's job names them."""
        if model is None or self.keys is None:
            return True
        keys = self.keys
        return any(m.path == model for m, _ in keys.mapped) or keys.notice_model(config) == model


@dataclass
class Handoff:
    listed: list[Listed] = field(default_factory=list)

    def numbers(self) -> set[int]:
        return {item.number for item in self.listed}


def write(path: Path, pulls: list[Pull], found: dict[int, PRKeys | None]) -> None:
    data = {
        "format": FORMAT,
        "open": [
            {
                "number": p.number,
                "head": p.head_sha,
                "updated_at": p.updated_at,
                "keys": None if found.get(p.number) is None else _keys(found[p.number]),
            }
            for p in pulls
        ],
    }
    # One line: the workflow passes it on as a job output.
    fsio.write_atomic(path, json.dumps(data, separators=(",", ":")) + "\n")


def write_none(path: Path) -> None:
    """What the gate hands on for an event that is no scheduled run: no listing."""
    fsio.write_atomic(path, json.dumps({"format": FORMAT, "open": None}) + "\n")


def _keys(keys: PRKeys | None) -> dict[str, object]:
    assert keys is not None
    return {
        "base": keys.base,
        "mapped": [[m.path, key] for m, key in keys.mapped],
        "unmapped": list(keys.unmapped),
    }


def read(path: Path, config: SyncConfig) -> Handoff | None:
    """The gate's listing (None: it listed nothing, this event is no scheduled run)."""
    raw = fsio.read_capped(path, MAX_BYTES, "the gate's handoff")
    try:
        data = json.loads(raw)
        if data["format"] != FORMAT:
            raise ValueError(f"format {data['format']!r}, expected {FORMAT}")
        if data["open"] is None:
            return None
        return Handoff([_listed(item, config) for item in data["open"]])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SyncError(
            f"not a handoff of this tool's gate ({type(exc).__name__}: {exc}); expected "
            "what `sync bot --models-only --handoff` writes",
            path=str(path),
        ) from None


def _listed(item: dict[str, object], config: SyncConfig) -> Listed:
    number, head, updated = item["number"], item["head"], item["updated_at"]
    if not isinstance(number, int) or not isinstance(head, str) or not isinstance(updated, str):
        raise ValueError(f"PR entry {item!r:.80}")
    found = item["keys"]
    keys = None
    if found is not None:
        if not isinstance(found, dict):
            raise ValueError(f"keys of PR #{number}")
        base = found["base"]
        keys = PRKeys(number, head, base if isinstance(base, str) else None)
        for path, key in found["mapped"]:
            keys.mapped.append((config.model(str(path)), str(key)))
        keys.unmapped.extend(str(reason) for reason in found["unmapped"])
    return Listed(number, head, updated, keys)
