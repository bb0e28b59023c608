"""`sync adopt`'s use case: the ``sync.yaml`` that reproduces a cookbook another generator wrote.

A cookbook checkout is read as the page reads it: every data module under
``docs/src/snippets/agentx/<org>/<model>.jsx`` decoded completely (``cells_from_module``, any
format version), and every page under ``docs/cookbook/`` searched for the module it mounts
(``page.read_mount``: its data import and ``<AgentX data={agentx} />``). What the published
cells show becomes the configuration: the model's name, its page and the heading its section
has there, the hardware chips in their order, a ``match`` rule per model prefix of its config
keys, the KV donors its cells name (the HiCache donor most cells name, a config's own where its
cells name another), and per config its pin (the provenance of its points) and
the overrides its cells carry (detail, hardware, image status and commit, setup, install lines,
disclosures, why Mooncake is unavailable). Only values every cell of a config agrees on are
written: a value that differs between the cells of one config (a detail naming the cell's
speculative setting) is the renderer's to derive.

Nothing is guessed: a module no page mounts, a page mounting a module the checkout lacks, two
pages mounting one module and a page the mount reader refuses are errors naming the file and
line, and nothing is written. The text is read back by ``parse_sync_config`` before it is given
out, so what ``sync adopt`` writes is a configuration the other commands accept.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from syncer.cookbook.decode import Decoder
from syncer.cookbook.jsmodule import locate, parse_module, read_text
from syncer.encoder.cells import CellSpec, ModuleSpec, cells_from_module, config_hardware
from syncer.encoder.page import mount_heading, read_mount, read_page
from syncer.encoder.rendered_cells import image_commit
from syncer.errors import SyncError
from syncer.fsio import inside_folder
from syncer.model import ROUTERS, PointStatus
from syncer.syncconfig import (
    MODEL_PATH,
    PIN_VALUES,
    ConfigSpec,
    ModelSpec,
    Pin,
    SyncConfig,
    is_pin_value,
    parse_sync_config,
)
from syncer.wording import count, js

SNIPPETS = "docs/src/snippets/agentx"
PAGES = "docs/cookbook"
# The heading a page mounting the module above every heading gets for a section made anew.
DEFAULT_SECTION = "Agentic Long-Context Deployment"
# The disclosures sync.yaml can state (syncconfig); the others are the policy's to derive.
STATED_DISCLOSURES = ("synthetic-acceptance", "chat-template")


@dataclass
class AdoptedModel:
    """One model as adopted: what the report says of it."""

    path: str
    page: str
    section: str
    configs: int
    cells: int


@dataclass
class Adoption:
    text: str  # the sync.yaml
    config: SyncConfig  # that text, read back
    models: list[AdoptedModel] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the configuration cannot state


@dataclass
class _Module:
    path: str  # <org>/<model>
    file: Path
    spec: ModuleSpec
    text: str


def adopt(checkout: Path, *, label: str | None = None) -> Adoption:
    """The ``sync.yaml`` reproducing the AgentX modules and pages of cookbook ``checkout``;
    ``label`` names the checkout in the file's header (e.g. its commit)."""
    modules = _modules(checkout)
    pages = _pages(checkout, modules)
    for module in modules.values():
        if module.path not in pages:
            raise SyncError(
                f"no page under {PAGES}/ mounts this module (import {{ agentx }} from "
                f'"/src/snippets/agentx/{module.path}.jsx" and <AgentX data={{agentx}} />); '
                "sync.yaml needs the page it is shown on",
                path=str(module.file),
                line=_export_line(module.text),
            )
    _one_model_per_config(modules)
    notes: list[str] = []
    newest = max(modules.values(), key=lambda m: (m.spec.generated_on, m.path))
    main = str(newest.spec.source.get("main") or "")
    repo = str(newest.spec.source.get("repo") or "").rstrip("/")
    lines = _header(label, newest)
    lines += ["inferencex:", f"  repo: {_q(repo)}", f"  main: {_q(main)}", "", "models:"]
    adopted: list[AdoptedModel] = []
    for module in sorted(modules.values(), key=lambda m: m.path):
        if module.spec.source.get("main") != main:
            notes.append(
                f"{module.path}: generated at InferenceX main "
                f"{str(module.spec.source.get('main'))[:12]}, the configuration reads "
                f"{main[:12]} (one main for every model): its header changes at the next sync"
            )
        page, section = pages[module.path]
        entry, model_notes = _model_lines(module, page, section)
        lines += entry
        notes += model_notes
        adopted.append(
            AdoptedModel(
                path=module.path,
                page=page,
                section=section,
                configs=len({c.config_key for c in module.spec.cells}),
                cells=len(module.spec.cells),
            )
        )
    text = "\n".join(lines) + "\n"
    return Adoption(text, parse_sync_config(text, "(adopted sync.yaml)"), adopted, notes)


def _one_model_per_config(modules: dict[str, _Module]) -> None:
    """A config is shown by one model (sync.yaml lists it once)."""
    owner: dict[str, str] = {}
    for module in sorted(modules.values(), key=lambda m: m.path):
        for cell in module.spec.cells:
            first = owner.setdefault(cell.config_key, module.path)
            if first != module.path:
                raise SyncError(
                    f"config {js(cell.config_key)} has cells in {first} too; sync.yaml shows a "
                    "config on one model's page",
                    path=str(module.file),
                    line=_cell_line(module, cell.id),
                )


def _modules(checkout: Path) -> dict[str, _Module]:
    root = checkout / SNIPPETS
    if not root.is_dir():
        raise SyncError(
            f"no {SNIPPETS}/ folder: not a cookbook checkout (SGLang's repository)",
            path=str(checkout),
        )
    out: dict[str, _Module] = {}
    for file in sorted(root.glob("*/*.jsx")):
        # (a checkout is anyone's: a module, or an org folder, linking out of it is not read)
        inside_folder(checkout, file, "cannot read data module")
        path = file.relative_to(root).with_suffix("").as_posix()
        if not MODEL_PATH.fullmatch(path):
            raise SyncError(f"module path {js(path)} is not '<org>/<model>'", path=str(file))
        text = read_text(file)
        data = parse_module(text, str(file)).value
        # Located in the text: a malformed entry is named with its line, not only the file.
        decoder = Decoder(data, str(file), locate=functools.partial(locate, text))
        spec = cells_from_module(data, decoder, str(file))
        out[path] = _Module(path, file, spec, text)
    if not out:
        raise SyncError(f"no data modules under {SNIPPETS}/<org>/<model>.jsx", path=str(checkout))
    return out


def _pages(checkout: Path, modules: dict[str, _Module]) -> dict[str, tuple[str, str]]:
    """Module path -> (its page inside the checkout, the heading of its section there)."""
    out: dict[str, tuple[str, str]] = {}
    lines: dict[str, int] = {}
    for file in sorted((checkout / PAGES).rglob("*.mdx")):
        inside_folder(checkout, file, "cannot read cookbook page")
        rel = file.relative_to(checkout).as_posix()
        found = read_mount(read_page(file), str(file))
        if found is None:
            continue
        module, mount = found
        if module not in modules:
            raise SyncError(
                f"the page mounts the AgentX data of {js(module)}, which the checkout lacks "
                f"({SNIPPETS}/{module}.jsx)",
                path=str(file),
                line=mount.data_import + 1,
            )
        if module in out:
            raise SyncError(
                f"{js(module)} is already mounted by {out[module][0]} (line {lines[module]}); "
                "a module is shown on one page",
                path=str(file),
                line=mount.mount + 1,
            )
        out[module] = (rel, mount_heading(mount) or DEFAULT_SECTION)
        lines[module] = mount.mount + 1
    return out


def _export_line(text: str) -> int:
    at = text.find("export ")
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def _header(label: str | None, newest: _Module) -> list[str]:
    where = f" ({label})" if label else ""
    return [
        "# The SGLang cookbook's AgentX configuration, adopted by `sync adopt` from a cookbook",
        f"# checkout{where}. Every model, page, section heading, hardware order, match rule,",
        "# KV donor, pin and per-config override below is what its published modules and pages",
        f"# show; the newest module is {newest.path}, generated {newest.spec.generated_on}.",
        "# The fields are described in the bundled example's sync.yaml; docs/adopting.md says",
        "# how a cookbook is taken over.",
        "",
    ]


def _q(value: str) -> str:
    """A YAML scalar: JSON's double-quoted string, which YAML reads as the same text."""
    return json.dumps(value, ensure_ascii=False)


def _model_lines(module: _Module, page: str, section: str) -> tuple[list[str], list[str]]:
    spec = module.spec
    notes: list[str] = []
    by_key: dict[str, list[CellSpec]] = {}
    for cell in spec.cells:
        by_key.setdefault(cell.config_key, []).append(cell)
    lines = [
        f"  - path: {_q(module.path)}",
        f"    model: {_q(spec.model)}",
        f"    page: {_q(page)}",
        f"    section: {_q(section)}",
        "    hardware:",
        *(f"      - {{id: {_q(h['id'])}, label: {_q(h['label'])}}}" for h in spec.hardware),
        "    match:",
        f"      model-prefix: [{', '.join(_q(p) for p in _prefixes(by_key))}]",
    ]
    donors = _donors(spec)
    if donors:
        lines.append("    kv_donors:")
        lines += [f"      {kind}: {_q(key)}" for kind, key in donors]
    lines.append("    configs:")
    model = ModelSpec(
        path=module.path, model=spec.model, page=page, section=section,
        hardware=spec.hardware, configs=[],
    )  # fmt: skip
    model_donor = dict(donors).get("hicache")
    for key, cells in by_key.items():
        lines += _config_lines(key, cells, model, module, notes, model_donor)
    return [*lines, ""], notes


def _prefixes(by_key: dict[str, list[CellSpec]]) -> list[str]:
    # An InferenceX key starts with its model prefix (``dsv41flash-fp4-gb300-...``).
    return list(dict.fromkeys(key.split("-", 1)[0] for key in by_key))


def _donors(spec: ModuleSpec) -> list[tuple[str, str]]:
    """The model's KV donors: the HiCache donor most of its cells name (the others are stated
    per config), and the donor of the module's Mooncake settings."""
    out: list[tuple[str, str]] = []
    hicache = Counter(d for d in (_hicache_donor(c) for c in spec.cells) if d)
    if hicache:
        out.append(("hicache", hicache.most_common(1)[0][0]))
    mooncake = (spec.kv_mooncake or {}).get("donor")
    if mooncake:
        out.append(("mooncake", str(mooncake)))
    return out


def _hicache_donor(cell: CellSpec) -> str | None:
    donor = ((cell.meta.get("kv") or {}).get("hicache") or {}).get("donor")
    return str(donor) if donor else None


def _config_lines(
    key: str,
    cells: list[CellSpec],
    model: ModelSpec,
    module: _Module,
    notes: list[str],
    model_donor: str | None,
) -> list[str]:
    where = _cell_line(module, cells[0].id)
    lines = [f"      - key: {_q(key)}"]
    lines += _pin_lines(key, cells, module, where)
    first = cells[0].meta
    hw = str(first["hw"])
    if any(c.meta["hw"] != hw for c in cells):
        raise SyncError(
            f"config {js(key)} shows its cells on more than one hardware chip; sync.yaml gives "
            "a config one",
            path=str(module.file),
            line=where,
        )
    if _derived_hw(key, model) != hw:
        lines.append(f"        hw: {_q(hw)}")
    detail = _agreed(cells, "detail")
    if detail is not None:
        lines.append(f"        detail: {_q(str(detail))}")
    status = _agreed(cells, "imageStatus")
    if status not in (None, "ok"):
        lines.append(f"        image_status: {_q(str(status))}")
    commit = _agreed(cells, "imageCommit")
    if commit and commit != image_commit(str(first.get("image") or "")):
        lines.append(f"        image_commit: {_q(str(commit))}")
    setup = _agreed(cells, "setup")
    if setup:
        lines.append("        setup:")
        for item in setup:  # type: ignore[attr-defined]
            what = "command" if "command" in item else "script"
            lines.append(f"          - {what}: {_q(str(item[what]))}")
            lines.append(f"            reason: {_q(str(item['reason']))}")
    install = {r: cells[0].routers[r].install for r in ROUTERS if r in cells[0].routers}
    if any(install.values()) and all(
        {r: c.routers[r].install for r in install if r in c.routers} == install for c in cells
    ):
        lines.append("        install:")
        for router, items in install.items():
            if items:
                lines.append(f"          {router}: [{', '.join(_q(i) for i in items)}]")
    shown = [
        d for d in STATED_DISCLOSURES if all(d in (c.meta.get("disclosures") or []) for c in cells)
    ]
    if shown:
        lines.append(f"        disclosures: [{', '.join(_q(d) for d in shown)}]")
    donors = {_hicache_donor(c) for c in cells}
    if len(donors) > 1:
        notes.append(
            f"{module.path}: the cells of {key} borrow HiCache settings from "
            f"{count(len(donors), 'donor')}; sync.yaml names one per config: they change when "
            "the config is next rendered"
        )
    elif (donor := next(iter(donors))) and donor != model_donor:
        lines.append(f"        hicache_donor: {_q(donor)}")
    unavailable = {
        str(((c.meta.get("kv") or {}).get("unavailable") or {}).get("mooncake") or "")
        for c in cells
    }
    if len(unavailable) == 1 and next(iter(unavailable)):
        lines.append(f"        mooncake_unavailable: {_q(next(iter(unavailable)))}")
    return lines


def _agreed(cells: list[CellSpec], name: str) -> object:
    """The value every cell of a config has for meta field ``name``, else None."""
    values = [c.meta.get(name) for c in cells]
    return values[0] if all(v == values[0] for v in values) else None


def _derived_hw(key: str, model: ModelSpec) -> str | None:
    pin = Pin(key, None, "", None, None, PointStatus.IN_PROGRESS, None)
    try:
        return config_hardware(ConfigSpec(key=key, source="main", pin=pin), model)
    except SyncError:
        return None


def _cell_line(module: _Module, cell_id: str) -> int:
    at = module.text.find(f'"id": {json.dumps(cell_id)}')
    return module.text.count("\n", 0, at) + 1 if at >= 0 else _export_line(module.text)


def _pin_lines(key: str, cells: list[CellSpec], module: _Module, line: int) -> list[str]:
    """The config's ``source`` and ``pin``: the provenance its points share."""
    provs = {
        json.dumps({k: v for k, v in p.prov.items() if k in _PIN_KEYS}, sort_keys=True)
        for c in cells
        for p in c.points
    }
    if len(provs) != 1:
        raise SyncError(
            f"config {js(key)}: its points name {count(len(provs), 'different pin')} (commit, "
            "PR, run, status); sync.yaml pins a config once",
            path=str(module.file),
            line=line,
        )
    prov: dict[str, str] = json.loads(next(iter(provs)))
    for name, value in prov.items():
        # Held to sync.yaml's own pin values, so the text written reads back.
        if name in PIN_VALUES and not is_pin_value(name, value):
            raise SyncError(
                f"config {js(key)}: its points' {name} {js(value)} is not a pin's {name}",
                path=str(module.file),
                line=line,
            )
    status = prov.get("status")
    if status not in (PointStatus.VERIFIED, PointStatus.VERIFIED_PR, PointStatus.IN_PROGRESS):
        raise SyncError(
            f"config {js(key)}: status {js(status)} is not a pin's (verified, verified-pr, "
            "in-progress)",
            path=str(module.file),
            line=line,
        )
    if status == PointStatus.VERIFIED:
        lines = ["        source: main", "        pin:", f"          status: {status}"]
        lines += [
            f"          {k}: {_q(prov[k])}" for k in ("run", "date", "pr", "sha") if k in prov
        ]
        return lines
    if "pr" not in prov or "sha" not in prov:
        raise SyncError(
            f"config {js(key)}: a {status} config names its PR and commit; its points do not",
            path=str(module.file),
            line=line,
        )
    lines = [
        f"        source: {{pr: {_q(prov['pr'])}, sha: {_q(prov['sha'])}}}",
        "        pin:",
        f"          status: {status}",
    ]
    if status == PointStatus.VERIFIED_PR:
        lines += [f"          {k}: {_q(prov[k])}" for k in ("run", "comment", "date") if k in prov]
    return lines


# The provenance keys a pin decides (the recipe and job are per point; srtSlurm the renderer's).
_PIN_KEYS = ("sha", "run", "pr", "comment", "status", "date")
