"""The git side of the bot's cost (issue 40.7), counted by ``syncer.costs`` through ``sync bot``
as the workflow runs it: a scheduled reconcile on a fresh runner (an empty clone) against the
local GitHub server and a real InferenceX repository with open PRs, only some of which carry
AgentX configs."""

from __future__ import annotations

from typing import Any

import pytest
from botworld import (
    BOOK,
    BRANCH,
    INFX,
    MODEL,
    RUN,
    SEED_KEY,
    SEED_PR,
    Replay,
    add_pinned_run,
    git,
)
from ghserver import GitHubServer
from infxrepo import MASTER, add_key

from syncer import costs
from syncer.inferencex import commits, objectstore

SCHEDULE = {"schedule": "17 * * * *", "repository": {"full_name": INFX}}


@pytest.fixture
def replay(tmp_path):
    server = GitHubServer()
    with server:
        yield Replay(tmp_path, server)


def config_pr(replay: Replay) -> dict[str, Any]:
    """The seed PR: a new AgentX config, with a sweep run of its head."""
    infx = replay.infx
    infx.write(MASTER, add_key(infx.read(MASTER), SEED_KEY))
    head = infx.commit("[AgentX] GB300 DSV4.1 Flash SGLang: a new arm")
    infx.checkout(infx.main)
    pull = replay.open_pr(SEED_PR, "gb300-dsv41", head)
    add_pinned_run(replay.gh, head, "gb300-dsv41")
    return pull


def other_prs(replay: Replay, count: int) -> None:
    """``count`` open PRs that change no file a render reads (docs of InferenceX's own)."""
    infx = replay.infx
    for i in range(count):
        infx.write(f"docs/note-{i}.md", f"note {i}\n")
        head = infx.commit(f"docs: note {i}")
        infx.checkout(infx.main)
        replay.open_pr(5000 + i, f"note-{i}", head)


def schedule_cost(replay: Replay, clone: str) -> costs.Costs:
    """A scheduled run of the model's job on a runner whose InferenceX clone is ``clone``
    (a new name: an empty clone, as on a fresh runner)."""
    replay.clone = replay.tmp / clone
    before = costs.snapshot()
    replay.send("schedule", SCHEDULE, "--model", MODEL)
    return costs.COSTS.since(before)


def settled_cost(replay: Replay, name: str) -> costs.Costs:
    """A scheduled run with nothing to change, on a fresh runner (after one that settled
    everything)."""
    schedule_cost(replay, f"{name}-settling.git")
    return schedule_cost(replay, f"{name}.git")


def test_fetches_do_not_grow_with_the_open_prs(replay):
    config_pr(replay)
    few = settled_cost(replay, "one-pr")
    other_prs(replay, 6)
    many = settled_cost(replay, "seven-prs")
    # One fetch for main and every head, whatever the number of open PRs (the old code
    # fetched main, then each PR's head on its own: 1 + N).
    assert many.fetches == few.fetches == 1
    assert many.bytes_fetched > few.bytes_fetched > 0
    print(few, many)


def serves_filters(replay: Replay) -> None:
    """The InferenceX remote answers as GitHub does: filters, and objects asked for by id."""
    for key in ("uploadpack.allowFilter", "uploadpack.allowAnySHA1InWant"):
        git("config", key, "true", cwd=replay.infx.remote)


def downloads(replay: Replay, start: int) -> list[str]:
    return [r.path for r in replay.gh.log[start:] if r.path.endswith("/zip")]


def test_a_run_is_downloaded_once_per_runner(replay):
    pull = config_pr(replay)
    start = len(replay.gh.log)
    replay.comment(pull, f"/use {RUN}", "2026-10-13T09:00:00Z")
    first = downloads(replay, start)
    assert first  # the run's server logs, to verify the pin against
    assert f"measured in run {RUN}" in replay.bot_comments(SEED_PR)[-1]
    start = len(replay.gh.log)
    replay.comment(pull, "/reuse-sweep-run", "2026-10-13T10:00:00Z")
    replay.comment(pull, f"/use {RUN}", "2026-10-13T11:00:00Z")
    # The same run and attempt: read from the runner's cache, never downloaded again (the
    # old code downloaded every log artifact on every command).
    assert downloads(replay, start) == []
    assert f"measured in run {RUN}" in replay.bot_comments(SEED_PR)[-1]


def test_the_partial_clone_holds_only_the_blobs_it_reads(replay):
    serves_filters(replay)
    pull = config_pr(replay)
    other_prs(replay, 1)
    replay.comment(pull, f"/use {RUN}", "2026-10-13T09:00:00Z")
    schedule_cost(replay, replay.clone.name)  # every open PR's head fetched too
    # The whole sync ran on it: the run pinned, its configs rendered from the PR's tree.
    assert f"measured in run {RUN}" in replay.bot_comments(SEED_PR)[-1]
    clone = replay.clone
    assert commits.is_partial(clone)
    remote = replay.infx.remote

    def rev(name: str) -> str:
        return git("rev-parse", name, cwd=remote).strip()

    note = rev("refs/pull/5000/head:docs/note-0.md")
    master = rev(f"main:{MASTER}")
    head_master = rev(f"{pull['commits'][-1]}:{MASTER}")
    assert commits.has_commit(clone, rev("refs/pull/5000/head"))
    held = objectstore.present(clone, [note, master, head_master])
    assert held == {master, head_master}  # a doc is no data file: its blob is never fetched


def agentx_prs(replay: Replay, count: int, first: int = 0) -> list[dict[str, Any]]:
    """``count`` open PRs, each adding its own AgentX config of the model."""
    infx, pulls = replay.infx, []
    for i in range(first, first + count):
        infx.write(MASTER, add_key(infx.read(MASTER), f"{SEED_KEY}{i}"))
        head = infx.commit(f"[AgentX] GB300 DSV4.1 Flash SGLang: arm {i}")
        infx.checkout(infx.main)
        pulls.append(replay.open_pr(7000 + i, f"arm-{i}", head))
    return pulls


def branch_commits(replay: Replay) -> int:
    return int(git("rev-list", "--count", f"main..{BRANCH}", cwd=replay.bare))


def test_a_catch_up_generates_the_module_once(replay):
    pulls = agentx_prs(replay, 3)
    out = replay.send("schedule", SCHEDULE, "--model", MODEL)
    # One commit and one cookbook PR for the three PRs (the old code committed, pushed and
    # edited the PR once per PR, each time generating the module with every config).
    assert branch_commits(replay) == 1
    assert out.count("committed") == 1
    for pull in pulls:
        [said] = replay.bot_comments(pull["number"])
        assert f"will happen in {BOOK}#1" in said
    # Every PR's config on the page, each at its PR's head, in progress.
    module = replay.module()
    keys = {cell["id"].split("#")[0] for cell in module["cells"]}
    assert {f"{SEED_KEY}{i}" for i in range(3)} <= keys
    prs = module["source"]["prs"]
    assert {n: (p["sha"], p["status"]) for n, p in prs.items()} == {
        str(pull["number"]): (pull["commits"][-1], "in-progress") for pull in pulls
    }
    # Nothing is left to do: the next scheduled run writes nothing.
    start = len(replay.gh.log)
    replay.send("schedule", SCHEDULE, "--model", MODEL)
    assert [r for r in replay.gh.log[start:] if r.method != "GET"] == []


def test_an_event_fetches_the_other_prs_commits_at_once(replay):
    # A /use on one PR renders the page, whose other configs are shown at other PRs' heads: a
    # fresh runner fetches them in one go, however many they are (the old code fetched each
    # PR's head, then its commit, on its own).
    pull = config_pr(replay)
    agentx_prs(replay, 2)
    replay.send("schedule", SCHEDULE, "--model", MODEL)

    def use(clone: str, at: str) -> costs.Costs:
        replay.clone = replay.tmp / clone
        before = costs.snapshot()
        replay.comment(pull, f"/use {RUN}", at)
        assert f"measured in run {RUN}" in replay.bot_comments(SEED_PR)[-1]
        return costs.COSTS.since(before)

    few = use("few.git", "2026-10-13T09:00:00Z")
    agentx_prs(replay, 4, first=2)
    replay.send("schedule", SCHEDULE, "--model", MODEL)
    many = use("many.git", "2026-10-13T10:00:00Z")
    assert many.fetches == few.fetches


def test_the_workflow_keeps_the_clone_per_tool_commit():
    # A job restores the clone an earlier run of the same tool commit fetched (this week's),
    # and fetches what InferenceX changed since rather than its whole history.
    import yaml
    from conftest import ROOT

    doc = yaml.safe_load((ROOT / ".github/workflows/cookbook-sync.yml").read_text())
    for name in ("gate", "publish"):
        steps = doc["jobs"][name]["steps"]
        [cache] = [s for s in steps if "actions/cache@" in s.get("uses", "")]
        [bot] = [s for s in steps if "sync bot" in s.get("run", "")]
        assert steps.index(cache) < steps.index(bot), name
        assert cache["with"]["path"] == "${{ runner.temp }}/inferencex.git"
        assert '--inferencex-clone "$RUNNER_TEMP/inferencex.git"' in bot["run"]
        key, restore = cache["with"]["key"], cache["with"]["restore-keys"]
        assert key.startswith("cookbook-sync-inferencex-${{ env.TOOL_REF }}-")
        assert restore == "cookbook-sync-inferencex-${{ env.TOOL_REF }}-"
