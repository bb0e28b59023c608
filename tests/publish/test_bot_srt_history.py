"""The bot renders a key whose runner cloned an srt-slurm branch as that branch was at the date
of the commit the key is read at (a tree written from git objects is no checkout), from its own
srt-slurm clone (``--srt-slurm-clone``), fetched from the URL InferenceX main's .gitmodules
gives srt-slurm; the cells and the cookbook PR body name the commit applied.

Through ``sync bot`` (click, in-process) with the local GitHub server, a real bare cookbook, a
real InferenceX repository built from the eras fixture and our own dated srt-slurm history.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from botworld import BOOK_TOKEN, INFX_BOT, INFX_TOKEN, MODEL, PAGE, SECTION, Replay
from conftest import TESTS
from ghschema import check_event
from infxrepo import InferenceXRepo
from srthistory import dated_git, runner_on_branch, srt_slurm_history

from syncer.commands.group import cli

ERAS = TESTS / "fixtures" / "eras" / "inferencex"
SCRIPT = "runners/launch_gb300-test.sh"
AGG = "m2-fp4-gb300-dynamo-sglang-agentic-agg"
SUBMODULE = "inferencex-e2e/utils/srt-slurm"
SYNC_YAML = f"""\
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


def _world(replay: Replay, tmp: Path) -> tuple[dict, dict[str, str]]:
    """InferenceX main: the eras tree, its .gitmodules naming our srt-slurm; PR 4200 (dated
    2026-08-05) makes the m2 keys' runner check out srt-slurm's ``main``."""
    srt = srt_slurm_history(tmp / "srt-slurm")
    tree = tmp / "eras-tree"
    shutil.copytree(ERAS, tree)
    (tree / ".gitmodules").write_text(
        f'[submodule "srt-slurm"]\n\tpath = {SUBMODULE}\n\turl = {srt["repo"]}\n'
    )
    infx = InferenceXRepo(tmp / "infx-eras", tree=tree)
    replay.infx = infx
    script = infx.read(SCRIPT)
    infx.write(SCRIPT, runner_on_branch(script))
    dated_git(infx.work, "add", "-A")
    dated_git(
        infx.work, "commit", "-q", "-m", "m2: srt-slurm main", date="2026-08-05T12:00:00+00:00"
    )
    head = dated_git(infx.work, "rev-parse", "HEAD")
    pull = replay.open_pr(4200, "m2-main", head)
    return pull, srt


def _send(replay: Replay, payload: dict, *extra: str) -> str:
    check_event("pull_request", payload)
    config = replay.tmp / "sync-eras.yaml"
    config.write_text(SYNC_YAML)
    event = replay.tmp / "event.json"
    event.write_text(json.dumps(payload))
    args = [
        "bot", "--event", str(event), "--event-name", "pull_request", "--config", str(config),
        "--inferencex-clone", str(replay.clone), "--inferencex-remote", str(replay.infx.remote),
        "--cookbook", str(replay.bare), "--cache-dir", str(replay.tmp / "cache"),
        "--api-url", replay.server.base_url, "--date", "2026-10-13", *extra,
    ]  # fmt: skip
    env = {
        "GITHUB_TOKEN": INFX_TOKEN,
        "COOKBOOK_TOKEN": BOOK_TOKEN,
        "SYNC_INFX_LOGIN": INFX_BOT,
        "SYNC_API_PAUSE": "0",
    }
    result = replay.runner.invoke(cli, args, env=env)
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result.output


def _agg_cells(replay: Replay) -> list[dict]:
    return [c for c in replay.module()["cells"] if c["configKey"] == AGG]


def test_the_bot_takes_the_branch_at_the_commits_date_and_says_which_commit(replay, tmp_path):
    pull, srt = _world(replay, tmp_path)
    srt_clone = tmp_path / "bot-srt.git"  # created by the bot, fetched from main's URL
    _send(replay, replay.pr_payload(pull, "opened"), "--srt-slurm-clone", str(srt_clone))
    cells = _agg_cells(replay)
    assert cells and {c["prov"].get("srtSlurm") for c in cells} == {srt["aug"]}
    [book] = replay.book_pulls()
    assert (
        f"{AGG}: rendered under srt-slurm main as of 2026-08-05T12:00:00+00:00 = {srt['aug']} "
        "(1.x rules, carrying v1.0.41"
    ) in book["body"]


def test_without_an_srt_slurm_clone_the_body_says_the_branch_was_judged_at_its_head(
    replay, tmp_path
):
    pull, _ = _world(replay, tmp_path)
    _send(replay, replay.pr_payload(pull, "opened"))
    assert {c["prov"].get("srtSlurm") for c in _agg_cells(replay)} == {None}
    [book] = replay.book_pulls()
    assert (
        f"{AGG}: rendered under srt-slurm main (a branch, judged as read at its head"
        in (book["body"])
    )
