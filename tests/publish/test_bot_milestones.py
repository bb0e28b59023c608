"""The seed thread replayed the way `.github/workflows/cookbook-sync.yml` runs the bot (issue 40,
points 1-3): a push to a branch of InferenceX dispatches the reconcile on the default branch
(workflow_dispatch without input), a merge in sgl-project/sglang is seen only by the hourly
schedule (nothing there sends an event), a `/use` comment is an issue_comment; each event's
gate job (`--models-only --json`) and each model's publish job runs on a fresh runner (its own
InferenceX clone and cookbook cache), against the schema-validated fake GitHub.

One new comment per milestone, decided by the state (which cookbook PR, which pin, which
merge), never by which run sees it; none on a PR whose config the bot did not change; the
tool's own links plain.
"""

from __future__ import annotations

from typing import Any

from botworkflow import Workflow
from botworld import (
    BOOK,
    INFX,
    MODEL,
    PAGE_URL,
    RUN,
    SECTION,
    SEED_KEY,
    SEED_PR,
    Replay,
    add_pinned_run,
)
from infxrepo import MASTER, add_key

from syncer.publish import status as st

OTHER_KEY = "-".join(["dsv41flash", "fp4", "gb300", "sglang", "agentic", "otherarm"])
OTHER_PR = 3802
CHANGELOG = "inferencex-e2e/perf-changelog.yaml"


def _changelog(replay: Replay, line: str) -> str:
    path = replay.infx.work / CHANGELOG
    old = path.read_text() if path.exists() else ""
    replay.infx.write(CHANGELOG, old + line + "\n")
    return replay.infx.commit(f"changelog: {line}")


def _other_pr_live(flow: Workflow) -> dict[str, Any]:
    """Before the seed PR: another InferenceX PR's config went live through cookbook PR #1,
    and that PR merged. The bot told it both (will happen in #1, #1 merged)."""
    infx = flow.r.infx
    infx.write(MASTER, add_key(infx.read(MASTER), OTHER_KEY, conc=[16], row=1))
    head = infx.commit("[AgentX] another arm")
    other = flow.r.open_pr(OTHER_PR, "other-arm", head)
    flow.pushed(other)
    infx.merge_to_main(head)
    other.update(state="closed", merged=True)
    flow.pushed(other)  # its `closed` event, dispatched
    flow.merge_cookbook(1)
    flow.schedule()
    assert [b.splitlines()[0] for b in flow.raw(OTHER_PR)] == [
        f"{st.MILESTONE_PREFIX}{MODEL} open 1 in-progress -->",
        f"{st.MILESTONE_PREFIX}{MODEL} merged 1 in-progress -->",
    ]
    infx.checkout(infx.main)
    return other


def _seed_thread(flow: Workflow, first: int) -> list[str]:
    """PR #3859's five stages, each event as the workflow runs it, an hourly schedule after
    each that must write nothing; cookbook PRs numbered from ``first``. The bot's comments."""
    replay = flow.r
    infx = replay.infx
    infx.write(MASTER, add_key(infx.read(MASTER), SEED_KEY))
    h1 = infx.commit("[AgentX] GB300 DSV4.1 Flash SGLang: a new arm")
    pull = replay.open_pr(SEED_PR, "gb300-dsv41", h1)
    # 1. Opened: the dispatched reconcile opens the cookbook PR.
    flow.pushed(pull)
    flow.quiet_schedule()
    # 2. Merged in the cookbook: the schedule finds it.
    flow.merge_cookbook(first)
    flow.schedule()
    flow.quiet_schedule()
    # 3. A push of the changelog, then /use by a collaborator: the update's PR.
    h2 = _changelog(replay, "- config-keys: [seedarm]")
    replay.push(pull, h2)
    flow.pushed(pull)
    add_pinned_run(replay.gh, h2, "gb300-dsv41")
    flow.comment(pull, f"/use {RUN}", at="2026-10-13T09:00:00Z")
    flow.quiet_schedule()
    # 4. The refresh merged: the schedule finds it; later schedules write nothing.
    flow.merge_cookbook(first + 1)
    flow.schedule()
    flow.quiet_schedule()
    flow.quiet_schedule()
    # 5. A push: the pin still holds; the cookbook is refreshed in a third PR.
    h3 = _changelog(replay, "- resolved the changelog conflict")
    replay.push(pull, h3)
    flow.pushed(pull)
    flow.comment(pull, f"/reuse-sweep-run {RUN}", at="2026-10-14T09:00:00Z")
    flow.quiet_schedule()
    return flow.raw(SEED_PR)


def _check_seed_comments(said: list[str], first: int) -> None:
    assert [b.splitlines()[0] for b in said] == [
        f"{st.MILESTONE_PREFIX}{MODEL} open {first} in-progress -->",
        f"{st.MILESTONE_PREFIX}{MODEL} merged {first} in-progress -->",
        f"{st.MILESTONE_PREFIX}{MODEL} open {first + 1} verified-pr -->",
        f"{st.MILESTONE_PREFIX}{MODEL} merged {first + 1} verified-pr -->",
        f"{st.MILESTONE_PREFIX}{MODEL} open {first + 2} verified-pr -->",
    ]
    merged = (
        f"has been merged. This PR's AgentX config ({SEED_KEY}) is now in the {SECTION} section "
        f"of the SGLang DeepSeek-V4.1 cookbook: <{PAGE_URL}>"
    )
    assert f"{BOOK}#{first} {merged}" in said[1] and 'as "in progress"' in said[1]
    assert f"{BOOK}#{first + 1} {merged}" in said[3]
    assert f"measured in run [{RUN}](" in said[3]
    assert "has no authorized" not in said[3]


def test_one_comment_per_milestone_whichever_run_sees_it(replay):
    """40.1: the refresh PR's merge is told once, with its own pin; the first cookbook PR's
    in-progress pin is never paired with it."""
    flow = Workflow(replay)
    said = _seed_thread(flow, 1)
    _check_seed_comments(said, 1)
    # No comment on any other PR (the example's other PR with a config included).
    assert {c["issue"] for c in replay.gh.repo(INFX).comments.values()} == {SEED_PR}
    # 40.3: the tool's own links are plain; no zero-width space anywhere in what it wrote.
    for body in said + [p["body"] for p in replay.book_pulls()]:
        assert "\u200b" not in body
        # 40.5: nothing of the runner either.
        assert str(replay.tmp) not in body and "infx-tree-" not in body


def test_no_comment_on_a_pr_whose_config_the_cookbook_pr_did_not_change(replay):
    """40.2: another PR's config went live in #1 and that PR merged; the seed thread's
    cookbook PRs carry it unchanged, so it hears nothing more."""
    flow = Workflow(replay)
    _other_pr_live(flow)
    other_said = flow.raw(OTHER_PR)
    _check_seed_comments(_seed_thread(flow, 2), 2)
    assert flow.raw(OTHER_PR) == other_said
