"""One event's modules for the cookbook: each config rendered once, the module generated on the
cookbook's files at a ref (for the trial verify, reused for the publish when its inputs are the
same), the configs a page shows as its published module records them, and the lint of what is
published.

Nothing is generated into the cookbook checkout: each module is written into a scratch copy of
the files it starts from (the module and the page at the ref).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syncer.cookbook.cells import cells_from_module
from syncer.cookbook.decode import Decoder
from syncer.cookbook.jsmodule import parse_module
from syncer.cookbook.page import reviewer_text
from syncer.inferencex import render as inferencex_render
from syncer.inferencex.render import RenderedConfig
from syncer.lint.publish import lint_published
from syncer.publish import status as st
from syncer.publish.git import Cookbook
from syncer.publish.settings import Outcome, Settings
from syncer.syncconfig import ModelSpec, Pin, SyncConfig
from syncer.usecases.generate import generate_model

# What a generated module depends on besides sync.yaml, the InferenceX checkout and the date:
# (model path, module text at the ref, page text at the ref, every pin).
_GenKey = tuple[str, str | None, str | None, tuple[tuple[str, Pin], ...]]


@dataclass
class Generated:
    snippets: Path  # the module's directory, as ``verify_config`` reads a cookbook
    files: dict[str, str]  # cookbook path -> text, as committed
    notes: list[str] = field(default_factory=list)


class Generation:
    """The modules of one event, generated on the cookbook ``clone()`` opens."""

    def __init__(self, settings: Settings, *, clone: Callable[[], Cookbook], out: Outcome) -> None:
        self.s = settings
        self.clone = clone
        self.out = out
        self._renders: dict[tuple[str, str], RenderedConfig] = {}
        self._generated: dict[_GenKey, Generated] = {}
        # Where each config is read (the bot's InferenceX clone: the tree of the commit the
        # config is shown at); None: every config from the ``inferencex`` checkout.
        self.tree_for: Callable[[str], Path] | None = None
        # Where and when a branch of srt-slurm a config's runner cloned is read (discovery:
        # the srt-slurm clone and the date of the commit the config is read at); None: the
        # srt-slurm clone given, at the ``inferencex`` checkout's commit date.
        self.history_for: Callable[[str], tuple[Path | None, str | None]] | None = None
        self.run_dates: dict[str, str] = {}  # config key -> its pin's run date, when it has one
        # A model's configs as its page shows them now (discovery), by model path.
        self._live: dict[str, SyncConfig] = {}

    def tree(self, key: str) -> Path:
        """The InferenceX tree config ``key`` is read from."""
        return self.tree_for(key) if self.tree_for is not None else self.s.inferencex

    def rendered(self, key: str) -> RenderedConfig:
        """``render_config`` once per config, commit and event: the trial and the published
        module and the PR body's provenance and exclusions all read the same renders."""
        tree = self.tree(key)
        cached = self._renders.get((key, str(tree)))
        run_date = self.run_dates.get(key)
        if cached is not None and (run_date is None or not _other_date(cached, run_date)):
            return cached
        srt_repo, as_of = (
            self.history_for(key) if self.history_for else (self.s.srt_slurm_clone, None)
        )
        # A branch is taken at the run's date when the pin has one (as `sync generate`
        # does), else at the date of the commit the config is read at.
        self._renders[key, str(tree)] = inferencex_render.render_config(
            tree, key, srt_repo=srt_repo, as_of=run_date or as_of
        )
        return self._renders[key, str(tree)]

    def branch_notes(self, model: ModelSpec) -> list[str]:
        """For the PR body: the srt-slurm commit each of ``model``'s configs whose runner
        cloned a branch was rendered under (or why none could be named)."""
        notes = []
        for cfg in self.config(model).model(model.path).configs:
            rendered = self._renders.get((cfg.key, str(self.tree(cfg.key))))
            release = rendered.release if rendered is not None else None
            if release is not None and release.branch is not None:
                notes.append(f"{cfg.key}: rendered under {release.describe()}")
        return notes

    def config(self, model: ModelSpec) -> SyncConfig:
        """The sync configuration ``model`` is generated with: sync.yaml's, or the one
        :meth:`live` derived from the published module."""
        return self._live.get(model.path, self.s.config)

    def module_path(self, model: ModelSpec) -> str:
        return f"{self.s.snippets_dir}/{model.module_relpath}"

    # -- the page's configs as published ---------------------------------------------------------

    def published_at(self, model: ModelSpec, ref: str) -> tuple[dict[str, Pin], str | None]:
        """The pins of the configs ``model``'s module shows at ``ref``, in the module's order,
        and its ``source.main``: what the cookbook already says is a config's state, read from
        each cell's provenance."""
        text = self.clone().read(ref, self.module_path(model))
        if text is None:
            return {}, None
        value = parse_module(text, f"{ref}:{self.module_path(model)}").value
        return module_pins(value, self.module_path(model)), (value.get("source") or {}).get("main")

    def live(self, model: ModelSpec, pins: dict[str, Pin], main: str | None) -> ModelSpec:
        """``model`` showing the configs of ``pins`` (published ones first, in their order),
        each with sync.yaml's overrides; the sync configuration it is generated with holds only
        this model, so the module's ``source`` names only this page's PRs."""
        config = self.s.config
        configs = [config.config_spec(model, key, pin) for key, pin in pins.items()]
        derived = dataclasses.replace(model, configs=configs)
        others = [dataclasses.replace(m, configs=[]) for m in config.models if m.path != model.path]
        self._live[model.path] = dataclasses.replace(
            config, main=main or config.main, models=[derived, *others]
        )
        return derived

    # -- generating ------------------------------------------------------------------------------

    def generate(
        self, model: ModelSpec, pins: dict[str, Pin], where: Path, *, ref: str, reuse: bool = False
    ) -> Generated:
        """Generate into a scratch copy of the cookbook files at ``ref`` (never into the
        checkout). ``reuse``: an earlier module of this event with the same inputs serves (its
        ``snippets`` directory may be gone; only its files are read)."""
        book = self.clone()
        snippets, pages = where / "snippets", where / "pages"
        # generate_model keeps <out_dir>/<org>/<model>.jsx's date when nothing else changed.
        current = book.read(ref, self.module_path(model))
        if current is not None:
            target = snippets / model.module_relpath
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(current, encoding="utf-8")
        book.export(ref, pages, [model.page])
        page = pages / model.page
        config = self.config(model)
        all_pins = config.pins()
        all_pins.update(pins)
        key: _GenKey = (
            model.path,
            current,
            page.read_text(encoding="utf-8") if page.is_file() else None,
            tuple(sorted(all_pins.items(), key=lambda item: item[0])),
        )
        if reuse and key in self._generated:
            return self._generated[key]
        self.run_dates.update((k, p.date) for k, p in all_pins.items() if p.date)
        result = generate_model(
            model.path,
            config=config,
            inferencex=self.s.inferencex,
            out_dir=snippets,
            pins=all_pins,
            pages_dir=pages,
            today=self.s.today,
            renderer=lambda _inferencex, config_key: self.rendered(config_key),
        )
        files = {self.module_path(model): result.text}
        if page.is_file():
            files[model.page] = page.read_text(encoding="utf-8")
        notes = self.branch_notes(model)
        if result.page_conflict:
            notes.append(
                f"page section left alone: {reviewer_text(result.page_conflict, model.page)}"
            )
        generated = Generated(snippets, files, notes)
        self._generated[key] = generated
        return generated

    def lint(self, model: ModelSpec, gen: Generated) -> str | None:
        """The cookbook clone is an SGLang checkout: each cell's flags are checked against the
        SGLang its image pins. Findings go into the PR body; they never stop the publish."""
        path = self.module_path(model)
        checked = lint_published([(path, gen.files[path])], self.clone().path)
        if checked.skipped:
            self.out.say(f"{model.path}: SGLang flag check skipped: {checked.skipped}")
        return checked.markdown()


def _other_date(rendered: RenderedConfig, run_date: str) -> bool:
    """Whether ``rendered`` took a runner's srt-slurm branch at another date than the run's."""
    release = rendered.release
    return release is not None and release.branch is not None and release.as_of != run_date


def module_pins(value: Any, where: str) -> dict[str, Pin]:
    """Each config's pin from a data module's provenance (its first cell's first point, as
    ``cells_from_module`` reads every module version), in cell order. A cell whose provenance
    is not a valid pin is skipped: it is regenerated from its config's listing."""
    spec = cells_from_module(value, Decoder(value, where), where)
    out: dict[str, Pin] = {}
    for cell in spec.cells:
        if cell.config_key in out or not cell.points:
            continue
        pin = st.recorded_pin(cell.config_key, dict(cell.points[0].prov))
        if pin is not None:
            out[cell.config_key] = pin
    return out
