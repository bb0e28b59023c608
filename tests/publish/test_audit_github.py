"""`sync audit` with a token, through the real command against the fake GitHub: the checks
that need the API (PR states, artifact expiry, re-pins, the bot's evidence records) and the
dashboard issue kept by the scheduled job (created, edited in place, closed, reopened; one
issue, never one per run; the body within GitHub's limit, folded by model)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from ghserver import GitHubModel, GitHubServer

from syncer.cli import main
from syncer.cookbook.decode import load_decoder
from syncer.fitting import GITHUB_TEXT_LIMIT
from syncer.publish import dashboard, evidence
from syncer.usecases.audit_result import AuditFinding, AuditResult, CellRow, Check, ModuleRow

MODULE = ROOT / "cookbook_snippets" / "deepseek-ai" / "deepseek-v4_1.jsx"
INFX = "SemiAnalysisAI/InferenceX"
TOKEN = "ghs_" + "A7" * 18
BOT = "github-actions[bot]"
RUN = 41000000001
DSPARK = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
# The fake GitHub's artifacts expire on 2027-01-10.
FRESH, LATE = "2026-10-14", "2027-01-01"


@pytest.fixture
def gh(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.chdir(ROOT)
    server = GitHubServer()
    with server as model:
        model.add_token(TOKEN, BOT)
        model.repo(INFX)
        model.add_pull(INFX, head="dsv41flash-gb300", number=3859, commits=["6b07b8e6" + "0" * 32])
        model.add_pull(INFX, head="disagg", number=3871, commits=["9c3e5a1b" + "0" * 32])
        model.add_run(INFX, RUN, head_sha="6b07b8e6" + "0" * 32, artifacts={"bmk_x": b"log"})
        model.add_comment(INFX, 3859, f"/use {RUN}", association="MEMBER")
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("SYNC_API_PAUSE", "0")
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        monkeypatch.setenv("SYNC_INFX_LOGIN", BOT)  # an installation token cannot ask GET /user
        yield model


def audit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict, str]:
    with pytest.raises(SystemExit) as exc:
        main(["audit", "--format", "json", *args])
    out, err = capsys.readouterr()
    code = int(exc.value.code or 0)
    assert code in (0, 1), err
    return code, json.loads(out), err


def findings(doc: dict, check: str) -> list[tuple[str, str]]:
    return [
        (c["cell"], f["message"])
        for c in doc["cells"]
        for f in c["findings"]
        if f["check"] == check
    ]


def cells_of(pr: str) -> set[str]:
    return {c["id"] for c in load_decoder(MODULE).cells if c["prov"]["pr"] == pr}


def test_clean_with_the_api_and_nothing_left_unchecked(
    gh: GitHubModel, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc, _ = audit(capsys, "--date", FRESH)
    assert code == 0, [f for c in doc["cells"] for f in c["findings"]]
    assert {n["check"] for n in doc["notChecked"]} == {"lint"}
    assert gh.writes() == []


def test_api_findings(gh: GitHubModel, capsys: pytest.CaptureFixture[str]) -> None:
    gh.repos[INFX].pulls[3871]["state"] = "closed"  # closed without merging
    gh.add_comment(
        INFX, 3859, "/use 41000000002", association="MEMBER", created_at="2026-10-13T12:00:00Z"
    )
    code, doc, _ = audit(capsys, "--date", LATE)
    assert code == 1
    assert {cell for cell, _ in findings(doc, "pr")} == cells_of("3871")
    assert all("closed without merging" in m for _, m in findings(doc, "pr"))
    pinned = findings(doc, "pin")
    assert {cell for cell, _ in pinned} == cells_of("3859")
    assert all("re-pinned to run 41000000002" in m and f"run {RUN}" in m for _, m in pinned)
    expiring = findings(doc, "artifacts")
    assert {cell for cell, _ in expiring} == cells_of("3859")
    assert all("expire in 9 days" in m for _, m in expiring)
    assert gh.writes() == []


def test_stale_in_progress_and_gone_artifacts(
    gh: GitHubModel, capsys: pytest.CaptureFixture[str]
) -> None:
    gh.repos[INFX].pulls[3871].update(state="closed", merged=True, merged_at="2026-09-01T00:00:00Z")
    for art in gh.repos[INFX].artifacts.values():
        art["expired"] = True
    code, doc, _ = audit(capsys, "--date", FRESH)
    assert code == 1
    stale = findings(doc, "pr")
    assert {cell for cell, _ in stale} == cells_of("3871")
    assert all("merged 43 days ago" in m for _, m in stale)
    assert {cell for cell, _ in findings(doc, "artifacts")} == cells_of("3859")
    # With the bot's evidence record on the PR, gone artifacts are no finding: the record
    # keeps what was compared, and audit shows it.
    rec = {
        "schema": evidence.SCHEMA, "config": DSPARK, "pr": 3859, "sha": "6b07b8e6" + "0" * 32,
        "run": str(RUN), "srtSlurm": "2", "artifacts": {"bmk_x.zip": "ab" * 32}, "points": [],
    }  # fmt: skip
    gh.add_comment(INFX, 3859, evidence.comment_body(rec), user=BOT, association="NONE")
    gh.add_comment(  # someone else's copy of the marker is never read
        INFX, 3859, evidence.comment_body({**rec, "run": "666"}), user="mallory"
    )
    code, doc, _ = audit(capsys, "--date", FRESH)
    assert findings(doc, "artifacts") == []
    rows = [c for c in doc["cells"] if c["configKey"] == DSPARK]
    assert rows and all(c["evidence"] == rec for c in rows)


def issues(gh: GitHubModel) -> list[dict[str, Any]]:
    return list(gh.repos[INFX].issues.values())


def test_dashboard_issue_created_edited_closed_reopened_never_two(
    gh: GitHubModel, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Clean: nothing to open.
    code, _, err = audit(capsys, "--dashboard", "--date", FRESH)
    assert code == 0 and "clean, no issue" in err and issues(gh) == []
    # Findings (artifacts about to expire): the issue is opened, marked and labelled.
    code, doc, err = audit(capsys, "--dashboard", "--date", LATE)
    assert code == 1
    [issue] = issues(gh)
    assert issue["state"] == "open" and issue["user"] == BOT
    assert issue["body"].startswith(dashboard.MARKER) and issue["labels"] == [dashboard.LABEL]
    assert f"{doc['counts']['findings']} findings" in issue["title"]
    assert "<details><summary>⚠️ deepseek" in issue["body"]
    # The same findings again: no write at all.
    before = len(gh.writes())
    audit(capsys, "--dashboard", "--date", LATE)
    assert len(gh.writes()) == before
    # Other findings: the same issue is edited in place.
    gh.repos[INFX].pulls[3871]["state"] = "closed"
    code, _, err = audit(capsys, "--dashboard", "--date", LATE)
    assert code == 1 and f"edited issue #{issue['number']}" in err
    [again] = issues(gh)
    assert again["number"] == issue["number"] and "closed without merging" in again["body"]
    # Clean: closed, body saying so.
    gh.repos[INFX].pulls[3871]["state"] = "open"
    code, _, err = audit(capsys, "--dashboard", "--date", FRESH)
    assert code == 0 and f"closed issue #{issue['number']}" in err
    [closed] = issues(gh)
    assert closed["state"] == "closed" and closed["title"] == "Cookbook audit: clean"
    # Findings once more: the closed issue is reopened, not a new one.
    code, _, err = audit(capsys, "--dashboard", "--date", LATE)
    assert f"reopened issue #{issue['number']}" in err
    assert [i["number"] for i in issues(gh)] == [issue["number"]]
    assert issues(gh)[0]["state"] == "open"
    # Someone else's issue with the same marker is not the dashboard.
    gh.add_issue(
        INFX, title="copy", body=dashboard.MARKER, user="mallory", labels=[dashboard.LABEL]
    )
    audit(capsys, "--dashboard", "--date", LATE)
    assert [i["user"] for i in issues(gh)] == [BOT, "mallory"]


def test_dashboard_body_fits_and_is_folded_by_model() -> None:
    """A cookbook with many models and thousands of findings still gives one body within
    GitHub's limit, one fold per model, the first models' rows kept."""
    modules, cells = [], []
    for m in range(40):
        path = f"org{m}/model{m}.jsx"
        modules.append(ModuleRow(path, f"Model {m}", cells=60))
        for c in range(60):
            row = CellRow(path, f"Model {m}", c, f"key-{m}#{c}", f"key-{m}", "gb300", "Agg",
                          "img", "verified", {"sha": f"{m:040x}"}, {})  # fmt: skip
            row.findings.append(AuditFinding(Check.RECIPE, "renders other commands " + "x" * 80))
            cells.append(row)
    result = AuditResult("cookbook", "infx", modules, cells)
    body = dashboard.body(result)
    assert len(body) <= GITHUB_TEXT_LIMIT
    assert body.count("<details><summary>") == 40
    assert body.count("<details>") == body.count("</details>")
    assert "key-0#0" in body  # the first model keeps its rows
    assert "left out to fit the size limit" in body


def test_copied_cookbook_for_the_dashboard_names_the_hand_edited_cell(
    gh: GitHubModel, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cookbook = tmp_path / "book"
    shutil.copytree(MODULE.parent.parent, cookbook)
    module = cookbook / "deepseek-ai" / "deepseek-v4_1.jsx"
    module.write_text(module.read_text().replace('["8"]', '["9"]', 1))
    code, doc, _ = audit(capsys, "--cookbook", str(cookbook), "--dashboard", "--date", FRESH)
    assert code == 1
    [issue] = issues(gh)
    for cell, _ in findings(doc, "recipe"):
        assert cell in issue["body"]
