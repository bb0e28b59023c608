"""Script-launched keys: recognised from the master, their bash script found by the runner
launch scripts' name rule, and `sync render` refusing them by name (exit 2)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from syncer.cli import main
from syncer.errors import SyncError
from syncer.inferencex.master import load_master
from syncer.inferencex.render import render_config
from syncer.inferencex.scripts import script_launch

INFX = ROOT / "tests" / "fixtures" / "scriptera" / "inferencex"
SNAPSHOT = ROOT.parent / "shared" / "reference" / "inferencex-snapshots" / "843c6254"
KEY = "m1-fp8-b300-sglang-agentic-mtp"


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_framework_tagged_script_is_found() -> None:
    launch = script_launch(load_master(INFX), KEY)
    assert launch is not None and launch.found and not launch.multinode
    assert {r.name for r in launch.rows.values()} == {
        "benchmarks/single_node/agentic/m1_fp8_b300_sglang_mtp.sh"
    }
    assert launch.rows[0].candidates == (
        "benchmarks/single_node/agentic/m1_fp8_b300_sglang_mtp.sh",
        "benchmarks/single_node/agentic/m1_fp8_b300_mtp.sh",
    )


def test_older_name_without_the_engine_is_the_fallback() -> None:
    launch = script_launch(load_master(INFX), "m1-fp8-h200-sglang-agentic-mtp")
    assert launch is not None and launch.found
    assert launch.rows[0].name == "benchmarks/single_node/agentic/m1_fp8_h200_mtp.sh"


def test_a_row_naming_a_recipe_is_not_script_launched() -> None:
    assert script_launch(load_master(INFX), "m1-fp8-b300-dynamo-sglang-agentic-agg") is None
    assert script_launch(load_master(INFX), "no-such-key") is None


def test_both_names_present_prefers_the_tagged_one_and_says_so(tmp_path: Path) -> None:
    tree = tmp_path / "ix"
    shutil.copytree(INFX, tree)
    agentic = tree / "benchmarks" / "single_node" / "agentic"
    shutil.copy(agentic / "m1_fp8_h200_mtp.sh", agentic / "m1_fp8_h200_sglang_mtp.sh")
    launch = script_launch(load_master(tree), "m1-fp8-h200-sglang-agentic-mtp")
    assert launch is not None
    assert launch.rows[0].name.endswith("m1_fp8_h200_sglang_mtp.sh")
    assert launch.rows[0].also == ("benchmarks/single_node/agentic/m1_fp8_h200_mtp.sh",)
    assert launch.describe() == (
        "benchmarks/single_node/agentic/m1_fp8_h200_sglang_mtp.sh; launch scripts without the "
        "engine name run benchmarks/single_node/agentic/m1_fp8_h200_mtp.sh"
    )


def test_render_refuses_naming_the_script(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "render", KEY, "--inferencex", str(INFX))
    assert code == 2 and out == ""
    assert (
        "launched by a bash script (benchmarks/single_node/agentic/m1_fp8_b300_sglang_mtp.sh)"
        in err
    )
    assert "commands come from its run's logs" in err
    assert "nvidia-master.yaml:4:" in err  # the key's line in the master


def test_missing_script_names_every_name_tried(tmp_path: Path) -> None:
    tree = tmp_path / "ix"
    shutil.copytree(INFX, tree)
    (tree / "benchmarks" / "single_node" / "agentic" / "m1_fp8_b300_sglang_mtp.sh").unlink()
    with pytest.raises(SyncError) as exc:
        render_config(tree, KEY)
    assert "launched by a bash script" in exc.value.message
    assert (
        "m1_fp8_b300_sglang_mtp.sh or benchmarks/single_node/agentic/m1_fp8_b300_mtp.sh "
        "(not in this checkout)" in exc.value.message
    )


def test_rows_of_a_script_key_parse_without_a_recipe() -> None:
    entry = load_master(INFX).entry(KEY, script_launched=True)
    assert [(j.row.tp, j.row.ep, j.row.dp_attn, j.concs) for j in entry.jobs()] == [
        (4, 1, False, [1]),
        (4, 1, False, [4]),
        (4, 4, True, [32]),
        (4, 1, False, [16]),
    ]
    with pytest.raises(SyncError, match="no srt-recipe"):
        load_master(INFX).entry(KEY)


# ---- the real tree -------------------------------------------------------------------------


def _snapshot_single_node_sglang_keys() -> dict[str, dict]:
    keys = {}
    for master in sorted((SNAPSHOT / "configs").glob("*-master.yaml")):
        # libyaml's parser (the pure-Python one takes a second over these masters)
        text = master.read_text()
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        for key, entry in (yaml.load(text, Loader=loader) or {}).items():
            if not isinstance(entry, dict) or entry.get("multinode"):
                continue
            if "sglang" not in str(entry.get("framework")):
                continue
            if (entry.get("scenarios") or {}).get("agentic-coding"):
                keys[key] = entry
    return keys


@pytest.mark.skipif(not SNAPSHOT.is_dir(), reason="../shared/reference snapshot not present")
def test_every_single_node_sglang_agentic_key_of_the_snapshot_is_script_launched() -> None:
    master = load_master(SNAPSHOT)
    keys = _snapshot_single_node_sglang_keys()
    assert len(keys) == 20
    missing = {}
    for key in keys:
        launch = script_launch(master, key)
        assert launch is not None, key
        for ref in launch.rows.values():
            if ref.path is None:
                # Only a script the tree really lacks may be missing: no name tried exists.
                assert not any((master.layout_root / c).exists() for c in ref.candidates)
                missing[key] = ref.candidates
            else:
                assert ref.path.is_file() and ref.name.startswith("benchmarks/single_node/agentic/")
                assert ref.path.name.endswith(("_mtp.sh", ".sh"))
    # The one key of this tree whose rows have no spec decoding names a script the tree lacks
    # (its MTP sibling has one): reported, never replaced by a guess.
    assert missing == {
        "qwen3.5-fp8-h100-sglang-agentic": (
            "benchmarks/single_node/agentic/qwen3.5_fp8_h100_sglang.sh",
            "benchmarks/single_node/agentic/qwen3.5_fp8_h100.sh",
        )
    }
    found = {key: script_launch(master, key).rows[0].name for key in keys}  # type: ignore[union-attr]
    assert found["qwen3.5-fp8-b300-sglang-agentic-mtp"].endswith("qwen3.5_fp8_b300_sglang_mtp.sh")
    assert found["qwen3.5-fp8-mi300x-sglang-agentic-mtp"].endswith("qwen3.5_fp8_mi300x_mtp.sh")
    assert found["qwen3.5-fp8-h200-sglang-agentic-mtp"].endswith("qwen3.5_fp8_h200_mtp.sh")


@pytest.mark.skipif(not SNAPSHOT.is_dir(), reason="../shared/reference snapshot not present")
def test_snapshot_render_refusal(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(
        capsys, "render", "dsv4-fp4-b300-sglang-agentic-hicache-mtp", "--inferencex", str(SNAPSHOT)
    )
    assert code == 2
    assert (
        "launched by a bash script (benchmarks/single_node/agentic/dsv4_fp4_b300_sglang_mtp.sh)"
        in err
    )


@pytest.mark.parametrize("how", ["climbs out", "linked out"])
def test_a_script_outside_the_checkout_is_never_looked_at(tmp_path: Path, how: str) -> None:
    """The script name is built from master values a pull request controls: a name climbing
    out of the checkout, or a script that is a link leading out, counts as absent."""
    tree = tmp_path / "ix"
    shutil.copytree(INFX, tree)
    outside = tmp_path / "outside"
    outside.mkdir()
    name = "m1_fp8_b300_sglang_mtp.sh"
    (outside / name).write_text("#!/bin/bash\n")
    master = tree / "configs" / "nvidia-master.yaml"
    agentic = tree / "benchmarks" / "single_node" / "agentic"
    if how == "climbs out":
        raw = yaml.safe_load(master.read_text())
        for row in raw[KEY]["scenarios"]["agentic-coding"][0]["search-space"]:
            # benchmarks/single_node/agentic/../../../../outside/m1_... is tmp_path/outside/...
            row["exp-name"] = "../../../../outside/m1"
        master.write_text(yaml.safe_dump(raw))
    else:
        (agentic / name).unlink()
        (agentic / name).symlink_to(outside / name)
    launch = script_launch(load_master(tree), KEY)
    assert launch is not None
    assert not launch.found and all(ref.path is None for ref in launch.rows.values())


def test_a_row_level_config_file_names_a_recipe_for_the_parser_and_the_script_rule(
    tmp_path: Path,
) -> None:
    # One rule (master.launched_by_script): scripts.py used to read CONFIG_FILE= only in the
    # role blocks, so a row-level one made the key script-launched for it and not for the
    # master parser.
    tree = tmp_path / "ix"
    shutil.copytree(INFX, tree)
    path = tree / "configs" / "nvidia-master.yaml"
    doc = yaml.safe_load(path.read_text())
    for block in doc[KEY]["scenarios"]["agentic-coding"]:
        for row in block["search-space"]:
            row["additional-settings"] = ["CONFIG_FILE=recipes/m1/agg.yaml"]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    master = load_master(tree)
    assert script_launch(master, KEY) is None
    entry = master.entry(KEY)
    assert [row.recipe for row in entry.rows] == ["m1/agg.yaml"] * 3
    with pytest.raises(SyncError, match="is absent from the tree"):
        render_config(tree, KEY)
