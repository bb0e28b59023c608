"""`sync list`: the SGLang AgentX configs of an InferenceX checkout, as data: how InferenceX
launches each (a recipe, or a bash script), on how many nodes, in which shape, and which
cookbook model of ``sync.yaml`` takes it (or why none does)."""

from __future__ import annotations

from dataclasses import dataclass

from syncer import checkout
from syncer.inferencex.discovery import hardware_of, is_agentx, model_prefix_of
from syncer.inferencex.master import Master, launched_by_script
from syncer.syncconfig import SyncConfig


@dataclass(frozen=True)
class Listed:
    """One AgentX config of the checkout."""

    key: str
    file: str  # the master config holding it, relative to the checkout
    launch: str  # "recipe" or "script"
    nodes: str  # "single-node" or "multi-node"
    shape: str  # "agg" or "disagg"
    hardware: str
    model_prefix: str
    model: str | None  # the cookbook model (org/model) taking it
    listed: bool  # sync.yaml lists the key under that model (not only a match rule)
    why_not: str | None  # why no cookbook model takes it

    def as_json(self) -> dict[str, object]:
        return {
            "key": self.key,
            "file": self.file,
            "launch": self.launch,
            "nodes": self.nodes,
            "shape": self.shape,
            "hardware": self.hardware,
            "model_prefix": self.model_prefix,
            "model": self.model,
            "listed": self.listed,
            "why_not": self.why_not,
        }


def agentx_configs(master: Master, config: SyncConfig) -> list[Listed]:
    """Every SGLang AgentX key of ``master``, in master order."""
    out = []
    for key, (raw, path) in master.data.items():
        if not is_agentx(raw):
            continue
        prefix, hardware = model_prefix_of(key, raw), hardware_of(key, raw)
        model, why_not = config.model_for(key, prefix, hardware)
        out.append(
            Listed(
                key=key,
                file=checkout.relative(path, master.root),
                launch="script" if launched_by_script(raw) else "recipe",
                nodes="multi-node" if raw.get("multinode") else "single-node",
                shape="disagg" if raw.get("disagg") else "agg",
                hardware=hardware,
                model_prefix=prefix,
                model=model.path if model else None,
                listed=model is not None and model.listed(key) is not None,
                why_not=why_not,
            )
        )
    return out
