"""The InferenceX side of the bot from git objects: the configs a PR carries and the commit each
config of a model is read at.

The bot's InferenceX clone (``--inferencex-clone``) holds only objects and refs; PR heads and
``main`` are fetched into it (:mod:`syncer.inferencex.commits`), and nothing of a PR is checked
out. A PR's configs are found from its commits alone (:mod:`syncer.inferencex.discovery`) and
mapped to their cookbook model by ``sync.yaml``'s rules; a key no model claims is kept with the
reason, for the status comment. Every config a model shows is rendered from the tree of the
commit its cells are published at (another open PR's head, an older main), never from the
event PR's tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from syncer import links
from syncer.errors import SyncError
from syncer.github.client import GitHubClient
from syncer.github.records import Pull
from syncer.inferencex import commits, srt_history
from syncer.inferencex.discovery import changed_configs
from syncer.inferencex.master import load_master
from syncer.publish.settings import Outcome, Settings
from syncer.publish.srtslurm import add_srt_slurm, base_submodule_url
from syncer.syncconfig import ModelSpec, SyncConfig
from syncer.wording import js


@dataclass
class PRKeys:
    """What InferenceX PR ``number`` adds or changes, at ``head`` against ``base``."""

    number: int
    head: str
    base: str | None
    mapped: list[tuple[ModelSpec, str]] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)  # "no cookbook page for ..." reasons

    def notice_model(self, config: SyncConfig) -> str | None:
        """The one model whose job names the keys no page takes (None: there are none): the
        first model the PR touches, else sync.yaml's first model (a job runs for it)."""
        if not self.unmapped:
            return None
        touched = sorted({m.path for m, _ in self.mapped})
        return touched[0] if touched else (config.models[0].path if config.models else None)


def remote_of(settings: Settings) -> str:
    """Where the bot's InferenceX clone fetches from: ``--inferencex-remote``, else the clone's
    own ``origin`` (a local mirror serves offline), else GitHub's repository."""
    if settings.inferencex_remote:
        return settings.inferencex_remote  # the clone's origin not asked for (a git process)
    clone = settings.inferencex_clone
    origin = commits.origin_url(clone) if clone is not None and commits.is_clone(clone) else None
    return origin or links.repo_url(settings.inferencex_repo) + ".git"


def pr_head(settings: Settings, number: int) -> str | None:
    """PR ``number``'s head as its ``refs/pull/<n>/head`` on the remote says (fetched into the
    clone), or None when the remote has no such ref: what a dry run without a token takes for
    the head an ``issue_comment`` event does not name."""
    if settings.inferencex_clone is None:
        return None
    ref = f"refs/pull/{number}/head"
    return commits.fetch(settings.inferencex_clone, remote_of(settings), [ref], partial=True)[ref]


class InferenceXClone:
    """The bot's InferenceX clone for one event: fetches, discovery per PR, and the tree each
    config is rendered from (every tree removed by :meth:`close`)."""

    def __init__(
        self, settings: Settings, *, gh: GitHubClient | None, out: Outcome | None = None
    ) -> None:
        if settings.inferencex_clone is None:
            raise SyncError("no InferenceX clone given (--inferencex-clone)")
        self.settings = settings
        self.gh = gh
        self.out = out or Outcome()
        self.clone = settings.inferencex_clone
        self.remote = remote_of(settings)
        self.trees = commits.Trees(self.clone)
        self.commit_of: dict[str, str] = {}  # config key -> the commit it is rendered at
        self.pr_of: dict[str, str | None] = {}  # config key -> the PR it is shown from
        self._checked: set[str] = set()  # configs whose commit the clone has
        self._main: str | None = None
        self._keys: dict[int, PRKeys] = {}
        self._handed: dict[int, PRKeys] = {}  # found by the gate for this event (handoff.py)
        self._with_srt: set[str] = set()  # commits whose tree has srt-slurm's files added
        # (config key, commit) -> why its tree cannot be had: asked once per event (the
        # renderer asks for a config several times; each ask would fetch again)
        self._unreadable: dict[tuple[str, str | None], SyncError] = {}
        self._srt_fetched = False

    def close(self) -> None:
        self.trees.close()

    def main(self) -> str:
        """InferenceX ``main`` as fetched once for this event."""
        if self._main is None:
            self.prefetch([])
        assert self._main is not None
        return self._main

    def prefetch(self, pulls: list[Pull]) -> None:
        """``main`` (once per event) and the heads of ``pulls`` the clone lacks, in one fetch:
        what a reconcile of many PRs reads, fetched at once rather than a fetch per PR."""
        refs = ["main"] if self._main is None else []
        refs += [f"refs/pull/{p.number}/head" for p in pulls if not self._has(p.head_sha)]
        if not refs:
            return
        fetched = self._fetch(refs)
        if self._main is None:
            if fetched["main"] is None:
                raise SyncError(f"InferenceX has no branch main at {self.remote}")
            self._main = fetched["main"]

    def _fetch(self, refs: list[str]) -> dict[str, str | None]:
        return commits.fetch(self.clone, self.remote, refs, partial=True)

    def _has(self, sha: str | None) -> bool:
        return sha is not None and commits.has_commit(self.clone, sha)

    def head(self, number: int, sha: str | None) -> str:
        """PR ``number``'s head commit in the clone: ``sha`` (what the API or the event says)
        fetched by its ``refs/pull/<n>/head``, else by id; without ``sha``, that ref's tip."""
        if sha is not None and self._has(sha):
            return sha  # fetched with the others (:meth:`prefetch`), or by an earlier event
        ref = f"refs/pull/{number}/head"
        # ``main`` with it when not fetched yet: every PR's discovery reads main next (its
        # base), and one fetch of both costs half the processes of two.
        first = self._main is None
        fetched = self._fetch([*(["main"] if first else []), ref, *([sha] if sha else [])])
        if first and fetched["main"] is not None:
            self._main = fetched["main"]
        head = fetched[sha] if sha else fetched[ref]
        if head is None:
            raise SyncError(
                f"PR #{number}: head {sha or ref} could not be fetched from {self.remote}"
            )
        return head

    def keys(self, pull: Pull) -> PRKeys:
        """The AgentX configs ``pull`` adds or changes, mapped to their models (once per event)."""
        return self.keys_at(pull.number, pull.head_sha)

    def keys_at(self, number: int, head_sha: str | None, base_hint: str | None = None) -> PRKeys:
        """:meth:`keys` from a PR's number and head (the event's), without the API when
        ``base_hint`` (the event's base commit) or ``main`` tells the base."""
        if number not in self._keys:
            handed = self._handed.get(number)
            if handed is not None and handed.head == head_sha:
                # The gate discovered it at this head: not again (its commits are fetched:
                # the job reads the PR's configs there).
                self.head(number, head_sha)
                found = handed
            else:
                found = self._discover(number, head_sha, base_hint)
            self._keys[number] = found
            names = [k for _, k in found.mapped] + [u.split(":")[0] for u in found.unmapped]
            if names:
                self.out.say(f"PR #{number}: AgentX configs {', '.join(names)}")
        return self._keys[number]

    def _discover(self, number: int, head_sha: str | None, base_hint: str | None) -> PRKeys:
        head = self.head(number, head_sha)
        base = self._base(number, head, base_hint)
        found = PRKeys(number, head, base)
        for item in changed_configs(self.clone, base, head, self.trees):
            model, why = self.settings.config.model_for(item.key, item.model_prefix, item.hardware)
            if model is None:
                found.unmapped.append(why or item.key)
            else:
                found.mapped.append((model, item.key))
        return found

    def hand(self, keys: PRKeys) -> None:
        """What the gate found for a PR at its head: used while the PR's head is that one."""
        self._handed[keys.number] = keys

    def _base(self, number: int, head: str, hint: str | None) -> str | None:
        """What the PR's "Files changed" compares against: the merge base with ``main`` (or
        with the base commit the event names); once the PR is merged that is the head itself,
        so the parent of its first commit (from the API) instead."""
        for other in ([hint] if hint else []) + [self.main()]:
            if other == hint and self._fetch([other])[other] is None:
                continue
            base = commits.merge_base(self.clone, other, head)
            if base is not None and base != head:
                return base
        if self.gh is not None:
            first = next(iter(self.gh.pulls.commits(self.settings.inferencex_repo, number)), None)
            if first is not None and commits.has_commit(self.clone, first):
                return commits.resolve(self.clone, f"{first}^")
        return head

    def unchanged(self, key: str, old: str, head: str) -> bool:
        """Whether nothing ``key`` reads differs between two commits (entry, recipe, shared
        blocks, golden AL, srt-slurm pin); False when ``old`` is no longer in the clone."""
        if old == head:
            return True
        if not commits.has_commit(self.clone, old):
            return False
        return all(f.key != key for f in changed_configs(self.clone, old, head, self.trees))

    def history(self, key: str) -> tuple[Path | None, str | None]:
        """Where and when a branch of srt-slurm that config ``key``'s runner cloned is read
        (``render_config(srt_repo=, as_of=)``): the bot's srt-slurm clone, its branches
        fetched once per event from the URL main's ``.gitmodules`` gives srt-slurm, and the
        committer date of the commit ``key`` is rendered at (a tree written from git objects
        is no checkout whose date the renderer could read)."""
        commit = self._commit(key)
        return self._srt_clone(), commits.commit_date(self.clone, commit)

    def _srt_clone(self) -> Path | None:
        clone = self.settings.srt_slurm_clone
        if clone is not None and not self._srt_fetched:
            url = base_submodule_url(self.clone, self.main())
            if url is not None:
                srt_history.fetch_branches(clone, url)
            self._srt_fetched = True
        return clone

    def place(self, shown: dict[str, tuple[str, str | None]]) -> None:
        """Record the commit each config is rendered at (``key -> (commit, its PR)``). The
        commit is fetched when the config is first rendered (:meth:`_commit`), so a config an
        event leaves as published needs no commit InferenceX may no longer have."""
        for key, (sha, pr) in shown.items():
            self.commit_of[key] = sha
            self.pr_of[key] = pr  # known even when its commit is gone (who can fix that)

    def _commit(self, key: str) -> str:
        """The commit config ``key`` is rendered at, fetched if the clone lacks it: the PR's
        head ref (its history holds the commit), else the commit by id; else ``main``. A
        commit InferenceX no longer has is an error naming it: the config's cells are never
        rendered from another commit than the one they are shown at."""
        sha = self.commit_of.get(key)
        if sha is None:
            return self.main()
        if key not in self._checked:
            pr = self.pr_of.get(key)
            if not commits.has_commit(self.clone, sha):
                self._fetch_placed()
            if not commits.has_commit(self.clone, sha):
                where = f"PR #{pr}" if pr else "main"
                raise SyncError(
                    f"{key}: its cells are shown at InferenceX commit {js(sha)} ({where}), which "
                    f"{self.remote} no longer has; they cannot be rendered at that commit"
                )
            self._checked.add(key)
        return sha

    def _fetch_placed(self) -> None:
        """Every placed commit the clone lacks, in one fetch: each one's PR head ref (its
        history holds the commit), then the commits by id (a module shows configs of many
        PRs; a fresh clone lacks them all)."""
        refs: list[str] = []
        for key, sha in self.commit_of.items():
            if key in self._checked or commits.has_commit(self.clone, sha):
                continue
            pr = self.pr_of.get(key)
            refs += ([f"refs/pull/{pr}/head"] if pr else []) + [sha]
        if refs:
            self._fetch(list(dict.fromkeys(refs)))

    def _fetched(self, sha: str, pr: str | None) -> bool:
        """Whether the clone has commit ``sha``, fetched if it lacks it: by its PR's head ref
        (whose history holds it), else by id."""
        if not self._has(sha):
            self._fetch(([f"refs/pull/{pr}/head"] if pr else []) + [sha])
        return self._has(sha)

    def listed_at(self, key: str, sha: str, pr: str | None) -> bool | None:
        """Whether InferenceX's master config at commit ``sha`` lists config ``key``; None when
        that cannot be read (InferenceX no longer has the commit, or its master config does not
        load)."""
        if not self._fetched(sha, pr):
            return None
        try:
            return key in load_master(self.trees.at(sha)).data
        except SyncError:
            return None

    def main_tree(self) -> Path:
        """InferenceX ``main``'s data files, as fetched for this event (no srt-slurm)."""
        return self.trees.at(self.main())

    def tree(self, key: str) -> Path:
        """The tree config ``key`` is rendered from: the commit :meth:`place` recorded, else
        ``main`` (a KV donor the page does not show)."""
        placed = (key, self.commit_of.get(key))
        if placed in self._unreadable:
            raise self._unreadable[placed]
        try:
            commit = self._commit(key)
            tree = self.trees.at(commit)
            if commit not in self._with_srt:
                # srt-slurm at the tree's own pin, from the URL main's .gitmodules gives.
                add_srt_slurm(self.clone, self.main(), tree, self.trees)
                self._with_srt.add(commit)
        except SyncError as exc:
            self._unreadable[placed] = exc
            raise
        return tree
