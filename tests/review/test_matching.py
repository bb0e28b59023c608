"""Matching cells, points, routers/tiers and processes between two module versions."""

from __future__ import annotations

from conftest import TESTS

from syncer.model import Selection
from syncer.review.matching import (
    CellRef,
    PointRef,
    deployment_shape,
    load_side,
    match_blocks,
    match_cells,
    match_names,
    match_points,
)

FIXTURES = TESTS / "fixtures" / "diff"


def worker(role: str, tp: int, ep: int = 1, workers: int = 1, dpa: bool = False) -> dict:
    args = [["--model-path", "m"], ["--tensor-parallel-size", str(tp)]]
    if ep > 1:
        args.append(["--ep-size", str(ep)])
    if dpa:
        args += [["--dp-size", str(tp)], ["--enable-dp-attention"]]
    return {"kind": "worker", "role": role, "workers": workers, "cmd": "x", "env": {}, "args": args}


def cell(index: int, cid: str, shape_blocks: list[dict], concs: list[list[int]]) -> CellRef:
    key = cid.split("#")[0]
    return CellRef(
        index=index,
        id=cid,
        config_key=key,
        hw="gb300",
        ckpt="m",
        label="",
        submitted="sglang",
        routers=("sglang",),
        tiers=("none",),
        points=[PointRef(i, tuple(c), "none") for i, c in enumerate(concs)],
        shape=deployment_shape(shape_blocks),
        raw={},
    )


def test_shape_reads_roles_counts_and_every_parallelism_spelling() -> None:
    tp_flag = {
        "kind": "worker",
        "role": "agg",
        "args": [["--tp", "4"], ["--expert-parallel-size", "4"]],
    }
    assert deployment_shape([tp_flag]) == (("agg", 1, 1, 4, 4, 1, False),)
    underscored = {**tp_flag, "args": [["--tp_size", "4"], ["--enable_dp_attention"]]}
    assert deployment_shape([underscored]) == (("agg", 1, 1, 4, 1, 1, True),)
    disagg = [
        {"kind": "etcd", "args": []},
        worker("decode", 2, 2, workers=2),
        worker("prefill", 2, 2),
    ]
    # prefill sorts before decode whatever the block order
    assert [r[0] for r in deployment_shape(disagg)] == ["prefill", "decode"]
    assert deployment_shape([worker("agg", 2, dpa=True)]) == (("agg", 1, 1, 2, 1, 2, True),)


def test_same_id_same_shape_is_matched_in_place() -> None:
    old = [cell(0, "k#0", [worker("agg", 2)], [[1], [4]])]
    new = [cell(0, "k#0", [worker("agg", 2)], [[1]])]
    m = match_cells(old, new)
    assert [(p.old.id, p.new.id, p.moved) for p in m.pairs] == [("k#0", "k#0", False)]
    assert not m.added and not m.removed


def test_renumbered_cell_is_a_move_and_same_id_new_shape_is_a_new_deployment() -> None:
    old = [cell(0, "k#0", [worker("agg", 2, 2)], [[1], [4]])]
    new = [
        cell(0, "k#0", [worker("agg", 2, dpa=True)], [[64]]),
        cell(1, "k#2", [worker("agg", 2, 2)], [[1], [8]]),
    ]
    m = match_cells(old, new)
    assert [(p.old.id, p.new.id) for p in m.pairs] == [("k#0", "k#2")]
    assert m.pairs[0].moved
    assert [c.id for c in m.added] == ["k#0"]
    assert m.removed == []


def test_same_id_with_another_shape_is_another_deployment_even_without_a_move() -> None:
    # deepseek-v4_1 @2b484a51: b200 `#1` was Agg TP2·EP2 and is now Agg DEP4, a new point of
    # the search space; reported as the cell added in the later version and the old one removed.
    old = [cell(0, "k#1", [worker("agg", 2, 2)], [[1]])]
    new = [cell(0, "k#1", [worker("agg", 4, dpa=True)], [[1]])]
    m = match_cells(old, new)
    assert m.pairs == []
    assert [c.id for c in m.added] == ["k#1"] and [c.id for c in m.removed] == ["k#1"]


def test_ambiguous_moves_are_decided_by_concurrency_overlap() -> None:
    shape = [worker("agg", 4)]
    old = [cell(0, "k#0@c1", shape, [[1]]), cell(1, "k#0@c4", shape, [[4], [8]])]
    new = [cell(0, "k#3", shape, [[4], [8]]), cell(1, "k#5", shape, [[1], [2]])]
    m = match_cells(old, new)
    assert [(p.old.id, p.new.id) for p in m.pairs] == [("k#0@c4", "k#3"), ("k#0@c1", "k#5")]


def test_other_config_or_hardware_never_matches() -> None:
    old = [cell(0, "a#0", [worker("agg", 2)], [[1]])]
    new = [cell(0, "b#0", [worker("agg", 2)], [[1]])]
    m = match_cells(old, new)
    assert (
        m.pairs == []
        and [c.id for c in m.added] == ["b#0"]
        and [c.id for c in m.removed] == ["a#0"]
    )


def test_points_match_by_concurrency_list_then_by_overlap() -> None:
    old = [PointRef(0, (1,), "none"), PointRef(1, (4, 8), "none"), PointRef(2, (64,), "none")]
    new = [PointRef(0, (1,), "none"), PointRef(1, (4,), "none"), PointRef(2, (32,), "none")]
    m = match_points(old, new)
    assert [(p.old.index, p.new.index, p.regrouped) for p in m.pairs] == [
        (0, 0, False),
        (1, 1, True),
    ]
    assert [p.name for p in m.added] == ["c32"]
    assert [p.name for p in m.removed] == ["c64"]
    assert PointRef(0, (64, 128), "none").name == "c64/128"


def test_names_keep_new_order() -> None:
    assert match_names(["none", "hicache"], ["mooncake", "none"]) == (
        ["none"],
        ["mooncake"],
        ["hicache"],
    )


def test_blocks_pair_by_kind_role_and_occurrence() -> None:
    old = [{"kind": "etcd"}, {"kind": "nats"}, {"kind": "worker", "role": "decode"}]
    new = [
        {"kind": "etcd"},
        {"kind": "worker", "role": "decode"},
        {"kind": "worker", "role": "decode"},
    ]
    pairs = match_blocks(old, new)
    assert [(p.title, p.old is not None, p.new is not None) for p in pairs] == [
        ("etcd — Dynamo control plane", True, True),
        ("Decode worker", True, True),
        ("Decode worker (2)", False, True),
        ("NATS — Dynamo KV-event plane", True, False),
    ]


def test_fixture_module_sides_expose_cells_shapes_and_tiers() -> None:
    side = load_side((FIXTURES / "base.jsx").read_text(encoding="utf-8"), "base.jsx")
    assert [c.id for c in side.cells] == [
        "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg#0",
        "dsv41flash-fp4-gb300-sglang-agentic-dspark#0",
        "dsv41flash-fp4-b200-sglang-agentic-dspark#0",
    ]
    disagg = side.cells[0]
    assert disagg.routers == ("dynamo", "sglang")
    assert disagg.tiers == ("none", "mooncake")
    assert disagg.shape == (("prefill", 1, 1, 2, 2, 1, False), ("decode", 2, 1, 2, 2, 1, False))
    assert side.is_measured(disagg, disagg.points[1], "dynamo", "none")
    assert not side.is_measured(disagg, disagg.points[1], "sglang", "none")
    assert "nats-server -c nats.conf" in side.text(Selection(0, 0, "dynamo", "none"))
