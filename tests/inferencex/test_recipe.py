"""Recipe loading and variant expansion, the way srt-slurm does it (own fixtures)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT, TESTS

from syncer.errors import SyncError
from syncer.inferencex import yamlsafe
from syncer.inferencex.recipe import normalise
from syncer.inferencex.recipe_bundles import (
    compose_shared,
    deep_merge,
    expand_variants,
    variant_names,
)

FIX = TESTS / "fixtures" / "inferencex"
EXAMPLE = ROOT / "examples" / "inferencex"


def _args(variant: dict) -> dict:
    return variant["roles"]["agg"]["args"]


def test_yaml_11_scalars_are_read_as_srt_slurm_reads_them() -> None:
    args = yamlsafe.load(FIX / "anchors.yaml")["base"]["roles"]["agg"]["args"]
    assert args["trust-remote-code"] is True  # yes
    assert args["octal-like"] == 8  # 010 is octal in YAML 1.1
    assert args["small"] == "1e-3"  # no dot: a string in YAML 1.1
    assert args["small-dotted"] == 0.001
    assert args["mem-fraction-static"] == 0.9


def test_merge_keys_resolve_as_srt_slurms_pyyaml_did_whatever_pyyaml_is_installed() -> None:
    # Issue 22.8: PyYAML 6.0.4 gives the *last* mapping of `<<: [a, b]` precedence for keys of
    # two or more characters (yaml/pyyaml#953); srt-slurm read its recipes with a PyYAML
    # before that, which (like the merge spec) gives the first. The loader keeps the first,
    # whichever PyYAML runs it; everything but merge precedence is PyYAML's own safe_load.
    path = FIX / "anchors.yaml"
    loaded = yamlsafe.load(path)
    assert loaded["override_b"]["roles"]["agg"]["args"]["mem-fraction-static"] == 0.8
    assert loaded["override_b"]["roles"]["agg"]["args"]["page-size"] == 64
    plain = yaml.safe_load(path.read_text())
    plain["override_b"]["roles"]["agg"]["args"]["mem-fraction-static"] = 0.8
    assert loaded == plain
    text = (
        "a: &a {kk: 1, x: 1, z: 0}\nb: &b {kk: 2, y: 3}\n"
        "r:\n  w: 9\n  <<: [*a, *b, {kk: 3, x: 3}]\n  z: 5\n"
    )
    # first mapping wins, explicit keys win, keys in PyYAML 6.0.3's order
    assert list(yamlsafe.loads(text)["r"].items()) == [
        ("kk", 1), ("x", 1), ("y", 3), ("z", 5), ("w", 9)
    ]  # fmt: skip
    # single mappings under repeated merge keys, and a nested merge
    nested = "a: &a {kk: 1}\nb: &b {<<: *a, kk2: 2}\nr: {<<: [*b, {kk: 7}]}\n"
    assert yamlsafe.loads(nested)["r"] == {"kk": 1, "kk2": 2}


def test_deep_merge_rules() -> None:
    base = {"a": {"x": 1, "y": [1, 2], "z": "keep"}, "b": 1, "order": 0}
    override = {"a": {"y": [3], "x": None, "new": True}, "c": 2, "b": None}
    merged = deep_merge(base, override)
    assert merged == {"a": {"y": [3], "z": "keep", "new": True}, "order": 0, "c": 2}
    assert list(merged) == ["a", "order", "c"]  # base order, new keys appended
    assert list(merged["a"]) == ["y", "z", "new"]
    assert base["a"]["x"] == 1, "inputs are never mutated"
    assert deep_merge({"a": {"x": 1}}, {"a": 5}) == {"a": 5}  # type mismatch replaces


def test_merge_keys_anchors_and_null_delete() -> None:
    variants = expand_variants(yamlsafe.load(FIX / "anchors.yaml"), path="anchors.yaml")
    a = variants["override_a"]
    args = _args(a)
    assert "moe-runner-backend" not in args  # null from the anchored block deletes the base key
    assert args["enable-dp-attention"] is True
    assert args["mem-fraction-static"] == 0.85  # explicit key beats the merged one
    assert args["cuda-graph-bs"] == [8]  # lists replace
    assert args["tensor-parallel-size"] == 4  # base keys stay
    assert a["roles"]["agg"]["env"] == {"KEEP": "1", "REPLACE": "new", "ADDED": "on"}  # env merges
    assert a["name"] == "fixture_a" and a["schema"] == 2
    b = variants["override_b"]
    assert b["name"] == "explicit-name"
    assert "moe-runner-backend" not in _args(b) and _args(b)["enable-dp-attention"] is True
    assert _args(b)["page-size"] == 64


def test_zip_overrides_and_selectors() -> None:
    doc = yamlsafe.load(FIX / "anchors.yaml")
    assert variant_names(doc) == [
        "override_a",
        "override_b",
        "zip_override_sweep[0]",
        "zip_override_sweep[1]",
        "zip_override_sweep[2]",
    ]
    group = expand_variants(doc, "zip_override_sweep")
    assert [_args(v)["max-running-requests"] for v in group.values()] == [8, 16, 32]
    assert all(
        _args(v)["chunked-prefill-size"] == 4096 for v in group.values()
    )  # length-1 broadcasts
    first, third = group["zip_override_sweep[0]"], group["zip_override_sweep[2]"]
    assert first["name"] == "fixture_sweep_0"
    assert (
        _args(first)["moe-runner-backend"] == "flashinfer_mxfp4"
    )  # zip drops nulls: base value stays
    assert _args(third)["moe-runner-backend"] == "triton"
    assert list(expand_variants(doc, "zip_override_sweep[1]")) == ["zip_override_sweep[1]"]
    assert list(expand_variants(doc, "override_*")) == ["override_a", "override_b"]
    assert list(expand_variants(doc, "base")) == ["base"]


def test_unknown_selector_lists_the_variants() -> None:
    with pytest.raises(SyncError) as err:
        expand_variants(yamlsafe.load(FIX / "anchors.yaml"), "override_c", path="anchors.yaml")
    assert "override_a, override_b, zip_override_sweep[0]" in err.value.message
    assert err.value.path == "anchors.yaml"


def test_duplicate_key_names_file_and_line() -> None:
    with pytest.raises(SyncError) as err:
        yamlsafe.load(FIX / "duplicate.yaml")
    assert err.value.line == 7 and 'duplicate key "tp"' in err.value.message
    assert err.value.path.endswith("duplicate.yaml")


def test_syntax_error_names_file_and_line() -> None:
    with pytest.raises(SyncError) as err:
        yamlsafe.load(FIX / "syntax.yaml")
    assert err.value.line == 4 and "YAML syntax error" in err.value.message


def test_alias_bomb_is_refused() -> None:
    with pytest.raises(SyncError, match="expands to more than"):
        yamlsafe.load(FIX / "alias_bomb.yaml")


def test_non_string_env_value_is_rejected_like_srt_slurm() -> None:
    path = FIX / "bad_env.yaml"
    variant = expand_variants(yamlsafe.load(path), "override_x", path=str(path))["override_x"]
    with pytest.raises(SyncError) as err:
        normalise(variant, path=str(path), selector="override_x")
    assert "SGLANG_TIMEOUT_KEEP_ALIVE: Not a valid string" in err.value.message
    assert err.value.line == 13


def test_shared_block_goes_under_the_fragment() -> None:
    shared = {
        "benchmark": {"type": "custom", "command": "run.sh"},
        "health_check": {"max_attempts": 5},
    }
    doc = {"base": {"benchmark": {"command": "mine.sh", "env": {"A": "1"}}}, "override_x": {}}
    out = compose_shared(shared, doc)
    assert out["base"]["benchmark"] == {"type": "custom", "command": "mine.sh", "env": {"A": "1"}}
    assert out["base"]["health_check"] == {"max_attempts": 5}
    assert compose_shared(shared, {"name": "plain"})["benchmark"]["command"] == "run.sh"


def test_schema_2_roles_fold_into_one_shape() -> None:
    variant = expand_variants(yamlsafe.load(FIX / "anchors.yaml"), "override_a")["override_a"]
    variant["model"] = {"path": "hf:org/M"}
    recipe = normalise(variant)
    assert recipe.schema == 2 and recipe.frontend.type == "sglang" and not recipe.disagg
    agg = recipe.roles["agg"]
    assert (agg.nodes, agg.workers, agg.gpus) == (1, 1, 4)


def test_schema_1_backend_and_resources_fold_into_roles() -> None:
    recipe = normalise(yamlsafe.load(FIX / "schema1.yaml"))
    assert recipe.schema == 1 and recipe.disagg
    assert recipe.frontend.type == "sglang-router"  # schema 1 `sglang` is the router
    assert recipe.roles["prefill"].env == {"A": "1"} and recipe.roles["decode"].env == {"B": "2"}
    assert recipe.roles["decode"].gpus == 8 and recipe.roles["decode"].nodes_per_worker == 2
    assert recipe.total_nodes == 3


def test_mixing_roles_with_schema_1_fields_is_refused() -> None:
    doc = {
        "schema": 2,
        "model": {"path": "hf:o/m"},
        "resources": {"gpus_per_node": 4},
        "roles": {"agg": {}},
        "backend": {"type": "sglang"},
    }
    with pytest.raises(SyncError, match="cannot be mixed"):
        normalise(doc)


def test_unknown_role_key_names_the_closest() -> None:
    doc = {
        "schema": 2,
        "model": {"path": "hf:o/m"},
        "resources": {"gpus_per_node": 4},
        "roles": {"agg": {"worker": 1}},
    }
    with pytest.raises(SyncError, match='unknown key "worker"; closest: workers'):
        normalise(doc)


def test_frontend_defaults_to_dynamo() -> None:
    doc = {
        "schema": 2,
        "model": {"path": "hf:o/m"},
        "resources": {"gpus_per_node": 4},
        "roles": {"agg": {}},
    }
    assert normalise(doc).frontend.type == "dynamo"


def test_args_must_be_a_mapping() -> None:
    doc = {
        "schema": 2,
        "model": {"path": "hf:o/m"},
        "resources": {"gpus_per_node": 4},
        "roles": {"agg": {"args": ["--tp", "2"]}},
    }
    with pytest.raises(SyncError, match=r"roles\.agg\.args must be a mapping"):
        normalise(doc)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"resources": {"gpus_per_node": 4, "prefill_nodes": "2"}}, "resources.prefill_nodes"),
        ({"resources": {"gpus_per_node": 4, "gpus_per_decode": 2.5}}, "resources.gpus_per_decode"),
        (
            {"frontend": {"enable_multiple_frontends": True, "num_additional_frontends": "3"}},
            "frontend.num_additional_frontends",
        ),
        (
            {"backend": {"sglang_config": {"prefill": {"tensor-parallel-size": "four"}}}},
            "backend.sglang_config.prefill.tensor-parallel-size",
        ),
        (
            {"backend": {"sglang_config": {"prefill": {}, "decode": {"dp_size": [2]}}}},
            "backend.sglang_config.decode.dp_size",
        ),
    ],
)
def test_counts_must_be_integers_in_both_schemas(change: dict, message: str) -> None:
    """A quoted or fractional count is named (file and key), never a TypeError traceback."""
    doc = yamlsafe.load(FIX / "schema1.yaml")
    for key, value in change.items():
        doc[key] = {**(doc.get(key) or {}), **value}
    with pytest.raises(SyncError, match=f"{re.escape(message)} must be an integer"):
        normalise(doc, path="r.yaml")


@pytest.mark.parametrize(
    ("section", "value", "message"),
    [
        ("dynamo", "x", 'dynamo must be a mapping, got "x"'),
        ("benchmark", True, "benchmark must be a mapping, got true"),
        ("benchmark", {"env": [1]}, "benchmark.env must be a mapping, got [1]"),
        ("roles", {"agg": 1.5}, "roles.agg must be a mapping, got 1.5"),
        (
            "roles",
            {"agg": {"args": {"speculative-dspark-block-size": "x"}}},
            'roles.agg.args.speculative-dspark-block-size must be an integer, got "x"',
        ),
        (
            "roles",
            {"agg": {"args": {"speculative-dspark-block-size": True}}},
            "roles.agg.args.speculative-dspark-block-size must be an integer, got true",
        ),
        (
            "roles",
            {"agg": {"args": {"speculative-num-steps": {f"k{i}": i for i in range(20)}}}},
            # a long mapping in JSON spelling (valid YAML), cut: not Python's whole dict
            "roles.agg.args.speculative-num-steps must be an integer, got "
            '{"k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8'
            "… (120 more characters)",
        ),
        ("roles", {"agg": {}, "x": {}}, 'unknown role "x"; expected agg, prefill or decode'),
        (
            "roles",
            {"agg": {"args": [1]}},
            "roles.agg.args must be a mapping of flag names to values, got an array",
        ),
    ],
)
def test_sections_of_the_wrong_type_are_named(section: str, value: Any, message: str) -> None:
    doc = {
        "schema": 2,
        "model": {"path": "hf:o/m"},
        "resources": {"gpus_per_node": 4},
        "roles": {"agg": {}},
        section: value,
    }
    with pytest.raises(SyncError) as err:
        normalise(doc, path="r.yaml")
    assert err.value.message == message and err.value.path == "r.yaml"


def test_key_line_composes_a_file_once_per_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A render asks for dozens of key lines of one master YAML: the document is composed once
    # per content, and again only when the file changes.
    composed: list[str] = []
    compose = yamlsafe.yaml.compose

    def counting(text: str, **kwargs: Any) -> Any:
        composed.append(text)
        return compose(text, **kwargs)

    monkeypatch.setattr(yamlsafe.yaml, "compose", counting)
    path = tmp_path / "master.yaml"
    path.write_text("a:\n  b: 1\nc: &x\n  d: 2\ne:\n  <<: *x\n", encoding="utf-8")
    assert yamlsafe.key_line(path, ["a", "b"]) == 2
    assert len(composed) == 1
    assert yamlsafe.key_line(path, ["e", "d"]) == 4
    assert yamlsafe.key_line(path, ["a", "missing"]) == 1
    assert len(composed) == 1
    path.write_text("z: 0\na:\n  b: 1\n", encoding="utf-8")
    assert yamlsafe.key_line(path, ["a", "b"]) == 3
    assert len(composed) == 2
    path.write_text("a: [\n", encoding="utf-8")
    assert yamlsafe.key_line(path, ["a"]) is None
    assert yamlsafe.key_line(path, ["a"]) is None
    assert len(composed) == 3
    assert yamlsafe.key_line(tmp_path / "absent.yaml", ["a"]) is None


def test_services_as_a_mapping_of_non_mappings_is_refused_by_render(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`services: {etcd: 1}` crashed the recipe reading (AttributeError); the services layer
    names the shape it takes."""
    from syncer.cli import main

    checkout = tmp_path / "inferencex"
    shutil.copytree(EXAMPLE, checkout)
    recipe = next(checkout.rglob("disagg-variants.yaml"))
    text = recipe.read_text(encoding="utf-8")
    old = "  services:\n    - name: etcd\n"
    assert old in text
    recipe.write_text(
        text.replace(old, "  services: {etcd: 1}\n  old_services:\n    - name: etcd\n")
    )
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "render",
                "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg",
                "--inferencex",
                str(checkout),
            ]
        )
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "disagg-variants.yaml: " in err and "services must be a list of service entries" in err
