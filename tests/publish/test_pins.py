from __future__ import annotations

import pytest
from ghserver import serving

from syncer.github.client import GitHubClient
from syncer.github.records import Comment
from syncer.publish import pins

TOKEN = "ghs_" + "P" * 36
INFX = "SemiAnalysisAI/InferenceX"
SHA_A, SHA_B = "a" * 40, "b" * 40


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/use 38221097558", ("use", 38221097558, 1)),
        ("  /use\t42  ", ("use", 42, 1)),
        ("thanks!\n/use 1\nmore text", ("use", 1, 2)),
        ("/use 1\r\n/use 2\r\n", ("use", 2, 2)),  # the last matching line counts
        ("/reuse-sweep-run", ("reuse-sweep-run", None, 1)),
        ("/reuse-sweep-run 38221097558", ("reuse-sweep-run", 38221097558, 1)),
        ("/use 5\n/reuse-sweep-run", ("reuse-sweep-run", None, 2)),
    ],
)
def test_parse_command(body, expected):
    command = pins.parse_command(body)
    assert command is not None
    assert (command.name, command.run_id, command.line) == expected


@pytest.mark.parametrize(
    "body",
    [
        "/use",  # /use needs a run id
        "please /use 123",  # inline mention
        "`/use 123`",
        "/use 123 456",
        "/use abc",
        "/use\n123",  # id on the next line
        "/use ١٢٣",  # non-ASCII digits
        "/use 12\u20283",  # a Unicode line separator is not a line break here
        "/users 12",
        "/reuse-sweep-run latest",
    ],
)
def test_not_a_command(body):
    assert pins.parse_command(body) is None


def test_malformed_lines():
    assert pins.malformed_lines("/use\nok\n/use abc\n/use 5\n/users 1") == [1, 3]
    assert pins.malformed_lines("please /use 1") == []


def _c(id_: int, body: str, association: str = "MEMBER", at: str = "2026-10-12T10:00:00Z"):
    return Comment(id_, body, "u", association, at, at)


def test_select_newest_authorised_wins():
    comments = [
        _c(3, "/use 30", at="2026-10-12T12:00:00Z"),
        _c(1, "/use 10", at="2026-10-12T10:00:00Z"),
        _c(4, "/use 40", "CONTRIBUTOR", at="2026-10-12T13:00:00Z"),  # not authorised
        _c(5, "nice", "OWNER", at="2026-10-12T14:00:00Z"),  # no command
        _c(2, "/reuse-sweep-run 20", "COLLABORATOR", at="2026-10-12T11:00:00Z"),
    ]
    chosen = pins.select(comments)
    assert chosen is not None and (chosen.comment.id, chosen.command.run_id) == (3, 30)
    assert pins.select([_c(9, "/use 9", "NONE"), _c(8, "/use 8", "FIRST_TIME_CONTRIBUTOR")]) is None
    assert pins.authorised("owner") and not pins.authorised(None)


@pytest.fixture
def gh():
    with serving(TOKEN, "bot", INFX) as srv:
        client = GitHubClient(TOKEN, base_url=srv.base_url, pause=0, backoff=0.01, login="bot")
        yield srv.model, client


def _pr(model, **kw):
    number = model.add_pull(INFX, head="feature", commits=[SHA_A, SHA_B], **kw)["number"]
    return number


def test_check_run_accepts_a_good_run(gh):
    model, client = gh
    number = _pr(model)
    model.add_run(
        INFX,
        7,
        head_sha=SHA_A,
        conclusion="failure",
        artifacts={"bmk_agentic_x": b"1", "server_logs_x": b"2"},
    )
    pull = client.pulls.get(INFX, number)
    verdict = pins.check_run(client, INFX, pull, 7, [SHA_A, SHA_B])
    assert verdict.ok, verdict.reason
    assert verdict.reason == "run 7 (failure)"  # a pinned run may have failed (explicit decision)
    assert not pins.check_run(client, INFX, pull, 7, [SHA_A, SHA_B], pinned=False).ok


@pytest.mark.parametrize(
    ("run_kw", "labels", "reason"),
    [
        ({"head_sha": "c" * 40}, [], "not among this PR's commits"),
        ({"event": "push"}, [], "not a pull_request run"),
        ({"path": ".github/workflows/other.yml"}, [], "not a pull_request run"),
        ({"status": "in_progress", "conclusion": None}, [], "has not completed"),
        ({"conclusion": "skipped"}, [], "concluded skipped"),
        ({"artifacts": {"server_logs_x": b"1"}}, [], "no unexpired result artifact"),
        (
            {"artifacts": {"results_bmk": b"1"}, "expired": ("results_bmk",)},
            [],
            "no unexpired result artifact",
        ),
        ({"artifacts": {"results_bmk": b"1", "qualification_x": b"1"}}, [], "qualification run"),
        ({}, ["agentx-fast"], "label agentx-fast"),
        ({}, ["evals-only"], "label evals-only"),
    ],
)
def test_check_run_refusals(gh, run_kw, labels, reason):
    model, client = gh
    number = _pr(model, labels=labels)
    kw = {"head_sha": SHA_B, "artifacts": {"results_bmk": b"1"}, **run_kw}
    model.add_run(INFX, 9, **kw)
    verdict = pins.check_run(client, INFX, client.pulls.get(INFX, number), 9, [SHA_A, SHA_B])
    assert not verdict.ok
    assert reason in verdict.reason


def test_unknown_run_is_refused_not_an_error(gh):
    model, client = gh
    number = _pr(model)
    verdict = pins.check_run(client, INFX, client.pulls.get(INFX, number), 404404, [SHA_A, SHA_B])
    assert (verdict.ok, verdict.reason) == (
        False,
        f"run 404404 does not exist in {INFX} (or the bot cannot see it)",
    )


def test_bare_reuse_picks_newest_successful_run_of_the_pr(gh):
    model, client = gh
    number = _pr(model)
    # Two runs qualify (10 older, 11 newer): only "newest" tells them apart.
    model.add_run(
        INFX, 10, head_sha=SHA_A, created_at="2026-10-11T10:00:00Z", artifacts={"results_bmk": b"1"}
    )
    model.add_run(INFX, 11, head_sha=SHA_A, artifacts={"results_bmk": b"1"})
    model.add_run(INFX, 12, head_sha="d" * 40, artifacts={"results_bmk": b"1"})  # not in PR
    model.add_run(INFX, 13, head_sha=SHA_B, conclusion="failure", artifacts={"results_bmk": b"1"})
    pull = client.pulls.get(INFX, number)
    before = len(model.log)
    verdict = pins.latest_successful_run(client, INFX, pull, [SHA_A, SHA_B])
    assert verdict.ok and verdict.run is not None and verdict.run.id == 11
    # The listed runs are judged as listed: no run is fetched again.
    assert not [r for r in model.log[before:] if r.path.endswith(("/runs/11", "/runs/12"))]


def test_bare_reuse_on_a_disqualified_pr_names_the_label(gh):
    model, client = gh
    number = _pr(model, labels=["evals-only"])
    model.add_run(INFX, 11, head_sha=SHA_A, artifacts={"results_bmk": b"1"})
    verdict = pins.latest_successful_run(client, INFX, client.pulls.get(INFX, number), [SHA_A])
    assert not verdict.ok and "label evals-only" in verdict.reason


def test_reactions_are_made_exact_and_idempotent(gh):
    model, client = gh
    number = _pr(model)
    raw = model.add_comment(INFX, number, "/use 1")
    comment = client.comments.get(INFX, raw["id"])
    assert pins.sync_reactions(client, INFX, comment, accepted=False)
    assert [r["content"] for r in raw["reactions"]] == ["-1"]
    assert not pins.sync_reactions(client, INFX, comment, accepted=False)  # nothing to change
    assert pins.sync_reactions(client, INFX, comment, accepted=True)  # edited comment, re-judged
    assert [r["content"] for r in raw["reactions"]] == ["+1"]
    assert pins.sync_reactions(client, INFX, comment, accepted=None)  # edited: no command left
    assert raw["reactions"] == []
    assert not pins.sync_reactions(client, INFX, comment, accepted=None)


def test_pinning_comment_is_the_first_of_the_same_run():
    comments = [
        _c(1, "/use 10", at="2026-10-12T10:00:00Z"),
        _c(2, "/use 20", at="2026-10-12T11:00:00Z"),
        _c(3, "/reuse-sweep-run 20", at="2026-10-12T12:00:00Z"),
        _c(4, "/use 20", "NONE", at="2026-10-12T12:30:00Z"),
        _c(5, "/use 20", at="2026-10-12T13:00:00Z"),
    ]
    assert pins.select(comments).comment.id == 5
    assert pins.pinning_comment(comments).comment.id == 2
    assert pins.pinning_comment(comments[:1]).comment.id == 1
    assert pins.pinning_comment([_c(6, "/reuse-sweep-run")]).comment.id == 6
    assert pins.pinning_comment([]) is None
