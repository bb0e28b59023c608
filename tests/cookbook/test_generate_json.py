"""`sync generate --format json`: the run as data, the same facts the text gives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from syncer.cli import main as cli_main

MODEL = "deepseek-ai/deepseek-v4_1"
PAGE = "docs/cookbook/autoregressive/DeepSeek/DeepSeek-V4_1.mdx"


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    pages = tmp_path / "cookbook"
    (pages / PAGE).parent.mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "cookbook" / PAGE, pages / PAGE)
    out = tmp_path / "snippets"
    (out / "deepseek-ai").mkdir(parents=True)
    shutil.copy(ROOT / "cookbook_snippets" / f"{MODEL}.jsx", out / f"{MODEL}.jsx")
    return out, pages


def _generate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        cli_main(["generate", "--config", str(ROOT / "sync.yaml"), *argv])
    return int(done.value.code or 0), capsys.readouterr().out


def test_json_says_what_the_text_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, pages = _workspace(tmp_path)
    where = ["--out", str(out), "--pages", str(pages)]
    code, text = _generate(capsys, "--all", "--check", *where)
    assert code == 0
    code, printed = _generate(capsys, "--all", "--check", "--format", "json", *where)
    assert code == 0
    doc = json.loads(printed)
    assert doc["check"] is True and doc["drift"] is False
    [module] = doc["modules"]
    assert module["model"] == MODEL and module["status"] == "unchanged"
    assert module["path"] == str(out / f"{MODEL}.jsx")
    assert f"{module['path']}: unchanged ({module['cells']} cells, {module['cases']} cases" in text
    assert module["page"] == {
        "path": str(pages / PAGE),
        "status": "unchanged",
        "heading": None,
    }
    assert "review" not in module
    assert [r["input"] for r in doc["read"]] == ["sync.yaml", "inferencex", "cookbook"]


def test_json_carries_the_reviewer_diff_of_a_module_that_would_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, pages = _workspace(tmp_path)
    target = out / f"{MODEL}.jsx"
    text = target.read_text(encoding="utf-8")
    stale = text.replace("--mem-fraction-static", "--mem-fraction-statik", 1)
    assert stale != text
    target.write_text(stale, encoding="utf-8")
    where = ["--out", str(out), "--pages", str(pages)]
    code, printed = _generate(capsys, "--all", "--check", "--format", "json", *where)
    assert code == 1
    doc = json.loads(printed)
    assert doc["drift"] is True
    [module] = doc["modules"]
    assert module["status"] == "would change"
    review = module["review"]
    assert "--mem-fraction-statik" in json.dumps(review)
    assert target.read_text(encoding="utf-8") == stale  # --check writes nothing
    code, printed = _generate(capsys, "--all", "--format", "json", "--date", "2026-10-14", *where)
    assert code == 0
    [module] = json.loads(printed)["modules"]
    assert module["status"] == "written" and "review" not in module
    assert target.read_text(encoding="utf-8") == text
