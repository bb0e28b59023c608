"""A pinned run's server logs are downloaded once per run and attempt across the workflow's jobs
(issue 40.7): each publish job restores the runs folder an earlier job saved (the workflow's
``actions/cache`` steps, emulated by ``botworkflow.Workflow``), and the bot reuses a run's folder
only when its completion record names exactly the artifacts the run has now.

Also the folder's own rules (``run_logs``): the completion record is read as every input is
(bounded; a FIFO or a folder refused), a folder missing a zip or holding an extra file is
downloaded again, and what the cache holds stays bounded (least recently used runs go first).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from botworkflow import WORKFLOW
from botworld import INFX, INFX_BOT, RUN, run_artifacts
from conftest import ROOT
from costworld import CostWorld, totals
from ghserver import GitHubServer, serving

from syncer.errors import SyncError
from syncer.github.client import GitHubClient
from syncer.publish import run_logs
from syncer.publish.run_logs import COMPLETE


@pytest.fixture
def server():
    srv = GitHubServer()
    with srv:
        yield srv


def _bot_comments(world: CostWorld, number: int) -> list[str]:
    gh = world.replay.gh
    return [c["body"] for c in gh.comments_on(INFX, number) if c["user"] == INFX_BOT]


def test_a_second_use_in_a_new_job_downloads_nothing_and_a_new_attempt_downloads_again(
    tmp_path, server
):
    world = CostWorld(tmp_path, server, open_prs=1, agentx=1, models=1)
    world.settle()
    first = totals(world.use(0))
    assert first.artifacts > 0 and first.artifact_bytes > 0
    said = _bot_comments(world, world.pulls[0]["number"])
    # The same run pinned again by a comment an hour later: a new job on a fresh runner.
    again = world.use(0, at="2026-10-13T10:00:00Z")
    assert [j.job for j in again] == ["gate", "publish"]
    assert (totals(again).artifacts, totals(again).artifact_bytes) == (0, 0)
    assert _bot_comments(world, world.pulls[0]["number"]) == said  # the same verdict
    # A push keeps the pin (a changelog line): the dispatched reconcile verifies it again.
    pushed = world.push(0)
    assert f"run {RUN} pinned" in pushed[-1].output, pushed[-1].output
    assert (totals(pushed).artifacts, totals(pushed).artifact_bytes) == (0, 0)
    # A re-run attempt uploads new logs: the run's artifacts changed, so they are fetched.
    logs = {n: d for n, d in run_artifacts().items() if n.startswith("server_logs_")}
    world.replay.gh.rerun(INFX, RUN, artifacts={f"{n}_attempt2": d for n, d in logs.items()})
    rerun = totals(world.use(0, at="2026-10-13T11:00:00Z"))
    assert rerun.artifacts == first.artifacts * 2 and rerun.artifact_bytes > first.artifact_bytes


def test_the_workflow_keeps_the_runs_folder_the_bot_fills_under_keys_no_event_names():
    jobs = yaml.safe_load((ROOT / WORKFLOW).read_text())["jobs"]
    steps = jobs["publish"]["steps"]
    [sync] = [s for s in steps if s.get("name") == "Sync the cookbook"]
    cache_dir = re.search(r'--cache-dir "\$GITHUB_WORKSPACE/([^"]+)"', sync["run"])
    assert cache_dir, sync["run"]
    runs = f"{cache_dir.group(1)}/runs"
    kept = [s for s in steps if s.get("with", {}).get("path") == runs]
    uses = [s["uses"].split("@")[0] for s in kept]
    assert uses == ["actions/cache/restore", "actions/cache/save"]
    restore, save = kept
    assert steps.index(restore) < steps.index(sync) < steps.index(save)
    assert save["if"].startswith("always()")
    keys = [restore["with"]["key"], restore["with"]["restore-keys"], save["with"]["key"]]
    keys.append(save["if"])
    # Only what GitHub itself sets (the run's id and attempt) or the files' hash: nothing a
    # comment, a PR or a dispatch input carries goes into a key.
    for expr in re.findall(r"\$\{\{(.*?)\}\}", " ".join(keys)):
        assert expr.strip() in {
            "github.run_id", "github.run_attempt", f"hashFiles('{runs}/*/*/{COMPLETE}')"
        }, expr  # fmt: skip
    assert restore["with"]["restore-keys"] == "cookbook-sync-runs-"


# -- the runs folder's own rules ----------------------------------------------------------------

TOKEN = "ghp_" + "T" * 36


@pytest.fixture
def gh_server():
    with serving(TOKEN, "cookbook-sync-bot", INFX) as srv:
        yield srv


def _run(server: Any, run_id: int = 41000000001, logs: int = 2) -> tuple[GitHubClient, list]:
    artifacts = {f"server_logs_{i}": bytes([65 + i]) * 1000 for i in range(logs)}
    server.model.add_run(INFX, run_id, head_sha="a" * 40, artifacts=artifacts)
    gh = GitHubClient(TOKEN, base_url=server.base_url, pause=0, backoff=0.01)
    return gh, gh.actions.artifacts(INFX, run_id)


def test_a_kept_folder_is_reused_only_when_it_holds_exactly_the_listed_artifacts(
    gh_server, tmp_path
):
    gh, arts = _run(gh_server)
    cache = tmp_path / "runs"
    run_dir, fetched = run_logs.run_logs(gh, INFX, 41000000001, arts, cache)
    assert fetched and sorted(p.name for p in run_dir.iterdir()) == [
        COMPLETE, "server_logs_0.zip", "server_logs_1.zip"
    ]  # fmt: skip
    assert run_logs.run_logs(gh, INFX, 41000000001, arts, cache) == (run_dir, False)
    (run_dir / "server_logs_1.zip").unlink()  # a cache entry that lost a file
    assert run_logs.run_logs(gh, INFX, 41000000001, arts, cache) == (run_dir, True)
    (run_dir / "extra.zip").write_bytes(b"PK")  # or gained one
    assert run_logs.run_logs(gh, INFX, 41000000001, arts, cache) == (run_dir, True)
    assert not (run_dir / "extra.zip").exists()
    # A zip replaced by a link (to anything) is not taken for the artifact.
    (run_dir / "server_logs_0.zip").unlink()
    (run_dir / "server_logs_0.zip").symlink_to(run_dir / "server_logs_1.zip")
    assert run_logs.run_logs(gh, INFX, 41000000001, arts, cache) == (run_dir, True)
    assert not (run_dir / "server_logs_0.zip").is_symlink()


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_completion_record_that_is_no_regular_file_is_refused_not_waited_on(
    gh_server, tmp_path, kind
):
    gh, arts = _run(gh_server)
    cache = tmp_path / "runs"
    run_dir, _ = run_logs.run_logs(gh, INFX, 41000000001, arts, cache)
    (run_dir / COMPLETE).unlink()
    if kind == "fifo":
        os.mkfifo(run_dir / COMPLETE)  # no writer: a plain open would wait forever
    else:
        (run_dir / COMPLETE).mkdir()
    for read in (
        lambda: run_logs.run_logs(gh, INFX, 41000000001, arts, cache),
        lambda: run_logs.kept_logs(cache, INFX, "41000000001"),
        lambda: run_logs.cached_run_logs(gh, INFX, "41000000001", cache),
    ):
        with pytest.raises(SyncError, match="completion record") as err:
            read()
        assert err.value.path == str(run_dir / COMPLETE)


def test_an_oversized_completion_record_is_refused(gh_server, tmp_path):
    gh, arts = _run(gh_server)
    cache = tmp_path / "runs"
    run_dir, _ = run_logs.run_logs(gh, INFX, 41000000001, arts, cache)
    (run_dir / COMPLETE).write_bytes(b"1 x\n" * (run_logs.MAX_RECORD_BYTES // 4 + 1))
    with pytest.raises(SyncError, match="over the 1048576-byte limit"):
        run_logs.run_logs(gh, INFX, 41000000001, arts, cache)


def test_the_cache_keeps_the_runs_used_last_within_its_bound(gh_server, tmp_path):
    cache = tmp_path / "runs"
    folders: list[Path] = []
    for i, run_id in enumerate((41000000001, 41000000002, 41000000003)):
        gh, arts = _run(gh_server, run_id)
        run_dir, _ = run_logs.run_logs(gh, INFX, run_id, arts, cache)
        os.utime(run_dir / COMPLETE, (1000 + i, 1000 + i))  # downloaded in this order
        folders.append(run_dir)
    unfinished = cache / run_logs.safe_name(INFX) / "41000000009"
    unfinished.mkdir()
    (unfinished / "server_logs_0.zip").write_bytes(b"PK")  # a download cut short
    # The oldest run is used again: it is now the newest.
    gh, arts = _run(gh_server, 41000000004)
    first_arts = gh.actions.artifacts(INFX, 41000000001)
    assert run_logs.run_logs(gh, INFX, 41000000001, first_arts, cache)[1] is False
    size = sum(f.stat().st_size for f in folders[0].iterdir())
    newest, _ = run_logs.run_logs(gh, INFX, 41000000004, arts, cache)
    removed = run_logs.prune(cache, keep=newest, limit=3 * size + 100)
    assert removed == [folders[1]]  # the least recently used; the unfinished one went already
    assert not unfinished.exists()
    assert sorted(p.name for p in (cache / run_logs.safe_name(INFX)).iterdir()) == [
        "41000000001", "41000000003", "41000000004"
    ]  # fmt: skip
    # Used again just now, the first run goes after the third.
    assert run_logs.prune(cache, keep=newest, limit=0) == [folders[2], folders[0]]
    assert [p.name for p in (cache / run_logs.safe_name(INFX)).iterdir()] == ["41000000004"]
