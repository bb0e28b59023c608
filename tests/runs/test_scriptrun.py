"""Reading a script-era run: result directories, the printf %q command, the SGLANG_* header,
through the streamed artifact reader (directories, zip, tar.gz, nested archives)."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT

from syncer.errors import SyncError
from syncer.runs.artifacts import Limits
from syncer.runs.scriptrun import logged_blocks, read_env_header, read_script_run

FIX = ROOT / "tests" / "fixtures" / "scriptera"
RUN = FIX / "runs" / "52000000001"
C1 = "m1_fp8_sglang_tp4-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc1_b300-nv_03"
C16 = "m1_fp8_sglang_tp4-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc16_b300-nv_03"
C32 = "m1_fp8_sglang_tp4-pp1-dcp1-pcp1-ep4-dpatrue_disagg-false_spec-mtp_conc32_b300-nv_03"


def by_name(path: Path) -> dict:
    data = read_script_run(path)
    return {rd.name: rd for rd in data.dirs}


def test_fixture_run_reads_every_result_directory() -> None:
    dirs = by_name(RUN)
    assert len(dirs) == 4  # the server_logs_ copy joins its agentic_ directory
    c16 = dirs[C16]
    assert c16.argv is not None
    i = c16.argv.index("--model-loader-extra-config")
    assert c16.argv[i + 1] == '{"enable_multithread_load": true}'  # a value with a space
    j = c16.argv.index("--json-model-override-args")
    assert c16.argv[j + 1] == '{\n  "max_position_embeddings": 262144\n}'  # a $'...' value
    assert c16.argv[-5:] == [
        "--enable-hierarchical-cache",
        "--hicache-ratio",
        "2",
        "--hicache-write-policy",
        "write_through",
    ]
    assert c16.env == {
        "SGLANG_ENABLE_JIT_DEEPGEMM": "0",
        "SGLANG_SIMULATE_ACC_LEN": "2.75",
        "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
        "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token",
        "SGLANG_TIMEOUT_KEEP_ALIVE": "900",
    }
    assert c16.concurrency == 16 and c16.router_log is None
    assert dirs[C32].router_log is not None and dirs[C32].argv[0] == "/usr/bin/python3"
    assert dirs[C1].source == f"agentic_{C1}" and len(dirs[C1].files) == 4
    hashed = [rd for name, rd in dirs.items() if name.startswith("5c0f")]
    assert len(hashed) == 1 and hashed[0].env is None and hashed[0].concurrency == 4


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_fixtures_are_what_the_builder_writes(tmp_path: Path) -> None:
    # The committed run and module are exactly build.py's output (bash printf %q, env | sort).
    copy = tmp_path / "scriptera"
    shutil.copytree(FIX, copy)
    subprocess.run([sys.executable, str(copy / "build.py")], check=True, cwd=ROOT)
    for path in sorted(p for p in FIX.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        rel = path.relative_to(FIX)
        assert (copy / rel).read_bytes() == path.read_bytes(), rel


def _zip_dir(src: Path, dest: Path, prefix: str = "") -> None:
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(src.rglob("*")):
            if path.is_file():
                zf.write(path, prefix + path.relative_to(src).as_posix())


def test_zip_tar_and_nested_artifact_zips_read_the_same(tmp_path: Path) -> None:
    expected = {n: (rd.argv, rd.env, rd.concurrency) for n, rd in by_name(RUN).items()}
    flat = tmp_path / "run.zip"
    _zip_dir(RUN, flat)
    tgz = tmp_path / "run.tar.gz"
    with tarfile.open(tgz, "w:gz") as tf:
        tf.add(RUN, arcname="52000000001")
    # As GitHub hands artifacts out: one zip per artifact, here gathered in one zip.
    nested = tmp_path / "artifacts.zip"
    parts = tmp_path / "parts"
    parts.mkdir()
    for artifact in sorted(RUN.iterdir()):
        _zip_dir(artifact, parts / f"{artifact.name}.zip")
    _zip_dir(parts, nested)
    for path in (flat, tgz, nested):
        got = {n: (rd.argv, rd.env, rd.concurrency) for n, rd in by_name(path).items()}
        assert got == expected, path


def test_limits_of_the_artifact_reader_apply(tmp_path: Path) -> None:
    with pytest.raises(SyncError, match="more than 3 members"):
        read_script_run(RUN, Limits(max_members=3))


def _copy(tmp_path: Path) -> Path:
    dest = tmp_path / "run"
    shutil.copytree(RUN, dest)
    return dest


def test_two_commands_in_the_file_are_refused(tmp_path: Path) -> None:
    run = _copy(tmp_path)
    cmd = run / f"agentic_{C16}" / "sglang_command.txt"
    cmd.write_text(cmd.read_text() + "python3 -m other\n")
    with pytest.raises(SyncError) as exc:
        read_script_run(run)
    assert "more than one line" in exc.value.message
    assert exc.value.path.endswith("sglang_command.txt") and exc.value.line == 2


def test_an_expansion_in_the_command_is_refused_with_its_column(tmp_path: Path) -> None:
    run = _copy(tmp_path)
    cmd = run / f"agentic_{C16}" / "sglang_command.txt"
    cmd.write_text("python3 -m sglang.launch_server --model-path $MODEL_PATH\n")
    with pytest.raises(SyncError) as exc:
        read_script_run(run)
    assert '"$" would expand' in exc.value.message
    assert (exc.value.line, exc.value.column) == (1, 46)


def test_copies_that_disagree_are_a_problem(tmp_path: Path) -> None:
    run = _copy(tmp_path)
    log = run / f"server_logs_{C1}" / "server.log"
    log.write_text(
        log.read_text().replace("SGLANG_TIMEOUT_KEEP_ALIVE=900", "SGLANG_TIMEOUT_KEEP_ALIVE=1")
    )
    rd = by_name(run)[C1]
    assert rd.problems and "differs" in rd.problems[0]


def test_a_run_without_commands_is_refused(tmp_path: Path) -> None:
    run = _copy(tmp_path)
    for cmd in run.rglob("sglang_command.txt"):
        cmd.unlink()
    with pytest.raises(SyncError, match=r"no sglang_command\.txt found"):
        read_script_run(run)


def test_a_directory_without_its_command_is_listed(tmp_path: Path) -> None:
    run = _copy(tmp_path)
    (run / f"agentic_{C16}" / "sglang_command.txt").unlink()
    data = read_script_run(run)
    assert len(data.dirs) == 3
    assert data.missing == [
        f"agentic_{C16}: no sglang_command.txt (the server command of this job was not logged)"
    ]


def test_eval_directories_are_marked(tmp_path: Path) -> None:
    run = _copy(tmp_path)
    shutil.copytree(run / f"agentic_{C16}", run / f"eval_server_logs_{C16}_lm-eval")
    evals = [rd for rd in read_script_run(run).dirs if rd.eval_job]
    assert len(evals) == 1


# ---- the env header ------------------------------------------------------------------------


def header(text: str) -> tuple[dict[str, str] | None, int | None]:
    return read_env_header(io.BytesIO(text.encode()), "server.log")


def test_env_header_values_keep_spaces_and_equals() -> None:
    env, line = header(
        "=== SGLANG_* env vars at launch ===\nSGLANG_A=x=y z\nSGLANG_B=\n====\nserver output\n"
    )
    assert env == {"SGLANG_A": "x=y z", "SGLANG_B": ""} and line == 1


def test_a_log_without_the_header_logged_no_env() -> None:
    assert header("[2026] server starting\nSGLANG_X=1\n") == (None, None)


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("=== SGLANG_* env vars at launch ===\nSGLANG_A=1\n", "not closed", 1),
        (
            "=== SGLANG_* env vars at launch ===\nSGLANG_A=1\nPATH=/bin\n===\n",
            "expected SGLANG_",
            3,
        ),
        ("=== SGLANG_* env vars at launch ===\nSGLANG_A=1\nSGLANG_A=2\n===\n", "listed twice", 3),
    ],
)
def test_bad_headers_name_their_line(text: str, message: str, line: int) -> None:
    with pytest.raises(SyncError) as exc:
        header(text)
    assert message in exc.value.message and exc.value.line == line
    assert exc.value.path == "server.log"


def test_logged_blocks_mark_what_is_not_logged() -> None:
    dirs = by_name(RUN)
    blocks, notes = logged_blocks(dirs[C32], "example-org/M1-FP8")
    worker, router = blocks
    assert worker["cmd"] == "python3 -m sglang.launch_server"
    assert worker["logged_env"] == "SGLANG_*" and "unlogged" not in worker
    assert ["--model-path", "example-org/M1-FP8"] in worker["args"]
    assert router["kind"] == "sglang-router" and router["unlogged"] == ["cmd", "args", "env"]
    assert notes == [
        "interpreter /usr/bin/python3 read as python3",
        "--model-path /data/models/M1-FP8 (the runner's copy of example-org/M1-FP8) read as "
        "example-org/M1-FP8",
    ]
    hashed = next(rd for name, rd in dirs.items() if name.startswith("5c0f"))
    blocks, notes = logged_blocks(hashed, "example-org/M1-FP8")
    assert blocks[0]["unlogged"] == ["env"] and notes == []
    # A path that is not the checkpoint's copy stays as logged.
    blocks, _ = logged_blocks(dirs[C32], "other-org/Other")
    assert ["--model-path", "/data/models/M1-FP8"] in blocks[0]["args"]


def test_one_result_directory_or_its_command_file_given_alone() -> None:
    alone = by_name(RUN / f"agentic_{C32}")
    assert list(alone) == [C32] and alone[C32].router_log == "router.log"
    assert alone[C32].source == f"agentic_{C32}"
    single = by_name(RUN / f"agentic_{C32}" / "sglang_command.txt")
    assert list(single) == [C32] and single[C32].env is None  # server.log was not given
