"""The shape check of a data module, and its located errors.

Every part of a module that the decoder, the shell text or a report reads must have the type
the format gives it, so a module of another shape is one ``SyncError`` naming the entry (and,
with the module text at hand, its line and column) instead of a traceback somewhere later.
The decoder checks the whole module once on load (``ModuleValidator.module``) and each block it
builds (``ModuleValidator.block``); the KV-tier transform checks the master block it inserts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import chain
from operator import itemgetter

from syncer.cookbook.jsvalues import is_int
from syncer.errors import SyncError
from syncer.wording import js
from syncer.wording import kind as kind_of

Locate = Callable[[tuple[str | int, ...]], tuple[int, int] | None]

# Optional top-level keys and the type each must have when present.
_TOP_LEVEL_TYPES: dict[str, type] = {
    "source": dict,
    "hardware": list,
    "checkpoints": list,
    "envs": list,
    "files": dict,
    "kvMooncake": dict,
}
# (as JavaScript says)
_TYPE_NAMES: dict[type, str] = {dict: "an object", list: "an array", str: "a string"}

_KEY_PART = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def _key_path(where: str) -> tuple[str | int, ...]:
    """``cells[3].routers.sglang`` -> ("cells", 3, "routers", "sglang")."""
    if where == "module":
        return ()
    if where == "cell":
        return ("cells",)
    return tuple(int(index) if index else name for index, name in _KEY_PART.findall(where))


class ModuleValidator:
    """Shape checks of one module file; ``error`` builds the located ``SyncError`` every check
    (and the decoder's own rules) raises."""

    def __init__(self, path: str, locate: Locate | None = None) -> None:
        self.path = path
        self._locate = locate
        self._checked: set[int] = set()

    def error(self, where: str, message: str) -> SyncError:
        """``where`` is the entry's path in the module (``cells[3].routers.sglang.blocks[0]``);
        with the module text at hand the error also gets that entry's line and column."""
        line = column = None
        if self._locate is not None:
            found = self._locate(_key_path(where))
            if found:
                line, column = found
        return SyncError(f"{where}: {message}", path=self.path, line=line, column=column)

    def module(self, data: object) -> None:
        """The whole module: top-level keys, ``kvMooncake`` and every cell."""
        if not isinstance(data, dict):
            raise self.error("module", f"expected an object, found {kind_of(data)}")
        cells = data.get("cells")
        if not isinstance(cells, list) or not cells:
            raise self.error("module", "expected a non-empty `cells` list (unknown module shape)")
        for key, kind in _TOP_LEVEL_TYPES.items():
            self.expect(data.get(key), kind, key)
        self.expect((data.get("source") or {}).get("prs"), dict, "source.prs")
        self.expect((data.get("source") or {}).get("repo"), str, "source.repo")
        for key in ("hardware", "checkpoints"):
            for i, entry in enumerate(data.get(key) or []):
                if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
                    raise self.error(f"{key}[{i}]", "expected an object with a string `id`")
        self._mooncake(data.get("kvMooncake") or {})
        for ci, cell in enumerate(cells):
            self._cell(ci, cell)

    def expect(self, value: object, kind: type, where: str) -> None:
        if value is not None and not isinstance(value, kind):
            raise self.error(where, f"expected {_TYPE_NAMES[kind]}, found {kind_of(value)}")

    def _mooncake(self, mooncake: dict[str, object]) -> None:
        self.expect(mooncake.get("master"), dict, "kvMooncake.master")
        self.args(mooncake.get("args"), "kvMooncake.args")
        for key in ("env", "decode_env"):
            self.env(mooncake.get(key), f"kvMooncake.{key}")

    def _cell(self, ci: int, cell: object) -> None:
        where = f"cells[{ci}]"
        if not isinstance(cell, dict):
            raise self.error(where, "expected an object")
        points = cell.get("points")
        if not isinstance(points, list) or not points:
            raise self.error(where, "expected a non-empty `points` list")
        for pi, point in enumerate(points):
            if not isinstance(point, dict):
                raise self.error(f"{where}.points[{pi}]", "expected an object")
            concs = point.get("concs")
            if concs is not None and not (
                isinstance(concs, list) and all(is_int(c) for c in concs)
            ):
                raise self.error(f"{where}.points[{pi}].concs", "expected a list of integers")
            self.expect(point.get("kv"), str, f"{where}.points[{pi}].kv")
        self.expect(cell.get("prov"), dict, f"{where}.prov")
        routers = cell.get("routers")
        if not isinstance(routers, dict) or not routers:
            raise self.error(where, "expected a non-empty `routers` object")
        for name, router in routers.items():
            blocks = router.get("blocks") if isinstance(router, dict) else None
            if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
                raise self.error(f"{where}.routers.{name}", "expected `blocks`: a list of objects")
            files = router.get("files")
            if files is not None and not (
                isinstance(files, list) and all(isinstance(f, str) for f in files)
            ):
                raise self.error(f"{where}.routers.{name}.files", "expected a list of file ids")
            install = router.get("install")
            if install is not None and not (
                isinstance(install, list) and all(isinstance(line, str) for line in install)
            ):
                raise self.error(f"{where}.routers.{name}.install", "expected a list of lines")
        submitted = cell.get("submitted")
        if not isinstance(submitted, str) or submitted not in routers:
            raise self.error(
                f"{where}.submitted", f"router {js(submitted)} is not one of {js(sorted(routers))}"
            )
        kv = cell.get("kv")
        if kv is not None and not (
            isinstance(kv, dict)
            and isinstance(kv.get("available"), list)
            and all(isinstance(t, str) for t in kv["available"])
        ):
            raise self.error(f"{where}.kv", "expected an object with an `available` list of tiers")
        hicache = (kv or {}).get("hicache")
        self.expect(hicache, dict, f"{where}.kv.hicache")
        self.args((hicache or {}).get("args"), f"{where}.kv.hicache.args")

    def args(self, args: object, where: str) -> None:
        if args is not None and not _is_args(args):
            raise self.error(where, "expected `args`: a list of [flag, values...] lists")

    def env(self, env: object, where: str) -> None:
        if env is not None and not (
            isinstance(env, dict) and not any(isinstance(v, _CONTAINERS) for v in env.values())
        ):
            raise self.error(where, "expected `env`: an object of name -> value")

    def block_once(self, block: object, where: str) -> None:
        """:meth:`block` for a block of the module that many cases insert (the derived
        Mooncake master): checked the first time only (the module's data does not change)."""
        if id(block) not in self._checked:
            self.block(block, where)
            self._checked.add(id(block))

    def block(self, block: object, where: str) -> None:
        """What the shell text needs: a kind, an ``args`` list of ``[flag, values...]`` lists,
        an ``env`` object, a ``role`` name and ``preamble`` lines (malformed data is an error
        here, not a traceback later)."""
        if not isinstance(block, dict) or not isinstance(block.get("kind"), str):
            raise self.error(where, "expected a block with a `kind` (or a `ref` / `from`)")
        self.args(block.get("args"), where)
        self.env(block.get("env"), where)
        self.expect(block.get("role"), str, f"{where}.role")
        preamble = block.get("preamble")
        if preamble is not None and not (
            isinstance(preamble, list) and all(isinstance(line, str) for line in preamble)
        ):
            raise self.error(f"{where}.preamble", "expected a list of lines")


# A tuple: isinstance with a union type (dict | list) takes twice as long, and every decoded
# case checks the blocks its patch or KV tier changed.
_CONTAINERS = (dict, list)


def _is_args(args: object) -> bool:
    """A list of ``[flag, values...]`` lists: a string flag, then values that are no objects
    or arrays. Each test over the whole list in C (``map``, then the few types met), not an
    ``isinstance`` per value: every decoded case checks the blocks its patch changed."""
    if not isinstance(args, list):
        return False
    if not all(issubclass(kind, list) for kind in set(map(type, args))) or not all(args):
        return False  # an arg that is no list, or an empty one
    if not all(issubclass(kind, str) for kind in set(map(type, map(itemgetter(0), args)))):
        return False
    values = set(map(type, chain.from_iterable(args)))
    return not any(issubclass(kind, _CONTAINERS) for kind in values)
