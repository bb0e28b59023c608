"""Failure comments address whoever can fix the failure (issue 40.5): the PR's author for the
PR's own files, another PR or InferenceX main for a config of theirs on the same page, the
sync's operators for the cookbook clone and the tool's set-up; and they carry no path of the
runner. Each through `sync bot` against the schema-validated fake GitHub."""

from __future__ import annotations

import shutil

from botworld import INFX, INFX_BOT, MODULE, PR, RUN, SEED_KEY, SEED_PR, World, git, plain, sync_bot
from conftest import ROOT

from syncer.publish import status as st

RUNNER_MARKS = ("/tmp/", "/dev/shm/", "infx-bot-", "infx-tree-", "infx-gen-")


def _status(world: World) -> str:
    [comment] = [
        c
        for c in world.gh.comments_on(INFX, PR)
        if c["user"] == INFX_BOT and c["body"].startswith(st.STATUS_MARKER)
    ]
    return comment["body"]


def _no_runner_path(world: World, body: str, marks: tuple[str, ...] = RUNNER_MARKS) -> None:
    for mark in (*marks, str(world.tmp)):
        assert mark not in body, (mark, body)


def test_the_authors_own_recipe_value_is_the_authors_to_fix(world):
    checkout = world.tmp / "inferencex"
    shutil.copytree(ROOT / "examples/inferencex", checkout)
    recipe = next(checkout.rglob("gb300-fp4-mtp/agentic.yaml"))
    text = recipe.read_text()
    recipe.write_text(
        text.replace(
            "SGLANG_DSV41_REASONING_EFFORT: high", 'SGLANG_DSV41_REASONING_EFFORT: "high\\nx"'
        )
    )
    world.inferencex = checkout
    comment = world.comment(f"/use {RUN}")
    proc = sync_bot(world, world.comment_event(comment), "--inferencex", str(checkout))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    body = _status(world)
    seen = plain(body)
    assert "SGLANG_DSV41_REASONING_EFFORT" in seen
    assert "Fix it in this PR; the next push or /use comment retries." in seen
    _no_runner_path(world, body)


def _break_cookbook_module(world: World) -> None:
    """A commit on the cookbook's main that leaves the model's module unreadable: nothing an
    InferenceX PR can fix."""
    seed = world.tmp / "seed"
    module = seed / MODULE
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text("export const x = ;\n")
    git("add", ".", cwd=seed)
    git("commit", "--quiet", "-m", "a broken module", cwd=seed)
    git("push", "--quiet", "origin", "HEAD:main", cwd=seed)


def test_a_broken_cookbook_clone_is_the_operators_to_fix(world):
    _break_cookbook_module(world)
    comment = world.comment(f"/use {RUN}")
    proc = sync_bot(world, world.comment_event(comment))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    body = _status(world)
    seen = plain(body)
    assert "The cookbook sync stopped before publishing anything" in seen
    assert "Fix it in this PR" not in seen
    assert "Nothing is needed from this PR" in seen and "operators of the cookbook sync" in seen
    _no_runner_path(world, body)


def test_another_prs_lost_commit_does_not_stop_this_pr(replay):
    """Discovery, as the workflow runs it: PR A's config is on the cookbook PR at A's commit;
    A is then force-pushed and its old commit pruned from InferenceX. Syncing PR B renders only
    B's config (issue 35: the module is edited, A's cells stay as published), so A's lost
    commit stops nothing and B is told no error. (Before, every config of the page was
    rendered again and B was told the cause was A's: blame.OTHER_PR, which still names the PR
    of a config that must be rendered, such as a KV donor.)"""
    from botworkflow import Workflow
    from infxrepo import MASTER, add_key

    flow = Workflow(replay)
    infx = replay.infx
    other_key = "-".join(["dsv41flash", "fp4", "gb300", "sglang", "agentic", "otherarm"])
    infx.write(MASTER, add_key(infx.read(MASTER), other_key, conc=[16], row=1))
    a1 = infx.commit("PR A: another arm")
    pull_a = replay.open_pr(3802, "arm-a", a1)
    flow.pushed(pull_a)
    before = [c for c in replay.module()["cells"] if c["configKey"] == other_key]
    assert before
    # A's branch rewritten to main; its old commit gone from the repository.
    remote = replay.infx.remote
    git("update-ref", "refs/pull/3802/head", infx.main, cwd=remote)
    git("reflog", "expire", "--expire=now", "--all", cwd=remote)
    git("gc", "--quiet", "--prune=now", cwd=remote)
    infx.checkout(infx.main)
    infx.write(MASTER, add_key(infx.read(MASTER), SEED_KEY))
    b1 = infx.commit("PR B: the seed arm")
    pull_b = replay.open_pr(SEED_PR, "arm-b", b1)
    flow.pushed(pull_a, fails=True)  # A's own head is gone: A's sync fails, not B's
    flow.pushed(pull_b)  # a push reconciles its own PR only (issue 40.7): B's opening
    [said] = flow.raw(SEED_PR)
    seen = plain(said)
    assert "The cookbook sync stopped before publishing anything" not in seen
    assert f"AgentX config ({SEED_KEY})" in seen
    cells = replay.module()["cells"]
    assert [c for c in cells if c["configKey"] == other_key] == before
    assert any(c["configKey"] == SEED_KEY for c in cells)
    for mark in (*RUNNER_MARKS, str(replay.tmp)):
        assert mark not in said


def test_the_cookbook_pr_tells_its_reviewers_of_a_hand_edited_section_without_runner_paths(
    world,
):
    """A section the bot did not write is left alone; the PR body says so to SGLang's
    reviewers by the page's path in their repository, with advice they can follow (no
    `sync generate --force-page`, a command of this tool they do not run)."""
    from botworld import PAGE, SECTION

    seed = world.tmp / "seed"
    page = seed / PAGE
    page.write_text(page.read_text() + f"\n## {SECTION}\n\nWritten by hand.\n")
    git("commit", "--quiet", "-am", "a hand-written section", cwd=seed)
    git("push", "--quiet", "origin", "HEAD:main", cwd=seed)
    line = page.read_text().splitlines().index(f"## {SECTION}") + 1
    comment = world.comment(f"/use {RUN}")
    proc = sync_bot(world, world.comment_event(comment))
    assert proc.returncode == 0, proc.stderr
    [pull] = world.book_pulls()
    body = pull["body"]
    assert (
        f'page section left alone: {PAGE} line {line}: the section "{SECTION}" was not '
        "written by the bot (it has no agentx-sync marker), so this PR leaves it as it is and "
        "changes only the data module."
    ) in plain(body)
    assert "sync generate" not in body and "--force-page" not in body
    # (The commands themselves may name /tmp: an etcd data directory.)
    _no_runner_path(world, body, ("infx-bot-", "infx-gen-", "infx-tree-", "infx-dry-"))


def test_who_fixes_what_the_error_names(tmp_path):
    """The rule on its own: a key is named only as a whole word, this PR's key wins, a commit's
    tree names its PR, and what names nothing of InferenceX is the operators'."""
    import tempfile

    from syncer.publish import blame

    owners = {"a-key": "7", "a-key-2": "8", "main-key": None}
    tree = f"{tempfile.gettempdir()}/infx-tree-abcdef123456-x1y2/inferencex-e2e/configs/m.yaml"
    assert blame.fixer("a-key-2#0: bad", 7, owners, {}) == blame.Fixer(blame.OTHER_PR, 8)
    assert blame.fixer("a-key#0 and a-key-2#0: bad", 7, owners, {}).who == blame.AUTHOR
    assert blame.fixer("main-key: bad", 7, owners, {}).who == blame.MAINTAINERS
    commits = {"abcdef1234567890": "9"}
    assert blame.fixer(f"{tree}:3: bad", 7, owners, commits) == blame.Fixer(blame.OTHER_PR, 9)
    assert blame.fixer("git push refused", 7, owners, commits).who == blame.OPERATORS
    assert (
        blame.without_runner_paths(f"{tree}:3: bad", []) == "inferencex-e2e/configs/m.yaml:3: bad"
    )
    checkout = tmp_path / "infx"
    said = blame.without_runner_paths(f"{checkout}/configs/m.yaml:1: x", [], checkout)
    assert said == "configs/m.yaml:1: x"
