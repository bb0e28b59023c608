"""Worker argv as srt-slurm builds it (issue 11 point 2), srt-slurm templates and cluster
values (point 3) and InferenceX-only settings by class (point 4): one fixture per rule."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from syncer.errors import SyncError
from syncer.inferencex.policy import load_policy
from syncer.inferencex.processes import render_raw
from syncer.inferencex.recipe import normalise

BASE: dict[str, Any] = {
    "schema": 2,
    "name": "w",
    "model": {"path": "hf:org/Model-Z"},
    "resources": {"gpu_type": "gb300", "gpus_per_node": 4},
    "frontend": {"type": "dynamo"},
    "engine": "sglang",
    "roles": {
        "prefill": {"nodes": 1, "workers": 1, "gpus": 4, "args": {"tp-size": 4}, "env": {}},
        "decode": {"nodes": 1, "workers": 1, "gpus": 4, "args": {"tp-size": 4}, "env": {}},
    },
}


def variant(role: str = "prefill", args: Any = None, env: Any = None, **top: Any) -> dict:
    v = copy.deepcopy(BASE)
    v["roles"][role]["args"].update(args or {})
    v["roles"][role]["env"].update(env or {})
    v.update(top)
    return v


def worker(blocks: list[dict[str, Any]], role: str) -> dict[str, Any]:
    return next(b for b in blocks if b["kind"] == "worker" and b["role"] == role)


def both(v: dict[str, Any], role: str = "prefill") -> tuple[dict, dict]:
    raw = render_raw(normalise(v))
    return worker(raw, role), worker(load_policy().to_cookbook(raw), role)


def flags(block: dict[str, Any]) -> list[str]:
    return [a[0] for a in block["args"]]


# --- point 2: injected flags, and the recipe's own copies ------------------------------------


def test_raw_passes_a_flag_twice_when_the_recipe_repeats_an_injected_one() -> None:
    raw, _ = both(
        variant(
            args={
                "host": "0.0.0.0",
                "disaggregation-mode": "prefill",
                "disaggregation-bootstrap-port": 9000,
            }
        )
    )
    for flag in ("--host", "--disaggregation-mode", "--disaggregation-bootstrap-port"):
        assert flags(raw).count(flag) == 2, flag
    # srt-slurm's copies come first, in its injection order, the recipe's in the sorted block
    assert raw["args"][2] == ["--host", "0.0.0.0"]
    assert ["--disaggregation-bootstrap-port", "7200"] in raw["args"]
    assert raw["args"][-1] == ["--tp-size", "4"]


def test_cookbook_shows_each_flag_once_with_the_recipe_value() -> None:
    _, shown = both(
        variant(
            args={
                "host": "0.0.0.0",
                "disaggregation-mode": "prefill",
                "disaggregation-bootstrap-port": 9000,
            }
        )
    )
    assert len(flags(shown)) == len(set(flags(shown)))
    assert ["--disaggregation-mode", "prefill"] in shown["args"]
    assert ["--host", "0.0.0.0"] in shown["args"]
    # a bootstrap port is placement whoever set it: srt-slurm's copy and the recipe's own
    # (which SGLang used: argparse keeps the last) become SGLang's default, once, as the
    # published v1.0.38-era cells show for a recipe that pins 31000
    assert ["--disaggregation-bootstrap-port", "8998"] in shown["args"]


def test_injected_only_flags_take_the_cookbook_values() -> None:
    _, shown = both(variant())
    assert ["--disaggregation-bootstrap-port", "8998"] in shown["args"]
    assert ["--port", "30000"] in shown["args"] and ["--host", "0.0.0.0"] in shown["args"]
    assert "--nccl-port" not in flags(shown) and "--dump-config-to" not in flags(shown)


def test_recipe_model_path_and_nccl_port_are_removed_not_repeated() -> None:
    raw, shown = both(variant(args={"model-path": "/model/", "nccl_port": 1}))
    assert flags(raw).count("--model-path") == 1 and flags(raw).count("--nccl-port") == 1
    assert ["--model-path", "org/Model-Z"] in shown["args"]


def test_recipe_enable_metrics_false_suppresses_the_auto_flag() -> None:
    v = variant(args={"enable-metrics": False}, frontend={"type": "sglang-router"})
    raw, _ = both(v)
    assert "--enable-metrics" not in flags(raw)


# --- point 3: srt-slurm templates and cluster values ------------------------------------------


def test_worker_env_templates_follow_srt_slurm_format_map() -> None:
    raw, shown = both(
        variant(
            env={
                "BIND_HOST": "{node}",  # the host name, expanded
                "BIND_IP": "{node_ip}",  # not a worker template: stays as written
                "BRACES": "{{x}}",
                "IDX": "{node_id}",
            }
        )
    )
    assert raw["env"]["BIND_HOST"] == "<node>" and raw["env"]["BIND_IP"] == "{node_ip}"
    assert raw["env"]["BRACES"] == "{x}" and raw["env"]["IDX"] == "$NODE_ID"
    assert shown["env"]["BIND_HOST"] == "$NODE_IP" and shown["env"]["BIND_IP"] == "$NODE_IP"


def test_recipe_wide_environment_is_templated_too() -> None:
    raw, _ = both(variant(environment={"ADDR": "{node}:1"}))
    assert raw["env"]["ADDR"] == "<node>:1"


def test_a_value_srt_slurm_templating_breaks_on_is_an_error() -> None:
    with pytest.raises(SyncError, match="BAD"):
        both(variant(env={"BAD": "{0"}))


def test_literal_rdma_device_lists_are_cluster_facts() -> None:
    _, shown = both(
        variant(env={"MOONCAKE_DEVICE": "mlx5_0,mlx5_1", "NCCL_IB_HCA": "mlx5_0:1,mlx5_3:1"})
    )
    assert shown["env"]["MOONCAKE_DEVICE"] == "$IB_DEVICES"
    assert shown["env"]["NCCL_IB_HCA"] == "$IB_DEVICES"
    _, keep = both(variant(env={"NOT_A_LIST": "mlx5_0 please"}))
    assert keep["env"]["NOT_A_LIST"] == "mlx5_0 please"


def test_service_templates_become_placeholders() -> None:
    v = variant()
    v["services"] = [
        {"name": "mooncake-master", "type": "mooncake-master"},
        {
            "name": "s",
            "type": "mooncake-store",
            "placement": {"node": "decode"},
            "args": ["--port", "9000", "--master", "{infra_ip}:{master_port}"],
            "env": {"HOST": "{node}", "IP": "{node_ip}", "JSON": '{"k": 1}'},
        },
    ]
    raw = render_raw(normalise(v))
    store = next(b for b in raw if b["kind"] == "mooncake-store")
    assert store["args"][1] == ["--master", "$INFRA_IP:8700"]
    assert store["env"]["HOST"] == "<node>" and store["env"]["IP"] == "$NODE_IP"
    assert store["env"]["JSON"] == '{"k": 1}'  # other braces are left alone
    shown = next(b for b in load_policy().to_cookbook(raw) if b["kind"] == "mooncake-store")
    assert shown["args"][1] == ["--master", "$MOONCAKE_MASTER_IP:8700"]
    assert shown["env"]["HOST"] == "$NODE_IP" and shown["env"]["IP"] == "$NODE_IP"


# --- point 4: InferenceX-only settings by class -------------------------------------------------

CLASSES = {
    "cache-report": ("flag", "--enable-cache-report", {"enable-cache-report": True}),
    "log-level": ("flag", "--log-level", {"log-level": "info"}),
    "decode-log-interval": ("flag", "--decode-log-interval", {"decode-log-interval": 10}),
    "workspace-chat-template": (
        "flag",
        "--chat-template",
        {"chat-template": "/infmax-workspace/benchmarks/single_node/chat_templates/x.jinja"},
    ),
    "sglang-log-env": ("env", "SGLANG_LOG_MS", {"SGLANG_LOG_MS": "1"}),
    "cache-dir": ("env", "SGLANG_DG_CACHE_DIR", {"SGLANG_DG_CACHE_DIR": "/configs/dg"}),
    "mooncake-client-metrics": (
        "env",
        "MC_STORE_CLIENT_METRIC_INTERVAL",
        {"MC_STORE_CLIENT_METRIC_INTERVAL": "5"},
    ),
}


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_inferencex_only_class_is_removed_with_its_reason(name: str) -> None:
    field, key, setting = CLASSES[name]
    v = variant(args=setting) if field == "flag" else variant(env=setting)
    raw, shown = both(v)
    present = key in (flags(raw) if field == "flag" else raw["env"])
    assert present, "the raw form shows what ran"
    assert key not in (flags(shown) if field == "flag" else shown["env"])
    value = next(iter(setting.values()))
    entry = load_policy().exclusion("worker", field, key, str(value))
    assert entry is not None and entry.name == name and entry.reason


def test_chat_template_outside_the_workspace_is_kept() -> None:
    _, shown = both(variant(args={"chat-template": "/models/t.jinja"}))
    assert ["--chat-template", "/models/t.jinja"] in shown["args"]


def test_workspace_chat_template_becomes_the_disclosure() -> None:
    raw = render_raw(normalise(variant(args={"chat-template": "/infmax-workspace/t.jinja"})))
    assert load_policy().disclosures(raw) == ["chat-template"]
    assert load_policy().disclosures(render_raw(normalise(variant()))) == []


def test_verify_report_names_the_value_conditioned_exclusion() -> None:
    from syncer.compare.diff import compare_blocks
    from syncer.compare.verify import policy_lookup

    template = "/infmax-workspace/benchmarks/single_node/chat_templates/x.jinja"
    raw = render_raw(normalise(variant(args={"chat-template": template})))
    comp = compare_blocks(
        raw, raw, left="recipe", right="log", exclusion=policy_lookup(load_policy())
    )
    entry = next(e for e in comp.entries if e.key == "--chat-template")
    assert entry.status == "excluded" and entry.exclusion is not None
    assert (
        entry.exclusion.name == "workspace-chat-template" and "workspace" in entry.exclusion.reason
    )


def test_a_flag_srt_slurm_does_not_inject_there_keeps_the_recipe_value() -> None:
    # srt-slurm adds the bootstrap port to prefill leaders only; a decode worker has one only
    # when the recipe sets it, and it is placement all the same (SGLang's default shown)
    _, shown = both(variant("decode", args={"disaggregation-bootstrap-port": 9100}), "decode")
    assert ["--disaggregation-bootstrap-port", "8998"] in shown["args"]
    _, bare = both(variant("decode"), "decode")
    assert "--disaggregation-bootstrap-port" not in flags(bare)
    # and dist-init flags only to multi-node workers
    _, single = both(variant(args={"dist-init-addr": "10.0.0.1:5000"}))
    assert ["--dist-init-addr", "10.0.0.1:5000"] in single["args"]
    v = variant()
    v["roles"]["prefill"].update(nodes=2, gpus=8)
    _, multi = both(v)
    assert ["--dist-init-addr", "$PREFILL_HEAD_IP:20000"] in multi["args"]
    assert ["--node-rank", "$NODE_RANK"] in multi["args"]
