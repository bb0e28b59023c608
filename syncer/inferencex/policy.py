"""Raw blocks -> cookbook form, driven by the one exclusion policy (``syncer/data/policy.yaml``).

Each policy entry names a flag or env pattern, the process kinds it applies to, an action
and the reason reports print. Beyond the entries, the cookbook form has a fixed layout the
published cells show: worker args in the cookbook's lead-flag order, env keys sorted, router
worker addresses listed decode first then prefill (each newest worker first), then
``--pd-disaggregation``, ``--host``, ``--port``, the recipe's router args, ``--worker-urls`` last.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from syncer.errors import SyncError
from syncer.inferencex import yamlsafe
from syncer.model import BLOCK_KEY_ORDER, Block, sort_worker_args, sorted_env

ACTIONS = {"drop", "set", "kv-events", "worker-url", "pinning"}
KINDS = {
    "worker",
    "sglang-router",
    "dynamo-frontend",
    "etcd",
    "nats",
    "nginx",
    "mooncake-master",
    "mooncake-store",
    "benchmark",
}
_HEAD_IP = re.compile(r"\$(AGG|PREFILL|DECODE)_(\d+)_HEAD_IP")


@dataclass(frozen=True)
class Exclusion:
    name: str
    field: str  # flag | env
    pattern: str
    kinds: tuple[str, ...]
    action: str
    reason: str
    value: str | None = None
    nginx_value: str | None = None

    def matches(self, kind: str, field: str, name: str) -> bool:
        return (
            field == self.field and kind in self.kinds and fnmatch.fnmatchcase(name, self.pattern)
        )


@dataclass
class Policy:
    entries: list[Exclusion]
    path: str = "syncer/data/policy.yaml"
    _memo: dict[tuple[str, str, str], Exclusion | None] = field(default_factory=dict, repr=False)

    def exclusion(self, kind: str, field: str, name: str) -> Exclusion | None:
        """First entry covering ``name`` (a flag with ``--`` or an env key) for a process kind."""
        key = (kind, field, name)
        if key not in self._memo:
            self._memo[key] = next((e for e in self.entries if e.matches(kind, field, name)), None)
        return self._memo[key]

    def to_cookbook(self, raw_blocks: list[Block]) -> list[Block]:
        """Cookbook form of one deployment's raw blocks (never mutates the input)."""
        workers = [b for b in raw_blocks if b.get("kind") == "worker"]
        nginx = any(b.get("kind") == "nginx" for b in raw_blocks)
        return _cookbook_order([self._block(copy.deepcopy(b), workers, nginx) for b in raw_blocks])

    # -- per block ------------------------------------------------------------------------

    def _block(self, block: Block, workers: list[Block], nginx: bool = False) -> Block:
        kind = block.get("kind", "")
        role = str(block.get("role", "agg"))
        env: dict[str, str] = {}
        for key, value in (block.get("env") or {}).items():
            entry = self.exclusion(kind, "env", key)
            if entry is None:
                env[key] = value
            elif entry.action == "set":
                env[key] = self._value(entry, role, nginx)
            # drop / pinning: removed (the pinning is carried by the block's gpu_pinning)
        args: list[list[str]] = []
        for arg in block.get("args") or []:
            entry = self.exclusion(kind, "flag", arg[0])
            if entry is None:
                args.append(list(arg))
            elif entry.action == "set":
                args.append([arg[0], self._value(entry, role, nginx)])
            elif entry.action == "kv-events":
                args.append(
                    [arg[0], _kv_events(arg[1] if len(arg) > 1 else "{}", entry.value or "")]
                )
            elif entry.action == "worker-url":
                args.append(_worker_url(arg, entry.value or "30000", workers))
        if kind == "worker":
            args = sort_worker_args(args)
        elif kind == "sglang-router":
            args = _router_layout(args)
        block["env"] = sorted_env(env)
        block["args"] = args
        cmd = str(block.get("cmd", ""))
        if cmd.startswith("python -m "):
            # the cookbook names one interpreter for every process
            block["cmd"] = "python3" + cmd[len("python") :]
        if kind == "sglang-router" and block.get("count", 1) == 1:
            block.pop("count", None)
        return _ordered(block)

    @staticmethod
    def _value(entry: Exclusion, role: str, nginx: bool = False) -> str:
        value = entry.nginx_value if nginx and entry.nginx_value is not None else entry.value
        return (value or "").replace("{ROLE}", role.upper())


def _cookbook_order(blocks: list[Block]) -> list[Block]:
    """Published order: etcd, NATS, then (Dynamo) nginx and frontends before the Mooncake
    master and the workers; an SGLang router (and its nginx) comes after the workers."""

    def of(*kinds: str) -> list[Block]:
        return [b for b in blocks if b.get("kind") in kinds]

    infra = of("etcd", "nats")
    dynamo_front = of("dynamo-frontend")
    nginx = of("nginx")
    mooncake = of("mooncake-master", "mooncake-store")
    workers = of("worker")
    routers = of("sglang-router")
    placed = [*infra, *dynamo_front, *nginx, *mooncake, *workers, *routers]
    other = [b for b in blocks if not any(b is p for p in placed)]
    if dynamo_front:
        return [*infra, *nginx, *dynamo_front, *mooncake, *workers, *routers, *other]
    return [*infra, *mooncake, *workers, *nginx, *routers, *other]


def _ordered(block: Block) -> Block:
    out = {k: block[k] for k in BLOCK_KEY_ORDER if k in block}
    out.update({k: v for k, v in block.items() if k not in out})
    return out


def _kv_events(text: str, endpoint: str) -> str:
    try:
        cfg = json.loads(text)
    except json.JSONDecodeError:
        raise SyncError(f"--kv-events-config is not JSON: {text!r}") from None
    if isinstance(cfg, dict) and "endpoint" in cfg:
        cfg["endpoint"] = endpoint
    return json.dumps(cfg, separators=(",", ":"))


def _worker_url(arg: list[str], port: str, workers: list[Block]) -> list[str]:
    def rewrite(url: str) -> str:
        m = re.fullmatch(r"(\w+)://([^/:]+):(\d+)(.*)", url)
        if not m:
            return url
        scheme, host, _, rest = m.groups()
        head = _HEAD_IP.fullmatch(host)
        if head and head.group(1) == "AGG" and _single_local_agg(workers):
            host = "127.0.0.1"
        return f"{scheme}://{host}:{port}{rest}"

    flag, *values = arg
    if flag == "--prefill" and values:
        # --prefill <url> [<bootstrap port>]: the bootstrap port takes SGLang's default
        return [flag, rewrite(values[0]), *(["8998"] if len(values) > 1 else [])]
    return [flag, *(rewrite(v) for v in values)]


def _single_local_agg(workers: list[Block]) -> bool:
    aggs = [w for w in workers if w.get("role") == "agg"]
    return (
        len(aggs) == 1
        and aggs[0].get("workers", 1) == 1
        and aggs[0].get("nodes_per_worker", 1) == 1
    )


def _router_layout(args: list[list[str]]) -> list[list[str]]:
    decode = [a for a in args if a[0] == "--decode"]
    prefill = [a for a in args if a[0] == "--prefill"]
    pd = [a for a in args if a[0] == "--pd-disaggregation"]
    host = [a for a in args if a[0] == "--host"]
    port = [a for a in args if a[0] == "--port"]
    urls = [a for a in args if a[0] == "--worker-urls"]
    placed = {"--decode", "--prefill", "--pd-disaggregation", "--host", "--port", "--worker-urls"}
    rest = [a for a in args if a[0] not in placed]
    return [*reversed(decode), *reversed(prefill), *pd, *host, *port, *rest, *urls]


@lru_cache(maxsize=1)
def _default_policy() -> Policy:
    text = resources.files("syncer").joinpath("data", "policy.yaml").read_text(encoding="utf-8")
    return parse_policy(yamlsafe.loads(text, "syncer/data/policy.yaml"), "syncer/data/policy.yaml")


def load_policy(path: str | None = None) -> Policy:
    """The exclusion policy (the packaged one unless a path is given)."""
    if path is None:
        return _default_policy()
    return parse_policy(yamlsafe.load(path), str(path))


_REQUIRED_KEYS = {"name", "field", "pattern", "kinds", "action", "reason"}
_OPTIONAL_KEYS = {"value", "nginx_value"}


def parse_policy(doc: Any, path: str) -> Policy:
    if (
        not isinstance(doc, dict)
        or doc.get("version") != 1
        or not isinstance(doc.get("entries"), list)
    ):
        raise SyncError("policy must be {version: 1, entries: [...]}", path=path)
    entries: list[Exclusion] = []
    names: set[str] = set()
    for i, raw in enumerate(doc["entries"]):
        where = f"entries[{i}]"
        if not isinstance(raw, dict):
            raise SyncError(f"{where} must be a mapping", path=path)
        missing = _REQUIRED_KEYS - set(raw)
        if missing:
            raise SyncError(f"{where}: missing {', '.join(sorted(missing))}", path=path)
        unknown = set(raw) - _REQUIRED_KEYS - _OPTIONAL_KEYS
        if unknown:
            raise SyncError(f"{where}: unknown key {sorted(unknown)[0]!r}", path=path)
        if raw["field"] not in ("flag", "env"):
            raise SyncError(f"{where}: field must be flag or env", path=path)
        if raw["action"] not in ACTIONS:
            raise SyncError(
                f"{where}: action must be one of {', '.join(sorted(ACTIONS))}", path=path
            )
        kinds = tuple(raw["kinds"]) if isinstance(raw["kinds"], list) else ()
        if not kinds or set(kinds) - KINDS:
            raise SyncError(
                f"{where}: kinds must be a list of {', '.join(sorted(KINDS))}", path=path
            )
        if raw["action"] in ("set", "kv-events", "worker-url") and not isinstance(
            raw.get("value"), str
        ):
            raise SyncError(f"{where}: action {raw['action']} needs a string value", path=path)
        if raw["name"] in names:
            raise SyncError(f"{where}: duplicate entry name {raw['name']!r}", path=path)
        names.add(raw["name"])
        entries.append(
            Exclusion(
                name=str(raw["name"]),
                field=raw["field"],
                pattern=str(raw["pattern"]),
                kinds=kinds,
                action=raw["action"],
                reason=str(raw["reason"]),
                value=raw.get("value"),
                nginx_value=raw.get("nginx_value"),
            )
        )
    return Policy(entries=entries, path=path)
