"""Every report says what it read (issue 22.6): the sync.yaml, the InferenceX checkout (with its
commit when it is a git checkout), the run, the cookbook module(s), each marked when it is the
bundled example; through the real commands, in every --format."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

from syncer.cli import main
from syncer.inputs import Input, head_commit, is_bundled, record

KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
MODULE = "cookbook_snippets/deepseek-ai/deepseek-v4_1.jsx"


def sync(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out + err


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A project of the user's own (not the bundled example): its sync.yaml, downloaded run
    and modules, and an InferenceX git checkout ``InferenceX``; the working directory. Gives
    the checkout's commit."""
    shutil.copy(ROOT / "sync.yaml", tmp_path / "sync.yaml")
    shutil.copytree(ROOT / "examples" / "runs", tmp_path / "examples" / "runs")
    shutil.copytree(ROOT / "cookbook_snippets", tmp_path / "cookbook_snippets")
    infx = tmp_path / "InferenceX"
    shutil.copytree(ROOT / "examples" / "inferencex", infx, symlinks=True)
    git(infx, "init", "-q")
    git(infx, "add", "-A")
    git(infx, "commit", "-q", "-m", "InferenceX")
    monkeypatch.chdir(tmp_path)
    return git(infx, "rev-parse", "HEAD")


def test_verify_names_what_it_read_in_every_format(
    project: str, capsys: pytest.CaptureFixture[str]
) -> None:
    commit = project
    code, out = sync(capsys, "verify", KEY, "--inferencex", "InferenceX")
    assert code == 0, out
    assert out.splitlines()[-4:] == [
        "read sync.yaml: sync.yaml",
        f"read InferenceX checkout: InferenceX at commit {commit}",
        "read run 41000000001: examples/runs/41000000001",
        f"read cookbook module: {MODULE}",
    ]
    code, out = sync(capsys, "verify", KEY, "--inferencex", "InferenceX", "--format", "markdown")
    assert code == 0
    assert f"- Read InferenceX checkout: `InferenceX` at commit `{commit}`\n" in out
    assert "- Read run `41000000001`: `examples/runs/41000000001`\n" in out
    assert "- Read sync.yaml: `sync.yaml`\n" in out
    code, out = sync(capsys, "verify", KEY, "--inferencex", "InferenceX", "--format", "json")
    assert code == 0
    assert json.loads(out)["read"] == [
        {"input": "sync.yaml", "path": "sync.yaml", "commit": None, "id": None, "bundled": False},
        {
            "input": "inferencex",
            "path": "InferenceX",
            "commit": commit,
            "id": None,
            "bundled": False,
        },
        {
            "input": "run",
            "path": "examples/runs/41000000001",
            "commit": None,
            "id": "41000000001",
            "bundled": False,
        },
        {"input": "cookbook-module", "path": MODULE, "commit": None, "id": None, "bundled": False},
    ]


def test_verify_with_a_run_given_reads_no_sync_yaml(
    project: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = sync(
        capsys, "verify", KEY, "--inferencex", "InferenceX", "--run", "examples/runs/41000000001"
    )
    assert code == 0, out
    assert "read run: examples/runs/41000000001\n" in out and "read sync.yaml" not in out


def test_render_header_names_the_checkout_and_its_commit(
    project: str, capsys: pytest.CaptureFixture[str]
) -> None:
    commit = project
    code, out = sync(capsys, "render", KEY, "--inferencex", "InferenceX", "--point", "0")
    assert code == 0, out
    assert out.splitlines()[1] == f"# read InferenceX checkout: InferenceX at commit {commit}"
    code, out = sync(capsys, "render", KEY, "--inferencex", "InferenceX", "--format", "json")
    assert json.loads(out)["read"] == [
        {
            "input": "inferencex",
            "path": "InferenceX",
            "commit": commit,
            "id": None,
            "bundled": False,
        }
    ]


def test_generate_names_the_sync_yaml_and_checkout(
    project: str, capsys: pytest.CaptureFixture[str]
) -> None:
    commit = project
    code, out = sync(
        capsys, "generate", "--all", "--check", "--inferencex", "InferenceX", "--no-page"
    )
    assert code == 0, out
    assert out.splitlines()[:3] == [
        "read sync.yaml: sync.yaml",
        f"read InferenceX checkout: InferenceX at commit {commit}",
        "read cookbook modules: cookbook_snippets",
    ]


def test_audit_names_the_cookbook_and_checkout(
    project: str, capsys: pytest.CaptureFixture[str]
) -> None:
    commit = project
    code, out = sync(capsys, "audit", "--inferencex", "InferenceX", "--format", "json")
    assert code == 0, out
    assert json.loads(out)["read"] == [
        {
            "input": "cookbook",
            "path": "cookbook_snippets",
            "commit": None,
            "id": None,
            "bundled": False,
        },
        {
            "input": "inferencex",
            "path": "InferenceX",
            "commit": commit,
            "id": None,
            "bundled": False,
        },
    ]
    code, out = sync(capsys, "audit", "--inferencex", "InferenceX")
    assert f"read InferenceX checkout: InferenceX at commit {commit}\n" in out
    code, out = sync(capsys, "audit", "--inferencex", "InferenceX", "--format", "markdown")
    assert "- Read cookbook modules: `cookbook_snippets`\n" in out


def test_the_bundled_example_is_named_as_such(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    code, out = sync(capsys, "verify", KEY)
    assert code == 0, out
    assert "read sync.yaml: sync.yaml (the bundled example)\n" in out
    assert "read InferenceX checkout: examples/inferencex (the bundled example)\n" in out


def test_a_folder_inside_a_repository_has_no_commit_of_its_own(tmp_path: Path) -> None:
    """``examples/inferencex`` lies inside this project's repository: its files are not that
    repository's commit, so none is named."""
    git(tmp_path, "init", "-q")
    (tmp_path / "sub").mkdir()
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "x")
    assert head_commit(tmp_path) == git(tmp_path, "rev-parse", "HEAD")
    assert head_commit(tmp_path / "sub") is None
    bare = tmp_path.parent / f"{tmp_path.name}.git"
    git(tmp_path.parent, "clone", "-q", "--bare", str(tmp_path), str(bare))
    assert head_commit(bare) == head_commit(tmp_path)
    assert not is_bundled(tmp_path) and is_bundled(ROOT / "sync.yaml")
    assert record(Input.RUN, tmp_path).commit is None  # only checkouts have commits
