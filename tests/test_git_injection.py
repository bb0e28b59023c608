"""Git option injection (issue 36, point 1): a remote or URL beginning with ``-`` never reaches
git as an option. The three inputs that got there, each through the real command: the bot's
``--inferencex-remote``, ``sync audit --fetch``, and the srt-slurm URL in InferenceX main's
``.gitmodules`` (read by the job that holds the cookbook token). Each is refused with one
``error:`` line and exit 2, and the command git would have run (``touch PWNED``) never runs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import forkserver
import pytest
from botworld import BOOK_TOKEN, INFX_BOT, INFX_TOKEN, MODEL, PAGE, SECTION, Replay, bot_argv
from conftest import ROOT
from ghschema import check_event
from infxrepo import InferenceXRepo
from srthistory import ERAS, SCRIPT, dated_git, runner_on_branch

INJECTED = "--upload-pack=touch PWNED"


def _env(tmp: Path) -> dict[str, str]:
    return {
        **forkserver.machine_env(),
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp),
    }


def _one_error(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


def test_bot_inferencex_remote_beginning_with_a_dash_runs_nothing(replay: Replay) -> None:
    pull = replay.open_pr(3999, "feature", replay.infx.main)
    payload = replay.pr_payload(pull, "opened")
    check_event("pull_request", payload)
    event = replay.tmp / "ev.json"
    event.write_text(json.dumps(payload))
    clone = replay.tmp / "c.git"

    def models_only(remote: str) -> subprocess.CompletedProcess[str]:
        argv = bot_argv(
            event, "--event-name", "pull_request", "--inferencex-clone", str(clone),
            "--inferencex-remote", remote, "--models-only",
        )  # fmt: skip
        return subprocess.run(
            argv, cwd=replay.tmp, env=_env(replay.tmp), capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip

    proc = models_only(INJECTED)
    assert proc.returncode == 2, proc.stderr
    line = _one_error(proc.stderr)
    assert "--inferencex-remote" in line and "begins with '-'" in line
    assert not (replay.tmp / "PWNED").exists()
    assert not clone.exists()  # refused before anything ran, the clone's git init included
    # The same event through a remote that is one: the command itself works.
    good = models_only(str(replay.infx.remote))
    assert good.returncode == 0, good.stderr


@pytest.mark.parametrize("remote", [INJECTED, "ext::sh -c touch% PWNED"])
def test_audit_fetch_remote_beginning_with_a_dash_or_a_helper_runs_nothing(
    tmp_path: Path, remote: str
) -> None:
    origin = tmp_path / "infx-git"
    shutil.copytree(ROOT / "examples" / "inferencex", origin)
    dated_git(origin, "init", "-q", "-b", "main")
    dated_git(origin, "add", "-A")
    dated_git(origin, "commit", "-q", "-m", "A")
    clone = tmp_path / "clone.git"
    dated_git(tmp_path, "clone", "-q", "--bare", str(origin), str(clone))
    # A pin only the origin has: the audit fetches it by its id from --fetch REMOTE.
    dated_git(origin, "commit", "-q", "--allow-empty", "-m", "only in origin")
    only = dated_git(origin, "rev-parse", "HEAD")
    cookbook = tmp_path / "cookbook" / "docs" / "src" / "snippets" / "agentx"
    shutil.copytree(ROOT / "cookbook_snippets", cookbook)
    module = cookbook / "deepseek-ai" / "deepseek-v4_1.jsx"
    text = module.read_text()
    for old in set(_shas(text)):
        text = text.replace(old, only)
    module.write_text(text)
    argv = [
        *forkserver.command(), "audit", "--cookbook", str(tmp_path / "cookbook"),
        "--inferencex", str(clone), "--fetch", remote, "--format", "json",
    ]  # fmt: skip
    proc = subprocess.run(
        argv, cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr
    assert "--fetch" in _one_error(proc.stderr) and proc.stdout == ""
    assert not (tmp_path / "PWNED").exists()


def _shas(text: str) -> list[str]:
    return re.findall(r'"sha": "([0-9a-f]{40})"', text)


@pytest.mark.parametrize(
    "url",
    [INJECTED, "ext::sh -c touch% PWNED", "ssh://-oProxyCommand=touch%20PWNED/x", "relative/x"],
)
def test_gitmodules_url_of_main_that_is_no_https_url_is_refused_and_runs_nothing(
    replay: Replay, tmp_path: Path, url: str
) -> None:
    tree = tmp_path / "eras-tree"
    shutil.copytree(ERAS, tree)
    submodule = "inferencex-e2e/utils/srt-slurm"
    (tree / ".gitmodules").write_text(
        f'[submodule "srt-slurm"]\n\tpath = {submodule}\n\turl = {url}\n'
    )
    infx = InferenceXRepo(tmp_path / "infx-eras", tree=tree)
    replay.infx = infx
    infx.write(SCRIPT, runner_on_branch(infx.read(SCRIPT)))
    dated_git(infx.work, "add", "-A")
    dated_git(infx.work, "commit", "-q", "-m", "m2: srt-slurm main")
    pull = replay.open_pr(4200, "m2-main", dated_git(infx.work, "rev-parse", "HEAD"))
    payload = replay.pr_payload(pull, "opened")
    check_event("pull_request", payload)
    config = tmp_path / "sync-eras.yaml"
    config.write_text(_SYNC_YAML)
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload))
    argv = [
        *forkserver.command(), "bot", "--event", str(event), "--event-name", "pull_request",
        "--config", str(config),
        "--inferencex-clone", str(replay.clone), "--inferencex-remote", str(infx.remote),
        "--cookbook", str(replay.bare), "--cache-dir", str(tmp_path / "cache"),
        "--api-url", replay.server.base_url, "--date", "2026-10-13",
        "--srt-slurm-clone", str(tmp_path / "bot-srt.git"),
    ]  # fmt: skip
    env = {
        **_env(tmp_path),
        "GITHUB_TOKEN": INFX_TOKEN,
        "COOKBOOK_TOKEN": BOOK_TOKEN,
        "SYNC_INFX_LOGIN": INFX_BOT,
        "SYNC_API_PAUSE": "0",
    }
    # run where git would run the injected command
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = _one_error(proc.stderr)
    assert ".gitmodules submodule.srt-slurm.url" in line, line
    assert not list(tmp_path.rglob("PWNED"))
    assert not replay.book_pulls()  # nothing published


_SYNC_YAML = f"""\
inferencex:
  repo: https://github.com/SemiAnalysisAI/InferenceX
  main: 4f1e2d3c5b6a79880a1b2c3d4e5f60718293a4b5
models:
  - path: {MODEL}
    model: M2
    page: {PAGE}
    section: {SECTION}
    hardware:
      - {{id: gb300, label: GB300}}
    match:
      model-prefix: [m2]
"""
