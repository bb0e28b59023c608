"""One model's cookbook PR: the bot's PRs found, the module committed on its branch and proposed.

The cookbook is cloned once per event (into the cache, or a scratch directory in a dry run) and
the bot's PRs of a model are listed once per event and listed again only after the bot itself
changed one of them. The modules come from ``generation.py`` (each config rendered once; the
trial module of the verify reused for the publish when nothing it depends on differs, so the
common first ``/use`` generates and round-trips it once); the PR's words from ``pr_text.py``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from syncer import fitting, links
from syncer.github.client import GitHubClient
from syncer.github.plan import Plan
from syncer.github.records import Pull, PullState
from syncer.publish import pr_text
from syncer.publish import status as st
from syncer.publish.generation import Generated, Generation
from syncer.publish.git import BranchState, Cookbook, Identity, branch_name
from syncer.publish.settings import Outcome, Settings
from syncer.syncconfig import ModelSpec, Pin
from syncer.templating import render


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
        self._pulls: dict[str, list[Pull]] = {}
        self.modules = Generation(settings, clone=self.clone, out=out)

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
                for p in self.gh.pulls.find(self.s.cookbook_repo, head, state="all")
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

    def _listed(self, model: ModelSpec) -> st.PublishResult:
        """The bot's open PR for ``model`` and its merged ones."""
        pulls = self.pulls(model)
        return st.PublishResult(
            model=model.path,
            open_pr=next((p for p in pulls if p.state == PullState.OPEN), None),
            merged=[p for p in pulls if p.merged],
        )

    def result(self, model: ModelSpec) -> st.PublishResult:
        """The bot's PRs for ``model`` as they are, with nothing published: the open one, the
        merged ones, and the newest when a maintainer closed it unmerged."""
        result = self._listed(model)
        pulls = self.pulls(model)
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
        self.gh.comments.create(self.s.cookbook_repo, open_pr.number, note)
        self.gh.pulls.update(self.s.cookbook_repo, open_pr.number, state=PullState.CLOSED)
        self._pulls.pop(model.path, None)
        self.out.did(
            f"closed {self.s.cookbook_repo}#{open_pr.number}: every InferenceX PR it carried "
            "was closed without merging",
            f"would close {self.s.cookbook_repo}#{open_pr.number}",
        )

    # -- the cookbook ------------------------------------------------------------------------------

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
        ref = f"{book.remote}/{book.default_branch()}"
        return self.modules.generate(model, pins, where, ref=ref)

    def published(
        self, model: ModelSpec, *, proposed: bool = True
    ) -> tuple[dict[str, Pin], str | None]:
        """The pins of the configs ``model``'s module shows now (the open bot PR's branch when
        ``proposed``, else the default branch), in the module's order, and its ``source.main``."""
        book = self.clone()
        ref = f"{book.remote}/{book.default_branch()}"
        if proposed and self.open_pull(model) is not None:
            branch = f"{book.push_remote}/{branch_name(model.path)}"
            ref = branch if book.rev(branch) else ref
        return self.modules.published_at(model, ref)

    # -- the branch and the PR -------------------------------------------------------------------

    def publish(
        self, model: ModelSpec, pins: dict[str, Pin], gone: dict[str, str] | None = None
    ) -> st.PublishResult:
        """Bring ``model``'s bot PR up to date with ``pins``; ``gone``: configs that left
        InferenceX main (key -> why), whose published cells the PR removes."""
        gone = gone or {}
        book = self.clone()
        branch = branch_name(model.path)
        base = book.default_branch()
        state = book.branch_state(branch, base)
        pulls = self.pulls(model)
        result = self._listed(model)
        result.branch, open_pr = branch, result.open_pr
        if state.foreign:
            result.blocked = state.foreign
            self.out.say(
                f"{branch}: commits not made by the bot "
                f"({', '.join(s[:9] for s, _ in state.foreign)}); not pushing"
            )
            return result
        all_pins = {k: p for k, p in self._all_pins(model, open_pr, pins).items() if k not in gone}
        # A PR that maintainers closed unmerged is not reopened for the same pins (bots that
        # re-create closed PRs on every run are a known nuisance); new pins open a new one.
        newest = pulls[0] if pulls else None
        if (
            open_pr is None
            and not gone
            and newest is not None
            and newest.state == PullState.CLOSED
            and not newest.merged
            and self.recorded(newest, model) == all_pins
        ):
            self.out.say(
                f"{model.path}: {self.s.cookbook_repo}#{newest.number} was closed unmerged with "
                "these pins; not reopening until they change"
            )
            result.closed = newest
            return result
        # Without an open PR the branch restarts from the default branch (its old commits,
        # all the bot's, were merged or abandoned); with one, commits go on top.
        restart = open_pr is None and state.exists
        with tempfile.TemporaryDirectory(prefix="infx-gen-") as tmp:
            ref = state.tip if state.tip is not None and not restart else state.base_tip
            gen = self.modules.generate(model, all_pins, Path(tmp), ref=ref, reuse=True, gone=gone)
        result.unrendered = dict(gen.unrendered)
        lint = self.modules.lint(model, gen)
        changed_vs_base = any(book.read(state.base_tip, p) != t for p, t in gen.files.items())
        if restart and not changed_vs_base:
            self.out.say(f"{branch}: generated files unchanged")
        else:
            self._commit(model, all_pins, gen, state, restart=restart)
        if open_pr is None and not changed_vs_base:
            self.out.say(f"{model.path}: the cookbook already shows this; no PR needed")
            return result
        path = self.modules.module_path(model)
        old = book.read(state.base_tip, path)
        kept = pr_text.kept_cells(old, gen.files[path], path)
        result.kept_cells = self._newly_kept(model, open_pr, kept)
        edited = pr_text.edit_notes(
            old, gen.files[path], gone=gen.gone, unrendered=gen.unrendered, where=path
        )
        body = pr_text.pr_body(
            model,
            all_pins,
            files=gen.files,
            module_path=path,
            old=old,
            notes=[*gen.notes, *edited],
            lint=lint,
            renders=self.modules.rendered,
            rendered_now=self.modules.rendered_now,
            inferencex_repo=self.s.inferencex_repo,
            body_limit=fitting.GITHUB_TEXT_LIMIT,
            say=self.out.say,
            kept=[cell for cells in kept.values() for cell, _ in cells],
        )
        result.open_pr = self._propose(model, body, base, open_pr)
        return result

    def _newly_kept(
        self, model: ModelSpec, open_pr: Pull | None, kept: dict[str, list[tuple[str, str]]]
    ) -> dict[str, list[str]]:
        """The kept cells the status names (config key -> cell ids): those the open PR's body
        does not name yet. Its recorded state says what it named, whichever run sees the
        cells again; the new body names them all."""
        named = st.read_kept(open_pr, self.gh.login(), model.path) if open_pr else set()
        out: dict[str, list[str]] = {}
        for key, cells in kept.items():
            if new := [cell for cell, _ in cells if cell not in named]:
                out[key] = new
        return out

    def _all_pins(
        self, model: ModelSpec, open_pr: Pull | None, pins: dict[str, Pin]
    ) -> dict[str, Pin]:
        """sync.yaml's pins, then what the open PR recorded for other PRs' configs, then
        ``pins``; a config ``model`` no longer lists is dropped from the PR with its pin."""
        keys = {c.key for c in model.configs}
        merged = {k: v for k, v in self.modules.config(model).pins().items() if k in keys}
        merged.update({k: v for k, v in self.recorded(open_pr, model).items() if k in keys})
        merged.update(pins)
        return merged

    def _commit(
        self,
        model: ModelSpec,
        pins: dict[str, Pin],
        gen: Generated,
        state: BranchState,
        *,
        restart: bool,
    ) -> None:
        """Commit ``gen``'s files on the branch (``restart``: on the default branch's tip) and
        push; files the branch already holds make no commit."""
        book, branch = self.clone(), branch_name(model.path)
        message = pr_text.commit_message(model, pins, self.s.inferencex_repo)
        commit = book.commit_files(
            state, gen.files, message, parent=state.base_tip if restart else None
        )
        if commit is not None:
            book.push(state, commit)
            self.out.did(f"{branch}: committed {commit[:12]}", f"{branch}: would commit and push")
        else:
            self.out.say(f"{branch}: generated files unchanged")

    def _propose(self, model: ModelSpec, body: str, base: str, open_pr: Pull | None) -> Pull | None:
        """Open the PR of the branch, or bring the open one's title and body up to date; the
        PR that is open after it."""
        title = pr_text.title(model)
        repo, branch = self.s.cookbook_repo, branch_name(model.path)
        if open_pr is None:
            made = self.gh.pulls.create(
                repo,
                title=title,
                body=body,
                head=links.head_ref(self.s.head_repo, branch),
                base=base,
                maintainer_can_modify=True,
            )
            self._pulls.pop(model.path, None)
            self.out.did(
                f"{model.path}: opened {repo}#{made.number}",
                f"{model.path}: would open a PR in {repo}",
            )
            fork = made.head_repo != repo
            if fork and not self.plan.dry_run and not made.maintainer_can_modify:
                self.out.say(
                    f"{repo}#{made.number}: GitHub refused to let maintainers "
                    f"push to {made.head_repo} (an organization's fork); opened without it"
                )
            return made
        if open_pr.body != body or open_pr.title != title:
            self.gh.pulls.update(
                repo,
                open_pr.number,
                title=title if open_pr.title != title else None,
                body=body if open_pr.body != body else None,
            )
            self._pulls.pop(model.path, None)
            self.out.did(
                f"{model.path}: updated {repo}#{open_pr.number}",
                f"{model.path}: would update {repo}#{open_pr.number}",
            )
        else:
            self.out.say(f"{model.path}: {repo}#{open_pr.number} already current")
        return open_pr
