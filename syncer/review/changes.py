"""What changed between two decoded selections, in the words a docs reviewer uses.

A change is one row of the reviewer's table: a flag, an env variable, a command prefix, a
placement field, a whole process or a config file, with its old and new value as the page would
print them (values are quoted with the decoder's shell module, so a JSON-valued flag reads the
same in the table as in the command).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from syncer.cookbook import shell
from syncer.model import PLACEMENT_FIELDS, Block
from syncer.review.matching import match_blocks

KINDS = ("flag", "env", "cmd", "field", "block", "order", "file")

# Settings the page turns into notes under the commands (cookbook decoder, "Labels and notes"):
# a change to one of them changes the page's prose too, so reviewers see them marked.
NOTE_FLAGS = frozenset({"--enable-dp-attention", "--mamba-scheduler-strategy", "--hicache-size"})
NOTE_ENV = frozenset(
    {"MOONCAKE_PROTOCOL", "SGLANG_DISAGGREGATION_NIXL_BACKEND", "MOONCAKE_GLOBAL_SEGMENT_SIZE"}
)
NOTE_VALUE_MARKERS = ("$IB_DEVICES",)


@dataclass(frozen=True)
class Change:
    """One reviewer-table row. ``old``/``new`` are None when the setting is absent on that side;
    a bare flag's value is the empty string."""

    kind: str
    process: str
    name: str
    old: str | None
    new: str | None
    note: bool = False

    @property
    def action(self) -> str:
        if self.old is None:
            return "added"
        if self.new is None:
            return "removed"
        return "changed"

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "action": self.action,
            "process": self.process,
            "name": self.name,
            "old": self.old,
            "new": self.new,
            "note": self.note,
        }


def _arg_values(args: Sequence[Sequence[str]] | None) -> dict[str, list[str]]:
    """flag -> one display value per occurrence (repeated flags keep their order)."""
    out: dict[str, list[str]] = {}
    for arg in args or ():
        if not arg:
            continue
        out.setdefault(str(arg[0]), []).append(" ".join(shell.quote(v) for v in arg[1:]))
    return out


def _joined(values: list[str] | None) -> str | None:
    if values is None:
        return None
    return "; ".join(values) if len(values) > 1 else values[0]


def _is_note(kind: str, name: str, old: str | None, new: str | None) -> bool:
    if kind == "flag" and name in NOTE_FLAGS:
        return True
    if kind == "env" and name in NOTE_ENV:
        return True
    return any(m in (v or "") for v in (old, new) for m in NOTE_VALUE_MARKERS)


def _field_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def compare_block(process: str, old: Block, new: Block) -> list[Change]:
    """Rows for one process present on both sides: command, flags, env, placement."""
    if old == new:
        return []  # equal blocks have no rows (compared in C, not flag by flag)
    changes: list[Change] = []
    if old.get("cmd") != new.get("cmd"):
        changes.append(Change("cmd", process, "command", str(old.get("cmd")), str(new.get("cmd"))))
    old_args, new_args = _arg_values(old.get("args")), _arg_values(new.get("args"))
    for flag in [*new_args, *(f for f in old_args if f not in new_args)]:
        before, after = _joined(old_args.get(flag)), _joined(new_args.get(flag))
        if before != after:
            changes.append(
                Change("flag", process, flag, before, after, _is_note("flag", flag, before, after))
            )
    old_env, new_env = old.get("env") or {}, new.get("env") or {}
    for key in [*new_env, *(k for k in old_env if k not in new_env)]:
        before = shell.quote(old_env[key]) if key in old_env else None
        after = shell.quote(new_env[key]) if key in new_env else None
        if before != after:
            changes.append(
                Change("env", process, key, before, after, _is_note("env", key, before, after))
            )
    for key in PLACEMENT_FIELDS:
        before, after = _field_text(old.get(key)), _field_text(new.get(key))
        if before != after:
            changes.append(Change("field", process, key, before, after))
    return changes


def block_changes(old: Sequence[Block], new: Sequence[Block]) -> list[Change]:
    """Rows for one selection: processes added, removed or reordered, then per-process rows."""
    changes: list[Change] = []
    pairs = match_blocks(old, new)
    old_index = {id(b): i for i, b in enumerate(old)}
    both = [p for p in pairs if p.old is not None and p.new is not None]
    old_order = [p.title for p in sorted(both, key=lambda p: old_index[id(p.old)])]
    new_order = [p.title for p in both]
    if old_order != new_order:
        # The page lists processes in launch order; a reorder changes what "Copy all" pastes.
        changes.append(
            Change(
                "order", "processes", "launch order", " → ".join(old_order), " → ".join(new_order)
            )
        )
    for pair in pairs:
        old_block, new_block = pair.old, pair.new  # (a pair holds at least one of them)
        if old_block is not None and new_block is not None:
            changes.extend(compare_block(pair.title, old_block, new_block))
        elif new_block is not None:
            changes.append(
                Change("block", pair.title, "process", None, str(new_block.get("cmd", "")))
            )
        elif old_block is not None:
            changes.append(
                Change("block", pair.title, "process", str(old_block.get("cmd", "")), None)
            )
    return changes


def file_name(file_id: str) -> str:
    """``nginx.conf#1a2b3c4d`` -> ``nginx.conf``: the hash changes with the content."""
    return file_id.rsplit("#", 1)[0]


def named_files(files: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for file_id, content in files.items():
        name = file_name(file_id)
        if name in out:
            name = file_id  # two versions of one name in a router: keep them apart
        out[name] = content
    return out


def _file_summary(content: str) -> str:
    digest = hashlib.sha256(content.encode("utf-8")).hexdigest()[:8]
    return f"{len(content.splitlines())} lines, sha256 {digest}"


def compare_files(old: dict[str, str], new: dict[str, str]) -> list[Change]:
    """Config files shipped with a router (nats.conf, nginx.conf), matched by file name."""
    old_named, new_named = named_files(old), named_files(new)
    changes = []
    for name in [*new_named, *(n for n in old_named if n not in new_named)]:
        before, after = old_named.get(name), new_named.get(name)
        if before != after:
            changes.append(
                Change(
                    "file",
                    name,
                    "content",
                    None if before is None else _file_summary(before),
                    None if after is None else _file_summary(after),
                )
            )
    return changes
