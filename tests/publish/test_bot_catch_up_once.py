"""A catch-up regenerates each model's module once per event, whatever the number of PRs it
catches up (issue 40.7): InferenceX PRs that merged with a pinned run while their ``closed``
events were dropped are caught up by the next event of the model, each PR's pins verified and
all of them published in one generation (the scheduled run's reconcile already did; an event's
run generated the module once per PR)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from botworld import INFX, MODEL, SEED_KEY, Replay, run_artifacts
from ghserver import GitHubServer
from infxrepo import MASTER, add_key

from syncer.publish.generation import Generation

FIRST = 7000
RUNS = 42000000000


@pytest.fixture
def replay(tmp_path):
    server = GitHubServer()
    with server:
        yield Replay(tmp_path, server)


@pytest.fixture
def generations(monkeypatch) -> list[tuple[str, str]]:
    """Each generation of a module (``Generation.generate``, the one place the bot generates
    one), counted as the publish's (every config of the page) or a trial's (a PR's measured
    pins, for its three-way verify); the generation itself runs as it always does."""
    made: list[tuple[str, str]] = []
    real = Generation.generate

    def counted(self: Generation, model: Any, *args: Any, **kw: Any) -> Any:
        made.append((model.path, "publish" if kw.get("reuse") else "trial"))
        return real(self, model, *args, **kw)

    monkeypatch.setattr(Generation, "generate", counted)
    return made


def pinned_prs(replay: Replay, count: int) -> list[dict[str, Any]]:
    """``count`` open PRs, each adding its own AgentX config of the model and pinning a sweep
    run of its head by ``/use`` (each event published as it came)."""
    infx, pulls = replay.infx, []
    for i in range(count):
        infx.write(MASTER, add_key(infx.read(MASTER), f"{SEED_KEY}{i}"))
        head = infx.commit(f"[AgentX] GB300 DSV4.1 Flash SGLang: arm {i}")
        infx.checkout(infx.main)
        pull = replay.open_pr(FIRST + i, f"arm-{i}", head)
        replay.gh.add_run(
            INFX, RUNS + i, head_sha=head, head_branch=f"arm-{i}",
            created_at="2026-10-13T08:00:00Z", artifacts=run_artifacts(),
        )  # fmt: skip
        replay.comment(pull, f"/use {RUNS + i}", f"2026-10-13T09:0{i}:00Z")
        pulls.append(pull)
    return pulls


def merge_dropped(replay: Replay, pulls: list[dict[str, Any]]) -> None:
    """``pulls`` squash-merged into InferenceX main one after the other; their ``closed``
    events never reach the bot (GitHub cancelled the pending runs)."""
    infx = replay.infx
    for i, pull in enumerate(pulls):
        infx.checkout(infx.main)
        infx.write(MASTER, add_key(infx.read(MASTER), f"{SEED_KEY}{i}"))
        infx.main = infx.merge_to_main(infx.commit(f"[AgentX] arm {i} (#{pull['number']})"))
        pull.update(state="closed", merged=True)


@pytest.mark.parametrize("caught", [2, 4])
def test_an_events_catch_up_generates_the_module_once(replay, generations, caught):
    pulls = pinned_prs(replay, caught + 1)
    merge_dropped(replay, pulls[:caught])
    generations.clear()
    start = time.process_time()
    # The next event of the model: a push to the last PR, handed on by the dispatch job.
    replay.infx.checkout(pulls[-1]["commits"][-1])
    replay.infx.write("docs/note.md", "a note\n")
    replay.push(pulls[-1], replay.infx.commit("a note"))
    replay.infx.checkout(replay.infx.main)
    out = replay.send(
        "workflow_dispatch",
        replay.gh.workflow_dispatch_event(
            INFX, {"cookbook_pr": "", "inferencex_pr": str(pulls[-1]["number"])},
            sender="author", workflow=".github/workflows/cookbook-sync.yml",
        ),
        "--model", MODEL,
    )  # fmt: skip
    spent = time.process_time() - start
    for pull in pulls[:caught]:
        assert f"PR #{pull['number']}: merged; catching up" in out
    # The pushed PR's own publish, then the caught-up PRs' in one generation (the old code:
    # one per PR); each PR's run verified against a trial module of its pins, as before.
    published = [m for m, kind in generations if kind == "publish"]
    assert published == [MODEL, MODEL], (generations, spent)
    assert [kind for _, kind in generations].count("trial") == caught + 1
    # Each caught-up PR told its config is verified in the one cookbook PR, all on its page.
    for pull in pulls[:caught]:
        assert f"PR #{pull['number']}: comment posted ({MODEL} open 1 verified)" in out
    module = replay.module()
    keys = {cell["id"].split("#")[0] for cell in module["cells"]}
    assert {f"{SEED_KEY}{i}" for i in range(caught + 1)} <= keys
    assert set(module["source"]["prs"]) == {str(pulls[-1]["number"])}  # the others verified


def test_the_schedules_catch_up_generates_the_module_once(replay, generations):
    pulls = pinned_prs(replay, 4)
    merge_dropped(replay, pulls[:3])
    generations.clear()
    schedule = {"schedule": "17 * * * *", "repository": {"full_name": INFX}}
    out = replay.send("schedule", schedule, "--model", MODEL)
    for pull in pulls[:3]:
        assert f"PR #{pull['number']}: merged; catching up" in out
        assert f"PR #{pull['number']}: comment posted ({MODEL} open 1 verified)" in out
    assert [m for m, kind in generations if kind == "publish"] == [MODEL]
