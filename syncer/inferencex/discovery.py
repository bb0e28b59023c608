"""Which AgentX configs an InferenceX PR adds or changes, from its commits alone.

A master-config key counts when it has an ``agentic-coding`` scenario and an SGLang framework
at the PR's head, and the PR adds its entry, changes it, or changes a file the key reads: a
recipe a row names, the lane's shared recipe block, a golden acceptance-length file of its
model prefix, the era's reference AL curve, the launch script of a script-era key, or the
srt-slurm submodule pin. Both layouts are read (``master.find_layout``); both commits come
from the bot's clone as git objects (:mod:`syncer.inferencex.commits`), never a checkout.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from syncer.errors import SyncError
from syncer.inferencex import commits
from syncer.inferencex.acceptance import GOLDEN_DIRS, LEGACY_REFERENCE_AL
from syncer.inferencex.master import (
    AGENTIC,
    Master,
    find_layout,
    is_sglang,
    load_master,
)
from syncer.inferencex.releases import deciding_scripts
from syncer.inferencex.rows import SearchRow
from syncer.inferencex.runner_launch import runners_file
from syncer.inferencex.scripts import script_launch
from syncer.inferencex.srtconfigs import SUBMODULE


@dataclass
class Found:
    """One AgentX config of the PR and why it counts."""

    key: str
    model_prefix: str
    hardware: str
    reasons: list[str] = field(default_factory=list)


def is_agentx(raw: object) -> bool:
    """Whether a master entry is an SGLang AgentX config (the configs the cookbook shows)."""
    if not isinstance(raw, dict):
        return False
    framework = raw.get("framework")
    scenarios = raw.get("scenarios")
    blocks = scenarios.get(AGENTIC) if isinstance(scenarios, dict) else None
    return isinstance(framework, str) and is_sglang(framework) and bool(blocks)


def hardware_of(key: str, raw: dict[str, object]) -> str:
    """The key's hardware id by the naming convention ``<model>-<precision>-<gpu>-...``, else
    the runner's cluster label (``ConfigEntry.hardware``'s rule, on the raw entry)."""
    parts = key.split("-")
    if len(parts) >= 3 and parts[1] == str(raw.get("precision", "")):
        return parts[2]
    return str(raw.get("runner", "")).removeprefix("cluster:").split("-")[0]


def model_prefix_of(key: str, raw: dict[str, object]) -> str:
    prefix = raw.get("model-prefix")
    return str(prefix) if prefix else key.split("-")[0]


def changed_configs(clone: Path, base: str | None, head: str, trees: commits.Trees) -> list[Found]:
    """The AgentX configs ``head`` adds or changes against ``base`` (None: everything at
    ``head`` is new), in master order."""
    changed = commits.changed_paths(clone, base, head)
    if not any(commits.is_data_path(p) or p == SUBMODULE for p in changed):
        return []  # nothing a render reads (docs, workflows, the changelog)
    head_master = _master(trees.at(head))
    if head_master is None:
        return []
    if base is None:
        before = {}
    elif any(commits.is_data_path(p, commits.MASTERS) for p in changed):
        base_master = _master(trees.at(base, commits.MASTERS))
        before = base_master.data if base_master is not None else {}
    else:
        before = head_master.data  # no master config changed: every entry is as it was
    out: list[Found] = []
    for key, (raw, _path) in head_master.data.items():
        if not is_agentx(raw):
            continue
        found = Found(key, model_prefix_of(key, raw), hardware_of(key, raw))
        if key not in before:
            found.reasons.append("master entry added")
        elif before[key][0] != raw:
            found.reasons.append("master entry changed")
        else:
            found.reasons.extend(
                f"{path} changed" for path in sorted(files_read(head_master, key) & changed)
            )
        if found.reasons:
            out.append(found)
    return out


def _master(tree: Path) -> Master | None:
    """The tree's master configs; None when it has none (nothing of it is an AgentX config).
    A master config that does not parse is the PR's error, named with its file and line."""
    try:
        find_layout(tree)
    except SyncError:
        return None
    return load_master(tree)


def files_read(master: Master, key: str) -> set[str]:
    """The tree paths (relative, ``/``-separated) a render of ``key`` reads besides the master
    config. A file a broken entry cannot name is not listed: the entry itself is what changed."""
    root = master.root
    out: set[str] = set()

    def add(path: Path | None) -> None:
        if path is not None:
            out.add(Path(os.path.relpath(os.path.abspath(path), os.path.abspath(root))).as_posix())

    raw, _ = master.data[key]
    launch = script_launch(master, key)
    if launch is not None:
        for ref in launch.rows.values():
            out.update(_layout_relative(master, name) for name in ref.candidates)
    else:
        try:
            entry = master.entry(key)
        except SyncError:
            return out
        # A recipe absent or refused is the render's to report, not discovery's.
        for row in entry.rows:
            with contextlib.suppress(SyncError):
                add(entry.recipe_path(row))
        with contextlib.suppress(SyncError):
            add(entry.shared_block_path())
        # a runner script that clones srt-slurm for the key chooses its release
        for script in deciding_scripts(entry):
            add(script)
        # which scripts those are comes from the runners a label lists
        add(runners_file(entry) if entry.runner.startswith("cluster:") else None)
        if not entry.old_layout:
            out.add(SUBMODULE)
        elif any(_reads_reference_al(row) for row in entry.rows):
            out.add(_layout_relative(master, LEGACY_REFERENCE_AL))
    prefix = model_prefix_of(key, raw)
    for base in (master.layout_root, master.layout_root.parent):
        for sub in GOLDEN_DIRS:
            folder = base / sub
            if folder.is_dir() and not folder.is_symlink():
                for f in folder.glob(f"{prefix}_*.yaml"):
                    add(f)
    return out


def _reads_reference_al(row: SearchRow) -> bool:
    """The old layout's injector reads the era's reference curve only for a row asking for
    synthetic acceptance without a length of its own (acceptance.legacy_acceptance_length)."""
    return bool(row.synthetic_acceptance) and row.synthetic_acceptance_length is None


def _layout_relative(master: Master, name: str) -> str:
    rel = os.path.relpath(master.layout_root / name, master.root)
    return Path(rel).as_posix()
