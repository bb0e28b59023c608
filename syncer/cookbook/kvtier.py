"""The page's KV-offload transform: a point's blocks shown at another KV tier than measured.

A cell offers tiers (``kv.available``); a point was measured at one (``points[i].kv``). Showing
another tier strips the measured tier's worker flags (and a Mooncake store's env and service
blocks), adds the target tier's flags and env to the cache-owning workers (``agg``,
``prefill``; a decode worker of a Mooncake tier gets ``decode_env`` only), and for a derived
Mooncake tier inserts the module's ``kvMooncake.master`` block where the module's decoder
generation puts it (``master_placement``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from syncer.cookbook.jsvalues import sorted_object
from syncer.cookbook.validate import ModuleValidator
from syncer.model import Block, sort_worker_args

if TYPE_CHECKING:  # annotations only: the TypedDicts cost a millisecond to create
    from syncer.cookbook.module_data import CellData, ModuleData, MooncakeTier

KV_LINKER_FLAGS = frozenset(
    {
        "--enable-unified-cache-external-linker",
        "--unified-cache-external-linker-backend",
        "--hicache-storage-backend-extra-config",
    }
)

# Env keys only a Mooncake *store* deployment needs; dropped when leaving a measured mooncake tier.
MOONCAKE_STORE_ONLY_ENV = frozenset(
    {
        "MOONCAKE_MASTER",
        "MOONCAKE_TE_META_DATA_SERVER",
        "MOONCAKE_GLOBAL_SEGMENT_SIZE",
        "MOONCAKE_STANDALONE_STORAGE",
    }
)
CACHE_OWNING_ROLES = frozenset({"agg", "prefill"})
MOONCAKE_BLOCK_KINDS = frozenset({"mooncake-master", "mooncake-store"})

# Where a derived Mooncake tier puts the `mooncake-master` block (see master_placement).
BEFORE_FIRST_WORKER = "before-first-worker"
AFTER_CONTROL_PLANE = "after-control-plane"


def is_kv_flag(flag: str) -> bool:
    return (
        flag == "--enable-hierarchical-cache"
        or flag.startswith("--hicache-")
        or flag in KV_LINKER_FLAGS
    )


class _KvFlags(dict[str, bool]):
    """``is_kv_flag`` of the flags met, each asked once: every case shown at another tier
    than measured filters its workers' args (a lookup is a sixth of the call)."""

    def __missing__(self, flag: str) -> bool:
        answer = is_kv_flag(flag)
        if len(self) < 10_000:  # bounded: a long-running bot decodes many modules
            self[flag] = answer
        return answer


_IS_KV_FLAG = _KvFlags()


# kv_transform's memo: (id of the measured block, source tier, target tier, cell index) ->
# (that block, the block shown).
KvMemo = dict[tuple[int, str | None, str | None, int], tuple[Block, Block]]


def kv_transform(
    blocks: list[Block],
    source: str | None,
    target: str | None,
    *,
    data: ModuleData,
    ci: int,
    router: str,
    placement: Callable[[], str],
    check: ModuleValidator,
    memo: KvMemo | None = None,
) -> list[Block]:
    """``blocks`` (measured at tier ``source``) as the page shows them at tier ``target``.
    ``placement`` is asked only when a master block is inserted, since finding it decodes the
    module's Dynamo routers.

    The result shares blocks with the module's data (the derived master) and, given a
    ``memo`` (one per module), with earlier calls: do not mutate it. With the memo, a block
    shown at the same tier again (another point or router of the cell that did not change it)
    is the same object, which lets a caller format or encode it once."""
    cell = data["cells"][ci]
    mooncake = data.get("kvMooncake") or {}
    out: list[Block] = []
    for b0 in blocks:
        if source == "mooncake" and b0.get("kind") in MOONCAKE_BLOCK_KINDS:
            continue
        key = (id(b0), source, target, ci)
        done = memo.get(key) if memo is not None else None
        if done is None:
            done = (b0, _kv_block(b0, source, target, cell, mooncake, ci, check))
            if memo is not None:  # b0 is kept with its result, so its id names it
                memo[key] = done
        out.append(done[1])
    if target == "mooncake":
        master = (mooncake.get("master") or {}).get(router)
        if not isinstance(master, dict):
            raise check.error(
                "kvMooncake.master", f"no `{router}` block for the derived mooncake tier"
            )
        check.block_once(master, f"kvMooncake.master.{router}")
        out.insert(master_index(out, placement()), master)
    return out


def _kv_block(
    b0: Block,
    source: str | None,
    target: str | None,
    cell: CellData,
    mooncake: MooncakeTier,
    ci: int,
    check: ModuleValidator,
) -> Block:
    if b0.get("kind") != "worker" and type(b0.get("args")) is list and type(b0.get("env")) is dict:
        return b0  # what the copy below would equal: the result is not mutated
    block = b0.copy()
    # A new list and env; the args themselves are shared with b0 (the result is not mutated).
    block["args"] = list(b0.get("args") or [])
    block["env"] = dict(b0.get("env") or {})
    if block.get("kind") == "worker":
        _kv_worker(block, source, target, cell, mooncake, ci, check)
    return block


def _kv_worker(
    block: Block,
    source: str | None,
    target: str | None,
    cell: CellData,
    mooncake: MooncakeTier,
    ci: int,
    check: ModuleValidator,
) -> None:
    block["args"] = [a for a in block["args"] if not _IS_KV_FLAG[a[0]]]
    if source == "mooncake":
        block["env"] = {k: v for k, v in block["env"].items() if k not in MOONCAKE_STORE_ONLY_ENV}
    add: list[list[str]] = []
    env: dict[str, str] = {}
    if block.get("role") in CACHE_OWNING_ROLES:
        if target == "hicache":
            hicache = cell["kv"].get("hicache")
            if not isinstance(hicache, dict):
                raise check.error(f"cells[{ci}].kv", "tier hicache offered without `hicache`")
            add = hicache.get("args") or []
        elif target == "mooncake":
            add = mooncake.get("args") or []
            env = mooncake.get("env") or {}
    elif target == "mooncake":
        env = mooncake.get("decode_env") or {}
    names = {a[0] for a in block["args"]}
    for arg in add:
        if arg[0] not in names:
            block["args"].append(arg)
    block["args"] = sort_worker_args(block["args"])
    for key, value in env.items():
        if key not in block["env"]:
            block["env"][key] = value
    block["env"] = sorted_object(block["env"])


# ---- Mooncake master placement ------------------------------------------------------------


def master_placement(dynamo_routers: Iterable[list[Block]]) -> str:
    """Which decoder generation a module was generated for, read from the blocks of its Dynamo
    routers (consumed lazily: the first telling router decides).

    The first decoder with derived Mooncake tiers put a derived ``mooncake-master`` right after
    the last etcd/NATS block before the first worker; every later decoder puts it right before
    the first worker. The generator of that era wrote Dynamo routers as etcd, [nats], workers,
    frontend (frontend *last*); later generators put the frontend before the workers. So a
    module in which some Dynamo router lists a ``dynamo-frontend`` after a worker expects the
    old rule; any other module the newest one. On real modules the two rules agree (with the
    frontend last, nothing but etcd/NATS precedes the first Dynamo worker); they differ only
    when such a module also has another kind of block ahead of the first worker (e.g. an
    ``sglang-router`` listed first), which a test shows.
    """
    for blocks in dynamo_routers:
        if _frontend_after_worker(blocks):
            return AFTER_CONTROL_PLANE
    return BEFORE_FIRST_WORKER


def _frontend_after_worker(blocks: list[Block]) -> bool:
    seen_worker = False
    for block in blocks:
        kind = block.get("kind")
        if kind == "worker":
            seen_worker = True
        elif kind == "dynamo-frontend" and seen_worker:
            return True
    return False


def master_index(blocks: list[Block], placement: str) -> int:
    """Where the derived master goes in ``blocks`` under ``placement``."""
    first_worker = next((i for i, b in enumerate(blocks) if b.get("kind") == "worker"), -1)
    if placement == AFTER_CONTROL_PLANE:
        limit = first_worker if first_worker >= 0 else len(blocks)
        index = 0
        for i in range(limit):
            if blocks[i].get("kind") in ("etcd", "nats"):
                index = i + 1
        return index
    # JS `splice(-1, 0, x)` when no worker: before the last block (not reached in practice).
    return first_worker if first_worker >= 0 else max(len(blocks) - 1, 0)
