"""The scheduled run and fork PRs (issue 20, points 5 and 6), through ``sync bot`` as the
workflow runs it: the local GitHub server, a real bare cookbook and a real InferenceX
repository whose PR heads live under ``refs/pull/<n>/head`` (a fork's too, as on GitHub),
fetched into the bot's own clone as git objects (``--inferencex-clone``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import forkserver
import pytest
from botworld import (
    BOOK,
    BOOK_TOKEN,
    BRANCH,
    INFX,
    INFX_BOT,
    INFX_TOKEN,
    MODEL,
    MODULE,
    RUN,
    SEED_KEY,
    SEED_PR,
    Replay,
    add_pinned_run,
    git,
    merge_bot_branch,
)
from conftest import ROOT
from ghserver import GitHubModel, GitHubServer
from infxrepo import MASTER, InferenceXRepo, add_key

from syncer.commands.group import cli
from syncer.errors import SyncError
from syncer.inferencex import commits
from syncer.inferencex.srtconfigs import SUBMODULE, discover
from syncer.publish import status as st
from syncer.publish.srtslurm import add_srt_slurm
from syncer.syncconfig import load_sync_config

FORK = "contributor/InferenceX"
SCHEDULE = {"schedule": "17 * * * *", "repository": {"full_name": INFX}}


@pytest.fixture
def replay(tmp_path):
    server = GitHubServer()
    with server:
        yield Replay(tmp_path, server)


def new_config_pr(replay: Replay, *, fork: bool = False) -> dict[str, Any]:
    """A PR that adds an AgentX config no file of this repository names, with a sweep run of
    its head; no event of it has reached the bot."""
    infx = replay.infx
    infx.write(MASTER, add_key(infx.read(MASTER), SEED_KEY))
    head = infx.commit("[AgentX] GB300 DSV4.1 Flash SGLang: a new arm")
    infx.checkout(infx.main)  # the contributor's commit lives on the PR only
    pull = replay.open_pr(SEED_PR, "gb300-dsv41", head)
    if fork:
        replay.gh.repo(FORK)
        pull["head_repo"] = FORK
    add_pinned_run(replay.gh, head, "gb300-dsv41")
    return pull


def use_comment(replay: Replay, pull: dict[str, Any]) -> dict[str, Any]:
    """A `/use` whose event never reaches the bot: the run GitHub queued for it in the model's
    concurrency group was cancelled when the next event of that model arrived."""
    return replay.gh.add_comment(
        INFX,
        pull["number"],
        f"/use {RUN}",
        association="COLLABORATOR",
        created_at="2026-10-13T09:00:00Z",
        user="nvpohanh",
    )


def scheduled(replay: Replay, *extra: str) -> str:
    return replay.send("schedule", SCHEDULE, "--model", MODEL, *extra)


def writes_since(replay: Replay, start: int) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in replay.gh.log[start:] if r.method != "GET"]


def reactions(comment: dict[str, Any]) -> list[str]:
    return [r["content"] for r in comment["reactions"]]


def recorded(replay: Replay) -> dict[str, Any]:
    """The pins the bot's open cookbook PR records."""
    [pull] = [p for p in replay.book_pulls() if p["state"] == "open"]
    state = pull["body"].split(st.STATE_PREFIX, 1)[1].split(" -->", 1)[0]
    return json.loads(state)["pins"]


def test_a_use_whose_run_was_cancelled_is_pinned_by_the_schedule(replay):
    pull = new_config_pr(replay)
    out = scheduled(replay)  # the PR was opened: the dispatched reconcile answers it
    assert f"PR #{SEED_PR}: not up to date; syncing" in out
    [opened] = replay.bot_comments(SEED_PR)
    assert f"({SEED_KEY}) will happen in {BOOK}#1" in opened
    assert recorded(replay)[SEED_KEY]["status"] == "in-progress"
    comment = use_comment(replay, pull)
    scheduled(replay)
    assert reactions(comment) == ["+1"]
    pin = recorded(replay)[SEED_KEY]
    assert (pin["run"], pin["comment"], pin["status"]) == (
        str(RUN),
        str(comment["id"]),
        "verified-pr",
    )
    assert pin["sha"] == pull["commits"][-1]
    assert str(RUN) in git("show", f"{BRANCH}:{MODULE}", cwd=replay.bare)
    said = replay.bot_comments(SEED_PR)
    assert len(said) == 2 and f"measured in run {RUN}, pinned by this PR's /use comment" in said[1]


def test_the_schedule_writes_nothing_when_nothing_changed(replay):
    pull = new_config_pr(replay)
    use_comment(replay, pull)
    scheduled(replay)
    tip = git("rev-parse", BRANCH, cwd=replay.bare)
    pulls = json.dumps(replay.book_pulls(), sort_keys=True)
    start = len(replay.gh.log)
    out = scheduled(replay)
    assert writes_since(replay, start) == []  # not one POST, PATCH, PUT or DELETE
    assert git("rev-parse", BRANCH, cwd=replay.bare) == tip
    assert json.dumps(replay.book_pulls(), sort_keys=True) == pulls
    assert f"PR #{SEED_PR}: up to date" in out
    # The settled check reads; it downloads no run again.
    assert not [r for r in replay.gh.log[start:] if r.path.endswith("/zip")]


def test_a_pin_whose_run_expired_goes_back_in_progress(replay):
    pull = new_config_pr(replay)
    use_comment(replay, pull)
    scheduled(replay)
    for art in replay.gh.repo(INFX).artifacts.values():
        art["expired"] = True
    start = len(replay.gh.log)
    out = scheduled(replay)
    assert writes_since(replay, start)
    assert recorded(replay)[SEED_KEY]["status"] == "in-progress"
    assert f"run {RUN} has no unexpired result artifact" in out


def test_a_merged_cookbook_pr_is_reported_by_the_schedule(replay):
    """Nothing in sgl-project/sglang sends the repository_dispatch: the schedule finds the
    merged bot PR, and the InferenceX PR it carried gets the milestone comment."""
    pull = new_config_pr(replay)
    use_comment(replay, pull)
    scheduled(replay)
    before = replay.bot_comments(SEED_PR)
    merge_bot_branch(replay.bare, replay.tmp / "maintainer")
    [book_pr] = replay.book_pulls()
    book_pr.update(state="closed", merged=True)  # no event: nothing in the cookbook sends one
    scheduled(replay)
    after = replay.bot_comments(SEED_PR)
    assert after[: len(before)] == before and len(after) == len(before) + 1  # a new comment
    assert f"{BOOK}#{book_pr['number']} has been merged" in after[-1]
    start = len(replay.gh.log)
    scheduled(replay)
    assert writes_since(replay, start) == []


def test_a_fork_pr_is_handled_through_the_comment_and_the_schedule(replay, tmp_path, monkeypatch):
    """A fork PR's own events never reach the job with the cookbook token. Its `/use` comment
    does (issue_comment runs from the default branch); its head is fetched from
    refs/pull/<n>/head and read as git objects; its merge is found by the schedule, which marks
    its config verified."""
    pull = new_config_pr(replay, fork=True)
    # The fork asks git to pass every file through a filter driver the runner's git knows: if
    # anything checked the fork's files out with that configuration, the driver would run.
    replay.infx.checkout(pull["commits"][-1])
    replay.infx.write(".gitattributes", "* filter=evil\n")
    head = replay.infx.commit("attributes")
    replay.infx.checkout(replay.infx.main)
    replay.push(pull, head)
    replay.gh.repos[INFX].runs[RUN]["head_sha"] = head
    script = tmp_path / "evil-filter.sh"
    script.write_text(f'touch "{tmp_path}/filter-ran"\nexec cat\n')
    (tmp_path / "gitconfig").write_text(f'[filter "evil"]\n\tsmudge = sh {script}\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))

    replay.comment(pull, f"/use {RUN}", "2026-10-13T09:00:00Z")  # the comment event
    [comment] = [c for c in replay.gh.comments_on(INFX, SEED_PR) if c["user"] == "nvpohanh"]
    assert reactions(comment) == ["+1"]
    assert recorded(replay)[SEED_KEY]["status"] == "verified-pr"
    module = git("show", f"{BRANCH}:{MODULE}", cwd=replay.bare)
    assert SEED_KEY in module and str(RUN) in module  # rendered from the fork's head
    assert f"({SEED_KEY}) will happen in {BOOK}#1" in replay.bot_comments(SEED_PR)[0]
    # Merged; its `pull_request: closed` publishes nothing (a fork's run has no secret).
    replay.infx.merge_to_main(head)
    pull.update(state="closed", merged=True)
    scheduled(replay)
    assert recorded(replay)[SEED_KEY]["status"] == "verified"
    assert '"verified"' in git("show", f"{BRANCH}:{MODULE}", cwd=replay.bare)
    assert not (tmp_path / "filter-ran").exists()


def test_one_broken_pr_does_not_keep_the_others_stale(replay):
    """A PR whose master config does not parse is named (exit 2); the reconcile still brings
    every other open PR up to date."""
    pull = new_config_pr(replay)
    comment = use_comment(replay, pull)
    infx = replay.infx
    infx.write(MASTER, infx.read(MASTER) + "\nbroken: [unclosed\n")
    broken = infx.commit("a master config that does not parse")
    infx.checkout(infx.main)
    replay.open_pr(3800, "broken", broken)  # listed before the good one
    done = subprocess.run(
        [*forkserver.command(), *replay.args("schedule", SCHEDULE, "--model", MODEL)],
        env={
            **forkserver.machine_env(),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(replay.tmp),
            "GITHUB_TOKEN": INFX_TOKEN,
            "COOKBOOK_TOKEN": BOOK_TOKEN,
            "SYNC_INFX_LOGIN": INFX_BOT,
            "SYNC_API_PAUSE": "0",
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "scheduled run: #3800: " in done.stderr and "nvidia-master.yaml" in done.stderr
    assert reactions(comment) == ["+1"] and recorded(replay)[SEED_KEY]["run"] == str(RUN)


def test_an_app_token_run_never_asks_for_its_user(replay):
    """An App installation token answers 403 on GET /user; the workflow gives its login."""
    replay.gh.add_token(BOOK_TOKEN, "infx-cookbook-sync[bot]")
    pull = new_config_pr(replay)
    use_comment(replay, pull)
    result = replay.runner.invoke(
        cli,
        replay.args("schedule", SCHEDULE),
        env={
            "GITHUB_TOKEN": INFX_TOKEN,
            "COOKBOOK_TOKEN": BOOK_TOKEN,
            "SYNC_INFX_LOGIN": INFX_BOT,
            "SYNC_COOKBOOK_LOGIN": "infx-cookbook-sync[bot]",
            "SYNC_API_PAUSE": "0",
        },
    )
    assert result.exit_code == 0, result.output
    assert not [r for r in replay.gh.log if r.path == "/user"]
    [book_pr] = replay.book_pulls()
    assert (book_pr["user"], book_pr["head_ref"]) == ("infx-cookbook-sync[bot]", BRANCH)


def _repo(path: Path, text: str) -> str:
    (path / "configs").mkdir(parents=True)
    git("init", "--quiet", "--initial-branch=main", str(path), cwd=path.parent)
    (path / "configs" / "deepep_config.json").write_text(text)
    git("add", "-A", cwd=path)
    git("commit", "--quiet", "-m", "configs", cwd=path)
    return git("rev-parse", "HEAD", cwd=path).strip()


def test_srt_slurm_comes_from_mains_url_at_the_prs_pin(tmp_path):
    """A PR that points .gitmodules elsewhere fetches nothing from there: the URL is main's,
    the commit the PR tree's gitlink; a pin srt-slurm does not have is refused by name."""
    srt, evil = tmp_path / "srt-slurm", tmp_path / "evil"
    pinned = _repo(srt, '{"pinned": true}\n')
    (srt / "configs" / "deepep_config.json").write_text('{"pinned": false}\n')
    git("commit", "--quiet", "-am", "newer", cwd=srt)
    evil_head = _repo(evil, '{"evil": true}\n')

    infx = InferenceXRepo(tmp_path / "infx")
    work = infx.work

    def gitmodules(url: Path, pin: str) -> None:
        (work / ".gitmodules").write_text(
            f'[submodule "srt-slurm"]\n\tpath = {SUBMODULE}\n\turl = {url}\n'
        )
        git("update-index", "--add", "--cacheinfo", f"160000,{pin},{SUBMODULE}", cwd=work)
        git("add", ".gitmodules", cwd=work)

    gitmodules(srt, pinned)
    git("commit", "--quiet", "-m", "pin srt-slurm", cwd=work)
    main = git("rev-parse", "HEAD", cwd=work).strip()
    infx.merge_to_main(main)
    gitmodules(evil, pinned)  # same pin, the URL pointed elsewhere
    git("commit", "--quiet", "-m", "point srt-slurm elsewhere", cwd=work)
    same_pin = git("rev-parse", "HEAD", cwd=work).strip()
    gitmodules(evil, evil_head)  # and a pin only the other repository has
    git("commit", "--quiet", "-m", "pin the other repository", cwd=work)
    other_pin = git("rev-parse", "HEAD", cwd=work).strip()

    infx.publish_pr(7, same_pin)
    infx.publish_pr(8, other_pin)
    clone = infx.clone_for_bot(tmp_path / "bot")
    commits.fetch(clone, str(infx.remote), ["main", "refs/pull/7/head", "refs/pull/8/head"])
    with commits.Trees(clone) as trees:
        tree = trees.at(same_pin)
        add_srt_slurm(clone, main, tree, trees)
        found = discover(tree)  # what the renderer reads
        assert found.commit == pinned
        assert found.read("configs", "deepep_config.json") == '{"pinned": true}\n'
        with pytest.raises(SyncError, match=f"srt-slurm pin {evil_head[:12]}.* is not in {srt}"):
            add_srt_slurm(clone, main, trees.at(other_pin), trees)


def _dispatched(inputs: dict[str, Any]) -> dict[str, Any]:
    """A workflow_dispatch as GitHub sends it (the form left empty, or no inputs at all)."""
    github = GitHubModel()
    github.base = "https://api.github.com"
    return github.workflow_dispatch_event(
        INFX, inputs, sender="maintainer", workflow=".github/workflows/cookbook-sync.yml"
    )


@pytest.mark.parametrize(
    ("event", "payload"),
    [
        ("schedule", SCHEDULE),
        ("workflow_dispatch", _dispatched({"cookbook_pr": ""})),
        ("workflow_dispatch", _dispatched({})),
    ],
)
def test_the_reconcile_reaches_every_model(tmp_path, event, payload):
    """The gate's matrix for a scheduled run: one job per model of sync.yaml."""
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload))
    done = subprocess.run(
        [*forkserver.command(), "bot", "--event", str(path), "--event-name", event,
         "--config", str(ROOT / "sync.yaml"), "--models-only", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )  # fmt: skip
    models = [m.path for m in load_sync_config(ROOT / "sync.yaml").models]
    assert json.loads(done.stdout) == models and models
