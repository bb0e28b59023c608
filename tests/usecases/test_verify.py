"""`sync verify` end to end on the bundled example: agreement, each kind of drift, bad input."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, match_golden

from syncer.cli import main
from syncer.compare.report import verify_report
from syncer.inferencex.policy import load_policy
from syncer.untrusted import md_text
from syncer.usecases.verify import verify_config

KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
RUN = ROOT / "examples" / "runs" / "41000000001"
INFX = ROOT / "examples" / "inferencex"
SNIPPETS = ROOT / "cookbook_snippets"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``sync verify ARGS``; an input a test names replaces the bundled example's, whose other
    inputs are then named too (the command takes none of them by default once one is named)."""
    named = [a for a in ("--run", "--inferencex", "--cookbook") if a in args]
    if named:
        example = {"--run": str(RUN), "--inferencex": str(INFX), "--cookbook": str(SNIPPETS)}
        args = (*args, *(w for a, path in example.items() if a not in named for w in (a, path)))
    with pytest.raises(SystemExit) as exc:
        main(["verify", *args])
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def copy_run(tmp_path: Path) -> Path:
    dest = tmp_path / "41000000001"
    shutil.copytree(RUN, dest)
    return dest


def sweep(run: Path, job: int) -> Path:
    return next(run.rglob(f"sweep_{job}.log"))


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def failing(result) -> dict[int, list[tuple[str, str, str]]]:  # type: ignore[no-untyped-def]
    out: dict[int, list[tuple[str, str, str]]] = {}
    for p in result.points:
        for comp in p.comparisons():
            for e in comp.problems:
                out.setdefault(p.index, []).append((e.block, e.key, e.status))
    return out


# ---- the README's main job ------------------------------------------------------------------


def test_main_job_agrees_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, KEY)
    assert code == 0, out + err
    assert out.splitlines()[0] == f"sync verify {KEY}: all 7 points agree"
    assert out.count("  ✓ point ") == 7
    assert "simulate-acceptance: synthetic acceptance control" in out
    assert "router-worker-urls" in out


def test_result_counts_and_exclusions() -> None:
    result = verify_config(KEY, inferencex=INFX, run=None, cookbook=None)
    assert result.exit_code == 0
    assert [p.verdict for p in result.points] == ["agree"] * 7
    assert [len(p.logs) for p in result.points] == [1] * 7
    counts = result.counts()
    assert set(counts) == {"match", "excluded"}
    names = {u.name for u in result.exclusions()}
    assert {
        "enable-metrics",
        "host",
        "worker-port",
        "nccl-port",
        "router-worker-urls",
        "router-prometheus",
        "cuda-visible-devices",
        "head-node-ip",
        "python-no-user-site",
        "python-unbuffered",
        "coredump-before-crash",
        "pyspy-before-crash",
        "simulate-acceptance",
    } <= names
    # the DEP2 points compare the router and the worker, the TP points only the worker
    dep2 = result.points[5].logs[0].comparison
    assert {e.block for e in dep2.entries} == {"agg worker", "sglang-router"}
    assert {e.block for e in result.points[0].logs[0].comparison.entries} == {"agg worker"}
    # both routers of the cookbook are compared with the recipe's cookbook form
    assert [c.router for c in result.points[0].cookbook.comparisons] == ["sglang", "dynamo"]


def test_json_and_markdown_match_golden(golden: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, KEY, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"] == 1 and doc["verdict"] == "agree" and doc["exit_code"] == 0
    assert doc["verdicts"] == {"agree": 7}
    assert doc["sources"]["run"] == "examples/runs/41000000001"
    assert doc["sources"]["srt_slurm"] == ["4be1c0d27a93f58e6d0b2c7a91f3e5d84c6a0b17"]
    assert doc["sources"]["versions"]["sglang-router"] == ["0.3.2"]
    assert [p["override"] for p in doc["points"]] == [
        "override_tp4_c1",
        "override_tp4_c4",
        "override_tp4_c16",
        "override_tp2_c16",
        "override_tp2_c32",
        "override_dep2_c64",
        "override_dep2_c128",
    ]
    dep2 = doc["points"][5]
    [log] = dep2["logs"]
    assert log["job"] == "5230106" and log["matched_by"].startswith("variant name")
    urls = [e for e in log["comparison"]["entries"] if e["key"] == "--worker-urls"]
    assert urls == [
        {
            "block": "sglang-router",
            "field": "flag",
            "key": "--worker-urls",
            "status": "excluded",
            "left": "http://$AGG_0_HEAD_IP:6100",
            "right": "http://10.30.2.8:6100",
            "exclusion": {
                "name": "router-worker-urls",
                "reason": "process placement (worker addresses and allocated ports)",
            },
            "note": "values agree",  # once placement is normalised
        }
    ]
    assert [c["router"] for c in dep2["cookbook"]["comparisons"]] == ["sglang", "dynamo"]
    assert all(c["agrees"] for c in dep2["cookbook"]["comparisons"])
    assert doc["unmatched_logs"] == [] and doc["skipped_members"] == []
    code, out, _ = run_cli(capsys, KEY, "--format", "markdown")
    assert code == 0
    # The exclusions fold quotes the policy's reasons (engineer B's data): checked against the
    # policy itself, the rest of the report against the golden file.
    head, rest = out.split("<details><summary>Excluded as InferenceX-only", 1)
    fold, tail = rest.split("</details>", 1)
    match_golden(
        golden / "verify" / "dspark.md",
        head + "<details><summary>Excluded as InferenceX-only (see policy)</details>" + tail,
    )
    policy = load_policy()
    lines = [ln for ln in fold.splitlines() if ln.startswith("- ")]
    assert len(lines) == len({e["name"] for e in doc["exclusions"]}) == 14
    for line in lines:
        name = line.split("`", 2)[1]
        entry = next(e for e in policy.entries if e.name == name)
        assert line.startswith(f"- `{name}`: {md_text(entry.reason)} (`")


@pytest.mark.parametrize("form", ["zip-of-tgz", "tgz", "single-log"])
def test_archive_forms(tmp_path: Path, form: str, capsys: pytest.CaptureFixture[str]) -> None:
    if form == "single-log":
        code, out, _ = run_cli(capsys, KEY, "--run", str(sweep(RUN, 5230106)), "--point", "5")
        assert code == 0, out
        assert "point 5 agrees" in out
        return
    if form == "tgz":
        path = tmp_path / "run.tar.gz"
        with tarfile.open(path, "w:gz") as tar:
            tar.add(RUN, arcname="41000000001")
    else:
        path = tmp_path / "artifacts.zip"
        with zipfile.ZipFile(path, "w") as zf:
            for point_dir in sorted(p for p in RUN.iterdir() if p.is_dir()):
                buf = io.BytesIO()
                with tarfile.open(fileobj=buf, mode="w:gz") as tar:
                    tar.add(point_dir / "srt-single-node-logs", arcname=".")
                zf.writestr(f"{point_dir.name}/srt-single-node-logs.tar.gz", buf.getvalue())
    code, out, _ = run_cli(capsys, KEY, "--run", str(path))
    assert code == 0, out


def test_point_and_conc_selection(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, KEY, "--conc", "64")
    assert code == 0 and f"{KEY}: point 5 agrees" in out and "override_dep2_c64" in out
    code, out, _ = run_cli(capsys, KEY, "--point", "3")
    assert code == 0 and "override_tp2_c16" in out
    # --conc selects every job measured at C, as in `sync render` (syncer.point_options).
    code, out, err = run_cli(capsys, KEY, "--conc", "16")
    assert code == 0, err
    assert "all 2 points agree" in out
    assert "override_tp4_c16" in out and "override_tp2_c16" in out and "override_dep2" not in out
    code, _, err = run_cli(capsys, KEY, "--conc", "3")
    assert code == 2 and "no job at concurrency 3" in err
    code, _, err = run_cli(capsys, KEY, "--point", "9")
    assert code == 2 and "out of range" in err


# ---- drift, each reported with exit 1 -------------------------------------------------------


def test_drifted_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = copy_run(tmp_path)
    edit(sweep(run, 5230106), "--max-running-requests 128", "--max-running-requests 96")
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None)
    assert result.exit_code == 1
    assert failing(result) == {5: [("agg worker", "--max-running-requests", "differs")]}
    entry = result.points[5].logs[0].comparison.problems[0]
    assert (entry.left, entry.right) == ("128", "96")
    code, out, _ = run_cli(capsys, KEY, "--run", str(run))
    assert code == 1
    assert "6 of 7 points agree" not in out and "1 of 7 points does not agree" in out
    assert "  ✗ point 5" in out


def test_drifted_env_value(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    edit(sweep(run, 5230104), "SGLANG_NUMA_BIND_V2=0", "SGLANG_NUMA_BIND_V2=1")
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None)
    assert result.exit_code == 1
    assert failing(result) == {3: [("agg worker", "SGLANG_NUMA_BIND_V2", "differs")]}


def test_extra_env_key_in_the_log(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    edit(
        sweep(run, 5230102),
        "SGLANG_TIMEOUT_KEEP_ALIVE=900",
        "SGLANG_TIMEOUT_KEEP_ALIVE=900 ZZ_EXTRA=a b",
    )
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None)
    assert failing(result) == {1: [("agg worker", "ZZ_EXTRA", "only-log")]}


def test_missing_router(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    path = sweep(run, 5230107)
    lines = [ln for ln in path.read_text().splitlines() if "Starting sglang-router" not in ln]
    path.write_text("\n".join(lines) + "\n")
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None)
    assert result.exit_code == 1
    assert failing(result) == {6: [("sglang-router", "process", "only-recipe")]}


def test_worker_missing_from_the_log(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    path = sweep(run, 5230106)
    drop = ("Starting agg worker", "Env: ", "Command: python3", "_agg_w0.out")
    lines = [ln for ln in path.read_text().splitlines() if not any(d in ln for d in drop)]
    path.write_text("\n".join(lines) + "\n")
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None)
    assert result.exit_code == 1
    assert failing(result) == {5: [("agg worker", "process", "only-recipe")]}


def test_point_without_a_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = copy_run(tmp_path)
    shutil.rmtree(sweep(run, 5230101).parents[2])
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None)
    assert result.exit_code == 1
    assert [p.verdict for p in result.points] == ["no-log"] + ["agree"] * 6
    code, out, _ = run_cli(capsys, KEY, "--run", str(run), "--format", "markdown")
    assert code == 1
    assert "| 0 | Agg TP4 | 1 | `override_tp4_c1` | — |" in out
    assert "no sweep log of the run belongs to this point" in out


def test_log_of_another_variant_is_reported(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    edit(sweep(run, 5230103), "agentic_tp4_c16", "agentic_tp4_c999")
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None)
    assert result.points[2].verdict == "no-log"
    [unmatched] = result.assignment.unmatched
    assert "agentic_tp4_c999" in unmatched.reason


def test_cookbook_drift(tmp_path: Path) -> None:
    module = tmp_path / "deepseek-v4_1.jsx"
    text = (ROOT / "cookbook_snippets" / "deepseek-ai" / "deepseek-v4_1.jsx").read_text()
    old = '["--watchdog-timeout", "3600"]'
    assert text.count(old) >= 1
    module.write_text(text.replace(old, '["--watchdog-timeout", "1800"]', 1))
    result = verify_config(KEY, inferencex=INFX, run=None, cookbook=module)
    assert result.exit_code == 1
    bad = {i for i, entries in failing(result).items() if entries}
    assert bad and bad <= {0, 1, 2, 3, 4, 5, 6}
    keys = {(e[1], e[2]) for entries in failing(result).values() for e in entries}
    assert keys == {("--watchdog-timeout", "differs")}
    for i in bad:
        assert result.points[i].logs[0].agrees  # the log still matches the recipe


def test_module_values_that_are_no_strings_compare_as_the_page_shows_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A module may hold a number, a boolean or null where the format has a string (the page
    prints JavaScript's String(value)); the comparison took them for strings and crashed
    (exit 3). A number equal to the logged text agrees; null is drift, shown as the page
    shows it."""
    module = tmp_path / "deepseek-v4_1.jsx"
    text = (ROOT / "cookbook_snippets" / "deepseek-ai" / "deepseek-v4_1.jsx").read_text()
    for old, new in (
        (
            '"SGLANG_ENABLE_DSV41_ENGRAM_HOST_TABLE": "0"',
            '"SGLANG_ENABLE_DSV41_ENGRAM_HOST_TABLE": 0',
        ),
        ('["--cuda-graph-max-bs-decode", "64"]', '["--cuda-graph-max-bs-decode", 64]'),
    ):
        assert old in text
        text = text.replace(old, new, 1)
    module.write_text(text)
    code, out, err = run_cli(capsys, KEY, "--cookbook", str(module), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["exit_code"] == 0

    module.write_text(
        text.replace('["--watchdog-timeout", "3600"]', '["--watchdog-timeout", null]')
    )
    code, out, err = run_cli(capsys, KEY, "--cookbook", str(module), "--format", "json")
    assert code == 1, err
    shown = {
        (e["key"], e["left"], e["status"])
        for p in json.loads(out)["points"]
        for c in p["cookbook"]["comparisons"]
        for e in c["entries"]
        if e["key"] == "--watchdog-timeout"
    }
    assert ("--watchdog-timeout", "null", "differs") in shown


def test_no_cookbook_module_for_the_config(tmp_path: Path) -> None:
    empty = tmp_path / "snippets"
    empty.mkdir()
    result = verify_config(KEY, inferencex=INFX, run=None, cookbook=empty)
    assert result.exit_code == 1
    assert {p.verdict for p in result.points} == {"no-cookbook"}


def test_ambiguous_env_split_is_not_agreement(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    # Out-of-order keys make the line split two ways; neither reading is expected.
    edit(
        sweep(run, 5230101),
        "SGLANG_TIMEOUT_KEEP_ALIVE=900",
        "SGLANG_TIMEOUT_KEEP_ALIVE=900 ZZ=x ZZZ2=1 ZZZ1=2",
    )
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None)
    assert result.exit_code == 1
    assert result.points[0].logs[0].ambiguities


# ---- bad input: exit 2, one line, no traceback ------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("garbage.tar.gz", b"\x1f\x8b\x08\x00garbage", "corrupt or truncated"),
        ("binary.log", b"\x00\x01\x02\x03" * 100, "binary data"),
        ("text.log", b"just some text\nwithout any launch\n", "no srt-slurm worker launch"),
    ],
)
def test_bad_runs_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    code, out, err = run_cli(capsys, KEY, "--run", str(path))
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_error_line_quoting_a_log_is_one_inert_masked_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The node name comes from the log: an OSC title sequence and a line break in it must not
    # reach the terminal, and a token-shaped value quoted by an error is masked.
    path = tmp_path / "sweep_1.log"
    path.write_bytes(
        b"2026-10-12 08:33:48 [INFO] Starting agg worker 0 on \x1b]0;PWNED\x07n\xe2\x80\xa8x\n"
        b"2026-10-12 08:33:48 [INFO] Log: /x\n"
    )
    code, out, err = run_cli(capsys, KEY, "--run", str(path), "--point", "0")
    assert code == 2 and out == ""
    assert err.startswith(f"error: {path}:1: agg worker 0 on ") and "no Command: line" in err
    assert "\x1b" not in err and "\x07" not in err and "\u2028" not in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err

    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    token = "ghp_" + "A1b2C3d4" * 5
    for sha in run.rglob("srt-slurm-sha.txt"):
        sha.write_text(token + "\n")
    code, out, err = run_cli(capsys, KEY, "--run", str(run))
    assert code == 2 and "should hold an srt-slurm commit" in err
    assert token not in err and "***" in err


def test_truncated_log_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "sweep_5230101.log"
    text = sweep(RUN, 5230101).read_text()
    path.write_text(text[: text.index("Command: python3") + 60])
    code, _, err = run_cli(capsys, KEY, "--run", str(path), "--point", "0")
    assert code == 2
    assert "truncated" in err and f"{path}:" in err


def test_unknown_config_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "dsv41flash-fp4-gb300-sglang-agentic-dspar")
    assert code == 2 and err.startswith("error: ")


# ---- reference mock runs (srt-slurm v1.0.68), when present ------------------------------------


def test_reference_mock_dep2_log_maps_by_variant_and_reports_the_1x_differences(
    reference: Path,
) -> None:
    log = (
        reference / "srt-slurm" / "dryrun-v1.0.68" / "synthetic_ifx_dep2_c64" / "sweep_4242064.log"
    )
    result = verify_config(KEY, inferencex=INFX, run=log, cookbook=None, point=5)
    # v1.0.68 cannot read the schema-2 recipe, so the 2.x rendering is used, and said so
    assert result.srt_version == "2"
    assert any("srt-slurm 1.x" in n for n in result.notes)
    [point] = result.points
    [check] = point.logs
    assert check.matched_by == "variant name"
    problems = {(e.block, e.key): e.status for e in check.comparison.problems}
    # that mock ran an older recipe version: settings our recipe adds are only in the recipe
    assert problems[("agg worker", "--tokenizer-worker-num")] == "only-recipe"
    assert result.exit_code == 1


def test_selected_point_leaves_the_other_logs_alone() -> None:
    result = verify_config(KEY, inferencex=INFX, run=None, cookbook=None, point=5)
    assert [p.index for p in result.points] == [5] and result.exit_code == 0
    assert result.assignment.unmatched == []
    assert len(result.points[5 - 5].logs) == 1


def test_log_without_names_is_taken_for_the_selected_point(tmp_path: Path) -> None:
    text = sweep(RUN, 5230104).read_text()
    lines = [ln for ln in text.splitlines() if "Loaded config" not in ln and "Run name" not in ln]
    path = tmp_path / "job.log"
    path.write_text("\n".join(lines) + "\n")
    assert verify_config(KEY, inferencex=INFX, run=path, cookbook=None, point=3).exit_code == 0
    # without --point the nameless log fits every point: reported, never guessed
    result = verify_config(KEY, inferencex=INFX, run=path, cookbook=None)
    [unmatched] = result.assignment.unmatched
    assert "pass --point" in unmatched.reason
    assert {p.verdict for p in result.points} == {"no-log"}


def test_variant_from_the_submission_manifest_and_job_from_the_file_name(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    for job in (5230101, 5230104):
        path = sweep(run, job)
        keep = [
            ln
            for ln in path.read_text().splitlines()
            if not any(k in ln for k in ("Loaded config", "Run name", "Job ID", "Config:"))
        ]
        path.write_text("\n".join(keep) + "\n")
    # also drop the result-file-name hints: only srtctl's manifest names the variant
    for d in list(run.iterdir()):
        if d.is_dir():
            d.rename(run / f"artifact_{d.name[-8:]}")
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None)
    assert result.exit_code == 0
    assert [lc.job_id for p in result.points for lc in p.logs][:1] == ["5230101"]


def test_logs_map_by_result_file_name_when_the_variant_is_not_logged(tmp_path: Path) -> None:
    # Without `Loaded config:` / `Run name:` lines and without the submission manifests, the
    # artifact directory (RESULT_FILENAME: tp/ep/dpa and conc) still selects one point per log.
    run = copy_run(tmp_path)
    for manifest in run.rglob("*submission.json"):
        manifest.unlink()
    for log in run.rglob("sweep_*.log"):
        kept = [
            line
            for line in log.read_text().splitlines(keepends=True)
            if "Loaded config:" not in line and "Run name:" not in line
        ]
        log.write_text("".join(kept))
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None)
    assert result.exit_code == 0
    assert [(p.index, [lc.job_id for lc in p.logs]) for p in result.points] == [
        (i, [str(5230101 + i)]) for i in range(7)
    ]
    assert {lc.matched_by for p in result.points for lc in p.logs} == {"concurrency + tp/ep/dpa"}

    # The same logs with no names at all fit every point: reported, never guessed.
    bare = tmp_path / "bare"
    bare.mkdir()
    for log in run.rglob("sweep_*.log"):
        shutil.copy(log, bare / log.name)
    result = verify_config(KEY, inferencex=INFX, run=bare, cookbook=None)
    assert result.exit_code == 1
    assert all(p.verdict == "no-log" for p in result.points)
    assert len(result.assignment.unmatched) == 7
    reason = result.assignment.unmatched[0].reason
    assert reason.startswith("fits points 0, 1, 2, 3, 4, 5, 6 (no variant name or result file")
    assert reason.endswith("; verify it on its own")  # --point takes a nameless log only alone
    one = verify_config(KEY, inferencex=INFX, run=bare / "sweep_5230104.log", cookbook=None)
    assert one.assignment.unmatched[0].reason.endswith("; pass --point to choose")
    picked = verify_config(
        KEY, inferencex=INFX, run=bare / "sweep_5230104.log", cookbook=None, point=3
    )
    assert picked.exit_code == 0 and picked.points[0].logs[0].matched_by == "--point"


def test_eval_job_logs_are_set_aside(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    src = sweep(run, 5230107).parents[2]
    shutil.copytree(src, run / ("eval_" + src.name))
    evals = next((run / ("eval_" + src.name)).rglob("sweep_5230107.log"))
    # an eval job is its own job, with real verification (no synthetic acceptance)
    edit(evals, "Job ID: 5230107", "Job ID: 5230199")
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None)
    assert result.exit_code == 0
    assert [s.job_id for s in result.assignment.evals] == ["5230199"]
    assert "set aside" in verify_report(result).markdown()


def test_two_modules_with_the_config_are_ambiguous(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = ROOT / "cookbook_snippets" / "deepseek-ai" / "deepseek-v4_1.jsx"
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        shutil.copy(module, tmp_path / name / "deepseek-v4_1.jsx")
    code, _, err = run_cli(capsys, KEY, "--cookbook", str(tmp_path))
    assert code == 2 and "2 cookbook modules have cells of" in err
    code, _, _ = run_cli(capsys, KEY, "--cookbook", str(tmp_path / "a"))
    assert code == 0


def test_json_output_escapes_what_a_terminal_would_act_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = copy_run(tmp_path)
    value = "a\u009b2Jb\u202ec\u2028d"  # 8-bit CSI, bidi override, line separator
    edit(sweep(run, 5230101), "SGLANG_TIMEOUT_KEEP_ALIVE=900", f"SGLANG_TIMEOUT_KEEP_ALIVE={value}")
    code, out, _ = run_cli(capsys, KEY, "--run", str(run), "--format", "json")
    assert code == 1
    assert not any(ch in out for ch in "\u009b\u202e\u2028")
    assert "a\\u009b2Jb\\u202ec\\u2028d" in out
    entries = json.loads(out)["points"][0]["logs"][0]["comparison"]["entries"]
    [entry] = [e for e in entries if e["key"] == "SGLANG_TIMEOUT_KEEP_ALIVE"]
    assert entry["right"] == value and entry["status"] == "differs"


def test_conflicting_command_lines_in_one_worker_block_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 12.9: a second, different Command: inside the worker block (before its Log:) was
    # ignored and point 5 "agreed".
    run = copy_run(tmp_path)
    path = sweep(run, 5230106)
    lines = path.read_text().splitlines(keepends=True)
    [i] = [n for n, ln in enumerate(lines) if "Command: python3 -m sglang.launch_server" in ln]
    lines.insert(i + 1, lines[i].replace("--max-running-requests 128", "--max-running-requests 9"))
    path.write_text("".join(lines))
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None)
    assert result.exit_code == 1
    [problem] = result.points[5].logs[0].problems
    assert "agg worker 0 on gb300-b02-n08" in problem and "two different Command: lines" in problem
    assert '"9" where the first has "128"' in problem
    code, out, _ = run_cli(capsys, KEY, "--run", str(run))
    assert code == 1 and "1 of 7 points does not agree" in out
