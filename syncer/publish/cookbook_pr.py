"""One model's cookbook PR: the bot's PRs found, the module generated, committed and proposed.

The cookbook is cloned once per event (into the cache, or a scratch directory in a dry run),
each config is rendered once per event, and the bot's PRs of a model are listed once per event
and listed again only after the bot itself changed one of them. A module generated for the
trial verify is reused for the publish when nothing it depends on differs (same pins, same
module and page at the ref), so the common first ``/use`` generates and round-trips it once.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from syncer import links
from syncer.compare.review import review_texts
from syncer.compare.review_render import review_report
from syncer.cookbook.cells import cells_from_module
from syncer.cookbook.decode import Decoder
from syncer.cookbook.generate import generate_model
from syncer.cookbook.jsmodule import parse_module
from syncer.errors import SyncError
from syncer.inferencex import render as inferencex_render
from syncer.inferencex.policy import Exclusion, load_policy
from syncer.inferencex.render import RenderedConfig
from syncer.lint.publish import lint_published
from syncer.publish import status as st
from syncer.publish.bodies import fit_body
from syncer.publish.git import Cookbook, Identity, branch_name
from syncer.publish.github import GitHubClient, Plan, Pull, PullState
from syncer.publish.settings import Outcome, Settings
from syncer.syncconfig import ModelSpec, Pin, SyncConfig
from syncer.templating import render

# What a generated module depends on besides sync.yaml, the InferenceX checkout and the date:
# (model path, module text at the ref, page text at the ref, every pin).
_GenKey = tuple[str, str | None, str | None, tuple[tuple[str, Pin], ...]]


class ProvenanceRow(TypedDict):
    """One deployment of one config in the PR body's provenance table."""

    key: str
    label: str
    concs: str
    pr: str | None
    pr_url: str | None
    sha: str
    run: str | None
    run_url: str | None
    comment: str | None
    comment_url: str | None
    status: str


@dataclass
class Generated:
    snippets: Path  # the module's directory, as ``verify_config`` reads a cookbook
    files: dict[str, str]  # cookbook path -> text, as committed
    notes: list[str] = field(default_factory=list)


class CookbookPR:
    """The bot's side of the cookbook for one event: its clone, its PRs and its branch."""

    def __init__(
        self,
        settings: Settings,
        *,
        gh: GitHubClient,
        plan: Plan,
        out: Outcome,
        identity: Identity,
        git_token: str | None,
    ) -> None:
        self.s = settings
        self.gh = gh
        self.plan = plan
        self.out = out
        self.identity = identity
        self.git_token = git_token
        self._book: Cookbook | None = None
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._renders: dict[tuple[str, str], RenderedConfig] = {}
        self._pulls: dict[str, list[Pull]] = {}
        self._generated: dict[_GenKey, Generated] = {}
        # Where each config is read (the bot's InferenceX clone: the tree of the commit the
        # config is shown at); None: every config from the ``inferencex`` checkout.
        self.tree_for: Callable[[str], Path] | None = None
        # A model's configs as its page shows them now (discovery), by model path.
        self._live: dict[str, SyncConfig] = {}

    def close_clone(self) -> None:
        """Remove a dry run's scratch clone (the cache's clone stays for the next event)."""
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch, self._book = None, None

    # -- the bot's PRs ---------------------------------------------------------------------------

    def pulls(self, model: ModelSpec) -> list[Pull]:
        """The bot's PRs for ``model`` (branch and marker), newest first; listed once per event
        (the bot's own writes list them again)."""
        if model.path not in self._pulls:
            head = links.head_ref(self.s.head_repo, branch_name(model.path))
            me = self.gh.login()
            marker = st.pr_marker(model.path)
            self._pulls[model.path] = [
                p
                for p in self.gh.find_pulls(self.s.cookbook_repo, head, state="all")
                if p.user == me and marker in p.body
            ]
        return self._pulls[model.path]

    def open_pull(self, model: ModelSpec) -> Pull | None:
        return next((p for p in self.pulls(model) if p.state == PullState.OPEN), None)

    def recorded(self, pull: Pull | None, model: ModelSpec) -> dict[str, Pin]:
        """The pins ``pull`` (one of the bot's PRs) records for ``model``'s configs."""
        return st.read_state(pull, self.gh.login(), model.path) if pull is not None else {}

    def carries(self, pull: Pull, number: int, model: ModelSpec) -> bool:
        """Whether ``pull`` is unmerged and recorded a pin of InferenceX PR ``number``."""
        return not pull.merged and any(
            pin.pr == str(number) for pin in self.recorded(pull, model).values()
        )

    def result(self, model: ModelSpec) -> st.PublishResult:
        """The bot's PRs for ``model`` as they are, with nothing published: the open one, the
        merged ones, and the newest when a maintainer closed it unmerged."""
        pulls = self.pulls(model)
        result = st.PublishResult(
            model=model.path,
            open_pr=next((p for p in pulls if p.state == PullState.OPEN), None),
            merged=[p for p in pulls if p.merged],
        )
        newest = pulls[0] if pulls else None
        if (
            result.open_pr is None
            and newest
            and newest.state == PullState.CLOSED
            and not newest.merged
        ):
            result.closed = newest
        return result

    def close(self, model: ModelSpec, open_pr: Pull, infx_prs: list[int]) -> None:
        note = render(
            "status_comment_pr_closed.md.j2",
            by=st.BY,
            inferencex_repo=self.s.inferencex_repo,
            prs=infx_prs,
        )
        self.gh.create_comment(self.s.cookbook_repo, open_pr.number, note)
        self.gh.update_pull(self.s.cookbook_repo, open_pr.number, state=PullState.CLOSED)
        self._pulls.pop(model.path, None)
        self.out.did(
            f"closed {self.s.cookbook_repo}#{open_pr.number}: every InferenceX PR it carried "
            "was closed without merging",
            f"would close {self.s.cookbook_repo}#{open_pr.number}",
        )

    # -- generation ------------------------------------------------------------------------------

    def clone(self) -> Cookbook:
        if self._book is None:
            cache_dir = self.s.cache_dir
            if self.plan.dry_run:
                # A dry run leaves no clone behind: its cookbook lives until the event is handled.
                self._scratch = tempfile.TemporaryDirectory(prefix="infx-dry-")
                cache_dir = Path(self._scratch.name)
            self._book = Cookbook.open(
                self.s.cookbook,
                cache_dir=cache_dir,
                plan=self.plan,
                identity=self.identity,
                token=self.git_token,
                push_url=self.s.push_url,
            )
        return self._book

    def trial(self, model: ModelSpec, pins: dict[str, Pin], where: Path) -> Generated:
        """The module with ``pins``, generated on the default branch's files (as fetched when
        the cookbook was opened, with no second fetch) for the three-way verify only."""
        book = self.clone()
        return self._generate(model, pins, where, ref=f"{book.remote}/{book.default_branch()}")

    def tree(self, key: str) -> Path:
        """The InferenceX tree config ``key`` is read from."""
        return self.tree_for(key) if self.tree_for is not None else self.s.inferencex

    def rendered(self, key: str) -> RenderedConfig:
        """``render_config`` once per config, commit and event: the trial and the published
        module and the PR body's provenance and exclusions all read the same renders."""
        tree = self.tree(key)
        if (key, str(tree)) not in self._renders:
            self._renders[key, str(tree)] = inferencex_render.render_config(tree, key)
        return self._renders[key, str(tree)]

    def config(self, model: ModelSpec) -> SyncConfig:
        """The sync configuration ``model`` is generated with: sync.yaml's, or the one
        :meth:`live` derived from the published module."""
        return self._live.get(model.path, self.s.config)

    # -- the page's configs as published ---------------------------------------------------------

    def published(
        self, model: ModelSpec, *, proposed: bool = True
    ) -> tuple[dict[str, Pin], str | None]:
        """The pins of the configs ``model``'s module shows now (the open bot PR's branch when
        ``proposed``, else the default branch), in the module's order, and its ``source.main``:
        what the cookbook already says is a config's state, read from each cell's provenance."""
        book = self.clone()
        ref = f"{book.remote}/{book.default_branch()}"
        if proposed and self.open_pull(model) is not None:
            branch = f"{book.push_remote}/{branch_name(model.path)}"
            ref = branch if book.rev(branch) else ref
        text = book.read(ref, self.module_path(model))
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

    def module_path(self, model: ModelSpec) -> str:
        return f"{self.s.snippets_dir}/{model.module_relpath}"

    def _generate(
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
        notes: list[str] = []
        if result.page_conflict:
            notes.append(f"page section left alone: {result.page_conflict}")
        generated = Generated(snippets, files, notes)
        self._generated[key] = generated
        return generated

    def _lint(self, model: ModelSpec, gen: Generated) -> str | None:
        """The cookbook clone is an SGLang checkout: each cell's flags are checked against the
        SGLang its image pins. Findings go into the PR body; they never stop the publish."""
        path = self.module_path(model)
        checked = lint_published([(path, gen.files[path])], self.clone().path)
        if checked.skipped:
            self.out.say(f"{model.path}: SGLang flag check skipped: {checked.skipped}")
        return checked.markdown()

    # -- the branch and the PR -------------------------------------------------------------------

    def publish(self, model: ModelSpec, pins: dict[str, Pin]) -> st.PublishResult:
        book = self.clone()
        branch = branch_name(model.path)
        base = book.default_branch()
        state = book.branch_state(branch, base)
        pulls = self.pulls(model)
        open_pr = next((p for p in pulls if p.state == PullState.OPEN), None)
        result = st.PublishResult(
            model=model.path,
            open_pr=open_pr,
            merged=[p for p in pulls if p.merged],
            branch=branch,
        )
        if state.foreign:
            result.blocked = state.foreign
            self.out.say(
                f"{branch}: commits not made by the bot "
                f"({', '.join(s[:9] for s, _ in state.foreign)}); not pushing"
            )
            return result
        # sync.yaml's pins, then what the open PR recorded for other PRs' configs, then ours.
        keys = {c.key for c in model.configs}
        merged_pins = {k: v for k, v in self.config(model).pins().items() if k in keys}
        # A config sync.yaml no longer lists is dropped from the PR with its pin.
        recorded = self.recorded(open_pr, model)
        merged_pins.update({k: v for k, v in recorded.items() if k in keys})
        merged_pins.update(pins)
        # A PR that maintainers closed unmerged is not reopened for the same pins (bots that
        # re-create closed PRs on every run are a known nuisance); new pins open a new one.
        newest = pulls[0] if pulls else None
        if (
            open_pr is None
            and newest is not None
            and newest.state == PullState.CLOSED
            and not newest.merged
            and self.recorded(newest, model) == merged_pins
        ):
            self.out.say(
                f"{model.path}: {self.s.cookbook_repo}#{newest.number} was closed unmerged with "
                "these pins; not reopening until they change"
            )
            result.closed = newest
            return result
        with tempfile.TemporaryDirectory(prefix="infx-gen-") as tmp:
            # Without an open PR the branch restarts from the default branch (its old commits,
            # all the bot's, were merged or abandoned); with one, commits go on top.
            restart = open_pr is None and state.exists
            ref = state.tip if state.tip is not None and not restart else state.base_tip
            gen = self._generate(model, merged_pins, Path(tmp), ref=ref, reuse=True)
        lint = self._lint(model, gen)
        changed_vs_base = any(book.read(state.base_tip, p) != t for p, t in gen.files.items())
        message = self._commit_message(model, merged_pins)
        if restart and not changed_vs_base:
            commit = None
        else:
            commit = book.commit_files(
                state, gen.files, message, parent=state.base_tip if restart else None
            )
        if commit is not None:
            book.push(state, commit)
            self.out.did(f"{branch}: committed {commit[:12]}", f"{branch}: would commit and push")
        else:
            self.out.say(f"{branch}: generated files unchanged")
        if open_pr is None and not changed_vs_base:
            self.out.say(f"{model.path}: the cookbook already shows this; no PR needed")
            return result
        old = book.read(state.base_tip, self.module_path(model))
        body = self._pr_body(model, merged_pins, gen, lint, old)
        title = f"[AgentX] {model.model}: sync launch commands from InferenceX"
        if open_pr is None:
            made = self.gh.create_pull(
                self.s.cookbook_repo,
                title=title,
                body=body,
                head=links.head_ref(self.s.head_repo, branch),
                base=base,
                maintainer_can_modify=True,
            )
            self._pulls.pop(model.path, None)
            result.open_pr = made
            self.out.did(
                f"{model.path}: opened {self.s.cookbook_repo}#{made.number}",
                f"{model.path}: would open a PR in {self.s.cookbook_repo}",
            )
            fork = made.head_repo != self.s.cookbook_repo
            if fork and not self.plan.dry_run and not made.maintainer_can_modify:
                self.out.say(
                    f"{self.s.cookbook_repo}#{made.number}: GitHub refused to let maintainers "
                    f"push to {made.head_repo} (an organization's fork); opened without it"
                )
        elif open_pr.body != body or open_pr.title != title:
            self.gh.update_pull(
                self.s.cookbook_repo,
                open_pr.number,
                title=title if open_pr.title != title else None,
                body=body if open_pr.body != body else None,
            )
            self._pulls.pop(model.path, None)
            self.out.did(
                f"{model.path}: updated {self.s.cookbook_repo}#{open_pr.number}",
                f"{model.path}: would update {self.s.cookbook_repo}#{open_pr.number}",
            )
        else:
            self.out.say(f"{model.path}: {self.s.cookbook_repo}#{open_pr.number} already current")
        return result

    def _commit_message(self, model: ModelSpec, pins: dict[str, Pin]) -> str:
        lines = [f"[AgentX] {model.model}: sync launch commands from InferenceX", ""]
        for key, pin in sorted(pins.items()):
            where = f"{self.s.inferencex_repo}#{pin.pr}" if pin.pr else "InferenceX main"
            run = f"run {pin.run}" if pin.run else "no run pinned (in progress)"
            lines.append(f"- {key}: {where} @ {pin.sha[:12]}, {run}, {pin.status}")
        return "\n".join(lines) + "\n"

    def _pr_body(
        self,
        model: ModelSpec,
        pins: dict[str, Pin],
        gen: Generated,
        lint: str | None,
        old: str | None,
    ) -> str:
        new = gen.files[self.module_path(model)]
        review = review_texts(old, new, old_label="cookbook (default branch)", new_label="this PR")
        ctx = {
            "marker": st.pr_marker(model.path),
            "state": st.state_marker(model.path, pins),
            "model": model.model,
            "section": model.section,
            "files": sorted(gen.files),
            "provenance": self._provenance(model, pins),
            "notes": gen.notes,
            "lint": lint,
            "exclusions": self._exclusions(model),
        }
        return fit_body(ctx, review_report(review).markdown, self.s.body_limit)

    def _provenance(self, model: ModelSpec, pins: dict[str, Pin]) -> list[ProvenanceRow]:
        """One row per config and deployment; ``pins`` holds every config of ``model``."""
        repo = self.s.inferencex_repo
        rows: list[ProvenanceRow] = []
        for cfg in model.configs:
            pin = pins[cfg.key]
            try:
                points = self.rendered(cfg.key).points
            except SyncError as exc:
                points = []
                self.out.say(f"{cfg.key}: not rendered for provenance: {exc}")
            groups: dict[str, list[int]] = {}
            for p in points:
                groups.setdefault(p.label, []).extend(p.concs)
            for label, concs in groups.items() or {"–": []}.items():
                rows.append(
                    {
                        "key": cfg.key,
                        "label": label,
                        "concs": ", ".join(str(c) for c in concs),
                        "pr": pin.pr,
                        "pr_url": links.pr_url(repo, pin.pr) if pin.pr else None,
                        "sha": pin.sha,
                        "run": pin.run,
                        "run_url": links.run_url(repo, pin.run) if pin.run else None,
                        "comment": pin.comment,
                        "comment_url": links.comment_url(repo, pin.pr, pin.comment)
                        if pin.comment and pin.pr
                        else None,
                        "status": pin.status,
                    }
                )
        return rows

    def _exclusions(self, model: ModelSpec) -> list[Exclusion]:
        """Policy entries that removed or replaced something in these configs' launches."""
        policy = load_policy()
        used: dict[str, Exclusion] = {}
        for cfg in model.configs:
            try:
                points = self.rendered(cfg.key).points
            except SyncError:
                continue
            for p in points:
                for blocks in p.raw.values():
                    for block in blocks:
                        kind = block.get("kind", "")
                        names = [
                            ("flag", a[0], a[1] if len(a) > 1 else None)
                            for a in block.get("args", [])
                        ]
                        names += [("env", k, v) for k, v in block.get("env", {}).items()]
                        for fld, name, value in names:
                            ex = policy.exclusion(kind, fld, name, value)
                            if ex is not None:
                                used.setdefault(ex.name, ex)
        return [used[k] for k in sorted(used)]


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
