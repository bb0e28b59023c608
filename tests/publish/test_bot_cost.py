"""What an event costs on GitHub (issue 40.7), through the workflow's own jobs (dispatch, gate,
one publish job per model, each on a fresh runner) against the schema-validated fake GitHub.

- A push to a PR brings that PR alone up to date (the dispatch job passes its number on).
- The open PRs are listed and their configs discovered once per event, by the gate; a second
  model's job does not do it again.
- The list's answer is reused: no PR it returned is read again one by one.
- The schedule skips PRs whose head and updated_at did not move since a run found them up to
  date (the ledger each model's job keeps in the workflow's cache), and a closed bot PR whose
  milestone was told is not told (read) again.
- At 200 open PRs, 50 with AgentX configs, and 5 models: a scheduled run with nothing changed
  writes nothing and makes at most 50 GITHUB_TOKEN requests in all; a push to one PR costs
  what it costs with that PR alone open.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest
from botworkflow import SCHEDULE
from conftest import ROOT
from costworld import FIRST_PR, CostWorld, totals
from ghserver import GitHubServer

from syncer.publish.ledger import HOURS


def _due_now() -> set[int]:
    """PR numbers (of this world's range) whose daily re-check falls in this hour."""
    hour = datetime.now(UTC).hour
    return {n for n in range(FIRST_PR, FIRST_PR + 400) if n % HOURS == hour}


def _infx_requests(world: CostWorld, start: int) -> list[tuple[str, str]]:
    from botworld import INFX_TOKEN

    return [(r.method, r.path) for r in world.replay.gh.log[start:] if INFX_TOKEN in (r.auth or "")]


@pytest.fixture
def server():
    srv = GitHubServer()
    with srv:
        yield srv


def _world(tmp_path: Any, server: Any, **kw: int) -> CostWorld:
    world = CostWorld(tmp_path, server, **kw)
    world.settle()
    return world


def test_a_push_reconciles_that_pr_only(tmp_path, server):
    world = _world(tmp_path, server, open_prs=3, agentx=3, models=1)
    start = len(world.replay.gh.log)
    jobs = world.push(0)
    assert [j.job for j in jobs] == ["gate", "publish"]
    pr = world.pulls[0]["number"]
    named = {
        int(m.group(1))
        for _, path in _infx_requests(world, start)
        if (m := re.search(r"/(?:pulls|issues)/(\d+)", path))
    }
    assert named == {pr}  # the other open PRs are not read
    # The gate's models: the pushed PR's alone.
    assert jobs[1].event == "push" and jobs[0].infx_requests == 0


def test_discovery_once_per_event_not_once_per_model_job(tmp_path, server):
    """Two worlds, the same AgentX PRs and 2 against 10 other open PRs: each model's job costs
    the same git processes in both (the gate discovered every PR once), and no job but the
    gate lists the open PRs. The ledger is left out (cleared) so the jobs look at their PRs."""
    few = _world(tmp_path / "few", server, open_prs=4, agentx=2, models=2)
    few.flow.cache.clear()
    few_jobs = few.schedule()
    server2 = GitHubServer()
    with server2:
        many = _world(tmp_path / "many", server2, open_prs=12, agentx=2, models=2)
        many.flow.cache.clear()
        many_jobs = many.schedule()
    for jobs in (few_jobs, many_jobs):
        gate, *publish = jobs
        assert gate.infx_kinds["GET /pulls"] == 1
        assert [j.infx_kinds["GET /pulls"] for j in publish] == [0, 0]
    assert [j.git for j in few_jobs[1:]] == [j.git for j in many_jobs[1:]]


def test_the_open_pr_list_is_not_read_again_pr_by_pr(tmp_path, server):
    """The reconcile without the gate's handoff (a run by hand, ``sync bot --schedule``):
    the PRs the list returned are not read one by one."""
    world = _world(tmp_path, server, open_prs=4, agentx=2, models=1)
    start = len(world.replay.gh.log)
    world.replay.send("schedule", SCHEDULE, "--config", str(world.flow.config))
    open_numbers = {p["number"] for p in world.pulls}
    single = {
        int(path.rsplit("/", 1)[1])
        for method, path in _infx_requests(world, start)
        if method == "GET" and re.fullmatch(r"/repos/[^/]+/[^/]+/pulls/\d+", path)
    }
    assert single & open_numbers == set()


def test_the_schedule_skips_prs_that_did_not_move_and_reads_one_that_did(tmp_path, server):
    world = _world(tmp_path, server, open_prs=8, agentx=4, models=2)
    start = len(world.replay.gh.log)
    world.schedule()
    due = _due_now()
    read = {
        int(m.group(1))
        for _, path in _infx_requests(world, start)
        if (m := re.search(r"/issues/(\d+)/comments", path))
    }
    assert read <= due  # only a PR whose daily re-check is this hour
    # A human comment moves the PR's updated_at: the next run reads that PR again.
    moved = next(p for p in world.pulls[:4] if p["number"] not in due)
    world.replay.gh.add_comment(
        "SemiAnalysisAI/InferenceX", moved["number"], "LGTM", created_at="2026-10-14T10:00:00Z"
    )
    start = len(world.replay.gh.log)
    world.schedule()
    read = {
        int(m.group(1))
        for _, path in _infx_requests(world, start)
        if (m := re.search(r"/issues/(\d+)/comments", path))
    }
    assert moved["number"] in read and read <= due | {moved["number"]}


def test_a_closed_bot_pr_is_told_once_then_not_read_again(tmp_path, server):
    world = _world(tmp_path, server, open_prs=4, agentx=2, models=1)
    world.merge_cookbook(0)
    start = len(world.replay.gh.log)
    world.schedule()  # tells each InferenceX PR it carried that it merged
    assert any(r.method == "POST" for r in world.replay.gh.log[start:])
    # The next run reads those PRs once more (the bot's comment moved their updated_at) and
    # finds them up to date; after that, nothing of them is read.
    world.schedule()
    start = len(world.replay.gh.log)
    world.schedule()
    writes = [r for r in world.replay.gh.log[start:] if r.method != "GET"]
    assert writes == []
    due = _due_now()
    named = {
        int(m.group(1))
        for _, path in _infx_requests(world, start)
        if (m := re.search(r"/(?:pulls|issues)/(\d+)", path))
    }
    assert named <= due  # the merged PR's InferenceX PRs are not read again


@pytest.fixture(scope="module")
def scale(tmp_path_factory):
    """200 open InferenceX PRs, 50 with an AgentX config each, 5 cookbook models; every PR
    published and found up to date once."""
    srv = GitHubServer()
    with srv:
        world = _world(tmp_path_factory.mktemp("scale"), srv, open_prs=200, agentx=50, models=5)
        yield world


# The two at-scale tests are `python -m bench cost`'s 200-PR world run end to end (its "schedule
# (nothing changed)" and "push to one PR" events, asserted here): a benchmark's run, opt-in with
# the others (`pytest -m bench`, which CI runs). The same rules at a few PRs are tested above.
@pytest.mark.bench  # runs the benchmark end to end: `pytest -m bench`
def test_at_scale_a_quiet_schedule_writes_nothing_and_stays_under_50_requests(scale):
    jobs = scale.schedule()
    assert len(jobs) == 6  # the gate and one job per model
    total = totals(jobs)
    assert total.writes == 0
    assert total.infx_requests <= 50, total.requests


@pytest.mark.bench  # runs the benchmark end to end: `pytest -m bench`
def test_a_push_costs_the_same_with_1_and_with_200_open_prs(scale, tmp_path, server):
    alone = _world(tmp_path, server, open_prs=1, agentx=1, models=5)
    one = totals(alone.push(0))
    many = totals(scale.push(0))
    assert (many.infx_requests, many.writes) == (one.infx_requests, one.writes)
    assert Counter(many.requests) == Counter(one.requests)


def test_a_dispatched_pr_number_that_is_not_one_is_a_bad_event(replay):
    """The dispatch's input is a number as the form or the API gave it: anything else is a
    malformed event (the command's one `error:` line naming the event file, exit 2), before
    anything is read from GitHub."""
    from ghserver import GitHubModel

    from syncer.commands.group import cli
    from syncer.github.event import BadEvent

    github = GitHubModel()
    github.base = "https://api.github.com"
    payload = github.workflow_dispatch_event(
        "SemiAnalysisAI/InferenceX",
        {"cookbook_pr": "", "inferencex_pr": "12abc"},
        sender="author",
        workflow=".github/workflows/cookbook-sync.yml",
    )
    start = len(replay.gh.log)
    env = {"GITHUB_TOKEN": "x", "COOKBOOK_TOKEN": "y", "SYNC_API_PAUSE": "0"}
    done = replay.runner.invoke(cli, replay.args("workflow_dispatch", payload), env=env)
    assert isinstance(done.exception, BadEvent), done.output
    assert "inputs.inferencex_pr must be a positive integer" in str(done.exception)
    assert replay.gh.log[start:] == []


def _pull(number: int, head: str = "a" * 40, updated: str = "2026-10-13T09:00:00Z") -> Any:
    from syncer.github.records import Pull

    return Pull(
        "o/r", number, "t", "", "open", False, "u", "b", head, "o/r", "main", (), "",
        updated_at=updated,
    )  # fmt: skip


def test_the_ledger_skips_only_what_did_not_move_and_rechecks_daily(tmp_path):
    from syncer.publish.ledger import Ledger

    noon = datetime(2026, 10, 13, 12, tzinfo=UTC)
    ledger = Ledger.load(tmp_path, "org/model", noon)
    pull = _pull(5001)  # 5001 % 24 == 9: re-checked at 09:00 UTC
    assert not ledger.settled(pull)
    ledger.mark(pull)
    ledger.save()
    again = Ledger.load(tmp_path, "org/model", noon)
    assert again.settled(pull)
    assert not again.settled(_pull(5001, head="b" * 40))  # pushed
    assert not again.settled(_pull(5001, updated="2026-10-13T10:00:00Z"))  # commented on
    assert not Ledger.load(tmp_path, "org/model", noon.replace(hour=9)).settled(pull)
    assert not Ledger.load(tmp_path, "org/other", noon).settled(pull)  # another model's
    assert not Ledger.load(None, "org/model", noon).settled(pull)  # none kept


def test_a_broken_ledger_or_handoff_is_an_error_naming_the_file(tmp_path):
    from syncer.errors import SyncError
    from syncer.publish import handoff
    from syncer.publish.ledger import Ledger
    from syncer.syncconfig import load_sync_config

    (tmp_path / "org__model.json").write_text('{"format": 1, "seen": [1]}')
    with pytest.raises(SyncError, match="not a ledger of this tool") as err:
        Ledger.load(tmp_path, "org/model")
    assert err.value.path == str(tmp_path / "org__model.json")
    bad = tmp_path / "handoff.json"
    bad.write_text('{"format": 1, "open": [{"number": "5"}]}')
    config = load_sync_config(ROOT / "sync.yaml")
    with pytest.raises(SyncError, match="not a handoff of this tool's gate") as err:
        handoff.read(bad, config, "o/r")
    assert err.value.path == str(bad)
