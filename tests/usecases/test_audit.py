"""`sync audit` through the real command: the bundled example, a hand edit of a published flag,
a changed recipe value under a pinned config, each pin read at its own commit of a git clone,
the generator's round trip, bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

from syncer.cli import main
from syncer.cookbook.decode import load_decoder
from syncer.fitting import GITHUB_TEXT_LIMIT
from syncer.model import Selection

MODULE = ROOT / "cookbook_snippets" / "deepseek-ai" / "deepseek-v4_1.jsx"
INFX = ROOT / "examples" / "inferencex"
DSPARK = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
RECIPE = (
    "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/gb300-fp4-mtp/"
    "agentic.yaml"
)


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    for name in ("GITHUB_TOKEN", "INFX_TOKEN", "GH_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def audit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(["audit", *args])
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def audit_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code, out, err = audit(capsys, *args, "--format", "json")
    assert code in (0, 1), err
    return code, json.loads(out)


def copy_cookbook(tmp_path: Path) -> Path:
    dest = tmp_path / "cookbook" / "docs" / "src" / "snippets" / "agentx"
    shutil.copytree(MODULE.parent.parent, dest)
    return tmp_path / "cookbook"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def findings(doc: dict, check: str) -> list[tuple[str, dict]]:
    return [(c["cell"], f) for c in doc["cells"] for f in c["findings"] if f["check"] == check]


def test_bundled_example_names_every_cell_and_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = audit_json(capsys)
    assert code == 0 and doc["exitCode"] == 0
    decoder = load_decoder(MODULE)
    assert [c["cell"] for c in doc["cells"]] == [c["id"] for c in decoder.cells]
    for row, cell in zip(doc["cells"], decoder.cells, strict=True):
        assert row["configKey"] == cell["configKey"]
        assert row["recipe"] == "agrees"
        assert row["provenance"]["sha"] == cell["prov"]["sha"]
        assert row["status"] == cell["prov"]["status"]
        assert [p["point"] for p in row["points"]] == list(range(len(cell["points"])))
    # Offline: what needs the API is named, not silently skipped.
    assert {n["check"] for n in doc["notChecked"]} >= {"pr", "artifacts", "pin", "evidence"}
    assert doc["modules"] == [
        {"path": "deepseek-ai/deepseek-v4_1.jsx", "model": "DeepSeek-V4.1",
         "cells": len(decoder.cells), "findings": [], "notes": []}
    ]  # fmt: skip


def test_hand_edited_flag_is_found_naming_the_cell(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cookbook = copy_cookbook(tmp_path)
    module = cookbook / "docs/src/snippets/agentx/deepseek-ai/deepseek-v4_1.jsx"
    edit(module, '"--max-running-requests": ["8"]', '"--max-running-requests": ["9"]')
    # The cell the edit lands in, found by decoding both versions (not assumed).
    old, new = load_decoder(MODULE), load_decoder(module)
    changed = {
        (old.cells[ci]["id"], pi)
        for ci, cell in enumerate(old.cells)
        for pi in range(len(cell["points"]))
        for r in cell["routers"]
        if old.blocks_for(Selection(ci, pi, r)) != new.blocks_for(Selection(ci, pi, r))
    }
    assert changed
    code, doc = audit_json(capsys, "--cookbook", str(cookbook))
    assert code == 1
    found = {(cell, f["point"]) for cell, f in findings(doc, "recipe")}
    assert found == changed
    diffs = [d for _, f in findings(doc, "recipe") for d in f["differences"]]
    assert {(d["key"], d["cookbook"], d["recipe"]) for d in diffs} == {
        ("--max-running-requests", "9", "8")
    }
    code, out, _ = audit(capsys, "--cookbook", str(cookbook))
    assert code == 1
    for cell, _ in changed:
        assert f"✗ {cell}" in out


def test_changed_recipe_value_under_a_pinned_config_is_found(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    infx = tmp_path / "inferencex"
    shutil.copytree(INFX, infx)
    edit(infx / RECIPE, "mem-fraction-static: 0.80", "mem-fraction-static: 0.75")
    code, doc = audit_json(capsys, "--inferencex", str(infx))
    assert code == 1
    hits = findings(doc, "recipe")
    assert hits
    rows = {c["cell"]: c for c in doc["cells"]}
    assert {rows[cell]["configKey"] for cell, _ in hits} == {DSPARK}
    assert all(rows[cell]["status"] == "verified-pr" for cell, _ in hits)
    keys = {(d["key"], d["cookbook"], d["recipe"]) for _, f in hits for d in f["differences"]}
    assert {k for k in keys if k[0] == "--mem-fraction-static"} == {
        ("--mem-fraction-static", "0.8", "0.75")
    }
    assert all(DSPARK in f["message"] for _, f in hits)
    # The markdown report carries the reviewer diff of the drifted cells, within the limit.
    code, md, _ = audit(capsys, "--inferencex", str(infx), "--format", "markdown")
    assert code == 1
    assert "Reviewer diff" in md and "--mem-fraction-static" in md
    assert len(md) <= GITHUB_TEXT_LIMIT


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def _clone_with_two_commits(tmp_path: Path) -> tuple[Path, str, str]:
    """A git clone of the bundled InferenceX: commit A as bundled, commit B (main) with the
    dspark recipe's mem-fraction-static changed."""
    repo = tmp_path / "infx-git"
    shutil.copytree(INFX, repo)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "A")
    first = _git(repo, "rev-parse", "HEAD")
    edit(repo / RECIPE, "mem-fraction-static: 0.80", "mem-fraction-static: 0.75")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "B")
    return repo, first, _git(repo, "rev-parse", "HEAD")


def _pinned_at(tmp_path: Path, sha: str) -> Path:
    """The bundled module with every cell's commit replaced by ``sha``."""
    cookbook = copy_cookbook(tmp_path)
    module = cookbook / "docs/src/snippets/agentx/deepseek-ai/deepseek-v4_1.jsx"
    text = module.read_text()
    for old in {c["prov"]["sha"] for c in load_decoder(MODULE).cells}:
        text = text.replace(old, sha)
    module.write_text(text)
    return cookbook


def test_git_clone_reads_each_pin_at_its_own_commit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    repo, first, second = _clone_with_two_commits(tmp_path)
    # Pinned at A: the recipe changed on main since, but the pin is read at A.
    at_first = _pinned_at(tmp_path / "a", first)
    code, doc = audit_json(
        capsys, "--cookbook", str(at_first), "--inferencex", str(repo), "--inferencex-rev", "main"
    )
    assert code == 0, [f for c in doc["cells"] for f in c["findings"]]
    assert {c["recipe"] for c in doc["cells"]} == {"agrees"}
    assert not doc["notes"]
    # Pinned at B: the published commands are not what B's recipe renders.
    at_second = _pinned_at(tmp_path / "b", second)
    code, doc = audit_json(capsys, "--cookbook", str(at_second), "--inferencex", str(repo))
    assert code == 1
    assert {c["configKey"] for c in doc["cells"] if c["recipe"] == "differs"} == {DSPARK}
    # A commit the clone lacks is not checked, and says so.
    missing = _pinned_at(tmp_path / "c", "0" * 40)
    code, doc = audit_json(capsys, "--cookbook", str(missing), "--inferencex", str(repo))
    assert code == 0
    reasons = {n["reason"] for c in doc["cells"] for n in c["notChecked"] if n["check"] == "recipe"}
    assert reasons == {f"commit {'0' * 12} is not in the InferenceX clone {repo}"}


def test_snapshot_trees_by_commit(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    trees = tmp_path / "trees"
    decoder = load_decoder(MODULE)
    shas = sorted({c["prov"]["sha"] for c in decoder.cells})
    shutil.copytree(INFX, trees / shas[0][:8])
    code, doc = audit_json(capsys, "--inferencex-trees", str(trees))
    assert code == 0
    by_sha = {c["provenance"]["sha"]: c["recipe"] for c in doc["cells"]}
    assert by_sha[shas[0]] == "agrees"
    assert all(by_sha[s] == "not-checked" for s in shas[1:])


def test_a_module_another_generator_encoded_is_a_note_not_a_finding(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Issue 37.4: every module another generator wrote carried a permanent "roundtrip" finding,
    # though the bot's edits keep its cells as published (encoder/edit.py).
    cookbook = copy_cookbook(tmp_path)
    module = cookbook / "docs/src/snippets/agentx/deepseek-ai/deepseek-v4_1.jsx"
    legacy = ROOT / "tests/fixtures/edit/legacy-deepseek-v4_1.jsx"  # the older format's encoding
    module.write_text(legacy.read_text())
    code, doc = audit_json(capsys, "--cookbook", str(cookbook))
    assert code == 0
    [row] = doc["modules"]
    assert row["findings"] == []
    [note] = row["notes"]
    assert note.startswith("encoded by another generator (or an older one): every edit keeps its")


def test_module_not_as_the_generator_writes_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cookbook = copy_cookbook(tmp_path)
    module = cookbook / "docs/src/snippets/agentx/deepseek-ai/deepseek-v4_1.jsx"
    lines = module.read_text().split("\n")
    at = next(i for i, line in enumerate(lines) if '"generatedOn"' in line)
    lines[at] = lines[at].replace(": ", ":  ")  # same data, another layout
    module.write_text("\n".join(lines))
    code, doc = audit_json(capsys, "--cookbook", str(cookbook))
    assert code == 1
    (finding,) = doc["modules"][0]["findings"]
    assert finding["check"] == "roundtrip" and f"line {at + 1} " in finding["message"]
    assert {c["recipe"] for c in doc["cells"]} == {"agrees"}


def test_undecodable_module_is_a_finding_and_the_others_are_audited(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cookbook = copy_cookbook(tmp_path)
    broken = cookbook / "docs/src/snippets/agentx/zai-org/glm-5.2.jsx"
    broken.parent.mkdir()
    broken.write_text("export const agentx = {cells: [}\n")
    code, doc = audit_json(capsys, "--cookbook", str(cookbook))
    assert code == 1
    by_path = {m["path"]: m for m in doc["modules"]}
    assert [f["check"] for f in by_path["zai-org/glm-5.2.jsx"]["findings"]] == ["module"]
    assert "glm-5.2.jsx" in by_path["zai-org/glm-5.2.jsx"]["findings"][0]["message"]
    assert len(doc["cells"]) == len(load_decoder(MODULE).cells)


@pytest.mark.parametrize(
    "args",
    [
        ("--cookbook", "no/such/dir"),
        ("--inferencex-trees", "no/such/dir"),
        ("--inferencex", "examples", "--inferencex-trees", "examples"),
        ("--date", "yesterday"),
        ("--dashboard",),
    ],
)
def test_bad_input_exits_2(capsys: pytest.CaptureFixture[str], args: tuple[str, ...]) -> None:
    code, out, err = audit(capsys, *args)
    assert code == 2, (out, err)
    assert err.startswith("error: ") and out == ""


def test_reference_cookbook_against_the_pairs(
    capsys: pytest.CaptureFixture[str], reference: Path
) -> None:
    """The real modules against the pairs' InferenceX files: every cell named, and every
    complete pair's cell compared at its own commit."""
    ref = reference
    pairs = json.loads((ref / "pairs" / "PAIRS.json").read_text())
    code, doc = audit_json(
        capsys,
        "--cookbook",
        str(ref / "cookbook" / "agentx"),
        "--inferencex-trees",
        str(ref / "pairs" / "inferencex"),
    )
    assert code == 1  # the published modules are not what this generator writes, at least
    rows = {(c["module"], c["cell"]): c for c in doc["cells"]}
    for pair in pairs:
        module = pair["snippetFile"].split("agentx/", 1)[1]
        row = rows[(module, pair["cellId"])]
        assert row["configKey"] == pair["configKey"]
        assert row["provenance"]["sha"] == pair["sha"]
        if pair["status"] == "complete":
            assert row["recipe"] in ("agrees", "differs")
        else:
            assert row["recipe"] == "not-checked"


def test_a_pin_the_clone_lacks_is_fetched_by_its_commit_id(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    origin, _, _ = _clone_with_two_commits(tmp_path)
    clone = tmp_path / "clone.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--single-branch", str(origin), str(clone)], check=True
    )
    _git(origin, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
         "-m", "C, only in origin")  # fmt: skip
    third = _git(origin, "rev-parse", "HEAD")
    cookbook = _pinned_at(tmp_path / "c", third)
    code, doc = audit_json(capsys, "--cookbook", str(cookbook), "--inferencex", str(clone))
    assert {c["recipe"] for c in doc["cells"]} == {"not-checked"}
    code, doc = audit_json(
        capsys, "--cookbook", str(cookbook), "--inferencex", str(clone), "--fetch", str(origin)
    )
    assert code == 1
    # C has B's recipe: the dspark cells differ, the others agree, all at C's own tree.
    assert {c["configKey"] for c in doc["cells"] if c["recipe"] == "differs"} == {DSPARK}
    assert {c["recipe"] for c in doc["cells"]} == {"agrees", "differs"}


def test_progress_on_a_terminal_only(capsys: pytest.CaptureFixture[str], stderr_as) -> None:
    for is_terminal in (True, False):
        buf = stderr_as(is_terminal)
        code, _ = audit_json(capsys)
        assert code == 0
        shown = buf.getvalue()
        assert ("auditing data modules" in shown and "/1 modules" in shown) == is_terminal
        assert is_terminal or shown == ""


def test_lint_findings_against_an_sglang_checkout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from lintrepo import fixture_module, make_sglang_repo

    from syncer.lint.lint import lint_texts
    from syncer.lint.source import SGLangSource

    root = tmp_path / "sglang"
    root.mkdir()
    commits = make_sglang_repo(root)
    book = tmp_path / "book"
    (book / "org").mkdir(parents=True)
    module = book / "org" / "m.jsx"
    module.write_text(fixture_module(commits), encoding="utf-8")
    expected = lint_texts([(str(module), module.read_text())], SGLangSource(root))
    assert expected.findings
    code, doc = audit_json(capsys, "--cookbook", str(book), "--sglang", str(root))
    assert code == 1
    linted = [(cell, f["message"]) for cell, f in findings(doc, "lint")]
    assert sorted(cell for cell, _ in linted) == sorted(f.cell_id for f in expected.findings)
    for f in expected.findings:
        if f.flag:
            assert any(cell == f.cell_id and f.flag in m for cell, m in linted)
    assert "lint" not in {n["check"] for n in doc["notChecked"]}


def test_a_merged_config_gone_from_the_default_branch(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    master = "inferencex-e2e/configs/nvidia-master.yaml"
    repo, first, _ = _clone_with_two_commits(tmp_path)
    edit(repo / master, f"{DSPARK}:", f"{DSPARK}-retired:")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "retire")
    cookbook = _pinned_at(tmp_path / "a", first)
    module = cookbook / "docs/src/snippets/agentx/deepseek-ai/deepseek-v4_1.jsx"
    module.write_text(module.read_text().replace('"verified-pr"', '"verified"'))
    args = ("--cookbook", str(cookbook), "--inferencex", str(repo), "--inferencex-rev", "main")
    code, doc = audit_json(capsys, *args)
    assert code == 1
    gone = {cell for cell, _ in findings(doc, "master")}
    rows = {c["cell"]: c for c in doc["cells"]}
    assert gone == {c for c, row in rows.items() if row["configKey"] == DSPARK}
    assert all(rows[c]["recipe"] == "agrees" for c in gone)  # still true at its own commit
    # A pin the default branch does not contain (a stale clone): not checked, not "gone".
    stale = _pinned_at(tmp_path / "b", "1" * 40)
    text = (stale / "docs/src/snippets/agentx/deepseek-ai/deepseek-v4_1.jsx").read_text()
    (stale / "docs/src/snippets/agentx/deepseek-ai/deepseek-v4_1.jsx").write_text(
        text.replace('"verified-pr"', '"verified"')
    )
    code, doc = audit_json(capsys, "--cookbook", str(stale), *args[2:])
    assert findings(doc, "master") == []
    reasons = {n["reason"] for c in doc["cells"] for n in c["notChecked"] if n["check"] == "master"}
    assert reasons == {
        f"{DSPARK} is not in the default branch's master, which does not contain its pinned "
        f"commit {'1' * 12} either (a stale clone?)"
    }


def test_markdown_escapes_only_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Our words read as written (``GITHUB_TOKEN``, ``GIT_DIR``); a value (the checkout's
    path, here with markdown in its name) is escaped; the fold's summary line, an HTML block
    where GitHub reads no markdown, shows the module's name without backslashes."""
    infx = tmp_path / "my_infx*"
    shutil.copytree(INFX, infx, symlinks=True)
    code, md, err = audit(capsys, "--inferencex", str(infx), "--format", "markdown")
    assert code == 0, err
    assert "needs the GitHub API: set GITHUB_TOKEN (offline by default)\n" in md
    assert "needs an SGLang git checkout: give --sglang GIT_DIR\n" in md
    assert "my\\_infx\\* is a folder, not a git clone: every pin was read" in md
    summary = next(ln for ln in md.splitlines() if ln.startswith("<details><summary>"))
    assert "deepseek-ai/deepseek-v4_1.jsx (DeepSeek-V4.1)" in summary and "\\" not in summary
    code, out, _ = audit(capsys, "--inferencex", str(infx), "--format", "json")
    assert "set GITHUB_TOKEN (offline by default)" in json.loads(out)["notChecked"][0]["reason"]


def test_one_module_file_is_audited_as_its_own_cookbook(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Issue 37.7: --cookbook refused a single module file (click: "is a file").
    code, doc = audit_json(capsys, "--cookbook", str(MODULE))
    assert code == 0
    assert [m["path"] for m in doc["modules"]] == [MODULE.name]
    assert len(doc["cells"]) == 5
