"""GitHub's objects as the bot reads them: plain records parsed once from GitHub's JSON.

The bot's logic never touches lazy PyGithub objects (which hide extra requests): every read
of ``github.py``'s client answers with these frozen records, and the offline client of a dry
run builds the same records from an event file. The ``*Data`` typed dicts name the JSON shape
each parser expects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypedDict


# GitHub's JSON as the parsers below read it (and the offline client from an
# event file): read-through shapes, so a parser's argument says which object it expects. Every
# key may be missing or null in what a server or an event file sends; the parsers default them.
class UserData(TypedDict, total=False):
    login: str


class RepoData(TypedDict, total=False):
    full_name: str | None


class RefData(TypedDict, total=False):
    ref: str | None
    sha: str | None
    repo: RepoData | None


class LabelData(TypedDict):
    name: str


class PullData(TypedDict, total=False):
    number: int
    title: str | None
    body: str | None
    state: str | None
    merged: bool | None  # the single PR's GET only: a listed PR (pull-request-simple) lacks it
    merged_at: str | None
    user: UserData | None
    head: RefData | None
    base: RefData | None
    labels: list[LabelData] | None
    html_url: str | None
    maintainer_can_modify: bool | None


class IssueData(TypedDict, total=False):
    number: int
    title: str | None
    body: str | None
    state: str | None
    user: UserData | None
    labels: list[LabelData] | None
    html_url: str | None
    pull_request: dict[str, object] | None


class WorkflowRunData(TypedDict, total=False):
    id: int
    event: str | None
    path: str | None
    status: str | None
    conclusion: str | None
    head_sha: str | None
    head_branch: str | None
    html_url: str | None
    created_at: str | None


class CommentData(TypedDict, total=False):
    id: int
    body: str | None
    user: UserData | None
    author_association: str | None
    created_at: str | None
    updated_at: str | None
    html_url: str | None


class PullState(StrEnum):
    """A pull request's ``state`` as GitHub spells it (merged PRs are ``closed``, with
    ``merged`` set)."""

    OPEN = "open"
    CLOSED = "closed"


# The number of the PR a dry run would open: it has none yet, and GitHub's start at 1.
PLANNED = 0


@dataclass(frozen=True)
class Pull:
    repo: str
    number: int
    title: str
    body: str
    state: str  # a PullState's value, kept as GitHub sent it
    merged: bool
    user: str
    head_ref: str
    head_sha: str
    head_repo: str
    base_ref: str
    labels: tuple[str, ...]
    html_url: str
    maintainer_can_modify: bool = False
    merged_at: str = ""  # ISO 8601; "" when not merged


@dataclass(frozen=True)
class Issue:
    repo: str
    number: int
    title: str
    body: str
    state: str  # open | closed
    user: str
    labels: tuple[str, ...]
    html_url: str


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    user: str
    association: str
    created_at: str
    updated_at: str
    html_url: str = ""


@dataclass(frozen=True)
class Reaction:
    id: int
    content: str
    user: str


@dataclass(frozen=True)
class WorkflowRun:
    id: int
    event: str
    path: str
    status: str
    conclusion: str | None
    head_sha: str
    head_branch: str
    html_url: str
    created_at: str = ""


@dataclass(frozen=True)
class Artifact:
    id: int
    name: str
    expired: bool
    size: int
    download_url: str
    expires_at: str = ""  # ISO 8601, as GitHub gives it


def pull_record(repo: str, data: PullData) -> Pull:
    head = data.get("head") or {}
    head_repo = (head.get("repo") or {}).get("full_name") or repo
    return Pull(
        repo=repo,
        number=int(data["number"]),
        title=data.get("title") or "",
        body=data.get("body") or "",
        state=data.get("state") or "",
        merged=is_merged(data),
        user=(data.get("user") or {}).get("login", ""),
        head_ref=head.get("ref") or "",
        head_sha=head.get("sha") or "",
        head_repo=head_repo,
        base_ref=(data.get("base") or {}).get("ref") or "",
        labels=label_names(data.get("labels")),
        html_url=data.get("html_url") or "",
        maintainer_can_modify=bool(data.get("maintainer_can_modify")),
        merged_at=data.get("merged_at") or "",
    )


def issue_record(repo: str, data: IssueData) -> Issue:
    return Issue(
        repo=repo,
        number=int(data["number"]),
        title=data.get("title") or "",
        body=data.get("body") or "",
        state=data.get("state") or "",
        user=(data.get("user") or {}).get("login", ""),
        labels=label_names(data.get("labels")),
        html_url=data.get("html_url") or "",
    )


def is_merged(data: PullData) -> bool:
    """Whether the PR was merged: ``GET /pulls/{n}`` says so in ``merged``; ``GET /pulls``
    lists ``pull-request-simple`` objects, which have no ``merged``, only ``merged_at``."""
    merged = data.get("merged")
    if merged is None:
        return data.get("merged_at") is not None
    return bool(merged)


def label_names(labels: Sequence[object] | None) -> tuple[str, ...]:
    """The names of a PR's labels; an entry without a string name is skipped (an event file's
    labels are not GitHub's own answer and may hold anything)."""
    return tuple(
        label["name"]
        for label in labels or []
        if isinstance(label, dict) and isinstance(label.get("name"), str) and label["name"]
    )


def run_record(data: WorkflowRunData) -> WorkflowRun:
    return WorkflowRun(
        id=int(data["id"]),
        event=data.get("event") or "",
        path=data.get("path") or "",
        status=data.get("status") or "",
        conclusion=data.get("conclusion"),
        head_sha=data.get("head_sha") or "",
        head_branch=data.get("head_branch") or "",
        html_url=data.get("html_url") or "",
        created_at=data.get("created_at") or "",
    )


def comment_record(data: CommentData) -> Comment:
    return Comment(
        id=int(data["id"]),
        body=data.get("body") or "",
        user=(data.get("user") or {}).get("login", ""),
        association=data.get("author_association") or "NONE",
        created_at=data.get("created_at") or "",
        updated_at=data.get("updated_at") or "",
        html_url=data.get("html_url") or "",
    )


def reaction_record(data: dict[str, Any]) -> Reaction:
    return Reaction(data["id"], data["content"], (data.get("user") or {}).get("login", ""))


def artifact_record(data: dict[str, Any]) -> Artifact:
    return Artifact(
        id=int(data["id"]),
        name=data["name"],
        expired=bool(data.get("expired")),
        size=int(data.get("size_in_bytes") or 0),
        download_url=data["archive_download_url"],
        expires_at=data.get("expires_at") or "",
    )
