"""The example event files docs/bot.md points to (examples/events/): GitHub's shapes (held to
the webhook descriptions where GitHub has one), each accepted by `sync bot` as the workflow's
gate runs it (issue 37.6)."""

from __future__ import annotations

import json
import subprocess

import forkserver
import pytest
from conftest import ROOT
from ghschema import check_event

EVENTS = ROOT / "examples" / "events"
NAMES = ["issue_comment", "pull_request", "repository_dispatch", "schedule", "workflow_dispatch"]


def test_the_examples_are_exactly_the_events_the_workflow_sends() -> None:
    assert sorted(p.stem for p in EVENTS.glob("*.json")) == sorted(NAMES)
    doc = (ROOT / "docs" / "bot.md").read_text(encoding="utf-8")
    for name in NAMES:
        assert f"examples/events/{name}.json" in doc, name


@pytest.mark.parametrize(
    "name", ["issue_comment", "pull_request", "repository_dispatch", "workflow_dispatch"]
)
def test_a_webhook_example_is_githubs_shape(name: str) -> None:
    check_event(name, json.loads((EVENTS / f"{name}.json").read_text(encoding="utf-8")))


@pytest.mark.parametrize("name", NAMES)
def test_the_gate_takes_each_example_without_a_token(name: str) -> None:
    done = subprocess.run(
        [*forkserver.command(), "bot", "--event", str(EVENTS / f"{name}.json"),
         "--event-name", name, "--models-only", "--json"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
        env={**forkserver.machine_env(), "PATH": "/usr/bin:/bin", "HOME": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["deepseek-ai/deepseek-v4_1"]
