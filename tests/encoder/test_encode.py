"""Encoder: compaction, roundtrip proof, atomic writes, re-encoding every reference module."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from conftest import ROOT

from syncer.cookbook.decode import Decoder, apply_diff
from syncer.cookbook.jsmodule import load_module, parse_module
from syncer.cookbook.shell import format_block
from syncer.encoder import compact, encode, proof
from syncer.encoder.cells import cells_from_module
from syncer.errors import SyncError
from syncer.fsio import write_atomic
from syncer.model import Selection

# Our own model (agg + disagg cells, Dynamo and SGLang submissions, several concurrencies, a
# pinned and an in-progress config): the committed example module, kept current by the drift
# gate (test_generate.test_committed_module_and_page_are_current).
MODULE = ROOT / "cookbook_snippets" / "deepseek-ai" / "deepseek-v4_1.jsx"


def load_spec():
    """The encoder's input, decoded from the committed module (no render, no frozen dump)."""
    module = load_module(MODULE)
    return cells_from_module(module.value, Decoder(module.value), str(MODULE))


def test_committed_module_is_the_encoders_fixed_point() -> None:
    spec = load_spec()
    _, text, cases = encode.encode_module(spec, path="fixture")
    assert text == MODULE.read_text(encoding="utf-8")
    # one number for "cases" everywhere: the cases `sync decode --all` lists
    assert cases == sum(1 for _ in Decoder(parse_module(text).value, "m").cases())


def test_compaction_uses_pool_ref_from_and_patches() -> None:
    spec = load_spec()
    value = encode.compact_module(spec)
    entries = [
        (ci, r, b)
        for ci, cell in enumerate(value["cells"])
        for r, router in cell["routers"].items()
        for b in router["blocks"]
    ]
    # The non-submitted router is derived from the submitted one inside the cell.
    dspark = value["cells"][0]
    assert dspark["submitted"] == "sglang"
    assert [b.get("from") for b in dspark["routers"]["dynamo"]["blocks"]][-1] == 0
    # Later cells point back at earlier ones, never forward.
    refs = [(ci, b["ref"]) for ci, _, b in entries if "ref" in b]
    assert refs and all(ref[0] < ci for ci, ref in refs)
    # Shared env dicts live once in the pool, and every envRef resolves.
    assert value["envs"]
    used = {b["envRef"] for _, _, b in entries if "envRef" in b}
    assert used == set(range(len(value["envs"])))
    # Patches: one element per point-0 block, null where unchanged, only on points after 0.
    for cell in value["cells"]:
        assert "patch" not in cell["points"][0]
        for point in cell["points"][1:]:
            for router, patch in point.get("patch", {}).items():
                assert isinstance(patch, list)
                assert len(patch) == len(cell["routers"][router]["blocks"])
    dynamo_patch = value["cells"][0]["points"][1]["patch"]["dynamo"]
    assert dynamo_patch[:2] == [None, None]
    assert set(dynamo_patch[2]) == {"args"}


def test_patch_key_order_and_minimal_diff() -> None:
    base = {
        "kind": "worker",
        "cmd": "python3 -m sglang.launch_server",
        "env": {"A": "1", "B": "2"},
        "args": [["--model-path", "m"], ["--a", "1"], ["--b", "2"], ["--c", "3"]],
    }
    target = copy.deepcopy(base)
    target["args"] = [["--model-path", "m"], ["--a", "9"], ["--d", "4"], ["--zz"]]
    target["env"] = {"A": "1", "C": "3"}
    d = compact.args_env_diff(base, target)
    assert d == {
        "args": {"--a": ["9"], "--d": ["4"], "--zz": [], "--b": None, "--c": None},
        "env": {"C": "3", "B": None},
    }
    assert list(d["args"]) == ["--a", "--d", "--zz", "--b", "--c"]
    assert compact.same(apply_diff(base, d), target)


def test_repeated_flags_with_different_values_are_stored_whole() -> None:
    base = {"kind": "sglang-router", "cmd": "r", "env": {}, "args": [["--decode", "a"]]}
    target = {
        "kind": "sglang-router",
        "cmd": "r",
        "env": {},
        "args": [["--decode", "a"], ["--decode", "b"]],
    }
    assert compact.args_env_diff(base, target) is None
    assert compact.patch_element(base, target, 6) == {"block": target}


def test_points_equal_to_point0_carry_no_patch() -> None:
    spec = load_spec()
    cell = spec.cells[0]
    twin = copy.deepcopy(cell.points[0])
    twin.concs = [2]
    cell.points.insert(1, twin)
    value, _, _ = encode.encode_module(spec, path="fixture")
    assert "patch" not in value["cells"][0]["points"][1]
    assert "patch" in value["cells"][0]["points"][2]


def test_different_block_count_becomes_replace() -> None:
    spec = load_spec()
    cell = next(c for c in spec.cells if c.submitted == "dynamo")
    extra = copy.deepcopy(cell.points[0])
    extra.concs = [999]
    extra.blocks["dynamo"] = extra.blocks["dynamo"][:-1]
    cell.points.append(extra)
    value, _, _ = encode.encode_module(spec, path="fixture")
    cell_value = next(c for c in value["cells"] if c["id"] == cell.id)
    assert set(cell_value["points"][-1]["patch"]["dynamo"]) == {"replace"}


def test_point_provenance_overrides_cell_prov() -> None:
    spec = load_spec()
    cell = spec.cells[0]
    for i, point in enumerate(cell.points):
        point.prov["job"] = f"41000000001/job/{500 + i}"
    cell.points[-1].prov["run"] = "41000000001/attempts/2"
    value, _, _ = encode.encode_module(spec, path="fixture")
    out = value["cells"][0]
    assert "job" not in out["prov"] and "run" not in out["prov"]
    assert out["points"][0]["job"] == "41000000001/job/500"
    assert out["points"][-1]["run"] == "41000000001/attempts/2"
    info = Decoder(value).point_info(0, len(cell.points) - 1)
    assert info["runUrl"].endswith("/actions/runs/41000000001/attempts/2")
    assert info["status"] == "verified-pr"


def test_roundtrip_refuses_and_names_the_difference() -> None:
    spec = load_spec()
    value = encode.compact_module(spec)
    # Corrupt one patch value: the proof must name cell, point, router and the flag.
    patch = value["cells"][0]["points"][1]["patch"]["sglang"][0]
    flag = next(iter(patch["args"]))
    patch["args"][flag] = ["12345"]
    with pytest.raises(SyncError) as err:
        proof.verify_roundtrip(value, spec, path="m.jsx")
    message = str(err.value)
    assert spec.cells[0].id in message and "point 1" in message and "router sglang" in message
    assert flag in message and "12345" in message


def test_encoder_bug_is_caught_before_writing(tmp_path: Path, monkeypatch) -> None:
    spec = load_spec()
    target = tmp_path / "m.jsx"
    target.write_text("old\n", encoding="utf-8")
    real = encode.compact_module

    def broken(s):
        value = real(s)
        value["envs"][0] = {**value["envs"][0], "INJECTED": "1"}
        return value

    monkeypatch.setattr(encode, "compact_module", broken)
    with pytest.raises(SyncError, match="INJECTED"):
        _, text, _ = encode.encode_module(spec, path=str(target))
        write_atomic(target, text)
    assert target.read_text(encoding="utf-8") == "old\n"


def test_unsafe_values_are_refused() -> None:
    spec = load_spec()
    # Printed double-quoted, so the shell would expand a variable nobody is told to set.
    block = spec.cells[0].points[0].blocks["sglang"][0]
    block["env"] = dict(sorted({**block["env"], "EVIL": "http://$EVIL_HOST:1"}.items()))
    with pytest.raises(SyncError, match="EVIL_HOST"):
        encode.encode_module(spec, path="fixture")


def test_write_atomic_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b.jsx"
    write_atomic(target, "x\n")
    write_atomic(target, "y\n")
    assert target.read_text(encoding="utf-8") == "y\n"
    assert [p.name for p in target.parent.iterdir()] == ["b.jsx"]


def test_header_lists_prs_ascending() -> None:
    lines = encode.header_lines({"main": "ab" * 20, "prs": {"3840": {}, "978": {}, "3606": {}}})
    assert lines[2] == (
        "// (SemiAnalysisAI/InferenceX main@abababababab plus open PRs #978, #3606, #3840), "
        "with SA-specific settings removed."
    )
    assert encode.header_lines({"main": "ab" * 20, "prs": {}})[2].startswith(
        "// (SemiAnalysisAI/InferenceX main@abababababab), with"
    )
    with pytest.raises(SyncError):
        encode.header_lines({"main": "*/ evil", "prs": {}})


# --- every reference module ------------------------------------------------------------------


def _reference_modules(reference: Path) -> list[Path]:
    return sorted((reference / "cookbook" / "agentx").rglob("*.jsx"))


def test_reencode_reference_modules_match_the_oracle(reference: Path, tmp_path: Path) -> None:
    """Every reference module, re-encoded in the newest format, decodes to exactly the cases the
    cookbook's own decoder produced from the original (blocks and printed text), and is no
    larger than the original."""
    modules = _reference_modules(reference)
    assert modules
    for path in modules:
        rel = path.relative_to(reference / "cookbook" / "agentx")
        out = tmp_path / rel
        text, _ = encode.reencode_file(path, out)
        assert out.read_text(encoding="utf-8") == text
        assert len(text.encode("utf-8")) <= path.stat().st_size, rel
        new = load_module(out)
        assert new.header == load_module(path).header
        assert all("prov" in cell for cell in new.value["cells"])
        decoder = Decoder(new.value, str(out))
        oracle = json.loads((reference / "oracle" / rel.with_suffix(".json")).read_text())
        cases = {(c.cell, c.point, c.router, c.kv): c for c in decoder.cases(fresh=False)}
        assert len(cases) == oracle["caseCount"] == len(oracle["cases"])
        for expected in oracle["cases"]:
            got = cases[(expected["cell"], expected["point"], expected["router"], expected["kv"])]
            assert got.cell_id == expected["cellId"]
            assert compact.same_list(got.blocks, expected["blocks"]), (rel, expected["cellId"])
            assert [format_block(b) for b in got.blocks] == expected["text"]


def test_reencode_is_a_fixed_point(reference: Path, tmp_path: Path) -> None:
    """Re-encoding an already re-encoded module changes nothing."""
    path = reference / "cookbook" / "agentx" / "deepseek-ai" / "deepseek-v4_1" / "2b484a51.jsx"
    once, _ = encode.reencode_file(path, tmp_path / "once.jsx")
    twice, _ = encode.reencode_file(tmp_path / "once.jsx")
    assert once == twice


def test_reencode_refuses_unknown_keys(tmp_path: Path) -> None:
    module = parse_module(MODULE.read_text(encoding="utf-8"))
    module.value["cells"][0]["mystery"] = 1
    from syncer.encoder.emit import emit_module

    bad = tmp_path / "bad.jsx"
    bad.write_text(emit_module(module.header, "agentx", module.value), encoding="utf-8")
    with pytest.raises(SyncError, match="mystery"):
        encode.reencode_file(bad, tmp_path / "out.jsx")
    assert not (tmp_path / "out.jsx").exists()


def _as_old_format(value: dict) -> dict:
    """Our example module rewritten the way the older generators stored it: per-point provenance
    with full URLs, checkpoint precision, and (oldest) no KV dimension and router notes."""
    old = copy.deepcopy(value)
    repo = old["source"]["repo"]
    old["checkpoints"] = [{**c, "precision": "fp4"} for c in old["checkpoints"]]
    old.pop("kvMooncake", None)
    for cell in old["cells"]:
        prov = cell.pop("prov")
        cell.pop("kv")
        for router in cell["routers"].values():
            router["notes"] = ["a note the oldest decoder printed"]
        for i, point in enumerate(cell["points"]):
            merged = {**prov, **{k: point.pop(k) for k in list(point) if k in prov or k == "job"}}
            point.pop("kv")
            point["recipeUrl"] = f"{repo}/blob/{merged['sha']}/{merged['recipe']}"
            point["status"] = merged["status"]
            if "run" in merged:
                point["runUrl"] = f"{repo}/actions/runs/{merged['run']}"
            point["prUrl"] = f"{repo}/pull/{merged['pr']}"
            point["pr"] = merged["pr"]
            point["sha"] = merged["sha"]
            if "comment" in merged:
                point["useComment"] = f"{repo}/pull/{merged['pr']}#issuecomment-{merged['comment']}"
            point["jobUrl"] = f"{repo}/actions/runs/41000000001/job/{700 + i}"
    return old


def test_reencode_oldest_format(tmp_path: Path) -> None:
    from syncer.encoder.emit import emit_module

    module = parse_module(MODULE.read_text(encoding="utf-8"))
    old_value = _as_old_format(module.value)
    source = tmp_path / "old.jsx"
    source.write_text(emit_module(module.header, "agentx", old_value), encoding="utf-8")
    text, cases = encode.reencode_file(source, tmp_path / "new.jsx")
    new = parse_module(text).value
    assert cases > 0
    assert all("prov" in c and c["kv"]["available"] == ["none"] for c in new["cells"])
    assert "precision" not in new["checkpoints"][0]
    assert new["cells"][0]["points"][1]["job"] == "41000000001/job/701"
    old_decoder, new_decoder = Decoder(old_value), Decoder(new)
    for ci, cell in enumerate(new["cells"]):
        for pi in range(len(cell["points"])):
            assert (
                new_decoder.point_info(ci, pi)["jobUrl"] == old_decoder.point_info(ci, pi)["jobUrl"]
            )
            for router in cell["routers"]:
                assert new_decoder.blocks_for(Selection(ci, pi, router)) == old_decoder.blocks_for(
                    Selection(ci, pi, router)
                )


def test_reencode_refuses_urls_it_cannot_express(tmp_path: Path) -> None:
    from syncer.encoder.emit import emit_module

    module = parse_module(MODULE.read_text(encoding="utf-8"))
    old_value = _as_old_format(module.value)
    old_value["cells"][0]["points"][0]["runUrl"] = "https://example.com/run/1"
    source = tmp_path / "old.jsx"
    source.write_text(emit_module(module.header, "agentx", old_value), encoding="utf-8")
    with pytest.raises(SyncError, match=r"example\.com"):
        encode.reencode_file(source, tmp_path / "new.jsx")
    assert not (tmp_path / "new.jsx").exists()


@pytest.mark.parametrize("install", ["0", '"pip install x"', "[1]"])
def test_a_router_install_that_is_no_list_of_lines_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], install: str
) -> None:
    """`sync reencode` (and `generate`, which re-encodes the existing module) read a router's
    `install` as a list of lines and crashed on anything else (exit 3); the module's shape check
    names it, with its line."""
    from syncer.cli import main

    text = MODULE.read_text(encoding="utf-8")
    old = '"routers": {\n    "sglang": {\n     "install": [],'
    assert old in text
    new = old.replace("[]", install)
    bad = tmp_path / "m.jsx"
    bad.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main(["reencode", str(bad)])
    out, err = capsys.readouterr()
    assert exc.value.code == 2, err
    assert out == "" and err.startswith("error: ") and err.count("\n") == 1
    assert f"{bad}:" in err and "cells[0].routers.sglang.install: expected a list of lines" in err


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda cell: cell.pop("id"), 'missing "id"; cannot re-encode'),
        (lambda cell: cell.update(hw={"id": "gb300"}), '"hw" must be a string, got an object'),
        (lambda cell: cell["points"][0].update(concs=None), '"concs" is null; cannot re-encode'),
    ],
)
def test_reencode_refuses_a_cell_it_cannot_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit, message: str
) -> None:  # type: ignore[no-untyped-def]
    """A cell without a string id or hw, or a point whose concs are null, decodes (the page
    tolerates them) but cannot be re-encoded: it was a KeyError / TypeError (exit 3)."""
    from syncer.cli import main

    data = load_module(MODULE).value
    edit(data["cells"][1])
    bad = tmp_path / "m.jsx"
    bad.write_text("export const agentx = " + json.dumps(data, indent=1) + ";\n")
    with pytest.raises(SystemExit) as exc:
        main(["reencode", str(bad)])
    out, err = capsys.readouterr()
    assert exc.value.code == 2, err
    assert out == "" and err.startswith("error: ") and err.count("\n") == 1
    assert f"{bad}: cell 1 " in err and message in err


@pytest.mark.parametrize("key", ["install", "files"])
def test_reencode_reads_a_null_router_list_as_an_absent_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    """The shape check lets a router's `install` / `files` be null (as if absent); the
    re-encoder took null for a list and crashed (exit 3)."""
    from syncer.cli import main

    data = load_module(MODULE).value
    data["cells"][0]["routers"]["sglang"][key] = None
    bad = tmp_path / "m.jsx"
    bad.write_text("export const agentx = " + json.dumps(data, indent=1) + ";\n")
    with pytest.raises(SystemExit) as exc:
        main(["reencode", str(bad)])
    out, err = capsys.readouterr()
    assert exc.value.code == 0, err
    assert f'"{key}": []' in out
