"""Misuse of `sync bot` (issue 40.6, issue 36 points 8 and 11): every mistake in how it is
called or in the event's types is one `error:` line and exit 2 before anything is asked of
GitHub, and a reader that leaves the pipe early is 141, as for every other command.

Each runs `sync bot` as a process of its own against the schema-validated fake GitHub."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from typing import Any

import forkserver
import pytest
from botworld import BOOK_TOKEN, INFX, INFX_BOT, INFX_TOKEN, PR, RUN, World, sync_bot
from conftest import ROOT
from infxrepo import InferenceXRepo

SCHEDULE = {"schedule": "17 * * * *", "repository": {"full_name": INFX}}


def _env(world: World, *, tokens: bool = True) -> dict[str, str]:
    env = {
        **forkserver.machine_env(),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(world.tmp),
        "SYNC_INFX_LOGIN": INFX_BOT,
        "SYNC_API_PAUSE": "0",
    }
    if tokens:
        env.update({"GITHUB_TOKEN": INFX_TOKEN, "COOKBOOK_TOKEN": BOOK_TOKEN})
    return env


def _sync(world: World, *args: str, tokens: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*forkserver.command(), "bot", "--config", str(ROOT / "sync.yaml"), *args],
        cwd=world.tmp,
        env=_env(world, tokens=tokens),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _one_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args",
    [[], ["--schedule", "--dry-run"], ["--models-only"], ["--event-name", "schedule"]],
    ids=["bare", "schedule-dry-run", "models-only", "event-name-only"],
)
def test_without_event_is_one_error_line(world, args):
    line = _one_error(_sync(world, *args))
    assert line == "error: --event FILE is required: the event payload (GITHUB_EVENT_PATH)"
    assert world.gh.log == []


@pytest.mark.parametrize("extra", [[], ["--models-only"], ["--dry-run"]])
def test_a_mistyped_event_name_is_refused(world, extra):
    event = world.tmp / "event.json"
    event.write_text(json.dumps(world.pr_event("synchronize")))
    line = _one_error(_sync(world, "--event", str(event), "--event-name", "pull_requst", *extra))
    assert line.startswith('error: --event-name "pull_requst": expected one of issue_comment,')
    assert world.gh.log == []


def test_a_scheduled_dry_run_without_a_token_says_so(world):
    event = world.tmp / "event.json"
    event.write_text(json.dumps(SCHEDULE))
    line = _one_error(
        _sync(world, "--event", str(event), "--event-name", "schedule", "--dry-run", tokens=False)
    )
    assert "no GitHub token" in line and "the scheduled run reads GitHub" in line


def _piped(world: World, args: list[str], reader: str) -> subprocess.CompletedProcess[str]:
    """``sync bot ARGS | READER``; the writer's exit code (``PIPESTATUS[0]``)."""
    line = " ".join(map(shlex.quote, [*forkserver.command(), "bot", *args]))
    return subprocess.run(
        ["bash", "-c", f'{line} | {reader}; exit "${{PIPESTATUS[0]}}"'],
        cwd=world.tmp,
        env=_env(world),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_reader_gone_early_is_141(world):
    comment = world.comment(f"/use {RUN}")
    event = world.tmp / "event.json"
    event.write_text(json.dumps(world.comment_event(comment)))
    common = ["--event", str(event), "--event-name", "issue_comment"]
    common += ["--config", str(ROOT / "sync.yaml"), "--inferencex", str(world.inferencex)]
    # The whole bot: its outcome lines are several; the reader takes one (`head -1`, except
    # that head reads a whole buffer, which may hold every line: `read` takes one line only).
    run = [
        *common,
        "--cookbook", str(world.bare),
        "--cache-dir", str(world.tmp / "cache"),
        "--api-url", world.server.base_url,
        "--date", "2026-10-13",
    ]  # fmt: skip
    proc = _piped(world, run, "read -r first")
    assert (proc.returncode, proc.stderr) == (141, "")
    assert [r["content"] for r in comment["reactions"]] == ["+1"]  # the work was done
    proc = _piped(world, [*common, "--models-only"], "head -c 1 >/dev/null")
    assert (proc.returncode, proc.stderr) == (141, "")
    # Read to the end: 0.
    proc = _piped(world, [*common, "--models-only"], "cat >/dev/null")
    assert (proc.returncode, proc.stderr) == (0, "")


def _comment_event(world: World) -> dict[str, Any]:
    return world.comment_event(world.comment(f"/use {RUN}"))


@pytest.mark.parametrize("action", [5, ["created"], "pinned"])
def test_a_comment_events_action_of_the_wrong_type_or_value(world, action):
    payload = _comment_event(world)
    payload["action"] = action
    line = _one_error(sync_bot(world, payload, malformed=True))
    assert line.startswith(f"error: {world.tmp / 'event.json'}: event: action")
    assert world.gh.writes() == []
    if not isinstance(action, str):  # the gate's matrix: refused there too
        line = _one_error(sync_bot(world, payload, "--models-only", malformed=True))
        assert "event: action must be a string" in line


def test_a_pull_request_events_action_of_the_wrong_type(world):
    payload = world.pr_event("synchronize")
    payload["action"] = 5
    line = _one_error(sync_bot(world, payload, event="pull_request", malformed=True))
    assert "event: action must be a string, got a number" in line
    assert world.gh.writes() == []


@pytest.mark.parametrize("inputs", [["cookbook_pr", "1"], "1", 7])
def test_workflow_dispatch_inputs_of_the_wrong_type_run_nothing(world, inputs):
    payload = {
        "inputs": inputs,
        "ref": "refs/heads/main",
        "repository": {"full_name": INFX},
        "sender": {"login": "maintainer"},
        "workflow": ".github/workflows/cookbook-sync.yml",
    }
    for extra in ([], ["--models-only"]):
        proc = sync_bot(world, payload, *extra, event="workflow_dispatch", malformed=True)
        line = _one_error(proc)
        assert line.endswith("event: inputs must be an object, got " + _kind(inputs))
    assert world.gh.log == []  # no reconcile: not one request


def _kind(value: object) -> str:
    return {list: "an array", str: "a string", int: "a number"}[type(value)]


def test_an_offline_dry_run_reads_the_events_evals_only_label(world):
    """A dry run without a token cannot check the run, but the label that makes reuse
    invalid is in the event: the pin is refused, as the real run refuses it."""
    world.pull["labels"] = ["evals-only"]
    # The PR head of a tokenless comment event is the commit of an InferenceX checkout of its
    # own (issue 35: the bundled example's folder gave this tool's own HEAD).
    world.inferencex = InferenceXRepo(world.tmp / "infx").work
    payload = _comment_event(world)
    assert [label["name"] for label in payload["issue"]["labels"]] == ["evals-only"]
    proc = sync_bot(
        world,
        payload,
        "--dry-run",
        "--runs",
        str(ROOT / "examples/runs"),
        tokens=False,
        api_url="http://127.0.0.1:9",
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        f"PR #{PR}: pin refused: the PR carries the label evals-only, which makes run reuse invalid"
    ) in proc.stdout
    assert "not checked against GitHub" not in proc.stdout
    assert "verified-pr" not in proc.stdout
    assert world.gh.log == []


def test_the_workflow_passes_every_event_name_the_bot_takes():
    """The names the bot accepts are the workflow's triggers (none of them refused)."""
    import yaml

    from syncer.commands.bot import EVENT_NAMES

    doc = yaml.safe_load((ROOT / ".github/workflows/cookbook-sync.yml").read_text())
    assert set(doc[True]) == set(EVENT_NAMES)


def test_help_still_names_event_required(world):
    proc = _sync(world, "--help")
    assert proc.returncode == 0
    assert "The event payload (GITHUB_EVENT_PATH). Required." in " ".join(proc.stdout.split())
