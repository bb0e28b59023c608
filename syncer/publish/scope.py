"""Which configs an InferenceX PR carries, and the commit each is read at.

Two sources, one answer: without the bot's InferenceX clone, the configs sync.yaml lists for
the PR, read from the one ``--inferencex`` checkout; with it (discovery), the configs the PR's
commits add or change plus those a bot PR still records for it, each read at the commit the
cookbook shows it at (``prconfigs.InferenceXClone``, given by the bot, which closes it).
"""

from __future__ import annotations

from syncer.github.client import GitHubClient
from syncer.github.records import Pull, PullState
from syncer.model import PointStatus
from syncer.publish.cookbook_pr import CookbookPR
from syncer.publish.prconfigs import InferenceXClone, PRKeys
from syncer.publish.routing import pr_configs
from syncer.publish.settings import Settings
from syncer.publish.status_comment import StatusComments
from syncer.syncconfig import ConfigSpec, ModelSpec, Pin


class PRScope:
    """The configs of InferenceX PRs for one event (each PR read once)."""

    def __init__(
        self,
        settings: Settings,
        *,
        infx: GitHubClient,
        ix: InferenceXClone | None,
        book: CookbookPR,
        status: StatusComments,
    ) -> None:
        self.settings = settings
        self.infx = infx
        # Discovery: configs found from each PR's commits in the bot's InferenceX clone, each
        # config read at its own commit; None: sync.yaml's configs and pins, one checkout.
        self.ix = ix
        self.book = book
        self.status = status
        self._pulls: dict[int, Pull] = {}

    def known(self, pulls: list[Pull]) -> None:
        """PRs as the list of open PRs returned them: not read again one by one."""
        for pull in pulls:
            self._pulls.setdefault(pull.number, pull)

    def hand(self, keys: PRKeys) -> None:
        """The configs the workflow's gate found for a PR at its head (discovery only)."""
        if self.ix is not None:
            self.ix.hand(keys)

    def prefetch(self, pulls: list[Pull]) -> None:
        """The heads of ``pulls`` fetched into the clone at once (discovery only)."""
        if self.ix is not None:
            self.ix.prefetch(pulls)

    def pull(self, number: int) -> Pull:
        """InferenceX PR ``number``, read once per event."""
        if number not in self._pulls:
            self._pulls[number] = self.infx.pulls.get(self.settings.inferencex_repo, number)
        return self._pulls[number]

    def configs_of(self, number: int) -> list[tuple[ModelSpec, ConfigSpec]]:
        """The configs InferenceX PR ``number`` carries, with their model: sync.yaml's listing,
        or (discovery) those its commits add or change plus those a bot PR still records for
        it (a merged PR's commits no longer differ from main)."""
        if self.ix is None:
            found = pr_configs(self.settings.config, number)
            return [(m, c) for m, c in found if self.settings.model in (None, m.path)]
        pull = self.pull(number)
        keys = self.ix.keys(pull)
        pairs = list(keys.mapped)
        seen = {key for _, key in pairs}
        for model in self.settings.config.models:
            if self.settings.model not in (None, model.path):
                continue
            for bot_pr in self.book.pulls(model):
                if bot_pr.state != PullState.OPEN and not bot_pr.merged:
                    continue
                for key, pin in self.book.recorded(bot_pr, model).items():
                    if pin.pr == str(number) and key not in seen:
                        pairs.append((model, key))
                        seen.add(key)
        return [
            (m, self.settings.config.config_spec(m, key, in_progress(key, pull)))
            for m, key in pairs
            if self.settings.model in (None, m.path)
        ]

    def note_unmapped(self, number: int) -> None:
        """Name the PR's AgentX configs that no cookbook page takes (discovery only)."""
        if self.ix is None:
            return
        keys = self.ix.keys(self.pull(number))
        if keys.unmapped:
            self.status.unmapped(number, keys.unmapped, keys.notice_model(self.settings.config))

    def place(self, pins: dict[str, Pin]) -> None:
        """Read each of ``pins``' configs at the commit its pin names (discovery only)."""
        if self.ix is not None:
            self.ix.place({key: (pin.sha, pin.pr) for key, pin in pins.items()})

    def owners(self) -> tuple[dict[str, str | None], dict[str, str | None]]:
        """Where this event reads each config from: key -> its PR (None: main), and each
        commit a config is read at -> its PR (discovery; else sync.yaml's pins)."""
        if self.ix is None:
            return {key: pin.pr for key, pin in self.settings.config.pins().items()}, {}
        commits = {sha: self.ix.pr_of.get(key) for key, sha in self.ix.commit_of.items()}
        return dict(self.ix.pr_of), commits

    def unchanged(self, key: str, old: str, new: str) -> bool:
        """Whether none of the files config ``key`` reads differ between commits ``old`` and
        ``new`` (discovery only; without the clone every push counts as a change)."""
        return self.ix is not None and self.ix.unchanged(key, old, new)

    def in_progress_pins(
        self, model: ModelSpec, cfgs: list[ConfigSpec], pull: Pull
    ) -> tuple[ModelSpec, list[ConfigSpec], dict[str, Pin]]:
        """``model`` and ``cfgs`` as this event publishes them, each config pinned in progress
        at the commit it is read at (discovery: :meth:`_live_model`; else ``pull``'s head)."""
        if self.ix is None:
            return model, cfgs, {c.key: in_progress(c.key, pull) for c in cfgs}
        model = self._live_model(model, cfgs, pull)
        cfgs = [model.config(c.key) for c in cfgs]
        return model, cfgs, {c.key: c.pin for c in cfgs}

    def _live_model(self, model: ModelSpec, cfgs: list[ConfigSpec], pull: Pull) -> ModelSpec:
        """``model`` as its page shows it now plus ``pull``'s configs, each placed at the
        commit it is read at: the others' at the commit their cells record, this PR's at its
        head, except an unpinned config whose files are the same as at the commit it is
        already shown at (a push that changes none of them republishes nothing)."""
        published, main = self.book.published(model)
        pins = dict(published)
        for cfg in cfgs:
            old = published.get(cfg.key)
            sha = pull.head_sha
            if (
                old is not None
                and old.status == PointStatus.IN_PROGRESS
                and old.pr == str(pull.number)
                and self.unchanged(cfg.key, old.sha, pull.head_sha)
            ):
                sha = old.sha
            pins[cfg.key] = in_progress(cfg.key, pull, sha)
        self.place(pins)
        return self.book.modules.live(model, pins, main)

    def synced_pins(self, model: ModelSpec) -> dict[str, Pin]:
        """The pins the cookbook already has for ``model`` (sync.yaml's; in discovery, the
        default branch's module)."""
        if self.ix is not None:
            return self.book.published(model, proposed=False)[0]
        return self.settings.config.pins()


def in_progress(key: str, pull: Pull, sha: str | None = None) -> Pin:
    """Config ``key`` shown in progress at ``pull``'s head (or at ``sha``)."""
    return Pin(
        key, str(pull.number), sha or pull.head_sha, None, None, PointStatus.IN_PROGRESS, None
    )
