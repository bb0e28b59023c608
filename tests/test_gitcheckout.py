"""The commit a directory has checked out: one answer for reports and for branch dates."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from syncer.gitcheckout import ObjectReader, Unanswered, checked_out
from syncer.inferencex.commits import checkout_date
from syncer.inputs import head_commit


def _repo(path: Path, message: str) -> str:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "f").write_text(message)
    subprocess.run(["git", "-C", str(path), "add", "f"], check=True)
    subprocess.run(["git", "-C", str(path), "commit", "-q", "-m", message], check=True)
    out = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], check=True, text=True,
                         capture_output=True)  # fmt: skip
    return out.stdout.strip()


def test_a_shells_git_dir_does_not_answer_for_another_repository(tmp_path, monkeypatch):
    mine, other = _repo(tmp_path / "mine", "mine"), _repo(tmp_path / "other", "other")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "other" / ".git"))
    assert head_commit(tmp_path / "mine") == mine != other
    assert checkout_date(tmp_path / "mine") == checked_out(tmp_path / "mine")[1]


@pytest.mark.parametrize("where", ["sub", "plain"])
def test_a_folder_that_is_no_repository_of_its_own_has_no_commit(tmp_path, where):
    _repo(tmp_path / "repo", "x")
    folder = tmp_path / "repo" / "sub" if where == "sub" else tmp_path / "plain"
    folder.mkdir()
    assert checked_out(folder) is None and head_commit(folder) is None


def test_a_bare_clone_has_its_head(tmp_path):
    sha = _repo(tmp_path / "repo", "x")
    subprocess.run(["git", "clone", "-q", "--bare", str(tmp_path / "repo"), str(tmp_path / "b")],
                   check=True)  # fmt: skip
    assert head_commit(tmp_path / "b") == sha


def test_an_object_reader_whose_git_hangs_is_stopped_and_says_it_cannot_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A `git` first on PATH that never answers, whose child (sleep, as a lazy fetch would
    # be) holds the pipe open after the parent is stopped; started by the one git runner.
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nsleep 60\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    reader = ObjectReader(git_dir=tmp_path, timeout=0.2)
    hung = reader._proc
    assert hung is not None
    with pytest.raises(Unanswered):
        reader.info(["HEAD"])
    assert hung.returncode == -9  # killed by the reader's bound, not ended by itself
    assert not reader.alive  # later names are asked another way at once
