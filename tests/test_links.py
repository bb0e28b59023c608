"""The one home of GitHub links (``syncer/links.py``): building and parsing, with and without
an attempt, and the attempts rule of the published modules."""

from __future__ import annotations

import pytest

from syncer import links
from syncer.encoder.cells import point_prov_from_urls
from syncer.encoder.rendered_cells import pr_run_url
from syncer.syncconfig import is_pin_value

BASE = links.repo_url(links.INFERENCEX_REPO)


@pytest.mark.parametrize(
    ("run", "parsed"),
    [("35690159495", ("35690159495", None)), ("35690159495/attempts/2", ("35690159495", "2"))],
)
def test_parse_run_with_and_without_attempt(run, parsed):
    assert links.parse_run(run) == parsed
    assert links.run_id(run) == parsed[0]
    assert is_pin_value("run", run)


@pytest.mark.parametrize("bad", ["", "abc", "1/attempts/", "1/attempts/x", "1\n", "1/job/2"])
def test_parse_run_refuses(bad):
    with pytest.raises(ValueError):
        links.parse_run(bad)
    assert not is_pin_value("run", bad)


def test_run_link_keeps_the_attempt_unless_asked_for_the_run():
    assert links.run_link(BASE, "7") == f"{BASE}/actions/runs/7"
    assert links.run_link(BASE, "7/attempts/2") == f"{BASE}/actions/runs/7/attempts/2"
    assert links.run_link(BASE, "7/attempts/2", attempt=False) == f"{BASE}/actions/runs/7"
    assert (
        links.run_url(links.INFERENCEX_REPO, "7/attempts/2") == f"{BASE}/actions/runs/7/attempts/2"
    )
    # the source block names a PR's run as a whole
    assert pr_run_url(BASE, "7/attempts/2") == pr_run_url(BASE, "7") == f"{BASE}/actions/runs/7"
    assert pr_run_url(BASE, None) is None


@pytest.mark.parametrize("run", ["7", "7/attempts/2"])
def test_point_urls_roundtrip(run):
    point = {
        "recipeUrl": links.blob_link(BASE, "a" * 40, "recipes/x.yaml"),
        "runUrl": links.run_link(BASE, run),
        "jobUrl": links.job_link(BASE, "7/job/9"),
        "prUrl": links.pr_link(BASE, 12),
        "useComment": links.comment_link(BASE, 12, 34),
    }
    assert point["useComment"] == f"{BASE}/pull/12#issuecomment-34"
    assert (
        point_prov_from_urls(point, BASE, "here")
        == {
            "sha": "a" * 40,
            "recipe": "recipes/x.yaml",
            "run": run,
            "job": "7/job/9",
            "pr": "12",
            "comment": "34",
        }
        | {}
    )  # key order aside


def test_pin_values():
    assert is_pin_value("date", "2026-02-28") and not is_pin_value("date", "2026-02-30")
    assert is_pin_value("sha", "0" * 40) and not is_pin_value("sha", "0" * 39)
    assert is_pin_value("pr", "12") and not is_pin_value("pr", 12)


def test_commit_url():
    from syncer.links import DYNAMO_REPO, commit_url

    assert (
        commit_url(DYNAMO_REPO, "0a1b2c3") == "https://github.com/ai-dynamo/dynamo/commit/0a1b2c3"
    )
