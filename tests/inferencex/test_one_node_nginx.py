"""Issue 41: a one-node Dynamo job with several frontends wanted is published behind nginx.

srt-slurm runs such a job with one frontend on the head node on the public port and no nginx
(``len(nodes) == 1`` takes the single-frontend branch of ``_compute_frontend_topology``,
cli/mixins/frontend_stage.py lines 91-106 @v1.0.38, the same in every tag to v1.0.68), but the
published cells of two models show nginx and the frontend count of the multi-node rule
(``releases.published_frontend_layer``): GLM-5.2 B200 and H200 aggregated nginx and 2,
DeepSeek-V4 H200 aggregated nginx and 1, while the one-node cells whose recipes set
``enable_multiple_frontends: false`` (DeepSeek-V4 B200/B300, DeepSeek-V4.1 GB300) show one
frontend on 8000. A rule the cells imply (docs/srt-slurm-rules.md), held here on our own
fixture tree through ``sync render`` and on every one-node Dynamo cell of every model the
reference modules hold."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import forkserver
import pytest
from conftest import REFERENCE, TESTS

from syncer.cookbook.decode import load_decoder
from syncer.inferencex.releases import (
    FRONTEND_INTERNAL_PORT,
    FRONTEND_PUBLIC_PORT,
    published_frontend_layer,
)
from syncer.model import Selection

TREE = TESTS / "fixtures" / "one_node_nginx" / "inferencex"
KEY = "m8-fp8-h200-dynamo-sglang-agentic-agg"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*forkserver.command(), *args], capture_output=True, text=True, timeout=120
    )


def _layer(blocks: list[dict]) -> tuple[bool, int, int]:
    """(nginx shown, frontends, their port) of one deployment's Dynamo arm."""
    nginx = any(b["kind"] == "nginx" for b in blocks)
    (frontend,) = [b for b in blocks if b["kind"] == "dynamo-frontend"]
    port = next(int(a[1]) for a in frontend["args"] if a[0] == "--http-port")
    return nginx, frontend.get("count", 1), port


def _render(*extra: str) -> dict[int, tuple[bool, int, int]]:
    done = _cli("render", KEY, "--inferencex", str(TREE), "--format", "json", *extra)
    assert done.returncode == 0, done.stderr
    points = json.loads(done.stdout)["points"]
    return {p["concs"][0]: _layer(p["routers"]["dynamo"]) for p in points}


def test_sync_render_shows_a_one_node_dynamo_job_behind_nginx_when_several_are_wanted() -> None:
    assert _render() == {
        # the default ten wanted, etcd/NATS on the head: a frontend on the worker node and
        # one more (GLM-5.2 B200 and H200 aggregated: nginx and 2)
        1: (True, 2, FRONTEND_INTERNAL_PORT),
        # five wanted, etcd/NATS on a node of their own (DeepSeek-V4 H200 aggregated: 1)
        4: (True, 1, FRONTEND_INTERNAL_PORT),
        # one wanted (DeepSeek-V4 B200/B300 aggregated): what ran, no nginx
        8: (False, 1, FRONTEND_PUBLIC_PORT),
    }


def test_sync_render_raw_keeps_the_single_frontend_srt_slurm_ran() -> None:
    assert _render("--raw") == {c: (False, 1, FRONTEND_PUBLIC_PORT) for c in (1, 4, 8)}


def test_the_derived_sglang_arm_of_a_one_node_job_has_no_nginx() -> None:
    done = _cli("render", KEY, "--inferencex", str(TREE), "--format", "json")
    for point in json.loads(done.stdout)["points"]:
        kinds = [b["kind"] for b in point["routers"]["sglang"]]
        assert kinds == ["worker", "sglang-router"], kinds


# --- every one-node Dynamo cell the reference modules publish, every model ----------------------

# The GPUs of one node of each hardware the modules list (a cell counts whole nodes).
_NODE_GPUS = {"b200": 8, "b300": 8, "h100": 8, "h200": 8, "gb200": 4, "gb300": 4}

# The frontend settings of each published one-node Dynamo-submitted config, read from its recipe
# (SemiAnalysisAI/InferenceX, path, commit). The commits the cells name are pull-request heads
# the store does not hold (but 0f45d5f4); these are the stored versions of the same recipe
# files, whose settings the published blocks confirm. ``dedicated``: etcd/NATS on a node of
# their own (``infra.etcd_nats_dedicated_node``; a service placed on ``infra`` is the head).
_SETTINGS: dict[str, tuple[dict, bool, str]] = {
    "dsv4-fp4-b200-dynamo-sglang-agentic-agg": (
        {"type": "dynamo", "enable_multiple_frontends": False},
        False,
        "49196cff benchmarks/multi_node/srt-slurm-recipes/dsv4/sglang/b200-fp4/agentx/"
        "agg-b200-tp8-c1-mtp-hicache.yaml",
    ),
    "dsv4-fp4-b300-dynamo-sglang-agentic-agg": (
        {"type": "dynamo", "enable_multiple_frontends": False},
        False,
        "8b54a361 inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/dsv4/sglang/b300-fp4/"
        "agentx/agg-tp8-c1-mtp.yaml",
    ),
    "dsv4-fp8-h200-dynamo-sglang-agentic-agg": (
        {"type": "dynamo", "enable_multiple_frontends": True, "num_additional_frontends": 4},
        True,
        "184d0e15 benchmarks/multi_node/srt-slurm-recipes/sglang/deepseek-v4/agentic/"
        "agg-h200-tp8-mtp-kvoffload.yaml",
    ),
    "dsv41flash-fp4-gb300-dynamo-sglang-agentic-agg": (
        {"type": "dynamo", "enable_multiple_frontends": False},
        False,
        "0f45d5f4 inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/dsv41flash/sglang/"
        "gb300-fp4/agentx/agg-variants.yaml",
    ),
    "glm5.2-fp4-b200-dynamo-sglang-agentic-agg": (
        {"type": "dynamo"},
        False,
        "2f8a5a68 benchmarks/multi_node/srt-slurm-recipes/glm5.2/sglang/b200-fp4/agentx/"
        "agg-variants.yaml",
    ),
    "glm5.2-fp8-h200-dynamo-sglang-agentic-mtp-agg": (
        {"type": "dynamo", "enable_multiple_frontends": True},
        False,
        "09c97c4c benchmarks/multi_node/srt-slurm-recipes/glm5.2/sglang/h200-fp8/agentx/"
        "agg-h200-tp8-mtp-c2.yaml",
    ),
}
# One-node Dynamo cells whose frontend settings no stored recipe gives.
_NOT_PUBLIC = {
    # every stored version of agg-gb200-tp4-mtp.yaml (248c1fed to 2719ad8c) has an SGLang
    # frontend; the Dynamo recipe at the cell's cc865fb3 is not public
    "qwen3.5-fp4-gb200-dynamo-sglang-agentic-mtp": "the Dynamo recipe at cc865fb3 is not public",
}


def _one_node_dynamo_cells(reference: Path):
    for path in sorted((reference / "cookbook").glob("agentx*/*/*/*.jsx")):
        decoder = load_decoder(path)
        model = f"{path.parent.parent.name}/{path.parent.name}"
        for ci, cell in enumerate(decoder.data["cells"]):
            if cell["submitted"] == "dynamo" and cell["gpus"] == _NODE_GPUS[cell["hw"]]:
                yield model, path.stem, decoder, ci, cell


def test_every_published_one_node_dynamo_cell_of_every_model_follows_the_rule() -> None:
    if not (REFERENCE / "cookbook").is_dir():
        pytest.skip(f"reference cookbook modules absent at {REFERENCE}")
    checked: Counter[str] = Counter()
    for model, version, decoder, ci, cell in _one_node_dynamo_cells(REFERENCE):
        key = cell.get("configKey") or cell["id"].split("#")[0]
        if key in _NOT_PUBLIC:
            continue
        assert key in _SETTINGS, f"{model}@{version} {key}: no recipe settings recorded"
        frontend, dedicated, _ = _SETTINGS[key]
        layer = published_frontend_layer(frontend, 1, "2", dedicated_infra=dedicated)
        for pi in range(len(cell["points"])):
            shown = _layer(decoder.blocks_for(Selection(ci, pi, "dynamo", None)))
            assert shown == (layer.nginx, layer.count, layer.port), (model, version, key, pi)
        checked[model] += 1
    # the rule is held on more than one model's cells, both ways (behind nginx and not)
    assert {"zai-org/glm-5.2", "deepseek-ai/deepseek-v4"} <= set(checked), checked
