"""InferenceX trees read from git objects at the least cost (issue 40.7): a blob shared by the
trees of one event is read and written once (each tree links it), everything is freed at the
end, and the paths two commits differ in are read from tree objects with no git process."""

from __future__ import annotations

import os
import subprocess

import pytest
from infxrepo import DSPARK_RECIPE, MASTER, InferenceXRepo, git

from syncer import costs
from syncer.inferencex import commits, gitobjects


@pytest.fixture
def repo(tmp_path):
    return InferenceXRepo(tmp_path)


def test_a_second_tree_writes_only_the_files_it_changes(repo, tmp_path):
    recipe = repo.read(DSPARK_RECIPE)
    repo.write(
        DSPARK_RECIPE, recipe.replace("mem-fraction-static: 0.8", "mem-fraction-static: 0.7")
    )
    head = repo.commit("retune")
    repo.publish_pr(7, head)
    clone = repo.clone_for_bot(tmp_path)
    commits.fetch(clone, str(repo.remote), ["main", "refs/pull/7/head"])
    start = costs.snapshot()
    with commits.Trees(clone) as trees:
        main = trees.at(repo.main)
        first = costs.COSTS.since(start)
        pr = trees.at(head)
        second = costs.COSTS.since(start)
        # Every data file of main written once; the PR's tree adds its one changed recipe.
        assert first.tree_files > 1
        assert second.tree_files - first.tree_files == 1
        changed = len((pr / DSPARK_RECIPE).read_bytes())
        assert second.tree_bytes_written - first.tree_bytes_written == changed
        # The trees read as before, each its own commit's files; unchanged ones are one file.
        assert (pr / DSPARK_RECIPE).read_text() != (main / DSPARK_RECIPE).read_text()
        assert (pr / MASTER).read_text() == repo.read(MASTER)
        assert os.stat(pr / MASTER).st_ino == os.stat(main / MASTER).st_ino
        assert costs.COSTS.tree_bytes_held - start.tree_bytes_held == second.tree_bytes_written
    # All of it freed: the trees and the blobs they shared.
    assert not main.exists() and not pr.exists()
    assert costs.COSTS.tree_bytes_held == start.tree_bytes_held


def test_a_tree_alone_is_written_and_freed(repo, tmp_path):
    clone = repo.clone_for_bot(tmp_path)
    commits.fetch(clone, str(repo.remote), ["main"])
    start = costs.snapshot()
    with commits.tree_at(clone, repo.main) as tree:
        assert (tree / MASTER).read_text() == repo.read(MASTER)
        held = costs.COSTS.tree_bytes_held - start.tree_bytes_held
        assert held == costs.COSTS.since(start).tree_bytes_written > 0
    assert costs.COSTS.tree_bytes_held == start.tree_bytes_held


def diff_tree(clone, base: str, head: str) -> set[str]:
    out = subprocess.run(
        ["git", f"--git-dir={clone}", "diff-tree", "-r", "-z", "--no-renames", "--name-only",
         base, head],
        check=True, capture_output=True,
    ).stdout.decode()  # fmt: skip
    return {p for p in out.split("\0") if p}


def test_changed_paths_from_tree_objects_as_diff_tree_lists_them(repo, tmp_path):
    # A file becomes a folder, a folder goes, a file is added deep down, a mode changes.
    repo.write("docs/a.md", "a\n")
    repo.write("docs/gone/b.md", "b\n")
    repo.write("tool.sh", "echo\n")
    base = repo.commit("base")
    (repo.work / "docs/a.md").unlink()
    repo.write("docs/a.md/inside.md", "now a folder\n")
    git("rm", "-rq", "docs/gone", cwd=repo.work)
    repo.write("inferencex-e2e/configs/deep/new.yaml", "x: 1\n")
    (repo.work / "tool.sh").chmod(0o755)
    head = repo.commit("head")
    repo.publish_pr(8, head)
    clone = repo.clone_for_bot(tmp_path)
    commits.fetch(clone, str(repo.remote), ["refs/pull/8/head"])
    commits.resolve(clone, head)  # the clone's object reader is up
    before = costs.snapshot()
    found = commits.changed_paths(clone, base, head)
    assert costs.COSTS.since(before).git_processes == 0  # read by the running reader
    assert found == diff_tree(clone, base, head)
    assert found == {
        "docs/a.md",
        "docs/a.md/inside.md",
        "docs/gone/b.md",
        "inferencex-e2e/configs/deep/new.yaml",
        "tool.sh",
    }
    assert commits.changed_paths(clone, head, head) == set()


def git_merge_base(clone, a: str, b: str) -> str:
    done = subprocess.run(
        ["git", f"--git-dir={clone}", "merge-base", a, b], check=True, capture_output=True
    )
    return done.stdout.decode().strip()


def test_merge_base_from_commit_objects_as_git_finds_it(repo, tmp_path):
    # A PR branched from main, merged main's newer commit into itself; main moved on again.
    repo.write("docs/pr.md", "1\n")
    branch = repo.commit("PR: first")
    repo.checkout(repo.main)
    repo.write("docs/main.md", "1\n")
    main1 = repo.commit("main: one")
    repo.checkout(branch)
    git("merge", "--quiet", "--no-edit", main1, cwd=repo.work)
    repo.write("docs/pr.md", "2\n")
    head = repo.commit("PR: second")
    repo.checkout(main1)
    repo.write("docs/main.md", "2\n")
    main2 = repo.commit("main: two")
    repo.merge_to_main(main2)
    repo.publish_pr(9, head)
    clone = repo.clone_for_bot(tmp_path)
    commits.fetch(clone, str(repo.remote), ["main", "refs/pull/9/head"])
    commits.resolve(clone, head)  # the clone's object reader is up
    before = costs.snapshot()
    assert commits.merge_base(clone, main2, head) == main1 == git_merge_base(clone, main2, head)
    assert commits.merge_base(clone, head, repo.main) == repo.main
    assert commits.merge_base(clone, main2, main2) == main2
    assert costs.COSTS.since(before).git_processes == 0  # read by the running reader


def test_criss_cross_merge_bases_are_left_to_git(repo, tmp_path):
    repo.write("docs/a.md", "a\n")
    a1 = repo.commit("a1")
    repo.checkout(repo.main)
    repo.write("docs/b.md", "b\n")
    b1 = repo.commit("b1")
    git("merge", "--quiet", "--no-edit", a1, cwd=repo.work)
    b2 = repo.commit("b2")
    repo.checkout(a1)
    git("merge", "--quiet", "--no-edit", b1, cwd=repo.work)
    a2 = repo.commit("a2")
    repo.publish_pr(10, a2)
    repo.publish_pr(11, b2)
    clone = repo.clone_for_bot(tmp_path)
    commits.fetch(clone, str(repo.remote), ["refs/pull/10/head", "refs/pull/11/head"])
    assert commits.merge_base(clone, a2, b2) == git_merge_base(clone, a2, b2)
    assert commits.merge_base(clone, a2, b2) in (a1, b1)
    assert len(gitobjects.merge_bases(commits._reader(clone), a2, b2)) == 2  # git chose


def test_a_commit_date_is_read_from_the_commit_object(repo, tmp_path):
    repo.write("docs/zone.md", "z\n")
    git("add", "-A", cwd=repo.work)
    env_date = "2026-10-13T09:30:00-0700"
    subprocess.run(
        ["git", "commit", "--quiet", "-m", "in another zone"], cwd=repo.work, check=True,
        env={**os.environ, "GIT_COMMITTER_DATE": env_date, "GIT_AUTHOR_DATE": env_date},
    )  # fmt: skip
    head = git("rev-parse", "HEAD", cwd=repo.work)
    repo.publish_pr(12, head)
    clone = repo.clone_for_bot(tmp_path)
    commits.fetch(clone, str(repo.remote), ["refs/pull/12/head"])
    commits.resolve(clone, head)  # the clone's object reader is up
    before = costs.snapshot()
    assert commits.commit_date(clone, head) == "2026-10-13T09:30:00-07:00"
    assert costs.COSTS.since(before).git_processes == 0
    shown = git("log", "-1", "--format=%cI", head, cwd=repo.work)
    assert shown == "2026-10-13T09:30:00-07:00"
