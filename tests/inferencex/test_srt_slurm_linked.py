"""srt-slurm's configs are written once per event (issue 40.7, "trees written once and freed"):
every InferenceX tree that pins srt-slurm gets the pinned tree's files as other names of the
same files (the event's blob store), not a copy of their bytes, and nothing of them is left
once the event's trees are closed."""

from __future__ import annotations

import os
from pathlib import Path

from infxrepo import InferenceXRepo, git

from syncer.inferencex import commits
from syncer.inferencex.srtconfigs import SUBMODULE, discover
from syncer.publish.srtslurm import add_srt_slurm

FILES = {"deepep_config.json": '{"pinned": true}\n', "nested/recipe.yaml": "a: 1\n"}


def _srt_slurm(path: Path) -> str:
    for name, text in FILES.items():
        (path / "configs" / name).parent.mkdir(parents=True, exist_ok=True)
        (path / "configs" / name).write_text(text)
    git("init", "--quiet", "--initial-branch=main", str(path), cwd=path.parent)
    git("add", "-A", cwd=path)
    git("commit", "--quiet", "-m", "configs", cwd=path)
    return git("rev-parse", "HEAD", cwd=path).strip()


def test_each_tree_pinning_srt_slurm_links_its_files_instead_of_copying_them(tmp_path):
    srt = tmp_path / "srt-slurm"
    pinned = _srt_slurm(srt)
    infx = InferenceXRepo(tmp_path / "infx")
    work = infx.work
    (work / ".gitmodules").write_text(
        f'[submodule "srt-slurm"]\n\tpath = {SUBMODULE}\n\turl = {srt}\n'
    )
    git("update-index", "--add", "--cacheinfo", f"160000,{pinned},{SUBMODULE}", cwd=work)
    git("add", ".gitmodules", cwd=work)
    git("commit", "--quiet", "-m", "pin srt-slurm", cwd=work)
    main = infx.merge_to_main(git("rev-parse", "HEAD", cwd=work).strip())
    heads = []
    for i in range(2):  # two open PRs, both keeping main's pin
        (work / f"docs-{i}.md").write_text(f"{i}\n")
        git("add", f"docs-{i}.md", cwd=work)
        git("commit", "--quiet", "-m", f"PR {i}", cwd=work)
        heads.append(git("rev-parse", "HEAD", cwd=work).strip())
        infx.publish_pr(10 + i, heads[-1])
    clone = infx.clone_for_bot(tmp_path / "bot")
    commits.fetch(clone, str(infx.remote), ["main", "refs/pull/10/head", "refs/pull/11/head"])
    with commits.Trees(clone) as trees:
        placed = []
        for head in [main, *heads]:
            tree = trees.at(head)
            add_srt_slurm(clone, main, tree, trees)
            found = discover(tree)  # what the renderer reads
            assert found.read("configs", "deepep_config.json") == FILES["deepep_config.json"]
            placed.append(tree / SUBMODULE / "configs")
        source = trees.at(pinned) / "configs"
        for name in FILES:
            inode = os.stat(source / name).st_ino
            # One file on disk, named in each tree: its bytes were written once.
            assert [os.stat(p / name).st_ino for p in placed] == [inode] * len(placed)
            assert os.stat(source / name).st_nlink >= len(placed) + 1
        kept = [Path(p) for p in placed]
    assert not any(p.exists() for p in kept)  # freed with the event's trees
