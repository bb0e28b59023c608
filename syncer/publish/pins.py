"""Which run an InferenceX PR pins, by InferenceX's own rules for ``/use`` and ``/reuse-sweep-run``.

The rules, as InferenceX applies them when a PR reuses a sweep run:

* a command occupies a whole line (surrounding spaces and tabs allowed); ``/use`` needs a run id
  on the same line, ``/reuse-sweep-run`` may be bare (= newest successful PR run); when a comment
  has several command lines the last one counts;
* only comments whose ``author_association`` is OWNER, MEMBER or COLLABORATOR count, and the
  newest such comment (by ``created_at``) wins, also when its run is not valid — an older pin is
  not silently revived;
* the run must be a ``pull_request`` run of ``.github/workflows/run-sweep.yml``, completed, its
  head commit still among the PR's commits, with an unexpired result artifact and no
  qualification artifact; the labels ``evals-only`` and ``agentx-fast`` make reuse invalid.

Comment bodies and event payloads are data: nothing here trusts the event file, the bot re-reads
every comment through the API (see :func:`authorised`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from syncer import links
from syncer.github.api import NotFound
from syncer.github.client import GitHubClient
from syncer.github.records import Artifact, Comment, Pull, WorkflowRun
from syncer.publish.run_logs import download_logs, log_artifacts, run_logs
from syncer.publish.settings import Outcome

AUTHORISED = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
SWEEP_WORKFLOW = ".github/workflows/run-sweep.yml"
DISQUALIFYING_LABELS = frozenset({"evals-only", "agentx-fast"})
PINNED_CONCLUSIONS = frozenset({"success", "failure", "cancelled"})
# Artifacts whose presence proves a run measured something that can be reused.
RESULT_ARTIFACTS = ("results_bmk", "eval_results_all")
RESULT_PREFIXES = ("bmk_agentic_",)
QUALIFICATION_PREFIX = "qualification"
# The artifacts a pinned run is verified against (its sweep logs).

# A run id as links.GITHUB_ID reads it: a comment anyone can write must never make the bot
# fail, so a longer id is a malformed command.
_USE = re.compile(rf"^[ \t]*/use[ \t]+({links.GITHUB_ID})[ \t]*$")
_REUSE = re.compile(rf"^[ \t]*/reuse-sweep-run(?:[ \t]+({links.GITHUB_ID}))?[ \t]*$")
# Lines that try to be a command and are not one (bare /use, /use abc, /reuse-sweep-run x).
_ATTEMPT = re.compile(r"^[ \t]*/(use|reuse-sweep-run)(?:[ \t]|$)")


@dataclass(frozen=True)
class Command:
    """One command line of a comment: ``name`` is ``use`` or ``reuse-sweep-run``."""

    name: str
    run_id: int | None
    line: int  # 1-based line in the comment body


def _lines(body: str) -> list[str]:
    # Lines as a regex in multiline mode sees them (only \n ends a line), not str.splitlines,
    # which would also split on form feeds and Unicode separators.
    return body.replace("\r\n", "\n").split("\n")


def parse_command(body: str) -> Command | None:
    """The comment's effective command (the last matching whole line), or None."""
    found: Command | None = None
    for number, line in enumerate(_lines(body), 1):
        if m := _USE.match(line):
            found = Command("use", int(m.group(1)), number)
        elif m := _REUSE.match(line):
            found = Command("reuse-sweep-run", int(m.group(1)) if m.group(1) else None, number)
    return found


def malformed_lines(body: str) -> list[int]:
    """Lines that start like a command but do not parse as one (they earn a -1)."""
    return [
        number
        for number, line in enumerate(_lines(body), 1)
        if _ATTEMPT.match(line) and not (_USE.match(line) or _REUSE.match(line))
    ]


def authorised(association: str | None) -> bool:
    return (association or "").upper() in AUTHORISED


@dataclass(frozen=True)
class CommandComment:
    comment: Comment
    command: Command


def select(comments: list[Comment]) -> CommandComment | None:
    """The newest authorised comment carrying a command (ties broken by comment id)."""
    found = authorised_commands(comments)
    return found[-1] if found else None


def authorised_commands(comments: list[Comment]) -> list[CommandComment]:
    """Every authorised command comment, oldest first."""
    out = []
    for comment in sorted(comments, key=lambda c: (c.created_at, c.id)):
        # Authorisation first: an unauthorised comment's body is never interpreted.
        if not authorised(comment.association):
            continue
        command = parse_command(comment.body)
        if command is not None:
            out.append(CommandComment(comment, command))
    return out


def pinning_comment(comments: list[Comment]) -> CommandComment | None:
    """The comment that established the current pin: the winner, or the oldest of the run of
    newest authorised comments naming the same run id (repeating ``/use <same id>`` — or
    ``/reuse-sweep-run <same id>`` — confirms the pin and does not move it)."""
    found = authorised_commands(comments)
    if not found:
        return None
    winner = found[-1]
    if winner.command.run_id is None:
        return winner
    first = winner
    for sel in reversed(found[:-1]):
        if sel.command.run_id != winner.command.run_id:
            break
        first = sel
    return first


@dataclass
class RunCheck:
    """Whether a run may be pinned by a PR, and why not."""

    ok: bool
    reason: str
    run: WorkflowRun | None = None
    artifacts: list[Artifact] = field(default_factory=list)


def _is_result(name: str) -> bool:
    return name in RESULT_ARTIFACTS or name.startswith(RESULT_PREFIXES)


def check_run(
    gh: GitHubClient,
    repo: str,
    pull: Pull,
    run_id: int,
    commits: list[str],
    *,
    pinned: bool = True,
) -> RunCheck:
    """Validate ``run_id`` for ``pull`` the way InferenceX does at acknowledgement and merge."""
    refused = _label_refusal(pull)
    if refused is not None:
        return refused
    try:
        run = gh.actions.run(repo, run_id)
    except NotFound:
        return RunCheck(False, f"run {run_id} does not exist in {repo} (or the bot cannot see it)")
    return _check(gh, repo, run, commits, pinned=pinned)


def _label_refusal(pull: Pull) -> RunCheck | None:
    bad_labels = sorted(DISQUALIFYING_LABELS & set(pull.labels))
    if not bad_labels:
        return None
    return RunCheck(
        False, f"the PR carries the label {', '.join(bad_labels)}, which makes run reuse invalid"
    )


def _check(
    gh: GitHubClient, repo: str, run: WorkflowRun, commits: list[str], *, pinned: bool
) -> RunCheck:
    """The run's own rules (the PR's labels are checked by the callers)."""
    run_id = run.id
    workflow = run.path.split("@", 1)[0]
    if run.event != "pull_request" or workflow != SWEEP_WORKFLOW:
        return RunCheck(
            False,
            f"run {run_id} is a {run.event or 'unknown'} run of "
            f"{workflow or 'an unknown workflow'}, not a pull_request run of "
            f"{SWEEP_WORKFLOW}",
            run,
        )
    if run.status != "completed":
        return RunCheck(False, f"run {run_id} has not completed (status {run.status})", run)
    allowed = PINNED_CONCLUSIONS if pinned else frozenset({"success"})
    if run.conclusion not in allowed:
        return RunCheck(False, f"run {run_id} concluded {run.conclusion}", run)
    if run.head_sha not in commits:
        return RunCheck(
            False,
            f"run {run_id} ran commit {run.head_sha[:9]}, which is not among this PR's commits",
            run,
        )
    artifacts = gh.actions.artifacts(repo, run_id)
    if any(a.name.startswith(QUALIFICATION_PREFIX) for a in artifacts):
        return RunCheck(False, f"run {run_id} is a qualification run", run, artifacts)
    if not any(_is_result(a.name) and not a.expired for a in artifacts):
        return RunCheck(
            False,
            f"run {run_id} has no unexpired result artifact "
            "(results_bmk, eval_results_all or bmk_agentic_*)",
            run,
            artifacts,
        )
    return RunCheck(True, f"run {run_id} ({run.conclusion})", run, artifacts)


def latest_successful_run(gh: GitHubClient, repo: str, pull: Pull, commits: list[str]) -> RunCheck:
    """What a bare ``/reuse-sweep-run`` means: the newest successful PR sweep run that qualifies.

    The listed runs are judged as listed (not fetched again one by one)."""
    refused = _label_refusal(pull)
    if refused is not None:
        return refused
    for run in gh.actions.workflow_runs(
        repo, SWEEP_WORKFLOW, branch=pull.head_ref, event="pull_request", status="success"
    ):
        if run.head_sha not in commits:
            continue
        verdict = _check(gh, repo, run, commits, pinned=False)
        if verdict.ok:
            return verdict
    return RunCheck(
        False,
        f"no successful run-sweep.yml run of {pull.head_ref} with result "
        "artifacts for a commit of this PR",
    )


def sync_reactions(gh: GitHubClient, repo: str, comment: Comment, accepted: bool | None) -> bool:
    """Leave exactly the bot's +1 (accepted), -1 (refused) or neither (None: the comment no
    longer carries a command) on ``comment``; True when it wrote."""
    want = None if accepted is None else "+1" if accepted else "-1"
    me = gh.login()
    mine = [
        r
        for r in gh.comments.reactions(repo, comment.id)
        if r.user == me and r.content in ("+1", "-1")
    ]
    wrote = False
    for reaction in mine:
        if reaction.content != want:
            gh.comments.unreact(repo, comment.id, reaction.id)
            wrote = True
    if want is not None and not any(r.content == want for r in mine):
        gh.comments.react(repo, comment.id, want)
        wrote = True
    return wrote


@dataclass
class PinChoice:
    """The PR's pin after InferenceX's rules: a run with its logs, or the reason there is none."""

    run_id: int | None = None
    comment_id: int | None = None
    date: str | None = None
    refusal: str | None = None
    run_dir: Path | None = None


def choose(
    gh: GitHubClient,
    repo: str,
    pull: Pull,
    tmp: Path,
    *,
    local_runs: Path | None,
    out: Outcome,
    runs: Path | None = None,
) -> PinChoice:
    """The pin of ``pull``: the newest authorised command's run, checked, reacted to, and its
    sweep logs downloaded under ``runs`` (kept for later events: :func:`run_logs.run_logs`),
    else under ``tmp``."""
    comments = gh.comments.on(repo, pull.number)
    selection = select(comments)
    if selection is None:
        return PinChoice()
    # Provenance names the comment that set this run, so repeating it changes nothing.
    pinning = pinning_comment(comments) or selection
    if gh.offline:
        # The run cannot be checked without a token, but the PR's labels are in the event.
        refused = _label_refusal(pull)
        if refused is not None:
            sync_reactions(gh, repo, selection.comment, False)
            out.say(f"PR #{pull.number}: pin refused: {refused.reason}")
            return PinChoice(comment_id=selection.comment.id, refusal=refused.reason)
        return _offline(pull, selection.command.run_id, pinning.comment.id, local_runs, out)
    commits = gh.pulls.commits(repo, pull.number)
    command = selection.command
    if command.run_id is None:
        verdict = latest_successful_run(gh, repo, pull, commits)
    else:
        verdict = check_run(gh, repo, pull, command.run_id, commits)
    sync_reactions(gh, repo, selection.comment, verdict.ok)
    if not verdict.ok or verdict.run is None:
        out.say(f"PR #{pull.number}: pin refused: {verdict.reason}")
        return PinChoice(comment_id=selection.comment.id, refusal=verdict.reason)
    run = verdict.run
    logs = log_artifacts(verdict.artifacts)
    if not logs:
        reason = f"run {run.id} has no unexpired server-log artifact to verify against"
        return PinChoice(comment_id=selection.comment.id, refusal=reason)
    if runs is not None:
        # Downloaded once per run and attempt: a repeated /reuse-sweep-run, or a /use of a
        # run an earlier event of this runner downloaded, reads that folder again.
        run_dir, _ = run_logs(gh, repo, run.id, verdict.artifacts, runs)
    else:
        run_dir = download_logs(gh, logs, tmp / f"run-{run.id}")
    out.say(f"PR #{pull.number}: run {run.id} pinned by comment {pinning.comment.id}")
    return PinChoice(run.id, pinning.comment.id, run.created_at[:10] or None, None, run_dir)


def _offline(
    pull: Pull, run_id: int | None, comment_id: int, local_runs: Path | None, out: Outcome
) -> PinChoice:
    """A dry run without a token cannot check the run or download its logs: a local copy
    (``local_runs/<run_id>``) stands in for the logs, unchecked and said so; without one the
    configs stay in progress, also said so."""
    what = f"run {run_id}" if run_id is not None else "the latest sweep run"
    local = local_runs / str(run_id) if local_runs and run_id else None
    if local is None or not local.exists():
        out.say(
            f"PR #{pull.number}: {what} not checked (no token: GitHub not read); "
            "its configs are shown in progress"
        )
        return PinChoice()
    out.say(f"PR #{pull.number}: {what} read from {local}, not checked against GitHub (no token)")
    return PinChoice(run_id, comment_id, None, None, local)
