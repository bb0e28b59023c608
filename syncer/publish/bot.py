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

Parts: ``routing.py`` (which work an event asks for), ``cookbook_pr.py`` (the bot's PRs, the
module, the branch), ``status_comment.py`` (the one status comment); this module ties them to
an InferenceX PR's pin.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from syncer import links
from syncer.compare.report import verify_report
from syncer.compare.results import VerifyResult
from syncer.errors import SyncError
from syncer.inferencex.render import RenderedConfig
from syncer.model import PointStatus
from syncer.publish import evidence
from syncer.publish import pins as pinrules
from syncer.publish import status as st
from syncer.publish.cookbook_pr import CookbookPR
from syncer.publish.event import Payload
from syncer.publish.git import Identity
from syncer.publish.github import GitHubClient, NotFound, Plan, Pull, PullState
from syncer.publish.prconfigs import InferenceXGit
from syncer.publish.routing import Handlers, pr_configs, route
from syncer.publish.settings import Outcome, Settings
from syncer.publish.status_comment import StatusComments
from syncer.syncconfig import ConfigSpec, ModelSpec, Pin
from syncer.untrusted import clip
from syncer.usecases.verify import verify_config

MAX_REPORT_CHARS = 40_000

# (key, inferencex checkout, run directory, cookbook snippets dir) -> (agrees, markdown report)
Verifier = Callable[[str, Path, Path, Path], tuple[bool, str]]


def default_verifier(
    key: str,
    inferencex: Path,
    run_dir: Path,
    cookbook: Path,
    *,
    rendered: RenderedConfig | None = None,
    keep: dict[str, VerifyResult] | None = None,
) -> tuple[bool, str]:
    """``rendered``: the config as the event already rendered it (the bot passes its render
    cache's, so one event renders each config once); ``keep``: where the result is kept by
    key, for the evidence record."""
    result = verify_config(
        key, inferencex=inferencex, run=run_dir, cookbook=cookbook, rendered=rendered
    )
    if keep is not None:
        keep[key] = result
    # The report shrinks itself to the budget (whole rows dropped, folds closed) rather than
    # being cut mid-table by the clip below, which stays as a guard for other verifiers.
    return result.exit_code == 0, verify_report(result).markdown(budget=MAX_REPORT_CHARS)


class Bot:
    def __init__(
        self,
        settings: Settings,
        *,
        infx: GitHubClient,
        cookbook_gh: GitHubClient,
        plan: Plan,
        identity: Identity | None = None,
        git_token: str | None = None,
        verifier: Verifier | None = None,
    ) -> None:
        self.s = settings
        self.infx = infx
        self.cgh = cookbook_gh
        self.plan = plan
        self.verifier = verifier or self._verify_rendered
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
        self._handled: set[int] = set()  # InferenceX PRs this run brought up to date
        self._verified: dict[str, VerifyResult] = {}  # for the evidence records
        # Discovery: configs found from each PR's commits in the bot's InferenceX clone, each
        # config read at its own commit; None: sync.yaml's configs and pins, one checkout.
        self.ix = (
            InferenceXGit(settings, gh=infx, out=self.out)
            if settings.inferencex_clone is not None
            else None
        )
        if self.ix is not None:
            self.book.tree_for = self.ix.tree
        self._pulls: dict[int, Pull] = {}

    def _verify_rendered(
        self, key: str, inferencex: Path, run_dir: Path, cookbook: Path
    ) -> tuple[bool, str]:
        """:func:`default_verifier` on the render the trial module was generated from."""
        rendered = self.book.rendered(key) if inferencex == self.book.tree(key) else None
        return default_verifier(
            key, inferencex, run_dir, cookbook, rendered=rendered, keep=self._verified
        )

    def handle(self, event_name: str, payload: Payload) -> Outcome:
        try:
            route(
                event_name,
                payload,
                settings=self.s,
                infx=self.infx,
                out=self.out,
                handlers=Handlers(sync_pr=self.sync_pr, cookbook_closed=self.on_cookbook_closed),
            )
            if self.s.model is not None:
                self.catch_up(self.s.config.model(self.s.model))
        finally:
            self.book.close_clone()
            if self.ix is not None:
                self.ix.close()
        return self.out

    # -- an InferenceX PR -----------------------------------------------------------------------

    def handled(self, number: int) -> bool:
        """Whether this run already brought InferenceX PR ``number`` up to date."""
        return number in self._handled

    def configs_of(self, number: int) -> list[tuple[ModelSpec, ConfigSpec]]:
        """The configs InferenceX PR ``number`` carries, with their model: sync.yaml's listing,
        or (discovery) those its commits add or change plus those a bot PR still records for
        it (a merged PR's commits no longer differ from main)."""
        if self.ix is None:
            found = pr_configs(self.s.config, number)
            return [(m, c) for m, c in found if self.s.model in (None, m.path)]
        pull = self._pull(number)
        keys = self.ix.keys(pull)
        pairs = list(keys.mapped)
        seen = {key for _, key in pairs}
        for model in self.s.config.models:
            if self.s.model not in (None, model.path):
                continue
            for bot_pr in self.book.pulls(model):
                if bot_pr.state != PullState.OPEN and not bot_pr.merged:
                    continue
                for key, pin in self.book.recorded(bot_pr, model).items():
                    if pin.pr == str(number) and key not in seen:
                        pairs.append((model, key))
                        seen.add(key)
        return [
            (m, self.s.config.config_spec(m, key, self._in_progress(key, pull)))
            for m, key in pairs
            if self.s.model in (None, m.path)
        ]

    def note_unmapped(self, number: int) -> None:
        """Name the PR's AgentX configs that no cookbook page takes (discovery only)."""
        if self.ix is None:
            return
        keys = self.ix.keys(self._pull(number))
        if keys.unmapped:
            self.status.unmapped(number, keys.unmapped, keys.notice_model(self.s.config))

    def _pull(self, number: int) -> Pull:
        """InferenceX PR ``number``, read once per event."""
        if number not in self._pulls:
            self._pulls[number] = self.infx.pull(self.s.inferencex_repo, number)
        return self._pulls[number]

    @staticmethod
    def _in_progress(key: str, pull: Pull, sha: str | None = None) -> Pin:
        return Pin(
            key, str(pull.number), sha or pull.head_sha, None, None, PointStatus.IN_PROGRESS, None
        )

    def _place(self, pins: dict[str, Pin]) -> None:
        """Read each of ``pins``' configs at the commit its pin names (discovery only)."""
        if self.ix is not None:
            self.ix.place({key: (pin.sha, pin.pr) for key, pin in pins.items()})

    def _live_model(self, model: ModelSpec, cfgs: list[ConfigSpec], pull: Pull) -> ModelSpec:
        """``model`` as its page shows it now plus ``pull``'s configs, each placed at the
        commit it is read at: the others' at the commit their cells record, this PR's at its
        head, except an unpinned config whose files are the same as at the commit it is
        already shown at (a push that changes none of them republishes nothing)."""
        assert self.ix is not None
        published, main = self.book.published(model)
        pins = dict(published)
        for cfg in cfgs:
            old = published.get(cfg.key)
            sha = pull.head_sha
            if (
                old is not None
                and old.status == PointStatus.IN_PROGRESS
                and old.pr == str(pull.number)
                and self.ix.unchanged(cfg.key, old.sha, pull.head_sha)
            ):
                sha = old.sha
            pins[cfg.key] = self._in_progress(cfg.key, pull, sha)
        self._place(pins)
        return self.book.live(model, pins, main)

    def catch_up(self, model: ModelSpec, bot_prs: list[Pull] | None = None) -> None:
        """Bring up to date the closed InferenceX PRs that ``model``'s bot PRs (default: the
        open one) still carry as not verified.

        GitHub keeps one pending run per concurrency group and cancels the older pending one
        when another event arrives, so a ``pull_request: closed`` can be dropped behind a later
        event of the same model; the later run (this one) does its work. The scheduled run
        passes the newest merged bot PRs too: a PR merged after its cookbook PR (a fork's, whose
        own events never publish) is still carried there as a PR pin. Both handlers are
        idempotent: a PR already handled is read, not written again."""
        if bot_prs is None:
            open_pr = self.book.open_pull(model)
            bot_prs = [open_pr] if open_pr is not None else []
        for bot_pr in bot_prs:
            recorded = self.book.recorded(bot_pr, model)
            waiting = sorted(
                {int(p.pr) for p in recorded.values() if p.pr and p.status != PointStatus.VERIFIED}
                - self._handled
            )
            for number in waiting:
                self._catch_up_pr(number, recorded)

    def _catch_up_pr(self, number: int, recorded: dict[str, Pin]) -> None:
        try:
            pull = self.infx.pull(self.s.inferencex_repo, number)
        except NotFound:
            return
        if pull.state != PullState.CLOSED or not self.configs_of(number):
            return
        if not pull.merged:
            self.out.say(f"PR #{number}: closed without merging; catching up")
            self._on_closed_unmerged(pull, self.configs_of(number))
        elif any(
            p.status == PointStatus.VERIFIED_PR for p in recorded.values() if p.pr == str(number)
        ):
            # Merged with a pinned run the cookbook PR still calls a PR pin.
            self.out.say(f"PR #{number}: merged; catching up")
            self.sync_pr(number)

    def sync_pr(self, number: int) -> None:
        self._handled.add(number)
        configs = self.configs_of(number)
        self.note_unmapped(number)
        if not configs:
            what = "AgentX config of an SGLang cookbook page" if self.ix else "config of sync.yaml"
            self.out.say(f"PR #{number}: no {what} comes from this PR; nothing to do")
            return
        pull = self._pull(number)
        if pull.state == PullState.CLOSED and not pull.merged:
            self._on_closed_unmerged(pull, configs)
            return
        with tempfile.TemporaryDirectory(prefix="infx-bot-") as tmp:
            choice = pinrules.choose(
                self.infx,
                self.s.inferencex_repo,
                pull,
                Path(tmp),
                local_runs=self.s.local_runs,
                out=self.out,
            )
            status = PointStatus.VERIFIED if pull.merged else PointStatus.VERIFIED_PR
            items: list[st.StatusItem] = []
            models: dict[str, list[ConfigSpec]] = {}
            specs: dict[str, ModelSpec] = {}
            for model, cfg in configs:
                models.setdefault(model.path, []).append(cfg)
                specs[model.path] = model
            errors: list[str] = []
            for path, cfgs in models.items():
                try:
                    items.extend(
                        self._sync_model(specs[path], cfgs, pull, choice, status, Path(tmp))
                    )
                except SyncError as exc:
                    # Bad input from the PR (a recipe value the cookbook cannot show, a recipe
                    # that does not render): nothing is published, and the PR is told why.
                    errors.append(str(exc))
                    items.extend(
                        self._item(specs[path], c.key, pull.head_sha, error=exc.message)
                        for c in cfgs
                    )
        self._report(number, items)
        if errors:
            raise SyncError("; ".join(errors))

    def _on_closed_unmerged(self, pull: Pull, configs: list[tuple[ModelSpec, ConfigSpec]]) -> None:
        """An InferenceX PR closed without merging never reaches InferenceX main, so a cookbook PR
        that only exists for it is closed (users of PR bots expect stale PRs closed, not left for
        reviewers); one that still carries another open or merged InferenceX PR stays open.
        Status comments are edited, never posted anew, on PRs that are closed."""
        self._handled.add(pull.number)
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
                    f"{model.path}: {self.s.cookbook_repo}#{open_pr.number} stays open for "
                    + ", ".join(f"#{n}" for n in alive)
                )
            else:
                self.book.close(model, open_pr, [pull.number, *carried])
                closed, open_pr = open_pr, None
                notify += carried  # every InferenceX PR it carried learns it
            for number in notify:
                items = [
                    self._item(
                        model,
                        cfg.key,
                        pull.head_sha,
                        pin=cfg.pin,
                        source_closed=True,
                        open_pr=open_pr.number if open_pr else None,
                        closed_pr=closed.number if closed else None,
                        kept_for=alive,
                    )
                    for m, cfg in self.configs_of(number)
                    if m.path == model.path
                ]
                if items:
                    self._report(number, items, create=False)

    def _carried_prs(self, model: ModelSpec, recorded: dict[str, Pin]) -> list[int]:
        """InferenceX PRs a cookbook PR carries something for: a config still on its way (not
        verified) or re-pinned by the bot; a verified pin exactly as the cookbook already has it
        (sync.yaml's; in discovery, the default branch's module) keeps nothing open."""
        synced = (
            self.book.published(model, proposed=False)[0]
            if self.ix is not None
            else self.s.config.pins()
        )
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
            other = self.infx.pull(self.s.inferencex_repo, number)
        except NotFound:
            return False
        return other.state == PullState.OPEN or other.merged

    def _sync_model(
        self,
        model: ModelSpec,
        cfgs: list[ConfigSpec],
        pull: Pull,
        choice: pinrules.PinChoice,
        status: PointStatus,
        tmp: Path,
    ) -> list[st.StatusItem]:
        if self.ix is not None:
            model = self._live_model(model, cfgs, pull)
            cfgs = [model.config(c.key) for c in cfgs]
            in_progress = {c.key: c.pin for c in cfgs}
        else:
            in_progress = {c.key: self._in_progress(c.key, pull) for c in cfgs}
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
            self._place(measured)
            trial = self.book.trial(model, measured, tmp / "trial")
            for c in cfgs:
                tree = self.book.tree(c.key)
                ok, report = self.verifier(c.key, tree, choice.run_dir, trial.snippets)
                if ok:
                    pins[c.key] = measured[c.key]
                    self._keep_evidence(pull, c.key, choice)
                else:
                    reports[c.key] = report
                    self.out.say(f"{c.key}: run {choice.run_id} does not verify; kept in progress")
            self._place(pins)
        result = self.book.publish(model, pins)
        items = []
        for c in cfgs:
            item = self._item(
                model, c.key, pull.head_sha, pin=pins[c.key], result=result, refusal=choice.refusal
            )
            if c.key in reports:
                item.verify_failed_run = str(choice.run_id)
                item.verify_run_url = links.run_url(self.s.inferencex_repo, str(choice.run_id))
                item.verify_report = clip(reports[c.key], MAX_REPORT_CHARS)
            if result.blocked:
                item.blocked = {"branch": result.branch, "commits": result.blocked}
            items.append(item)
        return items

    def _keep_evidence(self, pull: Pull, key: str, choice: pinrules.PinChoice) -> None:
        """The evidence record of a verified pin, kept on the InferenceX PR (a verifier other
        than the default one, as tests give, leaves no result to record)."""
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

    def _item(
        self,
        model: ModelSpec,
        key: str,
        head_sha: str,
        *,
        pin: Pin | None = None,
        result: st.PublishResult | None = None,
        refusal: str | None = None,
        error: str | None = None,
        source_closed: bool = False,
        open_pr: int | None = None,
        closed_pr: int | None = None,
        kept_for: list[int] | None = None,
    ) -> st.StatusItem:
        """The status of config ``key``: where it goes, its pin (none: in progress) and, given
        ``result``, the bot's cookbook PRs for it (else ``open_pr``/``closed_pr``)."""
        item = st.StatusItem(
            key=key,
            model=model.model,
            model_path=model.path,
            section=model.section,
            page_url=links.page_url(self.s.docs_url, model.page, model.section),
            head_sha=head_sha,
            status=pin.status if pin else PointStatus.IN_PROGRESS,
            refusal=refusal,
            error=error,
            source_closed=source_closed,
            open_pr=open_pr,
            closed_pr=closed_pr,
            kept_for=kept_for or [],
        )
        item.shown_sha = pin.sha if pin is not None and pin.sha else head_sha
        if pin is not None and pin.run:
            item.run, item.run_url = pin.run, links.run_url(self.s.inferencex_repo, pin.run)
        if result is not None:
            merged_with = result.merged_with(key, self.cgh.login(), model.path)
            item.open_pr = result.open_pr.number if result.open_pr else None
            item.merged_pr = merged_with[0] if merged_with else None
            item.closed_pr = result.closed.number if result.closed else None
        return item

    # -- the cookbook side -------------------------------------------------------------------------

    def on_cookbook_closed(self, number: int) -> None:
        """A bot PR merged or closed: every InferenceX PR whose pins it carried gets its status
        refreshed (live since this PR, or its cookbook PR closed without merging)."""
        pull = self.cgh.pull(self.s.cookbook_repo, number)
        me = self.cgh.login()
        if pull.state != PullState.CLOSED:
            self.out.say(f"{self.s.cookbook_repo}#{number} is still open; nothing to do")
            return
        model = next((m for m in self.s.config.models if st.pr_marker(m.path) in pull.body), None)
        if model is not None and self.s.model not in (None, model.path):
            self.out.say(f"{self.s.cookbook_repo}#{number} is {model.path}'s; not this run's model")
            return
        if pull.user != me or model is None:
            self.out.say(f"{self.s.cookbook_repo}#{number} is not a sync PR of this bot; ignored")
            return
        recorded = self.book.recorded(pull, model)
        prs = sorted({int(p.pr) for p in recorded.values() if p.pr})
        failed = []
        for pr in prs:
            if not self.configs_of(pr):
                continue
            # One unreachable PR (deleted, transferred) must not keep the others stale.
            try:
                self.refresh_status(pr, model, recorded)
            except SyncError as exc:
                failed.append(f"#{pr}: {exc}")
        if failed:
            raise SyncError("status not refreshed on " + "; ".join(failed))

    def refresh_status(self, number: int, model: ModelSpec, recorded: dict[str, Pin]) -> None:
        """Rewrite the PR's status from what the cookbook PRs record; nothing is regenerated
        (the InferenceX checkout at hand may not be this PR's head)."""
        result = self.book.result(model)
        current = self.book.recorded(result.open_pr, model)
        items = []
        for m, cfg in self.configs_of(number):
            if m.path != model.path:
                continue
            pin = current.get(cfg.key) or recorded.get(cfg.key) or cfg.pin
            items.append(self._item(model, cfg.key, pin.sha, pin=pin, result=result))
        if items:
            self._report(number, items)

    def _report(self, number: int, items: list[st.StatusItem], *, create: bool = True) -> None:
        """The PR's status: one new comment per milestone (discovery), else the one status
        comment edited in place."""
        if self.ix is not None:
            self.status.milestones(number, items, create=create)
        else:
            self.status.upsert(number, items, create=create)
