"""Recipe variant -> raw blocks, by srt-slurm 2.x rules (docs/srt-slurm-rules.md, Processes).

Implemented version: the newest srt-slurm 2.x described (``SRT_VERSION``): router-free
``frontend.type: sglang`` on port 8000, ``--enable-metrics`` auto-added for direct frontends,
``--skip-server-warmup`` for direct P/D, Dynamo env only for Dynamo workers, crash-dump env
defaults, router Prometheus flags, router args with ``_`` -> ``-`` and list handling. Passing
``version="1"`` gives the v1.0.68 differences (Dynamo env everywhere, none of the 2.x
additions, router args verbatim).

Cluster facts a recipe does not fix are written as ``$TOKENS`` so raw blocks stay
comparable with any run: ``$HEAD_NODE_IP`` (first node), ``$INFRA_IP`` (etcd/NATS/Mooncake
node), ``$<ROLE>_<i>_HEAD_IP`` (leader node of worker ``i`` of a role), ``<node>`` (host
name, in paths). Ports follow srt-slurm's allocators.
"""

from __future__ import annotations

import json

from syncer.errors import SyncError
from syncer.inferencex.recipe import Recipe, Role
from syncer.inferencex.releases import (
    FrontendTopology,
    Release,
    frontend_topology,
    injects_nccl_port,
    published_frontend_layer,
)
from syncer.inferencex.services import effective_services, infra_node_dedicated, service_blocks
from syncer.model import Block
from syncer.wording import js

SRT_VERSION = "2"
WORKER_MODULE = {"dynamo": "python3 -m dynamo.sglang"}
DIRECT_MODULE = "python3 -m sglang.launch_server"
ROUTER_CMD = "python -m sglang_router.launch_router"
FRONTEND_CMD = "python3 -m dynamo.frontend"
ROLE_ORDER = ("prefill", "decode", "agg")
DYN_LOG = "info,dynamo_runtime::pipeline::network::ingress::push_handler=warn"
_DROPPED_ARGS = {
    "model-path",
    "model_path",
    "served-model-name",
    "served_model_name",
}
# dropped from the recipe's args only by the releases that pass their own
_NCCL_ARGS = {"nccl-port", "nccl_port"}


def flag_value(value: object) -> str:
    """Python ``str()`` of a YAML value, as srt-slurm renders it (``0.90`` -> ``0.9``,
    mappings as a Python repr)."""
    return str(value)


def render_args(
    args: dict[str, object], *, sort: bool = True, dashes: bool = True, lists: str = "values"
) -> list[list[str]]:
    """Engine/frontend args -> ``[flag, values...]``. Workers: keys sorted by the raw key
    string, ``_`` -> ``-``; ``true`` bare, ``false``/``null`` omitted, lists as values.
    Routers (``lists="repeat"``): YAML order, each list item repeats the flag."""
    out: list[list[str]] = []
    keys = sorted(args, key=str) if sort else list(args)
    for key in keys:
        value = args[key]
        name = str(key).replace("_", "-") if dashes else str(key)
        flag = f"--{name}"
        if value is True:
            out.append([flag])
        elif value is False or value is None:
            continue
        elif isinstance(value, list):
            if lists == "repeat":
                out.extend([flag, flag_value(v)] for v in value)
            else:
                out.append([flag, *(flag_value(v) for v in value)])
        else:
            out.append([flag, flag_value(value)])
    return out


class _KeepUnknown(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


# What srt-slurm's worker-env templating knows: the host name and the node's index.
WORKER_TEMPLATES = {"node": "<node>", "node_id": "$NODE_ID"}


def worker_env_template(key: str, value: str) -> str:
    """srt-slurm's templating of a worker env value: Python ``format_map`` with ``{node}`` (the
    host name, not its address) and ``{node_id}`` only; other ``{names}`` stay as written
    (``{node_ip}`` is *not* expanded for workers) and ``{{``/``}}`` become braces."""
    try:
        return value.format_map(_KeepUnknown(WORKER_TEMPLATES))
    except (ValueError, IndexError, AttributeError, KeyError) as exc:
        raise SyncError(
            f"env {key}={js(value)}: srt-slurm's env templating fails on it ({exc}); "
            "write literal braces as {{ and }}"
        ) from None


def _served_name(recipe: Recipe, model: str) -> str:
    for role in ("prefill", "agg", "decode"):
        r = recipe.roles.get(role)
        if r is None:
            continue
        for key in ("served-model-name", "served_model_name"):
            value = r.args.get(key)
            if value not in (None, ""):
                return str(value)
    return model.rstrip("/").rsplit("/", 1)[-1]


def _model_arg(path: str) -> str:
    return path[3:] if path.startswith("hf:") else "/model"


def gpu_pinning(role: Role, gpus_per_node: int) -> list[list[str]] | None:
    """Per-worker CUDA_VISIBLE_DEVICES when several workers of a role share nodes."""
    if role.workers < 2 or role.gpus >= gpus_per_node:
        return None
    return [[_devices(role, i, gpus_per_node)] for i in range(role.workers)]


def _devices(role: Role, worker: int, gpus_per_node: int) -> str:
    """The GPU ids worker ``worker`` of a role uses on its node (workers fill nodes in order)."""
    start = (worker * role.gpus) % gpus_per_node
    return ",".join(str(g) for g in range(start, start + role.gpus))


def _role_node_count(role: Role, gpus_per_node: int) -> int:
    """Distinct nodes a role's workers occupy (workers smaller than a node share nodes)."""
    return role.nodes or (role.workers * role.gpus + gpus_per_node - 1) // gpus_per_node


def role_nodes(recipe: Recipe) -> dict[str, int]:
    """Role -> distinct nodes: where a service placed on that role runs one instance each."""
    return {
        name: _role_node_count(role, recipe.gpus_per_node) for name, role in recipe.roles.items()
    }


class _Ports:
    """srt-slurm's job-wide allocators (the simple, single-job cases)."""

    def __init__(self) -> None:
        self.nccl = 17500
        self.sys = 7500
        self.kv = 5200
        self.http_slot: dict[int, int] = {}

    def http(self, node: int) -> int:
        slot = self.http_slot.get(node, 0)
        self.http_slot[node] = slot + 1
        return 6100 + 32 * slot


def topology(recipe: Recipe, version: str = SRT_VERSION) -> FrontendTopology:
    """The frontend layer srt-slurm runs for a variant under ``version``'s line (the raw
    blocks: what its logs show)."""
    return frontend_topology(_frontend_settings(recipe), recipe.total_nodes, version[:1])


def published_layer(recipe: Recipe, version: str = SRT_VERSION) -> FrontendTopology:
    """The frontend layer the cookbook form shows for a variant (``published_frontend_layer``:
    where published cells depart from what srt-slurm runs)."""
    return published_frontend_layer(
        _frontend_settings(recipe),
        recipe.total_nodes,
        version[:1],
        dedicated_infra=infra_node_dedicated(recipe.raw),
    )


def _frontend_settings(recipe: Recipe) -> dict[str, object]:
    frontend = recipe.raw.get("frontend")
    return frontend if isinstance(frontend, dict) else {}


def render_raw(
    recipe: Recipe,
    *,
    simulate_env: dict[str, str] | None = None,
    version: str = SRT_VERSION,
    release: Release | None = None,
) -> list[Block]:
    """The processes srt-slurm launches for one variant, as raw blocks.

    Order: infrastructure (etcd, NATS, Mooncake master), workers (prefill, decode, agg), then
    the frontend (router / Dynamo frontend, nginx first when several frontends).
    """
    ftype = recipe.frontend.type
    dynamo = ftype == "dynamo"
    direct = ftype in ("sglang", "sglang-router")
    v2 = version.startswith("2")
    if not v2 and recipe.schema == 2:
        raise SyncError(f"srt-slurm {version}.x does not parse schema 2 recipes ({recipe.name})")
    blocks: list[Block] = []
    services = effective_services(
        recipe.raw, frontend=ftype, request_plane=recipe.request_plane, version=version
    )
    has_nats = any(s.type == "nats" for s in services)
    mooncake = any(s.type == "mooncake-master" for s in services)
    blocks.extend(service_blocks(services, role_nodes=role_nodes(recipe)))
    ports = _Ports()
    served = _served_name(recipe, recipe.model_path)
    node = 0
    leaders: dict[str, list[tuple[str, int, int | None]]] = {}
    for rname in ROLE_ORDER:
        role = recipe.roles.get(rname)
        if role is None:
            continue
        npw = role.nodes_per_worker if role.gpus >= recipe.gpus_per_node else 1
        first = None
        for w in range(role.workers):
            leader_node = node + (
                w * npw
                if role.gpus >= recipe.gpus_per_node
                else (w * role.gpus) // recipe.gpus_per_node
            )
            ip = f"${rname.upper()}_{w}_HEAD_IP"
            http = 8000 if ftype == "sglang" and v2 else ports.http(leader_node)
            bootstrap = 7200 if rname == "prefill" else None
            leaders.setdefault(rname, []).append((ip, http, bootstrap))
            block = _worker_block(
                recipe,
                role,
                w,
                ip,
                http,
                bootstrap,
                served,
                ports,
                dynamo,
                direct,
                v2,
                has_nats,
                mooncake,
                simulate_env,
                npw,
                release is None or injects_nccl_port(release),
            )
            if first is None:
                first = block
            for _ in range(npw - 1):
                ports.nccl += 1
        node += _role_node_count(role, recipe.gpus_per_node)
        assert first is not None
        blocks.append(first)
    blocks.extend(
        _frontend_blocks(recipe, leaders, dynamo, has_nats, v2, topology(recipe, version))
    )
    return blocks


def _worker_block(
    recipe: Recipe,
    role: Role,
    w: int,
    ip: str,
    http: int,
    bootstrap: int | None,
    served: str,
    ports: _Ports,
    dynamo: bool,
    direct: bool,
    v2: bool,
    has_nats: bool,
    mooncake: bool,
    simulate_env: dict[str, str] | None,
    npw: int,
    nccl: bool = True,
) -> Block:
    args: list[list[str]] = [
        ["--model-path", _model_arg(recipe.model_path)],
        ["--served-model-name", served],
        ["--host", "0.0.0.0"],
        ["--port", str(http)],
    ]
    if nccl:
        args.append(["--nccl-port", str(ports.nccl)])
    ports.nccl += 1
    if direct and v2 and not any(k in role.args for k in ("enable-metrics", "enable_metrics")):
        args.append(["--enable-metrics"])
    if role.name in ("prefill", "decode"):
        args.append(["--disaggregation-mode", role.name])
        if direct and v2:
            args.append(["--skip-server-warmup"])
        if role.name == "prefill" and bootstrap is not None:
            args.append(["--disaggregation-bootstrap-port", str(bootstrap)])
    if npw > 1:
        args += [["--dist-init-addr", f"{ip}:8300"], ["--nnodes", str(npw)], ["--node-rank", "0"]]
    if dynamo:
        log_dir = "/logs" if v2 else "<log-dir>"
        args.append(["--dump-config-to", f"{log_dir}/<node>_config.json"])
    if role.kv_events:
        overrides = role.kv_events if isinstance(role.kv_events, dict) else {}
        cfg = {
            "publisher": "zmq",
            "topic": "kv-events",
            **overrides,
            "endpoint": f"tcp://*:{ports.kv}",
        }
        ports.kv += 1
        args.append(["--kv-events-config", json.dumps(cfg)])
    if dynamo:
        args.append(["--request-plane", recipe.request_plane])
    dropped = _DROPPED_ARGS | _NCCL_ARGS if nccl else _DROPPED_ARGS
    args += render_args({k: v for k, v in role.args.items() if k not in dropped})
    args += [[a] for a in role.extra_args]

    env: dict[str, str] = {"HEAD_NODE_IP": "$HEAD_NODE_IP"}
    if dynamo or not v2:
        env["ETCD_ENDPOINTS"] = "http://$INFRA_IP:2379"
        if has_nats:
            env["NATS_SERVER"] = "nats://$INFRA_IP:4222"
        env["DYN_SYSTEM_PORT"] = str(ports.sys)
        env["DYN_REQUEST_PLANE"] = recipe.request_plane
        env["DYN_SKIP_SGLANG_LOG_FORMATTING"] = "1"
        env["DYN_LOG"] = DYN_LOG
    ports.sys += 1
    role_env = {k: worker_env_template(k, v) for k, v in role.env.items()}
    if simulate_env:
        role_env.update(simulate_env)
    if v2:
        merged_env = {**role.env, **recipe.environment}
        if str(merged_env.get("SGLANG_CUDA_COREDUMP", "")).lower() not in (
            "1",
            "true",
            "yes",
            "on",
        ):
            role_env.setdefault("SGLANG_CUDA_COREDUMP_BEFORE_CRASH", "0")
        role_env.setdefault("SGLANG_PYSPY_DUMP_BEFORE_CRASH", "0")
    env.update(role_env)
    env.update({k: worker_env_template(k, v) for k, v in recipe.environment.items()})
    pinning = gpu_pinning(role, recipe.gpus_per_node)
    if role.gpus < recipe.gpus_per_node:
        env["CUDA_VISIBLE_DEVICES"] = _devices(role, w, recipe.gpus_per_node)
    if mooncake:
        env.setdefault("MOONCAKE_LOCAL_HOSTNAME", ip)
        env["MOONCAKE_MASTER"] = "$INFRA_IP:8700"
        env["MOONCAKE_TE_META_DATA_SERVER"] = "http://$INFRA_IP:8701/metadata"
    block: Block = {
        "kind": "worker",
        "role": role.name,
        "workers": role.workers,
        "nodes_per_worker": npw,
    }
    if pinning:
        block["gpu_pinning"] = pinning
    block["cmd"] = WORKER_MODULE["dynamo"] if dynamo else DIRECT_MODULE
    block["env"] = {k: env[k] for k in sorted(env)}
    block["args"] = args
    return block


def nginx_block() -> Block:
    """The nginx srt-slurm stands up in front of several frontends, reading the ``nginx.conf``
    it writes from templates/nginx.conf.j2."""
    return {"kind": "nginx", "cmd": "nginx -c nginx.conf -g daemon off;", "env": {}, "args": []}


def _frontend_blocks(
    recipe: Recipe,
    leaders: dict[str, list[tuple[str, int, int | None]]],
    dynamo: bool,
    has_nats: bool,
    v2: bool,
    layer: FrontendTopology,
) -> list[Block]:
    fe = recipe.frontend
    if fe.type == "sglang":
        return []
    port = str(layer.port)
    out: list[Block] = []
    if layer.nginx:
        out.append(nginx_block())
    count = layer.count
    if fe.type == "sglang-router":
        args: list[list[str]] = []
        if recipe.disagg:
            args.append(["--pd-disaggregation"])
            for ip, http, bootstrap in leaders.get("prefill", []):
                args.append(["--prefill", f"http://{ip}:{http}", str(bootstrap)])
            for ip, http, _ in leaders.get("decode", []):
                args.append(["--decode", f"http://{ip}:{http}"])
        else:
            args.append(
                [
                    "--worker-urls",
                    *(f"http://{ip}:{http}" for ip, http, _ in leaders.get("agg", [])),
                ]
            )
        args += [["--host", "0.0.0.0"], ["--port", port]]
        keys = {str(k).replace("_", "-") for k in fe.args}
        if v2:
            if "prometheus-port" not in keys:
                args.append(["--prometheus-port", "29000"])
            if "prometheus-host" not in keys:
                args.append(["--prometheus-host", "0.0.0.0"])
        args += render_args(fe.args, sort=False, dashes=v2, lists="repeat" if v2 else "values")
        env: dict[str, str] = {**recipe.environment, **fe.env}
        out.append(
            {
                "kind": "sglang-router",
                "count": count,
                "cmd": ROUTER_CMD,
                "env": {k: env[k] for k in sorted(env)},
                "args": args,
            }
        )
    elif fe.type == "dynamo":
        env = {"ETCD_ENDPOINTS": "http://$INFRA_IP:2379"}
        if has_nats:
            env["NATS_SERVER"] = "nats://$INFRA_IP:4222"
        env["DYN_REQUEST_PLANE"] = recipe.request_plane
        env["DYN_SKIP_SGLANG_LOG_FORMATTING"] = "1"
        env.update(recipe.environment)
        env.update(fe.env)
        args = [["--http-port", port], *render_args(fe.args, sort=False, dashes=False)]
        out.append(
            {
                "kind": "dynamo-frontend",
                "count": count,
                "cmd": FRONTEND_CMD,
                "env": {k: env[k] for k in sorted(env)},
                "args": args,
            }
        )
    else:
        raise SyncError(
            f"frontend.type {js(fe.type)} is not rendered "
            "(expected sglang, sglang-router or dynamo)"
        )
    return out
