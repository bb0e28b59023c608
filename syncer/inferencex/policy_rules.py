"""The rules ``syncer/data/policy.yaml`` holds, and what each one matches: an exclusion (a flag
or env pattern, the process kinds it applies to, its action and reason), a value rule (a
cluster value inside a kept value -> a placeholder) and a mount rule (a directory of
srt-slurm's checkout mounted into every container). ``policy.py`` applies them.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from dataclasses import dataclass
from enum import StrEnum

from syncer.model import BLOCK_KINDS, Block


class PolicyAction(StrEnum):
    """What the cookbook form does with a setting a policy entry matches."""

    DROP = "drop"  # removed
    SET = "set"  # the entry's value (a placeholder) replaces srt-slurm's injected one
    KV_EVENTS = "kv-events"  # the KV-events JSON with the entry's endpoint
    WORKER_URL = "worker-url"  # a router's worker URL with the entry's host placeholder
    PINNING = "pinning"  # removed: the block's `gpu_pinning` carries it


ACTIONS = frozenset(PolicyAction)
# What a rule may name: every block kind, and the benchmark client.
KINDS = {*BLOCK_KINDS, "benchmark"}


@dataclass(frozen=True)
class Exclusion:
    """One policy entry: the flag or env pattern, the kinds it applies to, its action."""

    name: str
    field: str  # flag | env
    pattern: str
    kinds: tuple[str, ...]
    action: PolicyAction
    reason: str
    value: str | None = None
    nginx_value: str | None = None
    # only values matching one of these globs (e.g. a path inside the InferenceX workspace)
    values: tuple[str, ...] = ()
    disclosure: str | None = None  # what the cookbook shows instead (a cell disclosure)
    injected_for: tuple[str, ...] = ()  # roles / "multi-node" srt-slurm injects the flag into
    # the value is placement whoever set it (srt-slurm or the recipe): every copy takes `value`
    any_source: bool = False

    def injected_into(self, block: Block) -> bool:
        """Whether srt-slurm itself puts this flag into ``block`` (else a copy there can only
        be the recipe's own)."""
        if not self.injected_for:
            return True
        multi = int(block.get("nodes_per_worker", 1) or 1) > 1
        return block.get("role") in self.injected_for or (
            multi and "multi-node" in self.injected_for
        )

    def matches(self, kind: str, field: str, name: str, value: str | None = None) -> bool:
        if not (field == self.field and kind in self.kinds and _glob(name, self.pattern)):
            return False
        if not self.values:
            return True
        return value is not None and any(_glob(value, v) for v in self.values)


# pattern -> whether it has no wildcard (most entries name one flag or env key)
_LITERAL: dict[str, bool] = {}


def _glob(text: str, pattern: str) -> bool:
    """``fnmatch.fnmatchcase``, which compiles every pattern to a regex first, without that
    for a pattern with no wildcard (it matches itself only)."""
    literal = _LITERAL.get(pattern)
    if literal is None:
        literal = _LITERAL[pattern] = not any(c in pattern for c in "*?[")
    return text == pattern if literal else fnmatch.fnmatchcase(text, pattern)


@dataclass(frozen=True)
class ValueRule:
    """A cluster value or srt-slurm template inside a kept value -> the cookbook placeholder."""

    name: str
    regex: re.Pattern[str]
    replace: str
    kinds: tuple[str, ...]
    reason: str

    def apply(self, kind: str, value: str) -> str:
        return self.regex.sub(self.replace, value) if kind in self.kinds else value


@dataclass(frozen=True)
class MountRule:
    """A directory of srt-slurm's checkout mounted into every container (``configs/`` at
    ``/configs``): a value naming a file there becomes the file's name plus a router file."""

    name: str
    mount: str
    directory: str
    kinds: tuple[str, ...]
    reason: str

    def relpath(self, kind: str, value: str) -> str | None:
        """The path inside the mounted directory when ``value`` is exactly a file under the
        mount (normalised, no ``..``), else None: a path elsewhere is not srt-slurm's."""
        if kind not in self.kinds or not value.startswith(self.mount + "/"):
            return None
        rel = value[len(self.mount) + 1 :]
        parts = rel.split("/")
        if not rel or any(p in ("", ".", "..") for p in parts) or posixpath.normpath(rel) != rel:
            return None
        return rel


@dataclass(frozen=True)
class MountedFile:
    """One reference to a file of srt-slurm's checkout in a kept value."""

    rule: MountRule
    relpath: str  # inside rule.directory
    kind: str
    setting: str  # the flag or env key that names it
    value: str  # the value as srt-slurm passed it

    @property
    def name(self) -> str:
        return posixpath.basename(self.relpath)

    @property
    def source(self) -> str:
        return f"{self.rule.directory}/{self.relpath}"
