"""Issue 41: the published cells' rules that no one model's cells teach alone, held on our own
old-layout tree (tests/fixtures/published_eras: a Dynamo-submitted 1P2D key whose runner clones
srt-slurm v1.0.50, three points of one shape) through the real commands:

* the Dynamo frontends behind nginx: one per worker node, and one more unless etcd/NATS have a
  node of their own (GLM-5.2 GB200 and H200, Qwen3.5 GB300, DeepSeek-V4 H200 cells);
* the derived SGLang-router arm of a Dynamo-submitted cell: no ``--skip-tokenizer-init``;
* one cell per deployment shape even where the points' node counts differ (deepseek-v4_1
  @2b484a51: a "spread" 1P2D point of 12 GPUs beside 1P2D points of 8, one cell of 12);
* the block order of each generator version (nginx before or after the frontends, the
  frontends before or after the workers)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import forkserver
import pytest
from conftest import TESTS

from syncer.cookbook.jsmodule import load_module
from syncer.inferencex.cookbook_layout import layout_of, layout_order
from syncer.inferencex.releases import (
    FRONTEND_INTERNAL_PORT,
    frontend_topology,
    published_frontend_layer,
)

TREE = TESTS / "fixtures" / "published_eras" / "inferencex"
KEY = "m9-fp4-gb200-dynamo-sglang-agentic-disagg"
MODEL = "example-org/m9"
# the tree's sync.yaml, shared with tests/test_generator_layout.py
SYNC_YAML = (TREE.parent / "sync.yaml").read_text(encoding="utf-8")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The real command, as a user runs it (exit codes included)."""
    return subprocess.run(
        [*forkserver.command(), *args], capture_output=True, text=True, timeout=120
    )


def _rendered() -> dict:
    done = _cli("render", KEY, "--inferencex", str(TREE), "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _frontend_counts(blocks: list[dict]) -> tuple[bool, int]:
    nginx = any(b["kind"] == "nginx" for b in blocks)
    return nginx, sum(b.get("count", 1) for b in blocks if b["kind"] == "dynamo-frontend")


def _worker_flags(blocks: list[dict], role: str) -> list[str]:
    return [a[0] for b in blocks if b.get("role") == role for a in b["args"]]


# --- the frontend count behind nginx --------------------------------------------------------


@pytest.mark.parametrize(
    ("wanted", "nodes", "dedicated", "shown"),
    [
        # GLM-5.2 GB200 at InferenceX 5921b0f0/6130a8b5 (v1.0.50, etcd/NATS on the head, the
        # default ten wanted): 2 worker nodes show 3, 6 show 7, 8 show 9
        ({}, 2, False, 3),
        ({}, 6, False, 7),
        ({}, 8, False, 9),
        # GLM-5.2 H200 2P2D (etcd/NATS on a node of their own): 4 show 4
        ({}, 4, True, 4),
        # Qwen3.5 GB300 1P1D at eb1e4107 (v1.0.38, dedicated node, five wanted): 2 show 2
        ({"num_additional_frontends": 4}, 2, True, 2),
        # a recipe's own number still caps it
        ({"num_additional_frontends": 1}, 8, False, 2),
    ],
)
def test_the_published_frontends_are_one_per_worker_node_and_the_head_unless_dedicated(
    wanted: dict, nodes: int, dedicated: bool, shown: int
) -> None:
    frontend = {"type": "dynamo", "enable_multiple_frontends": True, **wanted}
    layer = published_frontend_layer(frontend, nodes, "1", dedicated_infra=dedicated)
    assert (layer.nginx, layer.count, layer.port, layer.on_head) == (
        True,
        shown,
        FRONTEND_INTERNAL_PORT,
        False,
    )
    # what srt-slurm ran is its own rule, the head never counted (frontend_stage.py @v1.0.50)
    ran = frontend_topology(frontend, nodes, "1")
    assert ran.count == min(frontend.get("num_additional_frontends", 9) + 1, nodes - 1)


def test_sync_render_shows_the_published_frontend_count_per_placement() -> None:
    points = _rendered()["points"]
    shown = {p["concs"][0]: _frontend_counts(p["routers"]["dynamo"]) for p in points}
    # spread over 3 worker nodes, etcd/NATS on the head: 4; on 2 nodes: 3; on 2 nodes with
    # etcd/NATS on a node of their own: 2
    assert shown == {16: (True, 4), 48: (True, 3), 64: (True, 2)}


def test_sync_render_raw_keeps_what_srt_slurm_ran() -> None:
    done = _cli("render", KEY, "--inferencex", str(TREE), "--format", "json", "--raw")
    assert done.returncode == 0, done.stderr
    points = json.loads(done.stdout)["points"]
    ran = {p["concs"][0]: _frontend_counts(p["routers"]["dynamo"]) for p in points}
    assert ran == {16: (True, 2), 48: (True, 1), 64: (True, 1)}


# --- the derived SGLang-router arm ------------------------------------------------------------


def test_the_derived_sglang_arm_drops_skip_tokenizer_init_the_dynamo_arm_keeps_it() -> None:
    for point in _rendered()["points"]:
        routers = point["routers"]
        assert "--skip-tokenizer-init" in _worker_flags(routers["dynamo"], "decode")
        assert "--skip-tokenizer-init" not in _worker_flags(routers["sglang"], "decode")
        # the other differences are the routers' own (Dynamo's request plane; the 2.x
        # srt-slurm the derived arm follows skips warm-up on direct P/D workers)
        dynamo, sglang = (set(_worker_flags(routers[r], "decode")) for r in ("dynamo", "sglang"))
        assert dynamo - sglang == {"--skip-tokenizer-init", "--request-plane"}
        assert sglang - dynamo == {"--skip-server-warmup"}


# --- one cell per deployment shape --------------------------------------------------------------


def test_generate_keeps_a_shapes_points_in_one_cell_whatever_their_node_counts(
    tmp_path: Path,
) -> None:
    config = tmp_path / "sync.yaml"
    config.write_text(SYNC_YAML)
    done = _cli(
        "generate", MODEL, "--config", str(config), "--inferencex", str(TREE),
        "--out", str(tmp_path / "snippets"), "--no-page",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    module = load_module(tmp_path / "snippets" / f"{MODEL}.jsx").value
    (cell,) = module["cells"]
    assert [p["concs"] for p in cell["points"]] == [[16], [48], [64]]
    # the cell shows its first point's GPUs: 3 nodes of 4
    assert cell["gpus"] == 12


# --- block order per generator version ---------------------------------------------------------


def _block(kind: str, role: str | None = None) -> dict:
    return {"kind": kind, "cmd": kind, **({"role": role} if role else {})}


_SHAPES = [
    _block("worker", "prefill"),
    _block("dynamo-frontend"),
    _block("mooncake-master"),
    _block("etcd"),
    _block("nginx"),
    _block("worker", "decode"),
    _block("nats"),
]


@pytest.mark.parametrize(
    ("layout", "order"),
    [
        # 4661ab2b, 652614ed, 2b484a51
        ("newest", "etcd nats nginx dynamo-frontend mooncake-master worker worker"),
        # 37da6c0b: the frontends before their nginx
        ("frontend-before-nginx", "etcd nats dynamo-frontend nginx mooncake-master worker worker"),
        # c4b47c36: nginx and the frontends after the workers
        ("frontend-last", "etcd nats mooncake-master worker worker nginx dynamo-frontend"),
    ],
)
def test_each_generator_versions_block_order_is_reproduced_and_recognised(
    layout: str, order: str
) -> None:
    laid = layout_order(_SHAPES, layout)
    assert " ".join(b["kind"] for b in laid) == order
    assert [b.get("role") for b in laid if b["kind"] == "worker"] == ["prefill", "decode"]
    # a module's layout is read back from its blocks; a router-only deployment tells nothing
    routed = [_block("worker", "agg"), _block("sglang-router")]
    assert layout_of([routed, laid]) == layout
    assert layout_of([routed]) is None
    assert layout_order(routed, layout) == layout_order(routed)
