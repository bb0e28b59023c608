"""The status comment on an InferenceX PR and the state the bot keeps in its cookbook PR body.

Both are found again by hidden markers, and only when the bot's own account wrote them: a
marker pasted by someone else is ignored, so nobody can make the bot adopt or edit their
comment, or feed it pins through a PR body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict

from syncer.fitting import close_blocks
from syncer.github.records import PLANNED, Comment, Pull
from syncer.model import PointStatus
from syncer.syncconfig import Pin, recorded_pin
from syncer.templating import render

STATUS_MARKER = "<!-- infx-cookbook-sync:status -->"
PR_MARKER_PREFIX = "<!-- infx-cookbook-sync:pr "
STATE_PREFIX = "<!-- infx-cookbook-sync:state "
BY = "[by infx-cookbook-sync]"
_STATE = re.compile(r"^<!-- infx-cookbook-sync:state (\{.*\}) -->$", re.M)


def pr_marker(model_path: str) -> str:
    return f"{PR_MARKER_PREFIX}model={model_path} -->"


class Blocked(TypedDict):
    """Why nothing was pushed: the bot branch holds commits someone else made."""

    branch: str
    commits: list[tuple[str, str]]  # (sha, "Author <email>")


@dataclass
class StatusItem:
    """What the status comment says about one config of the PR."""

    key: str
    model: str
    section: str
    page_url: str
    status: PointStatus  # in-progress | verified-pr | verified
    head_sha: str
    open_pr: int | None = None
    merged_pr: int | None = None  # the newest merged bot PR carrying this config (live since)
    run: str | None = None
    run_url: str | None = None
    refusal: str | None = None
    verify_failed_run: str | None = None
    verify_run_url: str | None = None
    verify_report: str | None = None
    blocked: Blocked | None = None
    error: str | None = None  # why nothing could be published for this config
    fixer: str = ""  # who can fix ``error`` (syncer.publish.blame)
    fixer_pr: int | None = None  # the other InferenceX PR whose config caused it
    closed_pr: int | None = None  # the bot's PR for these pins, closed unmerged
    source_closed: bool = False  # this InferenceX PR was closed without merging
    kept_for: list[int] = field(default_factory=list)  # other PRs keeping open_pr open
    model_path: str = ""  # org/model: the comment's section this item belongs to
    shown_sha: str = ""  # the commit the cookbook shows the config at (default: head_sha)
    kept_published: str | None = None  # could not be rendered (why): published cells kept
    kept_cells: list[str] = field(default_factory=list)  # deployments no longer rendered, kept
    removal_pr: int | None = None  # the bot PR removing this closed PR's published cells


MILESTONE_PREFIX = "<!-- infx-cookbook-sync:milestone "
UNMAPPED_MARKER = f"{MILESTONE_PREFIX}unmapped -->"


def milestone(item: StatusItem) -> tuple[str, int]:
    """Which milestone of its way to the cookbook a config has reached: (kind, cookbook PR)."""
    if item.source_closed:
        return "source-closed", item.closed_pr or item.open_pr or 0
    if item.error:
        return "error", 0
    if item.open_pr is not None:
        return "open", item.open_pr
    if item.merged_pr:
        return "merged", item.merged_pr
    if item.closed_pr:
        return "closed", item.closed_pr
    return "pending", 0


def milestone_marker(model_path: str, items: list[StatusItem]) -> str:
    """The hidden marker of one model's milestone comment: the milestone of its first config and
    the pin statuses of all of them (a run pinned on an open cookbook PR is a milestone too)."""
    kind, number = milestone(items[0])
    # The PR a dry run would open has no number yet: "open new".
    pr = "new" if kind == "open" and number == PLANNED else str(number)
    statuses = "+".join(sorted({str(item.status) for item in items}))
    return f"{MILESTONE_PREFIX}{model_path} {kind} {pr} {statuses} -->"


def by_model(items: list[StatusItem]) -> dict[str, list[StatusItem]]:
    """``items`` grouped by their model (its path), in the order they come."""
    groups: dict[str, list[StatusItem]] = {}
    for item in items:
        groups.setdefault(item.model_path, []).append(item)
    return groups


def render_model(items: list[StatusItem], cookbook_repo: str, marker: str) -> str:
    """What the bot says of one model's ``items`` behind ``marker``: the one text of each
    milestone, whether it is a comment of its own or a section of the status comment."""
    items = [
        replace(item, verify_report=close_blocks(item.verify_report))
        if item.verify_report is not None
        else item
        for item in items
    ]
    body = render(
        "status_comment.md.j2", marker=marker, by=BY, cookbook_repo=cookbook_repo, items=items
    )
    return body.strip("\n")


def render_milestone(items: list[StatusItem], cookbook_repo: str) -> tuple[str, str]:
    """(marker, body) of the milestone comment of one model's ``items``."""
    marker = milestone_marker(items[0].model_path, items)
    return marker, render_model(items, cookbook_repo, marker) + "\n"


def render_unmapped(reasons: list[str]) -> str:
    return render("status_unmapped.md.j2", marker=UNMAPPED_MARKER, by=BY, reasons=reasons)


def find_marked(comments: list[Comment], login: str, marker: str) -> Comment | None:
    """The bot's own comment that starts with ``marker`` (the oldest, if a race made two)."""
    mine = [c for c in comments if c.user == login and c.body.startswith(marker)]
    return min(mine, key=lambda c: (c.created_at, c.id)) if mine else None


SECTION_PREFIX = "<!-- infx-cookbook-sync:section "
_SECTION = re.compile(r"^<!-- infx-cookbook-sync:section (\S+) -->$", re.M)
SECTION_SEPARATOR = "\n\n---\n\n"


def section_marker(model_path: str) -> str:
    return f"{SECTION_PREFIX}{model_path} -->"


def render_status(
    items: list[StatusItem],
    cookbook_repo: str,
    *,
    keep: dict[str, str] | None = None,
    order: list[str] | None = None,
) -> str:
    """The status comment: one section per cookbook model, each behind its hidden marker.

    ``keep``: sections of other models to carry over unchanged (from the comment as it is), so
    the per-model jobs of one event each rewrite only their own model's section.
    ``order``: model paths in sync.yaml order (sections of unknown models go last)."""
    sections = dict(keep or {})
    for path, group in by_model(items).items():
        sections[path] = render_model(group, cookbook_repo, section_marker(path))
    rank = {path: i for i, path in enumerate(order or [])}
    paths = sorted(sections, key=lambda p: (rank.get(p, len(rank)), p))
    return STATUS_MARKER + "\n" + SECTION_SEPARATOR.join(sections[p] for p in paths) + "\n"


def read_sections(body: str) -> dict[str, str]:
    """The per-model sections of a status comment the bot wrote (model path -> text)."""
    marks = list(_SECTION.finditer(body))
    out: dict[str, str] = {}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(body)
        text = body[m.start() : end].rstrip("\n")
        out[m.group(1)] = text.removesuffix(SECTION_SEPARATOR.rstrip("\n")).rstrip("\n")
    return out


def state_marker(model_path: str, pins: dict[str, Pin], kept: Sequence[str] = ()) -> str:
    """The state the cookbook PR body records: its pins, and the published cells it names as
    kept (``kept``: cell ids), so the next update says only what is new of them."""
    data: dict[str, object] = {
        "model": model_path,
        "pins": {
            key: {k: v for k, v in vars(pin).items() if k != "config" and v is not None}
            for key, pin in sorted(pins.items())
        },
    }
    if kept:
        data["kept"] = sorted(set(kept))
    # "<" and ">" escaped so the JSON can never close the HTML comment it lives in.
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return STATE_PREFIX + text.replace("<", "\\u003c").replace(">", "\\u003e") + " -->"


def _recorded(pull: Pull, login: str, model_path: str) -> dict[str, Any]:
    """The state recorded in the bot's own PR body for ``model_path`` ({} if none or
    malformed)."""
    if pull.user != login or pr_marker(model_path) not in pull.body:
        return {}
    m = _STATE.search(pull.body)
    if not m:
        return {}
    try:
        data = json.loads(m.group(1))
    except json.JSONDecodeError:
        return {}
    if not isinstance(data, dict) or data.get("model") != model_path:
        return {}
    return data


def read_kept(pull: Pull, login: str, model_path: str) -> set[str]:
    """The published cells the bot's own PR body already names as kept (cell ids)."""
    kept = _recorded(pull, login, model_path).get("kept")
    return {c for c in kept if isinstance(c, str)} if isinstance(kept, list) else set()


def read_state(pull: Pull, login: str, model_path: str) -> dict[str, Pin]:
    """Pins recorded in the bot's own PR body for ``model_path``; anything malformed is dropped."""
    data = _recorded(pull, login, model_path)
    out: dict[str, Pin] = {}
    pins = data.get("pins") or {}
    for key, raw in pins.items() if isinstance(pins, dict) else ():
        pin = recorded_pin(key, raw)
        if pin is not None:
            out[key] = pin
    return out


@dataclass
class PublishResult:
    """What happened to one model's cookbook PR."""

    model: str
    open_pr: Pull | None = None
    merged: list[Pull] = field(default_factory=list)  # the bot's merged PRs, newest first
    blocked: list[tuple[str, str]] = field(default_factory=list)
    branch: str = ""
    closed: Pull | None = None  # the bot's newest PR, closed unmerged with the same pins
    unrendered: dict[str, str] = field(default_factory=dict)  # published cells kept: key -> why
    # A written config's published cells its new rendering no longer produces, kept: key -> ids
    kept_cells: dict[str, list[str]] = field(default_factory=dict)

    def merged_with(self, key: str, login: str, model_path: str) -> list[int]:
        """Numbers of merged bot PRs whose recorded pins include ``key`` (newest first)."""
        return [p.number for p in self.merged if key in read_state(p, login, model_path)]
