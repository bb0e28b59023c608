"""The bot: a GitHub event in, the cookbook PR and the InferenceX status comment brought up to date.

Events (docs/inferencex-side.md §5; DESIGN.md "Idempotent publishing"):

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
module (D) → verify it three ways against recipe and logs (C) → commit on
``infx-sync/<org>/<model>`` → PR body with the reviewer diff (E) → status comment.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syncer.errors import SyncError
from syncer.publish import links
from syncer.publish import pins as pinrules
from syncer.publish import status as st
from syncer.publish.bodies import MAX_BODY_CHARS, fit_body, fit_comment
from syncer.publish.git import BRANCH_PREFIX, Cookbook, Identity, branch_name
from syncer.publish.github import GitHubClient, NotFound, Plan, Pull
from syncer.syncconfig import ConfigSpec, ModelSpec, Pin, SyncConfig
from syncer.templating import render
from syncer.untrusted import clip
from syncer.wording import js, kind

# GitHub's ids (PRs, comments, runs) fit in 20 digits.
MAX_ID_DIGITS = 20
LOG_ARTIFACT_PREFIXES = ("server_logs_", "multinode_server_logs_")
MAX_REPORT_CHARS = 40_000

# (key, inferencex checkout, run directory, cookbook snippets dir) -> (agrees, markdown report)
Verifier = Callable[[str, Path, Path, Path], tuple[bool, str]]


def default_verifier(key: str, inferencex: Path, run_dir: Path, cookbook: Path) -> tuple[bool, str]:
    from syncer.compare.verify import verify_config

    result = verify_config(key, inferencex=inferencex, run=run_dir, cookbook=cookbook)
    # The report shrinks itself to the budget (whole rows dropped, folds closed) rather than
    # being cut mid-table by the clip below, which stays as a guard for other verifiers.
    return result.exit_code == 0, result.markdown(budget=MAX_REPORT_CHARS)


@dataclass
class Settings:
    config: SyncConfig
    inferencex: Path  # checkout of the InferenceX PR head: data, never executed
    cookbook: str  # cookbook checkout path or clone URL
    cache_dir: Path
    inferencex_repo: str = links.INFERENCEX_REPO
    cookbook_repo: str = links.COOKBOOK_REPO
    push_repo: str | None = None  # a fork to push the branch to (PR opened from it)
    push_url: str | None = None  # git URL of that fork
    snippets_dir: str = "docs/src/snippets/agentx"
    docs_url: str = links.DOCS_URL
    body_limit: int = MAX_BODY_CHARS
    today: str | None = None
    # The one cookbook model this run handles (the workflow runs one job per model, each in its
    # model's concurrency group); None: every model the event touches.
    model: str | None = None
    # Downloaded runs (<run_id>/...) a dry run without a token reads instead of the artifacts.
    local_runs: Path | None = None


@dataclass
class Outcome:
    """What one event did; ``lines`` are shown to the user (masked by the command)."""

    lines: list[str] = field(default_factory=list)

    def say(self, text: str) -> None:
        self.lines.append(text)


@dataclass
class _PinChoice:
    """The PR's pin after InferenceX's rules: a run, or the reason there is none."""

    run_id: int | None = None
    comment_id: int | None = None
    date: str | None = None
    refusal: str | None = None
    run_dir: Path | None = None


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
        self.identity = identity or Identity()
        self.git_token = git_token
        self.verifier = verifier or default_verifier
        self.out = Outcome()
        self._book: Cookbook | None = None
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._renders: dict[str, Any] = {}
        self._handled: set[int] = set()  # InferenceX PRs this run brought up to date

    def _did(self, done: str, would: str) -> None:
        """Report a write: as made, or in a dry run as what would be made (nothing was)."""
        self.out.say(f"{would} (dry run)" if self.plan.dry_run else done)

    # -- event routing ------------------------------------------------------------------------

    def handle(self, event_name: str, payload: dict[str, Any]) -> Outcome:
        try:
            self._route(event_name, payload)
            if self.s.model is not None:
                self._catch_up(self.s.config.model(self.s.model))
        finally:
            if self._scratch is not None:
                self._scratch.cleanup()
                self._scratch, self._book = None, None
        return self.out

    def _route(self, event_name: str, payload: dict[str, Any]) -> None:
        repo = _text(_obj(payload, "repository"), "full_name", "repository")
        if event_name == "issue_comment":
            if repo != self.s.inferencex_repo:
                self.out.say(f"ignored: comment event from {repo or 'an unknown repository'}")
            else:
                self._on_comment(payload)
        elif event_name == "pull_request":
            pr = _obj(payload, "pull_request")
            number = _number(pr.get("number"), "pull_request.number")
            action = payload.get("action")
            if repo == self.s.inferencex_repo:
                if action in ("opened", "reopened", "synchronize", "edited", "closed"):
                    self.sync_pr(number)
                else:
                    self.out.say(f"ignored: pull_request {action}")
            elif repo == self.s.cookbook_repo and action == "closed":
                self.on_cookbook_closed(number)
            else:
                self.out.say(f"ignored: pull_request {action} in {repo or 'unknown'}")
        elif event_name == "repository_dispatch":
            client = _obj(payload, "client_payload")
            self.on_cookbook_closed(
                _number(client.get("cookbook_pr"), "client_payload.cookbook_pr")
            )
        elif event_name == "workflow_dispatch":
            # Workflow inputs always arrive as strings.
            raw = _obj(payload, "inputs").get("cookbook_pr")
            digits = raw.strip() if isinstance(raw, str) else ""
            # At most 20 digits, like every id: int() of thousands of digits raises.
            plain = digits.isascii() and digits.isdigit() and len(digits) <= MAX_ID_DIGITS
            value = int(digits) if plain else raw
            self.on_cookbook_closed(_number(value, "inputs.cookbook_pr"))
        else:
            self.out.say(f"ignored: event {event_name}")

    def _on_comment(self, payload: dict[str, Any]) -> None:
        issue = _obj(payload, "issue")
        if not issue.get("pull_request"):
            self.out.say("ignored: comment on an issue, not a PR")
            return
        number = _number(issue.get("number"), "issue.number")
        event_comment = _obj(payload, "comment")
        comment_id = _number(event_comment.get("id"), "comment.id")
        action = payload.get("action")
        repo = self.s.inferencex_repo
        if action == "deleted":
            self.sync_pr(number)
            return
        # The event says who wrote what; the API is asked again, and only its answer is used
        # for the body. Both must say the author is authorised, and that is decided before the
        # body is parsed at all: nothing an unauthorised commenter writes is interpreted.
        event_ok = pinrules.authorised(_assoc(event_comment.get("author_association")))
        try:
            comment = self.infx.comment(repo, comment_id)
        except NotFound:
            # Deleted before we got here: the PR's pin is simply recomputed without it.
            self.sync_pr(number)
            return
        api_ok = pinrules.authorised(comment.association)
        command = pinrules.parse_command(comment.body)
        malformed = pinrules.malformed_lines(comment.body)
        if command is None and not malformed:
            if action == "edited":
                pinrules.sync_reactions(self.infx, repo, comment, accepted=None)
                self.sync_pr(number)
            else:
                self.out.say(f"comment {comment_id}: no command; nothing to do")
            return
        if not (event_ok and api_ok) or command is None:
            pinrules.sync_reactions(self.infx, repo, comment, accepted=False)
            why = (
                "malformed command"
                if command is None
                else (
                    f"author association {comment.association} is not OWNER, MEMBER or COLLABORATOR"
                )
            )
            refused = f"comment {comment_id}: refused ({why})"
            self._did(f"{refused}; reacted -1", f"{refused}; would react -1")
            if action == "edited" and api_ok:
                # It may have been the pin before the edit broke it: the pin is recomputed.
                self.sync_pr(number)
            return
        self.sync_pr(number)

    # -- an InferenceX PR -----------------------------------------------------------------------

    def configs_of(self, number: int) -> list[tuple[ModelSpec, ConfigSpec]]:
        found = pr_configs(self.s.config, number)
        return [(m, c) for m, c in found if self.s.model in (None, m.path)]

    def _catch_up(self, model: ModelSpec) -> None:
        """Bring up to date the closed InferenceX PRs that ``model``'s open cookbook PR still
        carries as not verified.

        GitHub keeps one pending run per concurrency group and cancels the older pending one
        when another event arrives, so a ``pull_request: closed`` can be dropped behind a later
        event of the same model; the later run (this one) does its work. Both handlers are
        idempotent: a PR already handled is read, not written again."""
        me = self.cgh.login()
        open_pr = next((p for p in self._bot_pulls(model) if p.state == "open"), None)
        if open_pr is None:
            return
        recorded = st.read_state(open_pr, me, model.path)
        waiting = sorted(
            {int(p.pr) for p in recorded.values() if p.pr and p.status != "verified"}
            - self._handled
        )
        for number in waiting:
            try:
                pull = self.infx.pull(self.s.inferencex_repo, number)
            except NotFound:
                continue
            if pull.state != "closed" or not self.configs_of(number):
                continue
            if not pull.merged:
                self.out.say(f"PR #{number}: closed without merging; catching up")
                self._on_closed_unmerged(pull, self.configs_of(number))
            elif any(p.status == "verified-pr" for p in recorded.values() if p.pr == str(number)):
                # Merged with a pinned run the cookbook PR still calls a PR pin.
                self.out.say(f"PR #{number}: merged; catching up")
                self.sync_pr(number)

    def sync_pr(self, number: int) -> None:
        repo = self.s.inferencex_repo
        self._handled.add(number)
        configs = self.configs_of(number)
        if not configs:
            self.out.say(f"PR #{number}: no config of sync.yaml comes from this PR; nothing to do")
            return
        pull = self.infx.pull(repo, number)
        if pull.state == "closed" and not pull.merged:
            self._on_closed_unmerged(pull, configs)
            return
        with tempfile.TemporaryDirectory(prefix="infx-bot-") as tmp:
            choice = self._choose_pin(pull, Path(tmp))
            status = "verified" if pull.merged else "verified-pr"
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
                    items.extend(self._error_items(specs[path], cfgs, pull, exc.message))
        self._upsert_status(number, items)
        if errors:
            raise SyncError("; ".join(errors))

    def _on_closed_unmerged(self, pull: Pull, configs: list[tuple[ModelSpec, ConfigSpec]]) -> None:
        """An InferenceX PR closed without merging never reaches InferenceX main, so a cookbook PR
        that only exists for it is closed (users of PR bots expect stale PRs closed, not left for
        reviewers); one that still carries another open or merged InferenceX PR stays open.
        Status comments are edited, never posted anew, on PRs that are closed."""
        self._handled.add(pull.number)
        me = self.cgh.login()
        for model in {m.path: m for m, _ in configs}.values():
            pulls = self._bot_pulls(model)
            open_pr = next((p for p in pulls if p.state == "open"), None)
            recorded = st.read_state(open_pr, me, model.path) if open_pr else {}
            carried = [n for n in self._carried_prs(recorded) if n != pull.number]
            alive = [n for n in carried if self._still_coming(n)]
            notify = [pull.number]
            closed: Pull | None = None
            if open_pr is None:
                # A replayed event: the cookbook PR closed earlier for this one is still named.
                closed = next((p for p in pulls if _carries(p, pull.number, me, model)), None)
            elif alive:
                self.out.say(
                    f"{model.path}: {self.s.cookbook_repo}#{open_pr.number} stays open for "
                    + ", ".join(f"#{n}" for n in alive)
                )
            else:
                self._close_cookbook_pr(open_pr, [pull.number, *carried])
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
                    self._upsert_status(number, items, create=False)

    def _carried_prs(self, recorded: dict[str, Pin]) -> list[int]:
        """InferenceX PRs a cookbook PR carries something for: a config still on its way (not
        verified) or re-pinned by the bot; a verified pin exactly as in sync.yaml is already the
        cookbook's and keeps nothing open."""
        synced = self.s.config.pins()
        return sorted(
            {
                int(p.pr)
                for k, p in recorded.items()
                if p.pr and (p.status != "verified" or p != synced.get(k))
            }
        )

    def _close_cookbook_pr(self, open_pr: Pull, infx_prs: list[int]) -> None:
        note = render(
            "status_comment_pr_closed.md.j2",
            by=st.BY,
            inferencex_repo=self.s.inferencex_repo,
            prs=infx_prs,
        )
        self.cgh.create_comment(self.s.cookbook_repo, open_pr.number, note)
        self.cgh.update_pull(self.s.cookbook_repo, open_pr.number, state="closed")
        self._did(
            f"closed {self.s.cookbook_repo}#{open_pr.number}: every InferenceX PR it carried "
            "was closed without merging",
            f"would close {self.s.cookbook_repo}#{open_pr.number}",
        )

    def _still_coming(self, number: int) -> bool:
        """Whether InferenceX PR ``number`` is open or merged (its config may still go live)."""
        try:
            other = self.infx.pull(self.s.inferencex_repo, number)
        except NotFound:
            return False
        return other.state == "open" or other.merged

    def _choose_pin(self, pull: Pull, tmp: Path) -> _PinChoice:
        repo = self.s.inferencex_repo
        comments = self.infx.comments(repo, pull.number)
        selection = pinrules.select(comments)
        if selection is None:
            return _PinChoice()
        # Provenance names the comment that set this run, so repeating it changes nothing.
        pinning = pinrules.pinning_comment(comments) or selection
        if self.infx.offline:
            return self._offline_pin(pull, selection.command.run_id, pinning.comment.id)
        commits = self.infx.pull_commits(repo, pull.number)
        command = selection.command
        if command.run_id is None:
            verdict = pinrules.latest_successful_run(self.infx, repo, pull, commits)
        else:
            verdict = pinrules.check_run(self.infx, repo, pull, command.run_id, commits)
        pinrules.sync_reactions(self.infx, repo, selection.comment, verdict.ok)
        if not verdict.ok or verdict.run is None:
            self.out.say(f"PR #{pull.number}: pin refused: {verdict.reason}")
            return _PinChoice(comment_id=selection.comment.id, refusal=verdict.reason)
        run = verdict.run
        run_dir = tmp / f"run-{run.id}"
        logs = [
            a
            for a in verdict.artifacts
            if a.name.startswith(LOG_ARTIFACT_PREFIXES) and not a.expired
        ]
        if not logs:
            reason = f"run {run.id} has no unexpired server-log artifact to verify against"
            return _PinChoice(comment_id=selection.comment.id, refusal=reason)
        for art in logs:
            self.infx.download_artifact(art, run_dir / f"{_safe_name(art.name)}.zip")
        self.out.say(f"PR #{pull.number}: run {run.id} pinned by comment {pinning.comment.id}")
        return _PinChoice(run.id, pinning.comment.id, run.created_at[:10] or None, None, run_dir)

    def _offline_pin(self, pull: Pull, run_id: int | None, comment_id: int) -> _PinChoice:
        """A dry run without a token cannot check the run or download its logs: a local copy
        (``Settings.local_runs/<run_id>``) stands in for the logs, unchecked and said so;
        without one the configs stay in progress, also said so."""
        what = f"run {run_id}" if run_id is not None else "the latest sweep run"
        local = self.s.local_runs / str(run_id) if self.s.local_runs and run_id else None
        if local is None or not local.exists():
            self.out.say(
                f"PR #{pull.number}: {what} not checked (no token: GitHub not read); "
                "its configs are shown in progress"
            )
            return _PinChoice()
        self.out.say(
            f"PR #{pull.number}: {what} read from {local}, not checked against GitHub (no token)"
        )
        return _PinChoice(run_id, comment_id, None, None, local)

    def _sync_model(
        self,
        model: ModelSpec,
        cfgs: list[ConfigSpec],
        pull: Pull,
        choice: _PinChoice,
        status: str,
        tmp: Path,
    ) -> list[st.StatusItem]:
        in_progress = {
            c.key: Pin(c.key, str(pull.number), pull.head_sha, None, None, "in-progress", None)
            for c in cfgs
        }
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
            # only for configs whose logs agree; the others fall back to "in progress".
            # Only verified, never published: the default branch's files (as fetched when the
            # cookbook was opened) serve, with no second fetch to inspect the bot branch.
            book = self._cookbook()
            base = f"{book.remote}/{book.default_branch()}"
            trial = self._generate(model, measured, tmp / "trial", ref=base)
            for c in cfgs:
                ok, report = self.verifier(c.key, self.s.inferencex, choice.run_dir, trial.snippets)
                if ok:
                    pins[c.key] = measured[c.key]
                else:
                    reports[c.key] = report
                    self.out.say(f"{c.key}: run {choice.run_id} does not verify; kept in progress")
        result = self._publish(model, pins)
        items = []
        for c in cfgs:
            item = self._item(
                model, c.key, pull.head_sha, pin=pins[c.key], result=result, refusal=choice.refusal
            )
            if c.key in reports:
                item.verify_failed_run = str(choice.run_id)
                item.verify_run_url = self._run_url(str(choice.run_id))
                item.verify_report = clip(reports[c.key], MAX_REPORT_CHARS)
            if result.blocked:
                item.blocked = {"branch": result.branch, "commits": result.blocked}
            items.append(item)
        return items

    def _error_items(
        self, model: ModelSpec, cfgs: list[ConfigSpec], pull: Pull, error: str
    ) -> list[st.StatusItem]:
        return [self._item(model, c.key, pull.head_sha, error=error) for c in cfgs]

    def _item(
        self,
        model: ModelSpec,
        key: str,
        head_sha: str,
        *,
        pin: Pin | None = None,
        result: st.PublishResult | None = None,
        **extra: Any,
    ) -> st.StatusItem:
        """The status of config ``key``: where it goes, its pin (none: in progress) and, given
        ``result``, the bot's cookbook PRs for it."""
        fields: dict[str, Any] = {"status": pin.status if pin else "in-progress"}
        if pin is not None and pin.run:
            fields.update(run=pin.run, run_url=self._run_url(pin.run))
        if result is not None:
            merged_with = result.merged_with(key, self.cgh.login(), model.path)
            fields.update(
                open_pr=result.open_pr.number if result.open_pr else None,
                merged_pr=merged_with[0] if merged_with else None,
                closed_pr=result.closed.number if result.closed else None,
            )
        fields.update(extra)
        return st.StatusItem(
            key=key,
            model=model.model,
            model_path=model.path,
            section=model.section,
            page_url=self._page_url(model),
            head_sha=head_sha,
            **fields,
        )

    def _run_url(self, run: str) -> str:
        return links.run_url(self.s.inferencex_repo, run)

    # -- generation and the cookbook PR ------------------------------------------------------------

    @dataclass
    class _Generated:
        snippets: Path
        files: dict[str, str]
        notes: list[str]
        lint: str | None = None  # the SGLang flag check's PR body section

    def _cookbook(self) -> Cookbook:
        if self._book is None:
            cache_dir = self.s.cache_dir
            if self.plan.dry_run:
                # A dry run leaves no clone behind: its cookbook lives until handle() returns.
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

    def _module_path(self, model: ModelSpec) -> str:
        return f"{self.s.snippets_dir}/{model.module_relpath}"

    def _generate(
        self, model: ModelSpec, pins: dict[str, Pin], where: Path, *, ref: str
    ) -> Bot._Generated:
        """Generate into a scratch copy of the cookbook files at ``ref`` (never into the
        checkout)."""
        from syncer.cookbook.generate import generate_model

        book = self._cookbook()
        snippets, pages = where / "snippets", where / "pages"
        # generate_model keeps <out_dir>/<org>/<model>.jsx's date when nothing else changed.
        current = book.read(ref, self._module_path(model))
        if current is not None:
            target = snippets / model.module_relpath
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(current, encoding="utf-8")
        book.export(ref, pages, [model.page])
        all_pins = self.s.config.pins()
        all_pins.update(pins)
        result = generate_model(
            model.path,
            config=self.s.config,
            inferencex=self.s.inferencex,
            out_dir=snippets,
            pins=all_pins,
            pages_dir=pages,
            today=self.s.today,
            renderer=lambda _inferencex, key: self._rendered(key),
        )
        files = {self._module_path(model): result.text}
        page = pages / model.page
        if page.is_file():
            files[model.page] = page.read_text(encoding="utf-8")
        notes: list[str] = []
        if result.page_conflict:
            notes.append(f"page section left alone: {result.page_conflict}")
        # The cookbook clone is an SGLang checkout: each cell's flags are checked against the
        # SGLang its image pins. Findings go into the PR body; they never stop the publish.
        from syncer.lint.publish import lint_published

        checked = lint_published([(self._module_path(model), result.text)], book.path)
        if checked.skipped:
            self.out.say(f"{model.path}: SGLang flag check skipped: {checked.skipped}")
        return Bot._Generated(snippets, files, notes, checked.markdown())

    def _bot_pulls(self, model: ModelSpec) -> list[Pull]:
        """The bot's PRs for ``model`` (branch and marker), newest first."""
        head = links.head_ref(self.s.push_repo or self.s.cookbook_repo, branch_name(model.path))
        me = self.cgh.login()
        marker = st.pr_marker(model.path)
        return [
            p
            for p in self.cgh.find_pulls(self.s.cookbook_repo, head, state="all")
            if p.user == me and marker in p.body
        ]

    def _publish(self, model: ModelSpec, pins: dict[str, Pin]) -> st.PublishResult:
        book = self._cookbook()
        branch = branch_name(model.path)
        base = book.default_branch()
        state = book.branch_state(branch, base)
        pulls = self._bot_pulls(model)
        open_pr = next((p for p in pulls if p.state == "open"), None)
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
        me = self.cgh.login()
        # sync.yaml's pins, then what the open PR recorded for other PRs' configs, then ours.
        keys = {c.key for c in model.configs}
        merged_pins = {k: v for k, v in self.s.config.pins().items() if k in keys}
        if open_pr is not None:
            # A config sync.yaml no longer lists is dropped from the PR with its pin.
            recorded = st.read_state(open_pr, me, model.path)
            merged_pins.update({k: v for k, v in recorded.items() if k in keys})
        merged_pins.update(pins)
        # A PR that maintainers closed unmerged is not reopened for the same pins (bots that
        # re-create closed PRs on every run are a known nuisance); new pins open a new one.
        newest = pulls[0] if pulls else None
        if (
            open_pr is None
            and newest is not None
            and newest.state == "closed"
            and not newest.merged
            and st.read_state(newest, me, model.path) == merged_pins
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
            ref = state.base_tip if restart or not state.exists else state.tip
            gen = self._generate(model, merged_pins, Path(tmp), ref=ref)
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
            result.committed = True
            self._did(f"{branch}: committed {commit[:12]}", f"{branch}: would commit and push")
        else:
            self.out.say(f"{branch}: generated files unchanged")
        if open_pr is None and not changed_vs_base:
            self.out.say(f"{model.path}: the cookbook already shows this; no PR needed")
            return result
        old = book.read(state.base_tip, self._module_path(model))
        body = self._pr_body(model, merged_pins, gen, old)
        title = f"[AgentX] {model.model}: sync launch commands from InferenceX"
        if open_pr is None:
            made = self.cgh.create_pull(
                self.s.cookbook_repo,
                title=title,
                body=body,
                head=links.head_ref(self.s.push_repo or self.s.cookbook_repo, branch),
                base=base,
                maintainer_can_modify=True,
            )
            result.open_pr = made
            result.pr_written = True
            self._did(
                f"{model.path}: opened {self.s.cookbook_repo}#{made.number}",
                f"{model.path}: would open a PR in {self.s.cookbook_repo}",
            )
        elif open_pr.body != body or open_pr.title != title:
            self.cgh.update_pull(
                self.s.cookbook_repo,
                open_pr.number,
                title=title if open_pr.title != title else None,
                body=body if open_pr.body != body else None,
            )
            result.pr_written = True
            self._did(
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
        self, model: ModelSpec, pins: dict[str, Pin], gen: Bot._Generated, old: str | None
    ) -> str:
        from syncer.compare.review import review_texts

        new = gen.files[self._module_path(model)]
        review = review_texts(old, new, old_label="cookbook (default branch)", new_label="this PR")
        ctx = {
            "marker": st.pr_marker(model.path),
            "state": st.state_marker(model.path, pins),
            "model": model.model,
            "section": model.section,
            "files": sorted(gen.files),
            "provenance": self._provenance(model, pins),
            "notes": gen.notes,
            "lint": gen.lint,
            "exclusions": self._exclusions(model),
        }
        return fit_body(ctx, review.markdown, self.s.body_limit)

    def _provenance(self, model: ModelSpec, pins: dict[str, Pin]) -> list[dict[str, Any]]:
        """One row per config and deployment; ``pins`` holds every config of ``model``."""
        repo = self.s.inferencex_repo
        rows = []
        for cfg in model.configs:
            pin = pins[cfg.key]
            try:
                points = self._rendered(cfg.key).points
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
                        "run_url": self._run_url(pin.run) if pin.run else None,
                        "comment": pin.comment,
                        "comment_url": links.comment_url(repo, pin.pr, pin.comment)
                        if pin.comment and pin.pr
                        else None,
                        "status": pin.status,
                    }
                )
        return rows

    def _rendered(self, key: str) -> Any:
        """``render_config`` once per config and event: the trial and the published module and
        the PR body's provenance and exclusions all read the same renders."""
        from syncer.inferencex.render import render_config

        if key not in self._renders:
            self._renders[key] = render_config(self.s.inferencex, key)
        return self._renders[key]

    def _exclusions(self, model: ModelSpec) -> list[Any]:
        """Policy entries that removed or replaced something in these configs' launches."""
        from syncer.inferencex.policy import load_policy

        policy = load_policy()
        used: dict[str, Any] = {}
        for cfg in model.configs:
            try:
                points = self._rendered(cfg.key).points
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

    def _page_url(self, model: ModelSpec) -> str:
        return links.page_url(self.s.docs_url, model.page, model.section)

    # -- the cookbook side -------------------------------------------------------------------------

    def on_cookbook_closed(self, number: int) -> None:
        """A bot PR merged or closed: every InferenceX PR whose pins it carried gets its status
        refreshed (live since this PR, or its cookbook PR closed without merging)."""
        pull = self.cgh.pull(self.s.cookbook_repo, number)
        me = self.cgh.login()
        if pull.state != "closed":
            self.out.say(f"{self.s.cookbook_repo}#{number} is still open; nothing to do")
            return
        model = next((m for m in self.s.config.models if st.pr_marker(m.path) in pull.body), None)
        if model is not None and self.s.model not in (None, model.path):
            self.out.say(f"{self.s.cookbook_repo}#{number} is {model.path}'s; not this run's model")
            return
        if pull.user != me or model is None:
            self.out.say(f"{self.s.cookbook_repo}#{number} is not a sync PR of this bot; ignored")
            return
        recorded = st.read_state(pull, me, model.path)
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
        pulls = self._bot_pulls(model)
        result = st.PublishResult(
            model=model.path,
            open_pr=next((p for p in pulls if p.state == "open"), None),
            merged=[p for p in pulls if p.merged],
        )
        newest = pulls[0] if pulls else None
        if result.open_pr is None and newest and newest.state == "closed" and not newest.merged:
            result.closed = newest
        me = self.cgh.login()
        current = st.read_state(result.open_pr, me, model.path) if result.open_pr else {}
        items = []
        for m, cfg in self.configs_of(number):
            if m.path != model.path:
                continue
            pin = current.get(cfg.key) or recorded.get(cfg.key) or cfg.pin
            items.append(self._item(model, cfg.key, pin.sha, pin=pin, result=result))
        if items:
            self._upsert_status(number, items)

    # -- the status comment ------------------------------------------------------------------------

    def _upsert_status(
        self, number: int, items: list[st.StatusItem], *, create: bool = True
    ) -> None:
        """Post or edit the PR's one status comment; ``create=False`` only edits an existing one."""
        repo = self.s.inferencex_repo
        existing = st.find_status_comment(self.infx.comments(repo, number), self.infx.login())
        keep: dict[str, str] = {}
        if existing is not None and self.s.model is not None:
            # This run writes its own model's section; the other models' jobs write theirs.
            keep = {
                path: text
                for path, text in st.read_sections(existing.body).items()
                if path != self.s.model
            }
        order = [m.path for m in self.s.config.models]
        body = fit_comment(st.render_status(items, self.s.cookbook_repo, keep=keep, order=order))
        if existing is None and not create:
            self.out.say(f"PR #{number}: no status comment to update")
        elif existing is None:
            self.infx.create_comment(repo, number, body, marker=st.STATUS_MARKER)
            self._did(
                f"PR #{number}: status comment posted",
                f"PR #{number}: would post the status comment",
            )
        elif existing.body != body:
            self.infx.edit_comment(repo, existing.id, body)
            self._did(
                f"PR #{number}: status comment {existing.id} edited",
                f"PR #{number}: would edit status comment {existing.id}",
            )
        else:
            self.out.say(f"PR #{number}: status comment already current")
        if self.s.model is not None and not self.plan.dry_run and (existing or create):
            self._settle_status(number, st.read_sections(body).get(self.s.model))

    def _settle_status(self, number: int, mine: str | None) -> None:
        """Make the one status comment hold this run's section, after the other models' jobs
        of the same event wrote theirs at the same time (each job is in its own model's
        concurrency group, so nothing serialises their edits of the PR's one comment).

        Read back what is there: a comment whose copy of this section is stale (another job
        wrote over it with what it had read before) is edited again; a second status comment
        (two jobs that both found none and posted) is merged into the oldest and deleted. Every
        other section is taken from the newest comment that has it."""
        repo, me = self.s.inferencex_repo, self.infx.login()
        order = [m.path for m in self.s.config.models]
        for _ in range(3):
            found = [
                c
                for c in self.infx.comments(repo, number)
                if c.user == me and c.body.startswith(st.STATUS_MARKER)
            ]
            if not found:
                return
            found.sort(key=lambda c: (c.created_at, c.id))
            sections: dict[str, str] = {}
            for comment in sorted(found, key=lambda c: (c.updated_at, c.id)):
                sections.update(st.read_sections(comment.body))
            if mine is not None:
                sections[self.s.model or ""] = mine
            keeper, extras = found[0], found[1:]
            body = st.render_status([], self.s.cookbook_repo, keep=sections, order=order)
            if keeper.body == body and not extras:
                return
            if keeper.body != body:
                self.infx.edit_comment(repo, keeper.id, fit_comment(body))
            for extra in extras:
                self.infx.delete_comment(repo, extra.id)
            self.out.say(f"PR #{number}: status comment {keeper.id} merged with another job's")


def event_models(
    config: SyncConfig,
    event_name: str,
    payload: dict[str, Any],
    *,
    inferencex_repo: str = links.INFERENCEX_REPO,
    cookbook_repo: str = links.COOKBOOK_REPO,
) -> list[str]:
    """The models an event can touch, from the event data and sync.yaml alone (no API, no
    token): what the workflow's gate job uses to pick the per-model concurrency group."""
    repo = _text(_obj(payload, "repository"), "full_name", "repository")
    number: object = None
    if event_name == "issue_comment" and repo == inferencex_repo:
        issue = _obj(payload, "issue")
        number = issue.get("number") if issue.get("pull_request") else None
    elif event_name == "pull_request" and repo == inferencex_repo:
        number = _obj(payload, "pull_request").get("number")
    elif event_name == "pull_request" and repo == cookbook_repo:
        ref = _text(_obj(_obj(payload, "pull_request"), "head"), "ref", "pull_request.head")
        path = ref[len(BRANCH_PREFIX) :] if ref.startswith(BRANCH_PREFIX) else None
        return [m.path for m in config.models if m.path == path]
    elif event_name in ("repository_dispatch", "workflow_dispatch"):
        return [m.path for m in config.models]
    if isinstance(number, bool) or not isinstance(number, int):
        return []
    return sorted({m.path for m, _ in pr_configs(config, number)})


def pr_configs(config: SyncConfig, number: int) -> list[tuple[ModelSpec, ConfigSpec]]:
    """The configs of ``sync.yaml`` that come from InferenceX PR ``number``, with their model."""
    return [
        (model, cfg)
        for model in config.models
        for cfg in model.configs
        if cfg.source == "pr" and cfg.pin.pr == str(number)
    ]


class BadEvent(SyncError):
    """The event payload is not shaped like GitHub's (the command names the event file)."""


def _obj(data: dict[str, Any], key: str) -> dict[str, Any]:
    """``data[key]`` as an object ({} when absent); any other type is a malformed event."""
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadEvent(f"event: {key} must be an object, got {kind(value)}")
    return value


def _text(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadEvent(f"event: {where}.{key} must be a string, got {kind(value)}")
    return value


def _number(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise BadEvent(f"event: {what} must be a positive integer, got {js(value, 40)}")
    return value


def _assoc(value: Any) -> str | None:
    """The event's ``author_association`` (a string, or nothing usable: not authorised)."""
    return value if isinstance(value, str) else None


def _carries(cookbook_pr: Pull, number: int, login: str, model: ModelSpec) -> bool:
    """Whether the bot's ``cookbook_pr`` recorded a pin of InferenceX PR ``number``."""
    state = st.read_state(cookbook_pr, login, model.path)
    return not cookbook_pr.merged and any(pin.pr == str(number) for pin in state.values())


def _safe_name(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name)[:200]
