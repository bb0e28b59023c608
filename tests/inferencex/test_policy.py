"""The exclusion policy: every entry has a case here (a test fails when an entry is added
without one), plus the cookbook layout rules the published cells show."""

from __future__ import annotations

from typing import Any

import pytest

from syncer.errors import SyncError
from syncer.inferencex.policy import load_policy, parse_policy

DROP = object()
# entry name -> (process kind, field, name in a raw block, raw value, cookbook value or DROP)
CASES: dict[str, tuple[str, str, str, str, Any]] = {
    "enable-metrics": ("worker", "flag", "--enable-metrics", "", DROP),
    "router-prometheus": ("sglang-router", "flag", "--prometheus-port", "29000", DROP),
    "host": ("worker", "flag", "--host", "10.0.0.1", "0.0.0.0"),
    "worker-port": ("worker", "flag", "--port", "6132", "30000"),
    "router-port": ("sglang-router", "flag", "--port", "8180", "8000"),
    "frontend-http-port": ("dynamo-frontend", "flag", "--http-port", "8180", "8000"),
    "nccl-port": ("worker", "flag", "--nccl-port", "17501", DROP),
    "bootstrap-port": ("worker", "flag", "--disaggregation-bootstrap-port", "7200", "8998"),
    "dist-init-addr": (
        "worker",
        "flag",
        "--dist-init-addr",
        "$PREFILL_0_HEAD_IP:8300",
        "$PREFILL_HEAD_IP:20000",
    ),
    "node-rank": ("worker", "flag", "--node-rank", "0", "$NODE_RANK"),
    "kv-events-endpoint": (
        "worker",
        "flag",
        "--kv-events-config",
        '{"publisher": "zmq", "topic": "kv-events", "endpoint": "tcp://*:5201"}',
        '{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:5557"}',
    ),
    "dump-config": ("worker", "flag", "--dump-config-to", "/logs/n1_config.json", DROP),
    "router-policy-config": (
        "dynamo-frontend",
        "flag",
        "--router-policy-config",
        "/logs/p.yaml",
        DROP,
    ),
    "router-worker-urls": (
        "sglang-router",
        "flag",
        "--worker-urls",
        "http://$AGG_0_HEAD_IP:6100",
        "http://127.0.0.1:30000",
    ),
    "router-prefill-urls": (
        "sglang-router",
        "flag",
        "--prefill",
        "http://$PREFILL_1_HEAD_IP:6132",
        "http://$PREFILL_1_HEAD_IP:30000",
    ),
    "router-decode-urls": (
        "sglang-router",
        "flag",
        "--decode",
        "http://$DECODE_0_HEAD_IP:6100",
        "http://$DECODE_0_HEAD_IP:30000",
    ),
    "cuda-visible-devices": ("worker", "env", "CUDA_VISIBLE_DEVICES", "2,3", DROP),
    "rocr-visible-devices": ("worker", "env", "ROCR_VISIBLE_DEVICES", "0", DROP),
    "head-node-ip": ("worker", "env", "HEAD_NODE_IP", "10.0.0.1", DROP),
    "etcd-endpoints": (
        "worker",
        "env",
        "ETCD_ENDPOINTS",
        "http://10.0.0.9:2379",
        "http://$ETCD_IP:2379",
    ),
    "nats-server": (
        "dynamo-frontend",
        "env",
        "NATS_SERVER",
        "nats://10.0.0.9:4222",
        "nats://$NATS_IP:4222",
    ),
    "etcd-advertise": (
        "etcd",
        "flag",
        "--advertise-client-urls",
        "http://10.0.0.9:2379",
        "http://$ETCD_IP:2379",
    ),
    "mooncake-master-addr": (
        "worker",
        "env",
        "MOONCAKE_MASTER",
        "10.0.0.9:8700",
        "$MOONCAKE_MASTER_IP:8700",
    ),
    "mooncake-metadata": (
        "worker",
        "env",
        "MOONCAKE_TE_META_DATA_SERVER",
        "http://10.0.0.9:8701/metadata",
        "http://$MOONCAKE_MASTER_IP:8701/metadata",
    ),
    "mooncake-local-hostname": ("worker", "env", "MOONCAKE_LOCAL_HOSTNAME", "10.0.0.3", "$NODE_IP"),
    "dyn-system-port": ("worker", "env", "DYN_SYSTEM_PORT", "7500", DROP),
    "dyn-log-format": ("dynamo-frontend", "env", "DYN_SKIP_SGLANG_LOG_FORMATTING", "1", DROP),
    "dyn-log": ("worker", "env", "DYN_LOG", "info", DROP),
    "dyn-event-plane": ("worker", "env", "DYN_EVENT_PLANE", "nats", DROP),
    "kvbm-leader": ("worker", "env", "DYN_KVBM_LEADER_ZMQ_PUB_PORT", "5600", DROP),
    "otel": ("sglang-router", "env", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://x:4317", DROP),
    "sidecar-build-mode": ("worker", "env", "SGLANG_RUST_BUILD_MODE", "never", DROP),
    "python-no-user-site": ("worker", "env", "PYTHONNOUSERSITE", "1", DROP),
    "python-unbuffered": ("dynamo-frontend", "env", "PYTHONUNBUFFERED", "1", DROP),
    "pip-break-system-packages": ("dynamo-frontend", "env", "PIP_BREAK_SYSTEM_PACKAGES", "1", DROP),
    "hf-cache": ("worker", "env", "HF_HUB_CACHE", "/hf_hub_cache", DROP),
    "hf-home": ("worker", "env", "HF_HOME", "/hf", DROP),
    "hf-hub-cache-legacy": ("worker", "env", "HUGGINGFACE_HUB_CACHE", "/hf", DROP),
    "coredump-before-crash": ("worker", "env", "SGLANG_CUDA_COREDUMP_BEFORE_CRASH", "0", DROP),
    "pyspy-before-crash": ("worker", "env", "SGLANG_PYSPY_DUMP_BEFORE_CRASH", "0", DROP),
    "simulate-acceptance": ("worker", "env", "SGLANG_SIMULATE_ACC_LEN", "3.51", DROP),
    "trtllm-forced-acceptance": (
        "worker",
        "env",
        "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS",
        "2",
        DROP,
    ),
    "tilert-simulate-acceptance": ("worker", "env", "TILERT_SIMULATE_ACC_LEN", "3", DROP),
    "client-concurrency": ("benchmark", "env", "CONC", "16", DROP),
    "client-concurrency-list": ("benchmark", "env", "CONC_LIST", "16 32", DROP),
    "client-warmup": ("benchmark", "env", "AGENTIC_WARMUP_GRACE_PERIOD", "1800", DROP),
    "client-aiperf": (
        "benchmark",
        "env",
        "AIPERF_HTTP_X_SMG_ROUTING_KEY_FROM_CORRELATION_ID",
        "true",
        DROP,
    ),
    "client-binding": ("benchmark", "env", "KV_OFFLOADING", "none", DROP),
    # one case per class of InferenceX-only setting
    "mooncake-master-metrics": ("mooncake-master", "flag", "--metrics_port", "8702", DROP),
    "mooncake-client-metrics": (
        "mooncake-store",
        "env",
        "MC_STORE_CLIENT_METRIC_INTERVAL",
        "5",
        DROP,
    ),
    "cache-report": ("worker", "flag", "--enable-cache-report", "", DROP),
    "cache-dir": ("worker", "env", "SGLANG_DG_CACHE_DIR", "/configs/deepgemm_cache", DROP),
    "jit-workspace-dir": (
        "worker",
        "env",
        "FLASHINFER_WORKSPACE_BASE",
        "/configs/flashinfer-cache",
        DROP,
    ),
    "log-level": ("worker", "flag", "--log-level", "info", DROP),
    "decode-log-interval": ("worker", "flag", "--decode-log-interval", "1", DROP),
    "sglang-log-env": ("worker", "env", "SGLANG_LOG_FORWARD_ITERS", "1", DROP),
    "sglang-debug-log-env": ("worker", "env", "SGLANG_HICACHE_DEBUG_SAMPLE_RATE", "0.01", DROP),
    "no-color": ("dynamo-frontend", "env", "NO_COLOR", "1", DROP),
    "workspace-chat-template": (
        "worker",
        "flag",
        "--chat-template",
        "/infmax-workspace/benchmarks/single_node/chat_templates/t.jinja",
        DROP,
    ),
}


def test_every_entry_has_a_case() -> None:
    names = [e.name for e in load_policy().entries]
    assert sorted(names) == sorted(CASES), (
        "add a CASES row for every policy entry (and remove stale ones)"
    )
    assert all(e.reason.strip() for e in load_policy().entries)


def _block(kind: str, field: str, name: str, value: str) -> dict[str, Any]:
    block: dict[str, Any] = {
        "kind": kind,
        "cmd": "x",
        "env": {"KEEP_ME": "1"},
        "args": [["--keep-me", "1"]],
    }
    if kind == "worker":
        # a multi-node prefill worker: srt-slurm injects every placement flag into it
        block.update(role="prefill", workers=1, nodes_per_worker=2)
    if field == "env":
        block["env"][name] = value
    else:
        block["args"].insert(0, [name, value] if value else [name])
    return block


@pytest.mark.parametrize("name", sorted(CASES))
def test_entry(name: str) -> None:
    kind, field, key, value, expected = CASES[name]
    policy = load_policy()
    entry = policy.exclusion(kind, field, key, value or None)
    assert entry is not None and entry.name == name
    if kind == "benchmark":
        # client env is never in a served process; the entry exists so reports can name it
        assert policy.exclusion("worker", field, key) is None or name == "client-binding"
        return
    blocks = [_block(kind, field, key, value)]
    if kind == "sglang-router":
        # one local agg worker: its router address becomes 127.0.0.1, as published cells show
        blocks.insert(
            0,
            {
                "kind": "worker",
                "role": "agg",
                "workers": 1,
                "nodes_per_worker": 1,
                "cmd": "w",
                "env": {},
                "args": [],
            },
        )
    out = next(b for b in policy.to_cookbook(blocks) if b["kind"] == kind)
    assert out["env"]["KEEP_ME"] == "1" and ["--keep-me", "1"] in out["args"]
    if field == "env":
        assert out["env"].get(key, DROP) == expected
    else:
        found = [a for a in out["args"] if a[0] == key]
        if expected is DROP:
            assert found == []
        else:
            assert found and found[0][1] == expected


def test_entry_applies_only_to_its_kinds() -> None:
    policy = load_policy()
    # --port on a Dynamo frontend is not a worker port; --host of etcd is untouched
    assert policy.exclusion("dynamo-frontend", "flag", "--port") is None
    assert policy.exclusion("worker", "flag", "--http-port") is None
    assert policy.exclusion("worker", "env", "SGLANG_TIMEOUT_KEEP_ALIVE") is None
    assert policy.exclusion("worker", "flag", "--disaggregation-mode") is None
    assert policy.exclusion("worker", "flag", "--weight-loader-prefetch-checkpoints") is None


def test_worker_args_take_the_cookbook_order_and_router_layout() -> None:
    policy = load_policy()
    raw = [
        {
            "kind": "worker",
            "role": "prefill",
            "workers": 2,
            "nodes_per_worker": 1,
            "cmd": "python3 -m sglang.launch_server",
            "env": {"B": "1", "A": "2"},
            "args": [
                ["--model-path", "m"],
                ["--zeta"],
                ["--port", "6100"],
                ["--alpha", "1"],
                ["--disaggregation-mode", "prefill"],
            ],
        },
        {
            "kind": "worker",
            "role": "decode",
            "workers": 1,
            "nodes_per_worker": 1,
            "cmd": "python3 -m sglang.launch_server",
            "env": {},
            "args": [],
        },
        {
            "kind": "sglang-router",
            "count": 1,
            "cmd": "python -m sglang_router.launch_router",
            "env": {},
            "args": [
                ["--pd-disaggregation"],
                ["--prefill", "http://$PREFILL_0_HEAD_IP:6100", "7200"],
                ["--prefill", "http://$PREFILL_1_HEAD_IP:6132", "7201"],
                ["--decode", "http://$DECODE_0_HEAD_IP:6100"],
                ["--host", "0.0.0.0"],
                ["--port", "8000"],
                ["--prometheus-port", "29000"],
                ["--policy", "cache_aware"],
            ],
        },
    ]
    out = policy.to_cookbook(raw)
    assert [a[0] for a in out[0]["args"]] == [
        "--model-path",
        "--port",
        "--disaggregation-mode",
        "--alpha",
        "--zeta",
    ]
    assert list(out[0]["env"]) == ["A", "B"]
    assert out[2]["cmd"] == "python3 -m sglang_router.launch_router" and "count" not in out[2]
    assert out[2]["args"] == [
        ["--decode", "http://$DECODE_0_HEAD_IP:30000"],
        ["--prefill", "http://$PREFILL_1_HEAD_IP:30000", "8998"],
        ["--prefill", "http://$PREFILL_0_HEAD_IP:30000", "8998"],
        ["--pd-disaggregation"],
        ["--host", "0.0.0.0"],
        ["--port", "8000"],
        ["--policy", "cache_aware"],
    ]
    assert raw[2]["args"][0] == ["--pd-disaggregation"], "the input must not be mutated"


def test_dynamo_frontend_comes_before_workers() -> None:
    raw = [
        {"kind": "etcd", "count_nodes": 1, "cmd": "etcd", "env": {}, "args": []},
        {
            "kind": "worker",
            "role": "agg",
            "workers": 1,
            "nodes_per_worker": 1,
            "cmd": "w",
            "env": {},
            "args": [],
        },
        {"kind": "dynamo-frontend", "count": 1, "cmd": "f", "env": {}, "args": []},
    ]
    assert [b["kind"] for b in load_policy().to_cookbook(raw)] == [
        "etcd",
        "dynamo-frontend",
        "worker",
    ]


def test_several_agg_workers_keep_their_addresses() -> None:
    raw = [
        {
            "kind": "worker",
            "role": "agg",
            "workers": 2,
            "nodes_per_worker": 1,
            "cmd": "w",
            "env": {},
            "args": [],
        },
        {
            "kind": "sglang-router",
            "cmd": "r",
            "env": {},
            "args": [["--worker-urls", "http://$AGG_0_HEAD_IP:6100", "http://$AGG_1_HEAD_IP:6132"]],
        },
    ]
    out = load_policy().to_cookbook(raw)
    assert out[1]["args"] == [
        ["--worker-urls", "http://$AGG_0_HEAD_IP:30000", "http://$AGG_1_HEAD_IP:30000"]
    ]


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"entries": []}, "version: 1"),
        ({"version": 1, "entries": [{"name": "x"}]}, "missing"),
        (
            {
                "version": 1,
                "entries": [
                    {
                        "name": "x",
                        "field": "arg",
                        "pattern": "p",
                        "kinds": ["worker"],
                        "action": "drop",
                        "reason": "r",
                    }
                ],
            },
            "field must be",
        ),
        (
            {
                "version": 1,
                "entries": [
                    {
                        "name": "x",
                        "field": "env",
                        "pattern": "p",
                        "kinds": ["worker"],
                        "action": "set",
                        "reason": "r",
                    }
                ],
            },
            "needs a string value",
        ),
        (
            {
                "version": 1,
                "entries": [
                    {
                        "name": "x",
                        "field": "env",
                        "pattern": "p",
                        "kinds": ["gpu"],
                        "action": "drop",
                        "reason": "r",
                    }
                ],
            },
            "kinds must be",
        ),
    ],
)
def test_bad_policy_is_refused(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(SyncError, match=message):
        parse_policy(doc, "policy.yaml")


def test_frontends_behind_nginx_keep_the_internal_port() -> None:
    raw = [
        {"kind": "nginx", "cmd": "nginx -c nginx.conf -g daemon off;", "env": {}, "args": []},
        {
            "kind": "dynamo-frontend",
            "count": 2,
            "cmd": "f",
            "env": {},
            "args": [["--http-port", "8180"]],
        },
        {
            "kind": "worker",
            "role": "agg",
            "workers": 2,
            "nodes_per_worker": 1,
            "cmd": "w",
            "env": {},
            "args": [],
        },
    ]
    out = load_policy().to_cookbook(raw)
    assert [b["kind"] for b in out] == ["nginx", "dynamo-frontend", "worker"]
    assert out[1]["args"] == [["--http-port", "8180"]] and out[1]["count"] == 2
    alone = load_policy().to_cookbook([raw[1]])
    assert alone[0]["args"] == [["--http-port", "8000"]]
