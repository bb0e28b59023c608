"""`sync generate`'s use case: a cookbook model's data module and page section from InferenceX
configs and their pins (``sync.yaml``). Used by the CLI and by the bot.

Per config: render every point (``syncer.inferencex.render``), build the cells
(:mod:`syncer.encoder.rendered_cells`, KV tiers from :mod:`syncer.encoder.kv_donors`); then
encode, prove by decoding back, and write atomically only what changed. A script-launched
config's cells are kept from the existing module (proven case by case).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syncer.cookbook.decode import Decoder
from syncer.cookbook.jsmodule import load_module, parse_module, read_text
from syncer.encoder import cells as cells_mod
from syncer.encoder import encode
from syncer.encoder.cells import CellSpec, ModuleSpec, config_hardware
from syncer.encoder.edit import EditInputs, ModuleEdit, edit_module
from syncer.encoder.kv_donors import Donors, find_donors, mooncake_from
from syncer.encoder.page import read_page, update_page
from syncer.encoder.rendered_cells import (
    cells_for_config,
    checkpoint_chips,
    disambiguate,
    display_order,
    module_files,
    source_block,
)
from syncer.errors import SyncError
from syncer.fsio import inside_folder, present, write_all
from syncer.inferencex.cookbook_layout import NEWEST_LAYOUT
from syncer.inferencex.render import RenderedConfig
from syncer.inferencex.renders import Renderer, Renders
from syncer.inferencex.scripts import ScriptLaunchedError
from syncer.recent import Recent, by_value
from syncer.syncconfig import ConfigSpec, ModelSpec, Pin, SyncConfig, recorded_pin


@dataclass
class KeptConfig:
    """A script-launched config whose cells were kept from the existing module as they were:
    there is no recipe to derive them from (its commands come from its run's logs)."""

    key: str
    script: str
    cells: list[str]


@dataclass
class GenerateResult:
    model: str
    path: Path  # the data module
    changed: bool
    text: str
    page_path: Path | None = None
    page_changed: bool = False
    page_conflict: str | None = None  # a hand-edited page section left alone
    page_text: str | None = None  # the page to write when page_changed
    # The heading of a section people wrote that mounts the module: kept as written.
    page_kept: str | None = None
    cells: int = 0
    cases: int = 0
    kept: list[KeptConfig] = field(default_factory=list)
    # The folders the module and the page are written in: no symlink is followed out of them.
    folders: tuple[Path, ...] = ()
    # An edit of the published module (only the changed configs' cells written again), and
    # the changed configs that could not be rendered, whose published cells were kept: key ->
    # why.
    edit: ModuleEdit | None = None
    unrendered: dict[str, str] = field(default_factory=dict)
    # An update of a model with no module published yet: nothing edited, nothing written.
    unpublished: bool = False


# The InferenceX checkout every config is read from, or (the bot) the tree each key is read from.
Trees = Path | Callable[[str], Path]


def _by_key(
    renderer: Renders | Renderer | None, inferencex: Trees
) -> Callable[[str], RenderedConfig]:
    """Config key -> its rendering from ``inferencex``, each rendered once (:class:`Renders`):
    donors and cells ask for the same configs."""
    renders = Renders.of(renderer)
    if isinstance(inferencex, Path):
        checkout = inferencex
        return lambda key: renders.get(checkout, key)
    tree_of = inferencex
    return lambda key: renders.get(tree_of(key), key)


@dataclass
class _Existing:
    """The published module, decoded once, for the cells generation keeps."""

    path: Path | None
    spec: ModuleSpec | None = None
    decoder: Decoder | None = None
    value: dict[str, Any] | None = None

    def load(self) -> ModuleSpec | None:
        decoder = self._decoded()
        if self.spec is None and decoder is not None and self.value is not None:
            self.spec = cells_mod.cells_from_module(self.value, decoder, str(self.path))
        return self.spec

    def layout(self) -> str:
        """The block order new cells take: the module's own, the newest for a new module (or
        for a file there that is no module, which a rebuild replaces as before)."""
        try:
            decoder = self._decoded()
        except SyncError:
            return NEWEST_LAYOUT
        return cells_mod.module_layout(decoder) if decoder is not None else NEWEST_LAYOUT

    def _decoded(self) -> Decoder | None:
        if self.decoder is None and self.path is not None and present(self.path, "data module"):
            self.value = load_module(self.path).value
            self.decoder = Decoder(self.value, str(self.path))
        return self.decoder


@dataclass
class BuiltSpec:
    """The encoder's input for a whole model, and what was kept of the existing module."""

    spec: ModuleSpec
    kept: list[KeptConfig]  # script-launched configs whose cells were kept as they were
    existing: Decoder | None  # the existing module's decoder when cells were kept from it


def build_module_spec(
    model: ModelSpec,
    *,
    config: SyncConfig,
    inferencex: Trees,
    pins: dict[str, Pin] | None = None,
    today: str | None = None,
    renderer: Renders | Renderer | None = None,
    existing_path: Path | None = None,
) -> BuiltSpec:
    """Render every config of ``model`` and assemble the encoder's input (the cells of
    script-launched configs are taken from the module at ``existing_path``)."""
    existing = _Existing(existing_path)
    all_pins = {**config.pins(), **(pins or {})}
    get = _by_key(renderer, inferencex)
    scripts: dict[str, ScriptLaunchedError] = {}
    for cfg in model.configs:
        try:
            get(cfg.key)
        except ScriptLaunchedError as exc:
            scripts[cfg.key] = exc
    old = existing.load() if scripts else None
    donors = find_donors(model, config, get, existing.load)
    if donors.mooncake is None:
        # A config measured with a Mooncake store still needs the module's Mooncake settings
        # for its other points' derived tier: take them from the first such config.
        for cfg in model.configs:
            if cfg.key in scripts:
                continue
            found = mooncake_from(get(cfg.key), cfg.key, config_hardware(cfg, model))
            if found is not None:
                donors.mooncake = found
                break
    cells: list[CellSpec] = []
    kept: list[KeptConfig] = []
    for cfg in model.configs:
        if cfg.key in scripts:
            mine = _kept_cells(cfg, scripts[cfg.key], old, existing.path, config)
            cells.extend(mine)
            kept.append(
                KeptConfig(cfg.key, scripts[cfg.key].launch.describe(), [c.id for c in mine])
            )
            continue
        rendered = cells_for_config(cfg, model, get(cfg.key), all_pins[cfg.key], donors)
        cells.extend(cells_mod.laid_out(rendered, existing.layout()))
    disambiguate(cells)
    cells = display_order(cells, model, [c.key for c in model.configs])
    used_hw = {c.meta["hw"] for c in cells}
    spec = ModuleSpec(
        model=model.model,
        generated_on=today or _dt.datetime.now(_dt.UTC).date().isoformat(),
        source=source_block(config, pins),
        hardware=[dict(h) for h in model.hardware if h["id"] in used_hw],
        checkpoints=checkpoint_chips(cells),
        kv_mooncake=donors.mooncake,
        files=module_files(model, get, scripts, old),
        cells=cells,
    )
    return BuiltSpec(spec, kept, existing.decoder if kept else None)


def _kept_cells(
    cfg: ConfigSpec,
    refusal: ScriptLaunchedError,
    old: ModuleSpec | None,
    existing: Path | None,
    config: SyncConfig,
) -> list[CellSpec]:
    """A script-launched config's cells, kept from the existing module exactly as they are: no
    recipe to derive them from, and a run's logs are checked, not published (`sync verify`)."""
    mine = [c for c in (old.cells if old else []) if c.config_key == cfg.key]
    if not mine:
        where = existing if existing and existing.is_file() else None
        raise SyncError(
            f"{refusal.message}; its cells cannot be generated, and "
            + (f"{where} has none to keep" if where else "there is no existing module"),
            path=config.path,
            line=cfg.line,
        )
    return mine


def module_pins(value: Any, where: str) -> dict[str, Pin]:
    """Each config's pin from a data module's provenance (its first cell's first point, as
    ``cells_from_module`` reads every module version), in cell order. A cell whose provenance
    is not a valid pin is skipped: it is regenerated from its config's listing."""
    spec = cells_mod.cells_from_module(value, Decoder(value, where), where)
    out: dict[str, Pin] = {}
    for cell in spec.cells:
        if cell.config_key in out or not cell.points:
            continue
        pin = recorded_pin(cell.config_key, dict(cell.points[0].prov))
        if pin is not None:
            out[cell.config_key] = pin
    return out


def changed_configs(model: ModelSpec, value: Any, pins: dict[str, Pin], where: str) -> list[str]:
    """The configs of ``model`` whose inputs (commit, PR, run, /use comment, status, date) in
    ``pins`` differ from what the published module ``value`` records for them, or that it does
    not show yet: the only ones an update writes again (every other cell stays as
    published)."""
    recorded = module_pins(value, where)
    keys = {c.key for c in model.configs}
    return [k for k, pin in pins.items() if k in keys and recorded.get(k) != pin]


@dataclass
class EditedModule:
    """The published module edited for the changed configs, and what could not be."""

    edit: ModuleEdit
    kept: list[KeptConfig]
    unrendered: dict[str, str]


def edit_published(
    model: ModelSpec,
    changed: Collection[str],
    existing: Path,
    *,
    config: SyncConfig,
    inferencex: Trees,
    pins: dict[str, Pin] | None = None,
    gone: Collection[str] = (),
    today: str | None = None,
    renderer: Renders | Renderer | None = None,
    strict: bool = False,
) -> EditedModule:
    """The published module at ``existing`` with only the ``changed`` configs' cells written
    again (and the ``gone`` configs' cells removed); every other byte as published
    (:mod:`syncer.encoder.edit`). A changed config that cannot be rendered keeps its
    published cells: a script-launched one is listed in ``kept``, any other in ``unrendered``
    with the reason; one with no published cells to keep is an error, as is any that cannot
    be rendered when ``strict`` (a config asked for by name)."""
    old_text = read_text(existing)
    old_value = parse_module(old_text, str(existing)).value
    published = {
        str(c.get("configKey") or str(c.get("id", "")).partition("#")[0])
        for c in old_value.get("cells") or []
    }
    get = _by_key(renderer, inferencex)
    old = _Existing(existing)
    all_pins = {**config.pins(), **(pins or {})}
    kept: list[KeptConfig] = []
    unrendered: dict[str, str] = {}
    rendered: list[ConfigSpec] = []
    for key in changed:
        if key in gone:
            continue
        cfg = model.config(key)
        try:
            get(key)
        except ScriptLaunchedError as exc:
            if strict or key not in published:
                raise
            kept.append(KeptConfig(key, exc.launch.describe(), _published_ids(old_value, key)))
            continue
        except SyncError as exc:
            if strict or key not in published:
                raise
            unrendered[key] = exc.message
            continue
        rendered.append(cfg)
    # Only the event's configs are rendered: a donor whose own inputs did not change lends
    # what the module already borrowed from it, and nothing rendered needs no donor at all.
    donors = Donors()
    if rendered:
        donors = find_donors(
            model, config, get, old.load, published=lambda d: d not in changed, configs=rendered
        )
    if donors.mooncake is None:
        donors.mooncake = old_value.get("kvMooncake")
    fresh: dict[str, list[CellSpec]] = {}
    for cfg in rendered:
        fresh[cfg.key] = cells_for_config(cfg, model, get(cfg.key), all_pins[cfg.key], donors)
    every = [c for cells in fresh.values() for c in cells]
    disambiguate(every)
    order = [c.key for c in model.configs]
    fresh = {k: display_order(cells, model, order) for k, cells in fresh.items()}
    only_changed = dataclasses.replace(model, configs=rendered)
    inputs = EditInputs(
        fresh=fresh,
        gone=gone,
        source=source_block(config, pins),
        generated_on=today or _dt.datetime.now(_dt.UTC).date().isoformat(),
        hardware=[dict(h) for h in model.hardware],
        files=module_files(only_changed, get),
        kv_mooncake=donors.mooncake,
    )
    return EditedModule(edit_module(old_text, inputs, path=str(existing)), kept, unrendered)


def _published_ids(value: dict[str, object], key: str) -> list[str]:
    cells = value.get("cells")
    return [
        str(c.get("id"))
        for c in (cells if isinstance(cells, list) else [])
        if isinstance(c, dict) and str(c.get("id", "")).partition("#")[0] == key
    ]


def _existing_date(text: str | None, path: Path) -> str | None:
    """``generatedOn`` of the existing module's ``text``, if it parses."""
    if text is None:
        return None

    try:
        value = parse_module(text, str(path)).value
    except SyncError:
        return None
    return value.get("generatedOn") if isinstance(value, dict) else None


def generate_model(
    model: str,
    *,
    config: SyncConfig,
    inferencex: Trees,
    out_dir: Path,
    pins: dict[str, Pin] | None = None,
    check: bool = False,
    pages_dir: Path | None = None,
    today: str | None = None,
    force_page: bool = False,
    renderer: Renders | Renderer | None = None,
    only: str | None = None,
    changed: Collection[str] | None = None,
    gone: Collection[str] = (),
    update: bool = False,
) -> GenerateResult:
    """Generate ``<out_dir>/<org>/<model>.jsx`` (and the page section under ``pages_dir``).

    The module is decoded back and compared with every rendered point before anything is
    written; ``check`` writes nothing and only reports whether anything would change. The
    module keeps its ``generatedOn`` when nothing else changed, so a rerun is a no-op.
    ``only`` (one config) or ``changed`` (the configs whose inputs changed, as the bot knows
    them), with a module already there: an edit of it, only those configs' cells written
    again and ``gone`` configs' cells removed, every other byte kept
    (:func:`edit_published`). ``update``: the configs whose pin differs from what the
    existing module records (or that it does not show) are the ones asked for; with no module
    there yet, nothing is edited or written (``unpublished``).
    """
    spec_model = config.model(model)
    path = out_dir / spec_model.module_relpath
    # Read and written only where it really lies inside --out (a link out is refused).
    inside_folder(out_dir, path, "data module")
    asked = changed if changed is not None else [only] if only is not None else None
    if update and asked is None:
        if not present(path, "data module"):
            # An update edits what is published; a model with no module yet has nothing to
            # edit, and its first module is a whole generation, asked for without --update.
            return GenerateResult(spec_model.path, path, changed=False, text="", unpublished=True)
        value = parse_module(read_text(path), str(path)).value
        asked = changed_configs(spec_model, value, {**config.pins(), **(pins or {})}, str(path))
    if asked is not None and present(path, "data module"):
        result = _edited(
            spec_model, path, asked, gone, config=config,
            inferencex=inferencex, pins=pins, today=today, renderer=renderer,
            strict=changed is None,
        )  # fmt: skip
        _place(result, spec_model, out_dir, pages_dir, force=force_page)
        if not check:
            write_result(result)
        return result
    built = build_module_spec(
        spec_model, config=config, inferencex=inferencex, pins=pins, today=today,
        renderer=renderer, existing_path=path,
    )  # fmt: skip
    spec, kept = built.spec, built.kept
    reference: Decoder | None = None
    keep: set[str] | None = None
    if kept:
        # The kept cells are proven against the old module case by case.
        reference = built.existing
        keep = {cell for k in kept for cell in k.cells}
    old_text = read_text(path) if present(path, "data module") else None
    text, cases = _encoded(spec, path, old_text, reference, keep)
    result = GenerateResult(
        model=spec_model.path,
        path=path,
        changed=text != old_text,
        text=text,
        cells=len(spec.cells),
        cases=cases,
        kept=kept,
    )
    _place(result, spec_model, out_dir, pages_dir, force=force_page)
    if not check:
        write_result(result)
    return result


def _edited(
    model: ModelSpec,
    path: Path,
    changed: Collection[str],
    gone: Collection[str],
    **kw: object,
) -> GenerateResult:
    """``generate_model``'s edit of the module at ``path``; the old text when only the date
    would change."""
    done = edit_published(model, changed, path, gone=gone, **kw)  # type: ignore[arg-type]
    old_text = read_text(path)
    old = parse_module(old_text, str(path)).value
    text = done.edit.text
    if {**done.edit.value, "generatedOn": old.get("generatedOn")} == old and text.split(
        "export const", 1
    )[0] == old_text.split("export const", 1)[0]:
        text = old_text
    return GenerateResult(
        model=model.path,
        path=path,
        changed=text != old_text,
        text=text,
        cells=len(done.edit.value["cells"]),
        cases=done.edit.cases,
        kept=done.kept,
        edit=done.edit,
        unrendered=done.unrendered,
    )


def _encoded(
    spec: ModuleSpec,
    path: Path,
    old_text: str | None,
    reference: Decoder | None,
    keep: set[str] | None,
) -> tuple[str, int]:
    """The module's text, proven by decoding it back, and the number of cases proven; the old
    text when only the date would change."""
    header = encode.header_lines(spec.source)
    old_date = _existing_date(old_text, path)
    value, text, cases = _encode_once(spec, path, header, reference, keep)
    if old_date and old_date != spec.generated_on:
        # Same content under the old date is no change: keep the old text. Only the date
        # differs, so the proven value is emitted again rather than encoded and proven twice.
        dated = {**value, "generatedOn": old_date}
        if encode.module_text(dated, header) == old_text:
            text = old_text
    return text, cases


# Modules encoded and proven in this process, by their spec and header (see _encode_once).
_ENCODED: Recent[bytes, tuple[dict[str, object], str, int]] = Recent(8)


def _encode_once(
    spec: ModuleSpec,
    path: Path,
    header: list[str],
    reference: Decoder | None,
    keep: set[str] | None,
) -> tuple[dict[str, object], str, int]:
    """``encode_module``, once per distinct spec and header in a process: the bot generates a
    model's module for its trial verify and again for the publish, on another ref of the
    same cookbook, and both are nearly always the same cells. The encoder is a function of
    the spec and the header (``path`` only names a failure, and a failure is not kept); a
    proof against an old module (``reference``) is made every time. The value returned is
    shared: callers copy before changing it."""
    if reference is not None or keep is not None:
        return encode.encode_module(
            spec, path=str(path), header=header, reference=reference, keep=keep
        )
    key = by_value((spec, header))
    done = _ENCODED.recall(key)
    if done is None:
        done = encode.encode_module(spec, path=str(path), header=header)
        _ENCODED.keep(key, done)
    return done


def _place(
    result: GenerateResult,
    model: ModelSpec,
    out_dir: Path,
    pages_dir: Path | None,
    *,
    force: bool,
) -> None:
    """The folders ``result`` is written in (no symlink followed out of them), and its page
    section when there are pages: the page read only where it really lies inside them."""
    result.folders = (out_dir,)
    if pages_dir is not None:
        page_path = pages_dir / model.page
        inside_folder(pages_dir, page_path, "cookbook page")
        result.folders = (out_dir, pages_dir)
        _update_page(result, model, page_path, force=force)


def _update_page(result: GenerateResult, model: ModelSpec, page_path: Path, *, force: bool) -> None:
    """The page's AgentX section for ``result``'s module (a hand-edited section is left alone
    and reported unless ``force``)."""
    result.page_path = page_path
    if not page_path.is_file():
        raise SyncError("cookbook page not found", path=str(page_path))
    update = update_page(
        read_page(page_path),
        section=model.section,
        module=model.path,
        path=str(page_path),
        force=force,
    )
    result.page_changed = update.changed
    result.page_conflict = update.conflict
    result.page_kept = update.kept
    result.page_text = update.text if update.changed else None


def result_files(result: GenerateResult) -> dict[Path, str]:
    """The files ``result`` changes (module and page), for one all-or-nothing write."""
    files: dict[Path, str] = {}
    if result.changed:
        files[result.path] = result.text
    if result.page_text is not None and result.page_path is not None:
        files[result.page_path] = result.page_text
    return files


def write_results(results: list[GenerateResult]) -> None:
    """Write what ``generate_model(..., check=True)`` found changed, for every model at once:
    all files or none (a page that cannot be written leaves every module as it was)."""
    files: dict[Path, str] = {}
    folders: tuple[Path, ...] = ()
    for result in results:
        files.update(result_files(result))
        folders += result.folders
    write_all(files, folders=folders)


def write_result(result: GenerateResult) -> None:
    """Write one model's module and page, both or neither."""
    write_results([result])
