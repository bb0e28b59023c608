"""Decoder rules on our own fixture modules (tests/fixtures/cookbook), expected values worked out
by hand from docs/cookbook-module-format.md."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from conftest import TESTS

from syncer.cookbook.decode import (
    AFTER_CONTROL_PLANE,
    BEFORE_FIRST_WORKER,
    Decoder,
    apply_diff,
    load_decoder,
)
from syncer.cookbook.jsmodule import load_module
from syncer.cookbook.shell import copy_all
from syncer.errors import SyncError
from syncer.model import Selection

FIXTURES = TESTS / "fixtures" / "cookbook"
REPO = "https://github.com/SemiAnalysisAI/InferenceX"
SHA_A = "a1" * 20
SHA_B = "b2" * 20


@pytest.fixture(scope="module")
def demo() -> Decoder:
    return load_decoder(FIXTURES / "agg_sglang.jsx")


@pytest.fixture(scope="module")
def legacy() -> Decoder:
    return load_decoder(FIXTURES / "legacy_perpoint.jsx")


def demo_data() -> dict[str, Any]:
    return load_module(FIXTURES / "agg_sglang.jsx").value


def test_fixture_modules_are_what_the_builder_writes() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_fixtures", FIXTURES / "build_fixtures.py")
    assert spec and spec.loader
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    for name, text in builder.render().items():
        assert (FIXTURES / name).read_text(encoding="utf-8") == text, name


# ---- materialisation -----------------------------------------------------------------------


def test_full_blocks_and_env_ref(demo: Decoder) -> None:
    etcd, frontend, worker = demo.blocks_for(Selection(0, 0, "dynamo"))
    assert etcd["kind"] == "etcd" and etcd["env"] == {}
    # envRef is replaced by the pooled env, keys sorted, `env` put last.
    assert list(frontend) == ["kind", "count", "cmd", "args", "env"]
    assert list(frontend["env"].items()) == [
        ("DYN_REQUEST_PLANE", "tcp"),
        ("ETCD_ENDPOINTS", "http://$ETCD_IP:2379"),
    ]
    assert list(worker["env"]) == ["DYN_REQUEST_PLANE", "SGLANG_A", "SGLANG_B"]
    assert "envRef" not in worker
    assert worker["gpu_pinning"] == [["0,1"]]


def test_from_overlays_drop_and_diff(demo: Decoder) -> None:
    (worker,) = demo.blocks_for(Selection(0, 0, "sglang"))
    assert list(worker) == ["kind", "role", "workers", "nodes_per_worker", "cmd", "args", "env"]
    assert worker["cmd"] == "python3 -m sglang.launch_server"
    assert worker["env"] == {"SGLANG_A": "1", "SGLANG_B": "2"}
    assert [a[0] for a in worker["args"]] == [
        "--model-path",
        "--host",
        "--port",
        "--max-running-requests",
        "--model-loader-extra-config",
        "--trust-remote-code",
    ]


def test_ref_with_overlay_and_diff_sorts_worker_args(demo: Decoder) -> None:
    (worker,) = demo.blocks_for(Selection(1, 0, "sglang"))
    assert worker["workers"] == 2
    assert list(worker)[:3] == ["kind", "role", "workers"]  # overlay keeps the key's position
    assert worker["args"] == [
        ["--model-path", "demo/Demo-1-FP4"],
        ["--host", "0.0.0.0"],
        ["--port", "30000"],
        ["--dp-size", "2"],
        ["--enable-hierarchical-cache"],
        ["--hicache-ratio", "2"],
        ["--max-running-requests", "4"],
        ["--model-loader-extra-config", '{"enable_multithread_load":true}'],
        ["--trust-remote-code"],
    ]
    # A bare ref is an exact copy of the referenced (already materialised) block.
    assert (
        demo.blocks_for(Selection(1, 0, "dynamo", "none"))[:2]
        == demo.blocks_for(Selection(0, 0, "dynamo"))[:2]
    )
    dyn_worker = demo.blocks_for(Selection(1, 0, "dynamo"))[2]
    assert "gpu_pinning" not in dyn_worker and dyn_worker["workers"] == 2


def test_materialise_is_memoised_and_callers_get_copies(demo: Decoder) -> None:
    first = demo.blocks_for(Selection(0, 0, "dynamo"))
    first[2]["args"].clear()
    assert demo.blocks_for(Selection(0, 0, "dynamo"))[2]["args"]
    assert demo.materialise(0, "dynamo") is demo.materialise(0, "dynamo")


# ---- diffs and patches ---------------------------------------------------------------------


def test_point_patch_replaces_in_place_appends_and_deletes(demo: Decoder) -> None:
    worker = demo.blocks_for(Selection(0, 1, "dynamo"))[2]
    assert worker["args"] == [
        ["--model-path", "demo/Demo-1-FP4"],
        ["--host", "0.0.0.0"],
        ["--port", "30000"],
        ["--request-plane", "tcp"],
        ["--max-running-requests", "8"],
        ["--model-loader-extra-config", '{"enable_multithread_load":true}'],
        ["--new-flag"],
    ]
    assert worker["env"] == {"DYN_REQUEST_PLANE": "tcp", "SGLANG_B": "2", "SGLANG_C": "3"}
    assert list(worker["env"]) == sorted(worker["env"])
    # Patches are relative to point 0, not cumulative.
    assert (
        demo.blocks_for(Selection(0, 2, "dynamo"))[2]
        == demo.blocks_for(Selection(0, 0, "dynamo"))[2]
    )


def test_block_patch_is_raw(demo: Decoder) -> None:
    frontend = demo.blocks_for(Selection(0, 2, "dynamo"))[1]
    assert frontend == {
        "kind": "dynamo-frontend",
        "count": 1,
        "cmd": "python3 -m dynamo.frontend",
        "env": {"DYN_REQUEST_PLANE": "tcp"},
        "args": [["--http-port", "8000"], ["--router-mode", "round-robin"]],
    }
    # A point without a patch for a router keeps point 0's blocks.
    assert demo.blocks_for(Selection(0, 2, "sglang")) == demo.blocks_for(Selection(0, 0, "sglang"))


def test_replace_patch_is_raw(demo: Decoder) -> None:
    (worker,) = demo.blocks_for(Selection(1, 1, "sglang"))
    assert worker["args"][-1] == ["--hicache-ratio", "4"]
    assert worker["env"] == {"SGLANG_A": "1"}


def test_repeated_flags_replaced_everywhere_and_order_kept() -> None:
    block = {
        "kind": "sglang-router",
        "cmd": "r",
        "env": {"B": "1"},
        "args": [["--decode", "a"], ["--zeta"], ["--decode", "b"]],
    }
    out = apply_diff(block, {"args": {"--decode": ["c"], "--alpha": ["1"]}, "env": {"A": "2"}})
    # Non-worker args keep their order; additions go last; env is always re-sorted.
    assert out["args"] == [["--decode", "c"], ["--zeta"], ["--decode", "c"], ["--alpha", "1"]]
    assert list(out["env"]) == ["A", "B"]
    assert block["args"][0] == ["--decode", "a"]  # the input is never modified


def test_null_diff_keeps_order_but_empty_object_diff_sorts() -> None:
    # JS falsiness: `{}` is a diff (so worker args get sorted), null/absent is not.
    worker = {"kind": "worker", "cmd": "w", "args": [["--zeta"], ["--port", "1"]]}
    assert apply_diff(worker, None)["args"] == [["--zeta"], ["--port", "1"]]
    assert "env" not in apply_diff(worker, None)
    assert apply_diff(worker, {})["args"] == [["--port", "1"], ["--zeta"]]
    assert apply_diff(worker, {})["env"] == {}


def test_lead_flag_order_and_code_unit_sort() -> None:
    worker = {
        "kind": "worker",
        "cmd": "w",
        "args": [
            ["--kv-events-config", "{}"],
            ["--expert-parallel-size", "2"],
            ["--ep-size", "2"],
            ["--node-rank", "$NODE_RANK"],
            ["--Zed"],
            ["--model-path", "m"],
        ],
    }
    out = apply_diff(worker, {"args": {}})
    assert [a[0] for a in out["args"]] == [
        "--model-path",
        "--node-rank",
        "--kv-events-config",
        "--Zed",
        "--ep-size",
        "--expert-parallel-size",
    ]


def test_patch_list_shorter_or_longer_than_blocks(demo: Decoder) -> None:
    data = demo_data()
    data["cells"][0]["points"][1]["patch"]["dynamo"] = [None, None, None, {"args": {"--x": []}}]
    data["cells"][0]["points"][2]["patch"]["dynamo"] = [{"args": {"--y": []}}]
    decoder = Decoder(data)
    assert decoder.blocks_for(Selection(0, 1, "dynamo")) == decoder.blocks_for(
        Selection(0, 0, "dynamo")
    )
    patched = decoder.blocks_for(Selection(0, 2, "dynamo"))
    assert patched[0]["args"][-1] == ["--y"]
    assert patched[1:] == decoder.blocks_for(Selection(0, 0, "dynamo"))[1:]


def test_point_zero_is_never_patched() -> None:
    data = demo_data()
    data["cells"][0]["points"][0]["patch"] = {"dynamo": [{"args": {"--x": []}}]}
    assert Decoder(data).blocks_for(Selection(0, 0, "dynamo")) == Decoder(demo_data()).blocks_for(
        Selection(0, 0, "dynamo")
    )


def test_point_index_is_clamped(demo: Decoder) -> None:
    assert demo.blocks_for(Selection(0, 99, "dynamo")) == demo.blocks_for(Selection(0, 2, "dynamo"))


# ---- KV-offload transform ------------------------------------------------------------------


def test_none_to_hicache_adds_cell_args(demo: Decoder) -> None:
    worker = demo.blocks_for(Selection(0, 0, "dynamo", "hicache"))[2]
    names = [a[0] for a in worker["args"]]
    assert names.index("--enable-hierarchical-cache") < names.index("--hicache-ratio")
    assert ["--hicache-ratio", "2"] in worker["args"]
    assert worker["env"] == demo.blocks_for(Selection(0, 0, "dynamo"))[2]["env"]


def test_hicache_to_none_strips_kv_flags(demo: Decoder) -> None:
    (worker,) = demo.blocks_for(Selection(1, 0, "sglang", "none"))
    assert not [a for a in worker["args"] if "hicache" in a[0] or "hierarchical" in a[0]]
    assert ["--dp-size", "2"] in worker["args"]


def test_to_mooncake_adds_linker_env_and_master(demo: Decoder) -> None:
    master, worker = demo.blocks_for(Selection(1, 0, "sglang", "mooncake"))
    assert master["kind"] == "mooncake-master" and master["env"] == {}
    assert ["--hicache-ratio", "2"] not in worker["args"]
    assert ["--unified-cache-external-linker-backend", "mooncake"] in worker["args"]
    # Added env keys never overwrite the worker's own values.
    assert worker["env"]["SGLANG_A"] == "1"
    assert worker["env"]["MOONCAKE_MASTER"] == "$MOONCAKE_MASTER_IP:8700"
    dynamo = demo.blocks_for(Selection(0, 0, "dynamo", "mooncake"))
    assert [b["kind"] for b in dynamo] == ["etcd", "dynamo-frontend", "mooncake-master", "worker"]
    assert dynamo[2]["env"] == {"ETCD_ENDPOINTS": "http://$ETCD_IP:2379"}


def test_measured_mooncake_to_none_drops_store(demo: Decoder) -> None:
    blocks = demo.blocks_for(Selection(2, 0, "dynamo", "none"))
    assert [b["kind"] for b in blocks] == ["etcd", "nats", "nginx", "dynamo-frontend"] + [
        "worker"
    ] * 2
    prefill, decode = blocks[4:]
    assert prefill["env"] == {
        "MC_TCP_BIND_ADDRESS": "$NODE_IP",
        "MOONCAKE_DEVICE": "$IB_DEVICES",
        "MOONCAKE_PROTOCOL": "rdma",
    }
    assert "--enable-unified-cache-external-linker" not in [a[0] for a in prefill["args"]]
    assert decode["env"] == {"MOONCAKE_PROTOCOL": "rdma"}
    assert prefill["preamble"] == ["ulimit -n 65536", "# run on both nodes of the prefill worker"]


def test_measured_mooncake_to_hicache_only_cache_owning_roles(demo: Decoder) -> None:
    blocks = demo.blocks_for(Selection(2, 0, "dynamo", "hicache"))
    prefill, decode = blocks[-2:]
    assert ["--enable-hierarchical-cache"] in prefill["args"]
    assert not any("hicache" in a[0] for a in decode["args"])


def test_measured_tier_is_untouched(demo: Decoder) -> None:
    measured = demo.blocks_for(Selection(2, 0, "dynamo"))
    assert measured == demo.blocks_for(Selection(2, 0, "dynamo", "mooncake"))
    assert [b["kind"] for b in measured][4:6] == ["mooncake-master", "mooncake-store"]


def test_unavailable_tier_is_ignored(demo: Decoder) -> None:
    assert demo.blocks_for(Selection(3, 0, "sglang", "mooncake")) == demo.blocks_for(
        Selection(3, 0, "sglang")
    )
    assert demo.status_for(Selection(3, 0, "sglang", "mooncake")) == "in-progress"


# ---- Mooncake master placement -------------------------------------------------------------


def test_placement_detected_from_dynamo_layout(demo: Decoder, legacy: Decoder) -> None:
    assert demo.master_placement == BEFORE_FIRST_WORKER
    assert legacy.master_placement == AFTER_CONTROL_PLANE


def test_the_two_placements_differ_on_the_legacy_module(legacy: Decoder) -> None:
    # Frontend-last data (c4b47c36 era) with an sglang router listed before its worker: the old
    # decoder puts the master first, the newest one right before the worker.
    old = [b["kind"] for b in legacy.blocks_for(Selection(0, 0, "sglang", "mooncake"))]
    assert old == ["mooncake-master", "sglang-router", "worker"]
    newest = load_decoder(FIXTURES / "legacy_perpoint.jsx")
    newest._placement = BEFORE_FIRST_WORKER
    assert [b["kind"] for b in newest.blocks_for(Selection(0, 0, "sglang", "mooncake"))] == [
        "sglang-router",
        "mooncake-master",
        "worker",
    ]
    # On the Dynamo router (frontend last) both rules coincide.
    dyn = [b["kind"] for b in legacy.blocks_for(Selection(0, 0, "dynamo", "mooncake"))]
    assert dyn == [b["kind"] for b in newest.blocks_for(Selection(0, 0, "dynamo", "mooncake"))]
    assert dyn == ["etcd", "mooncake-master", "worker", "dynamo-frontend"]


# ---- status and provenance -----------------------------------------------------------------


def test_status_per_router_and_tier(demo: Decoder) -> None:
    assert demo.status_for(Selection(0, 0, "dynamo", None)) == "verified-pr"
    assert demo.status_for(Selection(0, 0, "dynamo", "none")) == "verified-pr"
    assert demo.status_for(Selection(0, 1, "dynamo", None)) == "verified"  # point overrides prov
    assert demo.status_for(Selection(0, 0, "dynamo", "hicache")) == "derived"
    assert demo.status_for(Selection(0, 0, "sglang", None)) == "derived"
    assert demo.status_for(Selection(1, 0, "sglang", "hicache")) == "in-progress"


def test_point_info_expands_ids(demo: Decoder) -> None:
    info = demo.point_info(0, 0)
    assert info["recipeUrl"] == f"{REPO}/blob/{SHA_A}/benchmarks/demo/agentic.yaml"
    assert info["runUrl"] == f"{REPO}/actions/runs/123/attempts/2"
    assert info["prUrl"] == f"{REPO}/pull/11"
    assert info["useComment"] == f"{REPO}/pull/11#issuecomment-456"
    assert info["override"] == "override_c1" and info["date"] == "2026-10-01"
    assert "jobUrl" not in info and "patch" not in info
    second = demo.point_info(0, 1)
    assert second["runUrl"] == f"{REPO}/actions/runs/789" and second["status"] == "verified"
    assert "patch" not in second
    assert demo.point_info(0, 2)["jobUrl"] == f"{REPO}/actions/runs/123/job/77"
    in_progress = demo.point_info(1, 0)
    assert "runUrl" not in in_progress and "useComment" not in in_progress
    # Per-point recipe (prov has none) and `@c<conc>` cell ids.
    assert demo.point_info(4, 0)["recipeUrl"] == f"{REPO}/blob/{SHA_B}/benchmarks/demo/c4.yaml"


def test_point_info_legacy_urls_kept(legacy: Decoder) -> None:
    info = legacy.point_info(0, 0)
    assert info["recipeUrl"] == f"{REPO}/blob/{SHA_A}/benchmarks/demo/legacy.yaml"
    assert info["useComment"] == f"{REPO}/pull/7#issuecomment-99"
    assert info["status"] == "verified"
    assert legacy.status_for(Selection(0, 0, "dynamo", None)) == "verified"


def test_cell_selection(demo: Decoder, legacy: Decoder) -> None:
    assert demo.cell_index("demo-fp8-b300-sglang-agg#0@c4") == 4
    assert demo.cell_index("demo-fp8-b300-sglang-agg#0@c1") == 3
    assert demo.cell_index("2") == 2
    assert demo.default_cell() == 0 and legacy.default_cell() == 0
    with pytest.raises(SyncError, match=r"closest: .*demo-fp8-b300-sglang-agg#0@c1"):
        demo.cell_index("demo-fp8-b300-sglang-agg#0@c2")
    with pytest.raises(SyncError, match="out of range"):
        demo.cell_index(9)


def test_router_files(demo: Decoder) -> None:
    files = demo.router_files(2, "dynamo")
    assert list(files) == ["nginx.conf#00c0ffee", "nats.conf#0badf00d"]
    assert "$FRONTEND_1_IP" in files["nginx.conf#00c0ffee"]
    assert demo.router_files(2, "sglang") == {}


def test_cases_cover_every_selection(demo: Decoder) -> None:
    cases = list(demo.cases())
    expected = sum(
        len(c["points"]) * len(c["routers"]) * len(c["kv"]["available"]) for c in demo.cells
    )
    assert len(cases) == expected == 18 + 12 + 6 + 1 + 1
    first = cases[0]
    assert (first.cell, first.point, first.router, first.kv) == (0, 0, "dynamo", "none")
    # Tiers follow kv.available order, routers sorted by name.
    cell1 = [(c.point, c.router, c.kv) for c in cases if c.cell == 1][:3]
    assert cell1 == [(0, "dynamo", "hicache"), (0, "dynamo", "none"), (0, "dynamo", "mooncake")]
    assert cases[-1].cell_id == "demo-fp8-b300-sglang-agg#0@c4"
    assert all(len(c.text) == len(c.blocks) for c in cases)


def test_shared_cases_are_the_fresh_ones_and_fresh_ones_are_the_callers(demo: Decoder) -> None:
    shared = list(demo.cases(fresh=False))
    fresh = list(demo.cases())
    assert [c.as_json() for c in shared] == [c.as_json() for c in fresh]
    # equal blocks shown are one object (what lets the printer encode each once) ...
    objects: dict[str, set[int]] = {}
    for case in shared:
        for block in case.blocks:
            objects.setdefault(json.dumps(block), set()).add(id(block))
    assert all(len(ids) == 1 for ids in objects.values())
    assert len(objects) < sum(len(c.blocks) for c in shared) / 2
    # ... and a fresh case's blocks are its caller's: changing them changes no other case
    expected = copy.deepcopy([c.as_json() for c in fresh[1:]])
    for block in fresh[0].blocks:
        block["args"].clear()
        block.setdefault("env", {})["X"] = "1"
    assert [c.as_json() for c in list(demo.cases())[1:]] == expected
    assert [c.as_json() for c in fresh[1:]] == expected


def test_module_without_kv_tiers() -> None:
    # The oldest format has no KV dimension: one case per (point, router), never transformed.
    data = demo_data()
    cell = data["cells"][3]
    del cell["kv"]
    for point in cell["points"]:
        del point["kv"]
    decoder = Decoder(data)
    cases = [c for c in decoder.cases() if c.cell == 3]
    assert [(c.kv, c.status) for c in cases] == [("none", "in-progress")]
    assert decoder.blocks_for(Selection(3, 0, "sglang", "mooncake")) == cases[0].blocks


# ---- errors --------------------------------------------------------------------------------


def _error(data: Any, call: Any = None) -> SyncError:
    with pytest.raises(SyncError) as info:
        decoder = Decoder(data, "demo.jsx")
        if call:
            call(decoder)
        else:
            list(decoder.cases())
    assert info.value.path == "demo.jsx"
    return info.value


def test_ref_cycle() -> None:
    data = demo_data()
    data["cells"][0]["routers"]["sglang"]["blocks"] = [{"ref": [1, "sglang", 0]}]
    error = _error(data)
    assert "ref cycle" in error.message
    assert "cells[0].routers.sglang -> cells[1].routers.sglang -> cells[0].routers.sglang" in (
        error.message
    )


def test_cycle_chain_starts_where_the_loop_closes() -> None:
    data = demo_data()
    # cell 1 -> cell 0 -> cell 4 -> cell 0: the loop is cells 0 and 4, entered from cell 1.
    data["cells"][0]["routers"]["sglang"]["blocks"] = [{"ref": [4, "sglang", 0]}]
    data["cells"][4]["routers"]["sglang"]["blocks"] = [{"ref": [0, "sglang", 0]}]
    error = _error(data, lambda decoder: decoder.blocks_for(Selection(1, 0, "sglang")))
    assert error.message.endswith(
        "ref cycle: cells[0].routers.sglang -> cells[4].routers.sglang -> cells[0].routers.sglang"
    )


def test_from_cycle_within_a_cell() -> None:
    data = demo_data()
    data["cells"][0]["routers"]["dynamo"]["blocks"][0] = {"from": 0}
    assert "ref cycle" in _error(data).message


def test_absurdly_long_ref_chain_is_an_error_not_a_crash() -> None:
    first = {"kind": "worker", "role": "agg", "cmd": "x", "args": []}
    cells = [
        {
            "id": f"c#{i}",
            "points": [{"concs": [1]}],
            "submitted": "sglang",
            "routers": {"sglang": {"blocks": [first if i == 0 else {"ref": [i - 1, "sglang", 0]}]}},
        }
        for i in range(3000)
    ]
    error = _error(
        {"cells": cells}, lambda decoder: decoder.blocks_for(Selection(2999, 0, "sglang"))
    )
    assert (
        error.message == "cells[2999].routers.sglang: ref chain too long (hundreds of cells deep)"
    )


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda d: d["cells"][1]["routers"]["sglang"]["blocks"][0].update(ref=[7, "sglang", 0]),
            "dangling cell index 7",
        ),
        (
            lambda d: d["cells"][1]["routers"]["sglang"]["blocks"][0].update(ref=[0, "sglang", 3]),
            "dangling block index 3",
        ),
        (
            lambda d: d["cells"][1]["routers"]["sglang"]["blocks"][0].update(ref=[0, "vllm", 0]),
            'unknown router "vllm"',
        ),
        (
            lambda d: d["cells"][1]["routers"]["sglang"]["blocks"][0].update(ref=[0, "sglang"]),
            "expected [cell, router, block]",
        ),
        (
            lambda d: d["cells"][0]["routers"]["sglang"]["blocks"][0].update({"from": -1}),
            "dangling block index -1",
        ),
        (
            lambda d: d["cells"][0]["routers"]["dynamo"]["blocks"][2].update(envRef=5),
            "dangling env index 5",
        ),
        (
            # A data-module value is shown as JavaScript spells it, not as Python's repr.
            lambda d: d["cells"][0]["routers"]["dynamo"]["blocks"][2].update(envRef=True),
            "dangling env index true (module has",
        ),
        (
            lambda d: d["cells"][1]["routers"]["sglang"]["blocks"][0].update(ref=[0, None]),
            "expected [cell, router, block], found [0, null]",
        ),
        (
            lambda d: d["cells"][2]["routers"]["dynamo"].update(files=["missing#1"]),
            'unknown file "missing#1"',
        ),
        (
            lambda d: d["cells"][0]["points"][1]["patch"].update(dynamo={"add": []}),
            "expected null, a list of per-block diffs or {replace",
        ),
        (
            lambda d: d["cells"][0]["points"][1]["patch"].update(dynamo=[None, {"args": "x"}]),
            "diff `args` must be an object",
        ),
        (lambda d: d["cells"][0]["kv"].pop("hicache"), "tier hicache offered without"),
        (
            lambda d: d["cells"][3]["routers"]["sglang"]["blocks"][0].pop("kind"),
            "cells[3].routers.sglang.blocks[0]: expected a block with a `kind`",
        ),
        (
            lambda d: d["cells"][3]["routers"]["sglang"]["blocks"][0].update(args=[[]]),
            "expected `args`: a list of [flag, values...] lists",
        ),
        (
            lambda d: d["cells"][3]["routers"]["sglang"]["blocks"][0].update(env=["A=1"]),
            "expected `env`: an object",
        ),
        (
            lambda d: d["cells"][1]["routers"]["sglang"]["blocks"][0]["diff"]["args"].update(
                {"--dp-size": "2"}
            ),
            "cells[1].routers.sglang.blocks[0].diff: diff for --dp-size must be a list",
        ),
        (
            lambda d: d["cells"][1]["routers"]["dynamo"]["blocks"][2].update(drop="gpu_pinning"),
            "blocks[2].drop: expected a list of key names",
        ),
        (
            lambda d: d["cells"][0]["points"][1].update(patch=[None]),
            "cells[0].points[1].patch: expected an object of router -> patch",
        ),
        (
            lambda d: d["cells"][1]["points"][1]["patch"]["sglang"].update(replace=[{"cmd": "x"}]),
            "cells[1].points[1].patch.sglang[0]: expected a block with a `kind`",
        ),
        (lambda d: d["kvMooncake"]["master"].pop("sglang"), "no `sglang` block"),
    ],
)
def test_dangling_and_malformed_entries(mutate: Any, expected: str) -> None:
    data = demo_data()
    mutate(data)

    def decode_all(decoder: Decoder) -> None:
        for case in decoder.cases():
            decoder.router_files(case.cell, case.router)

    assert expected in _error(data, decode_all).message


def test_unknown_router_selected(demo: Decoder) -> None:
    with pytest.raises(SyncError, match=r'unknown router "vllm" \(cell has dynamo, sglang\)'):
        demo.blocks_for(Selection(0, 0, "vllm"))
    with pytest.raises(SyncError, match="unknown router"):
        demo.status_for(Selection(0, 0, "vllm", None))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ([1, 2], "expected an object, found an array"),
        ({"model": "x"}, "non-empty `cells` list (unknown module shape)"),
        ({"cells": [{"points": [], "routers": {}}]}, "cells[0]: expected a non-empty `points`"),
        ({"cells": [{"points": [{}], "routers": {}}]}, "non-empty `routers`"),
        ({"cells": [{"points": [{}], "routers": {"sglang": {}}}]}, "expected `blocks`"),
        (
            {"cells": [{"points": [{}], "routers": {"sglang": {"blocks": []}}, "submitted": "x"}]},
            'router "x" is not one of ["sglang"]',
        ),
        (
            {
                "cells": [
                    {
                        "points": [{}],
                        "routers": {"sglang": {"blocks": []}},
                        "submitted": "sglang",
                        "kv": ["none"],
                    }
                ]
            },
            "cells[0].kv: expected an object",
        ),
    ],
)
def test_unknown_module_shape(data: Any, expected: str) -> None:
    assert expected in _error(data).message


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d.update(source=1), "source: expected an object, found a number"),
        (lambda d: d["source"].update(prs=[1]), "source.prs: expected an object, found an array"),
        (lambda d: d.update(hardware={"a": 1}), "hardware: expected an array, found an object"),
        (lambda d: d["hardware"].append("gb200"), "hardware[2]: expected an object with a string"),
        (lambda d: d.update(checkpoints=[{"id": 1}]), "checkpoints[0]: expected an object"),
        (lambda d: d.update(envs={}), "envs: expected an array, found an object"),
        (lambda d: d.update(files=[]), "files: expected an object, found an array"),
        (lambda d: d.update(kvMooncake=1), "kvMooncake: expected an object, found a number"),
        (lambda d: d["kvMooncake"].update(master=1), "kvMooncake.master: expected an object"),
        (lambda d: d["kvMooncake"].update(args=[[1]]), "kvMooncake.args: expected `args`"),
        (lambda d: d["kvMooncake"].update(env=1), "kvMooncake.env: expected `env`"),
        (
            lambda d: d["kvMooncake"]["master"]["dynamo"].update(args=["--x"]),
            "kvMooncake.master.dynamo: expected `args`",
        ),
        (
            lambda d: d["kvMooncake"]["master"]["dynamo"].update(kind=[]),
            "kvMooncake.master.dynamo: expected a block with a `kind`",
        ),
        (lambda d: d["cells"][0].update(submitted=[]), "cells[0].submitted: router []"),
        (
            lambda d: d["cells"][0].update(prov="x"),
            "cells[0].prov: expected an object, found a string",
        ),
        (lambda d: d["cells"][0]["points"][1].update(concs=4), "points[1].concs: expected a list"),
        (lambda d: d["cells"][0]["points"][1].update(kv=[]), "points[1].kv: expected a string"),
        (lambda d: d["cells"][0]["kv"].update(available=[[]]), "cells[0].kv: expected an object"),
        (lambda d: d["cells"][0]["kv"].update(hicache=[]), "cells[0].kv.hicache: expected an"),
        (
            lambda d: d["cells"][0]["kv"]["hicache"].update(args=[["--a", {"b": 1}]]),
            "cells[0].kv.hicache.args: expected `args`",
        ),
        (
            lambda d: d["cells"][0]["routers"]["dynamo"].update(files=1),
            "cells[0].routers.dynamo.files: expected a list of file ids",
        ),
        (
            lambda d: d["cells"][3]["routers"]["sglang"]["blocks"][0].update(role=["agg"]),
            "cells[3].routers.sglang.blocks[0].role: expected a string, found an array",
        ),
        (
            lambda d: d["cells"][3]["routers"]["sglang"]["blocks"][0].update(preamble="set -e"),
            "cells[3].routers.sglang.blocks[0].preamble: expected a list of lines",
        ),
        (
            lambda d: d["cells"][3]["routers"]["sglang"]["blocks"][0].update(env={"A": ["1"]}),
            "cells[3].routers.sglang.blocks[0]: expected `env`",
        ),
        (
            lambda d: d["cells"][1]["routers"]["dynamo"]["blocks"][2].update(args=[1]),
            "blocks[2].diff: diff applied to `args` that are not [flag, values...] lists",
        ),
    ],
)
def test_module_parts_of_the_wrong_type(mutate: Any, expected: str) -> None:
    # Each of these crashed with a TypeError/AttributeError deep in decoding or printing
    # before the decoder checked the shape of every part it reads.
    data = demo_data()
    mutate(data)

    def decode_and_print(decoder: Decoder) -> None:
        decoder.default_cell()
        for case in decoder.cases():
            copy_all(case.blocks, decoder.router_files(case.cell, case.router))
            decoder.point_info(case.cell, case.point)

    assert expected in _error(data, decode_and_print).message


def test_input_data_is_never_modified(demo: Decoder) -> None:
    data = demo_data()
    before = copy.deepcopy(data)
    decoder = Decoder(data)
    for case in decoder.cases():
        case.blocks[0]["args"] = []
    assert json.dumps(data) == json.dumps(before)
