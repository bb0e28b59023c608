"""srt-slurm services (etcd, NATS, Mooncake master, Mooncake stores) -> raw blocks.

The rules, in srt-slurm's own terms (summarised in docs/srt-slurm-rules.md, Services):

* Which services run: the *implied* ones first, then the declared ``services:`` entries in
  declaration order. A declared entry with the same ``name`` as an implied one takes its place;
  ``enabled: false`` removes it; ``external: ...`` means an instance already running elsewhere
  (nothing is launched). srt-slurm 2.x implies etcd for a Dynamo frontend, NATS only when a
  Dynamo plane uses it or a NATS payload limit is set, and a Mooncake master when the (internal)
  ``backend.mooncake_kv_store`` is set, which schema 2 only does for a declared master. 1.x ran
  etcd and NATS for every SGLang job.
* Schema 1 ``infra.etcd_nats_dedicated_node`` / ``infra.nats_max_payload_mb`` mean what
  ``placement.node: dedicated`` / ``options.max_payload_mb`` mean on the declared etcd/NATS.
* Command lines are built by the kind and get the recipe's ``args`` appended verbatim (no
  merging, so a repeated flag runs twice); a recipe ``command`` replaces the kind's default.
* Service env: discovery addresses (not for etcd/NATS), the kind's defaults, the recipe's
  ``env`` (templated), then values the kind forces.
* One instance per distinct node of the placement: ``decode`` places one per decode node.

Cluster facts are the renderer's ``$TOKENS`` (``$INFRA_IP``, ``$NODE_IP``, ``<node>``, ...):
srt-slurm fills them per instance, so raw blocks stay comparable with any run.

Where each rule was read: 1.x at NVIDIA/srt-slurm v1.0.38 (``cli/do_sweep.py``,
``cli/setup_head.py``); the services layer of 2.x in NVIDIA/srt-slurm's
``src/srtctl/services/implicit.py`` @17c4ece9 (implied services, their order, the override by
name and ``enabled: false``, the infra placement, ``nats_implied_reasons``); the kinds'
command lines and env as ../shared/docs/srt-slurm.md sections 7 and 9 give them for 2.x.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from syncer import shellwords
from syncer.errors import SyncError
from syncer.model import SERVICE_KINDS, Block, group_argv
from syncer.wording import js

# Kinds srt-slurm knows: model.SERVICE_KINDS have a cookbook block; these others run beside the
# deployment (exporters, GPU memory service, ...) and have nothing a user would copy.
OTHER_KINDS = (
    "generic",
    "mooncake-donor",
    "lmcache-server",
    "gms",
    "ray",
    "dcgm-exporter",
    "node-exporter",
    "process-exporter",
)
PLACEMENTS = ("head", "infra", "dedicated", "prefill", "decode", "agg", "workers", "all", "compute")
ETCD_PORT, NATS_PORT = 2379, 4222  # ports.py @v1.0.38 (ETCD_CLIENT_PORT, NATS_PORT)
# ports.py @v1.0.38: MOONCAKE_MASTER_PORT, MOONCAKE_HTTP_METADATA_PORT, MOONCAKE_METRICS_PORT
MASTER_PORT, METADATA_PORT, MASTER_METRICS_PORT = 8700, 8701, 8702
STORE_CMD = "python -m mooncake.mooncake_store_service"
NATS_CONF = "/tmp/nats.conf"

# Service templates srt-slurm expands by plain text replacement (known names only; other
# braces, e.g. JSON, are left alone), written as the renderer's tokens.
SERVICE_TEMPLATES = {
    "{node}": "<node>",
    "{node_ip}": "$NODE_IP",
    "{head_node}": "<head-node>",
    "{head_ip}": "$HEAD_NODE_IP",
    "{infra_node}": "<infra-node>",
    "{infra_ip}": "$INFRA_IP",
    "{master_port}": str(MASTER_PORT),
    "{metadata_port}": str(METADATA_PORT),
    "{node_id}": "$NODE_ID",
    "{index}": "$INSTANCE_INDEX",
}


@dataclass
class Service:
    """One effective service (declared or implied)."""

    name: str
    type: str
    placement: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    command: list[str] | None = None
    preamble: str | None = None
    readiness_port: int | None = None
    external: bool = False  # a running instance elsewhere: srt-slurm launches nothing


def expand_service_templates(value: str, role: str) -> str:
    """srt-slurm's service templating of one string (args, env values, preamble)."""
    for name, token in SERVICE_TEMPLATES.items():
        value = value.replace(name, token)
    return value.replace("{role}", role)


def _strings(value: Any, where: str, path: str | None) -> list[str]:
    """A service ``args``/``command`` list: srt-slurm validates every item as a non-blank
    string (a YAML int such as ``8800`` is a load error, not a port)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise SyncError(f"{where} must be a list of strings, got {js(value)}", path=path)
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise SyncError(
                f"{where}: every item must be a non-empty string, got {js(item)}; quote it",
                path=path,
            )
    return list(value)


def _env(value: Any, where: str, path: str | None) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SyncError(f"{where} must be a mapping of strings", path=path)
    for key, val in value.items():
        if not isinstance(val, str):
            raise SyncError(
                f"{where}.{key}: Not a valid string (got {js(val)}); quote it", path=path
            )
    return {str(k): v for k, v in value.items()}


def _readiness_port(entry: dict[str, Any], where: str, path: str | None) -> int | None:
    ready = entry.get("readiness")
    if ready is None:
        return None
    if not isinstance(ready, dict):
        raise SyncError(f"{where}.readiness must be a mapping", path=path)
    port = ready.get("port")
    for probe in ("tcp", "http"):
        if port is None and isinstance(ready.get(probe), dict):
            port = ready[probe].get("port")
    if port is None:
        return None
    if isinstance(port, bool) or not isinstance(port, int):
        raise SyncError(f"{where}.readiness port must be an integer, got {js(port)}", path=path)
    return port


def infra_node_dedicated(raw: dict[str, Any], path: str | None = None) -> bool:
    """Whether etcd and NATS get a node of their own (schema 1 ``infra.etcd_nats_dedicated_node``,
    or a declared etcd/NATS service placed on the ``dedicated`` node)."""
    infra = raw.get("infra") or {}
    if not isinstance(infra, dict):
        raise SyncError("infra must be a mapping", path=path)
    return _dedicated(infra, {e.get("type", "generic"): e for e in _declared(raw, path)})


def _dedicated(infra: dict[str, Any], by_type: dict[str, dict[str, Any]]) -> bool:
    return bool(infra.get("etcd_nats_dedicated_node")) or any(
        isinstance(by_type.get(t, {}).get("placement"), dict)
        and by_type[t]["placement"].get("node") == "dedicated"
        for t in ("etcd", "nats")
    )


def _declared(raw: dict[str, Any], path: str | None) -> list[dict[str, Any]]:
    services = raw.get("services")
    if services is None:
        return []
    if not isinstance(services, list):
        raise SyncError("services must be a list of service entries", path=path)
    out = []
    for i, entry in enumerate(services):
        if not isinstance(entry, dict):
            raise SyncError(f"services[{i}] must be a mapping, got {js(entry)}", path=path)
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip():
            raise SyncError(f"services[{i}] needs a non-empty name", path=path)
        kind = entry.get("type", "generic")
        if kind not in SERVICE_KINDS and kind not in OTHER_KINDS:
            raise SyncError(
                f"services[{i}] ({name}): unknown service type {js(kind)}; expected one of "
                f"{', '.join(SERVICE_KINDS + OTHER_KINDS)}",
                path=path,
            )
        out.append(entry)
    names = [e["name"] for e in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise SyncError(f"services: duplicate service name {js(dupes[0])}", path=path)
    return out


def _placement(entry: dict[str, Any], default: str, where: str, path: str | None) -> str:
    placement = entry.get("placement")
    if placement is None:
        return default
    if not isinstance(placement, dict):
        raise SyncError(f"{where}.placement must be a mapping", path=path)
    node = placement.get("node", default)
    if node not in PLACEMENTS:
        raise SyncError(
            f"{where}.placement.node {js(node)}: expected one of {', '.join(PLACEMENTS)}", path=path
        )
    return str(node)


def _payload(value: Any, where: str, path: str | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise SyncError(f"{where} must be a positive integer (MiB), got {js(value)}", path=path)
    return value


def effective_services(
    raw: dict[str, Any],
    *,
    frontend: str,
    request_plane: str,
    version: str,
    path: str | None = None,
) -> list[Service]:
    """The services srt-slurm starts for one variant, in its start order. Errors name
    ``path`` when given (the renderer adds the recipe file and point otherwise)."""
    declared = _declared(raw, path)
    infra = raw.get("infra") or {}
    if not isinstance(infra, dict):
        raise SyncError("infra must be a mapping", path=path)
    by_type = {e.get("type", "generic"): e for e in declared}
    dedicated = _dedicated(infra, by_type)
    nats_options = by_type.get("nats", {}).get("options") or {}
    if not isinstance(nats_options, dict):
        raise SyncError("services (nats).options must be a mapping", path=path)
    payload = _payload(
        nats_options.get("max_payload_mb", infra.get("nats_max_payload_mb")),
        "nats max_payload_mb",
        path,
    )
    infra_place = "dedicated" if dedicated else "infra"
    implied = _implied(
        raw,
        frontend=frontend,
        request_plane=request_plane,
        version=version,
        place=infra_place,
        payload=payload,
        implies_nats=infra.get("nats_max_payload_mb") is not None,
        path=path,
    )

    out: list[Service] = []
    used: set[str] = set()
    for svc in implied:
        entry = next((e for e in declared if e["name"] == svc.name), None)
        if entry is None:
            out.append(svc)
            continue
        used.add(svc.name)
        if entry.get("enabled", True) is not False:
            out.append(_service(entry, infra_place, payload, path))
    for entry in declared:
        if entry["name"] in used or entry.get("enabled", True) is False:
            continue
        out.append(_service(entry, infra_place, payload, path))
    launched = [s for s in out if s.type in SERVICE_KINDS]
    if any(s.type == "mooncake-store" for s in launched) and not any(
        s.type == "mooncake-master" for s in out
    ):
        raise SyncError("a mooncake-store service needs a mooncake-master service", path=path)
    if sum(s.type == "mooncake-master" for s in out) > 1:
        raise SyncError("at most one mooncake-master service", path=path)
    return out


def _implied(
    raw: dict[str, Any],
    *,
    frontend: str,
    request_plane: str,
    version: str,
    place: str,
    payload: int | None,
    implies_nats: bool,
    path: str | None,
) -> list[Service]:
    """The services srt-slurm starts without the recipe declaring them: etcd and NATS for the
    frontend (every job under 1.x), the Mooncake master for a schema-1 KV store."""
    dynamo = raw.get("dynamo") if isinstance(raw.get("dynamo"), dict) else {}
    event_plane = str((dynamo or {}).get("event_plane", ""))
    backend = raw.get("backend") if isinstance(raw.get("backend"), dict) else {}
    kv_store = (backend or {}).get("mooncake_kv_store")

    nats_options = {"max_payload_mb": payload} if payload else {}
    implied: list[Service] = []
    if not version.startswith("2"):
        # 1.x starts etcd and NATS for every frontend but trtllm_serve and vllm, so for every
        # SGLang job (cli/do_sweep.py lines 676-682 @v1.0.38, start_head_infrastructure), on the
        # infra node (the dedicated one when set, core/runtime.py)
        implied.append(Service("etcd", "etcd", place))
        implied.append(Service("nats", "nats", place, options=nats_options))
    elif frontend == "dynamo":
        # 2.x: the Dynamo frontend implies etcd; NATS only when a Dynamo plane runs over it or
        # the schema-1 infra.nats_max_payload_mb is set (nats_implied_reasons in
        # services/implicit.py @NVIDIA/srt-slurm 17c4ece9); a declared NATS is only declared
        implied.append(Service("etcd", "etcd", place))
        if "nats" in (request_plane, event_plane) or implies_nats:
            implied.append(Service("nats", "nats", place, options=nats_options))
    if isinstance(kv_store, dict):
        # backend.mooncake_kv_store implies the master, on the infra placement, with the
        # recipe's master_extra_args after the defaults (_build_mooncake_master_command in
        # cli/do_sweep.py lines 64-78 @v1.0.38; implied_services in services/implicit.py)
        extra = kv_store.get("master_extra_args")
        if isinstance(extra, str):
            extra = shellwords.split(extra)  # srt-slurm: shlex.split, which this equals
        implied.append(
            Service(
                "mooncake-master",
                "mooncake-master",
                place,
                args=_strings(extra, "backend.mooncake_kv_store.master_extra_args", path),
            )
        )
    return implied


def _service(
    entry: dict[str, Any], infra_place: str, payload: int | None, path: str | None
) -> Service:
    name, kind = entry["name"], entry.get("type", "generic")
    where = f"services ({name})"
    infra_kind = kind in ("etcd", "nats", "mooncake-master")
    placement = _placement(entry, infra_place if infra_kind else "head", where, path)
    if infra_kind and placement in ("infra", "dedicated"):
        placement = infra_place  # they share the one infra node
    options = entry.get("options") or {}
    if not isinstance(options, dict):
        raise SyncError(f"{where}.options must be a mapping", path=path)
    if kind == "nats":
        options = {**options, **({"max_payload_mb": payload} if payload else {})}
    preamble = entry.get("preamble")
    if preamble is not None and not isinstance(preamble, str):
        raise SyncError(f"{where}.preamble must be a string (shell lines)", path=path)
    return Service(
        name=name,
        type=kind,
        placement=placement,
        args=_strings(entry.get("args"), f"{where}.args", path),
        env=_env(entry.get("env"), f"{where}.env", path),
        options=options,
        command=_strings(entry.get("command"), f"{where}.command", path) or None,
        preamble=preamble,
        readiness_port=_readiness_port(entry, where, path),
        external=entry.get("external") is not None,
    )


def nats_conf(payload_mb: int) -> str:
    """The file srt-slurm writes for a NATS payload limit (JetStream kept in /tmp/nats):
    ``start_nats`` in cli/setup_head.py lines 150-158 @v1.0.38."""
    return f'max_payload: {payload_mb * 1024 * 1024}\njetstream {{ store_dir: "/tmp/nats" }}\n'


def service_blocks(
    services: list[Service], *, role_nodes: dict[str, int], head_nodes: int = 1
) -> list[Block]:
    """Raw blocks of the launched services (kinds without a cookbook block are skipped).

    ``role_nodes``: distinct nodes each worker role occupies (a store placed on ``decode``
    runs once per decode node)."""
    nats = any(s.type == "nats" for s in services)
    out: list[Block] = []
    for svc in services:
        if svc.type not in SERVICE_KINDS or svc.external:
            continue
        out.append(_block(svc, nats=nats, role_nodes=role_nodes, head_nodes=head_nodes))
    return out


def _count(svc: Service, role_nodes: dict[str, int], head_nodes: int) -> int:
    if svc.placement in role_nodes:
        return role_nodes[svc.placement]
    if svc.placement in ("workers", "compute"):
        return sum(role_nodes.values())
    if svc.placement == "all":
        return sum(role_nodes.values()) + head_nodes
    return 1


def _block(svc: Service, *, nats: bool, role_nodes: dict[str, int], head_nodes: int) -> Block:
    role = svc.placement

    def t(value: str) -> str:
        return expand_service_templates(value, role)

    preamble: list[str] = []
    env: dict[str, str] = {}
    if svc.type not in ("etcd", "nats"):
        # discovery addresses, whatever the frontend; NATS only when it runs
        env["ETCD_ENDPOINTS"] = f"http://$INFRA_IP:{ETCD_PORT}"
        if nats:
            env["NATS_SERVER"] = f"nats://$INFRA_IP:{NATS_PORT}"
    ports: list[str] | None = None
    # etcd and NATS argv and their fresh data dirs: start_etcd / start_nats in
    # cli/setup_head.py lines 126-219 @v1.0.38 (binaries from the /configs mount); the master's
    # defaults: cli/do_sweep.py lines 64-78 @v1.0.38
    if svc.type == "etcd":
        default = [
            "/configs/etcd",
            "--data-dir",
            "/tmp/etcd",
            "--listen-client-urls",
            f"http://0.0.0.0:{ETCD_PORT}",
            "--advertise-client-urls",
            f"http://$INFRA_IP:{ETCD_PORT}",
        ]
        preamble.append("rm -rf /tmp/etcd && mkdir -p /tmp/etcd")
    elif svc.type == "nats":
        preamble.append("rm -rf /tmp/nats && mkdir -p /tmp/nats")
        payload = svc.options.get("max_payload_mb")
        if payload:
            default = ["/configs/nats-server", "-c", NATS_CONF]
            preamble.append(f"printf %s {shlex.quote(nats_conf(int(payload)))} > {NATS_CONF}")
        else:
            default = ["/configs/nats-server", "-js", "-sd", "/tmp/nats"]
    elif svc.type == "mooncake-master":
        default = [
            "mooncake_master",
            f"--port={MASTER_PORT}",
            "--enable_http_metadata_server=true",
            f"--http_metadata_server_port={METADATA_PORT}",
            "--eviction_high_watermark_ratio=0.9",
            "--default_kv_lease_ttl=10000",
            "--rpc_thread_num=16",
            "--enable_metric_reporting=true",
            f"--metrics_port={MASTER_METRICS_PORT}",
        ]
        ports = [str(MASTER_PORT)]
    else:  # mooncake-store
        default = STORE_CMD.split()
        env["MOONCAKE_LOCAL_HOSTNAME"] = "$NODE_IP"
    argv = [*(svc.command or default), *svc.args]
    env.update({k: t(v) for k, v in svc.env.items()})
    if svc.type == "mooncake-store":
        # forced by the kind: a recipe value cannot point a store elsewhere
        env["MOONCAKE_MASTER"] = f"$INFRA_IP:{MASTER_PORT}"
        env["MOONCAKE_TE_META_DATA_SERVER"] = f"http://$INFRA_IP:{METADATA_PORT}/metadata"
        port = svc.readiness_port or _port_arg(svc.args)
        ports = [str(port)] if port is not None else None
    if svc.preamble:
        preamble += [t(line) for line in svc.preamble.splitlines() if line.strip()]
    cmd, args = split_service_argv([t(a) for a in argv])
    block: Block = {"kind": svc.type, "count_nodes": _count(svc, role_nodes, head_nodes)}
    if ports:
        block["ports"] = ports
    if preamble:
        block["preamble"] = preamble
    block["cmd"] = cmd
    block["env"] = {k: env[k] for k in sorted(env)}
    block["args"] = args
    block["service"] = svc.name
    return block


def split_service_argv(argv: list[str]) -> tuple[str, list[list[str]]]:
    """A service argv -> ``(cmd, args)``: ``python -m <module>`` or the binary, then the
    tokens grouped as given (``--flag=value`` kept whole, ``-js`` style flags recognised).
    The renderer and the log reader both use it, so the two compare token for token."""
    n = 3 if len(argv) >= 3 and argv[1] == "-m" and argv[0].startswith("python") else 1
    return " ".join(argv[:n]), group_argv(argv[n:], split_equals=False, short=True)


def _port_arg(args: list[str]) -> int | None:
    for i, tok in enumerate(args):
        value = None
        if tok == "--port" and i + 1 < len(args):
            value = args[i + 1]
        elif tok.startswith("--port="):
            value = tok.partition("=")[2]
        if value is not None and value.isascii() and value.isdigit():
            return int(value)
    return None
