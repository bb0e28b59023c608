"""Edit a published data module: only the cells of the configs an event changes are written
again; every other byte stays as published, whichever generator wrote it.

A module in the generator's layout (``emit.dumps`` gives its text back exactly, which every
published module and every module of this tool is) is edited as its value and emitted again:
the layout is a function of the value alone, so a member whose value is kept keeps its text.
What is kept: every other config's cells as they are encoded (their ``envRef``s, ``ref``s,
``from``s, patches and provenance format), the ``envs`` pool (new envs are appended, none is
renumbered), the files, chips and checkpoints still used, ``source.main`` and the other PRs
of ``source.prs``, and key order everywhere. What changes: the changed configs' cells (a cell
whose commands are the same keeps its router entries and patches, so only its provenance
moves), their PRs in ``source.prs`` and the header, ``generatedOn``; a ``ref`` of a kept cell
follows its target to its new index, and is written out as the block it meant when its target
changed (named in ``ModuleEdit.repointed``: its commands are the same).

New cells are written in the module's own provenance format: a module whose cells carry no
``prov`` (the per-point URL format of 37da6c0b and before) gets per-point URLs.

The edit is proven before it is returned: the text parses back to the value, every case of
every kept cell decodes exactly as in the published module (blocks, status, provenance), every
new cell's (point, router) decodes to exactly its rendered blocks, and every block is safe to
paste. Rewriting a module in this tool's own compaction is ``sync reencode``'s job only.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from syncer import gcpause
from syncer.cookbook.decode import Decoder, provenance_urls
from syncer.cookbook.jsmodule import parse_module
from syncer.cookbook.jsvalues import clone
from syncer.cookbook.module_data import MooncakeTier
from syncer.cookbook.shell import check_publishable_each
from syncer.encoder import compact, encode, proof
from syncer.encoder import edit_lists as listed
from syncer.encoder.cells import CellSpec, laid_out, module_layout
from syncer.encoder.emit import emit_module, emitted_as
from syncer.errors import SyncError
from syncer.model import Block, Selection, block_data
from syncer.wording import count

# Key order of an old-format point (per-point provenance as GitHub URLs), as published.
_LEGACY_POINT_KEYS = (
    "concs",
    "item",
    "recipeUrl",
    "status",
    "runUrl",
    "prUrl",
    "pr",
    "date",
    "sha",
    "jobUrl",
    "override",
    "goldenAL",
    "useComment",
    "kv",
    "patch",
)
# Top-level key order of the generator (a key a module lacks is inserted where it belongs).
_TOP_KEYS = (
    "model",
    "generatedOn",
    "source",
    "hardware",
    "checkpoints",
    "envs",
    "kvMooncake",
    "files",
    "cells",
)
LAYOUT_REFUSED = (
    "is not in the generator's layout, so an edit would rewrite lines nobody changed; "
    "`sync reencode` rewrites it on purpose"
)


@dataclass
class ModuleEdit:
    """A published module with some configs' cells written again, proven."""

    text: str
    value: dict[str, Any]
    cases: int  # the new module's cases, every one decoded
    replaced: list[str] = field(default_factory=list)  # same id, written again
    unchanged: list[str] = field(default_factory=list)  # of those, commands as published
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    # Published cells of a written config whose deployment its new rendering no longer
    # produces: kept as published (with their own provenance), never dropped in silence.
    kept: list[str] = field(default_factory=list)
    repointed: list[str] = field(default_factory=list)  # kept cells whose ref target changed
    chips_added: list[str] = field(default_factory=list)
    chips_removed: list[str] = field(default_factory=list)

    @property
    def touched(self) -> bool:
        """Whether any cell was written again, added or removed."""
        return bool(self.replaced or self.added or self.removed)


@dataclass
class EditInputs:
    """What the edit writes: each changed config's new cells (display order, ids already told
    apart), the configs whose cells leave, this tool's ``source`` block for the pins (only
    the changed configs' PRs are taken from it), the date, the model's chips in display order
    (labels of a chip the module gains), the files new cells may name, and the Mooncake
    settings a module without any gains when a new cell offers that tier."""

    fresh: dict[str, list[CellSpec]]
    gone: Collection[str] = ()
    source: Mapping[str, Any] = field(default_factory=dict)
    generated_on: str = ""
    hardware: list[dict[str, str]] = field(default_factory=list)
    files: Mapping[str, Any] = field(default_factory=dict)
    kv_mooncake: MooncakeTier | None = None


def edit_module(old_text: str, inputs: EditInputs, *, path: str = "<module>") -> ModuleEdit:
    """The published module ``old_text`` with ``inputs``' configs written again (see the
    module's docstring), proven; a ``SyncError`` names the first thing that does not hold."""
    module = parse_module(old_text, path)
    if not emitted_as(module, old_text):
        raise SyncError(f"data module {LAYOUT_REFUSED}", path=path)
    with gcpause.paused():
        # new cells stand in the order of the generator version that wrote the module
        # one decoder of the published module: the layout reads its point-0 blocks, which the
        # editor and the proof read again from its memos
        published = Decoder(module.value, path)
        layout = module_layout(published)
        fresh = {key: laid_out(cells, layout) for key, cells in inputs.fresh.items()}
        editor = _Editor(module.value, dataclasses.replace(inputs, fresh=fresh), path, published)
        value = editor.edited()
        header = _header(list(module.header), module.value.get("source") or {}, value["source"])
        text = emit_module(header, module.name, value)
        if parse_module(text, path).value != value:
            raise SyncError("edit: the emitted text does not parse back to its value", path=path)
        cases = editor.prove(value)
    return ModuleEdit(text=text, value=value, cases=cases, **editor.summary())


class _Editor:
    def __init__(
        self, old: dict[str, Any], inputs: EditInputs, path: str, decoder: Decoder
    ) -> None:
        self.old = old
        self.inputs = inputs
        self.path = path
        self.decoder = decoder  # of ``old``, which the editor never changes
        self.old_cells: list[dict[str, Any]] = list(old.get("cells") or [])
        self.legacy = not any("prov" in c for c in self.old_cells)
        self.repo = str((old.get("source") or {}).get("repo") or "").rstrip("/")
        # new index -> (old index or None, new spec or None)
        self.plan: list[tuple[int | None, CellSpec | None]] = []
        self.old_to_new: dict[int, int] = {}
        self.removed: list[str] = []
        self.kept: list[str] = []  # a changed config's cells its new rendering lacks
        self.unchanged: list[str] = []
        self.repointed: list[str] = []
        self.chips_added: list[str] = []
        self.chips_removed: list[str] = []

    # -- which cell goes where ---------------------------------------------------------------

    def _place(self) -> None:
        """Kept cells where they are. A changed config's new cell takes the place (and the
        id) of its published cell of the same deployment (chip, checkpoint, label), the one of
        the same id first; its other new cells go after its last old cell (a new config's
        after the last cell of its chip) when no cell after that one is the target of a
        ``ref`` (inserting would renumber it in cells nobody changed), else last. A published
        cell of a changed config whose deployment the new rendering no longer produces stays
        as published (``kept``): a cell leaves only with its config (``gone``)."""
        gone = set(self.inputs.gone)
        changed = set(self.inputs.fresh) | gone
        matched = self._match()
        taken = {str(c["id"]) for ci, c in enumerate(self.old_cells) if ci not in matched}
        for ci, spec in matched.items():
            spec.meta["id"] = str(self.old_cells[ci]["id"])
        placed = {id(spec) for spec in matched.values()}
        last_of: dict[str, int] = {}
        for ci, cell in enumerate(self.old_cells):
            last_of[_config(cell)] = ci
        after: dict[int, list[CellSpec]] = {}
        tail: list[CellSpec] = []
        for key, cells in self.inputs.fresh.items():
            rest = [c for c in cells if id(c) not in placed]
            if not rest:
                continue
            for spec in rest:
                spec.meta["id"] = _free_id(spec.id, key, taken | {s.id for s in matched.values()})
                taken.add(spec.id)
            anchor = last_of.get(key)
            if anchor is None:
                hw = rest[0].meta.get("hw")
                same_hw = [
                    ci
                    for ci, c in enumerate(self.old_cells)
                    if c.get("hw") == hw and _config(c) not in changed
                ]
                anchor = same_hw[-1] if same_hw else None
            if anchor is None or any(t > anchor for t in self._ref_targets()):
                tail.extend(rest)
            else:
                after.setdefault(anchor, []).extend(rest)
        for ci, cell in enumerate(self.old_cells):
            key = _config(cell)
            if key in gone:
                self.removed.append(str(cell["id"]))
            elif ci in matched:
                self.plan.append((ci, matched[ci]))
            else:
                if key in changed:
                    self.kept.append(str(cell["id"]))
                self.plan.append((ci, None))
            self.plan.extend((None, spec) for spec in after.get(ci, []))
        self.plan.extend((None, spec) for spec in tail)
        self._fresh_first()
        self.old_to_new = {oci: ni for ni, (oci, _) in enumerate(self.plan) if oci is not None}

    def _match(self) -> dict[int, CellSpec]:
        """Each changed config's published cell (by index) -> its new cell of the same
        deployment: the same id first, then in order."""
        out: dict[int, CellSpec] = {}
        for key, cells in self.inputs.fresh.items():
            olds = [ci for ci, c in enumerate(self.old_cells) if _config(c) == key]
            free = list(cells)
            for same_id in (True, False):
                for ci in olds:
                    if ci in out:
                        continue
                    spec = next(
                        (
                            s
                            for s in free
                            if _deployment(s.meta) == _deployment(self.old_cells[ci])
                            and (not same_id or s.id == str(self.old_cells[ci]["id"]))
                        ),
                        None,
                    )
                    if spec is not None:
                        out[ci] = spec
                        free.remove(spec)
        return out

    def _fresh_first(self) -> None:
        """A changed config whose first cell is a kept one changes places with its first
        written cell: a config's first cell records its pin (``module_pins``), which must be
        the one its cells were written for, or the next event would write them again."""
        for key in self.inputs.fresh:
            mine = [ni for ni, (oci, spec) in enumerate(self.plan) if self._config_at(ni) == key]
            fresh = [ni for ni in mine if self.plan[ni][1] is not None]
            if mine and fresh and self.plan[mine[0]][1] is None:
                a, b = mine[0], fresh[0]
                self.plan[a], self.plan[b] = self.plan[b], self.plan[a]

    def _config_at(self, ni: int) -> str:
        oci, spec = self.plan[ni]
        return spec.config_key if spec is not None else _config(self.old_cells[oci or 0])

    def _ref_targets(self) -> set[int]:
        return {
            entry["ref"][0]
            for cell in self.old_cells
            for router in cell["routers"].values()
            for entry in router.get("blocks") or []
            if isinstance(entry.get("ref"), list) and entry["ref"]
        }

    def _has_old(self, spec: CellSpec, key: str) -> bool:
        return any(str(c["id"]) == spec.id and _config(c) == key for c in self.old_cells)

    # -- the new value -------------------------------------------------------------------------

    def edited(self) -> dict[str, Any]:
        self._place()
        envs: list[dict[str, str]] = copy.deepcopy(list(self.old.get("envs") or []))
        pooled = {json.dumps(e): i for i, e in enumerate(envs) if isinstance(e, dict)}
        pool = encode.Pool()
        clean = self._independent()
        for ni, (oci, spec) in enumerate(self.plan):
            if spec is None and oci is not None:
                for router in self.old_cells[oci]["routers"]:
                    if (oci, router) in clean:
                        pool.add(ni, router, self._old_blocks(oci, 0, router))
        cells: list[dict[str, Any]] = []
        fresh_entries: list[dict[str, Any]] = []
        for ni, (oci, spec) in enumerate(self.plan):
            if spec is None:
                assert oci is not None
                cells.append(copy.deepcopy(self.old_cells[oci]))
                continue
            value, entries = self._new_cell(oci, spec, pool)
            cells.append(value)
            fresh_entries.extend(entries)
            for router in spec.routers:
                pool.add(ni, router, spec.points[0].blocks[router])
        self._follow_refs(cells, pooled, fresh_entries)
        for entry in fresh_entries:
            env = entry.get("env")
            if "kind" in entry and isinstance(env, dict) and json.dumps(env) in pooled:
                del entry["env"]
                entry["envRef"] = pooled[json.dumps(env)]
        holder = [{"routers": {"r": {"blocks": fresh_entries}}}]
        envs.extend(encode.pool_envs(holder, start=len(envs)))
        return self._module(cells, envs)

    def _independent(self) -> set[tuple[int, str]]:
        """The kept cells' routers whose blocks are made without any block of a changed or
        removed cell (through ``ref`` and ``from`` chains): the only ones a new cell may
        ``ref``, so no new ``ref`` can close a cycle through a kept one."""
        kept = {oci for oci, spec in self.plan if oci is not None and spec is None}
        deps: dict[tuple[int, str], set[tuple[int, str]]] = {}
        for ci, cell in enumerate(self.old_cells):
            for router, entries in cell["routers"].items():
                mine = deps.setdefault((ci, router), set())
                for entry in entries.get("blocks") or []:
                    ref = entry.get("ref")
                    if isinstance(ref, list) and len(ref) == 3:
                        mine.add((ref[0], ref[1]))
                    if "from" in entry:
                        mine.add((ci, str(cell.get("submitted"))))
        clean: dict[tuple[int, str], bool] = {}

        def is_clean(node: tuple[int, str], seen: frozenset[tuple[int, str]]) -> bool:
            if node not in clean:
                if node[0] not in kept or node in seen:
                    return False
                clean[node] = all(is_clean(d, seen | {node}) for d in deps.get(node, ()))
            return clean[node]

        return {node for node in deps if is_clean(node, frozenset())}

    def _old_blocks(self, ci: int, pi: int, router: str) -> list[Block]:
        """The published blocks, shared with the decoder's memos: they are compared and
        pooled as diff sources, never changed; one put into the module is copied there."""
        return self.decoder.shown_blocks(Selection(ci, pi, router, None))

    def _new_cell(
        self, oci: int | None, spec: CellSpec, pool: encode.Pool
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """A changed config's cell in the module's format, and its entries written anew (for
        the env pool). A cell whose commands are as published keeps its old router entries and
        its points' patches."""
        value: dict[str, Any] = encode.encode_cell(spec, pool)
        old = self.old_cells[oci] if oci is not None else None
        if old is not None and self._same_commands(oci, old, spec):
            self.unchanged.append(spec.id)
            routers = copy.deepcopy(old["routers"])
            for name, meta in spec.routers.items():
                for key, now in (("install", list(meta.install)), ("files", list(meta.files))):
                    if routers[name].get(key, []) != now:
                        routers[name][key] = now
            value["routers"] = routers
            for pi, point in enumerate(value["points"]):
                patch = old["points"][pi].get("patch")
                point.pop("patch", None)
                if patch is not None:
                    point["patch"] = copy.deepcopy(patch)
            entries = []
        else:
            entries = [e for r in value["routers"].values() for e in r["blocks"] if "kind" in e]
        if self.legacy:
            value = self._legacy(value)
        return value, entries

    def _same_commands(self, oci: int | None, old: dict[str, Any], spec: CellSpec) -> bool:
        assert oci is not None
        if list(old["routers"]) != list(spec.routers) or len(old["points"]) != len(spec.points):
            return False
        return all(
            compact.same_list(self._old_blocks(oci, pi, r), point.blocks[r])
            for pi, point in enumerate(spec.points)
            for r in spec.routers
        )

    def _legacy(self, value: dict[str, Any]) -> dict[str, Any]:
        """``value`` (newest format) with its provenance per point as GitHub URLs, as modules
        written before cell ``prov`` carry it (``srtSlurm``, which they never carried, left
        out)."""
        prov = value.pop("prov", {})
        points = []
        for point in value["points"]:
            info = {**prov, **point}
            info.update(provenance_urls(self.repo, info))
            points.append({k: info[k] for k in _LEGACY_POINT_KEYS if k in info})
        out = {k: v for k, v in value.items() if k not in ("points", "routers")}
        out["points"] = points
        out["routers"] = value["routers"]
        return out

    def _follow_refs(
        self, cells: list[dict[str, Any]], pooled: dict[str, int], fresh: list[dict[str, Any]]
    ) -> None:
        """Kept entries' ``ref``s renumbered to their target's new index; one whose target
        block changed or left is written out as the block it meant (with the pool's env)."""
        for ni, (oci, spec) in enumerate(self.plan):
            if oci is None or (spec is not None and spec.id not in self.unchanged):
                continue  # a new or rewritten cell's entries are new
            for router, entry_list in cells[ni]["routers"].items():
                for bi, entry in enumerate(entry_list["blocks"]):
                    ref = entry.get("ref")
                    if not isinstance(ref, list) or len(ref) != 3:
                        continue
                    target = self._ref_target(ref)
                    if target is not None:
                        entry["ref"] = [target, ref[1], ref[2]]
                        continue
                    block = block_data(clone(self._old_blocks(oci, 0, router)[bi]))
                    entry_list["blocks"][bi] = block
                    fresh.append(block)
                    name = str(cells[ni]["id"])
                    if name not in self.repointed:
                        self.repointed.append(name)

    def _ref_target(self, ref: list[Any]) -> int | None:
        """The new index of the cell ``ref`` names when its block is the same there."""
        cj, router, bj = ref
        if cj not in self.old_to_new:
            return None
        nj = self.old_to_new[cj]
        _, spec = self.plan[nj]
        if spec is None or spec.id in self.unchanged:
            return nj
        blocks = spec.points[0].blocks.get(router)
        old = self._old_blocks(cj, 0, router)
        if blocks is None or bj >= len(blocks) or not compact.same(blocks[bj], old[bj]):
            return None
        return nj

    def _module(self, cells: list[dict[str, Any]], envs: list[dict[str, str]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        keys = [k for k in _TOP_KEYS if k in self.old or k in ("generatedOn", "cells")]
        keys += [k for k in self.old if k not in keys]
        if self.old.get("kvMooncake") is None and self._needs_mooncake(cells):
            keys.insert(keys.index("files") if "files" in keys else len(keys) - 1, "kvMooncake")
        for key in keys:
            if key == "generatedOn":
                out[key] = self.inputs.generated_on or self.old.get(key)
            elif key == "source":
                out[key] = self._source(cells)
            elif key == "hardware":
                chips = listed.hardware(self.old, self.inputs.hardware, cells, self.path)
                out[key], self.chips_added, self.chips_removed = chips
            elif key == "checkpoints":
                out[key] = listed.checkpoints(self.old, cells, legacy=self.legacy)
            elif key == "envs":
                out[key] = envs
            elif key == "kvMooncake" and self.old.get(key) is None:
                out[key] = copy.deepcopy(self.inputs.kv_mooncake)
            elif key == "files":
                out[key] = listed.files(self.old, self.old_cells, cells, self.inputs.files)
            elif key == "cells":
                out[key] = cells
            else:
                out[key] = copy.deepcopy(self.old[key])
        return out

    def _needs_mooncake(self, cells: list[dict[str, Any]]) -> bool:
        return self.inputs.kv_mooncake is not None and any(
            "mooncake" in ((c.get("kv") or {}).get("available") or []) for c in cells
        )

    def _source(self, cells: list[dict[str, Any]]) -> dict[str, Any]:
        """The published ``source``; the changed configs' PRs set from this tool's block, and
        a PR no cell names any more (it named only the cells that left) dropped."""
        source = copy.deepcopy(self.old.get("source") or {})
        prs: dict[str, Any] = dict(source.get("prs") or {})
        new_prs = dict(self.inputs.source.get("prs") or {})
        named_now = {pr for c in cells for pr in self._prs_named(c)}
        for cells_of_key in self.inputs.fresh.values():
            for spec in cells_of_key:
                for point in spec.points:
                    pr = point.prov.get("pr")
                    if pr is not None and pr in new_prs:
                        prs[pr] = copy.deepcopy(new_prs[pr])
        named_before = {
            pr
            for c in self.old_cells
            if _config(c) in set(self.inputs.fresh) | set(self.inputs.gone)
            for pr in self._prs_named(c)
        }
        for pr in named_before - named_now:
            prs.pop(pr, None)
        if "prs" in source or prs:
            source["prs"] = prs
        return source

    def _prs_named(self, cell: dict[str, Any]) -> set[str]:
        out = set()
        for point in cell.get("points") or []:
            info = {**(cell.get("prov") or {}), **point}
            if info.get("pr") is not None and info.get("status") != "verified":
                out.add(str(info["pr"]))
        return out

    # -- the proof -----------------------------------------------------------------------------

    def prove(self, value: dict[str, Any]) -> int:
        decoder = Decoder(value, self.path)
        cases = list(decoder.cases(fresh=False))
        kept = {
            str(self.old_cells[oci]["id"])
            for oci, spec in self.plan
            if oci is not None and spec is None
        }
        proof.compare_reference(cases, decoder, self.decoder, self.path, kept)
        for ni, (_, spec) in enumerate(self.plan):
            if spec is None:
                continue
            for pi, point in enumerate(spec.points):
                for router in spec.routers:
                    got = decoder.shown_blocks(Selection(ni, pi, router, None))
                    if not compact.same_list(point.blocks[router], got):
                        raise SyncError(
                            f"edit: cell {spec.id} point {pi} router {router} does not decode "
                            "to its rendered commands",
                            path=self.path,
                        )
        check_publishable_each(
            (f"{self.path}: {c.cell_id} point {c.point} {c.router} {c.kv}", c.blocks) for c in cases
        )
        return len(cases)

    def summary(self) -> dict[str, list[str]]:
        old_ids = {str(c["id"]) for c in self.old_cells}
        return {
            "replaced": [s.id for o, s in self.plan if o is not None and s is not None],
            "unchanged": list(self.unchanged),
            "added": [
                s.id for o, s in self.plan if o is None and s is not None and s.id not in old_ids
            ],
            "removed": list(self.removed),
            "kept": list(self.kept),
            "repointed": list(self.repointed),
            "chips_added": list(self.chips_added),
            "chips_removed": list(self.chips_removed),
        }


def _deployment(cell: Mapping[str, Any]) -> tuple[str, str, str]:
    """What a reader picks a cell by: its chip, checkpoint and deployment label."""
    return (str(cell.get("hw")), str(cell.get("ckpt")), str(cell.get("label")))


def _free_id(wanted: str, key: str, taken: set[str]) -> str:
    """``wanted`` unless a cell kept or matched holds it, else the config's first free
    ``<key>#<n>``."""
    if wanted not in taken:
        return wanted
    n = 0
    while f"{key}#{n}" in taken:
        n += 1
    return f"{key}#{n}"


def _config(cell: dict[str, Any]) -> str:
    return str(cell.get("configKey") or _key_of(cell))


def _key_of(cell: dict[str, Any]) -> str:
    return str(cell.get("id", "")).partition("#")[0]


def _header(
    header: list[str], old_source: Mapping[str, Any], source: Mapping[str, Any]
) -> list[str]:
    """The header with the PR list of ``source``, when the published header is this
    template's for the published source (another generator's header is kept as it is)."""
    try:
        if encode.header_lines(dict(old_source)) != header:
            return header
        return encode.header_lines(dict(source))
    except SyncError:
        return header


def describe(edit: ModuleEdit) -> str:
    """One line for a report: what the edit wrote again, added, removed."""
    parts = [f"{count(len(edit.replaced), 'cell')} written again"]
    if edit.unchanged:
        parts.append(f"{len(edit.unchanged)} of them with the same commands")
    if edit.added:
        parts.append(f"{count(len(edit.added), 'cell')} added")
    if edit.removed:
        parts.append(f"{count(len(edit.removed), 'cell')} removed")
    if edit.kept:
        parts.append(
            f"{count(len(edit.kept), 'cell')} its config's new rendering no longer produces "
            "kept as published"
        )
    if edit.repointed:
        parts.append(f"{count(len(edit.repointed), 'kept cell')} re-pointed (same commands)")
    return ", ".join(parts)
