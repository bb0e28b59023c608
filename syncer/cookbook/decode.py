"""The cookbook's AgentX decoder, rule for rule (docs/cookbook-format.md, section b).

``Decoder(data).blocks_for(ci, pi, router, kv)`` returns exactly the blocks the page's
``blocksFor`` yields: materialise the cell's base blocks (``ref`` / ``from`` / overlays /
``diff`` / ``envRef``), apply the point's patch, then the KV-offload transform. Every module
version is read: per-point provenance with full URLs and cell-level ``prov`` with ids, modules
with or without KV tiers, and both placements of a derived Mooncake master.

Where the page would crash on malformed data (a ``ref`` cycle, an index past the end, an unknown
router) this raises ``SyncError`` naming the file and the offending entry instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from syncer.errors import SyncError
from syncer.model import Block, Case, sorted_env, worker_arg_key
from syncer.wording import count as count_of
from syncer.wording import js
from syncer.wording import kind as kind_of

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
OVERLAY_SKIP = frozenset({"from", "diff", "drop", "ref"})

# Where a derived Mooncake tier puts the `mooncake-master` block (see Decoder.master_placement).
BEFORE_FIRST_WORKER = "before-first-worker"
AFTER_CONTROL_PLANE = "after-control-plane"

# Optional top-level keys and the type each must have when present.
_TOP_LEVEL_TYPES: dict[str, type] = {
    "source": dict,
    "hardware": list,
    "checkpoints": list,
    "envs": list,
    "files": dict,
    "kvMooncake": dict,
}
_TYPE_NAMES = {dict: "an object", list: "an array", str: "a string"}  # as JavaScript says

_PROV_URLS = (
    # (url key, id key, url under the repository)
    ("recipeUrl", "recipe", lambda repo, p: f"{repo}/blob/{p['sha']}/{p['recipe']}"),
    ("runUrl", "run", lambda repo, p: f"{repo}/actions/runs/{p['run']}"),
    ("jobUrl", "job", lambda repo, p: f"{repo}/actions/runs/{p['job']}"),
    ("prUrl", "pr", lambda repo, p: f"{repo}/pull/{p['pr']}"),
    ("useComment", "comment", lambda repo, p: f"{repo}/pull/{p['pr']}#issuecomment-{p['comment']}"),
)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def js_falsy(value: Any) -> bool:
    """JavaScript falsiness (``[]`` and ``{}`` are truthy there, unlike in Python)."""
    return (
        value is None
        or value is False
        or value == ""
        or (isinstance(value, int | float) and not isinstance(value, bool) and value == 0)
    )


_CONTAINERS = (dict, list)


def clone(value: Any) -> Any:
    """Deep copy of JSON-shaped data (the page's ``JSON.parse(JSON.stringify(x))``)."""
    kind = type(value)
    if kind is dict:
        return {k: clone(v) if type(v) in _CONTAINERS else v for k, v in value.items()}
    if kind is list:
        return [clone(v) if type(v) in _CONTAINERS else v for v in value]
    return value


def is_kv_flag(flag: str) -> bool:
    return (
        flag == "--enable-hierarchical-cache"
        or flag.startswith("--hicache-")
        or flag in KV_LINKER_FLAGS
    )


def load_decoder(path: str | Path) -> Decoder:
    """Parse the data module at ``path`` and return its decoder."""
    from syncer.cookbook.jsmodule import read_text

    return decoder_for_text(read_text(path), str(path))


def decoder_for_text(text: str, path: str) -> Decoder:
    """The decoder of module source ``text``; its errors name ``path`` and the entry's line."""
    from syncer.cookbook.jsmodule import locate, parse_module

    module = parse_module(text, path)
    return Decoder(module.value, path, locate=lambda keys: locate(text, keys))


class Decoder:
    """Decodes one data module (the ``agentx`` object). Materialisation is memoised per
    (cell, router), as on the page, so decoding every case of a module stays cheap."""

    def __init__(
        self,
        data: Any,
        path: str = "<module>",
        *,
        locate: Callable[[tuple[str | int, ...]], tuple[int, int] | None] | None = None,
    ) -> None:
        self.path = path
        self.data = data
        self._locate = locate
        self._check_shape()
        self.cells: list[dict[str, Any]] = data["cells"]
        self._memo: dict[tuple[int, str], list[Block]] = {}
        self._active: list[tuple[int, str]] = []
        self._placement: str | None = None

    # ---- errors -------------------------------------------------------------------------

    def _error(self, where: str, message: str) -> SyncError:
        """``where`` is the entry's path in the module (``cells[3].routers.sglang.blocks[0]``);
        with the module text at hand the error also gets that entry's line and column."""
        line = column = None
        if self._locate is not None:
            found = self._locate(_key_path(where))
            if found:
                line, column = found
        return SyncError(f"{where}: {message}", path=self.path, line=line, column=column)

    def _check_shape(self) -> None:
        """Every part of the module the decoder, the shell text or a report reads has the type
        the format gives it, so a module of another shape is one error naming the entry."""
        data = self.data
        if not isinstance(data, dict):
            raise self._error("module", f"expected an object, found {kind_of(data)}")
        cells = data.get("cells")
        if not isinstance(cells, list) or not cells:
            raise self._error("module", "expected a non-empty `cells` list (unknown module shape)")
        for key, kind in _TOP_LEVEL_TYPES.items():
            self._expect(data.get(key), kind, key)
        self._expect((data.get("source") or {}).get("prs"), dict, "source.prs")
        self._expect((data.get("source") or {}).get("repo"), str, "source.repo")
        for key in ("hardware", "checkpoints"):
            for i, entry in enumerate(data.get(key) or []):
                if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
                    raise self._error(f"{key}[{i}]", "expected an object with a string `id`")
        self._check_mooncake(data.get("kvMooncake") or {})
        for ci, cell in enumerate(cells):
            self._check_cell(ci, cell)

    def _expect(self, value: Any, kind: type, where: str) -> None:
        if value is not None and not isinstance(value, kind):
            raise self._error(where, f"expected {_TYPE_NAMES[kind]}, found {kind_of(value)}")

    def _check_mooncake(self, mooncake: dict[str, Any]) -> None:
        self._expect(mooncake.get("master"), dict, "kvMooncake.master")
        self._check_args(mooncake.get("args"), "kvMooncake.args")
        for key in ("env", "decode_env"):
            self._check_env(mooncake.get(key), f"kvMooncake.{key}")

    def _check_cell(self, ci: int, cell: Any) -> None:
        where = f"cells[{ci}]"
        if not isinstance(cell, dict):
            raise self._error(where, "expected an object")
        points = cell.get("points")
        if not isinstance(points, list) or not points:
            raise self._error(where, "expected a non-empty `points` list")
        for pi, point in enumerate(points):
            if not isinstance(point, dict):
                raise self._error(f"{where}.points[{pi}]", "expected an object")
            concs = point.get("concs")
            if concs is not None and not (
                isinstance(concs, list) and all(_is_int(c) for c in concs)
            ):
                raise self._error(f"{where}.points[{pi}].concs", "expected a list of integers")
            self._expect(point.get("kv"), str, f"{where}.points[{pi}].kv")
        self._expect(cell.get("prov"), dict, f"{where}.prov")
        routers = cell.get("routers")
        if not isinstance(routers, dict) or not routers:
            raise self._error(where, "expected a non-empty `routers` object")
        for name, router in routers.items():
            blocks = router.get("blocks") if isinstance(router, dict) else None
            if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
                raise self._error(f"{where}.routers.{name}", "expected `blocks`: a list of objects")
            files = router.get("files")
            if files is not None and not (
                isinstance(files, list) and all(isinstance(f, str) for f in files)
            ):
                raise self._error(f"{where}.routers.{name}.files", "expected a list of file ids")
        submitted = cell.get("submitted")
        if not isinstance(submitted, str) or submitted not in routers:
            raise self._error(
                f"{where}.submitted", f"router {js(submitted)} is not one of {js(sorted(routers))}"
            )
        kv = cell.get("kv")
        if kv is not None and not (
            isinstance(kv, dict)
            and isinstance(kv.get("available"), list)
            and all(isinstance(t, str) for t in kv["available"])
        ):
            raise self._error(f"{where}.kv", "expected an object with an `available` list of tiers")
        hicache = (kv or {}).get("hicache")
        self._expect(hicache, dict, f"{where}.kv.hicache")
        self._check_args((hicache or {}).get("args"), f"{where}.kv.hicache.args")

    def _check_args(self, args: Any, where: str) -> None:
        if args is not None and not (
            isinstance(args, list)
            and all(
                isinstance(a, list)
                and a
                and isinstance(a[0], str)
                and not any(isinstance(v, dict | list) for v in a[1:])
                for a in args
            )
        ):
            raise self._error(where, "expected `args`: a list of [flag, values...] lists")

    def _check_env(self, env: Any, where: str) -> None:
        if env is not None and not (
            isinstance(env, dict) and not any(isinstance(v, dict | list) for v in env.values())
        ):
            raise self._error(where, "expected `env`: an object of name -> value")

    def _cell(self, ci: int) -> dict[str, Any]:
        if isinstance(ci, bool) or not isinstance(ci, int) or not 0 <= ci < len(self.cells):
            raise self._error("cell", f"index {ci!r} out of range (module has {len(self.cells)})")
        return self.cells[ci]

    def _router(self, ci: int, router: str) -> dict[str, Any]:
        routers = self._cell(ci)["routers"]
        if router not in routers:
            raise self._error(
                f"cells[{ci}]", f"unknown router {router!r} (cell has {', '.join(sorted(routers))})"
            )
        return routers[router]

    # ---- 1. materialise ----------------------------------------------------------------

    def materialise(self, ci: int, router: str) -> list[Block]:
        """Base (point-0, measured-tier) blocks of (cell, router). Shared memo: do not mutate."""
        key = (ci, router)
        done = self._memo.get(key)
        if done is not None:
            return done
        entries = self._router(ci, router)["blocks"]
        if key in self._active:
            loop = self._active[self._active.index(key) :]
            chain = " -> ".join(f"cells[{c}].routers.{r}" for c, r in [*loop, key])
            raise self._error(f"cells[{ci}].routers.{router}", f"ref cycle: {chain}")
        self._active.append(key)
        try:
            out = [self._entry(ci, router, bi, entry) for bi, entry in enumerate(entries)]
        except RecursionError:
            # Only the outermost call reports it, once the stack has room again.
            if len(self._active) > 1:
                raise
            raise self._error(
                f"cells[{ci}].routers.{router}", "ref chain too long (hundreds of cells deep)"
            ) from None
        finally:
            self._active.pop()
        envs = self.data.get("envs")
        for bi, block in enumerate(out):
            if "envRef" in block:
                where = f"cells[{ci}].routers.{router}.blocks[{bi}]"
                env = self._env_ref(block["envRef"], envs, where)
                block.pop("envRef")
                block["env"] = sorted_env(env)
        for bi, block in enumerate(out):
            self._check_block(block, f"cells[{ci}].routers.{router}.blocks[{bi}]")
        self._memo[key] = out
        return out

    def _env_ref(self, index: Any, envs: Any, where: str) -> dict[str, str]:
        if (
            isinstance(index, bool)
            or not isinstance(index, int)
            or not isinstance(envs, list)
            or not 0 <= index < len(envs)
            or not isinstance(envs[index], dict)
        ):
            count = len(envs) if isinstance(envs, list) else 0
            raise self._error(
                f"{where}.envRef",
                f"dangling env index {js(index)} (module has {count_of(count, 'env')})",
            )
        return envs[index]

    def _entry(self, ci: int, router: str, bi: int, entry: dict[str, Any]) -> Block:
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
                raise self._error(
                    f"{where}.ref", f"expected [cell, router, block], found {js(ref)}"
                )
            cj, rj, bj = ref
            if not 0 <= cj < len(self.cells):
                raise self._error(
                    f"{where}.ref", f"dangling cell index {cj} (module has {len(self.cells)})"
                )
            if rj not in self.cells[cj]["routers"]:
                raise self._error(f"{where}.ref", f"unknown router {js(rj)} in cells[{cj}]")
            source = self._indexed(self.materialise(cj, rj), bj, f"{where}.ref")
            return self._from_ref(source, entry, where)
        if "from" in entry:
            submitted = self.cells[ci]["submitted"]
            source = self._indexed(self.materialise(ci, submitted), entry["from"], f"{where}.from")
            return self._from_ref(source, entry, where)
        return clone(entry)

    def _check_block(self, block: Any, where: str) -> None:
        """What the shell text needs: a kind, an ``args`` list of ``[flag, values...]`` lists,
        an ``env`` object, a ``role`` name and ``preamble`` lines (malformed data is an error
        here, not a traceback later)."""
        if not isinstance(block, dict) or not isinstance(block.get("kind"), str):
            raise self._error(where, "expected a block with a `kind` (or a `ref` / `from`)")
        self._check_args(block.get("args"), where)
        self._check_env(block.get("env"), where)
        self._expect(block.get("role"), str, f"{where}.role")
        preamble = block.get("preamble")
        if preamble is not None and not (
            isinstance(preamble, list) and all(isinstance(line, str) for line in preamble)
        ):
            raise self._error(f"{where}.preamble", "expected a list of lines")

    def _indexed(self, blocks: list[Block], index: Any, where: str) -> Block:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(blocks):
            raise self._error(where, f"dangling block index {js(index)} (list has {len(blocks)})")
        return blocks[index]

    def _from_ref(self, source: Block, entry: dict[str, Any], where: str) -> Block:
        if not isinstance(entry.get("drop") or [], list):
            raise self._error(f"{where}.drop", "expected a list of key names")
        try:
            return overlay(source, entry)
        except SyncError as exc:
            raise self._error(f"{where}.diff", exc.message) from None

    # ---- 2-5. blocksFor -----------------------------------------------------------------

    def _point_index(self, ci: int, pi: int) -> int:
        points = self._cell(ci)["points"]
        if isinstance(pi, bool) or not isinstance(pi, int) or pi < 0:
            raise self._error(f"cells[{ci}]", f"point index {js(pi)} must be >= 0")
        return min(pi, len(points) - 1)

    def available_tiers(self, ci: int) -> list[str]:
        kv = self._cell(ci).get("kv")
        return list(kv["available"]) if kv else []

    def measured_tier(self, ci: int, pi: int) -> str | None:
        return self._cell(ci)["points"][self._point_index(ci, pi)].get("kv")

    def target_tier(self, ci: int, pi: int, kv: str | None) -> str | None:
        """The tier actually shown: ``kv`` when the cell offers it, else the measured tier."""
        if kv is not None and kv in self.available_tiers(ci):
            return kv
        return self.measured_tier(ci, pi)

    def blocks_for(self, ci: int, pi: int, router: str, kv: str | None = None) -> list[Block]:
        """The page's ``blocksFor``: fresh blocks for (cell, point, router, KV tier)."""
        cell = self._cell(ci)
        pi = self._point_index(ci, pi)
        base = self.materialise(ci, router)
        if pi == 0:
            blocks = clone(base)
        else:
            patches = cell["points"][pi].get("patch") or {}
            where = f"cells[{ci}].points[{pi}].patch"
            if not isinstance(patches, dict):
                raise self._error(where, "expected an object of router -> patch")
            blocks = self._apply_patch(base, patches.get(router), f"{where}.{router}")
        source = cell["points"][pi].get("kv")
        target = self.target_tier(ci, pi, kv)
        if source == target:
            return blocks
        return self._kv_transform(blocks, source, target, ci, router)

    def _apply_patch(self, base: list[Block], patch: Any, where: str) -> list[Block]:
        """Point blocks from the checked base; only what the patch changed needs checking
        again (this runs for every case, so unchanged blocks are not walked twice)."""
        if js_falsy(patch):
            return clone(base)
        if isinstance(patch, list):
            out = []
            for i, block in enumerate(base):
                diff = patch[i] if i < len(patch) else None
                if js_falsy(diff):
                    out.append(clone(block))
                    continue
                try:
                    changed = apply_diff(block, diff)
                except SyncError as exc:
                    raise self._error(f"{where}[{i}]", exc.message) from None
                self._check_block(changed, f"{where}[{i}]")
                out.append(changed)
            return out
        if isinstance(patch, dict) and isinstance(patch.get("replace"), list):
            out = clone(patch["replace"])
            for i, block in enumerate(out):
                self._check_block(block, f"{where}[{i}]")
            return out
        raise self._error(where, "expected null, a list of per-block diffs or {replace: [...]}")

    def _kv_transform(
        self, blocks: list[Block], source: str | None, target: str | None, ci: int, router: str
    ) -> list[Block]:
        cell = self.cells[ci]
        mooncake = self.data.get("kvMooncake") or {}
        out: list[Block] = []
        for b0 in blocks:
            if source == "mooncake" and b0.get("kind") in MOONCAKE_BLOCK_KINDS:
                continue
            block = dict(b0)
            block["args"] = [list(a) for a in b0.get("args") or []]
            block["env"] = dict(b0.get("env") or {})
            if block.get("kind") == "worker":
                self._kv_worker(block, source, target, cell, mooncake, ci)
            out.append(block)
        if target == "mooncake":
            master = (mooncake.get("master") or {}).get(router)
            if not isinstance(master, dict):
                raise self._error(
                    "kvMooncake.master", f"no `{router}` block for the derived mooncake tier"
                )
            self._check_block(master, f"kvMooncake.master.{router}")
            out.insert(self._master_index(out), clone(master))
        return out

    def _kv_worker(
        self,
        block: Block,
        source: str | None,
        target: str | None,
        cell: dict[str, Any],
        mooncake: dict[str, Any],
        ci: int,
    ) -> None:
        block["args"] = [a for a in block["args"] if not is_kv_flag(a[0])]
        if source == "mooncake":
            block["env"] = {
                k: v for k, v in block["env"].items() if k not in MOONCAKE_STORE_ONLY_ENV
            }
        add: list[list[str]] = []
        env: dict[str, str] = {}
        if block.get("role") in CACHE_OWNING_ROLES:
            if target == "hicache":
                hicache = cell["kv"].get("hicache")
                if not isinstance(hicache, dict):
                    raise self._error(f"cells[{ci}].kv", "tier hicache offered without `hicache`")
                add = hicache.get("args") or []
            elif target == "mooncake":
                add = mooncake.get("args") or []
                env = mooncake.get("env") or {}
        elif target == "mooncake":
            env = mooncake.get("decode_env") or {}
        names = {a[0] for a in block["args"]}
        for arg in add:
            if arg[0] not in names:
                block["args"].append(list(arg))
        block["args"].sort(key=worker_arg_key)
        for key, value in env.items():
            if key not in block["env"]:
                block["env"][key] = value
        block["env"] = sorted_env(block["env"])

    # ---- Mooncake master placement ------------------------------------------------------

    @property
    def master_placement(self) -> str:
        """Which decoder generation the module was generated for, read from its format.

        The c4b47c36 decoder put a derived ``mooncake-master`` right after the last etcd/NATS
        block before the first worker; every later decoder puts it right before the first
        worker. The generator of that era wrote Dynamo routers as etcd, [nats], workers,
        frontend (frontend *last*); from 37da6c0b on the frontend comes before the workers. So
        a module in which some Dynamo router lists a ``dynamo-frontend`` after a worker expects
        the old rule; any other module the newest one. On real modules the two rules agree
        (with the frontend last, nothing but etcd/NATS precedes the first Dynamo worker); they
        differ only when such a module also has another kind of block ahead of the first worker
        (e.g. an ``sglang-router`` listed first), which a test shows.
        """
        if self._placement is None:
            self._placement = BEFORE_FIRST_WORKER
            for ci, cell in enumerate(self.cells):
                if "dynamo" in cell["routers"] and _frontend_after_worker(
                    self.materialise(ci, "dynamo")
                ):
                    self._placement = AFTER_CONTROL_PLANE
                    break
        return self._placement

    def _master_index(self, blocks: list[Block]) -> int:
        first_worker = next((i for i, b in enumerate(blocks) if b.get("kind") == "worker"), -1)
        if self.master_placement == AFTER_CONTROL_PLANE:
            limit = first_worker if first_worker >= 0 else len(blocks)
            index = 0
            for i in range(limit):
                if blocks[i].get("kind") in ("etcd", "nats"):
                    index = i + 1
            return index
        # JS `splice(-1, 0, x)` when no worker: before the last block (not reached in practice).
        return first_worker if first_worker >= 0 else max(len(blocks) - 1, 0)

    # ---- status, provenance, files, cases ------------------------------------------------

    def status_for(self, ci: int, pi: int, router: str, kv: str | None = None) -> str:
        """``verified`` / ``verified-pr`` / ``in-progress`` for the measured selection, else
        ``derived``."""
        cell = self._cell(ci)
        self._router(ci, router)
        if router != cell["submitted"] or self.target_tier(ci, pi, kv) != self.measured_tier(
            ci, pi
        ):
            return "derived"
        status = self.point_info(ci, pi).get("status")
        if not isinstance(status, str):
            raise self._error(f"cells[{ci}].points[{pi}]", "no provenance `status`")
        return status

    def point_info(self, ci: int, pi: int) -> dict[str, Any]:
        """Provenance of a point: cell ``prov`` merged with the point's own keys, ids expanded
        to the GitHub URLs older modules stored (``recipeUrl``, ``runUrl``, ``jobUrl``,
        ``prUrl``, ``useComment``)."""
        cell = self._cell(ci)
        point = cell["points"][self._point_index(ci, pi)]
        info = dict(cell.get("prov") or {})
        info.update((k, v) for k, v in point.items() if k != "patch")
        repo = ((self.data.get("source") or {}).get("repo") or "").rstrip("/")
        for url_key, id_key, build in _PROV_URLS:
            if url_key in info or info.get(id_key) in (None, ""):
                continue
            if url_key == "recipeUrl" and not info.get("sha"):
                continue
            if url_key == "useComment" and not info.get("pr"):
                continue
            info[url_key] = build(repo, info)
        return info

    def router_files(self, ci: int, router: str) -> dict[str, str]:
        """Config files the router's commands read: file id -> content."""
        files = self.data.get("files") or {}
        out: dict[str, str] = {}
        for fid in self._router(ci, router).get("files") or []:
            entry = files.get(fid) if isinstance(files, dict) else None
            if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
                raise self._error(f"cells[{ci}].routers.{router}.files", f"unknown file {js(fid)}")
            out[fid] = entry["content"]
        return out

    def cell_index(self, selector: str | int) -> int:
        """A cell by index or id (``configKey#n``); unknown ids list the close ones."""
        # isdigit() alone accepts "²", which int() refuses.
        numeric = isinstance(selector, str) and selector.isascii() and selector.isdigit()
        if isinstance(selector, int) or numeric:
            index = int(selector)
            self._cell(index)
            return index
        for ci, cell in enumerate(self.cells):
            if cell.get("id") == selector:
                return ci
        import difflib

        ids = [str(c.get("id")) for c in self.cells]
        close = difflib.get_close_matches(str(selector), ids, n=5, cutoff=0.4)
        hint = f"; closest: {', '.join(close)}" if close else ""
        raise self._error("cells", f"no cell with id {selector!r}{hint}")

    def default_cell(self) -> int:
        """The page's first selection: first hardware, its first checkpoint, first cell."""
        hardware = self.data.get("hardware") or []
        hw = hardware[0].get("id") if hardware and isinstance(hardware[0], dict) else None
        for ci, cell in enumerate(self.cells):
            if hw is None or cell.get("hw") == hw:
                return ci
        raise self._error("hardware", f"first hardware {js(hw)} has no cell")

    def routers(self, ci: int) -> list[str]:
        return sorted(self._cell(ci)["routers"])

    def case(self, ci: int, pi: int, router: str, kv: str | None = None) -> Case:
        """One selection as the oracle lists it (``kv`` None: the measured tier, shown as
        ``none`` when the point has none), each block's text by ``shell.format_block``."""
        from syncer.cookbook.shell import format_block

        blocks = self.blocks_for(ci, pi, router, kv)
        return Case(
            cell=ci,
            cell_id=str(self._cell(ci).get("id", ci)),
            point=pi,
            router=router,
            kv=kv or "none",
            status=self.status_for(ci, pi, router, kv),
            blocks=blocks,
            text=[format_block(b) for b in blocks],
        )

    def cases(self) -> Iterator[Case]:
        """Every (cell, point, router sorted by name, tier in ``kv.available``), as the oracle
        lists them."""
        for ci, cell in enumerate(self.cells):
            tiers = self.available_tiers(ci)
            for pi, point in enumerate(cell["points"]):
                for router in self.routers(ci):
                    for kv in tiers or [point.get("kv") or "none"]:
                        yield self.case(ci, pi, router, kv)


_KEY_PART = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def _key_path(where: str) -> tuple[str | int, ...]:
    """``cells[3].routers.sglang`` -> ("cells", 3, "routers", "sglang")."""
    if where == "module":
        return ()
    if where == "cell":
        return ("cells",)
    return tuple(int(index) if index else name for index, name in _KEY_PART.findall(where))


def _frontend_after_worker(blocks: list[Block]) -> bool:
    seen_worker = False
    for block in blocks:
        kind = block.get("kind")
        if kind == "worker":
            seen_worker = True
        elif kind == "dynamo-frontend" and seen_worker:
            return True
    return False


def overlay(source: Block, entry: dict[str, Any]) -> Block:
    """A ``ref`` / ``from`` entry on its source block: the ``drop`` keys removed, the entry's
    own keys set, then its ``diff`` applied (``SyncError`` for a diff that does not apply)."""
    drop = entry.get("drop") or []
    block = {k: v for k, v in clone(source).items() if k not in drop}
    for key, value in entry.items():
        if key not in OVERLAY_SKIP:
            block[key] = value
    return apply_diff(block, entry.get("diff"))


def apply_diff(block: Block, diff: Any) -> Block:
    """A copy of ``block`` with ``diff`` applied (the page's ``applyDiff``)."""
    if js_falsy(diff):
        return clone(block)
    if not isinstance(diff, dict):
        raise SyncError(f"expected a diff object, found {kind_of(diff)}")
    if not js_falsy(diff.get("block")):
        return clone(diff["block"])
    out = clone(block)
    dargs = diff.get("args") or {}
    if not isinstance(dargs, dict):
        raise SyncError("diff `args` must be an object of flag -> values | null")
    args = out.get("args")
    if not isinstance(args, list):
        raise SyncError("diff applied to a block without `args`")
    if not all(isinstance(a, list) and a and isinstance(a[0], str) for a in args):
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
        new_args.sort(key=worker_arg_key)
    out["args"] = new_args
    denv = diff.get("env") or {}
    if not isinstance(denv, dict):
        raise SyncError("diff `env` must be an object of key -> value | null")
    env = {k: v for k, v in (out.get("env") or {}).items() if not (k in denv and denv[k] is None)}
    for key, value in denv.items():
        if value is not None:
            env[key] = value
    out["env"] = sorted_env(env)
    return out
