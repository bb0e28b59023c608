"""The two workflows pin each action at one commit, and take the tool from a repository a fork
can name (issue 37.6: they pinned different majors of checkout and setup-python, and the tool's
repository was written into them)."""

from __future__ import annotations

import re

import yaml
from conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def test_each_action_is_pinned_at_one_commit_across_the_workflows() -> None:
    pins: dict[str, set[str]] = {}
    for path in WORKFLOWS:
        for action, sha in re.findall(r"uses: ([\w.-]+/[\w.-]+)@([0-9a-f]{40})", path.read_text()):
            pins.setdefault(action, set()).add(sha)
    assert {"actions/checkout", "actions/setup-python"} <= set(pins)
    assert {a: s for a, s in pins.items() if len(s) > 1} == {}


def test_the_tool_repository_is_a_variable_with_this_projects_as_default() -> None:
    for path in WORKFLOWS:
        env = yaml.safe_load(path.read_text())["env"]
        assert env["TOOL_REPO"] == (
            "${{ vars.COOKBOOK_SYNC_TOOL_REPO || 'SemiAnalysisAI/infx-cookbook-sync' }}"
        ), path.name
