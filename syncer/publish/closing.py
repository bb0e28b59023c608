"""The ends of a config's way to the cookbook: an InferenceX PR closed (merged or not), a bot PR
merged or closed, and the catch-up of such events GitHub dropped.

An InferenceX PR closed without merging never reaches InferenceX main, so a cookbook PR that
only exists for it is closed (users of PR bots expect stale PRs closed, not left for
reviewers); one that still carries another open or merged InferenceX PR stays open. A merged
or closed bot PR tells every InferenceX PR it carried (live since that PR, or closed unmerged).

Nothing here syncs an InferenceX PR: the catch-up names the merged PRs that need it, and the
bot syncs them.
"""

from __future__ import annotations

from collections.abc import Iterator, Set
from enum import Enum

from syncer.errors import SyncError
from syncer.github.api import NotFound
from syncer.github.client import GitHubClient
from syncer.github.records import Pull, PullState
from syncer.model import PointStatus
from syncer.publish import status as st
from syncer.publish.cookbook_pr import CookbookPR
from syncer.publish.items import Items
from syncer.publish.scope import PRScope
from syncer.publish.settings import Outcome, Settings
from syncer.publish.status_comment import StatusComments
from syncer.syncconfig import ConfigSpec, ModelSpec, Pin


class _Found(Enum):
    """What the catch-up found of a PR a bot PR carries."""

    OPEN = "open"  # nothing was dropped
    CAUGHT_UP = "caught up"  # closed (or gone), and its closing done here
    TO_SYNC = "to sync"  # merged with a pin the cookbook PR still calls a PR pin


class Closing:
    """What the bot does when a PR on either side closes."""

    def __init__(
        self,
        settings: Settings,
        *,
        infx: GitHubClient,
        cookbook_gh: GitHubClient,
        book: CookbookPR,
        scope: PRScope,
        status: StatusComments,
        items: Items,
        out: Outcome,
    ) -> None:
        self.settings = settings
        self.infx = infx
        self.cgh = cookbook_gh
        self.book = book
        self.scope = scope
        self.status = status
        self.items = items
        self.out = out
        self._closed_out: set[int] = set()  # InferenceX PRs closed unmerged, done this event

    # -- dropped events ---------------------------------------------------------------------------

    def catch_up(
        self,
        model: ModelSpec,
        bot_prs: list[Pull] | None = None,
        *,
        handled: Set[int],
        open_now: set[int] | None = None,
        caught: set[int] | None = None,
    ) -> Iterator[int]:
        """Catch up the closed InferenceX PRs that ``model``'s bot PRs (default: the open one)
        still carry as not verified, except those this run ``handled`` already: one closed
        without merging is closed out here; one merged is yielded, for the caller to bring up
        to date (``Bot.sync_pr``, which adds it to ``handled``) before the next is looked at.

        GitHub keeps one pending run per concurrency group and cancels the older pending one
        when another event arrives, so a ``pull_request: closed`` can be dropped behind a later
        event of the same model; the later run (this one) does its work. The scheduled run
        passes the newest merged bot PRs too: a PR merged after its cookbook PR (a fork's, whose
        own events never publish) is still carried there as a PR pin. Both are idempotent: a
        PR already brought up to date is read, not written again.

        What is open is known without reading each carried PR: the scheduled run passes the
        open PRs it listed (``open_now``) and the closed ones it caught up before
        (``caught``, the ledger's, added to); an event's run asks once for the PRs closed
        last, so its cost does not grow with the PRs the cookbook PR carries."""
        if bot_prs is None:
            open_pr = self.book.open_pull(model)
            bot_prs = [open_pr] if open_pr is not None else []
        closed_last: set[int] | None = None
        if open_now is None and bot_prs:
            repo = self.settings.inferencex_repo
            closed_last = {p.number for p in self.infx.pulls.recently_closed(repo)}
        for bot_pr in bot_prs:
            recorded = self.book.recorded(bot_pr, model)
            waiting = (
                {int(p.pr) for p in recorded.values() if p.pr and p.status != PointStatus.VERIFIED}
                - handled
                - self._closed_out
            )
            if open_now is not None:
                waiting -= open_now | (caught if caught is not None else set())
            if closed_last is not None:
                waiting &= closed_last
            for number in sorted(waiting):
                found = self._catch_up_pr(number, recorded)
                if found is _Found.OPEN:
                    continue
                if found is _Found.TO_SYNC:
                    yield number
                if caught is not None:
                    caught.add(number)

    def _catch_up_pr(self, number: int, recorded: dict[str, Pin]) -> _Found:
        """What PR ``number`` is, and its closing without merging caught up here."""
        try:
            pull = self.scope.pull(number)  # read once per event
        except NotFound:
            return _Found.CAUGHT_UP
        if pull.state != PullState.CLOSED:
            return _Found.OPEN
        if not self.scope.configs_of(number):
            return _Found.CAUGHT_UP
        if not pull.merged:
            self.out.say(f"PR #{number}: closed without merging; catching up")
            self.closed_unmerged(pull, self.scope.configs_of(number))
        elif any(
            p.status == PointStatus.VERIFIED_PR for p in recorded.values() if p.pr == str(number)
        ):
            # Merged with a pinned run the cookbook PR still calls a PR pin.
            self.out.say(f"PR #{number}: merged; catching up")
            return _Found.TO_SYNC
        return _Found.CAUGHT_UP

    # -- an InferenceX PR closed without merging --------------------------------------------------

    def closed_unmerged(self, pull: Pull, configs: list[tuple[ModelSpec, ConfigSpec]]) -> None:
        """Close the cookbook PR that only carries ``pull``, or say which PRs keep it open; on
        closed PRs a comment is only edited, or posted where the bot already commented for
        the model (``create=False``)."""
        self._closed_out.add(pull.number)
        for model in {m.path: m for m, _ in configs}.values():
            pulls = self.book.pulls(model)
            open_pr = next((p for p in pulls if p.state == PullState.OPEN), None)
            recorded = self.book.recorded(open_pr, model)
            carried = [n for n in self._carried_prs(model, recorded) if n != pull.number]
            alive = [n for n in carried if self._still_coming(n)]
            notify = [pull.number]
            closed: Pull | None = None
            if open_pr is None:
                # A replayed event: the cookbook PR closed earlier for this one is still named.
                closed = next((p for p in pulls if self.book.carries(p, pull.number, model)), None)
            elif alive:
                self.out.say(
                    f"{model.path}: {self.settings.cookbook_repo}#{open_pr.number} stays open for "
                    + ", ".join(f"#{n}" for n in alive)
                )
            else:
                self.book.close(model, open_pr, [pull.number, *carried])
                closed, open_pr = open_pr, None
                notify += carried  # every InferenceX PR it carried learns it
            removal = self._remove_published(model, pull.number) if open_pr is None else None
            for number in notify:
                items = [
                    self.items.item(
                        model,
                        cfg.key,
                        pull.head_sha,
                        pin=cfg.pin,
                        source_closed=True,
                        open_pr=open_pr.number if open_pr else None,
                        closed_pr=closed.number if closed else None,
                        kept_for=alive,
                    )
                    for m, cfg in self.scope.configs_of(number)
                    if m.path == model.path
                ]
                for item in items:
                    item.removal_pr = removal
                if items:
                    self.status.report(number, items, create=False)

    def _remove_published(self, model: ModelSpec, number: int) -> int | None:
        """The cells the cookbook's default branch already shows for InferenceX PR ``number``
        (closed without merging: its configs never reach main) removed in a bot PR, the one
        way a published cell leaves the page; the PR's number (0 in a dry run), or None when
        the page shows none of them."""
        live, _ = self.book.published(model, proposed=False)
        gone = {
            key: f"its InferenceX PR #{number} was closed without merging"
            for key, pin in live.items()
            if pin.pr == str(number) and pin.status != PointStatus.VERIFIED
        }
        if not gone:
            return None
        result = self.book.publish(model, {}, gone=gone)
        return result.open_pr.number if result.open_pr is not None else None

    def _carried_prs(self, model: ModelSpec, recorded: dict[str, Pin]) -> list[int]:
        """InferenceX PRs a cookbook PR carries something for: a config still on its way (not
        verified) or re-pinned by the bot; a verified pin exactly as the cookbook already has it
        keeps nothing open."""
        synced = self.scope.synced_pins(model)
        return sorted(
            {
                int(p.pr)
                for k, p in recorded.items()
                if p.pr and (p.status != PointStatus.VERIFIED or p != synced.get(k))
            }
        )

    def _still_coming(self, number: int) -> bool:
        """Whether InferenceX PR ``number`` is open or merged (its config may still go live)."""
        try:
            other = self.scope.pull(number)  # read once per event
        except NotFound:
            return False
        return other.state == PullState.OPEN or other.merged

    # -- a bot PR merged or closed ----------------------------------------------------------------

    def cookbook_closed(self, number: int) -> None:
        """A bot PR merged or closed: each InferenceX PR whose pin it changed gets that
        milestone (live since this PR, or this PR closed without merging).

        The milestone is this PR's own: its number, whether it merged, and the pins it
        recorded. Nothing of the bot's PRs as they are now (an open refresh, a newer merge)
        goes into it, so every run that looks at this PR, however late and however often,
        writes the same comment, found again by its marker. A PR whose pin this PR carried
        unchanged from the bot's merge before it was not acted on here and is told nothing."""
        pull = self.cgh.pulls.get(self.settings.cookbook_repo, number)
        me = self.cgh.login()
        if pull.state != PullState.CLOSED:
            self.out.say(f"{self.settings.cookbook_repo}#{number} is still open; nothing to do")
            return
        model = next(
            (m for m in self.settings.config.models if st.pr_marker(m.path) in pull.body), None
        )
        if model is not None and self.settings.model not in (None, model.path):
            self.out.say(
                f"{self.settings.cookbook_repo}#{number} is {model.path}'s; not this run's model"
            )
            return
        if pull.user != me or model is None:
            self.out.say(
                f"{self.settings.cookbook_repo}#{number} is not a sync PR of this bot; ignored"
            )
            return
        changed = self._changed_by(pull, model)
        failed = []
        for pr in sorted({int(p.pr) for p in changed.values() if p.pr}):
            # One unreachable PR (deleted, transferred) must not keep the others stale.
            try:
                self._milestone(pr, model, pull, changed)
            except SyncError as exc:
                failed.append(f"#{pr}: {exc}")
        if failed:
            raise SyncError("status not refreshed on " + "; ".join(failed))

    def _changed_by(self, pull: Pull, model: ModelSpec) -> dict[str, Pin]:
        """The pins ``pull`` (a bot PR) recorded that the bot's newest merge before it did not
        already have: what this cookbook PR itself brought."""
        pulls = self.book.pulls(model)
        at = next((i for i, p in enumerate(pulls) if p.number == pull.number), len(pulls))
        older = pulls[at + 1 :]
        before = next((p for p in older if p.merged), None)
        had = self.book.recorded(before, model)
        return {k: p for k, p in self.book.recorded(pull, model).items() if p != had.get(k)}

    def _milestone(self, number: int, model: ModelSpec, pull: Pull, pins: dict[str, Pin]) -> None:
        """Tell InferenceX PR ``number`` that bot PR ``pull`` merged (or closed unmerged) with
        its ``pins``; nothing is regenerated. A closed PR is told only where the bot already
        commented for the model; one closed without merging already has its own word (its
        cookbook PR closed with it), so a closed bot PR tells only those still coming."""
        if not pull.merged and not self._still_coming(number):
            return
        items = []
        for key, pin in sorted(pins.items()):
            if pin.pr != str(number):
                continue
            item = self.items.item(
                model,
                key,
                pin.sha,
                pin=pin,
                merged_pr=pull.number if pull.merged else None,
                closed_pr=None if pull.merged else pull.number,
            )
            items.append(item)
        if items:
            self.status.report(number, items, create=self._open(number))

    def _open(self, number: int) -> bool:
        try:
            return self.scope.pull(number).state == PullState.OPEN  # read once per event
        except NotFound:
            return False
