"""The bot against GitHub's real answers, through ``sync bot`` and real git repositories:
a write made and its answer lost, a fork whose maintainers may not push, a PR longer than
the 250 commits GitHub lists, a run with several attempts, an App installation token."""

from __future__ import annotations

import pytest
from botworld import (
    BOOK,
    BRANCH,
    HEAD,
    INFX,
    INFX_BOT,
    PR,
    RUN,
    World,
    add_pinned_run,
    first_use,
    git,
    plain,
    run_artifacts,
    sync_bot,
)
from ghserver import DROP, GitHubServer

from syncer.publish import evidence


@pytest.fixture
def world(tmp_path):
    server = GitHubServer()
    with server:
        yield World(tmp_path, server)


def test_lost_answers_to_both_posts_make_one_comment_and_one_pr(world):
    # GitHub made the cookbook PR and the status comment, and neither answer came back: a
    # 502 after the PR, a connection closed after the comment. The retries look them up.
    comment = world.comment(f"/use {RUN}")
    world.gh.fail_next("POST", r"/repos/sgl-project/sglang/pulls$", 502, apply=True)
    world.gh.fail_next("POST", rf"/issues/{PR}/comments$", DROP, apply=True)
    proc = sync_bot(world, world.comment_event(comment))
    assert proc.returncode == 0, proc.stderr
    assert f"opened {BOOK}#1" in proc.stdout
    [pull] = world.book_pulls()
    assert pull["head_ref"] == BRANCH
    mine = [c for c in world.gh.comments_on(INFX, PR) if c["user"] == INFX_BOT]
    # The lost answer was the first comment's (the evidence record): looked up, not repeated.
    [record] = [c for c in mine if evidence.is_record(c["body"])]
    [status] = [c for c in mine if not evidence.is_record(c["body"])]
    posts = [r.path for r in world.gh.writes() if r.method == "POST"]
    assert posts.count(f"/repos/{BOOK}/pulls") == 1
    assert posts.count(f"/repos/{INFX}/issues/{PR}/comments") == 2
    # The same event again finds all of them and makes none.
    proc = sync_bot(world, world.comment_event(comment))
    assert proc.returncode == 0, proc.stderr
    assert len(world.book_pulls()) == 1
    assert sorted(c["id"] for c in world.gh.comments_on(INFX, PR) if c["user"] == INFX_BOT) == (
        sorted([status["id"], record["id"]])
    )


def test_a_secondary_rate_limit_on_the_pr_post_is_waited_out_and_looked_up(world):
    comment = world.comment(f"/use {RUN}")
    world.gh.fail_next(
        "POST",
        r"/repos/sgl-project/sglang/pulls$",
        403,
        message="You have exceeded a secondary rate limit. Please wait a few minutes.",
        headers={"X-RateLimit-Remaining": "4990"},
    )
    bot, _plan = world.bot()
    bot.cgh.api.secondary_wait = 0.01  # GitHub's minute, shortened
    bot.handle("issue_comment", world.comment_event(comment))
    [pull] = world.book_pulls()
    trail = [(r.method, r.path) for r in world.gh.log if r.path == f"/repos/{BOOK}/pulls"]
    assert trail[-3:] == [("POST", trail[-1][1]), ("GET", trail[-1][1]), ("POST", trail[-1][1])]
    assert pull["number"] == 1


def test_an_organizations_fork_gets_its_pr_without_maintainer_edits_and_says_so(world):
    fork = world.tmp / "fork.git"
    git("clone", "--quiet", "--bare", str(world.bare), str(fork), cwd=world.tmp)
    world.push_repo, world.push_url = "infx-org/sglang", str(fork)
    world.gh.orgs.add("infx-org")
    world.gh.repo("infx-org/sglang").fork = True
    world.gh.git_dirs["infx-org/sglang"] = fork
    comment = world.comment(f"/use {RUN}")
    outcome, _ = world.send("issue_comment", world.comment_event(comment))
    [pull] = world.book_pulls()
    assert (pull["head_repo"], pull["maintainer_can_modify"]) == ("infx-org/sglang", False)
    said = "\n".join(outcome.lines)
    assert (
        f"{BOOK}#1: GitHub refused to let maintainers push to infx-org/sglang "
        "(an organization's fork); opened without it"
    ) in said


def test_a_run_on_the_head_of_a_pr_longer_than_250_commits_is_pinned(world):
    world.pull["commits"] = [f"{i:040x}" for i in range(1, 300)] + [HEAD]
    comment = first_use(world)
    assert world.reactions(comment) == ["+1"]
    assert '"status":"verified-pr"' in world.book_pulls()[0]["body"]


def test_a_rerun_runs_logs_from_every_attempt_are_verified(world):
    # Attempt 1 failed after some jobs uploaded their logs; attempt 2 re-ran the rest. The
    # run (its newest attempt) succeeded and its artifact list holds both attempts' uploads.
    logs = run_artifacts()
    names = sorted(n for n in logs if n.startswith("server_logs_"))
    first = {n: logs[n] for n in names[:3]}
    rest = {n: data for n, data in logs.items() if n not in first}
    world.gh.repo(INFX).runs.pop(RUN)
    add_pinned_run(world.gh, HEAD, "dsv41flash-gb300", conclusion="failure", artifacts=first)
    world.gh.rerun(INFX, RUN, artifacts=rest)
    comment = first_use(world)
    assert world.reactions(comment) == ["+1"]
    body = world.book_pulls()[0]["body"]
    assert '"status":"verified-pr"' in body and f'"run":"{RUN}"' in body


def test_an_app_installation_token_works_with_its_login_given(world):
    # GitHub refuses GET /user to an App installation token: the bot needs its login given.
    app = "ghs_" + "B3" * 18
    world.gh.add_token(app, "infx-sync[bot]")
    comment = world.comment(f"/use {RUN}")
    payload = world.comment_event(comment)
    proc = sync_bot(world, payload, extra_env={"COOKBOOK_TOKEN": app})
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith(
        "give the bot's login, <app-slug>[bot], in SYNC_INFX_LOGIN or SYNC_COOKBOOK_LOGIN"
    )
    env = {"COOKBOOK_TOKEN": app, "SYNC_COOKBOOK_LOGIN": "infx-sync[bot]"}
    proc = sync_bot(world, payload, extra_env=env)
    assert proc.returncode == 0, proc.stderr
    [pull] = world.book_pulls()
    assert pull["user"] == "infx-sync[bot]"


def test_a_repository_dispatch_as_github_sends_it_reports_the_merge(world):
    # The cookbook's workflow dispatches to InferenceX; GitHub's payload puts the event_type
    # in "action" and the sender's data in client_payload.
    first_use(world)
    [cookbook] = world.book_pulls()
    cookbook["state"], cookbook["merged"] = "closed", True
    payload = world.gh.repository_dispatch_event(
        INFX, "cookbook-pr-closed", {"cookbook_pr": cookbook["number"]}, sender="infx-sync[bot]"
    )
    world.send("repository_dispatch", payload)
    assert f"{BOOK}#1 has been merged." in plain(world.status()["body"])
