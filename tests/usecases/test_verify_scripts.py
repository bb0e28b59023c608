"""`sync verify` on a script-launched key: the cookbook cell against the logged argv and
SGLANG_* env, exit 0 / 1 / 2, what is not logged never counted as agreement."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from syncer.cli import main
from syncer.compare.report import verify_report
from syncer.usecases.verify import verify_config

FIX = ROOT / "tests" / "fixtures" / "scriptera"
INFX = FIX / "inferencex"
RUN = FIX / "runs" / "52000000001"
COOKBOOK = FIX / "cookbook"
KEY = "m1-fp8-b300-sglang-agentic-mtp"
C1 = "m1_fp8_sglang_tp4-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc1_b300-nv_03"
C16 = "m1_fp8_sglang_tp4-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc16_b300-nv_03"
C32 = "m1_fp8_sglang_tp4-pp1-dcp1-pcp1-ep4-dpatrue_disagg-false_spec-mtp_conc32_b300-nv_03"
HASHED = "agentic_5c0f3d9a41e2b7c86d1f0a3e9b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(["verify", KEY, "--inferencex", str(INFX), "--cookbook", str(COOKBOOK), *args])
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def verify(run: Path = RUN, **kw: object):  # type: ignore[no-untyped-def]
    return verify_config(KEY, inferencex=INFX, run=run, cookbook=COOKBOOK, **kw)  # type: ignore[arg-type]


def copy_run(tmp_path: Path) -> Path:
    dest = tmp_path / "52000000001"
    shutil.copytree(RUN, dest)
    return dest


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def entries(result, status: str) -> list[tuple[int, str, str]]:  # type: ignore[no-untyped-def]
    return [
        (p.index, e.block, e.key)
        for p in result.points
        for c in p.comparisons()
        for e in c.entries
        if e.status == status
    ]


def test_fixture_run_agrees_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "--run", str(RUN))
    assert code == 0, out + err
    assert out.splitlines()[0] == f"sync verify {KEY}: all 4 points agree on what the logs show"
    assert out.count("  ✓ point ") == 4
    assert "not logged: cannot verify: agg worker env NCCL_NVLS_ENABLE" in out
    assert "not logged: cannot verify: sglang-router: command line, flags and environment" in out
    assert "launched by: benchmarks/single_node/agentic/m1_fp8_b300_sglang_mtp.sh" in out
    assert "simulate-acceptance" in out and "enable-metrics" in out


def test_points_are_matched_by_name_by_aiperf_concurrency_and_argv() -> None:
    result = verify()
    assert [p.verdict for p in result.points] == ["agree"] * 4
    assert [[lc.source for lc in p.logs] for p in result.points] == [
        [f"agentic_{C1}"],
        [HASHED],
        [f"agentic_{C32}"],
        [f"agentic_{C16}"],
    ]
    how = [p.logs[0].matched_by for p in result.points]
    assert how[0] == "logged tp/ep/dp-attention/HiCache + result directory name"
    assert how[1] == "logged tp/ep/dp-attention/HiCache + AIPerf --concurrency"


def test_what_is_not_logged_is_never_agreement() -> None:
    result = verify()
    not_logged = entries(result, "not-logged")
    assert (0, "agg worker", "NCCL_NVLS_ENABLE") in not_logged
    assert (1, "agg worker", "(environment)") in not_logged  # no header: no env logged at all
    assert (2, "sglang-router", "command") in not_logged
    matched = entries(result, "match")
    assert not any(key == "NCCL_NVLS_ENABLE" for _, _, key in matched)
    assert not any(block == "sglang-router" for _, block, _ in matched)
    # The header's SGLANG_* keys are compared for real.
    assert (0, "agg worker", "SGLANG_TIMEOUT_KEEP_ALIVE") in matched
    assert all(
        any("dynamo arm" in u for u in p.unverified) for p in result.points
    )  # the derived arm is listed, not compared


def test_a_drifted_flag_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = copy_run(tmp_path)
    edit(run / f"agentic_{C16}" / "sglang_command.txt", "--hicache-ratio 2", "--hicache-ratio 4")
    code, out, _ = run_cli(capsys, "--run", str(run))
    assert code == 1
    assert "1 of 4 points does not agree" in out
    result = verify(run)
    assert entries(result, "differs") == [(3, "agg worker", "--hicache-ratio")]


def test_a_drifted_or_missing_sglang_env_exits_1(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    for d in (f"agentic_{C1}", f"server_logs_{C1}"):
        edit(
            run / d / "server.log", "SGLANG_TIMEOUT_KEEP_ALIVE=900", "SGLANG_TIMEOUT_KEEP_ALIVE=60"
        )
    edit(run / f"agentic_{C32}" / "server.log", "SGLANG_ENABLE_JIT_DEEPGEMM=0\n", "")
    result = verify(run)
    assert result.exit_code == 1
    assert entries(result, "differs") == [(0, "agg worker", "SGLANG_TIMEOUT_KEEP_ALIVE")]
    assert entries(result, "only-cookbook") == [(2, "agg worker", "SGLANG_ENABLE_JIT_DEEPGEMM")]


def test_a_quoted_value_is_compared_as_logged(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    edit(
        run / f"agentic_{C1}" / "sglang_command.txt",
        '\\{\\"enable_multithread_load\\":\\ true\\}',
        '\\{\\"enable_multithread_load\\":\\ false\\}',
    )
    result = verify(run)
    assert entries(result, "differs") == [(0, "agg worker", "--model-loader-extra-config")]


def test_a_directory_fitting_no_point_leaves_its_point_without_a_log(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    edit(run / HASHED / "benchmark_command.txt", "--concurrency 4", "--concurrency 5")
    result = verify(run)
    assert [p.verdict for p in result.points] == ["agree", "no-log", "agree", "agree"]
    assert result.exit_code == 1
    doc = verify_report(result).json()
    assert doc["unmatched_logs"] == [
        {
            "source": HASHED,
            "job": None,
            "reason": "fits no point of the config (tp4 ep1 dp-attention false HiCache false, "
            "conc 5)",
        }
    ]
    from syncer.compare.report import _notes, _rows

    assert f"result directory {HASHED} not used: fits no point" in _notes(result)[-1]
    assert _rows(result)[0].note == "no result directory of the run belongs to this point"


def test_a_name_contradicting_the_command_is_not_used(tmp_path: Path) -> None:
    run = copy_run(tmp_path)
    edit(run / f"agentic_{C32}" / "sglang_command.txt", "--ep-size 4", "--ep-size 2")
    result = verify(run)
    assert result.points[2].verdict == "no-log"
    reason = result.assignment.unmatched[0].reason
    assert reason.startswith("named tp4 ep4 dpa true but its command runs tp4 ep2")


def test_reports_in_every_format(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--run", str(RUN), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"] == 1 and doc["launched_by"].endswith("m1_fp8_b300_sglang_mtp.sh")
    assert "agg worker env NCCL_NVLS_ENABLE" in doc["points"][0]["not_verifiable"]
    assert doc["points"][2]["logs"][0]["comparison"]["left"] == "cookbook"
    code, out, _ = run_cli(capsys, "--run", str(RUN), "--format", "markdown")
    assert code == 0
    assert "agree on what the logs show" in out
    assert "<summary>Not logged: cannot verify</summary>" in out
    assert "| point | deployment | conc | script | run log | cookbook | verdict |" in out
    assert "srt-slurm" not in out.split("<summary>Sources</summary>")[1]


def test_conc_and_point_select_one_job(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--run", str(RUN), "--conc", "32")
    assert code == 0 and "point 2  Agg DEP4" in out and out.count("✓ point") == 1
    code, _, err = run_cli(capsys, "--run", str(RUN), "--point", "9")
    assert code == 2 and "--point 9 out of range (0..3)" in err


def test_a_run_from_an_archive(tmp_path: Path) -> None:
    archive = shutil.make_archive(str(tmp_path / "run"), "zip", RUN)
    assert verify(Path(archive)).exit_code == 0


def test_no_cookbook_cell_is_not_agreement(tmp_path: Path) -> None:
    empty = tmp_path / "cookbook"
    empty.mkdir()
    result = verify_config(KEY, inferencex=INFX, run=RUN, cookbook=empty)
    assert {p.verdict for p in result.points} == {"no-cookbook"} and result.exit_code == 1


def test_an_srt_slurm_run_is_refused_for_a_script_key(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "--run", str(ROOT / "examples" / "runs" / "41000000001"))
    assert code == 2 and "no sglang_command.txt found in the run" in err


def test_a_multi_node_script_key_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = tmp_path / "ix"
    shutil.copytree(INFX, tree)
    master = tree / "configs" / "nvidia-master.yaml"
    master.write_text(
        master.read_text()
        + """
m1-fp4-mi355x-sglang-disagg-agentic:
  image: rocm/sgl-dev:x
  model: example-org/M1-FP8
  model-prefix: m1
  runner: cluster:mi355x-amds
  precision: fp4
  framework: sglang-disagg
  multinode: true
  disagg: true
  scenarios:
    agentic-coding:
    - search-space:
      - spec-decoding: mtp
        conc-list: [8]
        prefill: { num-worker: 1, tp: 8 }
        decode: { num-worker: 1, tp: 8 }
"""
    )
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "verify",
                "m1-fp4-mi355x-sglang-disagg-agentic",
                "--inferencex",
                str(tree),
                "--run",
                str(RUN),
                "--cookbook",
                str(COOKBOOK),
            ]
        )
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert (
        "multi-node bash script (benchmarks/multi_node/agentic/m1_fp4_mi355x_sglang-disagg.sh"
        in err
    )
