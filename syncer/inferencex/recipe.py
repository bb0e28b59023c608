"""srt-slurm recipes read the way srt-slurm reads them.

Pipeline (srt-slurm 2.x; summarised in docs/srt-slurm-rules.md, Recipes): PyYAML
``safe_load`` (anchors, ``<<`` merges, YAML 1.1 scalars) -> shared block merged *under* the
fragment (InferenceX fragment era) -> variant expansion (``base`` + ``override_*`` /
``zip_override_*``, deep merge where mappings recurse, lists and scalars replace and ``null``
deletes: ``recipe_bundles``) -> launcher bindings -> normalisation of schema 2
``engine``/``roles`` and schema 1 ``backend``/``resources`` into one :class:`Recipe`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from syncer.errors import SyncError
from syncer.flags import SIZE_ARGS
from syncer.inferencex import yamlsafe
from syncer.wording import closest, js, kind

ROLE_MODES = {"agg": "aggregated", "prefill": "prefill", "decode": "decode"}
ROLE_KEYS = {
    "nodes",
    "workers",
    "gpus",
    "env",
    "args",
    "extra_args",
    "engine",
    "kv_events",
    "sidecar",
    "critical",
    "container",
}


# ---- normalised view -------------------------------------------------------------------


@dataclass
class Role:
    """One worker role of a recipe (agg, prefill or decode) and its resources."""

    name: str  # agg | prefill | decode
    nodes: int
    workers: int
    gpus: int  # per worker
    args: dict[str, object]
    env: dict[str, str]
    kv_events: object = None
    extra_args: list[str] = field(default_factory=list)

    @property
    def nodes_per_worker(self) -> int:
        return max(1, self.nodes // self.workers) if self.nodes else 1


@dataclass
class Frontend:
    """A recipe's frontend section: its type, args and env."""

    type: str
    args: dict[str, object]
    env: dict[str, str]
    multiple: bool = False
    count: int = 1


@dataclass
class Recipe:
    """One variant, normalised: what rendering needs, whatever the schema."""

    schema: int
    name: str
    engine: str
    roles: dict[str, Role]
    frontend: Frontend
    services: list[dict[str, object]]
    environment: dict[str, str]
    model_path: str
    container: str
    gpus_per_node: int
    request_plane: str
    mooncake_master: bool
    raw: dict[str, object]

    @property
    def disagg(self) -> bool:
        return "prefill" in self.roles

    @property
    def total_nodes(self) -> int:
        return sum(role.nodes for role in self.roles.values())


# Draft lengths: the golden acceptance length is looked up by them.
_DRAFT_LENGTH = re.compile(r"speculative[-_](num[-_]steps|[a-z0-9]+[-_]block[-_]size)")


def _sizes_checked(args: dict[str, object], where: str, path: str) -> dict[str, object]:
    for key, value in args.items():
        if value is None or not (key in SIZE_ARGS or _DRAFT_LENGTH.fullmatch(str(key))):
            continue
        digits = isinstance(value, str) and value.isascii() and value.isdigit()
        whole = isinstance(value, int) or digits
        if isinstance(value, bool) or not whole:
            raise SyncError(f"{where}.{key} must be an integer, got {js(value)}", path=path)
    return args


# The counts of a recipe bounded far above any real cluster (2, 4 or 8 GPUs a node, 17 nodes a
# role): every worker, node and frontend is a step of rendering (30,000,000 workers in a 10 KB
# recipe never finished), and a node of no GPUs dropped every worker's CUDA_VISIBLE_DEVICES.
MAX_GPUS_PER_NODE = 64
MAX_NODES = 1024
MAX_WORKERS = 1024


def _count(
    value: object, what: str, path: str, places: list[list[str]], least: int, most: int
) -> int:
    """``value`` when it is an integer from ``least`` to ``most``; else refused, naming the line
    of the first of ``places`` (key paths) the recipe file writes the key at."""
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
        lines = (yamlsafe.written_line(path, p) for p in places if path != "<recipe>")
        raise SyncError(
            f"{what} must be an integer from {least} to {most}, got {js(value)}",
            path=path,
            line=next((line for line in lines if line is not None), None),
        )
    return value


def _mapping(value: object, where: str, path: str) -> dict[str, object]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SyncError(
            f"{where} must be a mapping of flag names to values, got {kind(value)}",
            path=path,
        )
    return dict(value)


def _env(value: object, where: str, path: str, dotted: list[str]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SyncError(f"{where} must be a mapping of strings", path=path)
    out: dict[str, str] = {}
    for key, val in value.items():
        if not isinstance(val, str):
            # srt-slurm's schema validation (marshmallow fields.Str) rejects a bare YAML
            # int/bool here: "Not a valid string."
            raise SyncError(
                f"{where}.{key}: Not a valid string (got {js(val)}); quote it",
                path=path,
                line=yamlsafe.key_line(path, [*dotted, str(key)]) if path != "<recipe>" else None,
            )
        out[str(key)] = val
    return out


SECTIONS = ("model", "resources", "frontend", "dynamo", "benchmark", "backend")


def check_sections(variant: dict[str, Any], path: str) -> None:
    """The variant's top-level sections are mappings (or absent): read before anything else,
    by the launcher's bindings and by :func:`normalise`."""
    for section in SECTIONS:
        if not isinstance(variant.get(section) or {}, dict):
            raise SyncError(f"{section} must be a mapping, got {js(variant[section])}", path=path)
    bench_env = (variant.get("benchmark") or {}).get("env")
    if not isinstance(bench_env or {}, dict):
        raise SyncError(f"benchmark.env must be a mapping, got {js(bench_env)}", path=path)


def normalise(variant: dict[str, Any], *, path: str = "<recipe>", selector: str = "") -> Recipe:
    """Fold schema 2 ``engine``/``roles`` or schema 1 ``backend``/``resources`` into a Recipe."""
    schema = variant.get("schema", 1)
    if schema not in (1, 2):
        raise SyncError(f"unsupported recipe schema {js(schema)} (expected 1 or 2)", path=path)
    # Where a variant's env came from, for error messages: override files nest it under base.
    base_path = (
        ["base"]
        if selector.startswith(("override_", "zip_override_")) or selector == "base"
        else []
    )
    # Where a count may be written: the override itself, then what it is merged over.
    roots = [[selector], base_path] if selector.startswith("override_") else [base_path]
    check_sections(variant, path)
    resources = variant.get("resources") or {}
    gpus_per_node = resources.get("gpus_per_node")
    if gpus_per_node is None:
        raise SyncError("resources.gpus_per_node must be set (an integer)", path=path)
    gpus_per_node = _count(
        gpus_per_node,
        "resources.gpus_per_node",
        path,
        [[*r, "resources", "gpus_per_node"] for r in roots],
        1,
        MAX_GPUS_PER_NODE,
    )
    if schema == 2 or "roles" in variant:
        engine, roles = _schema2_roles(variant, gpus_per_node, path, base_path, roots)
    else:
        engine, roles = _schema1_roles(variant, gpus_per_node, path, base_path, roots)
    _check_roles(engine, roles, path)
    services = _services(variant)
    model = variant.get("model") or {}
    model_path = model.get("path")
    if not isinstance(model_path, str):
        raise SyncError("model.path is not set (the master config binds it)", path=path)
    dynamo = variant.get("dynamo") or {}
    return Recipe(
        schema=schema,
        name=str(variant.get("name", "")),
        engine=engine,
        roles=roles,
        frontend=_frontend(variant.get("frontend") or {}, schema, path, base_path, roots),
        services=services,
        environment=_env(
            variant.get("environment"), "environment", path, [*base_path, "environment"]
        ),
        model_path=model_path,
        container=str(model.get("container", "")),
        gpus_per_node=gpus_per_node,
        request_plane=str(dynamo.get("request_plane", "tcp")),
        # a declared master, or srt-slurm's schema-1 field that implies one
        mooncake_master=any(s.get("type") in ("mooncake", "mooncake-master") for s in services)
        or isinstance((variant.get("backend") or {}).get("mooncake_kv_store"), dict),
        raw=variant,
    )


def _check_roles(engine: str, roles: dict[str, Role], path: str) -> None:
    """SGLang workers, in an agg role or in prefill and decode roles."""
    if engine != "sglang":
        raise SyncError(f"engine {js(engine)} is not rendered (only sglang workers are)", path=path)
    if "agg" in roles and len(roles) > 1:
        raise SyncError("a recipe has either an agg role or prefill + decode roles", path=path)
    if ("prefill" in roles) != ("decode" in roles):
        raise SyncError("disaggregated recipes need both prefill and decode roles", path=path)


def _role_counts(
    nodes: object,
    workers: object,
    gpus: object,
    gpus_per_node: int,
    names: tuple[str, str, str],
    path: str,
    where: str,
    under: list[list[str]],
) -> tuple[int, int, int]:
    """A role's nodes, workers and GPUs per worker (as given, else its nodes' GPUs shared by
    its workers), each bounded; ``names``: the three keys as the recipe spells them, under
    ``where`` (written under one of the key paths ``under``)."""
    node_key, worker_key, gpu_key = names

    def places(key: str) -> list[list[str]]:
        return [[*u, key] for u in under]

    n = _count(nodes, f"{where}.{node_key}", path, places(node_key), 0, MAX_NODES)
    w = _count(workers, f"{where}.{worker_key}", path, places(worker_key), 1, MAX_WORKERS)
    if gpus is None:
        return n, w, (n * gpus_per_node) // w
    most = gpus_per_node * MAX_NODES
    return n, w, _count(gpus, f"{where}.{gpu_key}", path, places(gpu_key), 1, most)


def _schema2_roles(
    variant: dict[str, Any],
    gpus_per_node: int,
    path: str,
    base_path: list[str],
    roots: list[list[str]],
) -> tuple[str, dict[str, Role]]:
    """Schema 2: ``engine`` and ``roles.<agg|prefill|decode>.{nodes,workers,gpus,args,env}``."""
    engine_raw = variant.get("engine", "sglang")
    engine = engine_raw.get("type") if isinstance(engine_raw, dict) else engine_raw
    role_map = variant.get("roles")
    if not isinstance(role_map, dict) or not role_map:
        raise SyncError("schema 2 recipe needs a roles mapping", path=path)
    if "backend" in variant:
        raise SyncError("roles: cannot be mixed with the schema 1 backend: section", path=path)
    roles: dict[str, Role] = {}
    for rname, spec in role_map.items():
        if rname not in ROLE_MODES:
            raise SyncError(f"unknown role {js(rname)}; expected agg, prefill or decode", path=path)
        spec = spec or {}
        if not isinstance(spec, dict):
            raise SyncError(f"roles.{rname} must be a mapping, got {js(spec)}", path=path)
        unknown = set(spec) - ROLE_KEYS
        if unknown:
            close = closest(sorted(unknown)[0], sorted(ROLE_KEYS), n=3)
            raise SyncError(
                f"roles.{rname}: unknown key {js(sorted(unknown)[0])}; "
                f"closest: {', '.join(close) or '-'}",
                path=path,
            )
        nodes = spec.get("nodes", 1)
        if nodes == "colocate":
            nodes = 0
        nodes, workers, gpus = _role_counts(
            nodes,
            spec.get("workers", 1),
            spec.get("gpus"),
            gpus_per_node,
            ("nodes", "workers", "gpus"),
            path,
            f"roles.{rname}",
            [[*r, "roles", rname] for r in roots],
        )
        roles[rname] = Role(
            name=rname,
            nodes=nodes,
            workers=workers,
            gpus=gpus,
            args=_sizes_checked(
                _mapping(spec.get("args"), f"roles.{rname}.args", path),
                f"roles.{rname}.args",
                path,
            ),
            env=_env(
                spec.get("env"), f"roles.{rname}.env", path, [*base_path, "roles", rname, "env"]
            ),
            kv_events=_kv_events_value(spec.get("kv_events"), f"roles.{rname}.kv_events", path),
            extra_args=list(spec.get("extra_args") or []),
        )
    return str(engine), roles


def _schema1_roles(
    variant: dict[str, Any],
    gpus_per_node: int,
    path: str,
    base_path: list[str],
    roots: list[list[str]],
) -> tuple[str, dict[str, Role]]:
    """Schema 1: ``backend.<engine>_config.<mode>`` args, ``backend.<mode>_environment`` and
    the ``resources.<role>_nodes/_workers`` / ``gpus_per_<role>`` counts."""
    resources = variant.get("resources") or {}
    backend = variant.get("backend") or {}
    engine = backend.get("type", "sglang")
    config = backend.get(f"{engine}_config") or {}
    roles: dict[str, Role] = {}
    for rname, mode in ROLE_MODES.items():
        if (
            mode not in config
            and not resources.get(f"{rname}_workers")
            and not resources.get(f"{mode}_workers")
        ):
            continue
        prefix = "agg" if rname == "agg" else rname
        nodes, workers, gpus = _role_counts(
            resources.get(f"{prefix}_nodes", 1),
            resources.get(f"{prefix}_workers", 1),
            resources.get(f"gpus_per_{prefix}"),
            gpus_per_node,
            (f"{prefix}_nodes", f"{prefix}_workers", f"gpus_per_{prefix}"),
            path,
            "resources",
            [[*r, "resources"] for r in roots],
        )
        roles[rname] = Role(
            name=rname,
            nodes=nodes,
            workers=workers,
            gpus=gpus,
            args=_sizes_checked(
                _mapping(config.get(mode), f"backend.{engine}_config.{mode}", path),
                f"backend.{engine}_config.{mode}",
                path,
            ),
            env=_env(
                backend.get(f"{mode}_environment"),
                f"backend.{mode}_environment",
                path,
                [*base_path, "backend", f"{mode}_environment"],
            ),
            kv_events=kv_events_for_mode(backend.get("kv_events_config"), mode, path),
        )
    if not roles:
        raise SyncError("recipe has no workers (no roles: and no backend config)", path=path)
    return str(engine), roles


def kv_events_for_mode(config: object, mode: str, path: str) -> object:
    """A role's KV-events setting from ``backend.kv_events_config``, as srt-slurm reads it:
    ``true`` turns events on for prefill and decode (never for aggregated workers), a mapping
    is per mode (``aggregated``, ``prefill``, ``decode``; each ``true`` or a mapping of
    publisher overrides). Anything else is refused."""
    if config is None or config is False:
        return None
    if config is True:
        return True if mode in ("prefill", "decode") else None
    if not isinstance(config, dict):
        raise SyncError(
            f"backend.kv_events_config must be true or a mapping per mode, got {js(config)}",
            path=path,
        )
    return _kv_events_value(config.get(mode), f"backend.kv_events_config.{mode}", path)


def _kv_events_value(value: Any, where: str, path: str) -> Any:
    """One mode's KV-events value: None (off), True (srt-slurm's defaults) or the publisher
    overrides (an empty mapping is the defaults too: srt-slurm merges it over them)."""
    if value is None or value is False:
        return None
    if value is True:
        return True
    if isinstance(value, dict):
        return value or True
    raise SyncError(f"{where} must be true or a mapping, got {js(value)}", path=path)


def _frontend(
    raw: dict[str, Any], schema: int, path: str, base_path: list[str], roots: list[list[str]]
) -> Frontend:
    ftype = raw.get("type", "dynamo")  # srtctl defaults to Dynamo frontends
    if schema == 1 and ftype == "sglang":
        ftype = "sglang-router"  # 2.x renames the schema-1 router type at load
    if raw.get("use_sglang_router") and ftype == "dynamo":
        ftype = "sglang-router"
    multiple = bool(raw.get("enable_multiple_frontends"))
    return Frontend(
        type=ftype,
        args=_mapping(raw.get("args"), "frontend.args", path),
        env=_env(raw.get("env"), "frontend.env", path, [*base_path, "frontend", "env"]),
        multiple=multiple,
        count=(
            _count(
                raw.get("num_additional_frontends", 9),
                "frontend.num_additional_frontends",
                path,
                [[*r, "frontend", "num_additional_frontends"] for r in roots],
                0,
                MAX_NODES,
            )
            + 1
            if multiple
            else 1
        ),
    )


def _services(variant: dict[str, object]) -> list[dict[str, object]]:
    services = variant.get("services")
    out: list[dict[str, object]] = []
    if isinstance(services, list):
        for s in services:
            if isinstance(s, dict):
                out.append(
                    {
                        "name": s.get("name", s.get("type")),
                        "type": s.get("type", s.get("name")),
                        **{k: v for k, v in s.items() if k not in ("name", "type")},
                    }
                )
    elif isinstance(services, dict):
        for name, s in services.items():
            if not isinstance(s, dict | None):
                continue  # the services layer refuses this shape (services.py: _declared)
            s = s or {}
            out.append(
                {
                    "name": name,
                    "type": s.get("type", name),
                    **{k: v for k, v in s.items() if k != "type"},
                }
            )
    return out
