"""Turn a parsed sweep log into raw blocks (the shared vocabulary), one per role / router.

Several workers of a role are one block (``workers``); a multi-node worker is one block too
(``nodes_per_worker``), taken from its ``--node-rank 0`` node. Every other process of the role
must agree with that block except in placement (ports, GPUs, node rank, the leader address,
per-node paths); each disagreement is a *problem* the report shows. What srt-slurm never logs
(a router's environment, the Dynamo frontend's argv) is marked in ``block["unlogged"]`` so the
comparison says so instead of calling it missing.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from syncer.inferencex.services import split_service_argv
from syncer.model import SERVICE_KINDS, Block, sorted_env
from syncer.runs.conflicts import command_conflicts
from syncer.runs.envline import split_env
from syncer.runs.logs import LoggedProcess, SweepLog
from syncer.wording import js

# Values that legitimately differ between processes of one role.
PER_PROCESS_FLAGS = frozenset(
    {
        "--port",
        "--nccl-port",
        "--node-rank",
        "--dist-init-addr",
        "--dump-config-to",
        "--disaggregation-bootstrap-port",
        "--kv-events-config",
    }
)
PER_PROCESS_ENV = frozenset(
    {
        "CUDA_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES",
        "DYN_SYSTEM_PORT",
        "MOONCAKE_LOCAL_HOSTNAME",
        "MC_TCP_BIND_ADDRESS",
    }
)
_ROLE_ORDER = {"prefill": 0, "decode": 1, "agg": 2}

ExpectedEnv = Callable[[str, str | None], Mapping[str, str] | None]


@dataclass
class LoggedLaunch:
    """The raw blocks of one sweep log, plus what could not be read cleanly."""

    sweep: SweepLog
    blocks: list[Block]
    problems: list[str] = field(default_factory=list)
    ambiguities: list[str] = field(default_factory=list)

    @property
    def source(self) -> str:
        return self.sweep.source


def _env(
    proc: LoggedProcess, expected: Mapping[str, str] | None, out: LoggedLaunch
) -> dict[str, str]:
    if proc.env_text is None:
        return {}
    try:
        split = split_env(proc.env_text, expected)
    except ValueError as exc:
        out.problems.append(f"{_who(proc)}: Env: line {proc.env_line} cannot be split: {exc}")
        return {}
    if split.ambiguous:
        out.ambiguities.append(
            f"{_who(proc)}: the Env: line (line {proc.env_line}) splits two ways: "
            f"{split.describe_ambiguity()}"
        )
    return sorted_env(split.env)


def _who(proc: LoggedProcess) -> str:
    if proc.kind == "worker":
        return f"{proc.role} worker {proc.index} on {proc.node}"
    return f"{proc.kind} {proc.index} on {proc.node}"


def _node_rank(proc: LoggedProcess) -> int:
    for arg in proc.split[2]:
        if arg[0] == "--node-rank" and len(arg) > 1 and re.fullmatch(r"[0-9]{1,9}", arg[1]):
            return int(arg[1])
    return 0


def _args_map(args: list[list[str]]) -> dict[str, list[tuple[str, ...]]]:
    out: dict[str, list[tuple[str, ...]]] = {}
    for arg in args:
        values = tuple(arg[1:])
        bucket = out.setdefault(arg[0], [])
        if values not in bucket:
            bucket.append(values)
    return out


def _templated(value: str, node: str) -> str:
    # srt-slurm expands {node} in env values; compare processes on different nodes modulo that.
    return value.replace(node, "{node}") if node else value


def _untemplated(env: dict[str, str], node: str) -> dict[str, str]:
    """srt-slurm expanded ``{node}`` in worker env to the host name; the rendering writes that
    as ``<node>``, so the logged value is put back the same way before comparing."""
    if len(node) < 3:  # too short to tell a host name from other text
        return env
    return {k: v.replace(node, "<node>") for k, v in env.items()}


def _consistency(
    lead: LoggedProcess,
    lead_env: dict[str, str],
    other: LoggedProcess,
    other_env: dict[str, str],
    out: LoggedLaunch,
) -> None:
    w1, cmd1, args1 = lead.split
    w2, cmd2, args2 = other.split
    diffs: list[str] = []
    if cmd1 != cmd2:
        diffs.append(f"command {js(cmd2)} vs {js(cmd1)}")
    if w1 != w2:
        diffs.append(f"wrapper {js(' '.join(w2))} vs {js(' '.join(w1))}")
    a1, a2 = _args_map(args1), _args_map(args2)
    for flag in sorted(set(a1) | set(a2)):
        if flag in PER_PROCESS_FLAGS:
            continue
        if a1.get(flag) != a2.get(flag):
            diffs.append(f"{flag} {_show(a2.get(flag))} vs {_show(a1.get(flag))}")
    for key in sorted(set(lead_env) | set(other_env)):
        if key in PER_PROCESS_ENV:
            continue
        v1 = _templated(lead_env[key], lead.node) if key in lead_env else None
        v2 = _templated(other_env[key], other.node) if key in other_env else None
        if v1 != v2:
            diffs.append(f"env {key} {js(v2)} vs {js(v1)}")
    if diffs:
        out.problems.append(
            f"{_who(other)} (line {other.line}) does not match {_who(lead)} (line {lead.line}): "
            + "; ".join(diffs)
        )


def _show(values: list[tuple[str, ...]] | None) -> str:
    if values is None:
        return "(absent)"
    return " | ".join(" ".join(v) if v else "(bare)" for v in values)


def build_launch(sweep: SweepLog, expected_env: ExpectedEnv | None = None) -> LoggedLaunch:
    """Raw blocks of ``sweep``. ``expected_env(kind, role)`` gives the env the recipe expects
    for a block (used only to split ``Env:`` lines; see :mod:`syncer.runs.envline`)."""
    out = LoggedLaunch(sweep, [], problems=command_conflicts(sweep))
    _worker_blocks(sweep, expected_env, out)
    _service_blocks(sweep, out)
    _frontend_blocks(sweep, out)
    return out


def _worker_blocks(sweep: SweepLog, expected_env: ExpectedEnv | None, out: LoggedLaunch) -> None:
    """One block a role, from its lead process; the other processes checked against it."""

    def expected(kind: str, role: str | None) -> Mapping[str, str] | None:
        return expected_env(kind, role) if expected_env else None

    roles: dict[str, dict[int, list[LoggedProcess]]] = {}
    for proc in sweep.workers:
        if proc.engine:
            continue  # shadow engines share their worker's launch
        roles.setdefault(proc.role or "agg", {}).setdefault(proc.index, []).append(proc)
    for role in sorted(roles, key=lambda r: _ROLE_ORDER.get(r, 9)):
        by_index = roles[role]
        exp = expected("worker", role)
        envs = {id(p): _env(p, exp, out) for procs in by_index.values() for p in procs}
        first = by_index[min(by_index)]
        lead = min(first, key=_node_rank)
        lead_env = envs[id(lead)]
        for procs in by_index.values():
            for proc in procs:
                if proc is not lead:
                    _consistency(lead, lead_env, proc, envs[id(proc)], out)
        nodes = {len(procs) for procs in by_index.values()}
        if len(nodes) > 1:
            out.problems.append(f"{role} workers span different node counts: {sorted(nodes)}")
        wrapper, cmd, args = lead.split
        block: Block = {
            "kind": "worker",
            "role": role,
            "workers": len(by_index),
            "nodes_per_worker": len(first),
            "cmd": cmd,
            "env": _untemplated(lead_env, lead.node),
            "args": args,
        }
        cvd = "CUDA_VISIBLE_DEVICES"
        pinning = [
            [envs[id(p)][cvd] for p in procs if cvd in envs[id(p)]]
            for _, procs in sorted(by_index.items())
        ]
        if any(pinning):
            block["gpu_pinning"] = pinning
        if wrapper:
            block["wrapper"] = wrapper
        block["source"] = {"line": lead.line, "log": lead.log}
        out.blocks.append(block)


def _service_blocks(sweep: SweepLog, out: LoggedLaunch) -> None:
    """One block a service that has a cookbook block; its processes must run one argv."""
    services: dict[str, list[LoggedProcess]] = {}
    for proc in sweep.services:
        services.setdefault(proc.service or "", []).append(proc)
    for name, procs in services.items():
        lead = procs[0]
        if lead.kind not in SERVICE_KINDS:
            # exporters, GPU memory services, ...: srt-slurm starts them beside the deployment
            # (telemetry is on by default) and the rendering has no block for them
            continue
        cmd, args = split_service_argv(lead.argv or [])
        for proc in procs[1:]:
            if split_service_argv(proc.argv or []) != (cmd, args):
                out.problems.append(
                    f"service {name} on {proc.node} (line {proc.line}) runs "
                    f"{js(shlex.join(proc.argv or []))}, unlike {lead.node} (line {lead.line})"
                )
        out.blocks.append(
            {
                "kind": lead.kind,
                "count_nodes": len({p.node for p in procs}),
                "cmd": cmd,
                "env": {},
                "args": args,
                # srt-slurm logs a service's argv, never its environment or preamble
                "unlogged": ["env"],
                "service": name,
                "source": {"line": lead.line, "log": None},
            }
        )


def _frontend_blocks(sweep: SweepLog, out: LoggedLaunch) -> None:
    """One block a frontend kind, with the count of its processes."""
    fronts: dict[str, list[LoggedProcess]] = {}
    for proc in sweep.frontends:
        fronts.setdefault(proc.kind, []).append(proc)
    for kind, procs in fronts.items():
        lead = procs[0]
        block: Block = {"kind": kind, "count": len(procs)}
        if lead.argv is None:
            block.update({"cmd": None, "env": {}, "args": [], "unlogged": ["cmd", "args", "env"]})
        else:
            wrapper, cmd, args = lead.split
            block.update({"cmd": cmd, "env": {}, "args": args, "unlogged": ["env"]})
            if wrapper:
                block["wrapper"] = wrapper
            for proc in procs[1:]:
                _consistency(lead, {}, proc, {}, out)
        block["source"] = {"line": lead.line, "log": None}
        out.blocks.append(block)
