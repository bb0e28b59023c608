from __future__ import annotations

from pathlib import Path

import pytest
from botworld import git as run

from syncer.errors import SyncError
from syncer.github.plan import Plan
from syncer.publish.git import CookbookClone, Identity, branch_name

BRANCH = "infx-sync/deepseek-ai/deepseek-v4_1"


def make_remote(tmp: Path) -> Path:
    """A bare cookbook repository with one commit on ``main``."""
    bare = tmp / "sglang.git"
    run("init", "--quiet", "--bare", "--initial-branch=main", str(bare), cwd=tmp)
    work = tmp / "seed"
    run("clone", "--quiet", str(bare), str(work), cwd=tmp)
    page = work / "docs/cookbook/DeepSeek-V4_1.mdx"
    page.parent.mkdir(parents=True)
    page.write_text("# DeepSeek-V4.1\n")
    run("add", ".", cwd=work)
    run("commit", "--quiet", "-m", "init", cwd=work)
    run("push", "--quiet", "origin", "HEAD:main", cwd=work)
    return bare


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return make_remote(tmp_path)


def test_branch_name():
    assert branch_name("deepseek-ai/deepseek-v4_1") == BRANCH
    for bad in ("../x/y", "a b/c", "a/b;rm", "-x/y"):
        with pytest.raises(SyncError):
            branch_name(bad)


def test_commit_push_and_no_op(remote, tmp_path):
    book = CookbookClone.open(str(remote), cache_dir=tmp_path / "cache")
    assert book.default_branch() == "main"
    state = book.branch_state(BRANCH, "main")
    assert not state.exists and state.foreign == []
    files = {"docs/src/snippets/agentx/deepseek-ai/deepseek-v4_1.jsx": "export const x = 1;\n"}
    commit = book.commit_files(state, files, "Sync from InferenceX PR #3859 (run 41000000001)")
    assert commit is not None
    book.push(state, commit)
    assert run("rev-parse", f"refs/heads/{BRANCH}", cwd=remote).strip() == commit
    shown = run("show", "--format=%an <%ae>%n%s", "--stat", commit, cwd=remote)
    assert "infx-cookbook-sync <infx-cookbook-sync@users.noreply.github.com>" in shown
    assert "PR #3859" in shown
    # Same files again: nothing to commit.
    again = book.branch_state(BRANCH, "main")
    assert again.tip == commit
    assert book.commit_files(again, files, "x") is None
    # A change commits on top of the bot's own tip (history kept, no force push).
    files2 = {**files, "docs/cookbook/DeepSeek-V4_1.mdx": "# DeepSeek-V4.1\n\n## Agentic\n"}
    second = book.commit_files(again, files2, "update")
    book.push(again, second)
    assert run("rev-parse", f"{second}^", cwd=remote).strip() == commit
    # The checkout's working tree was never used.
    assert not (book.path / "docs").exists()


def test_a_new_clone_knows_its_default_branch_and_a_kept_one_asks(remote, tmp_path):
    # The remote's default branch is "trunk": a clone made now was told so by its origin
    # (origin/HEAD), with no second question to the remote; a clone kept from an earlier run
    # asks the remote again (ls-remote), since the default branch may have changed since.
    run("branch", "trunk", "main", cwd=remote)
    run("symbolic-ref", "HEAD", "refs/heads/trunk", cwd=remote)
    book = CookbookClone.open(str(remote), cache_dir=tmp_path / "cache")
    run("remote", "set-url", "origin", str(tmp_path / "gone"), cwd=book.path)
    assert book.default_branch() == "trunk"  # no remote to ask: told at the clone
    run("remote", "set-url", "origin", str(remote), cwd=book.path)
    run("symbolic-ref", "HEAD", "refs/heads/main", cwd=remote)
    kept = CookbookClone.open(str(remote), cache_dir=tmp_path / "cache")
    assert kept.path == book.path
    assert kept.default_branch() == "main"


def test_human_commit_stops_the_bot(remote, tmp_path):
    book = CookbookClone.open(str(remote), cache_dir=tmp_path / "cache")
    state = book.branch_state(BRANCH, "main")
    book.push(state, book.commit_files(state, {"a.txt": "bot\n"}, "bot"))
    human = tmp_path / "human"
    run("clone", "--quiet", "--branch", BRANCH, str(remote), str(human), cwd=tmp_path)
    (human / "a.txt").write_text("human fix\n")
    run("commit", "--quiet", "-am", "reviewer fix", cwd=human)
    run("push", "--quiet", "origin", BRANCH, cwd=human)
    tip = run("rev-parse", "HEAD", cwd=human).strip()
    state = book.branch_state(BRANCH, "main")
    assert [sha for sha, _ in state.foreign] == [tip]
    assert state.foreign[0][1] == "Human <human@example.com>"
    with pytest.raises(SyncError, match="not made by the bot"):
        book.commit_files(state, {"a.txt": "bot again\n"}, "bot")
    assert run("rev-parse", f"refs/heads/{BRANCH}", cwd=remote).strip() == tip


def test_push_refused_when_someone_pushed_after_inspection(remote, tmp_path):
    book = CookbookClone.open(str(remote), cache_dir=tmp_path / "cache")
    state = book.branch_state(BRANCH, "main")
    commit = book.commit_files(state, {"a.txt": "bot\n"}, "bot")
    other = tmp_path / "other"
    run("clone", "--quiet", str(remote), str(other), cwd=tmp_path)
    (other / "b.txt").write_text("x\n")
    run("add", ".", cwd=other)
    run("commit", "--quiet", "-m", "race", cwd=other)
    run("push", "--quiet", "origin", f"HEAD:refs/heads/{BRANCH}", cwd=other)
    with pytest.raises(SyncError, match="git push failed"):
        book.push(state, commit)


def test_dry_run_writes_nothing(remote, tmp_path):
    plan = Plan(dry_run=True)
    book = CookbookClone.open(str(remote), cache_dir=tmp_path / "cache", plan=plan)
    state = book.branch_state(BRANCH, "main")
    objects_before = run("count-objects", "-v", cwd=book.path)
    commit = book.commit_files(state, {"docs/x.jsx": "new\n"}, "msg")
    book.push(state, commit)
    assert run("count-objects", "-v", cwd=book.path) == objects_before
    assert run("for-each-ref", "--format=%(refname)", cwd=remote).split() == ["refs/heads/main"]
    assert plan.writes[0] == f"git: write docs/x.jsx (4 bytes) on {BRANCH}"
    assert plan.writes[-1].startswith("git: push")


def test_dry_run_leaves_a_local_checkout_alone(remote, tmp_path):
    local = tmp_path / "local"
    run("clone", "--quiet", str(remote), str(local), cwd=tmp_path)
    seed = tmp_path / "seed"
    (seed / "later.txt").write_text("pushed after the checkout was made\n")
    run("add", ".", cwd=seed)
    run("commit", "--quiet", "-m", "later", cwd=seed)
    run("push", "--quiet", "origin", "HEAD:main", cwd=seed)
    fork = tmp_path / "fork.git"
    run("clone", "--quiet", "--bare", str(remote), str(fork), cwd=tmp_path)

    def snapshot() -> tuple[str, str]:
        return run("for-each-ref", cwd=local), (local / ".git/config").read_text()

    before = snapshot()
    book = CookbookClone.open(
        local, cache_dir=tmp_path / "scratch", plan=Plan(dry_run=True), push_url=str(fork)
    )
    assert book.path != local and book.path.parent == tmp_path / "scratch"
    # The dry run sees the remote as it is now, without fetching into the checkout.
    assert book.read("origin/main", "later.txt") == "pushed after the checkout was made\n"
    state = book.branch_state(BRANCH, "main")
    book.push(state, book.commit_files(state, {"a.txt": "x\n"}, "m"))
    assert snapshot() == before


def test_unsafe_paths_refused(remote, tmp_path):
    book = CookbookClone.open(str(remote), cache_dir=tmp_path / "cache")
    state = book.branch_state(BRANCH, "main")
    for bad in ("../evil", "/etc/passwd", "a/../../b", ".git/config", "a/.git/hooks/x", "a//b"):
        with pytest.raises(SyncError, match="outside the checkout"):
            book.commit_files(state, {bad: "x"}, "m")


def test_existing_checkout_and_identity(remote, tmp_path):
    local = tmp_path / "local"
    run("clone", "--quiet", str(remote), str(local), cwd=tmp_path)
    book = CookbookClone.open(
        local, cache_dir=tmp_path / "unused", identity=Identity("bot", "bot@example.com")
    )
    assert book.path == local
    assert not (tmp_path / "unused").exists()
    assert book.read("origin/main", "docs/cookbook/DeepSeek-V4_1.mdx") == "# DeepSeek-V4.1\n"
    assert book.read("origin/main", "missing") is None


def test_fork_mode_pushes_and_inspects_the_fork(remote, tmp_path):
    fork = tmp_path / "fork.git"
    run("clone", "--quiet", "--bare", str(remote), str(fork), cwd=tmp_path)
    book = CookbookClone.open(str(remote), cache_dir=tmp_path / "cache", push_url=str(fork))
    state = book.branch_state(BRANCH, "main")
    commit = book.commit_files(state, {"a.txt": "bot\n"}, "bot")
    book.push(state, commit)
    assert run("rev-parse", f"refs/heads/{BRANCH}", cwd=fork).strip() == commit
    assert run("for-each-ref", "--format=%(refname)", cwd=remote).split() == ["refs/heads/main"]
    # Re-opened (a later event), the fork's branch is what is inspected.
    again = CookbookClone.open(str(remote), cache_dir=tmp_path / "cache", push_url=str(fork))
    assert again.branch_state(BRANCH, "main").tip == commit


def test_read_sees_what_each_fetch_brings_and_only_files(remote, tmp_path):
    # One `git cat-file --batch` serves a checkout's reads: a ref read again after a fetch is
    # the new commit's, an object fetched after the batch started is found, and what is no
    # file (absent, a folder, a name git cannot take on one line) is None.
    page = "docs/cookbook/DeepSeek-V4_1.mdx"
    book = CookbookClone.open(str(remote), cache_dir=tmp_path / "cache")
    first = book.rev("origin/main")
    assert first is not None
    assert book.read("origin/main", page) == "# DeepSeek-V4.1\n"
    assert book.read(first, "docs/cookbook/nope.mdx") is None
    assert book.read(first, "docs/cookbook") is None
    assert book.read(first, "docs/cookbook/DeepSeek-V4_1.mdx\nx") is None
    work = tmp_path / "seed"
    (work / page).write_text("# DeepSeek-V4.1, edited\n")
    run("commit", "--quiet", "-am", "edit", cwd=work)
    run("push", "--quiet", "origin", "HEAD:main", cwd=work)
    second = run("rev-parse", "HEAD", cwd=work).strip()
    assert book.read(second, page) is None  # not fetched yet
    book.fetch()
    assert book.read("origin/main", page) == "# DeepSeek-V4.1, edited\n"
    assert book.read(second, page) == "# DeepSeek-V4.1, edited\n"
    assert book.read(first, page) == "# DeepSeek-V4.1\n"
