"""One way to run git (issue 38, point 3): every process the package starts is started by
``syncer/gitrun.py``, so every git gets its clean environment, hooks off, a time bound, one
wording of errors and the leading-dash rule. A scan of the package's source (``ast``) fails
when any other module starts a process; and ``sync diff REV:PATH``, which ran git its own way,
no longer reads another repository when the caller's environment has ``GIT_DIR``.
"""

from __future__ import annotations

import ast
import os
import subprocess
from pathlib import Path

import forkserver
from conftest import ROOT
from sources import parsed

PACKAGE = ROOT / "syncer"
RUNNER = PACKAGE / "gitrun.py"
# What starts a process: subprocess's functions and os's exec/spawn/system/popen family.
SUBPROCESS_SPAWNS = {"run", "Popen", "call", "check_call", "check_output", "getoutput",
                     "getstatusoutput"}  # fmt: skip
OS_SPAWN_PREFIXES = ("exec", "spawn", "posix_spawn", "system", "popen", "fork")


def spawns(source: str | Path) -> list[int]:
    """The lines of ``source`` (text, or a module of the project) that start a process (or
    import what does, under a name)."""
    found = []
    tree = parsed(source) if isinstance(source, Path) else ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("subprocess", "os"):
            if any(_spawning(node.module, a.name) for a in node.names):
                found.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and _spawning(owner.id, node.func.attr):
                found.append(node.lineno)
    return found


def _spawning(module: str, name: str) -> bool:
    if module == "subprocess":
        return name in SUBPROCESS_SPAWNS
    return module == "os" and name.startswith(OS_SPAWN_PREFIXES)


def test_the_scan_sees_each_way_of_starting_a_process() -> None:
    source = (
        "import os, subprocess\nfrom subprocess import check_output\n"
        "subprocess.run(['git', 'fetch'])\nsubprocess.Popen(cmd)\nos.system('git log')\n"
        "os.execvp('git', ['git'])\nx = subprocess.TimeoutExpired\n"
    )
    assert spawns(source) == [2, 3, 4, 5, 6]


def test_only_the_git_runner_starts_processes() -> None:
    offenders = {
        str(path.relative_to(ROOT)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != RUNNER and (lines := spawns(path))
    }
    assert offenders == {}, "start git through syncer.gitrun (run/popen), not directly"
    assert spawns(RUNNER)  # and the runner is what does


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    env = {k: v for k, v in env.items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
    done = subprocess.run(["git", "-C", str(repo), *args], env=env, check=True,
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout


def _repo_with_module(path: Path, flag: str) -> None:
    path.mkdir()
    _git(path, "init", "-q", "-b", "main")
    module = ROOT / "cookbook_snippets" / "deepseek-ai" / "deepseek-v4_1.jsx"
    text = module.read_text(encoding="utf-8")
    assert "--mem-fraction-static" in text
    (path / "m.jsx").write_text(text.replace("--mem-fraction-static", flag), encoding="utf-8")
    _git(path, "add", "m.jsx")
    _git(path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "m")


def test_diff_rev_path_reads_its_own_repository_whatever_git_dir_the_caller_has(
    tmp_path: Path,
) -> None:
    _repo_with_module(tmp_path / "mine", "--mem-fraction-static")
    _repo_with_module(tmp_path / "other", "--mem-fraction-other")
    env = {
        **forkserver.machine_env(),
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "GIT_DIR": str(tmp_path / "other" / ".git"),  # a hook's or a CI step's, say
    }
    argv = [*forkserver.command(), "diff", "-C", str(tmp_path / "mine"), "HEAD:m.jsx",
            str(tmp_path / "mine" / "m.jsx"), "--format", "json"]  # fmt: skip
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    # HEAD:m.jsx of "mine" is the file beside it: no command changed (exit 0). Read from
    # "other" (GIT_DIR's), a flag would differ in every command (exit 1).
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
