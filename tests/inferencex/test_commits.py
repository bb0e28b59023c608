"""InferenceX read from git objects (``syncer.inferencex.commits``): fetched refs, changed
paths, and a commit's tree rendered exactly as a checkout of it renders, with the checkout's
rules (no link out, no ``..``) held for trees nobody checked out."""

from __future__ import annotations

import json
import os

import pytest
from infxrepo import DSPARK_RECIPE, MASTER, InferenceXRepo, git

from syncer.errors import SyncError
from syncer.inferencex import commits
from syncer.inferencex.render import render_config
from syncer.inferencex.srtconfigs import SUBMODULE, discover

KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"


def _json(rendered) -> str:
    return json.dumps(rendered.as_json(), sort_keys=True)


@pytest.fixture
def repo(tmp_path):
    return InferenceXRepo(tmp_path)


def test_tree_at_renders_as_the_checkout_of_that_commit(repo, tmp_path):
    clone = repo.clone_for_bot(tmp_path)
    assert commits.fetch(clone, str(repo.remote), ["main"]) == {"main": repo.main}
    with commits.tree_at(clone, repo.main) as tree:
        assert (tree / MASTER).read_text() == repo.read(MASTER)
        from_tree = render_config(tree, KEY)
    from_checkout = render_config(repo.work, KEY)
    assert _json(from_tree) == _json(from_checkout)
    assert [p.recipe for p in from_tree.points] == [p.recipe for p in from_checkout.points]
    assert not tree.exists()  # the private tree is removed on exit


def test_each_commit_reads_its_own_recipe(repo, tmp_path):
    recipe = repo.read(DSPARK_RECIPE)
    assert "mem-fraction-static: 0.8" in recipe
    retuned = recipe.replace("mem-fraction-static: 0.8", "mem-fraction-static: 0.7", 1)
    repo.write(DSPARK_RECIPE, retuned)
    head = repo.commit("retune")
    repo.publish_pr(7, head)
    clone = repo.clone_for_bot(tmp_path)
    found = commits.fetch(clone, str(repo.remote), ["main", "refs/pull/7/head", "refs/pull/8/head"])
    assert found == {"main": repo.main, "refs/pull/7/head": head, "refs/pull/8/head": None}
    assert commits.merge_base(clone, repo.main, head) == repo.main
    assert commits.changed_paths(clone, repo.main, head) == {DSPARK_RECIPE}

    def flags(commit: str) -> set[str]:
        with commits.Trees(clone) as trees:
            rendered = render_config(trees.at(commit), KEY)
        worker = rendered.points[0].cookbook["sglang"][0]
        return {" ".join(a) for a in worker["args"] if a[0] == "--mem-fraction-static"}

    assert flags(repo.main) != flags(head)
    assert flags(head) == {"--mem-fraction-static 0.7"}


def test_a_commit_not_fetched_is_named(repo, tmp_path):
    clone = repo.clone_for_bot(tmp_path)
    with pytest.raises(SyncError, match="is not in the InferenceX clone"):
        commits.tree_at(clone, repo.main).__enter__()
    # A 40-hex commit the remote has is fetched by its id.
    assert commits.fetch(clone, str(repo.remote), [repo.main]) == {repo.main: repo.main}


def test_a_link_out_of_the_tree_is_refused_as_in_a_checkout(repo, tmp_path):
    target = repo.work / DSPARK_RECIPE
    target.unlink()
    os.symlink("/etc/passwd", target)
    head = repo.commit("recipe is a link out")
    clone = repo.clone_for_bot(tmp_path)
    git("fetch", "--quiet", str(repo.work), head, cwd=clone)
    with commits.tree_at(clone, head) as tree:
        assert os.readlink(tree / DSPARK_RECIPE) == "/etc/passwd"
        with pytest.raises(SyncError, match="pointing outside the InferenceX checkout"):
            render_config(tree, KEY)


def test_a_crafted_tree_entry_climbing_out_is_refused(repo, tmp_path):
    """git's own tools refuse to check out a ``..`` entry; a crafted tree is refused here too
    (nothing is written outside the private directory)."""
    clone = repo.clone_for_bot(tmp_path)
    git("fetch", "--quiet", str(repo.work), repo.main, cwd=clone)
    blob = git("hash-object", "-w", "--stdin", cwd=clone, input="x: 1\n")
    inner = git("mktree", cwd=clone, input=f"100644 blob {blob}\tevil.yaml\n")
    configs = git("mktree", cwd=clone, input=f"040000 tree {inner}\t..\n")
    top = git("mktree", cwd=clone, input=f"040000 tree {configs}\tconfigs\n")
    commit = git("commit-tree", top, "-m", "crafted", cwd=clone)
    with pytest.raises(SyncError, match=r"climbs out with '\.\.'"):
        commits.tree_at(clone, commit).__enter__()
    assert not (tmp_path / "evil.yaml").exists()


def test_the_submodule_pin_is_read_from_the_gitlink(repo, tmp_path):
    pin = "ab" * 20
    git("update-index", "--add", "--cacheinfo", f"160000,{pin},{SUBMODULE}", cwd=repo.work)
    git("commit", "--quiet", "-m", "pin srt-slurm", cwd=repo.work)
    head = git("rev-parse", "HEAD", cwd=repo.work)
    clone = repo.clone_for_bot(tmp_path)
    git("fetch", "--quiet", str(repo.work), head, cwd=clone)
    with commits.tree_at(clone, head) as tree:
        assert commits.gitlink(tree, SUBMODULE) == pin
        assert discover(tree).commit == pin
    assert commits.changed_paths(clone, repo.main, head) == {SUBMODULE}


def test_blobs_over_the_cap_are_not_written(repo, tmp_path, monkeypatch):
    monkeypatch.setattr(commits, "MAX_BLOB_BYTES", 100)
    clone = repo.clone_for_bot(tmp_path)
    commits.fetch(clone, str(repo.remote), ["main"])
    with commits.tree_at(clone, repo.main) as tree:
        assert not (tree / MASTER).exists()
        small = [p for p in tree.rglob("*") if p.is_file()]
        assert all(p.stat().st_size <= 100 for p in small)


def test_a_checkout_of_inferencex_fetches_from_its_origin(repo, tmp_path):
    checkout_clone = tmp_path / "checkout"
    git("clone", "--quiet", str(repo.remote), str(checkout_clone), cwd=tmp_path)
    assert commits.is_clone(checkout_clone) and commits.has_remote(checkout_clone, "origin")
    head = repo.commit("a PR commit")
    repo.publish_pr(5, head)
    assert commits.fetch(checkout_clone, "origin", ["refs/pull/5/head"]) == {
        "refs/pull/5/head": head
    }
    # Fetched refs live apart from the checkout's branches.
    assert commits.resolve(checkout_clone, "refs/infx-sync/pull/5/head") == head
    assert not commits.has_remote(repo.clone_for_bot(tmp_path / "bare"), "origin")
