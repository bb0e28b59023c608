"""The reviewer diff (`sync diff`): every change kind on hand-written module pairs, golden
markdown, the size budget, untrusted values, exit codes and the real deepseek-v4_1 pair."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import forkserver
import pytest
from conftest import TESTS, match_golden
from markdown_it import MarkdownIt

from syncer.cookbook.jsmodule import load_module
from syncer.encoder.emit import emit_module
from syncer.review.report import review_report
from syncer.review.review import Review, review_texts

FIXTURES = TESTS / "fixtures" / "diff"


def read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def review(old: str | None, new: str) -> Review:
    return review_texts(
        None if old is None else read(old), read(new), old_label=old or "(none)", new_label=new
    )


def check_golden(golden: Path, name: str, text: str) -> None:
    match_golden(golden / "diff" / name, text)


def rows(data: dict, cell_id: str, scope: str = "measured") -> list[tuple]:
    cell = next(c for c in data["cells"] if c["id"] == cell_id)
    return [
        (r["kind"], r["action"], r["process"], r["name"], r["old"], r["new"]) for r in cell[scope]
    ]


DISAGG = "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg#0"
AGG = "dsv41flash-fp4-gb300-sglang-agentic-dspark#0"
B200 = "dsv41flash-fp4-b200-sglang-agentic-dspark#0"


# ---- command changes ------------------------------------------------------------------------


def test_command_changes_flags_env_commands_processes_and_placement() -> None:
    r = review("base.jsx", "commands.jsx")
    assert r.has_changes and r.exit_code == 1
    data = r.json()
    assert rows(data, DISAGG) == [
        (
            "cmd",
            "changed",
            "NATS — Dynamo KV-event plane",
            "command",
            "nats-server -c nats.conf",
            "nats-server -js -sd /tmp/nats",
        ),
        ("flag", "changed", "Prefill worker", "--mem-fraction-static", "0.8", "0.85"),
        ("env", "added", "Prefill worker", "SGLANG_DISAGGREGATION_NIXL_BACKEND", None, "LIBFABRIC"),
        (
            "field",
            "changed",
            "Decode worker",
            "gpu_pinning",
            '[["0,1"],["2,3"]]',
            '[["0,1,2,3"],["4,5,6,7"]]',
        ),
        ("flag", "changed", "Decode worker", "--max-running-requests", "48", "64"),
    ]
    assert rows(data, AGG) == [
        (
            "block",
            "added",
            "SGLang router (OpenAI API)",
            "process",
            None,
            "python3 -m sglang_router.launch_router",
        ),
        ("flag", "removed", "Worker", "--weight-loader-prefetch-checkpoints", "", None),
        ("env", "changed", "Worker", "SGLANG_TIMEOUT_KEEP_ALIVE", "900", "1200"),
        ("env", "removed", "Worker", "SGLANG_RAGGED_VERIFY_MODE", "static", None),
        ("flag", "added", "Worker", "--swa-prefix-tails", None, "4096"),
    ]
    disagg = next(c for c in data["cells"] if c["id"] == DISAGG)
    # the c48 patch change is reported for that point only; the rest for every point
    where = {r["name"]: (r["allPoints"], r["where"]) for r in disagg["measured"]}
    assert where["--max-running-requests"] == (False, ["c48"])
    assert where["--mem-fraction-static"] == (True, ["c16", "c48"])
    assert [r["name"] for r in disagg["measured"] if r["note"]] == [
        "SGLANG_DISAGGREGATION_NIXL_BACKEND"
    ]
    assert disagg["measuredSelection"] == "router dynamo"


def test_changes_only_in_derived_selections_are_counted_apart() -> None:
    data = review("base.jsx", "commands.jsx").json()
    # kvMooncake env reaches only the derived Mooncake tier
    assert rows(data, DISAGG, "derived") == [
        ("env", "added", "Prefill worker", "MC_TE_METRIC", None, "true"),
    ]
    disagg = next(c for c in data["cells"] if c["id"] == DISAGG)
    assert disagg["derived"][0]["where"] == [
        "dynamo · KV mooncake: all points",
        "sglang · KV mooncake: all points",
    ]
    # the HiCache tier's args and the non-submitted router's NATS block
    assert rows(data, AGG, "derived") == [
        (
            "block",
            "removed",
            "NATS — Dynamo KV-event plane",
            "process",
            "nats-server -js -sd /tmp/nats",
            None,
        ),
        ("flag", "changed", "Worker", "--hicache-ratio", "1", "2"),
    ]
    counts = data["counts"]
    assert counts["measuredRows"] == 10 and counts["derivedOnlyRows"] == 3
    assert counts["derivedOnly"]["block"] == {"added": 0, "removed": 1, "changed": 0}
    assert counts["measured"]["flag"] == {"added": 1, "removed": 1, "changed": 2}
    assert counts["cells"]["changed"] == 2 and counts["cells"]["metadataOnly"] == 1


def test_cell_level_image_install_status_and_provenance() -> None:
    data = review("base.jsx", "commands.jsx").json()
    disagg = next(c for c in data["cells"] if c["id"] == DISAGG)
    meta = {m["field"]: (m["old"], m["new"], m["command"]) for m in disagg["meta"]}
    assert meta["image tag"] == (
        "lmsysorg/sglang:nightly-dev-20261101-1a2b3c4d",
        "lmsysorg/sglang:nightly-dev-20261115-5e6f7a8b",
        True,
    )
    assert meta["image digest"][1] == "sha256:" + "3" * 64
    assert meta["install (dynamo)"][2] is True
    assert meta["image commit"] == ("1a2b3c4d", "5e6f7a8b", False)
    b200 = next(c for c in data["cells"] if c["id"] == B200)
    assert b200["state"] == "metadata"
    assert [(m["field"], m["old"], m["new"]) for m in b200["meta"]] == [
        ("status", "verified-pr", "verified"),
        ("dashboard date", None, "2026-11-26"),
    ]
    assert data["module"] == [
        {
            "field": "generatedOn",
            "old": "2026-11-20",
            "new": "2026-11-27",
            "points": None,
            "command": False,
        }
    ]


def test_command_diff_is_the_decoders_copy_all_text() -> None:
    data = review("base.jsx", "commands.jsx").json()
    disagg = next(c for c in data["cells"] if c["id"] == DISAGG)
    assert [d["where"] for d in disagg["diffs"]] == [
        ["c16 · dynamo · KV none"],
        ["c48 · dynamo · KV none"],
    ]
    diff = disagg["diffs"][1]["diff"].splitlines()
    assert diff[:2] == ["--- base.jsx", "+++ commands.jsx"]
    assert "-nats-server -c nats.conf" in diff and "+nats-server -js -sd /tmp/nats" in diff
    assert "-  --max-running-requests 48 \\" in diff and "+  --max-running-requests 64 \\" in diff
    # full context: the unchanged frontend is in the fold too
    assert " python3 -m dynamo.frontend \\" in diff


def test_commands_markdown_golden(golden: Path) -> None:
    check_golden(
        golden, "commands.md", review_report(review("base.jsx", "commands.jsx")).markdown()
    )


# ---- structure --------------------------------------------------------------------------------


def test_structure_cells_points_routers_tiers_hardware_checkpoints() -> None:
    r = review("base.jsx", "structure.jsx")
    assert r.exit_code == 1
    data = r.json()
    assert data["hardware"] == {"added": ["h200"], "removed": ["b200"]}
    assert data["checkpoints"] == {"added": ["deepseek-ai/DeepSeek-V4.1"], "removed": []}
    states = [(c["state"], c["id"], c["oldId"]) for c in data["cells"]]
    assert states == [
        ("changed", DISAGG, DISAGG),
        ("changed", "dsv41flash-fp4-gb300-sglang-agentic-dspark#2", AGG),
        # a new deployment that took over the old id is an addition, not a change
        ("added", AGG, None),
        ("added", "dsv41-fp8-h200-sglang-agentic#0", None),
        ("removed", B200, B200),
    ]
    disagg, moved = data["cells"][0], data["cells"][1]
    assert disagg["routersRemoved"] == ["sglang"]
    assert disagg["pointsRegrouped"] == [["c16", "c16/32"]]
    assert disagg["measured"] == [] and disagg["derived"] == []
    assert moved["moved"] is True
    assert (moved["pointsAdded"], moved["pointsRemoved"]) == (["c8"], ["c4"])
    assert (moved["tiersAdded"], moved["tiersRemoved"]) == (["mooncake"], ["hicache"])
    # the new point has no "before": its full commands are shown instead of a diff
    assert moved["diffs"] == []
    assert [t["where"] for t in moved["commands"]] == [["c8 · sglang · KV none"]]
    assert "--max-running-requests 8 \\" in moved["commands"][0]["text"]
    added = data["cells"][2]
    assert added["status"] == "in-progress"
    assert [t["where"] for t in added["commands"]] == [["c64/128 · sglang · KV none"]]
    assert "--enable-dp-attention" in added["commands"][0]["text"]
    counts = data["counts"]["cells"]
    assert (counts["added"], counts["removed"], counts["moved"]) == (2, 1, 1)


def test_structure_markdown_golden(golden: Path) -> None:
    check_golden(
        golden, "structure.md", review_report(review("base.jsx", "structure.jsx")).markdown()
    )


def test_measured_tier_change_is_named() -> None:
    old = read("base.jsx")
    cell = old.index(f'"id": "{AGG}"')
    at = old.index('"kv": "none"', old.index('"points"', cell))
    new = old[:at] + '"kv": "hicache"' + old[at + len('"kv": "none"') :]
    data = review_texts(old, new, old_label="base.jsx", new_label="new.jsx").json()
    [changed] = data["cells"]
    assert ("measured KV tier", "none", "hicache", ["c1"]) in [
        (m["field"], m["old"], m["new"], m["points"]) for m in changed["meta"]
    ]


# ---- no command changes -----------------------------------------------------------------------


def test_reencoded_legacy_module_has_no_command_changes() -> None:
    # per-point provenance URLs, checkpoint precision, full blocks instead of `from`: the same
    # commands, so only provenance, status and the label show
    r = review("legacy.jsx", "base.jsx")
    assert not r.has_changes and r.exit_code == 0
    data = r.json()
    assert [(c["state"], c["id"]) for c in data["cells"]] == [
        ("metadata", DISAGG),
        ("metadata", B200),
    ]
    meta = [(m["field"], m["old"], m["new"]) for m in data["cells"][0]["meta"]]
    assert meta == [
        ("status", "in-progress", "verified-pr"),
        (
            "run",
            None,
            "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/41000000001",
        ),
        (
            "/use comment",
            None,
            "https://github.com/SemiAnalysisAI/InferenceX/pull/4101#issuecomment-7000000001",
        ),
    ]
    assert [(m["field"], m["old"], m["new"]) for m in data["cells"][1]["meta"]] == [
        ("label", "Agg TP4 · EP1", "Agg TP4")
    ]


def test_legacy_markdown_golden(golden: Path) -> None:
    check_golden(golden, "legacy.md", review_report(review("legacy.jsx", "base.jsx")).markdown())


def test_identical_versions_exit_0_with_nothing_listed() -> None:
    r = review("base.jsx", "base.jsx")
    assert r.exit_code == 0
    data = r.json()
    assert data["cells"] == [] and data["module"] == []
    assert data["counts"]["cells"]["unchanged"] == 3
    assert "**No command changes.**" in review_report(r).markdown()


def test_pr_keys_that_are_not_ascii_numbers_sort_after_the_numbers() -> None:
    # "²" is a digit to str.isdigit but not to int(): the reviewer diff must not crash on it.
    base = read("base.jsx")
    odd = base.replace('"4102": {', '"\u00b2": {', 1)
    assert odd != base
    r = review_texts(base, odd, old_label="base.jsx", new_label="odd.jsx")
    [prs] = [m for m in r.module if m.field == "InferenceX PRs"]
    assert prs.old == "#4101, #4102" and prs.new == "#4101, #\u00b2"


def test_new_module_lists_every_cell_as_added() -> None:
    r = review(None, "base.jsx")
    assert r.exit_code == 1
    data = r.json()
    assert [c["state"] for c in data["cells"]] == ["added"] * 3
    assert data["hardware"]["added"] == ["gb300", "b200"]
    assert data["old"] == "(none)"


def test_json_is_versioned_and_serialisable() -> None:
    data = review("base.jsx", "structure.jsx").json()
    assert data["schema"] == 1 and data["hasChanges"] is True and data["exitCode"] == 1
    assert json.loads(json.dumps(data)) == data


# ---- budget and escaping ----------------------------------------------------------------------


def test_budget_drops_folds_first_then_tables_and_never_exceeds() -> None:
    r = review("base.jsx", "commands.jsx")
    full = review_report(r).markdown()
    assert review_report(r).markdown(len(full)) == full
    tables_only = review_report(r).markdown(len(full) - 1)
    assert len(tables_only) <= len(full) - 1
    assert "Size budget" in tables_only and "left out" in tables_only
    # the summary and every change table stay while folds go
    assert "| c48 | Decode worker | `--max-running-requests` | `48` | `64` |" in tables_only
    assert tables_only.count("<details>") < full.count("<details>")
    no_folds = review_report(r).markdown(2500)
    assert len(no_folds) <= 2500 and "<details>" not in no_folds
    assert "**Commands changed**" in no_folds
    for budget in (1500, 900, 300, 40):
        text = review_report(r).markdown(budget)
        assert len(text) <= budget
    assert "Change table left out" in review_report(r).markdown(
        1500
    ) or "cut to stay" in review_report(r).markdown(1500)


def test_untrusted_values_cannot_break_out_of_tables_or_folds() -> None:
    hostile = "/tmp/etcd`|</details><script>alert(1)</script>\n```\n@everyone #1"
    new = read("commands.jsx").replace('"/tmp/etcd"', json.dumps(hostile), 1)
    r = review_texts(read("base.jsx"), new, old_label="base.jsx", new_label="hostile.jsx")
    text = review_report(r).markdown()
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    assert "<script>" not in html
    assert html.count("<details>") == html.count("</details>") == text.count("<details>")
    row = next(line for line in text.splitlines() if "`--data-dir`" in line)
    assert row.count(" | ") == 4  # the pipe inside the value is escaped, the row keeps 5 cells
    assert "````diff" in text  # the fold's fence outgrows the backticks inside


# ---- CLI --------------------------------------------------------------------------------------


def run_sync(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*forkserver.command(), "diff", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def test_cli_exit_codes_and_formats(tmp_path: Path) -> None:
    base, commands, legacy = (str(FIXTURES / n) for n in ("base.jsx", "commands.jsx", "legacy.jsx"))
    assert run_sync(legacy, base).returncode == 0
    out = run_sync(base, commands, "--format", "json")
    assert out.returncode == 1
    assert json.loads(out.stdout)["counts"]["measuredRows"] == 10
    target = tmp_path / "out" / "review.md"
    done = run_sync(base, commands, "--format", "markdown", "--budget", "3000", "-o", str(target))
    assert done.returncode == 1 and done.stdout == ""
    assert len(target.read_text(encoding="utf-8")) <= 3000
    assert list(target.parent.iterdir()) == [target]  # no temp file left behind
    term = run_sync(base, commands)
    assert term.returncode == 1 and "nats-server -js -sd /tmp/nats" in term.stdout
    elsewhere = run_sync(base, commands, "--budget", "3000")
    assert elsewhere.returncode == 2 and elsewhere.stdout == ""
    assert elsewhere.stderr == "error: --budget limits markdown only, not --format text\n"


def test_cli_bad_input_exits_2_with_one_error_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsx"
    broken.write_text("export const agentx = {cells: [foo()]};\n", encoding="utf-8")
    done = run_sync(str(FIXTURES / "base.jsx"), str(broken))
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and str(broken) in done.stderr
    missing = run_sync(str(FIXTURES / "base.jsx"), str(tmp_path / "nope.jsx"))
    assert missing.returncode == 2 and "not REV:PATH" in missing.stderr


def test_bad_module_errors_name_the_line_of_the_entry(tmp_path: Path) -> None:
    text = read("commands.jsx")
    bad = text.replace('"submitted": "dynamo"', '"submitted": ["dynamo"]', 1)
    path = tmp_path / "bad.jsx"
    path.write_text(bad, encoding="utf-8")
    done = run_sync(str(FIXTURES / "base.jsx"), str(path))
    assert done.returncode == 2 and done.stdout == ""
    line = bad[: bad.index('"submitted": ["dynamo"]')].count("\n") + 1
    assert done.stderr.startswith(f"error: {path}:{line}:")
    assert 'cells[0].submitted: router ["dynamo"] is not one of' in done.stderr
    assert done.stderr.count("\n") == 1


def test_cells_and_points_need_what_matching_reads() -> None:
    from syncer.errors import SyncError

    no_id = json.loads(json.dumps(load_module(FIXTURES / "base.jsx").value))
    del no_id["cells"][1]["id"]
    no_concs = json.loads(json.dumps(no_id))
    no_concs["cells"][1]["id"] = "x#0"
    no_concs["cells"][1]["points"][0]["concs"] = None
    for data, message in (
        (no_id, "cells[1]: a cell needs an `id` to be matched"),
        (no_concs, "cells[1].points[0]: a point needs `concs` to be matched"),
    ):
        text = emit_module(["// x"], "agentx", data)
        with pytest.raises(SyncError, match=re.escape(message)):
            review_texts(read("base.jsx"), text, old_label="base.jsx", new_label="new.jsx")


def test_cli_json_escapes_what_a_terminal_would_act_on(tmp_path: Path) -> None:
    hostile = "0.85\u009b2J\u202e"  # 8-bit CSI (clear screen) and a bidi override
    path = tmp_path / "hostile.jsx"
    path.write_text(read("commands.jsx").replace('"0.85"', json.dumps(hostile), 1), "utf-8")
    done = run_sync(str(FIXTURES / "base.jsx"), str(path), "--format", "json")
    assert done.returncode == 1
    assert "\u009b" not in done.stdout and "\u202e" not in done.stdout
    assert "\\u009b2J\\u202e" in done.stdout
    values = [r["new"] for c in json.loads(done.stdout)["cells"] for r in c["measured"]]
    assert shlex.split(next(v for v in values if v and "2J" in v)) == [hostile]


def test_cli_unwritable_output_is_one_error_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    base, commands = str(FIXTURES / "base.jsx"), str(FIXTURES / "commands.jsx")
    done = run_sync(base, commands, "--format", "markdown", "-o", str(blocker / "review.md"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"error: {blocker / 'review.md'}: cannot write")
    assert done.stderr.count("\n") == 1


def test_terminal_on_a_narrow_console_wraps_values_instead_of_cutting_them() -> None:
    from rich.console import Console

    r = review("base.jsx", "commands.jsx")
    console = Console(record=True, width=80, color_system=None)
    review_report(r).text(console)
    out = console.export_text()
    assert "…" not in out
    # the 64-digit image digest is folded over lines, every digit kept
    digits = "".join(
        line.split("│")[3].strip() for line in out.splitlines() if line.count("│") == 5
    )
    assert "sha256:" + "3" * 64 in digits


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@localhost", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def test_cli_reads_rev_path_sides_from_git(tmp_path: Path) -> None:
    repo = tmp_path / "cookbook"
    snippet = repo / "docs" / "src" / "snippets" / "agentx" / "deepseek-ai" / "deepseek-v4_1.jsx"
    snippet.parent.mkdir(parents=True)
    git(tmp_path, "init", "-q", str(repo))
    snippet.write_text(read("base.jsx"), encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    snippet.write_text(read("commands.jsx"), encoding="utf-8")
    git(repo, "commit", "-q", "-am", "sync")
    rel = "docs/src/snippets/agentx/deepseek-ai/deepseek-v4_1.jsx"
    done = run_sync("-C", str(repo), f"HEAD~1:{rel}", f"HEAD:{rel}", "--format", "json")
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["old"] == f"HEAD~1:{rel}"
    # the working-tree file on one side, a revision on the other
    same = run_sync("-C", str(repo), f"HEAD:{rel}", rel, "--format", "json")
    assert same.returncode == 0, same.stderr
    bad = run_sync("-C", str(repo), f"HEAD~5:{rel}", rel)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ")
    injected = run_sync("-C", str(repo), f"--output=x:{rel}", rel)
    assert injected.returncode == 2


# ---- the real module versions -----------------------------------------------------------------


def test_reference_deepseek_v4_1_pair(reference: Path) -> None:
    folder = reference / "cookbook" / "agentx" / "deepseek-ai" / "deepseek-v4_1"
    r = review_texts(
        (folder / "37da6c0b.jsx").read_text(encoding="utf-8"),
        (folder / "2b484a51.jsx").read_text(encoding="utf-8"),
        old_label="37da6c0b",
        new_label="2b484a51",
    )
    assert r.exit_code == 1
    data = r.json()
    nats = [
        (c["id"], row["old"], row["new"])
        for c in data["cells"]
        for row in c["measured"]
        if row["kind"] == "cmd" and row["process"].startswith("NATS")
    ]
    assert {(old, new) for _, old, new in nats} == {
        ("nats-server -c nats.conf", "nats-server -js -sd /tmp/nats")
    }
    assert {cid for cid, _, _ in nats} >= {
        "dsv41flash-fp4-gb300-dynamo-sglang-agentic-agg#1",
        "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg#0",
    }
    added = [(c["id"], c["label"]) for c in data["cells"] if c["state"] == "added"]
    assert ("dsv41flash-fp4-b300-sglang-agentic-dspark#2", "Agg DEP4") in added
    assert ("dsv41flash-fp4-b200-sglang-agentic-dspark#1", "Agg DEP4") in added
    removed = [(c["id"], c["label"]) for c in data["cells"] if c["state"] == "removed"]
    assert ("dsv41flash-fp4-b200-sglang-agentic-dspark#1", "Agg TP2·EP2") in removed
    dspark = next(
        c for c in data["cells"] if c["id"] == "dsv41flash-fp4-gb300-sglang-agentic-dspark#0"
    )
    assert ("env", "added", "Worker", "SGLANG_DSPARK_FOLDED_SAMPLING", None, "2") in rows(
        data, dspark["id"]
    )
    assert ("status", "verified", "in-progress") in [
        (m["field"], m["old"], m["new"]) for m in dspark["meta"]
    ]
    for budget in (65_536, 20_000):
        md = review_report(r).markdown(budget)
        assert len(md) <= budget
        # the tables keep the NATS change and the added cells whatever the folds cost
        assert "| `command` | `nats-server -c nats.conf` | `nats-server -js -sd /tmp/nats` |" in md
        assert "| `dsv41flash-fp4-b300-sglang-agentic-dspark#2` | `b300` | Agg DEP4 |" in md
    assert "folded command sections left out" in md


@pytest.mark.parametrize("name", ["37da6c0b", "2b484a51"])
def test_reference_version_against_itself_has_no_changes(reference: Path, name: str) -> None:
    text = (
        reference / "cookbook" / "agentx" / "deepseek-ai" / "deepseek-v4_1" / f"{name}.jsx"
    ).read_text(encoding="utf-8")
    assert review_texts(text, text, old_label=name, new_label=name).exit_code == 0


def test_reference_reordered_versions_have_no_command_changes(reference: Path) -> None:
    # c4b47c36 and 37da6c0b hold the same data in another order (cells regrouped, Dynamo
    # frontend moved, indices shifted): nothing a user copies changed
    folder = reference / "cookbook" / "agentx" / "deepseek-ai" / "deepseek-v4_1"
    r = review_texts(
        (folder / "c4b47c36.jsx").read_text(encoding="utf-8"),
        (folder / "37da6c0b.jsx").read_text(encoding="utf-8"),
        old_label="c4b47c36",
        new_label="37da6c0b",
    )
    data = r.json()
    assert data["counts"]["cells"]["added"] == data["counts"]["cells"]["removed"] == 0
    # only where the Dynamo frontend is launched: before the workers now
    kinds = {row["kind"] for c in data["cells"] for row in c["measured"] + c["derived"]}
    assert kinds == {"order"}
    order = next(row for c in data["cells"] for row in c["measured"] if row["kind"] == "order")
    assert order["new"].index("Dynamo frontend") < order["new"].lower().index("worker")
    assert order["old"].index("Dynamo frontend") > order["old"].lower().index("worker")


def test_config_files_compare_by_name_whatever_their_hash() -> None:
    from syncer.review.changes import compare_files

    old = {"nginx.conf#1a2b3c4d": "upstream a {}\n", "nats.conf#00000000": "port: 4222\n"}
    new = {
        "nginx.conf#5e6f7a8b": "upstream a {}\nupstream b {}\n",
        "nats.conf#00000000": "port: 4222\n",
    }
    [change] = compare_files(old, new)
    assert (change.kind, change.process, change.action) == ("file", "nginx.conf", "changed")
    assert change.old.startswith("1 lines") and change.new.startswith("2 lines")
    assert compare_files(old, {}) and all(c.action == "removed" for c in compare_files(old, {}))


def test_terminal_prints_untrusted_values_literally() -> None:
    from rich.console import Console

    new = read("commands.jsx").replace('"0.85"', json.dumps("[bold red]x[/]\x1b[31m"), 1)
    r = review_texts(read("base.jsx"), new, old_label="base.jsx", new_label="new.jsx")
    console = Console(record=True, width=200, color_system=None)
    review_report(r).text(console)
    out = console.export_text()
    assert "[bold red]x[/]" in out and "\x1b" not in out
    assert "nats-server -js -sd /tmp/nats" in out and "only in derived selections" in out


def test_markdown_escapes_no_words_of_its_own() -> None:
    """Outside code the reviewer diff's own words carry no backslash (values here have no
    markdown in them), through the real command."""
    done = run_sync(
        str(FIXTURES / "base.jsx"), str(FIXTURES / "structure.jsx"), "--format", "markdown"
    )
    assert done.returncode == 1, done.stderr
    lines, fence = [], False
    for line in done.stdout.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence:
            lines.append(re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", line))
    assert [ln for ln in lines if "\\" in ln] == []


def test_cli_markdown_fits_a_github_body_unless_a_budget_says_otherwise(reference: Path) -> None:
    # Issue 37.7: the markdown of two real module versions was 81,738 characters by default.
    versions = reference / "cookbook" / "agentx" / "deepseek-ai" / "deepseek-v4_1"
    old, new = str(versions / "c4b47c36.jsx"), str(versions / "2b484a51.jsx")
    whole = run_sync(old, new, "--format", "markdown", "--budget", "1000000")
    assert whole.returncode == 1 and len(whole.stdout) > 65536
    fitted = run_sync(old, new, "--format", "markdown")
    assert fitted.returncode == 1 and len(fitted.stdout) <= 65536
    assert fitted.stdout.splitlines()[0] == whole.stdout.splitlines()[0]
