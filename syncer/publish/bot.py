"""The bot: a GitHub event in, the cookbook PR and the InferenceX status comment brought up to date.

Events:

* ``issue_comment`` created/edited/deleted on an InferenceX PR: a ``/use`` or
  ``/reuse-sweep-run`` comment. The commenter must be authorised in the event *and* when the
  comment is re-read through the API (a forged event file cannot pin a run); an unauthorised
  or malformed command gets -1 and nothing else.
* ``pull_request`` on InferenceX: ``opened``/``reopened``/``synchronize`` re-check the pin
  (its commit must still be in the PR) and the recipe at the new head; ``closed`` + merged
  flips the pinned config to ``verified``; ``closed`` unmerged closes the bot's cookbook PR
  when no other open or merged InferenceX PR keeps it (stale bot PRs are not left open).
* ``pull_request`` closed + merged on the cookbook (or ``repository_dispatch`` with
  ``client_payload.cookbook_pr``, or ``workflow_dispatch`` with the input ``cookbook_pr``): the
  status comments of the InferenceX PRs in that cookbook PR say it is live.

``--dry-run`` (``Plan(dry_run=True)``) describes every write and makes none: API writes are
planned, git objects are not written, and the cookbook is cloned into a scratch directory
removed when the event is handled (never into the cache, never fetched into a local checkout).

Everything is recomputed from the API on every event (the event is only the trigger), so
replays and out-of-order deliveries converge on the same result, and nothing is written when
nothing changed. The pipeline per model: pins → download the pinned run's logs → generate the
module → verify it three ways against recipe and logs → commit on ``infx-sync/<org>/<model>``
→ PR body with the reviewer diff → status comment.

Parts: ``routing.py`` (which work an event asks for), ``scope.py`` (which configs a PR
carries, read at which commit), ``cookbook_pr.py`` (the bot's PRs, the module, the branch),
``status_comment.py`` (the comments on the InferenceX PR), ``closing.py`` (PRs closed on either
side, and dropped events caught up); this module ties them to an InferenceX PR's pin.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from syncer import links
from syncer.compare.report import verify_report
from syncer.compare.results import VerifyResult
from syncer.errors import SyncError
from syncer.github.client import GitHubClient
from syncer.github.event import Payload
from syncer.github.plan import Plan
from syncer.github.records import Pull, PullState
from syncer.inferencex.renders import Renders
from syncer.model import PointStatus
from syncer.publish import blame, evidence
from syncer.publish import pins as pinrules
from syncer.publish import status as st
from syncer.publish.closing import Closing
from syncer.publish.cookbook_pr import CookbookPR
from syncer.publish.git import Identity
from syncer.publish.items import Items
from syncer.publish.routing import Handlers, route
from syncer.publish.scope import PRScope
from syncer.publish.settings import Outcome, Settings
from syncer.publish.status_comment import StatusComments
from syncer.syncconfig import ConfigSpec, ModelSpec, Pin
from syncer.untrusted import clip
from syncer.usecases.verify import verify_config

MAX_REPORT_CHARS = 40_000
# Under --cache-dir: each pinned run's server logs, downloaded once (``run_logs.run_logs``).
RUNS_CACHE = "runs"


def default_verifier(
    key: str,
    inferencex: Path,
    run_dir: Path,
    cookbook: Path,
    *,
    renders: Renders | None = None,
    keep: dict[str, VerifyResult] | None = None,
) -> tuple[bool, str]:
    """``renders``: the event's renderings (so one event renders each config once);
    ``keep``: where the result is kept by key, for the evidence record."""
    result = verify_config(
        key, inferencex=inferencex, run=run_dir, cookbook=cookbook, renders=renders
    )
    if keep is not None:
        keep[key] = result
    # The report shrinks itself to the budget (whole rows dropped, folds closed) rather than
    # being cut mid-table by the clip where the report is kept.
    return result.exit_code == 0, verify_report(result).markdown(budget=MAX_REPORT_CHARS)


class Bot:
    """One bot run: its parts wired together (the cookbook side, the comments, the PR scope,
    the closings), and the pipeline of one InferenceX PR."""

    def __init__(
        self,
        settings: Settings,
        *,
        infx: GitHubClient,
        cookbook_gh: GitHubClient,
        plan: Plan,
        identity: Identity | None = None,
        git_token: str | None = None,
    ) -> None:
        self.s = settings
        self.infx = infx
        self.cgh = cookbook_gh
        self.plan = plan
        self.out = Outcome(dry_run=plan.dry_run)
        self.book = CookbookPR(
            settings,
            gh=cookbook_gh,
            plan=plan,
            out=self.out,
            identity=identity or Identity(),
            git_token=git_token,
        )
        self.status = StatusComments(settings, gh=infx, plan=plan, out=self.out)
        self.scope = PRScope(settings, infx=infx, book=self.book, status=self.status, out=self.out)
        self.items = Items(settings, cookbook_gh.login)
        self._handled: set[int] = set()  # InferenceX PRs this run brought up to date
        # A reconcile's PRs, published together (:meth:`defer_publishing`); None: each PR's
        # sync publishes its model at once.
        self._deferred: _Deferred | None = None
        self._verified: dict[str, VerifyResult] = {}  # for the evidence records
        self.closing = Closing(
            settings,
            infx=infx,
            cookbook_gh=cookbook_gh,
            book=self.book,
            scope=self.scope,
            status=self.status,
            items=self.items,
            out=self.out,
            handled=self._handled,
            sync_pr=self.sync_pr,
        )

    def _verify_rendered(
        self, key: str, inferencex: Path, run_dir: Path, cookbook: Path
    ) -> tuple[bool, str]:
        """:func:`default_verifier` on the render the trial module was generated from."""
        modules = self.book.modules
        renders = None
        if inferencex == modules.tree(key):
            modules.rendered(key)  # its srt-slurm history placed, as the trial module read it
            renders = modules.renders
        return default_verifier(
            key, inferencex, run_dir, cookbook, renders=renders, keep=self._verified
        )

    def handle(self, event_name: str, payload: Payload) -> Outcome:
        try:
            route(
                event_name,
                payload,
                settings=self.s,
                infx=self.infx,
                out=self.out,
                handlers=Handlers(
                    sync_pr=self.sync_pr,
                    cookbook_closed=self.closing.cookbook_closed,
                    reconcile_pr=self._reconcile_pr,
                ),
            )
            if self.s.model is not None:
                self._catch_up(self.s.config.model(self.s.model))
        finally:
            self.close()
        return self.out

    def _catch_up(self, model: ModelSpec) -> None:
        """``model``'s dropped events caught up after this event's own work, every caught-up
        PR's pins published in one generation of the module (as the scheduled run does),
        not one per PR; one PR's error does not keep the others stale."""
        self.defer_publishing()
        try:
            self.closing.catch_up(model)
        finally:
            failed = self.publish_deferred()
        if failed:
            raise SyncError("catching up: " + "; ".join(failed))

    def _reconcile_pr(self, number: int) -> None:
        """InferenceX PR ``number`` reconciled as the scheduled run reconciles each PR (a push
        handed on by the workflow's dispatch job): synced unless what the bot published for
        it still holds, so a push that changed none of its configs' files writes nothing. A
        closed PR (its ``closed`` event handed on) is synced: merged or not, that is news."""
        pull = self.scope.pull(number)
        if pull.state != PullState.OPEN:
            self.sync_pr(number)
            return
        self._handled.add(number)
        self.reconcile_pr(pull)

    def reconcile_pr(self, pull: Pull) -> bool:
        """Whether ``pull`` is up to date (nothing to do); else it is synced now (the scheduled
        run's check of each open PR, and a dispatched push's of its own)."""
        configs = self.scope.configs_of(pull.number)
        if not configs:
            self.scope.note_unmapped(pull.number)  # a PR whose configs no page takes is told so
            return True
        if self._settled(pull, {m.path: m for m, _ in configs}.values()):
            self.out.say(f"PR #{pull.number}: up to date")
            return True
        self.out.say(f"PR #{pull.number}: not up to date; syncing")
        self.sync_pr(pull.number)
        return False

    def _settled(self, pull: Pull, models: Iterable[ModelSpec]) -> bool:
        """Whether what the bot last published for ``pull`` (the pins its bot PRs record, its
        status comment) is what syncing it now would publish, as far as reads can tell without
        downloading a run: the same head, the same pinning comment and run, the run still
        pinnable (its result artifacts not expired), and the bot's comment there."""
        repo = self.s.inferencex_repo
        comments = self.infx.comments.on(repo, pull.number)
        selection = pinrules.select(comments)
        pinning = pinrules.pinning_comment(comments)
        pinnable: bool | None = None  # asked once, only when a recorded pin names a run
        for model in models:
            if not self.status.reported(comments, model.path):
                return False
            recorded = self._recorded(model)
            for m, cfg in self.scope.configs_of(pull.number):
                if m.path != model.path:
                    continue
                pin = recorded.get(cfg.key)
                if pin is None or pin.pr != str(pull.number):
                    return False
                if pin.sha != pull.head_sha and not (
                    # Discovery keeps an unpinned config at the commit it is shown at while none
                    # of its files change (a push elsewhere republishes nothing).
                    pin.run is None and self.scope.unchanged(cfg.key, pin.sha, pull.head_sha)
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
                    commits = self.infx.pulls.commits(repo, pull.number)
                    pinnable = pinrules.check_run(self.infx, repo, pull, int(pin.run), commits).ok
                if not pinnable:
                    return False  # expired since, or the PR lost the run's commit
        return True

    def _recorded(self, model: ModelSpec) -> dict[str, Pin]:
        """The pins the bot last published for ``model``: its open PR's, else its newest merged
        one's."""
        result = self.book.result(model)
        source = result.open_pr or (result.merged[0] if result.merged else None)
        return self.book.recorded(source, model)

    def close(self) -> None:
        """Remove what this event's work left on disk (a dry run's clone, the PR trees)."""
        self.book.close_clone()
        self.scope.close()

    def handled(self, number: int) -> bool:
        """Whether this run already brought InferenceX PR ``number`` up to date."""
        return number in self._handled

    # -- an InferenceX PR -----------------------------------------------------------------------

    def sync_pr(self, number: int) -> None:
        self._handled.add(number)
        configs = self.scope.configs_of(number)
        self.scope.note_unmapped(number)
        if not configs:
            discovery = self.scope.ix is not None
            what = (
                "AgentX config of an SGLang cookbook page" if discovery else "config of sync.yaml"
            )
            self.out.say(f"PR #{number}: no {what} comes from this PR; nothing to do")
            return
        pull = self.scope.pull(number)
        if pull.state == PullState.CLOSED and not pull.merged:
            self.closing.closed_unmerged(pull, configs)
            return
        with contextlib.ExitStack() as stack:
            if self._deferred is not None:
                tmp = self._deferred.scratch(number)  # its trial modules and logs kept
            else:
                tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="infx-bot-")))
            choice = pinrules.choose(
                self.infx,
                self.s.inferencex_repo,
                pull,
                tmp,
                local_runs=self.s.local_runs,
                out=self.out,
                # A dry run keeps nothing in the cache (docs/bot.md).
                runs=None if self.plan.dry_run else self.s.cache_dir / RUNS_CACHE,
            )
            status = PointStatus.VERIFIED if pull.merged else PointStatus.VERIFIED_PR
            items: list[st.StatusItem] = []
            models, specs = _by_model(configs)
            errors: list[str] = []
            prepared: list[_Prepared] = []
            for path, cfgs in models.items():
                try:
                    prepared.append(self._prepare(specs[path], cfgs, pull, choice, status, tmp))
                except SyncError as exc:
                    # Nothing is published, and the PR is told why and who can fix it: its
                    # author (a recipe value the cookbook cannot show), another PR's or
                    # main's config on the same page, or the tool's operators.
                    errors.append(str(exc))
                    items.extend(self._error_items(specs[path], cfgs, pull, exc))
            if self._deferred is not None:
                self._deferred.add(number, specs, prepared, items, errors)
                return
            for ready in prepared:
                try:
                    result = self.book.publish(ready.model, ready.pins)
                except SyncError as exc:
                    errors.append(str(exc))
                    items.extend(self._error_items(ready.base, ready.cfgs, pull, exc))
                    continue
                items.extend(self._items(ready, result))
        self.status.report(number, items)
        if errors:
            raise SyncError("; ".join(errors))

    # -- a reconcile: every PR's pins first, then one publish per model ---------------------------

    def defer_publishing(self) -> None:
        """From now on, :meth:`sync_pr` chooses and verifies each PR's pins but publishes
        nothing: :meth:`publish_deferred` publishes each model once with every PR's pins (a
        catch-up of A PRs generated the module A times, each time with every config)."""
        if self._deferred is None:
            self._deferred = _Deferred()

    def publish_deferred(self) -> list[str]:
        """Each model the deferred PRs touch published once, then each PR's status comment;
        the errors, one ``#<n>: why`` each (a model that cannot be published is each of its
        PRs' error, as it was when each PR published it)."""
        deferred, self._deferred = self._deferred, None
        if deferred is None:
            return []
        try:
            for entries in deferred.models.values():
                try:
                    result = self.book.publish(*self._merged(entries))
                except SyncError as exc:
                    for number, ready in entries:
                        deferred.errors[number].append(str(exc))
                        pull = self.scope.pull(number)
                        deferred.items[number].extend(
                            self._error_items(ready.base, ready.cfgs, pull, exc)
                        )
                    continue
                for number, ready in entries:
                    deferred.items[number].extend(self._items(ready, result))
            failed = []
            for number, items in deferred.items.items():
                self.status.report(number, items)
                if deferred.errors[number]:
                    failed.append(f"#{number}: {'; '.join(deferred.errors[number])}")
            return failed
        finally:
            deferred.close()

    def _merged(self, entries: list[tuple[int, _Prepared]]) -> tuple[ModelSpec, dict[str, Pin]]:
        """The model and pins one publish takes for all of ``entries`` (one model's PRs, in
        the order they were synced): each PR's configs as its own sync would publish them,
        over what the page shows."""
        if len(entries) == 1:
            ready = entries[0][1]
            return ready.model, ready.pins
        first = entries[0][1]
        shown, pins = dict(first.shown), dict(first.pins)
        for _number, ready in entries[1:]:
            shown.update({c.key: ready.shown[c.key] for c in ready.cfgs})
            pins.update({c.key: ready.pins[c.key] for c in ready.cfgs})
        _published, main = self.book.published(first.base)
        model = self.book.modules.live(first.base, shown, main)
        self.scope.place(pins)
        return model, pins

    def _error_items(
        self, model: ModelSpec, cfgs: list[ConfigSpec], pull: Pull, exc: SyncError
    ) -> list[st.StatusItem]:
        owners, commits = self.scope.owners()
        owners.update({c.key: str(pull.number) for c in cfgs})
        checkout = self.s.inferencex if self.scope.ix is None else None
        who = blame.fixer(str(exc), pull.number, owners, commits, checkout)
        scratch = (self.s.cache_dir, self.s.inferencex_clone, self.s.srt_slurm_clone)
        text = blame.without_runner_paths(str(exc), scratch, checkout)
        items = []
        for c in cfgs:
            item = self.items.item(model, c.key, pull.head_sha, error=text)
            item.fixer, item.fixer_pr = who.who, who.pr
            items.append(item)
        return items

    def _prepare(
        self,
        base: ModelSpec,
        cfgs: list[ConfigSpec],
        pull: Pull,
        choice: pinrules.PinChoice,
        status: PointStatus,
        tmp: Path,
    ) -> _Prepared:
        """``pull``'s configs of ``base`` pinned: in progress, or measured by the chosen run
        where its logs verify the module generated with that pin (three ways)."""
        model, cfgs, in_progress = self.scope.in_progress_pins(base, cfgs, pull)
        reports: dict[str, str] = {}
        pins = dict(in_progress)
        if choice.run_dir is not None:
            measured = {
                c.key: Pin(
                    c.key,
                    str(pull.number),
                    pull.head_sha,
                    str(choice.run_id),
                    str(choice.comment_id),
                    status,
                    choice.date,
                )
                for c in cfgs
            }
            # Generate with the measured pins, verify that module three ways, and keep a pin
            # only for configs whose logs agree; the others fall back to "in progress". When
            # all agree, the publish below reuses this module rather than generating it again.
            self.scope.place(measured)
            trial = self.book.trial(model, measured, tmp / "trial")
            for c in cfgs:
                tree = self.book.modules.tree(c.key)
                ok, report = self._verify_rendered(c.key, tree, choice.run_dir, trial.snippets)
                if ok:
                    pins[c.key] = measured[c.key]
                    self._keep_evidence(pull, c.key, choice)
                else:
                    reports[c.key] = report
                    self.out.say(f"{c.key}: run {choice.run_id} does not verify; kept in progress")
            self.scope.place(pins)
        return _Prepared(base, model, cfgs, pull, choice, in_progress, pins, reports)

    def _items(self, ready: _Prepared, result: st.PublishResult) -> list[st.StatusItem]:
        """What the status comment says of each of ``ready``'s configs once published."""
        choice, pull = ready.choice, ready.pull
        items = []
        for c in ready.cfgs:
            item = self.items.item(
                ready.model,
                c.key,
                pull.head_sha,
                pin=ready.pins[c.key],
                result=result,
                refusal=choice.refusal,
            )
            if c.key in ready.reports:
                item.verify_failed_run = str(choice.run_id)
                item.verify_run_url = links.run_url(self.s.inferencex_repo, str(choice.run_id))
                item.verify_report = clip(ready.reports[c.key], MAX_REPORT_CHARS)
            if result.blocked:
                item.blocked = {"branch": result.branch, "commits": result.blocked}
            items.append(item)
        return items

    def _keep_evidence(self, pull: Pull, key: str, choice: pinrules.PinChoice) -> None:
        """The evidence record of a verified pin, kept on the InferenceX PR (a verify that
        kept no result, none to record)."""
        result = self._verified.pop(key, None)
        if result is None or choice.run_dir is None:
            return
        rec = evidence.record(
            result,
            run=str(choice.run_id),
            pr=pull.number,
            sha=pull.head_sha,
            run_dir=choice.run_dir,
        )
        evidence.keep(self.infx, self.s.inferencex_repo, pull.number, rec)


@dataclass
class _Prepared:
    """One PR's configs of one model, pinned and verified, not yet published."""

    base: ModelSpec  # as sync.yaml maps it
    model: ModelSpec  # as its page shows it with this PR's configs (what is published)
    cfgs: list[ConfigSpec]
    pull: Pull
    choice: pinrules.PinChoice
    shown: dict[str, Pin]  # the page's pins with this PR's configs in progress
    pins: dict[str, Pin]  # ... and those its run verified, measured
    reports: dict[str, str]  # config key -> why its run did not verify


@dataclass
class _Deferred:
    """The PRs of a reconcile whose publish waits for :meth:`Bot.publish_deferred`."""

    models: dict[str, list[tuple[int, _Prepared]]] = field(default_factory=dict)
    items: dict[int, list[st.StatusItem]] = field(default_factory=dict)
    errors: dict[int, list[str]] = field(default_factory=dict)
    _tmp: tempfile.TemporaryDirectory[str] | None = None

    def scratch(self, number: int) -> Path:
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="infx-bot-")
        where = Path(self._tmp.name) / str(number)
        where.mkdir(exist_ok=True)
        return where

    def add(
        self,
        number: int,
        specs: dict[str, ModelSpec],
        prepared: list[_Prepared],
        items: list[st.StatusItem],
        errors: list[str],
    ) -> None:
        for ready in prepared:
            self.models.setdefault(ready.base.path, []).append((number, ready))
        self.items.setdefault(number, []).extend(items)
        self.errors.setdefault(number, []).extend(errors)

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def _by_model(
    configs: Iterable[tuple[ModelSpec, ConfigSpec]],
) -> tuple[dict[str, list[ConfigSpec]], dict[str, ModelSpec]]:
    """A PR's configs by model path, and each model's spec."""
    models: dict[str, list[ConfigSpec]] = {}
    specs: dict[str, ModelSpec] = {}
    for model, cfg in configs:
        models.setdefault(model.path, []).append(cfg)
        specs[model.path] = model
    return models, specs
