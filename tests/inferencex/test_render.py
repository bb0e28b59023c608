"""srt-slurm 2.x rendering rules (variant -> raw blocks), one test per rule, own fixtures."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from syncer.errors import SyncError
from syncer.inferencex.processes import render_args, render_raw
from syncer.inferencex.recipe import normalise

BASE: dict[str, Any] = {
    "schema": 2,
    "name": "t",
    "model": {"path": "hf:org/Model-X", "container": "img:1"},
    "resources": {"gpu_type": "gb300", "gpus_per_node": 4},
    "frontend": {"type": "sglang"},
    "engine": "sglang",
    "roles": {
        "agg": {
            "nodes": 1,
            "workers": 1,
            "gpus": 2,
            "args": {"tensor-parallel-size": 2},
            "env": {"ROLE_ONLY": "r", "BOTH": "role"},
        }
    },
}


def variant(**changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(BASE)
    for dotted, value in changes.items():
        node = out
        parts = dotted.split("__")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return out


def raw(v: dict[str, Any], **kw: Any) -> list[dict[str, Any]]:
    return render_raw(normalise(v), **kw)


def worker(blocks: list[dict[str, Any]], role: str = "agg") -> dict[str, Any]:
    return next(b for b in blocks if b["kind"] == "worker" and b["role"] == role)


def flags(block: dict[str, Any]) -> list[str]:
    return [a[0] for a in block["args"]]


def test_args_to_flags() -> None:
    args = {
        "b_key": 1,
        "a-key": True,
        "off": False,
        "gone": None,
        "zero": 0,
        "ratio": 0.90,
        "lst": [1, True, "x"],
        "mapping": {"a": 1},
        "json": '{"a": 1}',
        "a_z": "u",
    }
    assert render_args(args) == [
        ["--a-key"],
        ["--a-z", "u"],
        ["--b-key", "1"],
        ["--json", '{"a": 1}'],
        ["--lst", "1", "True", "x"],
        ["--mapping", "{'a': 1}"],
        ["--ratio", "0.9"],
        ["--zero", "0"],
    ]
    # keys sort by the raw key string: `a_z` after `a-key` ('_' > '-')
    assert render_args({"a_b": 1, "a-z": 2}) == [["--a-z", "2"], ["--a-b", "1"]]


def test_router_free_worker_injected_flags_in_order() -> None:
    v = variant(
        roles__agg__args={
            "served-model-name": "org/Model-X",
            "nccl-port": 1,
            "trust-remote-code": True,
            "tensor-parallel-size": 2,
            "model-path": "/x",
        }
    )
    w = worker(raw(v))
    assert w["cmd"] == "python3 -m sglang.launch_server"
    assert w["args"][:6] == [
        ["--model-path", "org/Model-X"],
        ["--served-model-name", "org/Model-X"],
        ["--host", "0.0.0.0"],
        ["--port", "8000"],  # 2.x: frontend.type sglang binds the public port
        ["--nccl-port", "17500"],
        ["--enable-metrics"],  # 2.x adds metrics to direct workers
    ]
    assert w["args"][6:] == [
        ["--tensor-parallel-size", "2"],
        ["--trust-remote-code"],
    ]  # recipe nccl/model dropped


def test_recipe_enable_metrics_stays_in_the_sorted_block() -> None:
    v = variant(roles__agg__args={"enable-metrics": True, "a": 1})
    assert flags(worker(raw(v))) == [
        "--model-path",
        "--served-model-name",
        "--host",
        "--port",
        "--nccl-port",
        "--a",
        "--enable-metrics",
    ]


def test_served_name_falls_back_to_the_model_path_basename() -> None:
    w = worker(raw(variant()))
    assert ["--served-model-name", "Model-X"] in w["args"]
    v = variant(model={"path": "/models/local"})
    assert ["--model-path", "/model"] in worker(raw(v))["args"]


def test_env_order_and_defaults() -> None:
    v = variant(environment={"BOTH": "global", "G": "g"})
    w = worker(raw(v, simulate_env={"SGLANG_SIMULATE_ACC_LEN": "3.51"}))
    env = w["env"]
    assert list(env) == sorted(env)
    assert env["HEAD_NODE_IP"] == "$HEAD_NODE_IP"
    assert env["BOTH"] == "global"  # recipe-wide environment wins over role env
    assert (
        env["SGLANG_CUDA_COREDUMP_BEFORE_CRASH"] == "0"
        and env["SGLANG_PYSPY_DUMP_BEFORE_CRASH"] == "0"
    )
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1"  # 2 of 4 GPUs
    assert env["SGLANG_SIMULATE_ACC_LEN"] == "3.51"
    assert (
        "ETCD_ENDPOINTS" not in env and "DYN_SYSTEM_PORT" not in env
    )  # Dynamo env only for Dynamo


def test_crash_dump_defaults_are_set_if_absent() -> None:
    v = variant(
        roles__agg__env={"SGLANG_CUDA_COREDUMP": "1", "SGLANG_PYSPY_DUMP_BEFORE_CRASH": "1"}
    )
    env = worker(raw(v))["env"]
    assert (
        "SGLANG_CUDA_COREDUMP_BEFORE_CRASH" not in env
        and env["SGLANG_PYSPY_DUMP_BEFORE_CRASH"] == "1"
    )


def test_whole_node_worker_has_no_device_mask() -> None:
    v = variant(roles__agg__gpus=4)
    assert "CUDA_VISIBLE_DEVICES" not in worker(raw(v))["env"]


def test_dynamo_worker_flags_env_and_services() -> None:
    v = variant(
        frontend={"type": "dynamo", "args": {"router-mode": "kv"}, "env": {"FE": "1"}},
        services=[{"name": "etcd", "type": "etcd"}, {"name": "nats", "type": "nats"}],
        roles__agg__kv_events=True,
    )
    blocks = raw(v)
    assert [b["kind"] for b in blocks] == ["etcd", "nats", "worker", "dynamo-frontend"]
    w = worker(blocks)
    assert w["cmd"] == "python3 -m dynamo.sglang"
    assert flags(w)[:8] == [
        "--model-path",
        "--served-model-name",
        "--host",
        "--port",
        "--nccl-port",
        "--dump-config-to",
        "--kv-events-config",
        "--request-plane",
    ]
    assert ["--port", "6100"] in w["args"] and ["--request-plane", "tcp"] in w["args"]
    kv = json.loads(w["args"][6][1])
    assert kv == {"publisher": "zmq", "topic": "kv-events", "endpoint": "tcp://*:5200"}
    assert ", " in w["args"][6][1]  # json.dumps default separators
    for key in (
        "ETCD_ENDPOINTS",
        "NATS_SERVER",
        "DYN_SYSTEM_PORT",
        "DYN_REQUEST_PLANE",
        "DYN_SKIP_SGLANG_LOG_FORMATTING",
        "DYN_LOG",
    ):
        assert key in w["env"]
    fe = blocks[-1]
    assert fe["args"] == [["--http-port", "8000"], ["--router-mode", "kv"]]
    assert fe["env"]["FE"] == "1" and fe["env"]["DYN_REQUEST_PLANE"] == "tcp"


def test_disaggregated_flags_and_router() -> None:
    v = variant(
        frontend={
            "type": "sglang-router",
            "enable_multiple_frontends": False,  # one router, on the head
            "args": {"policy": "cache_aware", "prometheus-port": 9},
        }
    )
    v["roles"] = {
        "prefill": {
            "nodes": 1,
            "workers": 2,
            "gpus": 2,
            "args": {"disaggregation-mode": "prefill"},
        },
        "decode": {"nodes": 1, "workers": 1, "gpus": 4, "args": {}},
    }
    blocks = raw(v)
    p, d = worker(blocks, "prefill"), worker(blocks, "decode")
    assert p["gpu_pinning"] == [["0,1"], ["2,3"]] and "gpu_pinning" not in d
    assert flags(p)[5:9] == [
        "--enable-metrics",
        "--disaggregation-mode",
        "--skip-server-warmup",
        "--disaggregation-bootstrap-port",
    ]
    assert (
        flags(p).count("--disaggregation-mode") == 2
    )  # recipe's own copy stays, as srt-slurm logs it
    assert "--disaggregation-bootstrap-port" not in flags(d)
    router = blocks[-1]
    assert router["cmd"] == "python -m sglang_router.launch_router"
    assert router["args"] == [
        ["--pd-disaggregation"],
        ["--prefill", "http://$PREFILL_0_HEAD_IP:6100", "7200"],
        ["--prefill", "http://$PREFILL_1_HEAD_IP:6132", "7200"],
        ["--decode", "http://$DECODE_0_HEAD_IP:6100"],
        ["--host", "0.0.0.0"],
        ["--port", "8000"],
        ["--prometheus-host", "0.0.0.0"],  # managed flag only when the recipe lacks it
        ["--policy", "cache_aware"],
        ["--prometheus-port", "9"],
    ]


def test_router_args_keep_yaml_order_and_repeat_lists() -> None:
    v = variant(
        frontend={"type": "sglang-router", "args": {"z_flag": True, "a": ["x", "y"], "off": False}}
    )
    router = raw(v)[-1]
    assert router["args"][0] == ["--worker-urls", "http://$AGG_0_HEAD_IP:6100"]
    assert router["args"][5:] == [["--z-flag"], ["--a", "x"], ["--a", "y"]]


def test_multi_node_worker_gets_dist_init_flags() -> None:
    v = variant(roles__agg__nodes=2, roles__agg__gpus=8, frontend={"type": "sglang-router"})
    w = worker(raw(v))
    assert w["nodes_per_worker"] == 2
    i = flags(w).index("--dist-init-addr")
    assert w["args"][i : i + 3] == [
        ["--dist-init-addr", "$AGG_0_HEAD_IP:8300"],
        ["--nnodes", "2"],
        ["--node-rank", "0"],
    ]


def test_mooncake_master_env() -> None:
    v = variant(services=[{"name": "mooncake-master", "type": "mooncake-master"}])
    blocks = raw(v)
    assert blocks[0]["kind"] == "mooncake-master"
    env = worker(blocks)["env"]
    assert env["MOONCAKE_MASTER"] == "$INFRA_IP:8700"
    assert env["MOONCAKE_TE_META_DATA_SERVER"] == "http://$INFRA_IP:8701/metadata"
    assert env["MOONCAKE_LOCAL_HOSTNAME"] == "$AGG_0_HEAD_IP"


def test_nginx_in_front_of_several_frontends() -> None:
    v = variant(
        frontend={
            "type": "dynamo",
            "enable_multiple_frontends": True,
            "num_additional_frontends": 1,
        },
        roles__agg__nodes=2,
        roles__agg__workers=2,
        roles__agg__gpus=4,
    )
    blocks = raw(v)
    assert [b["kind"] for b in blocks][-2:] == ["nginx", "dynamo-frontend"]
    # what srt-slurm runs: frontends on the worker nodes but the head (one of two here)
    assert blocks[-1]["count"] == 1 and blocks[-1]["args"][0] == ["--http-port", "8180"]


def test_srt_slurm_1x_differences() -> None:
    v1 = variant(schema=1)
    del v1["roles"], v1["engine"]
    v1["backend"] = {
        "type": "sglang",
        "sglang_config": {"aggregated": {"tensor-parallel-size": 2}},
        "aggregated_environment": {"A": "1"},
    }
    v1["resources"].update(agg_nodes=1, agg_workers=1, gpus_per_agg=2)
    v1["frontend"] = {"type": "sglang", "args": {"a_b": 1}}
    blocks = raw(v1, version="1")
    w = worker(blocks)
    assert (
        "--enable-metrics" not in flags(w) and "SGLANG_CUDA_COREDUMP_BEFORE_CRASH" not in w["env"]
    )
    assert "ETCD_ENDPOINTS" in w["env"]  # 1.x sets Dynamo env for every frontend
    router = blocks[-1]
    assert router["kind"] == "sglang-router" and ["--a_b", "1"] in router["args"]
    assert not any(a[0].startswith("--prometheus") for a in router["args"])
    with pytest.raises(SyncError, match="does not parse schema 2"):
        raw(variant(), version="1")


def test_unknown_frontend_type_is_refused() -> None:
    with pytest.raises(SyncError, match=r'frontend\.type "tilert-router"'):
        raw(variant(frontend={"type": "tilert-router"}))


@pytest.mark.parametrize(
    ("args", "detail"),
    [
        ({"speculative-algorithm": "DSPARK", "speculative-dspark-block-size": 5}, "DSpark 5"),
        (
            {
                "speculative_algorithm": "EAGLE",
                "speculative-num-steps": 3,
                "speculative-eagle-topk": 1,
                "speculative-num-draft-tokens": 4,
            },
            "MTP 3-1-4",
        ),
        ({"speculative-algorithm": "NEXTN"}, "MTP"),
        (
            {
                "speculative-algorithm": "STANDALONE",
                "speculative-num-steps": 2,
                "speculative-eagle-topk": 1,
                "speculative-num-draft-tokens": 3,
            },
            "STANDALONE 2-1-3",
        ),
        ({}, "no spec"),
    ],
)
def test_spec_detail_is_the_published_cell_detail(args: dict[str, Any], detail: str) -> None:
    from syncer.inferencex.recipe_facts import spec_detail

    assert spec_detail(normalise(variant(roles__agg__args={"tp": 1, **args}))) == detail


def test_dp_aware_router_in_front_of_a_dep_worker() -> None:
    """The srt-slurm 2.x router line of a DEP worker (srt-slurm notes, sglang-router example):
    managed flags first, then the recipe's frontend args in YAML order, `dp-aware` a bare flag."""
    v = variant(
        frontend={
            "type": "sglang-router",
            "args": {
                "policy": "cache_aware",
                "request-id-headers": "x-correlation-id",
                "dp-aware": True,
                "connect-timeout-secs": 900,
                "request-timeout-secs": 14400,
                "disable-health-check": True,
                "disable-retries": True,
            },
        },
        roles__agg__args={
            "tensor-parallel-size": 2,
            "data-parallel-size": 2,
            "enable-dp-attention": True,
        },
    )
    blocks = raw(v)
    router = blocks[-1]
    assert router["kind"] == "sglang-router"
    assert router["cmd"] == "python -m sglang_router.launch_router"
    assert router["args"] == [
        ["--worker-urls", "http://$AGG_0_HEAD_IP:6100"],
        ["--host", "0.0.0.0"],
        ["--port", "8000"],
        ["--prometheus-port", "29000"],
        ["--prometheus-host", "0.0.0.0"],
        ["--policy", "cache_aware"],
        ["--request-id-headers", "x-correlation-id"],
        ["--dp-aware"],
        ["--connect-timeout-secs", "900"],
        ["--request-timeout-secs", "14400"],
        ["--disable-health-check"],
        ["--disable-retries"],
    ]
    w = worker(blocks)
    assert ["--port", "6100"] in w["args"] and ["--enable-dp-attention"] in w["args"]
