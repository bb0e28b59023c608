"""EventGitHub: what a dry run without a token reads (the event) and writes (a plan only)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT
from ghserver import GitHubModel

from syncer.errors import SyncError
from syncer.github.api import NotFound
from syncer.github.event import BadEvent
from syncer.github.offline import EventGitHub
from syncer.github.plan import Plan

REPO = "SemiAnalysisAI/InferenceX"


def test_reads_answer_from_the_event_only() -> None:
    github = GitHubModel()
    github.base = "https://api.github.com"
    pull = github.add_pull(REPO, head="topic", number=12, commits=["a" * 40], labels=["full-sweep"])
    pull["state"], pull["merged"] = "closed", True
    event = github.pull_request_event(REPO, 12, "closed")
    gh = EventGitHub(event, plan=Plan(dry_run=True))
    pull = gh.pulls.get(REPO, 12)
    assert (pull.state, pull.merged, pull.head_sha, pull.labels) == (
        "closed",
        True,
        "a" * 40,
        ("full-sweep",),
    )
    assert gh.pulls.commits(REPO, 12) == ["a" * 40]
    assert gh.pulls.find(REPO, "o:b") == [] and gh.comments.reactions(REPO, 1) == []
    with pytest.raises(NotFound, match="not in the event"):
        gh.pulls.get(REPO, 13)
    with pytest.raises(NotFound, match="not checked"):
        gh.actions.run(REPO, 5)
    with pytest.raises(AssertionError, match="asked GitHub"):
        gh.api.json("GET", "/user")


def test_a_comment_event_takes_the_head_from_the_checkout(tmp_path: Path) -> None:
    event = {
        "repository": {"full_name": REPO},
        "issue": {"number": 7, "pull_request": {"url": "x"}, "labels": [{"x": 1}, "bad"]},
        "comment": {"id": 99, "body": "/use 1", "author_association": "MEMBER"},
    }
    gh = EventGitHub(event, plan=Plan(dry_run=True), checkout=ROOT)
    assert len(gh.pulls.get(REPO, 7).head_sha) == 40
    assert gh.pulls.get(REPO, 7).labels == ()
    assert [c.id for c in gh.comments.on(REPO, 7)] == [99] and gh.comments.get(
        REPO, 99
    ).body == "/use 1"
    assert gh.comments.on(REPO, 8) == []
    # Issue 35: a folder that is no repository of its own has no head to give (before, a folder
    # inside this tool's checkout gave the tool's own HEAD, and a plain folder ""): an error
    # saying what would, asked only when the PR is read.
    for folder in (tmp_path, ROOT / "examples" / "inferencex"):
        gh = EventGitHub(event, plan=Plan(dry_run=True), checkout=folder)
        with pytest.raises(SyncError, match=f"PR #7: the event does not name its head.*{folder}"):
            gh.pulls.get(REPO, 7)
    # The workflow's mode: the clone's remote names it (refs/pull/<n>/head), checkout or not.
    asked: list[int] = []
    gh = EventGitHub(
        event,
        plan=Plan(dry_run=True),
        checkout=tmp_path,
        head_of=lambda n: asked.append(n) or "c" * 40,
    )
    assert gh.pulls.get(REPO, 7).head_sha == "c" * 40 and gh.pulls.commits(REPO, 7) == ["c" * 40]
    assert asked == [7]  # once
    gh = EventGitHub(event, plan=Plan(dry_run=True), head_of=lambda n: None)
    with pytest.raises(SyncError, match="remote has no refs/pull/7/head"):
        gh.pulls.get(REPO, 7)


def test_writes_are_planned_never_made() -> None:
    plan = Plan(dry_run=True)
    gh = EventGitHub({}, plan=plan)
    gh.comments.create(REPO, 7, "hello")
    made = gh.pulls.create("o/r", title="t", body="b", head="o:x", base="main")
    assert made.number == 0 and len(plan.writes) == 2
    assert plan.writes[0] == f"POST /repos/{REPO}/issues/7/comments (5 chars)\nhello"
    with pytest.raises(SyncError, match="without a token"):
        EventGitHub({}, plan=Plan(dry_run=False))


@pytest.mark.parametrize(
    ("pull", "message"),
    [
        (
            {"number": 12, "head": "topic"},
            "event: pull_request.head must be an object, got a string",
        ),
        ({"number": 12, "labels": 5}, "event: pull_request.labels must be a list, got a number"),
        (
            {"number": 12, "merged": "yes"},
            "event: pull_request.merged must be true or false, got a string",
        ),
        ({"number": "12"}, 'event: pull_request.number must be a positive integer, got "12"'),
        (
            {"number": 12, "user": {"login": 3}},
            "event: pull_request.user.login must be a string, got a number",
        ),
    ],
)
def test_a_malformed_pull_request_event_is_bad_input(pull: dict, message: str) -> None:
    event = {"repository": {"full_name": REPO}, "pull_request": pull}
    with pytest.raises(BadEvent) as raised:
        EventGitHub(event, plan=Plan(dry_run=True))
    assert raised.value.message == message


def test_labels_without_a_name_are_skipped_not_refused() -> None:
    event = {
        "repository": {"full_name": REPO},
        "pull_request": {"number": 12, "labels": [{"name": "x"}, "bad", {"name": 3}, {}]},
    }
    assert EventGitHub(event, plan=Plan(dry_run=True)).pulls.get(REPO, 12).labels == ("x",)
