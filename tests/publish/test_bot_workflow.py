"""The workflow file keeps the security rules of issues 8 and 20 (checked on the parsed YAML)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from botworkflow import parsed_workflow
from conftest import ROOT

WORKFLOW = ROOT / ".github/workflows/cookbook-sync.yml"


def load() -> dict:
    doc = parsed_workflow()
    doc["on"] = doc.pop(True)  # YAML 1.1 reads the key `on` as True
    return doc


def test_triggers_and_no_pull_request_target():
    doc = load()
    assert set(doc["on"]) == {
        "issue_comment",
        "pull_request",
        "schedule",
        "repository_dispatch",
        "workflow_dispatch",
    }
    assert "pull_request_target" not in doc["on"]
    assert doc["permissions"] == {}


def test_the_schedule_runs_hourly_and_reaches_every_model():
    # Issue 20.5: nothing in the cookbook sends the dispatch; the schedule reconciles.
    doc = load()
    [entry] = doc["on"]["schedule"]
    minute, hour, *rest = entry["cron"].split()
    assert minute.isdigit() and 0 <= int(minute) < 60 and hour == "*" and rest == ["*", "*", "*"]
    assert "schedule" not in doc["jobs"]["gate"]["if"]  # the gate lets it through
    # workflow_dispatch without an input is the same reconcile (by hand, or from a PR push).
    assert doc["on"]["workflow_dispatch"]["inputs"]["cookbook_pr"]["required"] is False


# The current major version of each action (tags read from the actions' own repositories).
CURRENT = {
    "actions/checkout": ("3d3c42e5aac5ba805825da76410c181273ba90b1", "v7.0.1"),
    "actions/setup-python": ("5fda3b95a4ea91299a34e894583c3862153e4b97", "v7.0.0"),
    "actions/create-github-app-token": ("1b10c78c7865c340bc4f6099eb2f838309f1e8c3", "v3.1.1"),
    "actions/cache": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
    # Issue 40.7: the scheduled run's ledger kept between runs.
    "actions/cache/restore": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
    "actions/cache/save": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
}


def test_actions_are_pinned_to_current_releases_by_commit():
    text = WORKFLOW.read_text()
    uses = re.findall(r"uses: ([\w.-]+/[\w.-]+(?:/[\w.-]+)*)@(\S+)(?:\s+#\s*(\S+))?", text)
    assert {name for name, _, _ in uses} == set(CURRENT)
    for name, ref, comment in uses:
        assert re.fullmatch(r"[0-9a-f]{40}", ref), name
        assert (ref, comment) == CURRENT[name], name


def test_the_tool_is_pinned_to_a_commit():
    doc = load()
    for name in ("gate", "publish"):
        job = doc["jobs"][name]
        tool = [s for s in job["steps"] if s.get("with", {}).get("path") == "tool"]
        assert tool and tool[0]["with"]["ref"] == "${{ env.TOOL_REF }}"
        guard = job["steps"][0]["run"]
        assert "^[0-9a-f]{40}$" in guard and "exit 1" in guard


def test_cookbook_secrets_only_in_the_environment_job():
    # Issue 20.6 (zizmor secrets-outside-env): a job without an environment must not name a
    # secret; the publishing job is in `cookbook-sync`, whose branches are the default one.
    doc = load()
    for name, job in doc["jobs"].items():
        if name != "publish":
            assert "secrets." not in yaml.safe_dump(job), name
    publish = doc["jobs"]["publish"]
    assert publish["environment"] == "cookbook-sync"
    with_secret = [s for s in publish["steps"] if "secrets." in yaml.safe_dump(s)]
    assert [s.get("id") for s in with_secret] == ["app", None]
    app, sync = with_secret
    assert app["with"]["private-key"] == "${{ secrets.COOKBOOK_SYNC_APP_KEY }}"
    assert sync["run"].startswith("sync bot")
    assert sync["env"]["COOKBOOK_TOKEN"] == (
        "${{ steps.app.outputs.token || secrets.COOKBOOK_SYNC_TOKEN }}"
    )


def test_app_token_is_minted_per_run_and_names_its_bot_login():
    publish = load()["jobs"]["publish"]
    [app] = [s for s in publish["steps"] if "create-github-app-token" in s.get("uses", "")]
    assert app["uses"].split("@")[1] == CURRENT["actions/create-github-app-token"][0]
    assert app["if"] == "vars.COOKBOOK_SYNC_APP_CLIENT_ID != ''"  # else the PAT
    assert app["with"]["client-id"] == "${{ vars.COOKBOOK_SYNC_APP_CLIENT_ID }}"
    # Only what the bot does on the cookbook: push its branch, open and edit its PR.
    assert {k: v for k, v in app["with"].items() if k.startswith("permission-")} == {
        "permission-contents": "write",
        "permission-pull-requests": "write",
    }
    [sync] = [s for s in publish["steps"] if s.get("run", "").startswith("sync bot")]
    login = " ".join(sync["env"]["SYNC_COOKBOOK_LOGIN"].split())
    # An App token answers 403 on GET /user: the login is given, `<slug>[bot]`.
    assert "format('{0}[bot]', steps.app.outputs.app-slug)" in login
    assert login.endswith("|| vars.COOKBOOK_SYNC_LOGIN }}")


def test_pull_request_runs_hold_no_secret_and_only_dispatch():
    # A pull_request run uses the PR's copy of this file: it gets no environment, and a fork
    # PR's run does nothing at all (the schedule takes it).
    doc = load()
    dispatch = doc["jobs"]["dispatch"]
    assert "github.event_name == 'pull_request'" in dispatch["if"]
    assert "github.event.pull_request.head.repo.full_name == github.repository" in dispatch["if"]
    assert dispatch["permissions"] == {"actions": "write"}
    assert "environment" not in dispatch
    [step] = dispatch["steps"]
    assert 'gh workflow run "${workflow##*/}"' in step["run"]
    assert '--ref "$DEFAULT_BRANCH"' in step["run"]
    assert step["env"]["DEFAULT_BRANCH"] == "${{ github.event.repository.default_branch }}"
    assert "github.event_name != 'pull_request'" in doc["jobs"]["gate"]["if"]
    assert doc["jobs"]["publish"]["needs"] == "gate"


def test_nothing_of_inferencex_is_checked_out_by_the_jobs():
    # Issue 20.2/20.6: no step checks out a PR ref (or any InferenceX tree) or runs
    # `git submodule` on a PR's .gitmodules. The bot fetches main and the PR heads into its bare
    # clone and reads git objects; srt-slurm's files come from the PR tree's pin at the URL of
    # main's .gitmodules (tests/publish/test_bot_schedule.py).
    doc = load()
    for name in ("gate", "publish"):
        job = doc["jobs"][name]
        text = yaml.safe_dump(job)
        assert "refs/pull" not in text and "submodule" not in text, name
        checkouts = [s for s in job["steps"] if "actions/checkout" in s.get("uses", "")]
        assert [s["with"]["path"] for s in checkouts] == ["tool"], name
        [bot] = [s for s in job["steps"] if "sync bot" in s.get("run", "")]
        assert '--inferencex-clone "$RUNNER_TEMP/inferencex.git"' in bot["run"], name


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
    # Issue 12.3: a group built from the *set* of models let two events sharing one model run
    # at once. One matrix job per model, each in that model's group, queued and never cancelled.
    doc = load()
    gate, publish = doc["jobs"]["gate"], doc["jobs"]["publish"]
    models = gate["steps"][-1]["run"]
    assert "--models-only --json" in models and 'echo "models=${models}"' in models
    assert gate["outputs"] == {
        "models": "${{ steps.models.outputs.models }}",
        "handoff": "${{ steps.models.outputs.handoff }}",  # issue 40.7: discovery once per event
    }
    assert publish["strategy"]["matrix"] == {"model": "${{ fromJSON(needs.gate.outputs.models) }}"}
    assert publish["strategy"]["fail-fast"] is False
    assert publish["concurrency"] == {
        "group": "cookbook-sync-${{ matrix.model }}",
        "cancel-in-progress": False,
    }
    [bot] = [s for s in publish["steps"] if s.get("run", "").startswith("sync bot")]
    assert '--model "$SYNC_MODEL"' in bot["run"]
    assert bot["env"]["SYNC_MODEL"] == "${{ matrix.model }}"  # never spliced into the script
    assert "needs.gate.outputs.models != '[]'" in publish["if"]


def test_gate_filters_on_author_association():
    # Issue 12.3: any commenter writing "/use" started the job holding the cookbook token.
    gate = load()["jobs"]["gate"]["if"]
    assert (
        'contains(fromJSON(\'["OWNER", "MEMBER", "COLLABORATOR"]\'), '
        "github.event.comment.author_association)"
    ) in " ".join(gate.split())
    # It guards the comment branch of the condition, not an alternative to it.
    comment_branch = gate.split("||", 1)[1]
    assert comment_branch.index("author_association") < comment_branch.index("/use")


def test_permissions_are_least_privilege():
    doc = load()
    # Issue 40.7: the gate lists the scheduled run's open PRs once for every model's job.
    assert doc["jobs"]["gate"]["permissions"] == {"contents": "read", "pull-requests": "read"}
    assert doc["jobs"]["dispatch"]["permissions"] == {"actions": "write"}
    # The InferenceX token writes comments and reactions, never a PR.
    assert doc["jobs"]["publish"]["permissions"] == {
        "contents": "read",
        "pull-requests": "read",
        "issues": "write",
        "actions": "read",
    }


def test_the_tool_is_installed_from_the_hashed_lock():
    doc = load()
    for name in ("gate", "publish"):
        installs = [
            s["run"] for s in doc["jobs"][name]["steps"] if "pip install" in s.get("run", "")
        ]
        assert installs, name
        for run in installs:
            lines = [ln.strip() for ln in run.strip().splitlines()]
            assert lines == [
                "python -m pip install --quiet --require-hashes --no-build-isolation "
                "-r tool/requirements/bot.lock",
                "python -m pip install --quiet --no-deps --no-build-isolation ./tool",
            ]


def test_the_lock_pins_and_hashes_every_dependency():
    lock = (WORKFLOW.parents[2] / "requirements" / "bot.lock").read_text()
    assert "pip-compile" in lock and "--generate-hashes" in lock
    entries = re.findall(
        r"^([A-Za-z0-9._-]+)==(\S+) \\\n((?:    --hash=sha256:[0-9a-f]{64}.*\n)+)", lock, re.M
    )
    names = {name.lower() for name, _, _ in entries}
    requirement_lines = [ln for ln in lock.splitlines() if re.match(r"^[A-Za-z0-9]", ln)]
    assert len(requirement_lines) == len(entries)  # nothing unpinned or unhashed
    pyproject = (WORKFLOW.parents[2] / "pyproject.toml").read_text()
    deps = re.findall(r'^  "([A-Za-z0-9_-]+)', pyproject.split("dependencies = [", 1)[1], re.M)
    assert deps and {d.lower() for d in deps} <= names
    assert "setuptools" in names  # the build backend, for --no-build-isolation


def test_gate_lets_through_an_edit_that_removed_a_command():
    # The bot clears its reaction and recomputes the pin when an edit drops the command
    # (test_bot.test_edited_comment_is_re_evaluated); the gate must not drop that event.
    gate = load()["jobs"]["gate"]["if"]
    for body in ("github.event.comment.body", "github.event.changes.body.from"):
        for command in ("/use", "/reuse-sweep-run"):
            assert f"contains({body}, '{command}')" in gate


ZIZMOR = Path(sys.executable).parent / "zizmor"


@pytest.mark.skipif(
    not ZIZMOR.exists(), reason="zizmor is not installed here (.ci/run installs it)"
)
def test_zizmor_finds_nothing_high_or_medium():
    # Issue 20.6; offline: zizmor's audits that ask GitHub are skipped. The auditor persona
    # reports everything the regular one hides; ignored findings are listed as ignored.
    done = subprocess.run(
        [
            str(ZIZMOR),
            "--offline",
            "--no-progress",
            "--format",
            "json",
            "--persona",
            "auditor",
            str(WORKFLOW.parent),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    findings = json.loads(done.stdout)
    serious = [
        (f["ident"], f["determinations"]["severity"])
        for f in findings
        if f["determinations"]["severity"] in ("High", "Medium") and not f.get("ignored")
    ]
    assert serious == []


def test_the_one_zizmor_ignore_is_the_comment_trigger_with_its_reason():
    lines = WORKFLOW.read_text().splitlines()
    ignores = [i for i, line in enumerate(lines) if "zizmor: ignore" in line]
    assert [lines[i].split("#")[0].strip() for i in ignores] == ["issue_comment:"]
    assert "[dangerous-triggers]" in lines[ignores[0]]
    reason = " ".join(lines[ignores[0] - 2 : ignores[0]])
    assert "default branch" in reason and "data" in reason


def test_the_dispatch_step_names_this_workflow_file(tmp_path):
    """The step run as the runner runs it, with a `gh` that records its arguments."""
    [step] = load()["jobs"]["dispatch"]["steps"]
    fake_gh = tmp_path / "gh"
    fake_gh.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$GH_ARGS"\n')
    fake_gh.chmod(0o755)
    env = {
        "PATH": f"{tmp_path}:/usr/bin:/bin",
        "GH_ARGS": str(tmp_path / "args"),
        "GITHUB_WORKFLOW_REF": "SemiAnalysisAI/InferenceX/.github/workflows/cookbook-sync.yml"
        "@refs/pull/3859/merge",
        "REPO": "SemiAnalysisAI/InferenceX",
        "DEFAULT_BRANCH": "main",
        "PR_NUMBER": "3859",
    }
    subprocess.run(["bash", "-e", "-c", step["run"]], env=env, check=True, timeout=30)
    assert (tmp_path / "args").read_text().split("\n")[:-1] == [
        "workflow",
        "run",
        "cookbook-sync.yml",
        "--repo",
        "SemiAnalysisAI/InferenceX",
        "--ref",
        "main",
        # Issue 40.7: the pushed PR alone is brought up to date, not every open PR.
        "-f",
        "inferencex_pr=3859",
    ]
