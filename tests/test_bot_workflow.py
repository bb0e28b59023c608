"""The workflow file keeps the security rules of issue 8 (checked on the parsed YAML)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import yaml

from syncer.inferencex.srtconfigs import SUBMODULE, discover

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
    # Issue 12.3: a group built from the *set* of models let two events sharing one model run
    # at once. One matrix job per model, each in that model's group, queued and never cancelled.
    doc = load()
    gate, publish = doc["jobs"]["gate"], doc["jobs"]["publish"]
    models = gate["steps"][-1]["run"]
    assert "--models-only --json" in models and 'echo "models=${models}"' in models
    assert gate["outputs"] == {"models": "${{ steps.models.outputs.models }}"}
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
    assert doc["jobs"]["gate"]["permissions"] == {"contents": "read"}
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


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _submodule_step() -> str:
    (step,) = [s for s in load()["jobs"]["publish"]["steps"] if "submodule" in s.get("run", "")]
    return step["run"]


def _run_step(workdir: Path) -> subprocess.CompletedProcess[str]:
    # Local repositories stand in for GitHub: git refuses file:// submodules unless allowed.
    env = {
        **os.environ,
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "protocol.file.allow",
        "GIT_CONFIG_VALUE_0": "always",
    }
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", _submodule_step()],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
    )


def test_the_srt_slurm_submodule_is_checked_out_at_its_pinned_commit(tmp_path: Path) -> None:
    """The step, run as the workflow runs it on a checkout made without submodules, gives the
    tool srt-slurm's files at the commit the InferenceX tree pins, not at srt-slurm's tip."""
    srt = tmp_path / "srt-slurm"
    (srt / "configs").mkdir(parents=True)
    _git(srt, "init", "-q", "-b", "main")
    (srt / "configs" / "deepep_config.json").write_text('{"pinned": true}\n')
    _git(srt, "add", ".")
    _git(srt, "commit", "-q", "-m", "pinned")
    pinned = _git(srt, "rev-parse", "HEAD")
    (srt / "configs" / "deepep_config.json").write_text('{"pinned": false}\n')
    _git(srt, "commit", "-q", "-am", "newer")

    upstream = tmp_path / "upstream"
    upstream.mkdir()
    _git(upstream, "init", "-q", "-b", "main")
    _git(upstream, "submodule", "add", "-q", str(srt), SUBMODULE)
    _git(upstream / SUBMODULE, "checkout", "-q", pinned)
    _git(upstream, "add", ".")
    _git(upstream, "commit", "-q", "-m", "pin srt-slurm")

    runner = tmp_path / "runner"
    runner.mkdir()
    _git(runner, "clone", "-q", str(upstream), "inferencex")  # actions/checkout: no submodules
    assert not (runner / "inferencex" / SUBMODULE / "configs").exists()

    done = _run_step(runner)
    assert done.returncode == 0, done.stderr
    files = discover(runner / "inferencex")
    assert files.commit == pinned
    assert files.read("configs", "deepep_config.json") == '{"pinned": true}\n'


def test_a_tree_without_the_submodule_is_left_alone(tmp_path: Path) -> None:
    tree = tmp_path / "runner" / "inferencex"
    tree.mkdir(parents=True)
    _git(tree, "init", "-q", "-b", "main")
    (tree / "README.md").write_text("old layout\n")
    _git(tree, "add", ".")
    _git(tree, "commit", "-q", "-m", "old layout")
    done = _run_step(tmp_path / "runner")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert discover(tree).root is None
