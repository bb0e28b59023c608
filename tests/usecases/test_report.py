"""Verify reports with hostile values from a run log: markdown stays inert, the terminal gets no
escape sequences, long values are clipped, the size budget holds."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
from conftest import ROOT
from rich.console import Console

from syncer.compare.report import verify_report
from syncer.usecases.verify import verify_config

KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
RUN = ROOT / "examples" / "runs" / "41000000001"
# a run of a test's own names the example's other inputs too (verify takes none by default then)
EXAMPLE_REST = (
    "--inferencex",
    str(ROOT / "examples/inferencex"),
    "--cookbook",
    str(ROOT / "cookbook_snippets"),
)
INFX = ROOT / "examples" / "inferencex"
# No " word=" inside: that would (rightly) make the Env: line split two ways.
HOSTILE = "</details><img/src=x/onerror=alert(1)> @SemiAnalysisAI/core #3859 ``x`` \x1b[31m!"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.fixture
def hostile_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    log = next(run.rglob("sweep_5230106.log"))
    text = log.read_text()
    text = text.replace(
        "SGLANG_TIMEOUT_KEEP_ALIVE=900", f"SGLANG_TIMEOUT_KEEP_ALIVE=900 ZZ_HOSTILE={HOSTILE}"
    )
    text = text.replace("--policy cache_aware", "--policy " + "A" * 10_000)
    text = text.replace("--reasoning-parser auto", "--reasoning-parser '@octocat `rm -rf` |x|'")
    log.write_text(text)
    return run


def test_markdown_keeps_hostile_values_inert(hostile_run: Path) -> None:
    result = verify_config(KEY, inferencex=INFX, run=hostile_run, cookbook=None)
    assert result.exit_code == 1
    md = verify_report(result).markdown()
    # Outside code spans (where GitHub renders nothing as markup) no value is markup.
    bare = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", md)
    assert bare.count("<details>") == bare.count("</details>") == 3
    assert "<img" not in bare and "@SemiAnalysisAI" not in bare and "@octocat" not in bare
    assert "\x1b" not in md
    assert "A" * 400 not in md  # 10,000-character value clipped
    assert "more characters" in md
    # every table row still has its 8 cells: no `|` from a value escaped the code span
    rows = [ln for ln in md.splitlines() if ln.startswith("| 5 |")]
    assert len(rows) == 4  # the point row and its three differences
    for row in rows:
        cells = 7 if row.startswith("| 5 | Agg") else 8
        assert row.replace("\\|", "").count("|") == cells + 1, row


def test_terminal_output_has_no_escape_sequences(hostile_run: Path) -> None:
    result = verify_config(KEY, inferencex=INFX, run=hostile_run, cookbook=None)
    buf = io.StringIO()
    verify_report(result).text(Console(file=buf, width=200, color_system=None, soft_wrap=True))
    out = buf.getvalue()
    assert "\x1b" not in out
    assert "ZZ_HOSTILE" in out and "✗ point 5" in out


def test_markdown_budget_is_kept(hostile_run: Path) -> None:
    result = verify_config(KEY, inferencex=INFX, run=hostile_run, cookbook=None)
    full = verify_report(result).markdown()
    small = verify_report(result).markdown(budget=3000)
    assert len(small) <= 3000 < len(full)
    assert small.startswith("### ❌ `sync verify`")
    assert "**1 of 7 points does not agree**" in small
    # Too small even for the report without its difference rows: cut at a line, folds closed.
    folds_cut = 0
    for budget in range(1500, 6000, 250):
        tiny = verify_report(result).markdown(budget=budget)
        lines = tiny.splitlines()
        assert len(tiny) <= budget
        if "report cut to fit the size limit" in tiny:
            opened = sum(ln.startswith("<details>") for ln in lines)
            assert opened == lines.count("</details>")
            folds_cut += opened > 0
    assert folds_cut > 0


def test_json_schema_and_statuses(hostile_run: Path) -> None:
    doc = verify_report(verify_config(KEY, inferencex=INFX, run=hostile_run, cookbook=None)).json()
    assert doc["schema"] == 1 and doc["exit_code"] == 1 and doc["verdict"] == "differ"
    entries = {e["key"]: e for e in doc["points"][5]["logs"][0]["comparison"]["entries"]}
    assert entries["ZZ_HOSTILE"]["status"] == "only-log"
    # JSON keeps the value as logged, less the terminal colour codes every log line loses
    assert entries["ZZ_HOSTILE"]["right"] == HOSTILE.replace("\x1b[31m", "")
    assert entries["--policy"]["status"] == "differs"
    assert entries["--reasoning-parser"]["right"] == "@octocat `rm -rf` |x|"


def test_token_shaped_values_are_masked_in_every_format(tmp_path: Path) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    log = next(run.rglob("sweep_5230101.log"))
    log.write_text(
        log.read_text().replace(
            "SGLANG_TIMEOUT_KEEP_ALIVE=900", f"SGLANG_TIMEOUT_KEEP_ALIVE=900 ZZ_TOKEN={token}"
        )
    )
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None)
    assert result.exit_code == 1
    md = verify_report(result).markdown()
    assert token not in md and "***" in md
    buf = io.StringIO()
    verify_report(result).text(Console(file=buf, width=300, color_system=None))
    assert token not in buf.getvalue() and "ZZ_TOKEN" in buf.getvalue()


def test_many_skipped_members_are_summarised_in_the_text_reports(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    for i in range(30):
        (run / f"link{i:02d}").symlink_to("/etc/passwd")
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None)
    assert result.exit_code == 0  # skipped links change nothing compared
    md = verify_report(result).markdown()
    # Files of a run directory, not archive members.
    assert "link19 in the run directory skipped" in md and "link20" not in md
    assert "archive member" not in md
    assert "10 more entries of the run skipped" in md
    buf = io.StringIO()
    verify_report(result).text(Console(file=buf, width=300, color_system=None))
    text = buf.getvalue()
    assert "link19 in the run directory skipped: symbolic link (never followed)" in text
    assert "10 more entries of the run skipped" in text and "archive member" not in text
    assert len(verify_report(result).json()["skipped_members"]) == 30


def test_skipped_members_of_an_archive_are_archive_members(tmp_path: Path) -> None:
    import tarfile

    path = tmp_path / "run.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        tar.add(RUN, arcname=".")
        link = tarfile.TarInfo("./evil")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    result = verify_config(KEY, inferencex=INFX, run=path, cookbook=None)
    assert result.exit_code == 0
    buf = io.StringIO()
    verify_report(result).text(Console(file=buf, width=300, color_system=None))
    assert "archive member run.tar.gz/./evil skipped: link (never followed)" in buf.getvalue()


def test_notes_are_capped_in_the_text_reports(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    text = next(RUN.rglob("sweep_5230101.log")).read_text()
    text = text.replace("agentic_tp4_c1", "agentic_other")
    for job in range(60):  # logs of a variant no point uses: one note each
        (run / f"sweep_{9000 + job}.log").write_text(text.replace("5230101", str(9000 + job)))
    (run / "sweep_9000.again.log").write_text(text.replace("5230101", "9000"))  # a duplicate
    (run / "sweep_8999.log").write_text("uv: resolved 47 packages\n")  # launched nothing
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None)
    assert len(result.assignment.unmatched) == 60
    md = verify_report(result).markdown()
    assert md.count("which no point of the config uses") == 50
    assert "12 more notes (all of them are in --format json)" in md
    doc = verify_report(result).json()
    assert len(doc["unmatched_logs"]) == 60
    assert doc["duplicate_logs"] == ["sweep_9000.log repeats job 9000 of sweep_9000.again.log"]
    assert doc["empty_logs"] == ["sweep_8999.log"]


def _outside_code(md: str) -> list[str]:
    """The lines of ``md`` with their code spans removed, code blocks left out."""
    lines, fence = [], False
    for line in md.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence:
            lines.append(re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", line))
    return lines


def test_markdown_escapes_no_words_of_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Outside code, a backslash in the verify report could only come from a value: with
    values free of markdown, through the real command, there is none (issue 22.16)."""
    from syncer.cli import main

    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    log = next(run.rglob("sweep_5230106.log"))
    log.write_text(log.read_text().replace("--mem-fraction-static", "--mem-fraction-statik"))
    with pytest.raises(SystemExit) as exc:
        main(["verify", KEY, "--run", str(run), *EXAMPLE_REST, "--format", "markdown"])
    md = capsys.readouterr().out
    assert exc.value.code == 1 and "only in log" in md
    assert [ln for ln in _outside_code(md) if "\\" in ln] == []
