"""Sweep-log parsing: every line shape, Env: splitting, workers to raw blocks."""

from __future__ import annotations

import io
import shlex
from pathlib import Path

import pytest
from conftest import TESTS, parse_sweep_text

from syncer.errors import SyncError
from syncer.runs.envline import split_env
from syncer.runs.launch import build_launch
from syncer.runs.logs import parse_sweep_log, split_command

FIXTURES = TESTS / "fixtures" / "runs"


def _log(*messages: str) -> str:
    return "".join(f"2026-10-12 07:41:09 [INFO] {m}\n" for m in messages)


# ---- Env: splitting -------------------------------------------------------------------------


def test_env_values_with_spaces_equals_quotes_json_and_empty() -> None:
    payload = (
        'A_EMPTY= B_EQ=k=v=w C_JSON={"a": 1, "b": [1, 2]} D_QUOTES=it\'s "q" E_SPACED=a b  c '
        "F_TRAIL=x"
    )
    split = split_env(payload)
    assert not split.ambiguous
    assert split.env == {
        "A_EMPTY": "",
        "B_EQ": "k=v=w",
        "C_JSON": '{"a": 1, "b": [1, 2]}',
        "D_QUOTES": 'it\'s "q"',
        "E_SPACED": "a b  c",
        "F_TRAIL": "x",
    }


def test_env_value_that_looks_like_a_key_out_of_order_is_glued() -> None:
    # "B=1" sorts before "X", so it cannot start a new key after X.
    assert split_env("A=1 X=y B=1").env == {"A": "1", "X": "y B=1"}


def test_env_ambiguous_split_is_reported_not_guessed() -> None:
    split = split_env("A=x Z=1 B=2")
    assert split.ambiguous
    assert {"A": "x Z=1", "B": "2"} in split.readings
    assert {"A": "x", "Z": "1 B=2"} in split.readings
    assert "or" in split.describe_ambiguity()


def test_env_expected_keys_and_values_resolve_the_split() -> None:
    assert split_env("A=x Z=1 B=2", {"A": "x Z=1", "B": "2"}).env == {"A": "x Z=1", "B": "2"}
    assert split_env("A=x Z=1 B=2", {"A": "x", "Z": "1 B=2"}).env == {"A": "x", "Z": "1 B=2"}
    # An unexpected key stays a key (so it is reported), unless the expected value says otherwise.
    assert split_env("A=1 C=2", {"A": "1"}).env == {"A": "1", "C": "2"}
    assert split_env("A=1 C=2", {"A": "1 C=2"}).env == {"A": "1 C=2"}


def test_env_value_with_newline() -> None:
    assert split_env("A=line one\nline two B=2").env == {"A": "line one\nline two", "B": "2"}


def test_env_must_start_with_a_key() -> None:
    with pytest.raises(ValueError):
        split_env("not an env line")
    assert split_env("").env == {}


# ---- line shapes ----------------------------------------------------------------------------


def test_worker_block_direct_frontend_and_benchmark_kept_apart() -> None:
    argv = [
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "m/M",
        "--port",
        "8000",
        "--json-arg",
        '{"x": "a b"}',
        "--trust-remote-code",
    ]
    text = _log(
        "Loaded config: base_tp4_c1",
        "Job ID: 123",
        "Starting agg worker 0 on node-1",
        "Env: A=1 B=two words",
        "Command: " + shlex.join(argv),
        "Log: /out/logs/node-1_agg_w0.out",
        "frontend.type=sglang: no separate frontend process; sglang.launch_server owns port 8000",
        "Script: <custom command>",
        "Command: bash -lc 'bash /infmax-workspace/benchmarks/srt_agentic.sh'",
        "Log: /out/logs/benchmark.out",
    )
    log = parse_sweep_text(text, "sweep_123.log")
    assert log.job_id == "123" and log.config_name == "base_tp4_c1"
    assert log.direct_frontend
    [worker] = log.workers
    assert (worker.role, worker.index, worker.node) == ("agg", 0, "node-1")
    assert worker.argv == argv
    assert worker.env_text == "A=1 B=two words"
    assert worker.log == "/out/logs/node-1_agg_w0.out"
    assert [b.argv for b in log.benchmarks] == [
        ["bash", "-lc", "bash /infmax-workspace/benchmarks/srt_agentic.sh"]
    ]
    assert log.benchmarks[0].script == "<custom command>"
    assert log.frontends == []


def test_router_line_2x_and_1x() -> None:
    argv = "python -m sglang_router.launch_router --worker-urls http://10.0.0.1:6100 --dp-aware"
    two = parse_sweep_text(
        _log(
            "Starting agg worker 0 on n1",
            "Env: A=1",
            "Command: python3 -m sglang.launch_server",
            "Log: x",
            f"Starting sglang-router 0 on n1: {argv}",
        )
    )
    one = parse_sweep_text(
        _log(
            "Starting agg worker 0 on n1",
            "Env: A=1",
            "Command: python3 -m sglang.launch_server",
            "Log: x",
            "Starting sglang-router 0 on n1",
            f"Router command: {argv}",
        )
    )
    for log, style in ((two, "2.x"), (one, "1.x")):
        [router] = log.frontends
        assert router.kind == "sglang-router"
        assert router.argv == shlex.split(argv)
        assert log.router_style == style


def test_actions_prefix_nsys_numactl_continuation_and_multinode() -> None:
    log = parse_sweep_log((FIXTURES / "actions_dynamo_disagg.log").open("rb"), "job.log")
    assert log.job_id == "7700123"
    prefill, dec0, _dec1 = log.workers
    assert prefill.env_text.endswith("NOTE=first line\nsecond line of NOTE")
    wrapper, cmd, args = prefill.split
    assert wrapper[:2] == ["nsys", "profile"] and cmd == "python3 -m dynamo.sglang"
    assert ["--tensor-parallel-size", "2"] in args
    assert dec0.split[0] == ["numactl", "--cpunodebind=0", "--membind=0"]
    assert [p.kind for p in log.frontends] == ["dynamo-frontend"]
    assert log.frontends[0].argv is None
    assert log.benchmarks[0].argv == ["bash", "/infmax-workspace/benchmarks/srt_agentic.sh", "64"]

    launch = build_launch(log)
    blocks = {(b["kind"], b.get("role")): b for b in launch.blocks}
    decode = blocks[("worker", "decode")]
    assert decode["workers"] == 1 and decode["nodes_per_worker"] == 2
    assert ["--node-rank", "0"] in decode["args"]  # the rank-0 node is the block
    assert decode["wrapper"] == ["numactl", "--cpunodebind=0", "--membind=0"]
    # Ranks differ only in per-process values and the {node}-templated env: consistent.
    assert launch.problems == []
    assert blocks[("worker", "prefill")]["env"]["NOTE"] == "first line\nsecond line of NOTE"
    front = blocks[("dynamo-frontend", None)]
    assert front["unlogged"] == ["cmd", "args", "env"] and front["count"] == 1


def test_v1_router_two_workers_and_pitfall_values() -> None:
    log = parse_sweep_log((FIXTURES / "v1_router_pitfalls.log").open("rb"), "pitfalls.log")
    launch = build_launch(log)
    assert launch.problems == [] and launch.ambiguities == []
    worker, router = launch.blocks
    assert worker["workers"] == 2 and worker["gpu_pinning"] == [["0,1"], ["2,3"]]
    assert worker["env"]["SPACED"] == "a b  c"
    assert worker["env"]["QUOTED"] == 'it\'s "q"'
    assert worker["env"]["JSON_VAL"] == '{"a": 1, "b": [1, 2]}'
    assert worker["env"]["EMPTY"] == "" and worker["env"]["EQ"] == "k=v=w"
    assert ["--dict-arg", "{'a': 1, 'b': 'x y'}"] in worker["args"]
    assert ["--list-arg", "1", "two words", "True"] in worker["args"]
    assert router["kind"] == "sglang-router" and router["unlogged"] == ["env"]
    assert ["--request_timeout_secs", "600"] in router["args"]


def test_workers_of_a_role_must_agree_except_ports_and_gpus() -> None:
    def block(i: int, cvd: str, mfs: str) -> list[str]:
        return [
            f"Starting agg worker {i} on n1",
            f"Env: CUDA_VISIBLE_DEVICES={cvd} X=1",
            f"Command: python3 -m sglang.launch_server --port {6100 + 32 * i} "
            f"--mem-fraction-static {mfs}",
            "Log: l",
        ]

    same = build_launch(parse_sweep_text(_log(*block(0, "0,1", "0.8"), *block(1, "2,3", "0.8"))))
    assert same.problems == []
    drift = build_launch(parse_sweep_text(_log(*block(0, "0,1", "0.8"), *block(1, "2,3", "0.7"))))
    [problem] = drift.problems
    assert "agg worker 1" in problem and "--mem-fraction-static 0.7 vs 0.8" in problem


def test_ambiguous_env_line_is_reported_by_the_launch() -> None:
    text = _log(
        "Starting agg worker 0 on n1",
        "Env: A=x Z=1 B=2",
        "Command: python3 -m sglang.launch_server",
        "Log: l",
    )
    launch = build_launch(parse_sweep_text(text))
    [amb] = launch.ambiguities
    assert "splits two ways" in amb
    resolved = build_launch(parse_sweep_text(text), lambda kind, role: {"A": "x Z=1", "B": "2"})
    assert resolved.ambiguities == [] and resolved.blocks[0]["env"] == {"A": "x Z=1", "B": "2"}


def test_command_argument_holding_a_newline_continues() -> None:
    argv = ["python3", "-m", "sglang.launch_server", "--chat-template", "line1\nline2"]
    text = _log("Starting agg worker 0 on n1", "Env: A=1", "Command: " + shlex.join(argv), "Log: l")
    [worker] = parse_sweep_text(text).workers
    assert worker.argv == argv


def test_mock_log_format() -> None:
    text = (
        "07:41:09 | INFO     | Starting agg worker 0 on n1\n"
        "07:41:09 | INFO     | Env: A=1\n"
        "07:41:09 | INFO     | Command: python3 -m sglang.launch_server --tp-size 2\n"
        "07:41:09 | INFO     | Log: l\n"
    )
    [worker] = parse_sweep_text(text).workers
    assert worker.split[2] == [["--tp-size", "2"]]


def test_split_command_forms() -> None:
    assert split_command(["python3", "-m", "m", "--a=b", "--c", "1", "2", "--d"]) == (
        [],
        "python3 -m m",
        [["--a", "b"], ["--c", "1", "2"], ["--d"]],
    )
    assert split_command(["/usr/bin/python3.12", "-m", "m"])[1] == "/usr/bin/python3.12 -m m"
    assert split_command(["etcd", "--data-dir", "/tmp"]) == ([], "etcd", [["--data-dir", "/tmp"]])


# ---- bad input ------------------------------------------------------------------------------


def test_truncated_worker_block_is_an_error_with_a_line() -> None:
    text = _log("Starting agg worker 0 on n1", "Env: A=1")
    with pytest.raises(SyncError) as err:
        parse_sweep_text(text, "sweep_9.log")
    assert err.value.path == "sweep_9.log" and err.value.line == 1
    assert "truncated" in err.value.message


def test_unterminated_quote_at_end_is_an_error() -> None:
    text = _log("Starting agg worker 0 on n1", "Env: A=1", "Command: python3 -m x --a 'open")
    with pytest.raises(SyncError) as err:
        parse_sweep_text(text)
    assert err.value.line == 3 and "unterminated" in err.value.message


def test_binary_input_is_an_error() -> None:
    with pytest.raises(SyncError) as err:
        parse_sweep_log(io.BytesIO(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "x.log")
    assert "binary" in err.value.message


@pytest.mark.parametrize(
    "line",
    [
        "Starting agg worker " + "9" * 5000 + " on n1",
        "Starting sglang-router " + "9" * 5000 + " on n1: python -m sglang_router.launch_router",
    ],
)
def test_absurd_process_index_is_an_error_not_a_traceback(line: str) -> None:
    # int() raises ValueError past 4,300 digits; a log is attacker-controlled.
    with pytest.raises(SyncError) as err:
        parse_sweep_text(_log(line))
    assert err.value.line == 1
    # The value is cut, saying how much was left out (not 5,000 digits in a one-line error).
    assert err.value.message == (
        "process index 999999999… (4991 more characters) is not a number srt-slurm logs"
    )


def test_odd_node_rank_values_are_not_ranks() -> None:
    cmd = "Command: python3 -m sglang.launch_server --node-rank {} --tp 8"
    text = _log(
        "Starting agg worker 0 on 2 nodes (n1, n2)",
        "Env: A=1",
        cmd.format("²"),  # isdigit() but not int()-able
        "Log: /l/n1_agg_w0.out",
        "Starting agg worker 0 on 2 nodes (n1, n2)",
        "Env: A=1",
        cmd.format("9" * 5000),
        "Log: /l/n2_agg_w0.out",
    )
    launch = build_launch(parse_sweep_text(text))
    [block] = launch.blocks
    assert block["nodes_per_worker"] == 2 and block["source"]["line"] == 1


def test_router_started_without_command_is_an_error() -> None:
    with pytest.raises(SyncError):
        parse_sweep_text(_log("Starting sglang-router 0 on n1"))


def test_overlong_marker_line_is_refused_and_noise_is_skipped(monkeypatch) -> None:
    import syncer.runs.logs as logs

    monkeypatch.setattr(logs, "MAX_LINE", 1000)
    monkeypatch.setattr(logs, "CHUNK", 256)
    noise = "x" * 5000 + "\n"
    ok = noise + _log("Starting agg worker 0 on n1", "Env: A=1", "Command: python3 -m m", "Log: l")
    assert len(parse_sweep_text(ok).workers) == 1
    bad = _log("Env: " + "A" * 5000)
    with pytest.raises(SyncError) as err:
        parse_sweep_text(bad)
    assert "longer than" in err.value.message


def test_chunk_boundaries_do_not_split_records(monkeypatch) -> None:
    import syncer.runs.logs as logs

    monkeypatch.setattr(logs, "CHUNK", 7)
    text = "banner\n" * 50 + _log(
        "Starting agg worker 0 on n1", "Env: A=1 B=x", "Command: python3 -m m --a 1", "Log: l"
    )
    [worker] = parse_sweep_text(text).workers
    assert worker.env_text == "A=1 B=x" and worker.argv == ["python3", "-m", "m", "--a", "1"]
    assert worker.line == 51


# ---- the reference mock runs (srt-slurm v1.0.68) ---------------------------------------------


def test_reference_mock_logs_parse(reference: Path) -> None:
    logs = sorted((reference / "srt-slurm" / "dryrun-v1.0.68").glob("*/sweep_*.log"))
    assert logs
    seen_multinode = False
    for path in logs:
        with path.open("rb") as fh:
            log = parse_sweep_log(fh, str(path))
        launch = build_launch(log)
        assert log.workers, path
        assert launch.problems == [], (path, launch.problems)
        assert launch.ambiguities == [], (path, launch.ambiguities)
        for block in launch.blocks:
            if block["kind"] == "worker":
                assert block["cmd"].startswith("python3 -m "), path
                seen_multinode |= block["nodes_per_worker"] > 1
        assert all(b.argv[0] == "bash" for b in log.benchmarks)
    assert seen_multinode
    pitfalls = reference / "srt-slurm" / "dryrun-v1.0.68" / "synthetic_pitfalls"
    [path] = pitfalls.glob("sweep_*.log")
    with path.open("rb") as fh:
        worker = build_launch(parse_sweep_log(fh, str(path))).blocks[0]
    assert worker["env"]["SPACED"] == "a b  c"
    assert worker["env"]["QUOTES"] == 'it\'s "q"'
    assert worker["env"]["EMPTY"] == ""
    assert worker["env"]["ESCAPED_JSON"] == '{"a": 1, "b": [1, 2]}'


def test_point_shape_ignores_values_int_cannot_read() -> None:
    from types import SimpleNamespace

    from syncer.runs.mapping import point_shape

    def point(tp: str, ep: str) -> SimpleNamespace:
        args = [["--tensor-parallel-size", tp], ["--expert-parallel-size", ep]]
        return SimpleNamespace(raw={"sglang": [{"kind": "worker", "args": args}]})

    assert point_shape(point("4", "2")) == (4, 2, False)  # type: ignore[arg-type]
    assert point_shape(point("²", "9" * 5000)) == (1, 1, False)  # type: ignore[arg-type]


def test_point_shape_reads_every_parallelism_spelling() -> None:
    from types import SimpleNamespace

    from syncer.runs.mapping import point_shape

    args = [["--tp", "8"], ["--ep_size", "4"], ["--enable_dp_attention"]]
    point = SimpleNamespace(raw={"sglang": [{"kind": "worker", "args": args}]})
    assert point_shape(point) == (8, 4, True)  # type: ignore[arg-type]


def test_env_line_with_thousands_of_keys_is_refused_quickly() -> None:
    import time

    from syncer.runs.envline import MAX_CANDIDATES

    payload = " ".join(f"K{i:05d}=v" for i in range(MAX_CANDIDATES))
    start = time.perf_counter()
    assert len(split_env(payload).env) == MAX_CANDIDATES
    assert time.perf_counter() - start < 2  # quadratic in the keys: bounded by the limit
    with pytest.raises(ValueError, match="KEY= tokens in one Env: line"):
        split_env(payload + " Z=1")


def test_two_different_command_lines_in_one_worker_block_are_a_problem() -> None:
    # Issue 12.9: the second Command: line of a block was taken for a benchmark command and
    # ignored; the point "agreed" on the strength of the first.
    first = "Command: python3 -m sglang.launch_server --port 6100 --mem-fraction-static 0.8"
    text = _log(
        "Starting agg worker 0 on n1",
        "Env: X=1",
        first,
        "Command: python3 -m sglang.launch_server --port 6100 --mem-fraction-static 0.5",
        "Log: l",
        "Script: <custom command>",
        "Command: bash -lc 'bash /infmax-workspace/benchmarks/srt_agentic.sh'",
    )
    log = parse_sweep_text(text)
    assert [b.line for b in log.benchmarks] == [7]  # only the benchmark's, after Script:
    launch = build_launch(log)
    assert launch.problems == [
        "agg worker 0 on n1 (line 1) logs two different Command: lines; the one on line 4 has "
        '"0.5" where the first has "0.8" (argument 6)'
    ]
    # The same line logged twice says nothing new.
    assert build_launch(parse_sweep_text(text.replace("0.5", "0.8"))).problems == []


def test_service_lines_of_the_2x_services_layer() -> None:
    text = (
        "2026-10-12 09:00:00 [INFO] Starting service store-decode-0 (mooncake-store) on n04: "
        "python -m mooncake.mooncake_store_service --port 8800\n"
        "2026-10-12 09:00:01 [INFO] Starting service store-decode-0 (mooncake-store) on n05: "
        "python -m mooncake.mooncake_store_service --port 8800\n"
        "2026-10-12 09:00:02 [INFO] Starting service gms (gms) on n04 for decode worker 0: "
        "gms --gpus '0,1'\n"
    )
    log = parse_sweep_text(text)
    assert [(p.service, p.kind, p.index, p.node) for p in log.services] == [
        ("store-decode-0", "mooncake-store", 0, "n04"),
        ("store-decode-0", "mooncake-store", 1, "n05"),
        ("gms", "gms", 0, "n04"),
    ]
    assert log.services[2].argv == ["gms", "--gpus", "0,1"]
    assert log.frontends == [] and log.workers == []


def test_worker_env_host_name_is_compared_as_the_rendered_token() -> None:
    text = (
        "2026-10-12 09:00:00 [INFO] Starting prefill worker 0 on gb300-n07\n"
        "2026-10-12 09:00:00 [INFO] Env: A=1 MC_TCP_BIND_ADDRESS=gb300-n07\n"
        "2026-10-12 09:00:00 [INFO] Command: python3 -m sglang.launch_server --port 1\n"
        "2026-10-12 09:00:00 [INFO] Log: /x/gb300-n07_prefill_w0.out\n"
    )
    [block] = build_launch(parse_sweep_text(text)).blocks
    assert block["env"] == {"A": "1", "MC_TCP_BIND_ADDRESS": "<node>"}


def test_services_without_a_block_kind_are_not_launch_blocks() -> None:
    text = (
        "2026-10-12 09:00:00 [INFO] Starting service node-exporter (node-exporter) on n01: "
        "/configs/node_exporter --web.listen-address=:9100\n"
        "2026-10-12 09:00:00 [INFO] Starting service etcd (etcd) on n01: /configs/etcd "
        "--data-dir /tmp/etcd\n"
    )
    blocks = build_launch(parse_sweep_text(text)).blocks
    assert [(b["kind"], b["service"], b["args"]) for b in blocks] == [
        ("etcd", "etcd", [["--data-dir", "/tmp/etcd"]])
    ]
