"""The workflow file keeps the security rules of issue 8 (checked on the parsed YAML)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

WORKFLOW = Path(__file__).resolve().parent.parent / ".github/workflows/cookbook-sync.yml"


def load() -> dict:
    doc = yaml.safe_load(WORKFLOW.read_text())
    doc["on"] = doc.pop(True)  # YAML 1.1 reads the key `on` as True
    return doc


def test_triggers_and_no_pull_request_target():
    doc = load()
    assert set(doc["on"]) == {
        "issue_comment",
        "pull_request",
        "repository_dispatch",
        "workflow_dispatch",
    }
    assert "pull_request_target" not in doc["on"]
    assert doc["permissions"] == {}


def test_actions_and_tool_are_pinned_to_commits():
    doc = load()
    for job in doc["jobs"].values():
        for step in job["steps"]:
            if "uses" in step:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
        tool = [s for s in job["steps"] if s.get("with", {}).get("path") == "tool"]
        assert tool and tool[0]["with"]["ref"] == "${{ env.TOOL_REF }}"
        guard = job["steps"][0]["run"]
        assert "^[0-9a-f]{40}$" in guard and "exit 1" in guard


def test_cookbook_token_only_in_the_publishing_job():
    doc = load()
    gate, publish = doc["jobs"]["gate"], doc["jobs"]["publish"]
    assert "secrets." not in yaml.safe_dump(gate)
    steps_with_secret = [s for s in publish["steps"] if "secrets." in yaml.safe_dump(s)]
    assert len(steps_with_secret) == 1
    assert steps_with_secret[0]["env"]["COOKBOOK_TOKEN"] == "${{ secrets.COOKBOOK_SYNC_TOKEN }}"
    assert steps_with_secret[0]["run"].startswith("sync bot")


def test_pr_content_is_data_only():
    publish = load()["jobs"]["publish"]
    for step in publish["steps"]:
        with_ = step.get("with", {})
        if with_.get("path") in ("inferencex", "tool"):
            assert with_["persist-credentials"] is False
        # Nothing from the PR checkout is ever run or installed.
        run = step.get("run", "")
        assert not re.search(r"(^|[\s;&|])(\./)?inferencex/", run), run
        assert "pip install" not in run or "./tool" in run


def test_one_sync_per_model_at_a_time():
    doc = load()
    concurrency = doc["jobs"]["publish"]["concurrency"]
    assert concurrency == {"group": "${{ needs.gate.outputs.group }}", "cancel-in-progress": False}
    assert "--models-only" in doc["jobs"]["gate"]["steps"][-1]["run"]
    assert "cookbook-sync-" in doc["jobs"]["gate"]["steps"][-1]["run"]


def test_gate_lets_through_an_edit_that_removed_a_command():
    # The bot clears its reaction and recomputes the pin when an edit drops the command
    # (test_bot.test_edited_comment_is_re_evaluated); the gate must not drop that event.
    gate = load()["jobs"]["gate"]["if"]
    for body in ("github.event.comment.body", "github.event.changes.body.from"):
        for command in ("/use", "/reuse-sweep-run"):
            assert f"contains({body}, '{command}')" in gate
