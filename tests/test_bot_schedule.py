"""The scheduled run and fork PRs (issue 20, points 5 and 6), through ``sync bot`` as the
workflow runs it: a separate process, the local GitHub server, a real bare cookbook and a real
InferenceX repository whose PR heads live under ``refs/pull/<n>/head`` as on GitHub, cloned
the way the workflow checks out the default branch (``--inferencex`` with ``--pull-heads``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ghserver import GitHubServer
from test_bot import (
    BOOK,
    BOOK_TOKEN,
    BRANCH,
    INFX,
    INFX_BOT,
    INFX_TOKEN,
    KEY,
    MODULE,
    PR,
    ROOT,
    RUN,
    World,
    plain,
)

from syncer.errors import SyncError
from syncer.inferencex.srtconfigs import SUBMODULE, discover
from syncer.publish import heads
from syncer.publish import status as st
from syncer.syncconfig import load_sync_config

OTHER = 3871  # the other PR of sync.yaml (the model's in-progress disagg config)
MODEL = "deepseek-ai/deepseek-v4_1"
RECIPE_DIR = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash"
FORK = "contributor/InferenceX"


def _git(cwd: Path, *args: str) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Contributor",
        "GIT_AUTHOR_EMAIL": "contributor@example.com",
        "GIT_COMMITTER_NAME": "Contributor",
        "GIT_COMMITTER_EMAIL": "contributor@example.com",
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _commit(repo: Path, message: str) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


class Repos:
    """InferenceX as GitHub holds it (``origin``: main and ``refs/pull/<n>/head``) and the
    runner's checkout of its default branch (``checkout``)."""

    def __init__(self, tmp: Path, *, recipe_on_main: bool = True, attributes: str = "") -> None:
        self.origin = tmp / "github" / "InferenceX"
        shutil.copytree(ROOT / "examples/inferencex", self.origin)
        _git(self.origin, "init", "--quiet", "--initial-branch=main")
        saved = tmp / "recipe"
        if not recipe_on_main:
            # The config's recipe exists only in the PR (as in the seed: the PR adds it).
            shutil.move(self.origin / RECIPE_DIR, saved)
        self.main = _commit(self.origin, "InferenceX main")
        _git(self.origin, "checkout", "--quiet", "-b", "pr")
        if not recipe_on_main:
            shutil.move(saved, self.origin / RECIPE_DIR)
        (self.origin / "perf-changelog.yaml").write_text("- config: " + KEY + "\n")
        if attributes:
            (self.origin / ".gitattributes").write_text(attributes)
        self.head = _commit(self.origin, "add the GB300 DSpark config")
        _git(self.origin, "update-ref", f"refs/pull/{PR}/head", self.head)
        # The disagg PR, stacked on this one (its model shows both configs).
        (self.origin / "disagg-notes.md").write_text("disagg\n")
        self.other = _commit(self.origin, "disagg config")
        _git(self.origin, "update-ref", f"refs/pull/{OTHER}/head", self.other)
        _git(self.origin, "checkout", "--quiet", "main")
        _git(self.origin, "branch", "--quiet", "-D", "pr")  # only refs/pull/* name the heads
        self.checkout = tmp / "runner" / "inferencex"
        self.checkout.parent.mkdir(parents=True)
        _git(self.checkout.parent, "clone", "--quiet", str(self.origin), "inferencex")


def wire(world: World, repos: Repos, *, fork: bool = False) -> None:
    """The fake's PRs and run name the commits of the real repository."""
    world.pull["commits"] = [repos.head]
    world.other["commits"] = [repos.other]
    world.gh.repos[INFX].runs[RUN]["head_sha"] = repos.head
    if fork:
        world.gh.repo(FORK)
        world.pull["head_repo"] = FORK


@pytest.fixture
def world(tmp_path):
    server = GitHubServer()
    with server:
        yield World(tmp_path, server)


def sync_bot(
    world: World, repos: Repos, event: str, payload: dict[str, Any], *extra: str, **env: str
) -> subprocess.CompletedProcess[str]:
    path = world.tmp / "event.json"
    path.write_text(json.dumps(payload))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "syncer",
            "bot",
            "--event",
            str(path),
            "--config",
            str(ROOT / "sync.yaml"),
            "--inferencex",
            str(repos.checkout),
            "--pull-heads",
            "--cookbook",
            str(world.bare),
            "--cache-dir",
            str(world.tmp / "cache"),
            "--api-url",
            world.server.base_url,
            "--date",
            "2026-10-13",
            *extra,
        ],
        cwd=world.tmp,
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(world.tmp),
            "GITHUB_EVENT_NAME": event,
            "GITHUB_TOKEN": INFX_TOKEN,
            "COOKBOOK_TOKEN": BOOK_TOKEN,
            "SYNC_INFX_LOGIN": INFX_BOT,
            "SYNC_API_PAUSE": "0",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


SCHEDULE = {"schedule": "17 * * * *", "repository": {"full_name": INFX}}


def scheduled(world: World, repos: Repos) -> subprocess.CompletedProcess[str]:
    return sync_bot(world, repos, "schedule", SCHEDULE, "--model", MODEL)


def writes_since(world: World, start: int) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in world.gh.log[start:] if r.method != "GET"]


def status_text(world: World, number: int) -> str:
    """What a reader sees of the bot's status comment on InferenceX PR ``number``."""
    [comment] = [c for c in world.gh.comments_on(INFX, number) if c["user"] == INFX_BOT]
    return plain(comment["body"])


def recorded(world: World) -> dict[str, Any]:
    [pull] = [p for p in world.book_pulls() if p["state"] == "open"]
    marker = json.loads(pull["body"].split(st.STATE_PREFIX, 1)[1].split(" -->", 1)[0])
    return marker["pins"]


def test_a_use_whose_run_was_cancelled_is_pinned_by_the_schedule(world, tmp_path):
    """GitHub cancelled the pending run of the `/use` event (a later event of the same model
    queued behind it): no event reaches the bot. The next scheduled run finds the comment,
    pins its run and reports it, exactly as the event would have."""
    repos = Repos(tmp_path)
    wire(world, repos)
    comment = world.comment(f"Pinning the measured run.\n/use {RUN}")
    # The event that took its place in the group: a comment on the model's other PR.
    later = world.gh.add_comment(INFX, OTHER, "/use 41000000099", created_at="2026-10-13T09:01:00Z")
    event = {**world.comment_event(later), "issue": {"number": OTHER, "pull_request": {"url": "x"}}}
    sync_bot(world, repos, "issue_comment", event, "--model", MODEL)
    assert world.reactions(later) == ["-1"]  # no such run
    assert world.reactions(comment) == []  # nothing did the cancelled run's work
    proc = scheduled(world, repos)
    assert world.reactions(comment) == ["+1"]
    pins = recorded(world)
    assert pins[KEY]["run"] == str(RUN) and pins[KEY]["comment"] == str(comment["id"])
    assert (pins[KEY]["sha"], pins[KEY]["status"]) == (repos.head, "verified-pr")
    assert str(RUN) in world.show(MODULE)
    assert f"measured in run {RUN}, pinned by this PR's /use comment" in status_text(world, PR)
    # The other open PR of the model, never reported either, has its status comment too.
    assert "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg" in status_text(world, OTHER)
    assert f"PR #{PR}: not up to date; syncing" in proc.stdout


def test_the_schedule_writes_nothing_when_nothing_changed(world, tmp_path):
    repos = Repos(tmp_path)
    wire(world, repos)
    world.comment(f"/use {RUN}")
    scheduled(world, repos)
    tip, pulls = world.tip(), json.dumps(world.book_pulls(), sort_keys=True)
    start = len(world.gh.log)
    proc = scheduled(world, repos)
    assert writes_since(world, start) == []  # not one POST, PATCH, PUT or DELETE
    assert world.tip() == tip and json.dumps(world.book_pulls(), sort_keys=True) == pulls
    assert f"PR #{PR}: up to date" in proc.stdout and f"PR #{OTHER}: up to date" in proc.stdout
    # The settled check reads; it never downloads a run again.
    assert not [r for r in world.gh.log[start:] if r.path.endswith("/zip")]


def test_a_pin_whose_run_expired_goes_back_in_progress(world, tmp_path):
    repos = Repos(tmp_path)
    wire(world, repos)
    world.comment(f"/use {RUN}")
    scheduled(world, repos)
    for art in world.gh.repo(INFX).artifacts.values():
        art["expired"] = True
    start = len(world.gh.log)
    scheduled(world, repos)
    assert writes_since(world, start)  # the pin no longer holds: something is said and changed
    assert recorded(world)[KEY]["status"] == "in-progress"
    assert "no unexpired result artifact" in status_text(world, PR)


def test_a_merged_cookbook_pr_is_reported_by_the_schedule(world, tmp_path):
    """Nothing in sgl-project/sglang sends the repository_dispatch: the schedule finds the
    merged bot PR and the InferenceX PRs it carried get the news."""
    repos = Repos(tmp_path)
    wire(world, repos)
    world.comment(f"/use {RUN}")
    scheduled(world, repos)
    [pull] = world.book_pulls()
    pull.update(state="closed", merged=True)
    before = status_text(world, PR)
    scheduled(world, repos)
    after = status_text(world, PR)
    assert after != before
    assert (
        f"{BOOK}#{pull['number']} has been merged. This PR's AgentX config ({KEY}) is now in"
        in after
    )
    start = len(world.gh.log)
    scheduled(world, repos)
    assert writes_since(world, start) == []


def test_a_fork_pr_is_handled_through_the_comment_and_the_schedule(world, tmp_path):
    """A fork PR's own events never reach the job with the cookbook token. Its `/use` comment
    does (issue_comment runs from the default branch), its head is fetched as
    refs/pull/<n>/head and read as data, and its merge is found by the schedule, which marks
    its config verified."""
    # The config exists only in the fork's head, which also asks git to pass every file
    # through a filter driver.
    repos = Repos(tmp_path, recipe_on_main=False, attributes="* filter=evil\n")
    wire(world, repos, fork=True)
    # A filter driver in the runner's git configuration that a fork's .gitattributes asks for:
    # if the fork's files went through git's filters (or anything ran them), it would fire.
    script = tmp_path / "evil-filter.sh"
    script.write_text(f'touch "{tmp_path}/filter-ran"\nexec cat\n')
    (tmp_path / ".gitconfig").write_text(f'[filter "evil"]\n\tsmudge = sh {script}\n')
    comment = world.comment(f"/use {RUN}")
    sync_bot(world, repos, "issue_comment", world.comment_event(comment), "--model", MODEL)
    assert world.reactions(comment) == ["+1"]
    assert recorded(world)[KEY]["status"] == "verified-pr"
    module = world.show(MODULE)
    assert KEY in module and str(RUN) in module  # rendered from the fork's head
    assert f"{BOOK}#1" in status_text(world, PR)
    assert not (tmp_path / "filter-ran").exists()
    # The fork PR is merged; its `pull_request: closed` publishes nothing (no secret there).
    world.pull.update(state="closed", merged=True)
    scheduled(world, repos)
    assert recorded(world)[KEY]["status"] == "verified"
    assert '"verified"' in world.show(MODULE) and '"verified"' not in module
    assert not (tmp_path / "filter-ran").exists()


def test_an_app_token_run_never_asks_for_its_user(world, tmp_path):
    """An App installation token answers 403 on GET /user; the workflow gives its login."""
    repos = Repos(tmp_path)
    wire(world, repos)
    world.gh.add_token(BOOK_TOKEN, "infx-cookbook-sync[bot]")
    world.comment(f"/use {RUN}")
    sync_bot(
        world,
        repos,
        "schedule",
        SCHEDULE,
        SYNC_COOKBOOK_LOGIN="infx-cookbook-sync[bot]",
    )
    assert not [r for r in world.gh.log if r.path == "/user"]
    [pull] = world.book_pulls()
    assert pull["user"] == "infx-cookbook-sync[bot]"
    assert pull["head_ref"] == BRANCH and world.tip() is not None


def test_srt_slurm_comes_from_the_base_url_at_the_prs_pin(tmp_path):
    """A PR that points .gitmodules elsewhere fetches nothing from there: the URL is the
    default branch's, the commit the PR tree's gitlink."""
    srt, evil = tmp_path / "srt-slurm", tmp_path / "evil"
    for repo, text in ((srt, '{"pinned": true}\n'), (evil, '{"evil": true}\n')):
        (repo / "configs").mkdir(parents=True)
        _git(repo, "init", "--quiet", "--initial-branch=main")
        (repo / "configs" / "deepep_config.json").write_text(text)
        _commit(repo, "configs")
    pinned = _git(srt, "rev-parse", "HEAD")
    (srt / "configs" / "deepep_config.json").write_text('{"pinned": false}\n')
    _commit(srt, "newer")

    origin = tmp_path / "InferenceX"
    origin.mkdir()
    _git(origin, "init", "--quiet", "--initial-branch=main")
    (origin / ".gitmodules").write_text(
        f'[submodule "srt-slurm"]\n\tpath = {SUBMODULE}\n\turl = {srt}\n'
    )
    _git(origin, "update-index", "--add", "--cacheinfo", f"160000,{pinned},{SUBMODULE}")
    _git(origin, "add", ".gitmodules")
    _git(origin, "commit", "--quiet", "-m", "pin srt-slurm")
    (origin / ".gitmodules").write_text(
        f'[submodule "srt-slurm"]\n\tpath = {SUBMODULE}\n\turl = {evil}\n'
    )
    evil_head = _git(evil, "rev-parse", "HEAD")
    _git(origin, "update-index", "--cacheinfo", f"160000,{evil_head},{SUBMODULE}")
    _git(origin, "add", ".gitmodules")
    _git(origin, "commit", "--quiet", "-m", "point srt-slurm elsewhere")
    pr_head = _git(origin, "rev-parse", "HEAD")
    _git(origin, "update-ref", "refs/pull/7/head", pr_head)
    _git(origin, "reset", "--quiet", "--hard", "HEAD~1")
    checkout = tmp_path / "runner"
    _git(tmp_path, "clone", "--quiet", str(origin), "runner")

    # The PR pins the evil repository's commit: srt-slurm has no such commit, so nothing is
    # fetched from anywhere else and the bot refuses.
    with pytest.raises(SyncError, match="git fetch failed"), heads.pull_tree(checkout, 7, pr_head):
        pass
    # A PR that pins srt-slurm's older commit gets exactly that commit, from the base's URL.
    _git(origin, "checkout", "--quiet", "-b", "pr8")
    (origin / ".gitmodules").write_text(
        f'[submodule "srt-slurm"]\n\tpath = {SUBMODULE}\n\turl = {evil}\n'
    )
    _git(origin, "add", ".gitmodules")
    _git(origin, "commit", "--quiet", "-m", "touch .gitmodules, keep the pin")
    pr8 = _git(origin, "rev-parse", "HEAD")
    _git(origin, "update-ref", "refs/pull/8/head", pr8)
    with heads.pull_tree(checkout, 8, pr8) as tree:
        # The renderer's view of the tree: srt-slurm's files at the pinned commit.
        found = discover(tree)
        assert found.commit == pinned
        assert found.read("configs", "deepep_config.json") == '{"pinned": true}\n'


@pytest.mark.parametrize(
    ("event", "payload"),
    [
        ("schedule", SCHEDULE),
        ("workflow_dispatch", {"inputs": {"cookbook_pr": ""}, "repository": {"full_name": INFX}}),
        ("workflow_dispatch", {"inputs": {}, "repository": {"full_name": INFX}}),
    ],
)
def test_the_reconcile_reaches_every_model(tmp_path, event, payload):
    """The gate's matrix for a scheduled run: one job per model of sync.yaml."""
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "syncer",
            "bot",
            "--event",
            str(path),
            "--event-name",
            event,
            "--config",
            str(ROOT / "sync.yaml"),
            "--models-only",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    models = [m.path for m in load_sync_config(ROOT / "sync.yaml").models]
    assert json.loads(done.stdout) == models and models
