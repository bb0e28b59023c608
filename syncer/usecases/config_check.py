"""`sync config check`: a sync.yaml read as every command reads it (its shape refused on the
line at fault), then each key it names looked up in an InferenceX checkout's master configs:
a key that is not there is a finding on the sync.yaml line naming it, with the closest keys
(a render would report it against the master config). A key may be absent on purpose: a
config pinned at a PR head is in no master of main yet."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from syncer.inferencex.master import load_master
from syncer.syncconfig import SyncConfig, load_sync_config
from syncer.wording import closest


@dataclass(frozen=True)
class UnknownKey:
    key: str
    line: int | None
    what: str  # where sync.yaml names it: "model Qwen/qwen3.5: config", "... kv_donors.hicache"
    closest: list[str]


@dataclass
class ConfigCheck:
    config: SyncConfig
    listed: int = 0  # config entries
    donors: int = 0  # KV donors named, by a model or a config
    unknown: list[UnknownKey] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 1 if self.unknown else 0


def check_config(path: Path, inferencex: Path) -> ConfigCheck:
    result = ConfigCheck(load_sync_config(path))
    known = sorted(load_master(inferencex).keys())

    def look_up(key: str, line: int | None, what: str) -> None:
        if key not in known:
            result.unknown.append(UnknownKey(key, line, what, closest(key, known)))

    for model in result.config.models:
        for spec in model.configs:
            result.listed += 1
            look_up(spec.key, spec.line, f"model {model.path}: config")
            if spec.hicache_donor:
                result.donors += 1
                look_up(spec.hicache_donor, spec.line, f"config {spec.key}: hicache_donor")
        for kind, donor in (("hicache", model.hicache_donor), ("mooncake", model.mooncake_donor)):
            if donor:
                result.donors += 1
                look_up(donor, model.line, f"model {model.path}: kv_donors.{kind}")
    return result
