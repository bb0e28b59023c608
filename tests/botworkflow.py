"""cookbook-sync.yml's jobs around a ``botworld.Replay`` (issue 40): a push to a branch of
InferenceX dispatches the reconcile on the default branch (workflow_dispatch without input), a
merge in sgl-project/sglang is seen only by the hourly schedule, a `/use` comment is an
issue_comment; each event's gate job (`--models-only --json`) and each model's publish job runs
on a fresh runner (its own InferenceX clone and cookbook cache)."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import subprocess
from functools import cache
from itertools import count
from pathlib import Path
from typing import Any

import yaml
from botworld import BOOK, BOOK_TOKEN, INFX, INFX_BOT, INFX_TOKEN, Replay, merge_bot_branch
from conftest import ROOT
from ghserver import GitHubModel

from syncer.commands.group import cli
from syncer.errors import SyncError
from syncer.publish import evidence
from syncer.publish.run_logs import COMPLETE as RUN_RECORD

SCHEDULE = {"schedule": "17 * * * *", "repository": {"full_name": INFX}}
WORKFLOW = ".github/workflows/cookbook-sync.yml"
_runner = count(1)


def parsed_workflow() -> dict[str, Any]:
    """cookbook-sync.yml as parsed YAML (a copy of its own for the caller to change)."""
    return copy.deepcopy(_parsed((ROOT / WORKFLOW).read_text()))


@cache
def _parsed(text: str) -> dict[str, Any]:
    # Parsed once per text (libyaml's parser where PyYAML has it: the same values as
    # safe_load): the pure-Python parse of this file took 0.15 s, asked for by every push.
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def workflow_jobs() -> dict[str, Any]:
    """The jobs of cookbook-sync.yml, as parsed YAML."""
    return parsed_workflow()["jobs"]


def dispatched_inputs(tmp: Path, number: int) -> dict[str, str]:
    """The inputs of the workflow_dispatch the ``dispatch`` job's step asks ``gh`` for on a
    push to PR ``number`` (the step run by bash, as the runner runs it)."""
    tmp.mkdir(parents=True)
    [step] = workflow_jobs()["dispatch"]["steps"]
    fake_gh = tmp / "gh"
    fake_gh.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$GH_ARGS"\n')
    fake_gh.chmod(0o755)
    env = {
        "PATH": f"{tmp}:/usr/bin:/bin",
        "GH_ARGS": str(tmp / "args"),
        "GITHUB_WORKFLOW_REF": f"{INFX}/{WORKFLOW}@refs/pull/{number}/merge",
        "REPO": INFX,
        "DEFAULT_BRANCH": "main",
        "PR_NUMBER": str(number),
    }
    subprocess.run(["bash", "-e", "-c", step["run"]], env=env, check=True, timeout=30)
    args = (tmp / "args").read_text().split("\n")[:-1]
    assert args[:3] == ["workflow", "run", WORKFLOW.rsplit("/", 1)[1]], args
    fields = [args[i + 1] for i, a in enumerate(args) if a == "-f"]
    return dict(f.split("=", 1) for f in fields)


class Workflow:
    """cookbook-sync.yml's jobs around a ``Replay``: each job on a fresh runner."""

    def __init__(
        self, replay: Replay, config: Path = ROOT / "sync.yaml", *, kept_clone: bool = False
    ) -> None:
        self.r = replay
        self.gh = replay.gh
        self.config = config
        # With ``kept_clone``, the bot's InferenceX clone as the workflow's cache keeps it: the
        # gate saves its clone when no entry exists yet (a key of the tool commit and the week
        # is saved once), and every job starts from that entry; without, every clone is empty.
        self.kept_clone = kept_clone
        self.clone_entry: Path | None = None
        # The ledger each model's publish job restores from the workflow's cache and saves
        # back (actions/cache/restore and save; keyed on the model): file name -> text.
        self.cache: dict[str, dict[str, bytes]] = {}
        # The pinned runs' logs every publish job restores (the newest entry, by the prefix of
        # restore-keys) and saves back under a key of the completion records, when they
        # changed (actions/cache/restore and save): key -> the saved folder, oldest first.
        self.runs_cache: dict[str, Path] = {}

    def _argv(self, event: str, payload: dict[str, Any], runner: str, *extra: str) -> list[str]:
        tmp = self.r.tmp / runner
        tmp.mkdir()
        path = tmp / "event.json"
        path.write_text(json.dumps(payload))
        return [
            "bot",
            "--event", str(path),
            "--event-name", event,
            "--config", str(self.config),
            "--inferencex-clone", str(tmp / "inferencex.git"),
            "--inferencex-remote", str(self.r.infx.remote),
            "--cookbook", str(self.r.bare),
            "--cache-dir", str(tmp / "cookbook"),
            "--api-url", self.r.server.base_url,
            "--date", "2026-10-13",
            *extra,
        ]  # fmt: skip

    def run(self, event: str, payload: dict[str, Any], *, fails: bool = False) -> str:
        """The gate, then one publish job per model it names (each must succeed, or with
        ``fails`` stop on bad input, exit 2 on the command line); their output."""
        runner = f"gate-{next(_runner)}"
        handoff = self.r.tmp / runner / "handoff.json"
        argv = self._argv(event, payload, runner, "--models-only", "--json")
        self._restore_clone(runner)
        # The gate's GITHUB_TOKEN (pull-requests: read) lists the scheduled run's open PRs.
        gate_env = {"GITHUB_TOKEN": INFX_TOKEN, "SYNC_API_PAUSE": "0"}
        gate = self.invoke("gate", [*argv, "--handoff", str(handoff)], gate_env, runner)
        assert gate.exit_code == 0, gate.output
        self._save_clone(runner)
        out = []
        env = {
            "GITHUB_TOKEN": INFX_TOKEN,
            "COOKBOOK_TOKEN": BOOK_TOKEN,
            "SYNC_INFX_LOGIN": INFX_BOT,
            "SYNC_API_PAUSE": "0",
        }
        for model in json.loads(gate.output):
            runner = f"publish-{next(_runner)}"
            argv = self._argv(event, payload, runner, "--model", model)
            # The job's output of the gate, as a file; its ledger restored from the cache.
            given = self.r.tmp / runner / "handoff.json"
            given.write_text(handoff.read_text())
            ledger = self.r.tmp / runner / "ledger"
            ledger.mkdir()
            for name, data in self.cache.get(model, {}).items():
                (ledger / name).write_bytes(data)
            extra = ["--handoff", str(given), "--ledger", str(ledger)]
            self._restore_clone(runner)
            runs = self.r.tmp / runner / "cookbook" / "runs"
            self._restore_runs(runs)
            done = self.invoke("publish", [*argv, *extra], env, runner)
            # Saved whatever the job's outcome (if: always()), under a key of its content.
            self.cache[model] = {f.name: f.read_bytes() for f in sorted(ledger.iterdir())}
            self._save_runs(runs)
            if fails:
                assert isinstance(done.exception, SyncError), done.output
            else:
                assert done.exit_code == 0, done.output + repr(done.exception)
            out.append(done.output)
        return "".join(out)

    def _restore_clone(self, runner: str) -> None:
        if self.kept_clone and self.clone_entry is not None:
            shutil.copytree(self.clone_entry, self.r.tmp / runner / "inferencex.git", symlinks=True)

    def _save_clone(self, runner: str) -> None:
        clone = self.r.tmp / runner / "inferencex.git"
        if self.kept_clone and self.clone_entry is None and clone.is_dir():
            self.clone_entry = self.r.tmp / "actions-cache" / "inferencex.git"
            shutil.copytree(clone, self.clone_entry, symlinks=True)

    def _restore_runs(self, runs: Path) -> None:
        if self.runs_cache:
            newest = list(self.runs_cache.values())[-1]
            shutil.copytree(newest, runs)  # file times kept, as the cache's tar keeps them

    def _save_runs(self, runs: Path) -> None:
        """As the save step: only when a completion record is there (its ``if:``), under a key
        of the records (``hashFiles``: an existing key is not saved again)."""
        records = sorted(runs.glob(f"*/*/{RUN_RECORD}"))
        if not records:
            return
        digest = hashlib.sha256()
        for record in records:
            digest.update(hashlib.sha256(record.read_bytes()).digest())
        key = f"cookbook-sync-runs-{digest.hexdigest()}"
        if key not in self.runs_cache:
            kept = self.r.tmp / "actions-cache" / f"runs-{len(self.runs_cache)}"
            shutil.copytree(runs, kept)
            self.runs_cache[key] = kept

    def invoke(self, job: str, argv: list[str], env: dict[str, str], runner: str) -> Any:
        """One job's ``sync bot`` on its runner (``self.r.tmp / runner``)."""
        return self.r.runner.invoke(cli, argv, env=env)

    def pushed(self, pull: dict[str, Any], *, fails: bool = False) -> str:
        """A pull_request event of a branch of InferenceX: its run only dispatches the bot on
        the default branch. The dispatch job's own step is run (its ``gh`` records what it was
        asked), and the workflow_dispatch it asks for is what runs."""
        inputs = dispatched_inputs(self.r.tmp / f"dispatch-{next(_runner)}", pull["number"])
        github = GitHubModel()
        github.base = "https://api.github.com"
        payload = github.workflow_dispatch_event(
            INFX,
            {"cookbook_pr": "", **inputs},
            sender="author",
            workflow=".github/workflows/cookbook-sync.yml",
        )
        return self.run("workflow_dispatch", payload, fails=fails)

    def schedule(self) -> str:
        return self.run("schedule", SCHEDULE)

    def comment(self, pull: dict[str, Any], body: str, at: str) -> str:
        made = self.gh.add_comment(
            INFX, pull["number"], body, association="COLLABORATOR", created_at=at, user="nvpohanh"
        )
        return self.run("issue_comment", self.gh.issue_comment_event(INFX, made))

    def merge_cookbook(self, number: int) -> None:
        """A maintainer merges the bot's PR in the cookbook: no event reaches InferenceX."""
        merge_bot_branch(self.r.bare, self.r.tmp / f"maintainer-{number}")
        pull = self.gh.repo(BOOK).pulls[number]
        pull["state"], pull["merged"] = "closed", True

    def writes_since(self, start: int) -> list[tuple[str, str]]:
        return [(r.method, r.path) for r in self.gh.log[start:] if r.method != "GET"]

    def quiet_schedule(self) -> None:
        """An hourly run between events: it writes nothing."""
        start = len(self.gh.log)
        self.schedule()
        assert self.writes_since(start) == [], self.writes_since(start)

    def raw(self, number: int) -> list[str]:
        """The bot's comments on InferenceX PR ``number`` as posted, oldest first (its evidence
        records, kept beside them, are not part of the thread's story)."""
        mine = [
            c
            for c in self.gh.comments_on(INFX, number)
            if c["user"] == INFX_BOT and not evidence.is_record(c["body"])
        ]
        return [c["body"] for c in sorted(mine, key=lambda c: c["id"])]
