"""Real InferenceX git repositories for the tests: a bare "GitHub" repository with ``main`` and
``refs/pull/<n>/head`` refs, built from the bundled example tree, and the bot's own clone.

Commits are made with git plumbing in a scratch work tree (as a contributor would make them),
so each test states exactly which files a PR changes.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from conftest import QUIET_GIT

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples/inferencex"
MASTER = "inferencex-e2e/configs/nvidia-master.yaml"
DSPARK_RECIPE = (
    "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/gb300-fp4-mtp/"
    "agentic.yaml"
)
_ENV = {
    "GIT_AUTHOR_NAME": "Contributor",
    "GIT_AUTHOR_EMAIL": "contributor@example.com",
    "GIT_COMMITTER_NAME": "Contributor",
    "GIT_COMMITTER_EMAIL": "contributor@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "PATH": "/usr/bin:/bin",
    **QUIET_GIT,
}


def git(*args: str, cwd: Path, input: str | None = None) -> str:
    env = {**_ENV, "HOME": str(cwd)}
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True, input=input
    ).stdout.strip()


class InferenceXRepo:
    """``remote``: the bare repository the bot fetches from; ``work``: a work tree commits are
    made in (never the bot's)."""

    def __init__(self, tmp: Path, *, tree: Path = EXAMPLE) -> None:
        tmp.mkdir(parents=True, exist_ok=True)
        self.remote = tmp / "InferenceX.git"
        self.work = tmp / "infx-work"
        if tree.resolve().is_relative_to(ROOT / "examples"):
            # The project's own trees do not change during a run: their repositories are made
            # once per test process (six git commands) and copied (the work tree's origin is
            # the path it is pushed to, given on every push).
            template = _template(tree.resolve())
            shutil.copytree(template.remote, self.remote, symlinks=True)
            shutil.copytree(template.work, self.work, symlinks=True)
            self.main = template.main
            return
        self._build(tmp, tree)

    def _build(self, tmp: Path, tree: Path) -> None:
        git("init", "--quiet", "--bare", "--initial-branch=main", str(self.remote), cwd=tmp)
        git("init", "--quiet", "--initial-branch=main", str(self.work), cwd=tmp)
        for item in tree.iterdir():
            if item.name == "README.md":
                continue
            dest = self.work / item.name
            if item.is_dir():
                shutil.copytree(item, dest, symlinks=True)
            else:
                shutil.copy2(item, dest)
        self.main = self.commit("InferenceX main")
        git("push", "--quiet", str(self.remote), "HEAD:refs/heads/main", cwd=self.work)

    def read(self, path: str) -> str:
        return (self.work / path).read_text()

    def write(self, path: str, text: str) -> None:
        target = self.work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def commit(self, message: str) -> str:
        git("add", "-A", cwd=self.work)
        git("commit", "--quiet", "--allow-empty", "-m", message, cwd=self.work)
        return git("rev-parse", "HEAD", cwd=self.work)

    def checkout(self, rev: str) -> None:
        git("checkout", "--quiet", "--detach", rev, cwd=self.work)

    def publish_pr(self, number: int, head: str) -> None:
        """``refs/pull/<number>/head`` on the remote, as GitHub keeps it."""
        git("push", "--quiet", "--force", str(self.remote), f"{head}:refs/pull/{number}/head",
            cwd=self.work)  # fmt: skip

    def merge_to_main(self, head: str) -> str:
        """Fast-forward ``main`` of the remote to ``head`` (a merged PR)."""
        git("push", "--quiet", "--force", str(self.remote), f"{head}:refs/heads/main",
            cwd=self.work)  # fmt: skip
        return head

    def clone_for_bot(self, tmp: Path) -> Path:
        """The bot's own clone (bare: only its objects and refs are read)."""
        tmp.mkdir(parents=True, exist_ok=True)
        clone = tmp / "bot-infx.git"
        git("init", "--quiet", "--bare", str(clone), cwd=tmp)
        return clone


_TEMPLATES = tempfile.TemporaryDirectory(prefix="infx-repos-")


@cache
def _template(tree: Path) -> InferenceXRepo:
    """The repositories of ``tree`` (one of the project's own), made once per test process."""
    repo = InferenceXRepo.__new__(InferenceXRepo)
    tmp = Path(_TEMPLATES.name) / str(len(list(Path(_TEMPLATES.name).iterdir())))
    tmp.mkdir()
    repo.remote, repo.work = tmp / "InferenceX.git", tmp / "infx-work"
    repo._build(tmp, tree)
    return repo


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)`` with libyaml's parser where PyYAML has it (the same values): a
    master config parsed by the pure-Python one took 90 ms, and tests edit it by the dozen."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def add_key(text: str, key: str, *, like: str = "dsv41flash-fp4-gb300-sglang-agentic-dspark",
            conc: list[int] | None = None, row: int = 0,
            recipe_dir: str | None = None, prefix: str | None = None) -> str:  # fmt: skip
    """``text`` (a master config) with a new key appended: a copy of ``like``'s entry; with
    ``conc``, only its search-space row ``row`` at those concurrencies (a different curve);
    ``recipe_dir``: its own ``srt-recipe-dir``; ``prefix``: its own ``model-prefix``."""
    import yaml

    doc = load_yaml(text)
    entry = doc[like]
    if recipe_dir is not None:
        entry["srt-recipe-dir"] = recipe_dir
    if prefix is not None:
        entry["model-prefix"] = prefix
    if conc is not None:
        block = entry["scenarios"]["agentic-coding"][0]
        block["search-space"] = [dict(block["search-space"][row], **{"conc-list": conc})]
    added = yaml.safe_dump({key: entry}, sort_keys=False, width=200)
    return text.rstrip("\n") + "\n\n" + added
