"""One event's modules for the cookbook: each config rendered once, the module generated on the
cookbook's files at a ref (for the trial verify, reused for the publish when its inputs are the
same), the configs a page shows as its published module records them, and the lint of what is
published.

Nothing is generated into the cookbook checkout: each module is written into a scratch copy of
the files it starts from (the module and the page at the ref). Where each config is read from
is given at construction (``InferenceXTrees``: the bot's InferenceX clone, or one checkout).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from syncer.cookbook.jsmodule import parse_module
from syncer.encoder.edit import ModuleEdit
from syncer.encoder.page import reviewer_text
from syncer.inferencex.master import load_master
from syncer.inferencex.render import RenderedConfig
from syncer.inferencex.renders import Renders
from syncer.lint.hooks import lint_published
from syncer.model import PointStatus
from syncer.publish.git import CookbookClone
from syncer.publish.settings import Outcome, Settings
from syncer.syncconfig import ModelSpec, Pin, SyncConfig
from syncer.usecases.generate import changed_configs, generate_model, module_pins

# What a generated module depends on besides sync.yaml, the InferenceX checkout and the date:
# (model path, module text at the ref, page text at the ref, every pin).
_GenKey = tuple[str, str | None, str | None, tuple[tuple[str, Pin], ...], tuple[str, ...]]


class InferenceXTrees(Protocol):
    """Where an event reads InferenceX: the tree each config is read from, where and when a
    branch of srt-slurm its runner cloned is read (``Renders(read_at=)``), InferenceX main's
    tree (None: not known, so no published cell leaves for having left main), and whether the
    master config at a commit (of a PR) lists a key (None: that commit cannot be read).
    Implemented by the bot's InferenceX clone (``prconfigs.InferenceXClone``) and by
    :class:`Checkout`."""

    def tree(self, key: str) -> Path: ...

    def history(self, key: str) -> tuple[Path | None, str | None]: ...

    def main_tree(self) -> Path | None: ...

    def listed_at(self, key: str, sha: str, pr: str | None) -> bool | None: ...


@dataclass(frozen=True)
class Checkout:
    """The one ``--inferencex`` checkout every config is read from (no InferenceX clone): a
    branch a runner cloned is read in the srt-slurm clone given, at the checkout's commit
    date; main's tree is not known."""

    settings: Settings

    def tree(self, key: str) -> Path:
        return self.settings.inferencex

    def history(self, key: str) -> tuple[Path | None, str | None]:
        return self.settings.srt_slurm_clone, None

    def main_tree(self) -> Path | None:
        return None

    def listed_at(self, key: str, sha: str, pr: str | None) -> bool | None:
        return None


@dataclass
class Generated:
    snippets: Path  # the module's directory, as ``verify_config`` reads a cookbook
    files: dict[str, str]  # cookbook path -> text, as committed
    notes: list[str] = field(default_factory=list)
    edit: ModuleEdit | None = None  # the published module edited (None: written whole)
    unrendered: dict[str, str] = field(default_factory=dict)  # kept as published: key -> why
    gone: dict[str, str] = field(default_factory=dict)  # configs whose cells left: key -> why


class Generation:
    """The modules of one event, generated on the cookbook ``clone()`` opens, each config read
    where ``inferencex`` says."""

    def __init__(
        self,
        settings: Settings,
        *,
        clone: Callable[[], CookbookClone],
        inferencex: InferenceXTrees,
        out: Outcome,
    ) -> None:
        self.settings = settings
        self.clone = clone
        self.inferencex = inferencex
        self.out = out
        self._generated: dict[_GenKey, Generated] = {}
        self.run_dates: dict[str, str] = {}  # config key -> its pin's run date, when it has one
        # Every rendering of the event: the trial and published modules, the three-way verify,
        # the PR body's provenance and exclusions all read the same ones.
        self.renders = Renders(pin_dates=self.run_dates, read_at=inferencex.history)
        # A model's configs as its page shows them now (discovery), by model path.
        self._live: dict[str, SyncConfig] = {}

    def tree(self, key: str) -> Path:
        """The InferenceX tree config ``key`` is read from."""
        return self.inferencex.tree(key)

    def rendered(self, key: str) -> RenderedConfig:
        """The rendering of ``key`` read from its tree (:class:`Renders` chooses the release:
        a branch at the pin's run date, else at the date of the commit the config is read at)."""
        return self.renders.get(self.tree(key), key)

    def rendered_now(self, key: str) -> RenderedConfig | None:
        """Config ``key``'s render in this event, None when the event did not render it (an
        edit leaves it as published): the PR body never renders a config for its own sake."""
        done = [r for _, k, r in self.renders.rendered() if k == key]
        return done[-1] if done else None

    def branch_notes(self, model: ModelSpec) -> list[str]:
        """For the PR body: the srt-slurm commit each of ``model``'s configs whose runner
        cloned a branch was rendered under (or why none could be named)."""
        applied = {
            key: r.release for tree, key, r in self.renders.rendered() if tree == self.tree(key)
        }
        notes = []
        for cfg in self.config(model).model(model.path).configs:
            release = applied.get(cfg.key)  # None: left as published, never rendered
            if release is not None and release.branch is not None:
                notes.append(f"{cfg.key}: rendered under {release.describe()}")
        return notes

    def config(self, model: ModelSpec) -> SyncConfig:
        """The sync configuration ``model`` is generated with: sync.yaml's, or the one
        :meth:`live` derived from the published module."""
        return self._live.get(model.path, self.settings.config)

    def module_path(self, model: ModelSpec) -> str:
        return f"{self.settings.snippets_dir}/{model.module_relpath}"

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
        config = self.settings.config
        configs = [config.config_spec(model, key, pin) for key, pin in pins.items()]
        derived = dataclasses.replace(model, configs=configs)
        others = [dataclasses.replace(m, configs=[]) for m in config.models if m.path != model.path]
        self._live[model.path] = dataclasses.replace(
            config, main=main or config.main, models=[derived, *others]
        )
        return derived

    # -- generating ------------------------------------------------------------------------------

    def generate(
        self,
        model: ModelSpec,
        pins: dict[str, Pin],
        where: Path,
        *,
        ref: str,
        reuse: bool = False,
        gone: dict[str, str] | None = None,
    ) -> Generated:
        """Generate into a scratch copy of the cookbook files at ``ref`` (never into the
        checkout). ``reuse``: an earlier module of this event with the same inputs serves (its
        ``snippets`` directory may be gone; only its files are read). ``gone``: configs that
        left InferenceX main (key -> why), whose published cells leave the module."""
        gone = dict(gone or {})
        snippets, pages = where / "snippets", where / "pages"
        current = self._scratch(model, ref, snippets, pages)
        page = pages / model.page
        config = self.config(model)
        all_pins = config.pins()
        all_pins.update(pins)
        kept_notes: list[str] = []
        if current is not None:
            left, kept_notes = self._left_main(model, current, ref)
            gone.update(left)
        key: _GenKey = (
            model.path,
            current,
            page.read_text(encoding="utf-8") if page.is_file() else None,
            tuple(sorted(all_pins.items(), key=lambda item: item[0])),
            tuple(sorted(gone)),
        )
        if reuse and key in self._generated:
            return self._generated[key]
        self.run_dates.update((k, p.date) for k, p in all_pins.items() if p.date)
        result = generate_model(
            model.path,
            config=config,
            inferencex=self.tree,
            out_dir=snippets,
            pins=all_pins,
            pages_dir=pages,
            today=self.settings.today,
            renderer=self.renders,
            changed=None if current is None else self._changed(model, current, ref, all_pins),
            gone=list(gone),
        )
        files = {self.module_path(model): result.text}
        if page.is_file():
            files[model.page] = page.read_text(encoding="utf-8")
        notes = [*self.branch_notes(model), *kept_notes]
        if result.page_conflict:
            notes.append(
                f"page section left alone: {reviewer_text(result.page_conflict, model.page)}"
            )
        generated = Generated(snippets, files, notes, result.edit, result.unrendered, gone)
        self._generated[key] = generated
        return generated

    def _scratch(self, model: ModelSpec, ref: str, snippets: Path, pages: Path) -> str | None:
        """The model's module (returned, None when the cookbook has none yet) and page at
        ``ref``, copied where ``generate_model`` reads them."""
        book = self.clone()
        # generate_model keeps <out_dir>/<org>/<model>.jsx's date when nothing else changed.
        current = book.read(ref, self.module_path(model))
        if current is not None:
            target = snippets / model.module_relpath
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(current, encoding="utf-8")
        book.export(ref, pages, [model.page])
        return current

    def _changed(self, model: ModelSpec, current: str, ref: str, pins: dict[str, Pin]) -> list[str]:
        """The configs of ``model`` whose inputs (commit, pin, run) differ from what the
        published module at ``ref`` records for them, or that it does not show yet: the only
        ones an event writes again (every other cell stays as published)."""
        where = f"{ref}:{self.module_path(model)}"
        live = self.config(model).model(model.path)
        return changed_configs(live, parse_module(current, where).value, pins, where)

    def _left_main(
        self, model: ModelSpec, current: str, ref: str
    ) -> tuple[dict[str, str], list[str]]:
        """The configs the module at ``ref`` shows as on InferenceX main (``verified``) that
        were removed from main's master config: main lacks the key and the master config of
        the commit the cells are shown at lists it. Their cells leave the module (key -> why).
        A config main lacks for which that evidence cannot be read keeps its cells, with a
        note for the PR body saying so: nothing published leaves on a guess."""
        main = self.inferencex.main_tree()
        if main is None:
            return {}, []
        where = f"{ref}:{self.module_path(model)}"
        master = load_master(main)
        gone: dict[str, str] = {}
        notes: list[str] = []
        for key, pin in module_pins(parse_module(current, where).value, where).items():
            if pin.status != PointStatus.VERIFIED or key in master.data:
                continue
            listed = self.inferencex.listed_at(key, pin.sha, pin.pr) if pin.sha else None
            if listed:
                gone[key] = "its config was removed from InferenceX main's master config"
                continue
            shown = f"commit {pin.sha[:12]}" if pin.sha else "the commit"
            notes.append(
                f"{key}: its published cells are kept, though InferenceX main's master config "
                "does not list it: "
                + (
                    f"{shown}, where its cells are shown, cannot be read, so whether it was "
                    "removed from main cannot be told"
                    if listed is None
                    else f"the master config of {shown}, where its cells are shown, does not "
                    "list it either, so it was not removed from main"
                )
            )
        return gone, notes

    def lint(self, model: ModelSpec, gen: Generated) -> str | None:
        """The cookbook clone is an SGLang checkout: each cell's flags are checked against the
        SGLang its image pins. Findings go into the PR body; they never stop the publish."""
        path = self.module_path(model)
        checked = lint_published([(path, gen.files[path])], self.clone().path)
        if checked.skipped:
            self.out.say(f"{model.path}: SGLang flag check skipped: {checked.skipped}")
        return checked.markdown()
