"""Normalised block comparison on hand-made blocks."""

from __future__ import annotations

from syncer.compare.diff import ExclusionRef, canonical_flag, compare_blocks


def worker(args, env=None, **extra):  # type: ignore[no-untyped-def]
    block = {
        "kind": "worker",
        "role": "agg",
        "workers": 1,
        "nodes_per_worker": 1,
        "cmd": "python3 -m sglang.launch_server",
        "env": env or {},
        "args": args,
    }
    block.update(extra)
    return block


def statuses(comp):  # type: ignore[no-untyped-def]
    return {(e.field, e.key): e.status for e in comp.entries}


def test_equals_form_aliases_and_underscores_match() -> None:
    a = worker([["--tp-size", "2"], ["--mem-fraction-static", "0.80"], ["--dp", "2"]])
    b = worker(
        [
            ["--tensor-parallel-size=2"],
            ["--mem_fraction_static", "0.8"],
            ["--data-parallel-size", "2"],
        ]
    )
    comp = compare_blocks([a], [b], left="cookbook", right="recipe")
    assert comp.agrees, [e for e in comp.problems]
    s = statuses(comp)
    assert s[("flag", "--tensor-parallel-size")] == "match"
    assert s[("flag", "--mem-fraction-static")] == "match"
    assert canonical_flag("--ep-size") == "--expert-parallel-size"


def test_json_flags_compare_as_data_and_name_the_nested_change() -> None:
    a = worker([["--json-model-override-args", '{"a": 1, "b": {"c": [1, 2]}}']])
    same = worker([["--json-model-override-args", '{"b":{"c":[1,2]},"a":1}']])
    pyrepr = worker([["--json-model-override-args", "{'b': {'c': [1, 2]}, 'a': 1}"]])
    drift = worker([["--json-model-override-args", '{"a": 1, "b": {"c": [1, 3]}}']])
    assert compare_blocks([a], [same], left="recipe", right="log").agrees
    assert compare_blocks([a], [pyrepr], left="recipe", right="log").agrees
    comp = compare_blocks([a], [drift], left="recipe", right="log")
    [entry] = comp.problems
    assert entry.status == "differs" and entry.key == "--json-model-override-args"
    assert "root['b']['c'][1]" in entry.note and "2" in entry.note and "3" in entry.note


def test_repeated_flags_and_multi_values() -> None:
    a = {
        "kind": "sglang-router",
        "cmd": "python -m sglang_router.launch_router",
        "env": {},
        "args": [
            ["--decode", "http://a:1"],
            ["--decode", "http://b:1"],
            ["--prefill", "u", "8998"],
        ],
    }
    same = dict(
        a,
        args=[
            ["--decode", "http://a:1"],
            ["--prefill", "u", "8998"],
            ["--decode", "http://b:1"],
            ["--decode", "http://b:1"],
        ],
    )
    fewer = dict(a, args=[["--decode", "http://a:1"], ["--prefill", "u", "8998"]])
    assert compare_blocks([a], [same], left="recipe", right="log").agrees
    comp = compare_blocks([a], [fewer], left="recipe", right="log")
    [entry] = comp.problems
    assert entry.key == "--decode" and entry.left == "http://a:1 | http://b:1"
    # python vs python3 is the same interpreter command
    assert statuses(comp)[("cmd", "command")] == "match"


def test_every_classification() -> None:
    recipe = worker(
        [["--a", "1"], ["--b", "2"], ["--only-recipe"], ["--enable-metrics"]],
        {"X": "1", "Y": "2", "PYTHONUNBUFFERED": "1"},
    )
    log = worker(
        [["--a", "1"], ["--b", "3"], ["--only-log", "v"], ["--enable-metrics"]],
        {"X": "1", "Y": "two", "Z": "3", "PYTHONUNBUFFERED": "1"},
    )
    excl = {
        ("worker", "flag", "--enable-metrics"): ExclusionRef("enable-metrics", "metrics"),
        ("worker", "env", "PYTHONUNBUFFERED"): ExclusionRef("python-unbuffered", "logs"),
    }
    comp = compare_blocks(
        [recipe],
        [log],
        left="recipe",
        right="log",
        exclusion=lambda k, f, n, *_: excl.get((k, f, n)),
    )
    s = statuses(comp)
    assert s[("flag", "--a")] == "match"
    assert s[("flag", "--b")] == "differs"
    assert s[("flag", "--only-recipe")] == "only-recipe"
    assert s[("flag", "--only-log")] == "only-log"
    assert s[("flag", "--enable-metrics")] == "excluded"
    assert s[("env", "X")] == "match"
    assert s[("env", "Y")] == "differs"
    assert s[("env", "Z")] == "only-log"
    assert s[("env", "PYTHONUNBUFFERED")] == "excluded"
    ex = next(e for e in comp.entries if e.key == "PYTHONUNBUFFERED")
    assert ex.exclusion == ExclusionRef("python-unbuffered", "logs") and ex.note == "values agree"
    assert not comp.agrees
    assert comp.counts() == {
        "match": 5,
        "differs": 2,
        "only-recipe": 1,
        "only-log": 2,
        "excluded": 2,
    }


def test_placement_values_normalised_only_when_asked() -> None:
    a = worker([["--dist-init-addr", "$DECODE_0_HEAD_IP:8300"]], {"MC": "$NODE_IP"})
    b = worker([["--dist-init-addr", "10.30.1.2:8300"]], {"MC": "10.30.1.9"})
    assert compare_blocks([a], [b], left="recipe", right="log", placement=True).agrees
    assert not compare_blocks([a], [b], left="recipe", right="log").agrees


def test_blocks_pair_by_kind_and_role_and_missing_blocks_are_reported() -> None:
    router = {
        "kind": "sglang-router",
        "cmd": "python -m sglang_router.launch_router",
        "env": {},
        "args": [["--policy", "cache_aware"]],
    }
    etcd = {"kind": "etcd", "cmd": "etcd", "env": {}, "args": []}
    comp = compare_blocks(
        [etcd, router, worker([])], [worker([])], left="recipe", right="log", right_logged=True
    )
    s = {(e.block, e.key): e.status for e in comp.entries if e.field == "block"}
    assert s == {("etcd", "process"): "not-logged", ("sglang-router", "process"): "only-recipe"}
    extra = compare_blocks([worker([])], [worker([]), router], left="recipe", right="log")
    assert [e.status for e in extra.problems] == ["only-log"]
    prefill = worker([], role="prefill")
    crossed = compare_blocks([prefill], [worker([])], left="cookbook", right="recipe")
    assert sorted(e.status for e in crossed.problems) == ["only-cookbook", "only-recipe"]


def test_unlogged_parts_are_not_missing() -> None:
    recipe = {
        "kind": "sglang-router",
        "cmd": "python -m sglang_router.launch_router",
        "env": {"RUST_LOG": "info"},
        "args": [["--policy", "cache_aware"]],
        "count": 1,
    }
    logged = dict(recipe, env={}, unlogged=["env"])
    comp = compare_blocks([recipe], [logged], left="recipe", right="log")
    assert comp.agrees
    assert any(e.status == "not-logged" and e.key == "(environment)" for e in comp.entries)
    frontend = {
        "kind": "dynamo-frontend",
        "cmd": "python3 -m dynamo.frontend",
        "env": {},
        "args": [["--router-mode", "kv"]],
        "count": 2,
    }
    seen = {
        "kind": "dynamo-frontend",
        "cmd": None,
        "env": {},
        "args": [],
        "count": 1,
        "unlogged": ["cmd", "args", "env"],
    }
    comp = compare_blocks([frontend], [seen], left="recipe", right="log", placement=True)
    assert [(e.key, e.status) for e in comp.problems] == [("count", "differs")]


def test_wrapper_and_structure_fields() -> None:
    a = worker([], gpu_pinning=[["0,1"]])
    b = worker([], gpu_pinning=[["2,3"]], wrapper=["numactl", "--membind=0"])
    comp = compare_blocks([a], [b], left="cookbook", right="recipe")
    got = {(e.field, e.key): e.status for e in comp.problems}
    assert got == {
        ("structure", "gpu_pinning"): "differs",
        ("wrapper", "command prefix"): "only-recipe",
    }


def test_values_nested_too_deeply_compare_as_text_without_a_traceback() -> None:
    # A log value is attacker-controlled: nesting that exhausts the parser's recursion must
    # still be classified (as text), not crash the report.
    deep = "[" * 5000 + "]" * 5000
    almost = "[" * 900 + "1" + "]" * 900
    other = "[" * 900 + "2" + "]" * 900
    comp = compare_blocks(
        [worker([["--a", "1"], ["--b", deep], ["--c", almost]])],
        [worker([["--a", deep], ["--b", deep], ["--c", other]])],
        left="recipe",
        right="log",
    )
    got = statuses(comp)
    assert got[("flag", "--a")] == "differs"
    assert got[("flag", "--b")] == "match"
    assert got[("flag", "--c")] == "differs"


def test_whole_cluster_tokens_match_any_logged_value_in_placement_mode() -> None:
    from syncer.compare.diff import compare_blocks

    rendered = [
        {
            "kind": "worker",
            "role": "agg",
            "cmd": "c",
            "env": {"MOONCAKE_DEVICE": "$IB_DEVICES", "BIND": "<node>", "K": "v"},
            "args": [],
        }
    ]
    logged = [
        {
            "kind": "worker",
            "role": "agg",
            "cmd": "c",
            "env": {"MOONCAKE_DEVICE": "mlx5_0,mlx5_1", "BIND": "gb300-n01", "K": "w"},
            "args": [],
        }
    ]
    comp = compare_blocks(rendered, logged, left="recipe", right="log", placement=True)
    status = {e.key: e.status for e in comp.entries if e.field == "env"}
    assert status == {"MOONCAKE_DEVICE": "match", "BIND": "match", "K": "differs"}
    # outside placement comparisons a token is just text
    comp = compare_blocks(rendered, logged, left="cookbook", right="recipe")
    assert {e.key: e.status for e in comp.entries if e.field == "env"}["BIND"] == "differs"
