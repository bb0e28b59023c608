"""The bundled example rendered end to end (golden files), point -> variant matching and the
`sync render` CLI."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import forkserver
import pytest
from conftest import match_golden

from syncer.errors import SyncError
from syncer.inferencex.render import render_config

DSPARK = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
DISAGG = "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"


def _summary(key: str) -> dict[str, Any]:
    rc = render_config(None, key)
    return {
        "config": key,
        "srt_slurm": rc.srt_version,
        "points": [
            {
                "index": p.index,
                "item": p.item,
                "override": p.override,
                "variant": p.variant,
                "concs": p.concs,
                "label": p.label,
                "gpus": p.gpus,
                "image": p.image,
                "recipe": p.recipe,
                "submitted": p.submitted,
                "kv": p.kv,
                "golden_al": p.golden_al,
                "detail": p.detail,
                "install": p.install,
                "routers": list(p.cookbook),
                "raw": p.raw,
                "cookbook": p.cookbook,
            }
            for p in rc.points
        ],
    }


@pytest.mark.parametrize("key", [DSPARK, DISAGG])
def test_example_matches_golden(golden: Path, key: str) -> None:
    path = golden / "render" / f"{key}.json"
    match_golden(path, json.dumps(_summary(key), indent=1, ensure_ascii=False) + "\n")


def test_dspark_points_follow_the_seed_shape() -> None:
    rc = render_config(None, DSPARK)
    assert [(p.label, p.concs) for p in rc.points] == [
        ("Agg TP4", [1]),
        ("Agg TP4", [4]),
        ("Agg TP4", [16]),
        ("Agg TP2·EP2", [16]),
        ("Agg TP2·EP2", [32]),
        ("Agg DEP2", [64]),
        ("Agg DEP2", [128]),
    ]
    dep2 = rc.points[5]
    assert [b["kind"] for b in dep2.cookbook["sglang"]] == ["worker", "sglang-router"]
    assert list(dep2.cookbook) == ["sglang", "dynamo"] and list(dep2.raw) == ["sglang"]
    router = dep2.cookbook["sglang"][1]
    assert router["args"] == [
        ["--host", "0.0.0.0"],
        ["--port", "8000"],
        ["--policy", "cache_aware"],
        ["--request-id-headers", "x-correlation-id"],
        ["--dp-aware"],
        ["--connect-timeout-secs", "900"],
        ["--request-timeout-secs", "14400"],
        ["--disable-health-check"],
        ["--disable-retries"],
        ["--worker-urls", "http://127.0.0.1:30000"],
    ]
    worker = dep2.cookbook["sglang"][0]
    assert "--chunked-prefill-size" not in [
        a[0] for a in worker["args"]
    ]  # null in the anchor deletes it
    raw_env = dep2.raw["sglang"][0]["env"]
    assert (
        raw_env["SGLANG_SIMULATE_ACC_LEN"] == "3.51"
        and "SGLANG_SIMULATE_ACC_LEN" not in worker["env"]
    )
    assert dep2.shape != rc.points[3].shape and rc.points[3].shape == rc.points[4].shape
    assert all(p.recipe.startswith("inferencex-e2e/benchmarks/single_node/") for p in rc.points)


def test_disagg_points() -> None:
    rc = render_config(None, DISAGG)
    first, hicache = rc.points
    assert first.concs == [48, 64] and first.submitted == "dynamo" and first.kv == "none"
    assert first.label == "Disagg 1P2D · prefill TP2·EP2 · decode TP2·EP2" and first.gpus == 8
    assert [b["kind"] for b in first.cookbook["dynamo"]] == [
        "etcd",
        "nats",
        "dynamo-frontend",
        "worker",
        "worker",
    ]
    assert [b["kind"] for b in first.cookbook["sglang"]] == ["worker", "worker", "sglang-router"]
    assert hicache.kv == "hicache" and hicache.override == "override_1p1d_hicache_c160"


def _checkout(tmp_path: Path, rows: str, recipe: str) -> Path:
    master = tmp_path / "inferencex-e2e" / "configs" / "nvidia-master.yaml"
    master.parent.mkdir(parents=True)
    master.write_text(
        textwrap.dedent(f"""\
        k:
          image: img:1
          model: org/M
          model-prefix: m
          framework: sglang
          srt-recipe-dir: m
          scenarios:
            agentic-coding:
            - search-space:
        {textwrap.indent(textwrap.dedent(rows), "      ")}
        """)
    )
    path = (
        tmp_path
        / "inferencex-e2e"
        / "benchmarks"
        / "single_node"
        / "srt-slurm-recipes"
        / "m"
        / "r.yaml"
    )
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent(recipe))
    return tmp_path


RECIPE = """\
    base:
      schema: 2
      name: m
      resources: {gpu_type: gb300, gpus_per_node: 4}
      frontend: {type: sglang}
      engine: sglang
      roles: {agg: {nodes: 1, workers: 1, args: {trust-remote-code: true}}}
    override_tp2:
      roles: {agg: {gpus: 2, args: {tensor-parallel-size: 2}}}
    override_tp2_again:
      roles: {agg: {gpus: 2, args: {tensor-parallel-size: 2}}}
    override_tp4_c8:
      roles: {agg: {gpus: 4, args: {tensor-parallel-size: 4}}}
      benchmark: {env: {CONC: '8'}}
    """


def test_point_matches_exactly_one_variant(tmp_path: Path) -> None:
    root = _checkout(tmp_path, "- {tp: 4, conc-list: [8], srt-recipe: r.yaml}", RECIPE)
    (point,) = render_config(root, "k").points
    assert point.override == "override_tp4_c8" and point.golden_al is None


def test_zero_matching_variants_is_a_clear_error(tmp_path: Path) -> None:
    root = _checkout(tmp_path, "- {tp: 4, conc-list: [16], srt-recipe: r.yaml}", RECIPE)
    with pytest.raises(SyncError) as err:
        render_config(root, "k")
    assert "matched none" in err.value.message and "benchmark.env.CONC 8 != 16" in err.value.message


def test_several_matching_variants_is_a_clear_error(tmp_path: Path) -> None:
    root = _checkout(tmp_path, "- {tp: 2, conc-list: [1], srt-recipe: r.yaml}", RECIPE)
    with pytest.raises(SyncError, match="matched override_tp2, override_tp2_again"):
        render_config(root, "k")


def test_selector_that_does_not_match_the_row_is_refused(tmp_path: Path) -> None:
    root = _checkout(
        tmp_path, "- {tp: 2, conc-list: [1], srt-recipe: 'r.yaml:override_tp4_c8'}", RECIPE
    )
    with pytest.raises(SyncError, match="does not match the point: tensor-parallel-size 4 != tp 2"):
        render_config(root, "k")


def test_unknown_selector_lists_variants(tmp_path: Path) -> None:
    root = _checkout(
        tmp_path, "- {tp: 2, conc-list: [1], srt-recipe: 'r.yaml:override_tp8'}", RECIPE
    )
    with pytest.raises(
        SyncError, match="variants: override_tp2, override_tp2_again, override_tp4_c8"
    ):
        render_config(root, "k")


def test_rendering_rule_errors_name_the_point_and_the_recipe() -> None:
    """srt-slurm's rules refuse what they cannot launch (1.x and schema 2 here); the error
    says which point of which config, with the recipe file."""
    with pytest.raises(SyncError) as err:
        render_config(None, DSPARK, version="1")
    assert err.value.message.startswith(f"{DSPARK}: point 0 (row 0, conc 1): srt-slurm 1.x")
    assert "does not parse schema 2 recipes" in err.value.message
    assert err.value.path.endswith("gb300-fp4-mtp/agentic.yaml")


# ---- CLI -----------------------------------------------------------------------------------


def _sync(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*forkserver.command(), *args], capture_output=True, text=True, check=False
    )


def test_cli_json_shape() -> None:
    out = _sync("render", DISAGG, "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["config"] == DISAGG
    assert [(p["item"], p["override"], p["concs"], list(p["routers"])) for p in doc["points"]] == [
        (0, "override_1p2d_c64", [48, 64], ["dynamo", "sglang"]),
        (1, "override_1p1d_hicache_c160", [160], ["dynamo", "sglang"]),
    ]


def test_cli_point_n_is_entry_n_of_the_full_list() -> None:
    """`--point N` indexes the JSON job list (single node: row x concurrency) in master-config
    order, and `--conc C` selects the jobs measured at C from that same list."""
    from click.testing import CliRunner

    from syncer.commands.render import render_command

    def doc(*args: str) -> dict[str, Any]:
        out = CliRunner().invoke(render_command, [DSPARK, "--format", "json", *args])
        assert out.exit_code == 0, out.output
        return json.loads(out.output)

    full = doc()
    assert full["config"] == render_config(None, DSPARK).key == DSPARK
    assert [(p["item"], p["concs"]) for p in full["points"]] == [
        (0, [1]), (0, [4]), (0, [16]), (1, [16]), (1, [32]), (2, [64]), (2, [128]),
    ]  # fmt: skip
    for n, point in enumerate(full["points"]):
        assert doc("--point", str(n)) == {
            "config": DSPARK,
            "srt_slurm": full["srt_slurm"],
            "points": [point],
            "read": full["read"],
        }
    assert doc("--conc", "16")["points"] == full["points"][2:4]


def test_cli_text_is_the_copy_all_text(golden: Path) -> None:
    out = _sync("render", DSPARK, "--conc", "64", "--router", "sglang")
    assert out.returncode == 0, out.stderr
    match_golden(golden / "render" / "dspark_c64_sglang.txt", out.stdout)
    lines = out.stdout.splitlines()
    # which release's rules were applied, first, and what was read; then each job under its
    # heading
    assert lines[0].startswith("# rules: srt-slurm 2.x rules")
    assert lines[1] == "# read InferenceX checkout: examples/inferencex (the bundled example)"
    assert lines[4] == "# Worker"


def test_cli_raw_only_has_the_recipe_router() -> None:
    out = _sync("render", DSPARK, "--point", "0", "--raw", "--format", "json")
    assert list(json.loads(out.stdout)["points"][0]["routers"]) == ["sglang"]
    bad = _sync("render", DSPARK, "--point", "0", "--raw", "--router", "dynamo")
    assert bad.returncode == 2 and "only has the router the recipe runs" in bad.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("render", "dsv41flash-fp4-gb300-sglang-agentic-dsprk"), f"closest keys: {DSPARK}"),
        (("render", DSPARK, "--point", "7"), "out of range (0..6)"),
        (("render", DSPARK, "--conc", "3"), "no job at concurrency 3"),
        (("render", DSPARK, "--point", "1", "--conc", "4"), "not both"),
        (("render", DSPARK, "--router", "vllm"), "unknown router"),
    ],
)
def test_cli_bad_input_exits_2(args: tuple[str, ...], message: str) -> None:
    out = _sync(*args)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("error: ") and message in out.stderr


def test_cli_yaml_error_is_one_line_with_file_and_line(tmp_path: Path) -> None:
    root = _checkout(
        tmp_path,
        "- {tp: 2, conc-list: [1], srt-recipe: r.yaml}",
        textwrap.dedent(RECIPE) + "extra: [1, 2\n",
    )
    out = _sync("render", "k", "--inferencex", str(root))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1
    assert (
        out.stderr.startswith("error: ")
        and "r.yaml:16:1: " in out.stderr
        and "YAML syntax error" in out.stderr
    )


def test_cluster_markers_become_placeholders() -> None:
    from syncer.inferencex.variants import resolve_cluster_values

    doc = {
        "env": {
            "MOONCAKE_DEVICE": "@fabric.mooncake-devices",
            "NCCL_SOCKET_IFNAME": "@fabric.socket-ifname",
        },
        "args": {"hicache-size": "@dram.per-gpu-gb", "x": ["@fabric.ib-devices", 1]},
    }
    assert resolve_cluster_values(doc) == {
        "env": {"MOONCAKE_DEVICE": "$IB_DEVICES", "NCCL_SOCKET_IFNAME": "$FABRIC_SOCKET_IFNAME"},
        "args": {"hicache-size": "$DRAM_PER_GPU_GB", "x": ["$IB_DEVICES", 1]},
    }
