"""Dated git histories for the tests of srt-slurm branch refs: our own srt-slurm (``main``
tagged v1.0.41 in July and v1.0.58 late in August, a commit between them on 2026-08-03) and
the eras InferenceX tree with its m2 runner checking out a branch instead of a tag. Shared by
the release, generate, audit and bot tests (never the real srt-slurm)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from conftest import QUIET_GIT, TESTS

ERAS = TESTS / "fixtures" / "eras" / "inferencex"
SCRIPT = "runners/launch_gb300-test.sh"
AGG = "m2-fp4-gb300-dynamo-sglang-agentic-agg"
MODEL = "example-org/m2"
# sync.yaml of a project showing the m2 agg key, pinned at InferenceX commit ``{sha}``; ``{date}``
# is the pin's date line (or nothing).
M2_SYNC_YAML = """\
inferencex:
  repo: https://github.com/SemiAnalysisAI/InferenceX
  main: 4f1e2d3c5b6a79880a1b2c3d4e5f60718293a4b5
models:
  - path: example-org/m2
    model: M2
    page: docs/m2.mdx
    section: Agentic
    hardware:
      - {{id: gb300, label: GB300}}
    match:
      model-prefix: [m2]
    configs:
      - key: m2-fp4-gb300-dynamo-sglang-agentic-agg
        source: main
        pin:
          status: verified
          run: "52000000001"
          pr: "2500"
          sha: {sha}
{date}"""
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Contributor",
    "GIT_AUTHOR_EMAIL": "contributor@example.com",
    "GIT_COMMITTER_NAME": "Contributor",
    "GIT_COMMITTER_EMAIL": "contributor@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "PATH": "/usr/bin:/bin",
    **QUIET_GIT,
}


def dated_git(repo: Path, *args: str, date: str | None = None) -> str:
    """git in ``repo`` as a contributor, author and committer dated ``date`` when given."""
    env = {**_GIT_ENV, "HOME": str(repo)}
    if date is not None:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def dated_commit(repo: Path, message: str, date: str) -> str:
    """A commit changing one file, dated ``date``; its sha."""
    (repo / "CHANGES").write_text((repo / "CHANGES").read_text() + message + "\n")
    dated_git(repo, "add", "CHANGES")
    dated_git(repo, "commit", "-q", "-m", message, date=date)
    return dated_git(repo, "rev-parse", "HEAD")


_MADE = tempfile.TemporaryDirectory(prefix="srt-histories-")


def copied_history(
    repo: Path, build: Callable[[Path], dict[str, str]], *key: str
) -> dict[str, str]:
    """``build(repo)``, made once per test process for each ``key`` and copied to ``repo``:
    every commit of these histories is dated (author and committer) and made by the same
    contributor, so a copy is the same repository, shas included, without the dozens of git
    commands that make one. ``"repo"`` in the result names the copy."""
    if key not in _HISTORIES:
        _HISTORIES[key] = build(Path(_MADE.name) / str(len(_HISTORIES)))
    made = _HISTORIES[key]
    shutil.copytree(made["repo"], repo, symlinks=True)
    return {**made, "repo": str(repo)}


_HISTORIES: dict[tuple[str, ...], dict[str, str]] = {}


def srt_slurm_history(repo: Path, *, v58_message: str = "release 1.0.58") -> dict[str, str]:
    """srt-slurm's ``main`` in ``repo``: ``root`` (June), ``v41`` (tag v1.0.41, 2026-07-30),
    ``aug`` (2026-08-03), ``v58`` (tag v1.0.58, 2026-08-18); the shas by those names."""
    return copied_history(
        repo, lambda made: _srt_slurm_history(made, v58_message), "srt-slurm", v58_message
    )


def _srt_slurm_history(repo: Path, v58_message: str) -> dict[str, str]:
    repo.mkdir()
    (repo / "CHANGES").write_text("")
    dated_git(repo, "init", "-q", "-b", "main")
    out = {"repo": str(repo)}
    out["root"] = dated_commit(repo, "start", "2026-06-01T10:00:00+00:00")
    out["v41"] = dated_commit(repo, "release 1.0.41", "2026-07-30T10:00:00+00:00")
    dated_git(repo, "tag", "v1.0.41")
    out["aug"] = dated_commit(repo, "work on main", "2026-08-03T10:00:00+00:00")
    out["v58"] = dated_commit(repo, v58_message, "2026-08-18T10:00:00+00:00")
    dated_git(repo, "tag", "v1.0.58")
    return out


def runner_on_branch(text: str, branch: str = "main") -> str:
    """The eras runner script's text with its m2 branch checking out ``branch``."""
    return text.replace("    git checkout v1.0.38\n", f"    git checkout {branch}\n")


def eras_tree_on_main(tree: Path, date: str = "2026-08-05T12:00:00+00:00") -> str:
    """The eras tree copied to ``tree``, its runner on srt-slurm ``main``, committed as one git
    checkout at ``date``; the commit's sha."""
    shutil.copytree(ERAS, tree)
    script = tree / SCRIPT
    script.write_text(runner_on_branch(script.read_text()))
    dated_git(tree, "init", "-q", "-b", "main")
    dated_git(tree, "add", "-A")
    dated_git(tree, "commit", "-q", "-m", "InferenceX at the run", date=date)
    return dated_git(tree, "rev-parse", "HEAD")
