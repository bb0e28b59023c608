"""Step 1 of the page's ``blocksFor``: a cell's base blocks per router, materialised.

``ref`` (a block of another cell and router), ``from`` (a block of the cell's submitted
router), the entry's own keys overlaid, ``drop`` and ``diff`` applied, ``envRef`` resolved from
the module's ``envs`` pool; each result checked once and memoised per (cell, router), as on the
page. A ``ref`` cycle or a chain too deep to follow is an error naming the entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from syncer.cookbook.jsvalues import clone, js_falsy, sorted_object
from syncer.cookbook.validate import ModuleValidator
from syncer.errors import SyncError
from syncer.model import Block, as_block, block_data, sort_worker_args
from syncer.wording import count as count_of
from syncer.wording import js
from syncer.wording import kind as kind_of

if TYPE_CHECKING:  # annotations only: the TypedDicts cost a millisecond to create
    from syncer.cookbook.module_data import CellData, ModuleData, RouterData

OVERLAY_SKIP = frozenset({"from", "diff", "drop", "ref"})

# The flags and env entries every block a module shows holds, counted as they are built. A
# module names a block's env (envRef), another block (ref, from) or a point's changes (patch)
# once and the page builds each use in full, so a few kilobytes could stand for billions of
# entries (a 4 MB module took a minute and more than a gigabyte to diff with itself). Real
# modules build at most about 50,000 (the largest of the reference modules: 49,109).
MAX_EXPANDED_ENTRIES = 500_000


class Expansion:
    """The entries built so far for one module; past ``MAX_EXPANDED_ENTRIES`` the module is
    refused, naming the entry that crossed the bound."""

    def __init__(self, check: ModuleValidator) -> None:
        self.check = check
        self.built = 0

    def spend(self, entries: int, where: str) -> None:
        self.built += entries
        if self.built > MAX_EXPANDED_ENTRIES:
            raise self.check.error(
                where,
                f"the module's refs, envRefs, patches and KV tiers build more than "
                f"{MAX_EXPANDED_ENTRIES:,} flags and env entries; refusing it",
            )

    def block(self, block: Block, where: str) -> None:
        """Count a block just built (its flags and env entries)."""
        args, env = block.get("args"), block.get("env")
        self.spend(
            1
            + (len(args) if isinstance(args, list) else 0)
            + (len(env) if isinstance(env, dict) else 0),
            where,
        )


class Materialiser:
    """The base blocks of one module's cells (``blocks(ci, router)``), each (cell, router)
    materialised once."""

    def __init__(
        self, data: ModuleData, check: ModuleValidator, expansion: Expansion | None = None
    ) -> None:
        self.data = data
        self.check = check
        self.expansion = expansion or Expansion(check)
        self.cells: list[CellData] = data["cells"]
        self._memo: dict[tuple[int, str], list[Block]] = {}
        self._active: list[tuple[int, str]] = []

    def cell(self, ci: int) -> CellData:
        if type(ci) is int and 0 <= ci < len(self.cells):  # first: each case asks a few times
            return self.cells[ci]
        if isinstance(ci, bool) or not isinstance(ci, int) or not 0 <= ci < len(self.cells):
            raise self.check.error(
                "cell", f"index {js(ci)} out of range (module has {len(self.cells)})"
            )
        return self.cells[ci]

    def router(self, ci: int, router: str) -> RouterData:
        routers = self.cell(ci)["routers"]
        if router not in routers:
            raise self.check.error(
                f"cells[{ci}]",
                f"unknown router {js(router)} (cell has {', '.join(sorted(routers))})",
            )
        return routers[router]

    def blocks(self, ci: int, router: str) -> list[Block]:
        """Base (point-0, measured-tier) blocks of (cell, router). Shared memo: do not mutate."""
        key = (ci, router)
        done = self._memo.get(key)
        if done is not None:
            return done
        entries = self.router(ci, router)["blocks"]
        if key in self._active:
            loop = self._active[self._active.index(key) :]
            chain = " -> ".join(f"cells[{c}].routers.{r}" for c, r in [*loop, key])
            raise self.check.error(f"cells[{ci}].routers.{router}", f"ref cycle: {chain}")
        self._active.append(key)
        try:
            out = []
            for bi, entry in enumerate(entries):
                built = self._entry(ci, router, bi, entry)
                self.expansion.block(built, f"cells[{ci}].routers.{router}.blocks[{bi}]")
                out.append(built)
        except RecursionError:
            # Only the outermost call reports it, once the stack has room again.
            if len(self._active) > 1:
                raise
            raise self.check.error(
                f"cells[{ci}].routers.{router}", "ref chain too long (hundreds of cells deep)"
            ) from None
        finally:
            self._active.pop()
        envs = self.data.get("envs")
        for bi, block in enumerate(out):
            if "envRef" in block:
                where = f"cells[{ci}].routers.{router}.blocks[{bi}]"
                env = self._env_ref(block["envRef"], envs, where)
                self.expansion.spend(len(env), f"{where}.envRef")
                block.pop("envRef")
                block["env"] = sorted_object(env)
        for bi, block in enumerate(out):
            self.check.block(block, f"cells[{ci}].routers.{router}.blocks[{bi}]")
        self._memo[key] = out
        return out

    def _env_ref(self, index: object, envs: object, where: str) -> dict[str, str]:
        if (
            isinstance(index, bool)
            or not isinstance(index, int)
            or not isinstance(envs, list)
            or not 0 <= index < len(envs)
            or not isinstance(envs[index], dict)
        ):
            count = len(envs) if isinstance(envs, list) else 0
            raise self.check.error(
                f"{where}.envRef",
                f"dangling env index {js(index)} (module has {count_of(count, 'env')})",
            )
        env: dict[str, str] = envs[index]
        return env

    def _entry(self, ci: int, router: str, bi: int, entry: dict[str, object]) -> Block:
        where = f"cells[{ci}].routers.{router}.blocks[{bi}]"
        ref = entry.get("ref")
        if not js_falsy(ref):
            if not (
                isinstance(ref, list)
                and len(ref) == 3
                and isinstance(ref[0], int)
                and not isinstance(ref[0], bool)
                and isinstance(ref[1], str)
            ):
                raise self.check.error(
                    f"{where}.ref", f"expected [cell, router, block], found {js(ref)}"
                )
            cj, rj, bj = ref
            if not 0 <= cj < len(self.cells):
                raise self.check.error(
                    f"{where}.ref", f"dangling cell index {cj} (module has {len(self.cells)})"
                )
            if rj not in self.cells[cj]["routers"]:
                raise self.check.error(f"{where}.ref", f"unknown router {js(rj)} in cells[{cj}]")
            source = self._indexed(self.blocks(cj, rj), bj, f"{where}.ref")
            return self._from_ref(source, entry, where)
        if "from" in entry:
            submitted = self.cells[ci]["submitted"]
            source = self._indexed(self.blocks(ci, submitted), entry["from"], f"{where}.from")
            return self._from_ref(source, entry, where)
        copy: Block = clone(entry)
        return copy

    def _indexed(self, blocks: list[Block], index: object, where: str) -> Block:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(blocks):
            raise self.check.error(
                where, f"dangling block index {js(index)} (list has {len(blocks)})"
            )
        return blocks[index]

    def _from_ref(self, source: Block, entry: dict[str, object], where: str) -> Block:
        if not isinstance(entry.get("drop") or [], list):
            raise self.check.error(f"{where}.drop", "expected a list of key names")
        try:
            return overlay(source, entry)
        except SyncError as exc:
            raise self.check.error(f"{where}.diff", exc.message) from None


def overlay(source: Block, entry: dict[str, Any]) -> Block:
    """A ``ref`` / ``from`` entry on its source block: the ``drop`` keys removed, the entry's
    own keys set, then its ``diff`` applied (``SyncError`` for a diff that does not apply);
    ``apply_diff`` makes the copy."""
    drop = entry.get("drop") or []
    block = {k: v for k, v in block_data(source).items() if k not in drop}
    for key, value in entry.items():
        if key not in OVERLAY_SKIP:
            block[key] = value
    return apply_diff(as_block(block), entry.get("diff"))


def apply_diff(block: Block, diff: object) -> Block:
    """A copy of ``block`` with ``diff`` applied (the page's ``applyDiff``). The args the diff
    keeps are ``block``'s own lists (an arg is replaced, never changed in place): copying them
    was half of every patched block's cost."""
    if js_falsy(diff):
        unchanged: Block = clone(block)
        return unchanged
    if not isinstance(diff, dict):
        raise SyncError(f"expected a diff object, found {kind_of(diff)}")
    if not js_falsy(diff.get("block")):
        replaced: Block = clone(diff["block"])
        return replaced
    out = {  # args and env are rebuilt below
        key: clone(value)
        if key not in ("args", "env") and isinstance(value, dict | list)
        else value
        for key, value in block_data(block).items()
    }
    dargs = diff.get("args") or {}
    if not isinstance(dargs, dict):
        raise SyncError("diff `args` must be an object of flag -> values | null")
    args = out.get("args")
    if not isinstance(args, list):
        raise SyncError("diff applied to a block without `args`")
    for arg in args:  # a loop, not all(...): a generator's steps cost as much as the tests
        if not (isinstance(arg, list) and arg and isinstance(arg[0], str)):
            raise SyncError("diff applied to `args` that are not [flag, values...] lists")
    new_args = []
    for arg in args:
        flag = arg[0]
        if flag in dargs:
            values = dargs[flag]
            if values is None:
                continue
            if not isinstance(values, list):
                raise SyncError(f"diff for {flag} must be a list of values or null")
            new_args.append([flag, *values])
        else:
            new_args.append(arg)
    names = {a[0] for a in new_args}
    for flag, values in dargs.items():
        if values is not None and flag not in names:
            if not isinstance(values, list):
                raise SyncError(f"diff for {flag} must be a list of values or null")
            new_args.append([flag, *values])
    if out.get("kind") == "worker":
        new_args = sort_worker_args(new_args)
    out["args"] = new_args
    denv = diff.get("env") or {}
    if not isinstance(denv, dict):
        raise SyncError("diff `env` must be an object of key -> value | null")
    env = {k: v for k, v in (out.get("env") or {}).items() if not (k in denv and denv[k] is None)}
    for key, value in denv.items():
        if value is not None:
            env[key] = value
    out["env"] = sorted_object(env)
    return as_block(out)
