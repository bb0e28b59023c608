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
from syncer.github.records import Pull
from syncer.publish.prconfigs import PRKeys
from syncer.syncconfig import SyncConfig

FORMAT = 1
MAX_BYTES = 16 << 20


@dataclass(frozen=True)
class Listed:
    """An open PR as the gate listed it, with the configs it found (``keys`` None: discovery
    failed there, and the job finds them again, reporting the error as usual)."""

    pull: Pull
    keys: PRKeys | None

    @property
    def number(self) -> int:
        return self.pull.number

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


# The fields of a listed PR handed on: all the bot reads of an InferenceX PR (its body, which
# only the cookbook's PRs' markers need, is left out: a PR's description can be long).
_TEXT = ("title", "state", "user", "head_ref", "head_sha", "head_repo", "base_ref", "html_url",
         "merged_at", "updated_at")  # fmt: skip


def write(path: Path, pulls: list[Pull], found: dict[int, PRKeys | None]) -> None:
    data = {
        "format": FORMAT,
        "open": [
            {
                "number": p.number,
                **{name: getattr(p, name) for name in _TEXT},
                "merged": p.merged,
                "labels": list(p.labels),
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


def read(path: Path, config: SyncConfig, repo: str) -> Handoff | None:
    """The gate's listing (None: it listed nothing, this event is no scheduled run)."""
    raw = fsio.read_capped(path, MAX_BYTES, "the gate's handoff")
    try:
        data = json.loads(raw)
        if data["format"] != FORMAT:
            raise ValueError(f"format {data['format']!r}, expected {FORMAT}")
        if data["open"] is None:
            return None
        return Handoff([_listed(item, config, repo) for item in data["open"]])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SyncError(
            f"not a handoff of this tool's gate ({type(exc).__name__}: {exc}); expected "
            "what `sync bot --models-only --handoff` writes",
            path=str(path),
        ) from None


def _listed(item: dict[str, object], config: SyncConfig, repo: str) -> Listed:
    number, merged, labels = item["number"], item["merged"], item["labels"]
    text: dict[str, str] = {}
    for name in _TEXT:
        value = item[name]
        if not isinstance(value, str):
            raise ValueError(f"{name} of a PR entry: {value!r:.40}")
        text[name] = value
    if (
        not isinstance(number, int)
        or not isinstance(merged, bool)
        or not isinstance(labels, list)
        or not all(isinstance(v, str) for v in labels)
    ):
        raise ValueError(f"PR entry {item!r:.80}")
    pull = Pull(
        repo=repo, number=number, title=text["title"], body="", state=text["state"],
        merged=merged, user=text["user"], head_ref=text["head_ref"], head_sha=text["head_sha"],
        head_repo=text["head_repo"], base_ref=text["base_ref"], labels=tuple(labels),
        html_url=text["html_url"], merged_at=text["merged_at"], updated_at=text["updated_at"],
    )  # fmt: skip
    found = item["keys"]
    keys = None
    if found is not None:
        if not isinstance(found, dict):
            raise ValueError(f"keys of PR #{number}")
        base = found["base"]
        keys = PRKeys(number, pull.head_sha, base if isinstance(base, str) else None)
        for path, key in found["mapped"]:
            keys.mapped.append((config.model(str(path)), str(key)))
        keys.unmapped.extend(str(reason) for reason in found["unmapped"])
    return Listed(pull, keys)
