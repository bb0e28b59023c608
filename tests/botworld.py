"""The bot's test world: the local GitHub server, a real bare cookbook repository, the bundled
InferenceX example and its run served as artifacts (``World``), the InferenceX side as real
repositories with PR heads (``Replay``), and ``sync bot`` as the workflow runs it (``sync_bot``).
Shared by every test of the bot; the fixtures ``world`` and ``replay`` are in conftest."""

from __future__ import annotations

import html as html_lib
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
import zipfile
from functools import cache
from pathlib import Path
from typing import Any

import forkserver
from click.testing import CliRunner
from conftest import QUIET_GIT, ROOT, TESTS, match_golden
from ghschema import check_event
from ghserver import GitHubModel, GitHubServer
from infxrepo import InferenceXRepo
from markdown_it import MarkdownIt

from syncer.commands.group import cli
from syncer.cookbook.jsmodule import parse_module
from syncer.github.client import GitHubClient
from syncer.github.plan import Plan
from syncer.publish import evidence
from syncer.publish import status as st
from syncer.publish.bot import Bot, Settings
from syncer.publish.git import Identity
from syncer.syncconfig import load_sync_config


def git(*args: str, cwd: Path) -> str:
    env = {
        "GIT_AUTHOR_NAME": "Human",
        "GIT_AUTHOR_EMAIL": "human@example.com",
        "GIT_COMMITTER_NAME": "Human",
        "GIT_COMMITTER_EMAIL": "human@example.com",
        "HOME": str(cwd),
        "PATH": "/usr/bin:/bin",
        **QUIET_GIT,
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


FIXTURES = TESTS / "fixtures" / "bot"
INFX_TOKEN = "ghs_" + "I1" * 18
BOOK_TOKEN = "ghp_" + "C2" * 18
INFX = "SemiAnalysisAI/InferenceX"
BOOK = "sgl-project/sglang"
PR = 3859
HEAD = "6b07b8e6930edcb8309cb59ca758fce5a3ef3f6b"
EARLIER = "1" * 40
RUN = 41000000001
KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
MODULE = "docs/src/snippets/agentx/deepseek-ai/deepseek-v4_1.jsx"
PAGE = "docs/cookbook/autoregressive/DeepSeek/DeepSeek-V4_1.mdx"
BRANCH = "infx-sync/deepseek-ai/deepseek-v4_1"
INFX_BOT = "github-actions[bot]"
BOOK_BOT = "infx-sync-bot"
PAGE_URL = (
    "https://docs.sglang.io/cookbook/autoregressive/DeepSeek/DeepSeek-V4_1"
    "#agentic-long-context-deployment"
)


@cache
def run_artifacts(tamper: bool = False) -> dict[str, bytes]:
    """The example run's log directories as GitHub would serve them (one zip per artifact)."""
    out: dict[str, bytes] = {"bmk_agentic_results": b"{}"}
    for folder in sorted((ROOT / "examples/runs/41000000001").iterdir()):
        if not folder.is_dir():
            continue
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in sorted(folder.rglob("*")):
                if f.is_file():
                    data = f.read_bytes()
                    if tamper and b"Command:" in data:
                        # What a run that launched something else would have logged.
                        data = data.replace(
                            b"--mem-fraction-static 0.", b"--mem-fraction-static 0.1"
                        )
                    zf.writestr(str(f.relative_to(folder)), data)
        out[folder.name] = buf.getvalue()
    return out


_SEEDED = tempfile.TemporaryDirectory(prefix="bot-cookbook-")


@cache
def seeded_cookbook() -> Path:
    """A bare cookbook whose main holds the model page, and a working clone of it: made once
    per test process, copied by each World (never changed in place)."""
    root = Path(_SEEDED.name)
    bare, seed = root / "sglang.git", root / "seed"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(bare), cwd=root)
    # the bot pushes with an environment of its own: this repository says no gc after a push
    with (bare / "config").open("a") as config:
        config.write("[receive]\n\tautogc = false\n")
    git("clone", "--quiet", str(bare), str(seed), cwd=root)
    page = seed / PAGE
    page.parent.mkdir(parents=True)
    page.write_text((FIXTURES / "DeepSeek-V4_1.mdx").read_text())
    git("add", ".", cwd=seed)
    git("commit", "--quiet", "-m", "cookbook page", cwd=seed)
    git("push", "--quiet", "origin", "HEAD:main", cwd=seed)
    return root


def check_golden(golden: Path, name: str, text: str) -> None:
    match_golden(golden / name, text)


def plain(markdown: str) -> str:
    """What a reader sees: markdown rendered, tags dropped, whitespace collapsed."""
    html = MarkdownIt("commonmark").render(markdown)
    text = html_lib.unescape(re.sub(r"<[^>]+>", "", html))
    return re.sub(r"\s+", " ", text.replace("\u200b", "")).strip()


def is_status(comment: dict[str, Any]) -> bool:
    """The bot's status comment (its other comments are evidence records)."""
    return comment["user"] == INFX_BOT and comment["body"].startswith(st.STATUS_MARKER)


def fake_github(server: GitHubServer) -> GitHubModel:
    """The fake GitHub of a bot world: both bots' tokens, and the cookbook's repository."""
    model = server.model
    model.add_token(INFX_TOKEN, INFX_BOT)
    model.add_token(BOOK_TOKEN, BOOK_BOT)
    model.repo(BOOK)
    return model


RUN_AT = "2026-10-13T08:00:00Z"  # when the pinned run was created


def add_pinned_run(
    model: GitHubModel, head_sha: str, head_branch: str, **kw: Any
) -> dict[str, Any]:
    """Run ``RUN`` of InferenceX on ``head_sha``, its sweep logs as the artifacts (unless
    ``artifacts`` says otherwise)."""
    kw.setdefault("artifacts", run_artifacts())
    return model.add_run(
        INFX, RUN, head_sha=head_sha, head_branch=head_branch, created_at=RUN_AT, **kw
    )


def merge_bot_branch(bare: Path, clone: Path) -> None:
    """A maintainer merges the bot's branch into the cookbook's main (in a clone at ``clone``)."""
    git("clone", "--quiet", str(bare), str(clone), cwd=clone.parent)
    git("merge", "--quiet", "--no-ff", "-m", "Merge bot PR", f"origin/{BRANCH}", cwd=clone)
    git("push", "--quiet", "origin", "main", cwd=clone)


def bot_argv(event_path: Path, *args: str) -> list[str]:
    """The command line of ``sync bot`` on ``event_path`` with the repository's sync.yaml."""
    return [
        *forkserver.command(),
        "bot",
        "--event",
        str(event_path),
        "--config",
        str(ROOT / "sync.yaml"),
        *args,
    ]


class World:
    def __init__(self, tmp: Path, server: GitHubServer) -> None:
        self.tmp = tmp
        self.server = server
        self.gh = fake_github(server)
        self.pull = self.gh.add_pull(
            INFX, head="dsv41flash-gb300", number=PR, commits=[EARLIER, HEAD], user="contributor"
        )
        # The other PR of sync.yaml, whose in-progress config shares the cookbook PR.
        self.other = self.gh.add_pull(INFX, head="disagg", number=3871, commits=["9" * 40])
        add_pinned_run(self.gh, HEAD, "dsv41flash-gb300")
        # A copy of the one cookbook this process seeded (five git commands, once), with the
        # working clone pointed at the copy.
        template = seeded_cookbook()
        self.bare = tmp / "sglang.git"
        shutil.copytree(template / "sglang.git", self.bare, symlinks=True)
        # The fake answers a PR's head from the real branch (head invalid, no commits between).
        self.gh.git_dirs[BOOK] = self.bare
        seed = tmp / "seed"
        shutil.copytree(template / "seed", seed, symlinks=True)
        git("remote", "set-url", "origin", str(self.bare), cwd=seed)
        self.config = load_sync_config(ROOT / "sync.yaml")
        self.inferencex = ROOT / "examples/inferencex"
        self.push_repo: str | None = None
        self.push_url: str | None = None
        self.model: str | None = None  # the workflow's matrix job: one model per run

    def bot(self, *, dry_run: bool = False) -> tuple[Bot, Plan]:
        plan = Plan(dry_run=dry_run)
        kw = {"base_url": self.server.base_url, "plan": plan, "pause": 0, "backoff": 0.01}
        settings = Settings(
            config=self.config,
            inferencex=self.inferencex,
            cookbook=str(self.bare),
            cache_dir=self.tmp / "cache",
            today="2026-10-13",
            push_repo=self.push_repo,
            push_url=self.push_url,
            model=self.model,
        )
        bot = Bot(
            settings,
            infx=GitHubClient(INFX_TOKEN, login=INFX_BOT, **kw),
            cookbook_gh=GitHubClient(BOOK_TOKEN, **kw),
            plan=plan,
            identity=Identity(),
        )
        return bot, plan

    def comment(
        self,
        body: str,
        *,
        association: str = "MEMBER",
        at: str = "2026-10-13T09:00:00Z",
        user: str = "maintainer",
    ) -> dict[str, Any]:
        return self.gh.add_comment(
            INFX, PR, body, association=association, created_at=at, user=user
        )

    def comment_event(
        self, comment: dict[str, Any], action: str = "created", association: str | None = None
    ) -> dict[str, Any]:
        return self.gh.issue_comment_event(INFX, comment, action, association=association)

    def pr_event(self, action: str, number: int = PR, repo: str = INFX) -> dict[str, Any]:
        return self.gh.pull_request_event(repo, number, action)

    def send(self, event: str, payload: dict[str, Any], **kw: Any):
        """Hand the bot ``payload``, which must be GitHub's shape of ``event``."""
        bot, plan = self.bot(**kw)
        return bot.handle(event, check_event(event, payload)), plan

    def status(self) -> dict[str, Any]:
        [comment] = [c for c in self.gh.comments_on(INFX, PR) if is_status(c)]
        return comment

    def book_pulls(self) -> list[dict[str, Any]]:
        return list(self.gh.repo(BOOK).pulls.values())

    def tip(self, ref: str = BRANCH) -> str | None:
        out = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", ref],
            cwd=self.bare,
            capture_output=True,
            text=True,
        )
        return out.stdout.strip() or None

    def show(self, path: str, ref: str = BRANCH) -> str:
        return git("show", f"{ref}:{path}", cwd=self.bare)

    def reactions(self, comment: dict[str, Any]) -> list[str]:
        return [r["content"] for r in comment["reactions"]]


def first_use(world: World) -> dict[str, Any]:
    comment = world.comment(f"Pinning the measured run.\n/use {RUN}")
    world.send("issue_comment", world.comment_event(comment))
    return comment


TOKENS = (INFX_TOKEN, BOOK_TOKEN)


def sync_bot(
    world: World,
    payload: object,
    *extra: str,
    event: str = "issue_comment",
    raw: str | None = None,
    tokens: bool = True,
    api_url: str | None = None,
    malformed: bool = False,
    extra_env: dict[str, str] | None = None,
):
    """``sync bot`` on ``payload``, which must be GitHub's shape of ``event`` unless the test
    is about a malformed event file (``malformed``, or ``raw`` text)."""
    if raw is None and not malformed:
        check_event(event, payload)
    path = world.tmp / "event.json"
    path.write_text(raw if raw is not None else json.dumps(payload))
    (world.tmp / "tmp").mkdir(exist_ok=True)
    env = {
        **forkserver.machine_env(),  # the machine's, not the bot's: as CI would have it
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(world.tmp),
        # The run's user cache (conftest), as a runner's ~/.cache outlives its jobs: the
        # templates compiled there once per run, not again by each command (a tenth of a
        # command's CPU under PYTHONDONTWRITEBYTECODE); the bot's own clones go to --cache-dir.
        **{k: os.environ[k] for k in ("XDG_CACHE_HOME",) if k in os.environ},
        "TMPDIR": str(world.tmp / "tmp"),  # its own: what the bot leaves there is seen
        "GITHUB_EVENT_NAME": event,
        "SYNC_INFX_LOGIN": INFX_BOT,
        "SYNC_API_PAUSE": "0",
    }
    if tokens:
        env.update({"GITHUB_TOKEN": INFX_TOKEN, "COOKBOOK_TOKEN": BOOK_TOKEN})
    env.update(extra_env or {})
    proc = subprocess.run(
        bot_argv(
            path,
            "--inferencex",
            str(world.inferencex),
            "--cookbook",
            str(world.bare),
            "--cache-dir",
            str(world.tmp / "cache"),
            "--api-url",
            api_url or world.server.base_url,
            "--date",
            "2026-10-13",
            *extra,
        ),
        cwd=world.tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc


MODEL = "deepseek-ai/deepseek-v4_1"
SECTION = "Agentic Long-Context Deployment"
# A key that no file of this repository names: the bot must find it from the PR alone.
SEED_KEY = "-".join(["dsv41flash", "fp4", "gb300", "sglang", "agentic", "seedarm"])
SEED_PR = 3901
CHANGELOG = "inferencex-e2e/perf-changelog.yaml"


class Replay:
    def __init__(self, tmp: Path, server: GitHubServer) -> None:
        self.tmp = tmp
        self.server = server
        self.gh = fake_github(server)
        self.infx = InferenceXRepo(tmp / "infx")
        self.clone = tmp / "bot-clone.git"  # created by the bot on its first run
        template = seeded_cookbook()
        self.bare = tmp / "sglang.git"
        shutil.copytree(template / "sglang.git", self.bare, symlinks=True)
        self.runner = CliRunner()

    # -- InferenceX ------------------------------------------------------------------------

    def open_pr(self, number: int, branch: str, commit: str) -> dict[str, Any]:
        self.infx.publish_pr(number, commit)
        return self.gh.add_pull(INFX, head=branch, number=number, commits=[commit], user="author")

    def push(self, pull: dict[str, Any], commit: str) -> None:
        self.infx.publish_pr(pull["number"], commit)
        pull["commits"].append(commit)

    def pr_payload(self, pull: dict[str, Any], action: str) -> dict[str, Any]:
        """GitHub's ``pull_request`` payload of ``pull`` as it is now, its base at main."""
        pull["base_sha"] = self.infx.main
        return self.gh.pull_request_event(INFX, pull["number"], action)

    def pr_event(self, pull: dict[str, Any], action: str, *extra: str) -> None:
        self.send("pull_request", self.pr_payload(pull, action), *extra)

    def comment(self, pull: dict[str, Any], body: str, at: str) -> None:
        made = self.gh.add_comment(
            INFX, pull["number"], body, association="COLLABORATOR", created_at=at, user="nvpohanh"
        )
        self.send("issue_comment", self.gh.issue_comment_event(INFX, made))

    # -- the cookbook ----------------------------------------------------------------------

    def merge_cookbook(self, number: int) -> None:
        merge_bot_branch(self.bare, self.tmp / f"maintainer-{number}")
        pull = self.gh.repo(BOOK).pulls[number]
        pull["state"], pull["merged"] = "closed", True
        self.send("pull_request", self.gh.pull_request_event(BOOK, number, "closed"))

    def book_pulls(self) -> list[dict[str, Any]]:
        return list(self.gh.repo(BOOK).pulls.values())

    def module(self, ref: str = BRANCH) -> Any:
        return parse_module(git("show", f"{ref}:{MODULE}", cwd=self.bare), MODULE).value

    # -- the bot ---------------------------------------------------------------------------

    def args(self, event: str, payload: dict[str, Any], *extra: str) -> list[str]:
        path = self.tmp / "event.json"
        path.write_text(json.dumps(payload))
        return [
            "bot",
            "--event", str(path),
            "--event-name", event,
            "--config", str(ROOT / "sync.yaml"),
            "--inferencex-clone", str(self.clone),
            "--inferencex-remote", str(self.infx.remote),
            "--cookbook", str(self.bare),
            "--cache-dir", str(self.tmp / "cache"),
            "--api-url", self.server.base_url,
            "--date", "2026-10-13",
            *extra,
        ]  # fmt: skip

    def send(self, event: str, payload: dict[str, Any], *extra: str) -> str:
        check_event(event, payload)  # GitHub's shape of the event, as the workflow gets it
        env = {
            "GITHUB_TOKEN": INFX_TOKEN,
            "COOKBOOK_TOKEN": BOOK_TOKEN,
            "SYNC_INFX_LOGIN": INFX_BOT,
            "SYNC_API_PAUSE": "0",
        }
        result = self.runner.invoke(cli, self.args(event, payload, *extra), env=env)
        assert result.exit_code == 0, result.output + repr(result.exception)
        return result.output

    def models_only(self, event: str, payload: dict[str, Any]) -> list[str]:
        result = self.runner.invoke(cli, self.args(event, payload, "--models-only", "--json"))
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    def bot_comments(self, number: int) -> list[str]:
        """The bot's comments on InferenceX PR ``number``, as a reader sees them, oldest first
        (its evidence records, kept beside them, are not part of the thread's story)."""
        mine = [
            c
            for c in self.gh.comments_on(INFX, number)
            if c["user"] == INFX_BOT and not evidence.is_record(c["body"])
        ]
        return [plain(c["body"]) for c in sorted(mine, key=lambda c: c["id"])]
