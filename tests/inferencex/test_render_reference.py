"""Real InferenceX files of the newest layout (../shared/reference/inferencex), assembled into a
checkout in a temp dir (copied, never into the project; a checkout linking out is refused):
every point maps to the variant its override name says, and every key renders."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from syncer.inferencex.render import render_config

E2E = "inferencex-e2e"
# reference copies are named `<repo path with / as __>/<commit>.yaml`
SOURCES = [
    "inferencex-e2e__configs__nvidia-master.yaml/a6ab0ecb",
    "inferencex-e2e__configs__srt-recipes__agentic-single.yaml/10f15877",
    "inferencex-e2e__benchmarks__single_node__srt-slurm-recipes__dsv4__sglang__b300-fp4-mtp__agentic.yaml"
    "/19c96be5",
    "inferencex-e2e__benchmarks__single_node__srt-slurm-recipes__dsv41flash__sglang__gb300-fp4-mtp__agentic.yaml"
    "/25bc5c2d",
    "inferencex-e2e__benchmarks__multi_node__srt-slurm-recipes__dsv41flash__sglang__gb300-fp4__agentx__"
    "disagg-variants.yaml/a6ab0ecb",
    "inferencex-e2e__benchmarks__multi_node__srt-slurm-recipes__dsv41flash__sglang__gb300-fp4__agentx__"
    "agg-variants.yaml/fc191354",
]
GOLDEN_AL = (
    "golden_al_distribution__dsv41flash_dspark.yaml/ff664264",
    f"{E2E}/infx/golden_al_distribution",
)


@pytest.fixture
def checkout(reference: Path, tmp_path: Path) -> Path:
    links = [(src, src.split("/")[0].replace("__", "/")) for src in SOURCES]
    links.append((GOLDEN_AL[0], f"{GOLDEN_AL[1]}/dsv41flash_dspark.yaml"))
    for source, dest in links:
        target = tmp_path / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(reference / "inferencex" / f"{source}.yaml", target)
    return tmp_path


def test_single_node_points_find_their_variant_by_the_predicate(checkout: Path) -> None:
    rc = render_config(checkout, "dsv41flash-fp4-gb300-sglang-agentic-dspark")
    assert len(rc.points) == 16
    for p in rc.points:
        # the predicate never looks at names; the convention must agree with it
        tp = int(re.search(r"TP(\d)", p.label).group(1))
        assert p.override == f"override_tp{tp}_c{p.concs[0]}"
        assert p.golden_al == "3.51" and p.image.startswith(
            "lmsysorg/sglang:dev-cu13-nightly-0924@"
        )
    labels = {p.override: p.label for p in rc.points}
    assert labels["override_tp4_c1"] == "Agg TP4" and labels["override_tp4_c4"] == "Agg TP4·EP4"


def test_dep8_router_arm_and_null_deleted_runner(checkout: Path) -> None:
    rc = render_config(checkout, "dsv4-fp4-b300-sglang-agentic-hicache-mtp")
    dep = [p for p in rc.points if p.label == "Agg DEP8"]
    assert dep and all(p.kv == "hicache" for p in dep)
    worker, router = dep[0].cookbook["sglang"]
    flags = [a[0] for a in worker["args"]]
    assert "--moe-runner-backend" not in flags and "--enable-dp-attention" in flags
    assert router["kind"] == "sglang-router" and ["--dp-aware"] in router["args"]
    assert router["args"][-1] == ["--worker-urls", "http://127.0.0.1:30000"]
    tp8 = next(p for p in rc.points if p.label == "Agg TP8")
    assert [b["kind"] for b in tp8.cookbook["sglang"]] == ["worker"]


@pytest.mark.parametrize(
    "key",
    [
        "dsv41flash-fp4-gb300-dynamo-sglang-agentic-agg",
        "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg",
    ],
)
def test_fragment_era_multinode_keys_render(checkout: Path, key: str) -> None:
    rc = render_config(checkout, key)
    for p in rc.points:
        assert p.submitted == "dynamo" and list(p.cookbook) == ["dynamo", "sglang"]
        assert p.cookbook["dynamo"][0]["kind"] == "etcd"
        worker = next(b for b in p.raw["dynamo"] if b["kind"] == "worker")
        assert ["--model-path", "deepseek-ai/DeepSeek-V4.1-Flash"] in worker[
            "args"
        ]  # bound from the master
