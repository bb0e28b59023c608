"""The fixed layout of the cookbook form, which no policy entry decides: the published cells'
block order and key order, Mooncake stores differing only in port merged, each flag once
(last occurrence wins), router worker addresses listed decode first then prefill (each newest
worker first), then ``--pd-disaggregation``, ``--host``, ``--port``, the recipe's router args,
``--worker-urls`` last; etcd / NATS by binary name; no Dynamo control plane behind an SGLang
router. :class:`syncer.inferencex.policy.Policy` applies these around its entries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from syncer import shellwords
from syncer.errors import SyncError
from syncer.model import BLOCK_KEY_ORDER, Block, as_block, block_data
from syncer.wording import js

_HEAD_IP = re.compile(r"\$(AGG|PREFILL|DECODE)_(\d+)_HEAD_IP")


# Discovery env -> the service it points at.
DISCOVERY = {"ETCD_ENDPOINTS": "etcd", "NATS_SERVER": "nats"}


def preamble_nats_conf(block: Block) -> str | None:
    """The config srt-slurm's NATS preamble writes (``printf %s '<conf>' > /tmp/nats.conf``)."""
    for line in block.get("preamble") or []:
        try:
            tokens = shellwords.split(line)
        except ValueError:
            continue
        if len(tokens) == 5 and tokens[:2] == ["printf", "%s"] and tokens[3] == ">":
            return tokens[2]
    return None


def infra_command(block: Block) -> None:
    """etcd / NATS as the cookbook shows them: the binary by name (srt-slurm runs its own
    copy from the /configs mount), NATS's whole argv in ``cmd``, the config file in the
    working directory, and none of srt-slurm's scratch-directory preamble."""
    tokens = [str(block.get("cmd", ""))] + [t for arg in block.get("args") or [] for t in arg]
    tokens[0] = tokens[0].rsplit("/", 1)[-1]
    block.pop("preamble", None)
    if block.get("kind") == "nats":
        tokens = ["nats.conf" if t == "/tmp/nats.conf" else t for t in tokens]
        block["cmd"] = " ".join(tokens)
        block["args"] = []
    else:
        block["cmd"] = tokens[0]


def split_equals(args: list[list[str]]) -> list[list[str]]:
    """``--flag=value`` tokens (the Mooncake master's argv) -> ``[--flag, value]``."""
    out = []
    for arg in args:
        if len(arg) == 1 and arg[0].startswith("--") and "=" in arg[0]:
            flag, _, value = arg[0].partition("=")
            out.append([flag, value])
        else:
            out.append(arg)
    return out


def last_wins(args: list[list[str]], *, keep_first_position: bool) -> list[list[str]]:
    """Each flag once, with the value of its last occurrence (what argparse / gflags use when
    srt-slurm passes a flag twice). The Mooncake master keeps that occurrence where it is
    (the published master blocks list the recipe's eviction ratio last); worker args are
    re-sorted afterwards, so their position does not matter."""
    last: dict[str, int] = {}
    for i, arg in enumerate(args):
        last[arg[0]] = i
    if keep_first_position:
        first: dict[str, int] = {}
        for i, arg in enumerate(args):
            first.setdefault(arg[0], i)
        return [args[last[a[0]]] for i, a in enumerate(args) if first[a[0]] == i]
    return [a for i, a in enumerate(args) if last[a[0]] == i]


def repeated_flags(args: list[list[str]]) -> set[str]:
    """Flags given more than once: in a worker, srt-slurm's injected copy plus the recipe's
    own (srt-slurm appends the recipe's args after the ones it injects)."""
    seen: set[str] = set()
    out: set[str] = set()
    for arg in args:
        (out if arg[0] in seen else seen).add(arg[0])
    return out


def merge_stores(blocks: list[Block]) -> list[Block]:
    """Mooncake store entries that differ only in their port become one block whose
    ``ports`` lists theirs in declaration order (the first entry's args stand for all; the
    layout the published cookbook modules use for a Mooncake tier's four store entries)."""
    out: list[Block] = []
    for block in blocks:
        if block.get("kind") == "mooncake-store":
            for prev in out:
                if prev.get("kind") == "mooncake-store" and _same_store(prev, block):
                    prev["ports"] = [*prev.get("ports", []), *block.get("ports", [])]
                    break
            else:
                out.append(block)
        else:
            out.append(block)
    return out


def _same_store(a: Block, b: Block) -> bool:
    def shape(block: Block) -> object:
        args = [arg for arg in block.get("args") or [] if arg[0] != "--port"]
        rest = {k: v for k, v in block.items() if k not in ("args", "ports")}
        return json.dumps([rest, args], sort_keys=True)

    return shape(a) == shape(b)


def cookbook_order(blocks: list[Block]) -> list[Block]:
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


# The block orders the upstream generator's versions wrote, by the module versions that show
# them (docs/srt-slurm-rules.md, "Block order"); they differ only in where a Dynamo deployment's
# nginx and frontends stand.
NEWEST_LAYOUT = "newest"  # 4661ab2b, 652614ed, 2b484a51: nginx, frontends, then the rest
FRONTEND_BEFORE_NGINX = "frontend-before-nginx"  # 37da6c0b: the frontends, then nginx
FRONTEND_LAST = "frontend-last"  # c4b47c36: nginx and the frontends after the workers
LAYOUTS = (NEWEST_LAYOUT, FRONTEND_BEFORE_NGINX, FRONTEND_LAST)
_FRONT = ("nginx", "dynamo-frontend")


def layout_order(blocks: list[Block], layout: str = NEWEST_LAYOUT) -> list[Block]:
    """The cookbook form's blocks in the order a generator version wrote them (``layout``, one
    of :data:`LAYOUTS`); a deployment without a Dynamo frontend has one order in every one."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown block layout {layout!r}")
    newest = cookbook_order(blocks)
    front = [b for b in newest if b.get("kind") in _FRONT]
    if layout == NEWEST_LAYOUT or not any(b.get("kind") == "dynamo-frontend" for b in front):
        return newest
    if layout == FRONTEND_BEFORE_NGINX:
        moved = iter(sorted(front, key=lambda b: b.get("kind") != "dynamo-frontend"))
        return [next(moved) if b.get("kind") in _FRONT else b for b in newest]
    return [b for b in newest if b.get("kind") not in _FRONT] + front


def layout_of(deployments: Iterable[list[Block]]) -> str | None:
    """The layout a module's deployments were written in (each a list of blocks as published),
    from the first one that tells them apart; None when none does (no Dynamo frontend beside a
    worker or an nginx)."""
    for blocks in deployments:
        kinds = [str(b.get("kind")) for b in blocks]
        if "dynamo-frontend" not in kinds:
            continue
        front = kinds.index("dynamo-frontend")
        workers = [i for i, k in enumerate(kinds) if k == "worker"]
        if workers and front > workers[-1]:
            return FRONTEND_LAST
        if "nginx" in kinds:
            return FRONTEND_BEFORE_NGINX if front < kinds.index("nginx") else NEWEST_LAYOUT
    return None


def key_ordered(block: Block) -> Block:
    data = block_data(block)
    out = {k: data[k] for k in BLOCK_KEY_ORDER if k in data}
    out.update({k: v for k, v in data.items() if k not in out})
    return as_block(out)


def kv_events_endpoint(text: str, endpoint: str) -> str:
    try:
        cfg = json.loads(text)
    except json.JSONDecodeError:
        raise SyncError(f"--kv-events-config is not JSON: {js(text)}") from None
    if isinstance(cfg, dict) and "endpoint" in cfg:
        cfg["endpoint"] = endpoint
    return json.dumps(cfg, separators=(",", ":"))


def without_unused_dynamo_plane(blocks: list[Block]) -> list[Block]:
    """A deployment with no Dynamo process (an SGLang router in front of
    ``sglang.launch_server`` workers) uses no Dynamo control plane: srt-slurm 1.x still starts
    etcd and NATS for it and sets the Dynamo runtime env on every worker
    (``do_sweep.py`` and ``worker_stage.py`` @v1.0.38), which the cookbook form leaves out."""
    workers = [str(b.get("cmd", "")) for b in blocks if b.get("kind") == "worker"]
    if (
        not workers
        or not all("sglang.launch_server" in cmd for cmd in workers)
        or any(b.get("kind") == "dynamo-frontend" for b in blocks)
    ):
        return blocks
    out: list[Block] = []
    for block in blocks:
        if block.get("kind") in ("etcd", "nats"):
            continue
        if block.get("kind") == "worker":
            env = block.get("env") or {}
            block = {
                **block,
                "env": {
                    k: v for k, v in env.items() if k not in DISCOVERY and not k.startswith("DYN_")
                },
            }
        out.append(block)
    return out


def worker_url(arg: list[str], port: str, workers: list[Block], local: bool = True) -> list[str]:
    def rewrite(url: str) -> str:
        m = re.fullmatch(r"(\w+)://([^/:]+):(\d+)(.*)", url)
        if not m:
            return url
        scheme, host, _, rest = m.groups()
        head = _HEAD_IP.fullmatch(host)
        if head and head.group(1) == "AGG" and local and _single_local_agg(workers):
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


def router_layout(args: list[list[str]]) -> list[list[str]]:
    decode = [a for a in args if a[0] == "--decode"]
    prefill = [a for a in args if a[0] == "--prefill"]
    pd = [a for a in args if a[0] == "--pd-disaggregation"]
    host = [a for a in args if a[0] == "--host"]
    port = [a for a in args if a[0] == "--port"]
    urls = [a for a in args if a[0] == "--worker-urls"]
    placed = {"--decode", "--prefill", "--pd-disaggregation", "--host", "--port", "--worker-urls"}
    rest = [a for a in args if a[0] not in placed]
    return [*reversed(decode), *reversed(prefill), *pd, *host, *port, *rest, *urls]


def frontend_count(block: Block, count: int) -> Block:
    """A frontend block with the count the cookbook shows (the layer's, which may differ from
    the count srt-slurm ran: releases.published_frontend_layer)."""
    kind = block.get("kind")
    if kind == "dynamo-frontend":
        return {**block, "count": count}
    if kind == "sglang-router":
        out = {k: v for k, v in block_data(block).items() if k != "count"}
        if count != 1:
            out = {**out, "count": count}
        return key_ordered(as_block(out))
    return block
