"""docs/bot.md's rehearsal run as written (issue 37.6 and its acceptance): the ```bash blocks of
its section "The rehearsal" are read from the document and run by bash, in the order given,
from this checkout, against local git repositories and the project's fake GitHub. Only the
document's placeholders change: the account ``YOU``, the ``https://github.com/…`` URLs of the
test repository and the sglang fork (local bare repositories), and the two tokens, typed on
stdin where the document reads them; ``GITHUB_API_URL`` (which the tool honours, as Actions
sets it) names the fake. What the document says the commands print and leave behind (a cookbook
PR in the fork, the comment naming it, a second run writing nothing) is checked against what
they did. Also: the workflow answers the repository it runs in and opens its PRs where
COOKBOOK_SYNC_OWNER/REPOSITORY say, and the documented dry run takes a local cookbook without
an origin."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from botworld import MODULE, PAGE, git, plain, seeded_cookbook
from conftest import ROOT
from ghserver import GitHubModel, GitHubServer
from infxrepo import DSPARK_RECIPE, InferenceXRepo

DOC = ROOT / "docs" / "bot.md"
YOU = "rehearser"
INFX_TOKEN = "github_pat_" + "R1" * 20
BOOK_TOKEN = "github_pat_" + "S2" * 20
KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"


def section(title: str) -> str:
    """The text of docs/bot.md's section ``title`` (up to the next heading)."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n{title}\n")
    end = re.compile(r"^#{1,3} ", re.M).search(text, start + len(title) + 2)
    return text[start : end.start() if end else len(text)]


def bash_blocks(text: str) -> list[str]:
    """The ```bash blocks of ``text``, list-item indentation removed."""
    found = re.findall(r"^( *)```bash\n(.*?)^\1```$", text, re.M | re.S)
    return [textwrap.dedent(body) for _, body in found]


def quoted(text: str, before: str) -> list[str]:
    """The `code` spans of the sentence of ``text`` that starts with ``before``."""
    start = text.index(before)
    end = re.compile(r"\.\s|:\n").search(text, start)
    sentence = text[start : end.start() if end else len(text)]
    return [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", sentence)]


class Rehearsal:
    """The GitHub side of the rehearsal: the test repository and the sglang fork (local bare
    repositories standing for their GitHub URLs), and the fake GitHub serving both."""

    def __init__(self, tmp: Path, gh: GitHubModel, base_url: str) -> None:
        self.tmp, self.gh, self.base_url = tmp, gh, base_url
        self.infx_repo, self.book_repo = f"{YOU}/infx-rehearsal", f"{YOU}/sglang"
        gh.add_token(INFX_TOKEN, YOU)
        gh.add_token(BOOK_TOKEN, YOU)
        # "an empty repository YOU/infx-rehearsal"
        self.infx = tmp / "github" / "infx-rehearsal.git"
        self.infx.parent.mkdir()
        git("init", "--quiet", "--bare", "--initial-branch=main", str(self.infx), cwd=tmp)
        gh.repo(self.infx_repo)
        # "a fork YOU/sglang of sgl-project/sglang" (its main holds the model's page)
        self.book = tmp / "github" / "sglang.git"
        shutil.copytree(seeded_cookbook() / "sglang.git", self.book, symlinks=True)
        gh.repo(self.book_repo)
        gh.git_dirs[self.book_repo] = self.book
        self.home = tmp / "home"
        self.home.mkdir()
        (self.home / ".gitconfig").write_text(
            "[user]\n\tname = Rehearser\n\temail = rehearser@example.com\n"
        )
        (tmp / "tmp").mkdir()

    def swap(self, block: str) -> str:
        text = re.sub(r"\bYOU\b", YOU, block)
        for url, path in (
            (f"https://github.com/{self.infx_repo}.git", self.infx),
            (f"https://github.com/{self.book_repo}.git", self.book),
        ):
            text = text.replace(url, shlex.quote(str(path)))
        assert "https://github.com/" not in text, f"a URL this test does not serve:\n{text}"
        return text

    def bash(self, *blocks: str, typed: str = "") -> subprocess.CompletedProcess[str]:
        """``blocks`` as one shell session would run them, in this checkout."""
        script = "\n".join(self.swap(b) for b in blocks)
        venv = Path(sys.executable).parent
        assert (venv / "cookbook-sync").is_file(), f"no cookbook-sync beside {sys.executable}"
        env = {
            "PATH": f"{venv}:/usr/bin:/bin",
            "HOME": str(self.home),
            "TMPDIR": str(self.tmp / "tmp"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GITHUB_API_URL": self.base_url,
            "SYNC_API_PAUSE": "0",
            "LANG": "C.UTF-8",
        }
        return subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=ROOT, env=env, input=typed, capture_output=True, text=True, timeout=600,
        )  # fmt: skip

    def open_pr(self) -> dict:
        """Step 3, on GitHub: the PR rehearsal → main, kept as refs/pull/1/head."""
        head = git("rev-parse", "refs/heads/rehearsal", cwd=self.infx).strip()
        main = git("rev-parse", "refs/heads/main", cwd=self.infx).strip()
        git("update-ref", "refs/pull/1/head", head, cwd=self.infx)
        return self.gh.add_pull(
            self.infx_repo, head="rehearsal", number=1, commits=[head], user=YOU, base_sha=main
        )

    def writes(self, start: int = 0) -> list[tuple[str, str]]:
        return [(r.method, r.path) for r in self.gh.log[start:] if r.method != "GET"]


@pytest.fixture
def rehearsal(tmp_path):
    server = GitHubServer()
    with server as gh:
        yield Rehearsal(tmp_path, gh, server.base_url)


def test_the_documented_rehearsal_ends_with_a_cookbook_pr_and_its_comment(rehearsal) -> None:
    text = section("### The rehearsal")
    blocks = bash_blocks(text)
    assert len(blocks) == 5, "fill main, the PR's branch, the tokens, the gate, the publish job"
    fill, branch, tokens, gate, publish = blocks
    typed = f"{INFX_TOKEN}\n{BOOK_TOKEN}\n"

    done = rehearsal.bash(fill, branch)
    assert done.returncode == 0, done.stderr
    changed = git("diff", "--name-only", "main", "rehearsal", cwd=rehearsal.infx).split()
    assert changed == [DSPARK_RECIPE]
    pull = rehearsal.open_pr()

    done = rehearsal.bash(tokens, gate, typed=typed)
    assert done.returncode == 0, done.stderr
    [printed] = quoted(text, "It prints")
    assert done.stdout.splitlines() == [printed]

    done = rehearsal.bash(tokens, publish, typed=typed)
    assert done.returncode == 0, done.stderr
    last = [line.replace("YOU", YOU) for line in quoted(text, "Its last lines are")]
    assert done.stdout.splitlines()[-len(last) :] == last, done.stdout
    assert INFX_TOKEN not in done.stdout + done.stderr and BOOK_TOKEN not in done.stderr

    # The cookbook PR in the fork: the bot's branch, the config's cells in progress.
    [book_pr] = rehearsal.gh.repo(rehearsal.book_repo).pulls.values()
    assert (book_pr["number"], book_pr["state"]) == (1, "open")
    assert book_pr["head_ref"] == "infx-sync/deepseek-ai/deepseek-v4_1"
    assert f"| `{KEY}` |" in book_pr["body"] and f"`{pull['commits'][0][:9]}`" in book_pr["body"]
    module = git("show", f"{book_pr['head_ref']}:{MODULE}", cwd=rehearsal.book)
    assert KEY in module and "in-progress" in module
    assert git("show", f"{book_pr['head_ref']}:{PAGE}", cwd=rehearsal.book)
    # The comment on the test repository's PR, as the document quotes it.
    said = " ".join(text.split("has the bot's comment: \"")[1].split('"')[0].split())
    [comment] = rehearsal.gh.comments_on(rehearsal.infx_repo, 1)
    assert comment["user"] == YOU
    assert said.replace("YOU", YOU) in plain(comment["body"])

    # "The same publish command run again ... writes nothing."
    start = len(rehearsal.gh.log)
    done = rehearsal.bash(tokens, publish, typed=typed)
    assert done.returncode == 0, done.stderr
    assert "PR #1: up to date" in done.stdout.splitlines()
    assert rehearsal.writes(start) == []
    assert len(rehearsal.gh.comments_on(rehearsal.infx_repo, 1)) == 1


def test_the_rehearsal_is_what_the_workflow_runs() -> None:
    """The rehearsal's publish command takes the options the workflow's publish job takes (the
    paths of a runner aside), so what the rehearsal shows is what the workflow does."""
    [*_, publish] = bash_blocks(section("### The rehearsal"))
    options = {w for w in shlex.split(publish.replace("\\\n", " ")) if w.startswith("--")}
    doc = yaml.safe_load((ROOT / ".github/workflows/cookbook-sync.yml").read_text())
    [step] = [s for s in doc["jobs"]["publish"]["steps"] if s.get("name") == "Sync the cookbook"]
    workflow = {w for w in step["run"].split() if w.startswith("--")}
    # srt-slurm: the bundled example pins no submodule. By hand the event name is given (a
    # runner has GITHUB_EVENT_NAME), and so is the remote the workflow leaves to its default.
    assert workflow - options == {"--srt-slurm-clone"}
    assert options - workflow == {"--event-name", "--inferencex-remote"}


def test_the_workflow_answers_its_own_repository_and_the_configured_cookbook() -> None:
    """In an InferenceX fork the workflow answers the fork's PRs (before: the gate matched
    events against SemiAnalysisAI/InferenceX and let nothing through, and the publish job read
    and wrote the upstream repository), and COOKBOOK_SYNC_OWNER/REPOSITORY name the cookbook
    for a PAT as for the App (before: only the App's token step read them)."""
    doc = yaml.safe_load((ROOT / ".github/workflows/cookbook-sync.yml").read_text())
    runs = {
        name: " ".join(step["run"].split())
        for name in ("gate", "publish")
        for step in doc["jobs"][name]["steps"]
        if "sync bot" in step.get("run", "")
    }
    for name, run in runs.items():
        assert '--inferencex-repo "$GITHUB_REPOSITORY"' in run, name
    [step] = [s for s in doc["jobs"]["publish"]["steps"] if s.get("name") == "Sync the cookbook"]
    assert '--cookbook-repo "$COOKBOOK_REPO"' in runs["publish"]
    assert '--cookbook "https://github.com/$COOKBOOK_REPO.git"' in runs["publish"]
    [app] = [s for s in doc["jobs"]["publish"]["steps"] if s.get("id") == "app"]
    owner, repository = app["with"]["owner"], app["with"]["repositories"]
    inner = lambda expr: expr.removeprefix("${{ ").removesuffix(" }}")  # noqa: E731
    assert step["env"]["COOKBOOK_REPO"] == (
        f"${{{{ format('{{0}}/{{1}}', {inner(owner)}, {inner(repository)}) }}}}"
    )


def test_the_documented_workflow_mode_dry_run_takes_a_cookbook_without_origin(world) -> None:
    """The dry run "as the workflow runs it": `--inferencex-clone` and a local cookbook made
    locally, without an origin (before: `git remote failed: No such remote 'origin'`, exit 2)."""
    from botworld import PR, RUN

    infx = InferenceXRepo(world.tmp / "infx")
    infx.write(DSPARK_RECIPE, infx.read(DSPARK_RECIPE) + "# tuned in this PR\n")
    head = infx.commit("PR head")
    infx.publish_pr(PR, head)
    clone = world.tmp / "inferencex-clone.git"
    git("clone", "--quiet", "--bare", str(infx.remote), str(clone), cwd=world.tmp)
    sglang = world.tmp / "sglang"
    git("init", "--quiet", "--initial-branch=main", str(sglang), cwd=world.tmp)
    (sglang / PAGE).parent.mkdir(parents=True)
    shutil.copy(ROOT / "examples/cookbook" / PAGE, sglang / PAGE)
    git("add", "-A", cwd=sglang)
    git("commit", "--quiet", "-m", "cookbook", cwd=sglang)
    event = world.tmp / "event.json"
    event.write_text(json.dumps(world.comment_event(world.comment(f"/use {RUN}"))))
    text = DOC.read_text(encoding="utf-8")
    start = text.index("The workflow's own mode runs offline too")
    [words] = [shlex.split(b.replace("\\\n", " ")) for b in bash_blocks(text[start:])[:1]]
    swaps = {
        "event.json": str(event),
        "path/to/inferencex-clone.git": str(clone),
        "path/to/sglang": str(sglang),
        "path/to/downloaded-runs": str(ROOT / "examples/runs"),
    }
    assert words[0] == "sync"
    env = {k: v for k, v in os.environ.items() if not k.endswith("TOKEN")}
    env.update({"HOME": str(world.tmp), "SYNC_API_PAUSE": "0"})
    done = subprocess.run(
        [sys.executable, "-m", "syncer", *(swaps.get(w, w) for w in words[1:])],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "deepseek-ai/deepseek-v4_1: would open a PR in sgl-project/sglang (dry run)" in (
        done.stdout
    )
    assert f"would: git: write {MODULE}" in done.stdout
    assert git("status", "--porcelain", cwd=sglang) == ""  # the checkout is left as it was
    assert git("remote", cwd=sglang) == ""
