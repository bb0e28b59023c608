"""srt-slurm services (etcd, NATS, Mooncake master and stores): one hand check per rule, on
our own fixtures shaped like the InferenceX recipes that declare them."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from syncer.errors import SyncError
from syncer.inferencex.policy import load_policy
from syncer.inferencex.processes import render_raw
from syncer.inferencex.recipe import normalise
from syncer.model import Selection

STORE_ENV = {
    "MOONCAKE_PROTOCOL": "rdma",
    "MOONCAKE_DEVICE": "mlx5_0,mlx5_1,mlx5_2,mlx5_3",
    "MOONCAKE_GLOBAL_SEGMENT_SIZE": "96gb",
    "MC_STORE_CLIENT_METRIC_INTERVAL": "5",
    "MC_TCP_BIND_ADDRESS": "{node_ip}",
}


def store(i: int) -> dict[str, Any]:
    return {
        "name": f"store-decode-{i}",
        "type": "mooncake-store",
        "placement": {"node": "decode"},
        "args": ["--port", str(9100 + i)],
        "env": dict(STORE_ENV),
        "preamble": "ulimit -n 65536\nulimit -l unlimited\n",
        "readiness": {"port": 9100 + i, "timeout_seconds": 300},
    }


# A Dynamo P/D recipe: dedicated etcd/NATS with a payload limit, a master with one extra
# flag repeating a default, and three stores on a decode worker that spans two nodes.
BASE: dict[str, Any] = {
    "schema": 2,
    "name": "svc",
    "model": {"path": "hf:org/Model-Y"},
    "resources": {"gpu_type": "gb300", "gpus_per_node": 4},
    "frontend": {"type": "dynamo"},
    "engine": "sglang",
    "services": [
        {"name": "etcd", "type": "etcd", "placement": {"node": "dedicated"}},
        {
            "name": "nats",
            "type": "nats",
            "placement": {"node": "dedicated"},
            "options": {"max_payload_mb": 16},
        },
        {
            "name": "mooncake-master",
            "type": "mooncake-master",
            "args": ["--eviction_high_watermark_ratio=0.85"],
        },
        store(0),
        store(1),
        store(2),
    ],
    "roles": {
        "prefill": {"nodes": 1, "workers": 1, "gpus": 4, "args": {"tp-size": 4}},
        "decode": {"nodes": 2, "workers": 1, "gpus": 8, "args": {"tp-size": 8}},
    },
}


def variant(**top: Any) -> dict[str, Any]:
    out = copy.deepcopy(BASE)
    out.update(copy.deepcopy(top))
    return out


def raw(v: dict[str, Any], **kw: Any) -> list[dict[str, Any]]:
    return render_raw(normalise(v), **kw)


def kinds(blocks: list[dict[str, Any]]) -> list[str]:
    return [b["kind"] for b in blocks]


def of(blocks: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [b for b in blocks if b["kind"] == kind]


def test_declared_services_each_become_processes_in_declaration_order() -> None:
    blocks = raw(variant())
    assert kinds(blocks)[:6] == ["etcd", "nats"] + ["mooncake-master"] + ["mooncake-store"] * 3
    assert [b["service"] for b in of(blocks, "mooncake-store")] == [
        "store-decode-0",
        "store-decode-1",
        "store-decode-2",
    ]


def test_nats_payload_limit_runs_from_a_config_file() -> None:
    nats = of(raw(variant()), "nats")[0]
    assert nats["cmd"] == "/configs/nats-server" and nats["args"] == [["-c", "/tmp/nats.conf"]]
    assert nats["preamble"][0] == "rm -rf /tmp/nats && mkdir -p /tmp/nats"
    policy = load_policy()
    files = policy.files(raw(variant()))
    content = 'max_payload: 16777216\njetstream { store_dir: "/tmp/nats" }\n'
    assert files == {
        "nats.conf#" + hashlib.sha256(content.encode()).hexdigest()[:8]: {
            "name": "nats.conf",
            "content": content,
        }
    }
    shown = of(policy.to_cookbook(raw(variant())), "nats")[0]
    assert shown == {
        "kind": "nats",
        "count_nodes": 1,
        "cmd": "nats-server -c nats.conf",
        "env": {},
        "args": [],
    }


def test_published_nats_file_ids() -> None:
    # the ids published modules use for srt-slurm's generated config (8, 32 and 64 MiB)
    policy = load_policy()
    for mb, fid in ((8, "48a4de48"), (32, "13771a85"), (64, "7d9e9ee1")):
        v = variant()
        v["services"][1]["options"] = {"max_payload_mb": mb}
        assert list(policy.files(raw(v))) == [f"nats.conf#{fid}"]


def test_nats_without_payload_limit_keeps_jetstream_flags() -> None:
    v = variant()
    del v["services"][1]["options"]
    nats = of(raw(v), "nats")[0]
    assert nats["args"] == [["-js"], ["-sd", "/tmp/nats"]]
    assert load_policy().files(raw(v)) == {}
    assert (
        of(load_policy().to_cookbook(raw(v)), "nats")[0]["cmd"] == "nats-server -js -sd /tmp/nats"
    )


def test_master_runs_srt_slurm_defaults_then_the_recipe_args() -> None:
    master = of(raw(variant()), "mooncake-master")[0]
    assert master["cmd"] == "mooncake_master"
    assert [a[0] for a in master["args"]] == [
        "--port=8700",
        "--enable_http_metadata_server=true",
        "--http_metadata_server_port=8701",
        "--eviction_high_watermark_ratio=0.9",
        "--default_kv_lease_ttl=10000",
        "--rpc_thread_num=16",
        "--enable_metric_reporting=true",
        "--metrics_port=8702",
        "--eviction_high_watermark_ratio=0.85",  # appended verbatim: the flag runs twice
    ]
    assert master["env"] == {
        "ETCD_ENDPOINTS": "http://$INFRA_IP:2379",
        "NATS_SERVER": "nats://$INFRA_IP:4222",
    }


def test_master_cookbook_form_each_flag_once_last_value_metrics_dropped() -> None:
    master = of(load_policy().to_cookbook(raw(variant())), "mooncake-master")[0]
    assert master == {
        "kind": "mooncake-master",
        "count_nodes": 1,
        "ports": ["8700"],
        "cmd": "mooncake_master",
        "env": {"ETCD_ENDPOINTS": "http://$ETCD_IP:2379", "NATS_SERVER": "nats://$NATS_IP:4222"},
        "args": [
            ["--port", "8700"],
            ["--enable_http_metadata_server", "true"],
            ["--http_metadata_server_port", "8701"],
            ["--default_kv_lease_ttl", "10000"],
            ["--rpc_thread_num", "16"],
            ["--eviction_high_watermark_ratio", "0.85"],
        ],
    }


def test_store_instances_env_layers_and_templates() -> None:
    stores = of(raw(variant()), "mooncake-store")
    first = stores[0]
    assert first["count_nodes"] == 2  # one per decode node: 1 worker x 2 nodes
    assert first["ports"] == ["9100"]
    assert first["preamble"] == ["ulimit -n 65536", "ulimit -l unlimited"]
    assert first["cmd"] == "python -m mooncake.mooncake_store_service"
    assert first["args"] == [["--port", "9100"]]
    assert first["env"] == {
        "ETCD_ENDPOINTS": "http://$INFRA_IP:2379",
        "MC_STORE_CLIENT_METRIC_INTERVAL": "5",
        "MC_TCP_BIND_ADDRESS": "$NODE_IP",  # {node_ip} is a service template
        "MOONCAKE_DEVICE": "mlx5_0,mlx5_1,mlx5_2,mlx5_3",
        "MOONCAKE_GLOBAL_SEGMENT_SIZE": "96gb",
        "MOONCAKE_LOCAL_HOSTNAME": "$NODE_IP",
        "MOONCAKE_MASTER": "$INFRA_IP:8700",
        "MOONCAKE_PROTOCOL": "rdma",
        "MOONCAKE_TE_META_DATA_SERVER": "http://$INFRA_IP:8701/metadata",
        "NATS_SERVER": "nats://$INFRA_IP:4222",
    }


def test_store_forced_env_wins_over_the_recipe() -> None:
    v = variant()
    v["services"][3]["env"]["MOONCAKE_MASTER"] = "elsewhere:1"
    v["services"][3]["env"]["MOONCAKE_LOCAL_HOSTNAME"] = "pinned"
    env = of(raw(v), "mooncake-store")[0]["env"]
    assert env["MOONCAKE_MASTER"] == "$INFRA_IP:8700" and env["MOONCAKE_LOCAL_HOSTNAME"] == "pinned"


def test_stores_differing_only_in_port_are_one_cookbook_block() -> None:
    stores = of(load_policy().to_cookbook(raw(variant())), "mooncake-store")
    assert stores == [
        {
            "kind": "mooncake-store",
            "count_nodes": 2,
            "ports": ["9100", "9101", "9102"],
            "preamble": ["ulimit -n 65536", "ulimit -l unlimited"],
            "cmd": "python -m mooncake.mooncake_store_service",
            "env": {
                "ETCD_ENDPOINTS": "http://$ETCD_IP:2379",
                "MC_TCP_BIND_ADDRESS": "$NODE_IP",
                "MOONCAKE_DEVICE": "$IB_DEVICES",
                "MOONCAKE_GLOBAL_SEGMENT_SIZE": "96gb",
                "MOONCAKE_LOCAL_HOSTNAME": "$NODE_IP",
                "MOONCAKE_MASTER": "$MOONCAKE_MASTER_IP:8700",
                "MOONCAKE_PROTOCOL": "rdma",
                "MOONCAKE_TE_META_DATA_SERVER": "http://$MOONCAKE_MASTER_IP:8701/metadata",
                "NATS_SERVER": "nats://$NATS_IP:4222",
            },
            "args": [["--port", "9100"]],
        }
    ]


def test_stores_that_differ_otherwise_stay_separate() -> None:
    v = variant()
    v["services"][4]["env"]["MOONCAKE_GLOBAL_SEGMENT_SIZE"] = "48gb"
    stores = of(load_policy().to_cookbook(raw(v)), "mooncake-store")
    assert [s["ports"] for s in stores] == [["9100", "9102"], ["9101"]]


def test_cookbook_order_and_workers_get_mooncake_env() -> None:
    shown = load_policy().to_cookbook(raw(variant()))
    assert kinds(shown) == [
        "etcd",
        "nats",
        "nginx",  # three worker nodes and multiple frontends on by default
        "dynamo-frontend",
        "mooncake-master",
        "mooncake-store",
        "worker",
        "worker",
    ]
    for w in of(shown, "worker"):
        assert w["env"]["MOONCAKE_MASTER"] == "$MOONCAKE_MASTER_IP:8700"
        assert w["env"]["MOONCAKE_LOCAL_HOSTNAME"] == "$NODE_IP"


def test_sglang_router_master_keeps_srt_slurm_env_raw_but_none_in_cookbook() -> None:
    v = variant(frontend={"type": "sglang-router"})
    v["services"] = [s for s in v["services"] if s["type"] not in ("etcd", "nats")]
    blocks = raw(v)
    assert "etcd" not in kinds(blocks) and "nats" not in kinds(blocks)
    master = of(blocks, "mooncake-master")[0]
    # srt-slurm sets the discovery address whatever the frontend; NATS only when it runs
    assert master["env"] == {"ETCD_ENDPOINTS": "http://$INFRA_IP:2379"}
    shown = load_policy().to_cookbook(blocks)
    assert of(shown, "mooncake-master")[0]["env"] == {}
    assert "ETCD_ENDPOINTS" not in of(shown, "mooncake-store")[0]["env"]


# --- implicit services ----------------------------------------------------------------


def plain(frontend: dict[str, Any], **top: Any) -> dict[str, Any]:
    v = variant(frontend=frontend)
    del v["services"]
    v.update(copy.deepcopy(top))
    return v


def test_dynamo_implies_etcd_and_nats_only_when_something_uses_it() -> None:
    assert kinds(raw(plain({"type": "dynamo"})))[:2] == ["etcd", "worker"]
    with_plane = raw(plain({"type": "dynamo"}, dynamo={"request_plane": "nats"}))
    assert kinds(with_plane)[:2] == ["etcd", "nats"]
    assert "NATS_SERVER" in of(with_plane, "worker")[0]["env"]
    assert "NATS_SERVER" not in of(raw(plain({"type": "dynamo"})), "worker")[0]["env"]


def test_direct_frontends_imply_no_services() -> None:
    assert "etcd" not in kinds(raw(plain({"type": "sglang-router"})))


def test_schema1_infra_settings_mean_the_same_things() -> None:
    v = plain(
        {"type": "dynamo"}, infra={"etcd_nats_dedicated_node": True, "nats_max_payload_mb": 16}
    )
    blocks = raw(v)
    assert kinds(blocks)[:2] == ["etcd", "nats"]
    assert of(blocks, "nats")[0]["args"] == [["-c", "/tmp/nats.conf"]]
    assert list(load_policy().files(blocks)) == list(load_policy().files(raw(variant())))


def test_schema1_mooncake_kv_store_implies_the_master_with_its_extra_args() -> None:
    v = plain({"type": "sglang-router"})
    v["backend"] = {
        "mooncake_kv_store": {"master_extra_args": ["--eviction_high_watermark_ratio=0.8"]}
    }
    v["schema"] = 1
    v["backend"]["type"] = "sglang"
    v["backend"]["sglang_config"] = {"prefill": {"tp-size": 4}, "decode": {"tp-size": 8}}
    del v["roles"], v["engine"]
    v["resources"].update(prefill_nodes=1, prefill_workers=1, decode_nodes=2, decode_workers=1)
    master = of(raw(v), "mooncake-master")[0]
    assert master["args"][-1] == ["--eviction_high_watermark_ratio=0.8"]


def test_srt_slurm_1x_always_runs_etcd_and_nats() -> None:
    v = plain({"type": "sglang"}, schema=1)
    v["backend"] = {"type": "sglang", "sglang_config": {"aggregated": {"tp-size": 4}}}
    del v["roles"], v["engine"]
    v["resources"].update(agg_nodes=1, agg_workers=1)
    assert kinds(raw(v, version="1"))[:2] == ["etcd", "nats"]


def test_declared_entry_replaces_or_disables_the_implied_one() -> None:
    v = plain({"type": "dynamo"}, services=[{"name": "etcd", "type": "etcd", "enabled": False}])
    assert "etcd" not in kinds(raw(v))
    v = plain(
        {"type": "dynamo"},
        services=[{"name": "etcd", "type": "etcd", "args": ["--auto-compaction-retention", "1"]}],
    )
    etcd = of(raw(v), "etcd")
    assert len(etcd) == 1 and etcd[0]["args"][-1] == ["--auto-compaction-retention", "1"]


def test_external_and_blockless_services_launch_no_block() -> None:
    v = plain(
        {"type": "dynamo"},
        services=[
            {"name": "etcd", "type": "etcd", "external": {"endpoint": "http://10.0.0.5:2379"}},
            {"name": "gpu-metrics", "type": "dcgm-exporter"},
        ],
    )
    assert kinds(raw(v))[0] == "worker"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"name": "s", "type": "mooncake-store"}, "needs a mooncake-master"),
        ({"name": "x", "type": "redis"}, 'unknown service type "redis"'),
        ({"name": "m", "type": "mooncake-master", "args": ["--port", 8800]}, "non-empty string"),
        ({"name": "m", "type": "mooncake-master", "placement": {"node": "moon"}}, "placement.node"),
    ],
)
def test_bad_service_entries_are_refused(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(SyncError, match=message):
        raw(plain({"type": "dynamo"}, services=[entry]))


def test_raw_blocks_are_json_and_input_is_not_mutated() -> None:
    blocks = raw(variant())
    before = json.dumps(blocks, sort_keys=True)
    load_policy().to_cookbook(blocks)
    assert json.dumps(blocks, sort_keys=True) == before


# --- end to end: the module ships the NATS config and the disclosure ----------------------


def test_generated_module_ships_nats_conf_and_chat_template_disclosure(tmp_path) -> None:
    import shutil

    from syncer.cookbook.decode import Decoder
    from syncer.encoder.encode import encode_module
    from syncer.syncconfig import load_sync_config
    from syncer.usecases.generate import build_module_spec

    root = ROOT
    infx = tmp_path / "inferencex"
    shutil.copytree(root / "examples" / "inferencex", infx)
    recipe = next(infx.rglob("disagg-variants.yaml"))
    text = recipe.read_text()
    text = text.replace(
        "    - name: nats\n      type: nats\n      placement:\n        node: infra\n",
        "    - name: nats\n      type: nats\n      placement:\n        node: infra\n"
        "      options:\n        max_payload_mb: 32\n",
    )
    text = text.replace(
        "      args: &worker_args\n",
        "      args: &worker_args\n        chat-template: /infmax-workspace/benchmarks/t.jinja\n",
        1,
    )
    assert "max_payload_mb" in text and "chat-template" in text
    recipe.write_text(text)
    config = load_sync_config(root / "sync.yaml")
    spec = build_module_spec(
        config.model("deepseek-ai/deepseek-v4_1"),
        config=config,
        inferencex=infx,
        today="2026-12-01",
    ).spec
    assert spec.files == {
        "nats.conf#13771a85": {
            "name": "nats.conf",
            "content": 'max_payload: 33554432\njetstream { store_dir: "/tmp/nats" }\n',
        }
    }
    cell = next(c for c in spec.cells if c.config_key.endswith("-disagg"))
    assert cell.routers["dynamo"].files == ["nats.conf#13771a85"]
    assert cell.routers["sglang"].files == []
    assert "chat-template" in cell.meta["disclosures"]
    value, _, _ = encode_module(spec, path="nats")  # decoded back and compared before use
    ci = next(i for i, c in enumerate(value["cells"]) if c["id"] == cell.id)
    assert Decoder(value).router_files(ci, "dynamo") == {
        "nats.conf#13771a85": 'max_payload: 33554432\njetstream { store_dir: "/tmp/nats" }\n'
    }


# --- real recipes (skipped when ../shared/reference is absent) --------------------------

SNAPSHOT = "inferencex-snapshots/843c6254/benchmarks/multi_node/srt-slurm-recipes"


@pytest.mark.parametrize(
    ("recipe", "conf"),
    [
        # schema 1, Dynamo, infra: dedicated node + 32 MiB NATS payload
        ("sglang/deepseek-v4/agentic/agg-gb300-tp4-mtp-kvoffload.yaml", "nats.conf#13771a85"),
        # schema 1, Dynamo P/D with nginx, 64 MiB payload, infra on the head node
        (
            "sglang/glm5.2/gb200-fp4/agentic/disagg-gb200-1p4d-dep8-tp4-c48-mtp.yaml",
            "nats.conf#7d9e9ee1",
        ),
    ],
)
def test_snapshot_recipe_infra_becomes_services(recipe: str, conf: str, reference: Path) -> None:
    from syncer.inferencex import yamlsafe
    from syncer.inferencex.recipe_bundles import expand_variants

    path = reference / SNAPSHOT / recipe
    if not path.exists():
        pytest.skip(f"{path} not available")
    [(name, v)] = expand_variants(yamlsafe.load(path), None, path=str(path)).items()
    v = dict(v, model={"path": "hf:org/M"})
    blocks = render_raw(normalise(v, path=str(path), selector=name))
    policy = load_policy()
    assert list(policy.files(blocks)) == [conf]
    shown = policy.to_cookbook(blocks)
    assert kinds(shown)[:2] == ["etcd", "nats"]
    assert of(shown, "nats")[0]["cmd"] == "nats-server -c nats.conf"
    for block in shown:
        names = [a[0] for a in block["args"] if a[0] not in ("--prefill", "--decode")]
        assert len(names) == len(set(names)), block["kind"]
        text = json.dumps(block)
        for leftover in ("{node", "<node>", "$INFRA_IP", "mlx5_", "SGLANG_LOG_", "_CACHE_DIR"):
            assert leftover not in text, (block["kind"], leftover)
        for arg in block["args"]:
            assert arg[0] not in ("--enable-cache-report", "--log-level", "--decode-log-interval")


def test_rendered_services_agree_with_their_logged_argv() -> None:
    """The raw form is what srt-slurm logs: master `=` tokens, store args, real addresses."""
    from conftest import parse_sweep_text

    from syncer.compare.diff import compare_blocks
    from syncer.runs.launch import build_launch

    prefix = "2026-10-12 09:00:00 [INFO] Starting service "
    master = (
        "mooncake_master --port=8700 --enable_http_metadata_server=true "
        "--http_metadata_server_port=8701 --eviction_high_watermark_ratio=0.9 "
        "--default_kv_lease_ttl=10000 --rpc_thread_num=16 --enable_metric_reporting=true "
        "--metrics_port=8702 --eviction_high_watermark_ratio=0.85"
    )
    lines = [
        f"{prefix}etcd (etcd) on n01: /configs/etcd --data-dir /tmp/etcd --listen-client-urls "
        "http://0.0.0.0:2379 --advertise-client-urls http://10.1.0.1:2379",
        f"{prefix}nats (nats) on n01: /configs/nats-server -c /tmp/nats.conf",
        f"{prefix}mooncake-master (mooncake-master) on n01: {master}",
    ]
    for i in range(3):
        for node in ("n03", "n04"):
            lines.append(
                f"{prefix}store-decode-{i} (mooncake-store) on {node}: "
                f"python -m mooncake.mooncake_store_service --port {9100 + i}"
            )
    launch = build_launch(parse_sweep_text("\n".join(lines) + "\n"))
    assert [b["count_nodes"] for b in launch.blocks] == [1, 1, 1, 2, 2, 2]
    rendered = [b for b in raw(variant()) if b["kind"] != "worker" and "service" in b]
    comp = compare_blocks(
        rendered, launch.blocks, left="recipe", right="log", placement=True, right_logged=True
    )
    assert comp.agrees, [e for e in comp.entries if e.status not in ("match", "not-logged")]
    # and a master flag the log does not carry is found
    launch.blocks[2]["args"] = launch.blocks[2]["args"][:-1]
    comp = compare_blocks(
        rendered, launch.blocks, left="recipe", right="log", placement=True, right_logged=True
    )
    assert not comp.agrees


def test_derived_router_has_kv_events_off_even_when_the_recipe_passes_the_flag() -> None:
    from syncer.inferencex.render import derived_variant

    v = variant()
    v["roles"]["prefill"]["args"]["kv-events-config"] = '{"publisher":"zmq"}'
    v["roles"]["decode"]["kv_events"] = True
    submitted = render_raw(normalise(v))
    assert any("--kv-events-config" in [a[0] for a in b["args"]] for b in of(submitted, "worker"))
    derived = render_raw(normalise(derived_variant(v, "sglang")))
    for w in of(derived, "worker"):
        assert "--kv-events-config" not in [a[0] for a in w["args"]]
    # the Mooncake services stay; their discovery env goes with the Dynamo control plane
    shown = load_policy().to_cookbook(derived)
    assert kinds(shown)[:2] == ["mooncake-master", "mooncake-store"]
    assert of(shown, "mooncake-master")[0]["env"] == {}


def test_a_bad_service_entry_names_the_recipe_file_and_point(tmp_path: Path) -> None:
    import shutil

    from syncer.inferencex.render import render_config

    root = ROOT
    infx = tmp_path / "inferencex"
    shutil.copytree(root / "examples" / "inferencex", infx)
    recipe = next(infx.rglob("disagg-variants.yaml"))
    text = recipe.read_text().replace(
        "    - name: nats\n      type: nats\n",
        "    - name: store\n      type: mooncake-store\n      args: [--port, 8800]\n"
        "    - name: nats\n      type: nats\n",
    )
    recipe.write_text(text)
    with pytest.raises(SyncError) as err:
        render_config(infx, "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg")
    assert err.value.path == str(recipe)
    assert "point 0" in err.value.message and "non-empty string, got 8800" in err.value.message


def test_payload_knob_implies_nats_for_the_derived_dynamo_router_as_published(
    reference: Path,
) -> None:
    """srt-slurm 2.x implies NATS for a Dynamo frontend when a payload limit is set: the
    SGLang-router qwen3.5 GB300 recipe (schema 1, infra.nats_max_payload_mb 8) runs no NATS,
    its derived Dynamo router runs etcd + NATS from nats.conf, as qwen3.5.jsx @652614ed shows."""
    from syncer.cookbook.decode import load_decoder
    from syncer.inferencex import yamlsafe
    from syncer.inferencex.recipe_bundles import expand_variants
    from syncer.inferencex.render import derived_variant

    recipe = (
        reference
        / SNAPSHOT
        / "sglang/qwen3.5/gb300-fp4/agentic/agg-gb300-tp2-c1-mtp-hicache-jid2530006.yaml"
    )
    module = reference / "cookbook/agentx/Qwen/qwen3.5/652614ed.jsx"
    if not recipe.exists() or not module.exists():
        pytest.skip("reference files not available")
    [(name, v)] = expand_variants(yamlsafe.load(recipe), None, path=str(recipe)).items()
    v = dict(v, model={"path": "hf:nvidia/Qwen3.5-397B-A17B-NVFP4"})
    submitted = render_raw(normalise(v, path=str(recipe), selector=name))
    assert "nats" not in kinds(submitted) and "etcd" not in kinds(submitted)
    derived = render_raw(normalise(derived_variant(v, "dynamo"), path=str(recipe)))
    decoder = load_decoder(str(module))
    ci = next(
        i
        for i, c in enumerate(decoder.cells)
        if c["configKey"] == "qwen3.5-fp4-gb300-dynamo-sglang-agentic-agg"
    )
    published = [b["kind"] for b in decoder.blocks_for(Selection(ci, 0, "dynamo"))]
    assert kinds(load_policy().to_cookbook(derived)) == published
    assert list(load_policy().files(derived)) == list(decoder.router_files(ci, "dynamo"))
