"""The bot's call path as data (issue 38.2): an event is routed to a list of work items the bot
then does, the catch-up of dropped closings names the PRs to sync rather than syncing them,
the InferenceX side is given to the module generation when it is made, one render cache serves
the whole event, and `sync bot` prints one report built in one place."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from botworld import INFX, KEY, MODEL, PR, RUN, World, first_use
from conftest import ROOT

from syncer.github.event import BadEvent
from syncer.github.offline import EventGitHub
from syncer.github.plan import Plan
from syncer.inferencex import commits
from syncer.inferencex.renders import Renders
from syncer.publish.bot import Bot
from syncer.publish.bot_report import BotRun, bot_report
from syncer.publish.generation import Checkout
from syncer.publish.routing import CookbookClosed, ReconcilePR, SyncPR, Work, route
from syncer.publish.settings import Outcome, Settings
from syncer.reporting import write
from syncer.syncconfig import load_sync_config

EVENTS = ROOT / "examples" / "events"


def _example(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text(encoding="utf-8"))
    return loaded


def _route(name: str, payload: dict[str, Any], tmp_path: Path) -> tuple[list[Work], Outcome, Plan]:
    """``route`` as a dry run without a token calls it: the event file stands in for GitHub."""
    plan = Plan(dry_run=True)
    out = Outcome(dry_run=True)
    settings = Settings(
        config=load_sync_config(ROOT / "sync.yaml"),
        inferencex=ROOT / "examples" / "inferencex",
        cookbook=str(tmp_path / "cookbook"),
        cache_dir=tmp_path / "cache",
    )
    infx = EventGitHub(payload, plan=plan, checkout=settings.inferencex)
    return route(name, payload, settings=settings, infx=infx, out=out), out, plan


@pytest.mark.parametrize(
    ("name", "inputs", "work"),
    [
        ("issue_comment", None, [SyncPR(3859)]),  # an authorised `/use 41000000001`
        ("pull_request", None, [SyncPR(3859)]),  # a push to the PR
        ("repository_dispatch", None, [CookbookClosed(43799)]),
        ("workflow_dispatch", {"inferencex_pr": "3859"}, [ReconcilePR(3859)]),
        ("workflow_dispatch", {"cookbook_pr": "43799"}, [CookbookClosed(43799)]),
    ],
)
def test_each_example_event_is_routed_to_exactly_its_work(
    name: str, inputs: dict[str, str] | None, work: list[Work], tmp_path: Path
) -> None:
    payload = _example(name)
    if inputs is not None:
        payload["inputs"] = inputs
    found, out, plan = _route(name, payload, tmp_path)
    assert found == work
    # Routing says nothing and writes nothing of work it hands on: the bot does the work.
    assert out.lines == [] and plan.writes == []


def test_what_an_event_asks_nothing_of_is_said_and_no_work(tmp_path: Path) -> None:
    found, out, _ = _route("schedule", _example("schedule"), tmp_path)
    assert (found, out.lines) == ([], ["ignored: event schedule"])
    closed = _example("pull_request")
    closed["action"] = "labeled"
    found, out, _ = _route("pull_request", closed, tmp_path)
    assert (found, out.lines) == ([], ["ignored: pull_request labeled"])


def test_a_comment_without_a_command_asks_for_no_work(tmp_path: Path) -> None:
    payload = _example("issue_comment")
    payload["comment"]["body"] = "Thanks, looks good."
    found, out, plan = _route("issue_comment", payload, tmp_path)
    assert (found, out.lines, plan.writes) == (
        [],
        ["comment 1000: no command; nothing to do"],
        [],
    )


def test_a_refused_command_is_answered_by_routing_and_asks_for_no_work(tmp_path: Path) -> None:
    payload = _example("issue_comment")
    payload["comment"]["author_association"] = "NONE"
    found, out, plan = _route("issue_comment", payload, tmp_path)
    assert found == []
    assert out.lines == [
        "comment 1000: refused (author association NONE is not OWNER, MEMBER or "
        "COLLABORATOR); would react -1 (dry run)"
    ]
    assert plan.writes == [f"POST /repos/{INFX}/issues/comments/1000/reactions -1"]


def test_the_reconcile_input_is_no_work_for_routing(tmp_path: Path) -> None:
    # An empty cookbook_pr is the scheduled run's, taken by the command before routing.
    with pytest.raises(BadEvent, match=r"inputs\.cookbook_pr"):
        _route("workflow_dispatch", _example("workflow_dispatch"), tmp_path)


def _model(world: World) -> Any:
    return world.config.model(MODEL)


def test_the_catch_up_names_a_merged_pr_and_leaves_its_sync_to_the_bot(world: World) -> None:
    world.model = MODEL
    first_use(world)
    world.pull["state"], world.pull["merged"] = "closed", True  # its `closed` event dropped
    bot, _plan = world.bot()
    before = len(world.gh.log)
    found = list(bot.closing.catch_up(_model(world), handled=set()))
    assert found == [PR]
    assert bot.out.lines == [f"PR #{PR}: merged; catching up"]
    # Named, not synced: nothing was written for it.
    assert [r for r in world.gh.log[before:] if r.method != "GET"] == []
    assert list(bot.closing.catch_up(_model(world), handled={PR})) == []
    bot.close()


def test_the_bot_syncs_what_the_catch_up_names(world: World) -> None:
    world.model = MODEL
    first_use(world)
    world.pull["state"], world.pull["merged"] = "closed", True
    bot, _plan = world.bot()
    try:
        bot.catch_up(_model(world))
    finally:
        bot.close()
    assert bot.handled(PR)
    assert f"PR #{PR}: merged; catching up" in bot.out.lines
    assert [b["number"] for b in world.book_pulls()] == [1]


def test_the_module_generation_is_given_where_inferencex_is_read(
    world: World, tmp_path: Path
) -> None:
    bot, _plan = world.bot()
    modules = bot.book.modules
    assert bot.ix is None and bot.scope.ix is None
    assert modules.inferencex == Checkout(bot.settings)
    assert modules.tree(KEY) == world.inferencex
    bot.close()
    clone = tmp_path / "ix.git"
    commits.init_bare(clone)
    settings = copy.copy(bot.settings)
    settings.inferencex_clone = clone
    with_clone = Bot(settings, infx=bot.infx, cookbook_gh=bot.cgh, plan=Plan())
    assert with_clone.ix is not None
    assert with_clone.book.modules.inferencex is with_clone.ix
    assert with_clone.scope.ix is with_clone.ix
    with_clone.close()


def test_one_render_cache_serves_the_whole_event(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[Renders] = []
    init = Renders.__init__

    def counted(self: Renders, **kw: Any) -> None:
        made.append(self)
        init(self, **kw)

    monkeypatch.setattr(Renders, "__init__", counted)
    bot, _plan = world.bot()
    comment = world.comment(f"/use {RUN}")
    bot.handle("issue_comment", world.comment_event(comment))
    assert f"{KEY}: run {RUN} does not verify; kept in progress" not in bot.out.lines
    # The trial module, the published one and the three-way verify read one cache.
    assert made == [bot.book.modules.renders]
    rendered = [key for _tree, key, _r in bot.book.modules.renders.rendered()]
    assert sorted(rendered) == sorted(c.key for c in _model(world).configs)


def _printed(run: BotRun, capsys: pytest.CaptureFixture[str]) -> str:
    assert write(bot_report(run), "text") == 0
    return capsys.readouterr().out


def test_the_report_prints_every_line_as_the_run_made_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = BotRun(
        unread=["InferenceX", "the cookbook"],
        lines=["PR #3859: up to date", "comment \x1b[31m1\nsaid"],
        writes=["POST /repos/a/b/issues/1/comments (9 chars)\n\tcode\n", "DELETE /x"],
    )
    assert _printed(run, capsys) == (
        "dry run without a token for InferenceX and the cookbook: GitHub is not read there; "
        "the event file stands in for it\n"
        "PR #3859: up to date\n"
        "comment \\x1b[31m1⏎said\n"
        "dry run: 2 writes not made\n"
        # A body keeps its tab and its last line break, as the write has them.
        "would: POST /repos/a/b/issues/1/comments (9 chars)\n\tcode\n\n"
        "would: DELETE /x\n"
    )
    assert bot_report(run).json() == {
        "unread": ["InferenceX", "the cookbook"],
        "stopped": False,
        "lines": ["PR #3859: up to date", "comment \x1b[31m1\nsaid"],
        "writes_not_made": [
            "POST /repos/a/b/issues/1/comments (9 chars)\n\tcode\n",
            "DELETE /x",
        ],
    }


def test_a_stopped_dry_run_reports_its_writes_and_no_lines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _printed(BotRun(writes=["PATCH /x"]), capsys) == (
        "dry run: 1 write not made (stopped by the error below)\nwould: PATCH /x\n"
    )
    assert _printed(BotRun(), capsys) == ""
    assert _printed(BotRun(lines=[]), capsys) == ""


def test_the_report_masks_a_token_in_a_write(capsys: pytest.CaptureFixture[str]) -> None:
    token = "ghp_" + "Z9" * 18
    out = _printed(BotRun(lines=[], writes=[f"POST body {token}"]), capsys)
    assert token not in out and "would: POST body ***\n" in out
