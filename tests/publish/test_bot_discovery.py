"""The bot against real InferenceX traffic: configs found from a PR's commits (no registration
anywhere), each config read at its own commit, one new comment per milestone.

Everything goes through ``sync bot`` (click, in-process) with the bundled sync.yaml, the local
GitHub server, a real bare cookbook repository and a real InferenceX repository whose PR heads
live under ``refs/pull/<n>/head``, fetched into the bot's own clone as git objects.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from botworld import (
    BOOK,
    CHANGELOG,
    INFX,
    INFX_BOT,
    MODEL,
    MODULE,
    PAGE_URL,
    RUN,
    SECTION,
    SEED_KEY,
    SEED_PR,
    Replay,
    add_pinned_run,
    run_artifacts,
)
from conftest import ROOT
from ghserver import TS
from infxrepo import DSPARK_RECIPE, MASTER, add_key

from syncer.commands.group import cli
from syncer.cookbook.decode import Decoder
from syncer.encoder.cells import cells_from_module
from syncer.publish import evidence
from syncer.publish import status as st


def _changelog(replay: Replay, line: str) -> str:
    old = (
        (replay.infx.work / CHANGELOG).read_text()
        if (replay.infx.work / CHANGELOG).exists()
        else ""
    )
    replay.infx.write(CHANGELOG, old + line + "\n")
    return replay.infx.commit(f"changelog: {line}")


def merged_text(book_pr: int) -> str:
    """The seed thread's comment of a merged cookbook PR (its first sentences)."""
    return (
        f"{BOOK}#{book_pr} has been merged. This PR's AgentX config ({SEED_KEY}) is now in the "
        f"{SECTION} section of the SGLang DeepSeek-V4.1 cookbook: {PAGE_URL}"
    )


def test_the_seed_thread_replayed_stage_by_stage(replay):
    """PR #3859's thread: opened with a new AgentX config; cookbook PR merged; /use by a
    collaborator; merged again; a push and /reuse-sweep-run. Each stage's new comment carries
    the seed's facts, and a replayed event never posts a comment twice."""
    assert SEED_KEY not in (ROOT / "sync.yaml").read_text()
    infx = replay.infx
    infx.write(MASTER, add_key(infx.read(MASTER), SEED_KEY))
    h1 = infx.commit("[AgentX] GB300 DSV4.1 Flash SGLang: a new arm")
    pull = replay.open_pr(SEED_PR, "gb300-dsv41", h1)
    opened = replay.pr_payload(pull, "opened")
    # The workflow's gate finds the model from the event and the commits alone.
    assert replay.models_only("pull_request", opened) == [MODEL]

    # 1. PR opened: the cookbook PR will happen in #1, recipe at the head "in progress".
    replay.send("pull_request", opened)
    [stage1] = replay.bot_comments(SEED_PR)
    assert (
        f"The SGLang cookbook integration of this PR's AgentX config ({SEED_KEY}) will happen in "
        f"{BOOK}#1, in the {SECTION} section of the DeepSeek-V4.1 cookbook page."
    ) in stage1
    assert (
        "This PR has no authorized /use <run_id> comment yet, so the cookbook shows the recipe "
        f'at this PR\'s head ({h1[:9]}) as "in progress".'
    ) in stage1
    assert "refreshes it" not in stage1
    [book1] = replay.book_pulls()
    cells = replay.module()["cells"]
    assert {c["configKey"] for c in cells} == {SEED_KEY}
    assert {c["prov"]["sha"] for c in cells} == {h1}
    assert {c["prov"]["status"] for c in cells} == {"in-progress"}
    # Replayed: nothing new.
    replay.send("pull_request", opened)
    assert len(replay.bot_comments(SEED_PR)) == 1 and len(replay.book_pulls()) == 1

    # 2. Cookbook PR #1 merged: a new comment with the page URL, still in progress.
    replay.merge_cookbook(book1["number"])
    stage2 = replay.bot_comments(SEED_PR)[1]
    assert merged_text(1) in stage2
    assert f'at this PR\'s head ({h1[:9]}) as "in progress"' in stage2
    assert len(replay.bot_comments(SEED_PR)) == 2

    # A push that changes nothing the config reads (the changelog entry): nothing republished.
    h2 = _changelog(replay, "- config-keys: [seedarm]")
    replay.push(pull, h2)
    replay.pr_event(pull, "synchronize")
    assert len(replay.bot_comments(SEED_PR)) == 2 and len(replay.book_pulls()) == 1

    # 3. /use <run> by a collaborator: the update will happen in #2, live since #1, the run.
    add_pinned_run(replay.gh, h2, "gb300-dsv41")
    replay.comment(pull, f"/use {RUN}", at="2026-10-13T09:00:00Z")
    stage3 = replay.bot_comments(SEED_PR)[2]
    assert (
        f"The SGLang cookbook update of this PR's AgentX config ({SEED_KEY}) will happen in "
        f"{BOOK}#2, in the {SECTION} section of the DeepSeek-V4.1 cookbook page. The config has "
        f"been live in that section since {BOOK}#1; {BOOK}#2 refreshes it with the pin below."
    ) in stage3
    assert (
        f"The commands mirror the launch measured in run {RUN}, pinned by this PR's /use comment."
    ) in stage3
    assert "in progress" not in stage3
    prov = {json.dumps(c["prov"], sort_keys=True) for c in replay.module()["cells"]}
    [only] = prov
    assert json.loads(only)["run"] == str(RUN) and json.loads(only)["sha"] == h2

    # 4. Cookbook PR #2 merged: the page URL and the run.
    replay.merge_cookbook(2)
    stage4 = replay.bot_comments(SEED_PR)[3]
    assert merged_text(2) in stage4
    assert f"measured in run {RUN}, pinned by this PR's /use comment" in stage4

    # 5. The author pushes again ("I am already working on it"): the pinned run still holds
    # (its commit is in the PR), the cookbook is refreshed at the new head in #3.
    h3 = _changelog(replay, "- resolved the changelog conflict")
    replay.push(pull, h3)
    replay.pr_event(pull, "synchronize")
    stage5 = replay.bot_comments(SEED_PR)[4]
    assert (
        f"The SGLang cookbook update of this PR's AgentX config ({SEED_KEY}) will happen in "
        f"{BOOK}#3, in the {SECTION} section of the DeepSeek-V4.1 cookbook page. The config has "
        f"been live in that section since {BOOK}#2; {BOOK}#3 refreshes it with the pin below."
    ) in stage5
    assert f"measured in run {RUN}, pinned by this PR's /use comment" in stage5
    # /reuse-sweep-run of the same run: the pin stays; no comment, no PR.
    replay.comment(pull, f"/reuse-sweep-run {RUN}", at="2026-10-14T09:00:00Z")
    assert len(replay.bot_comments(SEED_PR)) == 5
    assert [p["number"] for p in replay.book_pulls()] == [1, 2, 3]
    markers = [
        c["body"].splitlines()[0]
        for c in sorted(replay.gh.comments_on(INFX, SEED_PR), key=lambda c: c["id"])
        if c["user"] == INFX_BOT and not evidence.is_record(c["body"])
    ]
    # One evidence record of the verified pin, kept beside the milestones (edited, not reposted).
    records = [c for c in replay.gh.comments_on(INFX, SEED_PR) if evidence.is_record(c["body"])]
    assert len(records) == 1 and records[0]["user"] == INFX_BOT
    assert markers == [
        f"{st.MILESTONE_PREFIX}{MODEL} open 1 in-progress -->",
        f"{st.MILESTONE_PREFIX}{MODEL} merged 1 in-progress -->",
        f"{st.MILESTONE_PREFIX}{MODEL} open 2 verified-pr -->",
        f"{st.MILESTONE_PREFIX}{MODEL} merged 2 verified-pr -->",
        f"{st.MILESTONE_PREFIX}{MODEL} open 3 verified-pr -->",
    ]


def _cells(module: Any, key: str) -> list[dict[str, Any]]:
    """Every cell of ``key`` decoded completely (all points' blocks, provenance)."""
    spec = cells_from_module(module, Decoder(module, MODULE), MODULE)
    return [dataclasses.asdict(c) for c in spec.cells if c.config_key == key]


def test_two_open_prs_on_one_model_each_read_at_its_own_commit(replay):
    infx = replay.infx
    master, recipe = infx.read(MASTER), infx.read(DSPARK_RECIPE)
    key_a = SEED_KEY
    key_b = "-".join(["dsv41flash", "fp4", "gb300", "sglang", "agentic", "otherarm"])
    # PR A: a new arm with its own retuned recipe.
    own = "dsv41flash/sglang/gb300-fp4-mtp-a"
    infx.write(MASTER, add_key(master, key_a, conc=[1, 4], recipe_dir=own))
    retuned = recipe.replace("mem-fraction-static: 0.8", "mem-fraction-static: 0.7", 1)
    infx.write(DSPARK_RECIPE.replace("gb300-fp4-mtp", "gb300-fp4-mtp-a"), retuned)
    head_a = infx.commit("PR A: a new arm, retuned")
    # PR B branches from main: neither key A nor its recipe exist in B's tree. Its arm is
    # another deployment shape (TP2·EP2): cells of one shape would be told apart on the page
    # by their config keys, a change of A's cells the page itself needs.
    infx.checkout(infx.main)
    infx.write(MASTER, add_key(master, key_b, conc=[16], row=1))
    head_b = infx.commit("PR B: another arm")
    pull_a = replay.open_pr(4001, "arm-a", head_a)
    pull_b = replay.open_pr(4002, "arm-b", head_b)

    replay.pr_event(pull_a, "opened")
    published_a = _cells(replay.module(), key_a)
    assert published_a and {c["points"][0]["prov"]["sha"] for c in published_a} == {head_a}
    assert '["--mem-fraction-static", "0.7"]' in json.dumps(published_a)

    # The event on B: one cookbook PR carries both; A's cells exactly as published (read at
    # A's head), B's read at B's head (the recipe of main, 0.8).
    replay.pr_event(pull_b, "opened")
    [book] = replay.book_pulls()
    module = replay.module()
    assert {c["configKey"] for c in module["cells"]} == {key_a, key_b}
    assert _cells(module, key_a) == published_a
    cells_b = _cells(module, key_b)
    assert cells_b and {c["points"][0]["prov"]["sha"] for c in cells_b} == {head_b}
    assert '["--mem-fraction-static", "0.8"]' in json.dumps(cells_b)
    assert set(module["source"]["prs"]) == {"4001", "4002"}
    # And back: an event on A leaves B's cells as they are.
    replay.pr_event(pull_a, "synchronize")
    assert _cells(replay.module(), key_b) == cells_b
    assert _cells(replay.module(), key_a) == published_a
    [comment_a] = replay.bot_comments(4001)
    [comment_b] = replay.bot_comments(4002)
    assert f"({key_a}) will happen in {BOOK}#{book['number']}" in comment_a
    assert f"({key_b}) will happen in {BOOK}#{book['number']}" in comment_b


def test_a_key_no_page_takes_is_named_not_dropped(replay):
    infx = replay.infx
    stranger = "-".join(["qwen4", "fp8", "gb300", "sglang", "agentic"])
    text = add_key(infx.read(MASTER), stranger, prefix="qwen4")
    infx.write(MASTER, text)
    head = infx.commit("a model the cookbook has no page for")
    pull = replay.open_pr(4100, "qwen", head)
    # No page takes it, yet the gate runs one job (sync.yaml's first model) to say so.
    assert replay.models_only("pull_request", replay.pr_payload(pull, "opened")) == [MODEL]
    replay.pr_event(pull, "opened", "--model", MODEL)
    [comment] = replay.bot_comments(4100)
    assert (
        f"no cookbook page for {stranger}: no model of sync.yaml matches its model prefix qwen4 "
        "or its key"
    ) in comment
    assert replay.book_pulls() == []
    replay.pr_event(pull, "synchronize")
    assert len(replay.bot_comments(4100)) == 1
    assert re.search(r"cookbook sync publishes nothing for them", comment)


def test_a_push_before_any_pin_updates_the_open_cookbook_pr_and_says_no_pin(replay):
    infx = replay.infx
    infx.write(MASTER, add_key(infx.read(MASTER), SEED_KEY))
    h1 = infx.commit("a new arm")
    pull = replay.open_pr(SEED_PR, "arm", h1)
    # A comment GitHub tells of (never stored: the gate reads only the event).
    unsaved = {"id": 1, "issue": SEED_PR, "body": "/use 1", "user": "maintainer"}
    unsaved |= {"author_association": "MEMBER", "created_at": TS, "updated_at": TS}
    comment_event = replay.gh.issue_comment_event(INFX, unsaved)
    # The gate finds the model of a comment's PR from the fetched PR head alone.
    assert replay.models_only("issue_comment", comment_event) == [MODEL]
    replay.pr_event(pull, "opened")
    # A push retuning the recipe the config reads: the same cookbook PR is updated, and the
    # comment of that milestone (no new one: nothing new happened) names the new head.
    recipe = infx.read(DSPARK_RECIPE)
    infx.write(
        DSPARK_RECIPE, recipe.replace("mem-fraction-static: 0.8", "mem-fraction-static: 0.75", 1)
    )
    h2 = infx.commit("retune")
    replay.push(pull, h2)
    replay.pr_event(pull, "synchronize")
    assert [p["number"] for p in replay.book_pulls()] == [1]
    assert {c["prov"]["sha"] for c in replay.module()["cells"]} == {h2}
    [comment] = replay.bot_comments(SEED_PR)
    assert f"will happen in {BOOK}#1" in comment
    assert f'at this PR\'s head ({h2[:9]}) as "in progress"' in comment
    # Merged, then another retune before any /use: an update PR, which does not claim a pin.
    replay.merge_cookbook(1)
    infx.write(
        DSPARK_RECIPE, recipe.replace("mem-fraction-static: 0.8", "mem-fraction-static: 0.7", 1)
    )
    h3 = infx.commit("retune again")
    replay.push(pull, h3)
    replay.pr_event(pull, "synchronize")
    update = replay.bot_comments(SEED_PR)[2]
    assert (
        f"The config has been live in that section since {BOOK}#1; {BOOK}#2 refreshes it with "
        "the recipe at this PR's head."
    ) in update
    assert "pin below" not in update
    assert f'at this PR\'s head ({h3[:9]}) as "in progress"' in update


def test_inferencex_merge_turns_the_pin_verified_and_an_unmerged_close_closes_the_pr(replay):
    infx = replay.infx
    infx.write(MASTER, add_key(infx.read(MASTER), SEED_KEY))
    head = infx.commit("a new arm")
    pull = replay.open_pr(SEED_PR, "arm", head)
    replay.gh.add_run(INFX, RUN, head_sha=head, head_branch="arm", artifacts=run_artifacts())
    replay.comment(pull, f"/use {RUN}", at="2026-10-13T09:00:00Z")
    assert {c["prov"]["status"] for c in replay.module()["cells"]} == {"verified-pr"}
    old_main = infx.main
    infx.merge_to_main(head)
    pull["state"], pull["merged"] = "closed", True
    replay.pr_event(pull, "closed")
    cells = replay.module()["cells"]
    assert {c["prov"]["status"] for c in cells} == {"verified"}
    assert {c["prov"]["sha"] for c in cells} == {head}
    comments = replay.bot_comments(SEED_PR)
    assert len(comments) == 2  # the pin became "verified": a milestone of its own
    assert f"measured in run {RUN}" in comments[1]
    # Replayed later without the event's base (the merge base is now the head itself): the
    # PR's first commit's parent tells its changes, nothing is posted twice.
    replay.comment(pull, "thanks", at="2026-10-15T09:00:00Z")
    replay.pr_event({**pull, "commits": [head]}, "closed")
    assert len(replay.bot_comments(SEED_PR)) == 2
    assert old_main != head

    # Another PR with its own arm, closed without merging: its cookbook PR (which carries
    # nothing else on its way: the merged PR's verified config is on the cookbook's main) is
    # closed, and the PR is told in a comment of its own.
    replay.merge_cookbook(1)
    infx.checkout(head)
    infx.write(MASTER, add_key(infx.read(MASTER), SEED_KEY + "x", conc=[16], row=1))
    other_head = infx.commit("another arm")
    other = replay.open_pr(4200, "other", other_head)
    replay.pr_event(other, "opened")
    [open_book] = [p for p in replay.book_pulls() if p["state"] == "open"]
    other["state"] = "closed"
    replay.pr_event(other, "closed")
    assert replay.gh.repo(BOOK).pulls[open_book["number"]]["state"] == "closed"
    told = replay.bot_comments(4200)
    assert len(told) == 2
    assert "This PR was closed without merging" in told[1]
    assert (
        f"{BOOK}#{open_book['number']}, the cookbook PR that carried it, has been closed."
        in told[1]
    )


def test_a_dry_run_without_tokens_finds_the_config_and_writes_nothing(replay):
    infx = replay.infx
    infx.write(MASTER, add_key(infx.read(MASTER), SEED_KEY))
    head = infx.commit("a new arm")
    replay.infx.publish_pr(SEED_PR, head)
    payload = {
        "action": "opened",
        "repository": {"full_name": INFX},
        "pull_request": {
            "number": SEED_PR,
            "state": "open",
            "title": "arm",
            "body": "",
            "merged": False,
            "user": {"login": "author"},
            "labels": [],
            "html_url": f"https://github.com/{INFX}/pull/{SEED_PR}",
            "head": {"sha": head, "ref": "arm", "repo": {"full_name": INFX}},
            "base": {"sha": infx.main, "ref": "main"},
        },
    }
    args = replay.args("pull_request", payload, "--dry-run")
    result = replay.runner.invoke(cli, args, env={"GITHUB_TOKEN": "", "COOKBOOK_TOKEN": ""})
    assert result.exit_code == 0, result.output
    assert f"PR #{SEED_PR}: AgentX configs {SEED_KEY}" in result.output
    assert "would open a PR in sgl-project/sglang (dry run)" in result.output
    # The cookbook PR it would open has no number yet: "a new PR", never "#0".
    assert (
        f"PR #{SEED_PR}: would post a comment (deepseek-ai/deepseek-v4_1 open new in-progress)"
        in result.output
    )
    assert f"will happen in a new PR in {BOOK}, in the Agentic Long-Context" in result.output
    assert f"{BOOK}#0" not in result.output and " 0 in-progress" not in result.output
    assert replay.gh.writes() == [] and replay.book_pulls() == []


def test_a_config_shown_at_an_older_main_commit_keeps_its_cells(replay):
    """Main moved on (a retune pushed without the bot seeing it): an event on another PR
    renders the published config at the commit its cells record, not at main's tip."""
    infx = replay.infx
    master, recipe = infx.read(MASTER), infx.read(DSPARK_RECIPE)
    own = "dsv41flash/sglang/gb300-fp4-mtp-a"
    own_recipe = DSPARK_RECIPE.replace("gb300-fp4-mtp", "gb300-fp4-mtp-a")
    infx.write(MASTER, add_key(master, SEED_KEY, conc=[1, 4], recipe_dir=own))
    infx.write(own_recipe, recipe)
    head_a = infx.commit("PR A")
    pull_a = replay.open_pr(4301, "a", head_a)
    replay.pr_event(pull_a, "opened")
    replay.merge_cookbook(1)
    published = _cells(replay.module("main"), SEED_KEY)
    infx.merge_to_main(head_a)
    infx.write(
        own_recipe, recipe.replace("mem-fraction-static: 0.8", "mem-fraction-static: 0.6", 1)
    )
    tip = infx.commit("a retune straight on main")
    infx.merge_to_main(tip)
    key_b = "-".join(["dsv41flash", "fp4", "gb300", "sglang", "agentic", "otherarm"])
    infx.write(MASTER, add_key(infx.read(MASTER), key_b, conc=[16], row=1))
    pull_b = replay.open_pr(4302, "b", infx.commit("PR B"))
    replay.pr_event(pull_b, "opened")
    module = replay.module()
    assert {c["configKey"] for c in module["cells"]} == {SEED_KEY, key_b}
    assert _cells(module, SEED_KEY) == published
    assert '"0.6"' not in json.dumps(_cells(module, SEED_KEY))
