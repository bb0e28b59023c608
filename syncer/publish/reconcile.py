"""The scheduled run: what no event reported, found from the API's state and brought up to date.

Nothing in the cookbook's repository tells InferenceX that a bot PR was merged, a fork PR's own
events never reach a job with the cookbook token, and GitHub keeps one pending run per
concurrency group (a ``/use`` queued behind a running job is cancelled by the next event of
the same model). The workflow therefore runs ``sync bot --schedule`` hourly (and on every
workflow_dispatch without an input), and per model:

1. the newest bot PRs that are closed: the InferenceX PRs they carried learn that the config
   is live (merged) or that the cookbook PR was closed;
2. the open and newest merged bot PRs: InferenceX PRs they carry that were closed or merged
   since are handled (a merged one's pin becomes ``verified``);
3. every open InferenceX PR with configs of the model: unless what the bot last published for
   it still holds (same head, same pinning comment and run, that run's result artifacts not
   expired, the bot's comment there), it is synced exactly as an event would sync it.

A PR that is settled costs a few reads and nothing else: when nothing changed, the run writes
nothing at all.
"""

from __future__ import annotations

from collections.abc import Iterable

from syncer.errors import SyncError
from syncer.model import PointStatus
from syncer.publish import pins as pinrules
from syncer.publish.bot import Bot
from syncer.publish.records import Pull, PullState
from syncer.publish.settings import Outcome
from syncer.syncconfig import ModelSpec, Pin

# Bot PRs per model looked at, newest first. An hourly run sees at most one or two of them
# close in between; a schedule that was off for longer is caught up by workflow_dispatch
# with the cookbook PR's number (docs/bot.md).
RECENT_BOT_PRS = 3


def reconcile(bot: Bot) -> Outcome:
    """Bring every model of this run (``--model``, else all) up to date; SyncErrors of single
    PRs are collected, so one bad PR never keeps the others stale."""
    s = bot.s
    models = [s.config.model(s.model)] if s.model else list(s.config.models)
    failed: list[str] = []
    bot.defer_publishing()  # each model published once, with every PR's pins
    try:
        for model in models:
            _cookbook_side(bot, model, failed)
        pulls = bot.infx.pulls.open(s.inferencex_repo)
        bot.scope.prefetch(pulls)  # one fetch for every head, not one per PR
        for pull in pulls:
            if bot.handled(pull.number):
                continue
            try:
                _reconcile_pr(bot, pull)
            except SyncError as exc:
                # A PR whose files do not parse is that PR's error; the others go on.
                failed.append(f"#{pull.number}: {exc}")
        failed += bot.publish_deferred()
    finally:
        bot.close()
    if failed:
        raise SyncError("scheduled run: " + "; ".join(failed))
    return bot.out


def _reconcile_pr(bot: Bot, pull: Pull) -> None:
    configs = bot.scope.configs_of(pull.number)
    if not configs:
        bot.scope.note_unmapped(pull.number)  # a PR whose configs no page takes is told so
        return
    if _settled(bot, pull, {m.path: m for m, _ in configs}.values()):
        bot.out.say(f"PR #{pull.number}: up to date")
        return
    bot.out.say(f"PR #{pull.number}: not up to date; syncing")
    bot.sync_pr(pull.number)


def _cookbook_side(bot: Bot, model: ModelSpec, failed: list[str]) -> None:
    recent = bot.book.pulls(model)[:RECENT_BOT_PRS]
    # Oldest first: PRs that closed while the schedule was off are told in the order they did.
    for pull in reversed(recent):
        if pull.state == PullState.CLOSED:
            try:
                bot.closing.cookbook_closed(pull.number)
            except SyncError as exc:
                failed.append(f"{bot.s.cookbook_repo}#{pull.number}: {exc}")
    carriers = [p for p in bot.book.pulls(model)[:RECENT_BOT_PRS] if not _closed_unmerged(p)]
    try:
        bot.closing.catch_up(model, carriers)
    except SyncError as exc:
        failed.append(f"{model.path}: {exc}")


def _closed_unmerged(pull: Pull) -> bool:
    return pull.state == PullState.CLOSED and not pull.merged


def _settled(bot: Bot, pull: Pull, models: Iterable[ModelSpec]) -> bool:
    """Whether what the bot last published for ``pull`` (the pins its bot PRs record, its
    status comment) is what syncing it now would publish, as far as reads can tell without
    downloading a run: the same head, the same pinning comment and run, the run still
    pinnable (its result artifacts not expired), and the bot's comment there."""
    repo = bot.s.inferencex_repo
    comments = bot.infx.comments.on(repo, pull.number)
    selection = pinrules.select(comments)
    pinning = pinrules.pinning_comment(comments)
    pinnable: bool | None = None  # asked once, only when a recorded pin names a run
    for model in models:
        if not bot.status.reported(comments, model.path):
            return False
        recorded = _recorded(bot, model)
        for m, cfg in bot.scope.configs_of(pull.number):
            if m.path != model.path:
                continue
            pin = recorded.get(cfg.key)
            if pin is None or pin.pr != str(pull.number):
                return False
            if pin.sha != pull.head_sha and not (
                # Discovery keeps an unpinned config at the commit it is shown at while none
                # of its files change (a push elsewhere republishes nothing).
                pin.run is None and bot.scope.unchanged(cfg.key, pin.sha, pull.head_sha)
            ):
                return False
            if selection is None or pinning is None:
                if pin.run is not None or pin.status != PointStatus.IN_PROGRESS:
                    return False
                continue
            if pin.run is None or pin.comment != str(pinning.comment.id):
                # A /use no run has answered yet (its event dropped), or a pin refused or
                # not verified: only syncing tells which, and says why.
                return False
            wanted = selection.command.run_id
            if wanted is not None and pin.run != str(wanted):
                return False
            if pin.status != PointStatus.VERIFIED_PR:
                return False
            if pinnable is None:
                commits = bot.infx.pulls.commits(repo, pull.number)
                pinnable = pinrules.check_run(bot.infx, repo, pull, int(pin.run), commits).ok
            if not pinnable:
                return False  # expired since, or the PR lost the run's commit
    return True


def _recorded(bot: Bot, model: ModelSpec) -> dict[str, Pin]:
    """The pins the bot last published for ``model``: its open PR's, else its newest merged
    one's."""
    result = bot.book.result(model)
    source = result.open_pr or (result.merged[0] if result.merged else None)
    return bot.book.recorded(source, model)
