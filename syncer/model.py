"""The shared vocabulary: blocks, selections and the cookbook's worker-argument order.

A *block* is one process of a deployment, exactly as the cookbook's decoder yields it: a plain
``dict`` with ``kind``, ``cmd``, ``env`` (str -> str, sorted keys), ``args`` (list of
``[flag, value...]`` lists) and, depending on the kind, ``role``, ``workers``,
``nodes_per_worker``, ``gpu_pinning``, ``count``, ``count_nodes``, ``ports``, ``preamble``.
Blocks stay plain dicts on purpose: they are compared with the oracle as data, serialised to
JSON and fed back to the encoder without a converter between stages.

Two forms exist (docs/ARCHITECTURE.md, Vocabulary): *raw* (what srt-slurm launched) and
*cookbook form* (raw minus InferenceX-only settings, cluster values as ``$PLACEHOLDERS``). Both
use this same shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypedDict, cast

Args = list[list[str]]
Env = dict[str, str]


class BlockSource(TypedDict):
    """Where a logged block was read: the log file (None: a service line of the sweep log) and
    its line."""

    log: str | None
    line: int | None


class Block(TypedDict, total=False):
    """One process of a deployment (see the module docstring). Every key is optional, as the
    format makes them per kind; the keys after ``args`` are never in a cookbook module: what a
    raw block was rendered from (``service``), what a logged block was read from and what its
    log does not show, and a module entry's pooled env (``envRef``, resolved on decoding)."""

    kind: str
    role: str
    workers: int
    nodes_per_worker: int
    gpu_pinning: list[list[str]]
    count: int
    count_nodes: int
    ports: list[str]
    preamble: list[str]
    cmd: str | None  # None: a logged block whose command the log does not show
    env: Env
    args: Args
    service: str
    wrapper: list[str]
    source: BlockSource
    unlogged: list[str]
    logged_by: str
    logged_env: str
    envRef: int


def block_data(block: Block) -> dict[str, Any]:
    """``block`` as the plain mapping it is, for code that walks every key alike (copies,
    comparisons, key order), which a TypedDict's literal keys cannot express."""
    return cast(dict[str, object], block)


def as_block(data: dict[str, object]) -> Block:
    """A mapping built key by key (``block_data``'s other direction) taken as a block."""
    return cast(Block, data)


WORKER_ROLES = ("agg", "prefill", "decode")
# The block kinds, declared once (a new srt-slurm service type is added here and given its
# title in cookbook/shell.KIND_TITLES). Services: what srt-slurm launches beside the
# deployment that has a cookbook block; frontends: what serves the OpenAI API.
SERVICE_KINDS = ("etcd", "nats", "mooncake-master", "mooncake-store")
FRONTEND_KINDS = ("sglang-router", "dynamo-frontend", "nginx")
BLOCK_KINDS = ("worker", *FRONTEND_KINDS, *SERVICE_KINDS)
ROUTERS = ("sglang", "dynamo")


class PointStatus(StrEnum):
    """A cookbook point's status (``status_for``): what the measured selection's provenance
    says, or ``derived`` for any other router or KV tier of the point. String-valued, so the
    module data, JSON output and templates spell it as before."""

    VERIFIED = "verified"  # the pinned run's PR is merged
    VERIFIED_PR = "verified-pr"  # pinned to a run of an open InferenceX PR
    IN_PROGRESS = "in-progress"  # the config changes in an open PR, no run pinned yet
    DERIVED = "derived"  # not what was measured: another router or KV tier of the point


# Block keys that say where and how many processes run (not part of the command text).
PLACEMENT_FIELDS = (
    "workers",
    "nodes_per_worker",
    "gpu_pinning",
    "count",
    "count_nodes",
    "ports",
    "preamble",
)
# Key order of a full block as the cookbook's generator writes it.
BLOCK_KEY_ORDER = ("kind", "role", *PLACEMENT_FIELDS, "cmd", "env", "args")

# Flags the cookbook always prints first in a worker command, in this order; every other flag
# follows sorted by name (code-unit order), repeated flags keeping their relative order.
LEAD_FLAGS = (
    "--model-path",
    "--served-model-name",
    "--host",
    "--port",
    "--disaggregation-mode",
    "--disaggregation-bootstrap-port",
    "--dist-init-addr",
    "--nnodes",
    "--node-rank",
    "--request-plane",
    "--kv-events-config",
)
_LEAD_RANK = {flag: i for i, flag in enumerate(LEAD_FLAGS)}


def group_argv(
    tokens: list[str], *, split_equals: bool = True, short: bool = False
) -> list[list[str]]:
    """Tokens of a command line -> ``[flag, value...]`` args: a ``--flag`` (or, with
    ``short``, a ``-f`` style flag such as NATS's ``-js``) starts an arg, other tokens are its
    values. ``split_equals`` turns ``--a=b`` into ``[--a, b]``; without it the token is kept
    whole, as the process received it."""
    args: list[list[str]] = []
    for tok in tokens:
        is_flag = (tok.startswith("--") and len(tok) > 2) or (
            short and len(tok) > 1 and tok[0] == "-" and tok[1].isalpha()
        )
        if is_flag:
            flag, eq, value = tok.partition("=")
            args.append([flag, value] if eq and split_equals and tok.startswith("--") else [tok])
        elif args:
            args[-1].append(tok)
        else:
            args.append([tok])
    return args


def worker_arg_key(arg: list[str]) -> tuple[int, str]:
    """Sort key of one worker arg under the cookbook's lead-flag rule."""
    flag = arg[0]
    rank = _LEAD_RANK.get(flag)
    return (rank, "") if rank is not None else (len(LEAD_FLAGS), flag)


class _ArgKeys(dict[str, tuple[int, str]]):
    """``worker_arg_key`` by flag, each flag's key made once."""

    def __missing__(self, flag: str) -> tuple[int, str]:
        key = worker_arg_key([flag])
        if len(self) < 10_000:  # bounded: a long-running bot decodes many modules
            self[flag] = key
        return key


_ARG_KEYS = _ArgKeys()


def sort_worker_args(args: Args) -> Args:
    """Worker args in cookbook order (stable, so repeated flags keep their order). The keys
    are looked up, and the positions sorted by a C method: decoding a module sorts the args
    of every worker a patch or a KV tier changes, a third faster than by ``worker_arg_key``."""
    keys = [_ARG_KEYS[arg[0]] for arg in args]
    return [args[i] for i in sorted(range(len(args)), key=keys.__getitem__)]


def sorted_env(env: Env | None) -> Env:
    given = env or {}
    return {key: given[key] for key in sorted(given)}


@dataclass(frozen=True)
class Selection:
    """One (cell, point, router, KV tier) of a data module: what a reader picks on the page, by
    cell and point index. ``kv=None`` is the point's measured tier."""

    cell: int
    point: int
    router: str
    kv: str | None = None
