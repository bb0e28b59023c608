"""The scheduled audit workflow: its rules (checked on the parsed YAML, like the bot's), and its
audit step's own command line run through the real command against the fake GitHub."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT
from ghserver import GitHubServer

from syncer.cli import main
from syncer.publish import dashboard

WORKFLOW = ROOT / ".github/workflows/cookbook-audit.yml"
INFX = "SemiAnalysisAI/InferenceX"
TOKEN = "ghs_" + "W3" * 18
BOT = "github-actions[bot]"


def load() -> dict:
    doc = yaml.safe_load(WORKFLOW.read_text())
    doc["on"] = doc.pop(True)  # YAML 1.1 reads the key `on` as True
    return doc


def audit_step() -> dict:
    [step] = [s for s in load()["jobs"]["audit"]["steps"] if "sync audit" in s.get("run", "")]
    return step


def test_daily_schedule_and_manual_runs_only() -> None:
    doc = load()
    assert set(doc["on"]) == {"schedule", "workflow_dispatch"}
    [cron] = doc["on"]["schedule"]
    minute, hour, dom, month, dow = cron["cron"].split()
    assert minute.isdigit() and hour.isdigit() and (dom, month, dow) == ("*", "*", "*")
    assert doc["permissions"] == {}
    assert doc["concurrency"] == {"group": "cookbook-audit", "cancel-in-progress": False}


def test_least_privilege_and_no_secret() -> None:
    job = load()["jobs"]["audit"]
    assert job["permissions"] == {
        "contents": "read",
        "pull-requests": "read",
        "issues": "write",
        "actions": "read",
    }
    assert "secrets." not in WORKFLOW.read_text()
    assert audit_step()["env"]["GITHUB_TOKEN"] == "${{ github.token }}"


def test_actions_and_tool_pinned_checkouts_are_data_only() -> None:
    steps = load()["jobs"]["audit"]["steps"]
    guard = steps[0]["run"]
    assert "^[0-9a-f]{40}$" in guard and "exit 1" in guard
    for step in steps:
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
        if step.get("uses", "").startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False
    [tool] = [s for s in steps if s.get("with", {}).get("path") == "tool"]
    assert tool["with"]["ref"] == "${{ env.TOOL_REF }}"
    install = next(s["run"] for s in steps if "pip install" in s.get("run", ""))
    assert "--require-hashes" in install and "tool/requirements/bot.lock" in install
    # Nothing of the checkouts is run: the only commands are the tool's.
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "inferencex/" not in runs and "cookbook/" not in runs


def test_findings_do_not_fail_the_job_errors_do() -> None:
    script = audit_step()["run"]
    assert "set +e" in script and 'test "$code" -le 1' in script


ZIZMOR = shutil.which("zizmor") or shutil.which("zizmor", path=str(Path(sys.executable).parent))


@pytest.mark.skipif(ZIZMOR is None, reason="zizmor not installed")
def test_zizmor_is_clean() -> None:
    assert ZIZMOR is not None
    proc = subprocess.run(
        [ZIZMOR, "--offline", str(WORKFLOW)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _workflow_args(cookbook: Path, inferencex: Path, srt_slurm: Path) -> list[str]:
    """The audit step's `sync audit` arguments, with the job's paths and variables bound."""
    [line] = [x for x in audit_step()["run"].splitlines() if x.strip().startswith("sync audit")]
    command = line.split(">", 1)[0].replace('"$GITHUB_REPOSITORY"', INFX)
    argv = shlex.split(command)[1:]
    paths = {"cookbook": str(cookbook), "inferencex": str(inferencex), "srt-slurm": str(srt_slurm)}
    return [paths.get(a, a) for a in argv]


def test_the_workflow_command_keeps_one_dashboard_issue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The job's layout: a cookbook checkout and an InferenceX clone with an origin remote.
    cookbook = tmp_path / "cookbook" / "docs/src/snippets/agentx"
    shutil.copytree(ROOT / "cookbook_snippets", cookbook)
    origin = tmp_path / "origin"
    shutil.copytree(ROOT / "examples/inferencex", origin)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C"]
    subprocess.run([*git, str(origin), "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, str(origin), "add", "-A"], check=True)
    subprocess.run([*git, str(origin), "commit", "-qm", "A"], check=True)
    clone = tmp_path / "inferencex"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    srt_slurm = tmp_path / "srt-slurm"  # the job's srt-slurm checkout, its history
    subprocess.run([*git, str(tmp_path), "init", "-q", "-b", "main", str(srt_slurm)], check=True)
    args = _workflow_args(tmp_path / "cookbook", clone, srt_slurm)
    assert "--dashboard" in args and "--fetch" in args and "--srt-slurm-repo" in args
    server = GitHubServer()
    with server as gh:
        gh.add_token(TOKEN, BOT)
        gh.repo(INFX)
        gh.add_pull(INFX, head="dspark", number=3859)
        gh.add_pull(INFX, head="disagg", number=3871)
        gh.add_run(INFX, 41000000001, head_sha="6" * 40, artifacts={"bmk": b"log"})
        gh.add_comment(INFX, 3859, "/use 41000000001", association="MEMBER")
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("SYNC_API_PAUSE", "0")
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        monkeypatch.setenv("SYNC_INFX_LOGIN", BOT)

        def run() -> tuple[int, str]:
            with pytest.raises(SystemExit) as exc:
                main(args)
            out, err = capsys.readouterr()
            assert exc.value.code in (0, 1), err
            return int(exc.value.code or 0), out

        # The example's pins are PR heads neither the clone nor origin has: not checked, and
        # nothing else is wrong: no issue, and the report says the cells are unchecked (it said
        # ✅ before issue 37.4).
        code, out = run()
        assert code == 0 and out.startswith("## ❔ Cookbook audit") and gh.writes() == []
        assert "No findings, but **5 of the 5 cells** in 1 module could not be checked" in out
        gh.repos[INFX].pulls[3871]["state"] = "closed"
        for _ in range(2):
            code, out = run()
            assert code == 1 and out.startswith("## ⚠️ Cookbook audit")
        [issue] = gh.repos[INFX].issues.values()
        assert issue["body"].startswith(dashboard.MARKER) and issue["user"] == BOT
        assert [r.method for r in gh.writes()] == ["POST"]  # created once, then unchanged
