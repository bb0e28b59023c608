"""Which rendering of a config is the right one, decided in one place, and each rendered once.

A config's commands depend on the srt-slurm release whose rules apply. Every command asks
this module's :class:`Renders` for a config, saying only what it knows (a run's record, the
line its logs come from, the date of the commit the config is read at); the choice is made
here, in this order, the first that applies:

1. the srt-slurm line forced (``version``: ``--srt-slurm``, or logs of the 1.x line);
2. the commit the run recorded in its ``srt-slurm-sha.txt``, when srt-slurm's history holds
   it and it is not the one the checkout gives (:func:`releases.from_run`);
3. for a branch the key's runner cloned, the branch as it was at: ``--as-of``; else the run's
   first log line (with srt-slurm's history to read it in); else the pin's run date
   (``sync.yaml``); else the ``date`` the caller reads the config at (a published cell's
   run date, the date of the commit a tree written from git objects holds); else the
   InferenceX checkout's commit date (:func:`releases.at_date`);
4. otherwise the release the runner script or the submodule pin names
   (:func:`releases.release_for`).

Renderings are kept by what decides their output (tree, key, the release as resolved, the
line), so two callers asking with different words for the same release share one render;
a refusal is kept too and raised again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from syncer.errors import SyncError
from syncer.inferencex import commits
from syncer.inferencex import render as render_mod
from syncer.inferencex.master import load_master
from syncer.inferencex.releases import Release, at_date, from_run, release_for
from syncer.inferencex.render import RenderedConfig
from syncer.inferencex.scripts import refuse_script_launched
from syncer.inferencex.srtconfigs import SrtSlurmFiles, discover

# A plain ``(tree, key) -> rendering`` (a test's stand-in for srt-slurm's rules).
Renderer = Callable[[Path, str], RenderedConfig]


@dataclass(frozen=True)
class RunFacts:
    """What a run's logs say about the srt-slurm it ran: the commits its
    ``srt-slurm-sha.txt`` files record, and when its first sweep log started."""

    srt_shas: tuple[str, ...] = ()
    started: str | None = None


_Key = tuple[str, str, Release | None, str | None]


class Renders:
    """The renderings of one command or event. ``srt_repo``: a clone of srt-slurm (a branch
    is read there at a date); ``srt_files``: where srt-slurm's own files come from (default:
    each tree's submodule); ``as_of``: the date given on the command line; ``pin_dates``:
    config key -> its pin's run date (read at call time: a caller may add pins later);
    ``render``: a plain renderer used instead of the rules (tests); ``read_at``: where and when
    a branch a key's runner cloned is read, asked once per key on its first rendering (the
    bot's srt-slurm clone and the date of the commit the key's tree holds; its error is kept
    and raised again, as a refusal is)."""

    def __init__(
        self,
        *,
        srt_repo: Path | None = None,
        srt_files: SrtSlurmFiles | None = None,
        as_of: str | None = None,
        pin_dates: Mapping[str, str] | None = None,
        render: Renderer | None = None,
        read_at: Callable[[str], tuple[Path | None, str | None]] | None = None,
    ) -> None:
        self.srt_repo = srt_repo
        self.srt_files = srt_files
        self.as_of = as_of
        self.pin_dates: Mapping[str, str] = pin_dates if pin_dates is not None else {}
        self._plain = render
        self._where = read_at
        # config key -> (the srt-slurm clone, the date) it is read at, as ``read_at`` said
        self._read_at: dict[str, tuple[Path | None, str | None] | SyncError] = {}
        self._done: dict[_Key, RenderedConfig | SyncError] = {}
        self._srt: dict[str, SrtSlurmFiles] = {}  # tree -> its srt-slurm files (a git read)
        self._resolved: dict[tuple[object, ...], tuple[Release, str | None]] = {}
        self._latest: dict[tuple[str, str], RenderedConfig] = {}

    @classmethod
    def of(cls, renderer: Renders | Renderer | None) -> Renders:
        """``renderer`` as a :class:`Renders` (a plain one is wrapped; None: the rules)."""
        if isinstance(renderer, Renders):
            return renderer
        return cls(render=renderer)

    def __call__(self, tree: Path, key: str) -> RenderedConfig:
        return self.get(tree, key)

    def get(
        self,
        tree: Path,
        key: str,
        *,
        run: RunFacts | None = None,
        version: str | None = None,
        date: str | None = None,
        srt_repo: Path | None = None,
    ) -> RenderedConfig:
        """The rendering of ``key`` read from ``tree`` under the release the precedence above
        chooses; rendered on first ask, a refusal raised again on every ask."""
        if self._plain is not None:
            plain = self._plain
            return self._kept((str(tree), key, None, version), lambda: plain(tree, key))
        placed_repo, placed_date = self._placed(key)
        repo = srt_repo or placed_repo or self.srt_repo
        date = date or placed_date
        srt = self.srt_files if self.srt_files is not None else self._discovered(tree)
        asked = (str(tree), key, repo, run, date, self.pin_dates.get(key))
        if asked not in self._resolved:  # the release is read from git: once per question
            self._resolved[asked] = self._release(tree, key, srt, repo, run, date)
        release, when = self._resolved[asked]
        if version == release.line:
            version = None  # the line the release follows anyway: the same rendering
        return self._kept(
            (str(tree), key, release, version),
            lambda: render_mod.render_config(
                tree, key, version=version, srt_files=srt, release=release,
                srt_repo=repo, as_of=when,
            ),
        )  # fmt: skip

    def rendered(self) -> Iterator[tuple[Path, str, RenderedConfig]]:
        """``(tree, key, rendering)``: the newest rendering of each config asked for."""
        for (tree, key), rendering in self._latest.items():
            yield Path(tree), key, rendering

    def applied(self) -> dict[str, Release]:
        """The release of every config rendered whose runner cloned a branch, by key."""
        return {
            key: r.release
            for _tree, key, r in self.rendered()
            if r.release is not None and r.release.branch is not None
        }

    def _placed(self, key: str) -> tuple[Path | None, str | None]:
        if self._where is None:
            return None, None
        if key not in self._read_at:
            try:
                self._read_at[key] = self._where(key)
            except SyncError as exc:
                self._read_at[key] = exc
        found = self._read_at[key]
        if isinstance(found, SyncError):
            raise found
        return found

    def _discovered(self, tree: Path) -> SrtSlurmFiles:
        if str(tree) not in self._srt:
            self._srt[str(tree)] = discover(tree)
        return self._srt[str(tree)]

    def _release(
        self,
        tree: Path,
        key: str,
        srt: SrtSlurmFiles,
        repo: Path | None,
        run: RunFacts | None,
        date: str | None,
    ) -> tuple[Release, str | None]:
        """The release ``key`` is rendered under and the date a branch is read at."""
        master = load_master(tree)
        master.check_sglang(key)  # the refusals in render_config's order, before any git
        refuse_script_launched(master, key)
        base = release_for(master.entry(key), submodule_commit=srt.commit)
        when = self.as_of or self.pin_dates.get(key) or date
        shas = sorted(set(run.srt_shas)) if run is not None else []
        if base.branch is not None:
            if when is None:
                when = commits.checkout_date(tree)
            dated = at_date(base, repo, when)
        else:
            dated = base
        if len(shas) == 1:
            ran = from_run(shas[0], base, repo)
            if ran.commit is not None and ran.commit != dated.commit:
                return ran, when
            return dated, when
        started = run.started if run is not None else None
        if base.branch is not None and self.as_of is None and started and repo is not None:
            at_run = at_date(base, repo, started)
            if at_run.commit is not None and at_run.commit != dated.commit:
                return at_run, started
        return dated, when

    def _kept(self, key: _Key, render: Callable[[], RenderedConfig]) -> RenderedConfig:
        if key not in self._done:
            try:
                self._done[key] = render()
            except SyncError as exc:
                self._done[key] = exc
        found = self._done[key]
        if isinstance(found, SyncError):
            raise found
        if key[3] is None:  # another line's rendering is a comparison's, not the config's
            self._latest[key[0], key[1]] = found
        return found
