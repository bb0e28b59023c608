"""The fake GitHub and the test events are held to GitHub's own descriptions.

Schemas: ``tests/schemas/*.json``, extracted by ``tests/schemas/extract.py`` from the npm
packages it names. The fake checks every body it sends (``ghschema.response_errors``); the
event builders and the tests that hand the bot an event check it (``ghschema.check_event``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import requests
from ghschema import SCHEMAS, event_errors, operation, response_errors
from ghserver import GitHubModel, GitHubServer

sys.path.insert(0, str(SCHEMAS))
import extract
from conftest import ROOT

REPO = "SemiAnalysisAI/InferenceX"


def _model() -> GitHubModel:
    model = GitHubModel()
    model.base = "https://api.github.com"
    pull = model.add_pull(REPO, head="topic", number=12, commits=["a" * 40, "b" * 40])
    pull["labels"].append("full-sweep")
    model.add_comment(REPO, 12, "/use 41000000001")
    return model


def _built(model: GitHubModel, event: str, action: str | None) -> dict:
    [comment] = model.comments_on(REPO, 12)
    if event == "issue_comment":
        return model.issue_comment_event(REPO, comment, action or "")
    if event == "pull_request":
        return model.pull_request_event(REPO, 12, action or "")
    if event == "repository_dispatch":
        return model.repository_dispatch_event(
            REPO, "cookbook-merged", {"cookbook_pr": 7}, sender="x"
        )
    return model.workflow_dispatch_event(
        REPO, {"cookbook_pr": "7"}, sender="x", workflow=".github/workflows/cookbook-sync.yml"
    )


CASES = [(event, action) for event, actions in extract.EVENTS.items() for action in actions]


@pytest.mark.parametrize(("event", "action"), CASES)
def test_every_event_the_fake_builds_is_githubs_shape(event, action):
    payload = _built(_model(), event, action)
    assert event_errors(event, payload) == []
    # And the check can fail: what GitHub always sends, taken away.
    del payload["repository"]
    assert any("'repository' is a required property" in e for e in event_errors(event, payload))


def _event_files() -> list[Path]:
    roots = [ROOT / "tests" / "fixtures", ROOT / "examples"]
    return sorted(p for root in roots for p in root.rglob("*.json"))


def test_every_event_file_of_the_fixtures_and_examples_is_githubs_shape():
    # An event file is a JSON object with a repository and a sender (what every webhook
    # payload has); it lives under events/ named <event_name>[.<what>].json.
    checked = []
    for path in _event_files():
        data = json.loads(path.read_text(encoding="utf-8"))
        if not (isinstance(data, dict) and "repository" in data and "sender" in data):
            continue
        assert path.parent.name == "events", f"{path}: an event file outside events/"
        event = path.name.split(".", 1)[0]
        assert event_errors(event, data) == [], path
        checked.append(path)


def test_a_body_github_would_not_send_fails_the_test_that_caused_it(monkeypatch):
    server = GitHubServer()
    model = server.model
    model.add_token("ghp_" + "x" * 36, "someone")
    model.add_pull(REPO, head="topic", number=3)
    honest = model.pull_json

    def without_merged_at(fake, pull, *, simple=False):
        data = honest(fake, pull, simple=simple)
        del data["merged_at"]
        return data

    monkeypatch.setattr(model, "pull_json", without_merged_at)
    with pytest.raises(AssertionError) as raised, server:
        headers = {"Authorization": "token ghp_" + "x" * 36}
        requests.get(f"{server.base_url}/repos/{REPO}/pulls", headers=headers, timeout=10)
    assert "GET /repos/{owner}/{repo}/pulls 200: 0: 'merged_at' is a required property" in str(
        raised.value
    )


def test_the_list_and_the_single_pr_are_told_apart():
    model = _model()
    fake = model.repo(REPO)
    listed = model.pull_json(fake, fake.pulls[12], simple=True)
    single = model.pull_json(fake, fake.pulls[12])
    assert "merged" not in listed and single["merged"] is False
    assert response_errors("GET", f"/repos/{REPO}/pulls", 200, [listed]) == []
    assert response_errors("GET", f"/repos/{REPO}/pulls/12", 200, single) == []
    # The single PR without what only it carries (its counts) is refused.
    del single["commits"]
    assert response_errors("GET", f"/repos/{REPO}/pulls/12", 200, single)


def test_the_schema_data_names_its_packages_and_holds_every_operation():
    rest = json.loads((SCHEMAS / "rest.json").read_text(encoding="utf-8"))
    hooks = json.loads((SCHEMAS / "webhooks.json").read_text(encoding="utf-8"))
    assert (rest["source"], hooks["source"]) == (extract.REST_PACKAGE, extract.WEBHOOKS_PACKAGE)
    assert sorted(rest["operations"]) == sorted(
        f"{m.upper()} {p}" for m, p, _ in extract.OPERATIONS
    )
    assert operation("GET", f"/repos/{REPO}/actions/runs/5/attempts/2") == (
        "GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}"
    )
    assert operation("GET", "/repos/a/b/unknown") is None


def test_a_rerun_run_shows_each_attempt_as_it_was():
    server = GitHubServer()
    model = server.model
    token = "ghp_" + "r" * 36
    model.add_token(token, "someone")
    model.add_run(REPO, 77, head_sha="a" * 40, conclusion="failure", artifacts={"a": b"1"})
    model.rerun(REPO, 77, artifacts={"b": b"2"})
    headers = {"Authorization": f"token {token}"}
    with server:
        base = f"{server.base_url}/repos/{REPO}/actions/runs/77"
        run = requests.get(base, headers=headers, timeout=10).json()
        first = requests.get(f"{base}/attempts/1", headers=headers, timeout=10).json()
        arts = requests.get(f"{base}/artifacts", headers=headers, timeout=10).json()
    assert (run["run_attempt"], run["conclusion"]) == (2, "success")
    assert (first["run_attempt"], first["conclusion"]) == (1, "failure")
    assert [a["name"] for a in arts["artifacts"]] == ["a", "b"]  # both attempts' uploads


def test_a_definition_valid_before_is_checked_again_for_another_value():
    """The validators remember values a definition held; the same PR with a broken repository
    inside, and a broken repository after the whole one was seen, give jsonschema's own
    errors, as a validator remembering nothing finds them."""
    import copy

    import ghschema
    from jsonschema import Draft202012Validator

    model = _model()
    fake = model.repo(REPO)
    single = model.pull_json(fake, fake.pulls[12])
    broken = copy.deepcopy(single)
    del broken["head"]["repo"]["full_name"]
    broken["base"]["repo"]["private"] = "no"
    path = f"/repos/{REPO}/pulls/12"
    key = ghschema.operation("GET", path)
    data = ghschema._data("rest.json")
    plain = Draft202012Validator(
        {"$defs": data["$defs"], "allOf": [data["operations"][key]["200"]]}
    )
    found = sorted(plain.iter_errors(broken), key=lambda e: list(e.absolute_path))
    expected = [f"{key} 200: {'/'.join(map(str, e.absolute_path))}: {e.message}" for e in found]
    assert len(expected) == 2
    assert response_errors("GET", path, 200, single) == []
    assert response_errors("GET", path, 200, broken) == expected
    assert response_errors("GET", path, 200, single) == []
