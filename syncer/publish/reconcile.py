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
nothing at all. A PR whose head and ``updated_at`` did not move since a run found it settled
costs nothing (``ledger.py``), and the open PRs and their configs come from the workflow's gate
(``handoff.py``), listed and discovered once per event for every model's job.
"""

from __future__ import annotations

from syncer.errors import SyncError
from syncer.github.records import Pull, PullState
from syncer.publish import handoff
from syncer.publish.bot import Bot
from syncer.publish.ledger import Ledger
from syncer.publish.settings import Outcome
from syncer.syncconfig import ModelSpec
from syncer.wording import count

# Bot PRs per model looked at, newest first. An hourly run sees at most one or two of them
# close in between; a schedule that was off for longer is caught up by workflow_dispatch
# with the cookbook PR's number (docs/bot.md).
RECENT_BOT_PRS = 3


def reconcile(bot: Bot) -> Outcome:
    """Bring every model of this run (``--model``, else all) up to date; SyncErrors of single
    PRs are collected, so one bad PR never keeps the others stale."""
    settings = bot.settings
    models = (
        [settings.config.model(settings.model)] if settings.model else list(settings.config.models)
    )
    ledger = Ledger.load(settings.ledger_dir, settings.model)
    failed: list[str] = []
    bot.defer_publishing()  # each model published once, with every PR's pins
    try:
        listed, open_now = _open_prs(bot)
        ledger.keep_open(open_now)
        for model in models:
            _cookbook_side(bot, model, failed, ledger, open_now)
        # One fetch for every head to look at (not one per PR); unmoved PRs are not looked at.
        bot.scope.prefetch([p for p in listed if not ledger.settled(p)])
        unmoved = 0
        for pull in listed:
            if bot.handled(pull.number):
                continue
            if ledger.settled(pull):
                unmoved += 1  # head and updated_at as a run last found it settled
                continue
            try:
                if bot.reconcile_pr(bot.scope.pull(pull.number)):
                    ledger.mark(bot.scope.pull(pull.number))
                else:
                    ledger.forget(pull.number)
            except SyncError as exc:
                # A PR whose files do not parse is that PR's error; the others go on.
                ledger.forget(pull.number)
                failed.append(f"#{pull.number}: {exc}")
        if unmoved:
            bot.out.say(f"{count(unmoved, 'open PR')} unchanged since found up to date")
        failed += bot.publish_deferred()
    finally:
        bot.close()
        ledger.save()
    if failed:
        raise SyncError("scheduled run: " + "; ".join(failed))
    return bot.out


def _open_prs(bot: Bot) -> tuple[list[Pull], set[int]]:
    """The open InferenceX PRs this run looks at, and the numbers of all open PRs: as the
    workflow's gate listed them, with the configs it found (only those of this run's model),
    else listed here (the list's answer reused: no PR read again one by one)."""
    settings = bot.settings
    gate = (
        handoff.read(settings.handoff, settings.config, settings.inferencex_repo)
        if settings.handoff
        else None
    )
    if gate is None:
        pulls = bot.infx.pulls.open(settings.inferencex_repo)
        bot.scope.known(pulls)
        return pulls, {p.number for p in pulls}
    mine = [item for item in gate.listed if item.concerns(settings.model, settings.config)]
    for item in mine:
        if item.keys is not None:
            bot.scope.hand(item.keys)
    bot.scope.known([item.pull for item in mine])
    return [item.pull for item in mine], gate.numbers()


def _cookbook_side(
    bot: Bot, model: ModelSpec, failed: list[str], ledger: Ledger, open_now: set[int]
) -> None:
    recent = bot.book.pulls(model)[:RECENT_BOT_PRS]
    # Oldest first: PRs that closed while the schedule was off are told in the order they did.
    for pull in reversed(recent):
        if pull.state == PullState.CLOSED and pull.number not in ledger.told:
            try:
                bot.closing.cookbook_closed(pull.number)
                ledger.told.add(pull.number)  # a closed PR's milestone does not change
            except SyncError as exc:
                failed.append(f"{bot.settings.cookbook_repo}#{pull.number}: {exc}")
    carriers = [p for p in bot.book.pulls(model)[:RECENT_BOT_PRS] if not _closed_unmerged(p)]
    try:
        bot.catch_up(model, carriers, open_now=open_now, caught=ledger.closed)
    except SyncError as exc:
        failed.append(f"{model.path}: {exc}")


def _closed_unmerged(pull: Pull) -> bool:
    return pull.state == PullState.CLOSED and not pull.merged
