"""Which work a GitHub event asks for, from the event data alone.

The event is untrusted input: every field is type-checked here (``BadEvent``), and a comment's
author and body are read again through the API before anything in it is interpreted. Routing
decides only *which* InferenceX PR or cookbook PR to bring up to date, and returns that as data
(``Work``); the bot does it, from the API's state. Routing's own writes are the reactions that
answer a comment (a refused command gets -1 before anything else happens).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from syncer import links
from syncer.github import event
from syncer.github.api import NotFound
from syncer.github.client import GitHubClient
from syncer.publish import pins as pinrules
from syncer.publish.git import BRANCH_PREFIX
from syncer.publish.settings import Outcome, Settings
from syncer.syncconfig import SHA, ConfigSpec, ModelSpec, SyncConfig
from syncer.wording import js


@dataclass(frozen=True)
class SyncPR:
    """Bring InferenceX PR ``number`` (its pin, configs, status) up to date."""

    number: int


@dataclass(frozen=True)
class ReconcilePR:
    """Reconcile InferenceX PR ``number`` alone: synced unless what the bot published for it
    still holds (a push handed on by the workflow's dispatch job)."""

    number: int


@dataclass(frozen=True)
class CookbookClosed:
    """Cookbook PR ``number`` was merged or closed: tell the InferenceX PRs it carried."""

    number: int


# What an event asks the bot to do, in order (at most one item today).
Work = SyncPR | ReconcilePR | CookbookClosed


def route(
    event_name: str,
    payload: event.Payload,
    *,
    settings: Settings,
    infx: GitHubClient,
    out: Outcome,
) -> list[Work]:
    """The work ``payload`` (an ``event_name`` event) asks for; what is ignored, and why, is
    said in ``out``."""
    repo = event.text(event.obj(payload, "repository"), "full_name", "repository")
    if event_name == "issue_comment":
        if repo != settings.inferencex_repo:
            out.say(f"ignored: comment event from {repo or 'an unknown repository'}")
            return []
        return _on_comment(payload, settings=settings, infx=infx, out=out)
    if event_name == "pull_request":
        pr = event.obj(payload, "pull_request")
        number = event.number(pr.get("number"), "pull_request.number")
        action = event.text(payload, "action")
        if repo == settings.inferencex_repo:
            if action in ("opened", "reopened", "synchronize", "edited", "closed"):
                return [SyncPR(number)]
            out.say(f"ignored: pull_request {action}")
            return []
        if repo == settings.cookbook_repo and action == "closed":
            return [CookbookClosed(number)]
        out.say(f"ignored: pull_request {action} in {repo or 'unknown'}")
        return []
    if event_name == "repository_dispatch":
        client = event.obj(payload, "client_payload")
        return [
            CookbookClosed(event.number(client.get("cookbook_pr"), "client_payload.cookbook_pr"))
        ]
    if event_name == "workflow_dispatch":
        # A push to a PR of a branch of InferenceX, handed on by the workflow's dispatch job:
        # that PR alone is brought up to date (the other open PRs did not move).
        pushed = event.dispatch_number(payload, "inferencex_pr")
        if pushed is not None:
            return [ReconcilePR(pushed)]
        closed = event.dispatch_number(payload, "cookbook_pr")
        raw = event.obj(payload, "inputs").get("cookbook_pr")
        # Empty is the reconcile's (the command takes it before routing); here an error.
        return [CookbookClosed(closed or event.number(raw, "inputs.cookbook_pr"))]
    out.say(f"ignored: event {event_name}")
    return []


COMMENT_ACTIONS = ("created", "edited", "deleted")


def _on_comment(
    payload: event.Payload,
    *,
    settings: Settings,
    infx: GitHubClient,
    out: Outcome,
) -> list[Work]:
    issue = event.obj(payload, "issue")
    if not issue.get("pull_request"):
        out.say("ignored: comment on an issue, not a PR")
        return []
    number = event.number(issue.get("number"), "issue.number")
    event_comment = event.obj(payload, "comment")
    comment_id = event.number(event_comment.get("id"), "comment.id")
    action = event.text(payload, "action")
    if action not in COMMENT_ACTIONS:
        # GitHub sends no other; another value (or type) is not GitHub's event.
        raise event.BadEvent(
            f"event: action must be one of {', '.join(COMMENT_ACTIONS)} for issue_comment, "
            f"got {js(payload.get('action'), 40)}"
        )
    repo = settings.inferencex_repo
    if action == "deleted":
        return [SyncPR(number)]
    # The event says who wrote what; the API is asked again, and only its answer is used
    # for the body. Both must say the author is authorised, and that is decided before the
    # body is parsed at all: nothing an unauthorised commenter writes is interpreted.
    event_ok = pinrules.authorised(_assoc(event_comment.get("author_association")))
    try:
        comment = infx.comments.get(repo, comment_id)
    except NotFound:
        # Deleted before we got here: the PR's pin is simply recomputed without it.
        return [SyncPR(number)]
    api_ok = pinrules.authorised(comment.association)
    command = pinrules.parse_command(comment.body)
    malformed = pinrules.malformed_lines(comment.body)
    if command is None and not malformed:
        if action == "edited":
            pinrules.sync_reactions(infx, repo, comment, accepted=None)
            return [SyncPR(number)]
        out.say(f"comment {comment_id}: no command; nothing to do")
        return []
    if not (event_ok and api_ok) or command is None:
        pinrules.sync_reactions(infx, repo, comment, accepted=False)
        why = (
            "malformed command"
            if command is None
            else (f"author association {comment.association} is not OWNER, MEMBER or COLLABORATOR")
        )
        refused = f"comment {comment_id}: refused ({why})"
        out.did(f"{refused}; reacted -1", f"{refused}; would react -1")
        if action == "edited" and api_ok:
            # It may have been the pin before the edit broke it: the pin is recomputed.
            return [SyncPR(number)]
        return []
    return [SyncPR(number)]


# (PR number, head commit, base commit) -> the models of the configs its commits add or change
Discover = Callable[[int, str | None, str | None], list[str]]


def event_models(
    config: SyncConfig,
    event_name: str,
    payload: event.Payload,
    *,
    inferencex_repo: str = links.INFERENCEX_REPO,
    cookbook_repo: str = links.COOKBOOK_REPO,
    discover: Discover | None = None,
) -> list[str]:
    """The models an event can touch, from the event data and sync.yaml (no token): what the
    workflow's gate job uses to pick the per-model concurrency group. ``discover``: the
    models of an InferenceX PR from its commits (the bot's InferenceX clone), else sync.yaml's
    listing of the PR's configs."""
    repo = event.text(event.obj(payload, "repository"), "full_name", "repository")
    event.text(payload, "action")  # of GitHub's type here too: the gate refuses what the job would
    number: object = None
    head: str | None = None
    base: str | None = None
    if event_name == "issue_comment" and repo == inferencex_repo:
        issue = event.obj(payload, "issue")
        number = issue.get("number") if issue.get("pull_request") else None
    elif event_name == "pull_request" and repo == inferencex_repo:
        pr = event.obj(payload, "pull_request")
        number = pr.get("number")
        head, base = _sha(pr, "head"), _sha(pr, "base")
    elif event_name == "pull_request" and repo == cookbook_repo:
        ref = event.text(
            event.obj(event.obj(payload, "pull_request"), "head"), "ref", "pull_request.head"
        )
        path = ref[len(BRANCH_PREFIX) :] if ref.startswith(BRANCH_PREFIX) else None
        return [m.path for m in config.models if m.path == path]
    elif event_name == "workflow_dispatch" and event.dispatch_number(payload, "inferencex_pr"):
        number = event.dispatch_number(payload, "inferencex_pr")
    elif event_name in ("repository_dispatch", "workflow_dispatch"):
        return [m.path for m in config.models]
    if isinstance(number, bool) or not isinstance(number, int):
        return []
    if discover is not None:
        return sorted(set(discover(number, head, base)))
    return sorted({m.path for m, _ in pr_configs(config, number)})


def _sha(pr: event.Payload, side: str) -> str | None:
    """The event's ``pull_request.<side>.sha`` when it is a commit id (else None: looked up)."""
    value = pr.get(side)
    sha = value.get("sha") if isinstance(value, dict) else None
    return sha if isinstance(sha, str) and SHA.fullmatch(sha) else None


def pr_configs(config: SyncConfig, number: int) -> list[tuple[ModelSpec, ConfigSpec]]:
    """The configs of ``sync.yaml`` that come from InferenceX PR ``number``, with their model."""
    return [
        (model, cfg)
        for model in config.models
        for cfg in model.configs
        if cfg.source == "pr" and cfg.pin.pr == str(number)
    ]


def _assoc(value: object) -> str | None:
    """The event's ``author_association`` (a string, or nothing usable: not authorised)."""
    return value if isinstance(value, str) else None
