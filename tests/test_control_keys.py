"""Control characters in a config key (issue 36, point 3): a master-config key with a line
break and an ESC was accepted; its line break reached the Actions log of the token-holding job
as a ``::warning`` workflow command, and the key went raw into the cookbook commit message.

Keys (and the labels printed beside them) are held to the shape InferenceX writes
(``syncer.identifiers``) when the master config is read, before anything is rendered, logged
or committed: through ``sync render`` an error line naming the file and the key's line, exit 2;
through the bot on a PR (the schema-validated fake GitHub, a real InferenceX repository and a
real cookbook) the same, with nothing committed, nothing posted, and no line of its output
beginning with ``::`` or holding a raw control character.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import forkserver
import pytest
from botworld import BOOK_TOKEN, INFX, INFX_BOT, INFX_TOKEN, SEED_KEY, Replay, bot_argv
from conftest import ROOT
from ghschema import check_event
from infxrepo import MASTER, add_key

KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
INJECTED = "\n::warning ::injected\x1b[31m"


def _env(tmp: Path) -> dict[str, str]:
    return {**forkserver.machine_env(), "PATH": os.environ.get("PATH", ""), "HOME": str(tmp)}


def _no_raw_controls(text: str) -> None:
    assert "\x1b" not in text and "\r" not in text
    assert not any(line.lstrip().startswith("::") for line in text.splitlines()), text


@pytest.mark.parametrize(
    ("where", "value"),
    [("key", SEED_KEY + INJECTED), ("model-prefix", "dsv41" + INJECTED), ("key", "a b")],
)
def test_render_refuses_a_master_key_or_label_of_another_shape(
    tmp_path: Path, where: str, value: str
) -> None:
    infx = tmp_path / "inferencex"
    shutil.copytree(ROOT / "examples" / "inferencex", infx)
    master = infx / MASTER
    before = len(master.read_text().splitlines())
    if where == "key":
        master.write_text(add_key(master.read_text(), value))
    else:
        master.write_text(add_key(master.read_text(), SEED_KEY, prefix=value))
    added = master.read_text().splitlines()[before:]
    needle = "model-prefix" if where == "model-prefix" else value.split("\n")[0]
    line = before + 1 + next(i for i, text in enumerate(added) if needle in text)
    argv = [*forkserver.command(), "render", KEY, "--inferencex", str(infx)]
    proc = subprocess.run(argv, env=_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    [error] = proc.stderr.splitlines()
    assert error.startswith(f"error: {master}:{line}: ")
    assert "shape InferenceX writes" in error
    _no_raw_controls(proc.stderr)


def test_bot_on_a_pr_whose_key_holds_a_line_break_and_esc_logs_and_commits_nothing_raw(
    replay: Replay,
) -> None:
    infx = replay.infx
    infx.write(MASTER, add_key(infx.read(MASTER), SEED_KEY + INJECTED))
    pull = replay.open_pr(3950, "bad-key", infx.commit("a key with a line break"))
    payload = replay.pr_payload(pull, "opened")
    check_event("pull_request", payload)
    event = replay.tmp / "event.json"
    event.write_text(json.dumps(payload))
    argv = bot_argv(
        event, "--event-name", "pull_request",
        "--inferencex-clone", str(replay.clone), "--inferencex-remote", str(infx.remote),
        "--cookbook", str(replay.bare), "--cache-dir", str(replay.tmp / "cache"),
        "--api-url", replay.server.base_url, "--date", "2026-10-13",
    )  # fmt: skip
    env = {
        **_env(replay.tmp),
        "GITHUB_TOKEN": INFX_TOKEN,
        "COOKBOOK_TOKEN": BOOK_TOKEN,
        "SYNC_INFX_LOGIN": INFX_BOT,
        "SYNC_API_PAUSE": "0",
    }
    proc = subprocess.run(
        argv, cwd=replay.tmp, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    _no_raw_controls(proc.stdout + proc.stderr)
    [error] = proc.stderr.splitlines()
    assert error.startswith("error: ") and MASTER in error and "config key" in error
    assert "\\n::warning ::injected\\u001b[31m" in error  # shown, never written
    log = subprocess.run(
        ["git", "log", "--all", "--format=%B"], cwd=replay.bare, capture_output=True, text=True
    ).stdout
    assert "injected" not in log  # no commit carries it
    assert not replay.book_pulls()
    assert not [c for c in replay.gh.comments_on(INFX, 3950) if "injected" in c["body"]]
