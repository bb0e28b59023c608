"""GitHub's objects as the bot reads them: plain records parsed once from GitHub's JSON.

The bot's logic never touches lazy PyGithub objects (which hide extra requests): every read
of ``github.py``'s client answers with these frozen records, and the offline client of a dry
run builds the same records from an event file. The ``*Data`` typed dicts name the JSON shape
each parser expects; each field is read through ``shapes.Fields``, so an answer of another
shape is a ``ShapeError`` naming the field, never a crash or a value taken silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypedDict

from syncer.github.shapes import Fields

# An answer's JSON before its shape is checked.
Json = Any


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
    updated_at: str | None
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
    updated_at: str = ""  # ISO 8601: moves with every push, comment, label or edit of the PR


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


def pull_record(repo: str, data: PullData | Json, at: str = "") -> Pull:
    """A PR from GitHub's JSON (``at``: where it sits in the answer, for a message), every
    field checked for its shape (``shapes``)."""
    f = Fields(data, at)
    head = f.object("head")
    return Pull(
        repo=repo,
        number=f.id("number"),
        title=f.text("title"),
        body=f.text("body"),
        state=f.text("state"),
        merged=is_merged(f),
        user=f.object("user").text("login"),
        head_ref=head.text("ref"),
        head_sha=head.text("sha"),
        head_repo=head.object("repo").text("full_name") or repo,
        base_ref=f.object("base").text("ref"),
        labels=label_names(f),
        html_url=f.text("html_url"),
        maintainer_can_modify=bool(f.flag("maintainer_can_modify")),
        merged_at=f.text("merged_at"),
        updated_at=f.text("updated_at"),
    )


def issue_record(repo: str, data: IssueData | Json, at: str = "") -> Issue:
    f = Fields(data, at)
    return Issue(
        repo=repo,
        number=f.id("number"),
        title=f.text("title"),
        body=f.text("body"),
        state=f.text("state"),
        user=f.object("user").text("login"),
        labels=label_names(f),
        html_url=f.text("html_url"),
    )


def is_pull(data: Json, at: str = "") -> bool:
    """Whether an issue of ``GET /issues`` is a pull request (GitHub lists both)."""
    return Fields(data, at).has("pull_request")


def is_merged(f: Fields) -> bool:
    """Whether the PR was merged: ``GET /pulls/{n}`` says so in ``merged``; ``GET /pulls``
    lists ``pull-request-simple`` objects, which have no ``merged``, only ``merged_at``."""
    merged = f.flag("merged")
    if merged is None:
        return f.maybe_text("merged_at") is not None
    return merged


def label_names(f: Fields) -> tuple[str, ...]:
    """The names of a PR's labels (an array, or null); an entry without a string name is
    skipped (an event file's labels are not GitHub's own answer and may hold anything)."""
    return tuple(
        label["name"]
        for label in f.items("labels")
        if isinstance(label, dict) and isinstance(label.get("name"), str) and label["name"]
    )


def run_record(data: WorkflowRunData | Json, at: str = "") -> WorkflowRun:
    f = Fields(data, at)
    return WorkflowRun(
        id=f.id("id"),
        event=f.text("event"),
        path=f.text("path"),
        status=f.text("status"),
        conclusion=f.maybe_text("conclusion"),
        head_sha=f.text("head_sha"),
        head_branch=f.text("head_branch"),
        html_url=f.text("html_url"),
        created_at=f.text("created_at"),
    )


def comment_record(data: CommentData | Json, at: str = "") -> Comment:
    f = Fields(data, at)
    return Comment(
        id=f.id("id"),
        body=f.text("body"),
        user=f.object("user").text("login"),
        association=f.text("author_association") or "NONE",
        created_at=f.text("created_at"),
        updated_at=f.text("updated_at"),
        html_url=f.text("html_url"),
    )


def reaction_record(data: Json, at: str = "") -> Reaction:
    f = Fields(data, at)
    return Reaction(f.id("id"), f.text("content", required=True), f.object("user").text("login"))


def artifact_record(data: Json, at: str = "") -> Artifact:
    f = Fields(data, at)
    return Artifact(
        id=f.id("id"),
        name=f.text("name", required=True),
        expired=bool(f.flag("expired")),
        size=f.size("size_in_bytes"),
        download_url=f.text("archive_download_url", required=True),
        expires_at=f.text("expires_at"),
    )


def commit_sha(data: Json, at: str = "") -> str:
    """A listed commit's ``sha``."""
    return Fields(data, at).text("sha", required=True)


def login_of(data: Json) -> str:
    """``GET /user``'s ``login``."""
    return Fields(data).text("login", required=True)
