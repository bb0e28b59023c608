"""The AgentX configs an InferenceX PR adds or changes, found from its commits alone (real git
repositories in both layouts), and sync.yaml's rules mapping each key to its cookbook page."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT
from infxrepo import DSPARK_RECIPE, EXAMPLE, MASTER, InferenceXRepo, add_key, git

from syncer.errors import SyncError
from syncer.inferencex import commits
from syncer.inferencex.discovery import changed_configs
from syncer.inferencex.srtconfigs import SUBMODULE
from syncer.syncconfig import load_sync_config, parse_sync_config

DSPARK = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
DISAGG = "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"
GOLDEN = "inferencex-e2e/infx/golden_al_distribution/dsv41flash_dspark.yaml"
SHARED = "inferencex-e2e/configs/srt-recipes/agentic-single.yaml"


def found(repo: InferenceXRepo, tmp: Path, head: str, base: str | None = None):
    clone = repo.clone_for_bot(tmp)
    git("fetch", "--quiet", str(repo.work), head, cwd=clone)
    with commits.Trees(clone) as trees:
        return {f.key: f.reasons for f in changed_configs(clone, base or repo.main, head, trees)}


@pytest.fixture
def repo(tmp_path):
    return InferenceXRepo(tmp_path)


def test_a_new_key_is_found_with_nothing_registered(repo, tmp_path):
    new = "dsv41flash-fp4-gb300-sglang-agentic-" + "lowlat"
    repo.write(MASTER, add_key(repo.read(MASTER), new, conc=[1, 4]))
    head = repo.commit("new arm")
    assert found(repo, tmp_path, head) == {new: ["master entry added"]}


def test_a_recipe_change_finds_the_keys_reading_it_and_only_sglang_agentic_ones(repo, tmp_path):
    # The vLLM key of the same model and the multi-node key read other recipes.
    repo.write(DSPARK_RECIPE, repo.read(DSPARK_RECIPE) + "\n# retuned\n")
    head = repo.commit("retune")
    assert found(repo, tmp_path, head) == {DSPARK: [f"{DSPARK_RECIPE} changed"]}


def test_changed_entry_golden_al_shared_block_and_submodule_pin(repo, tmp_path):
    master = repo.read(MASTER).replace("conc-list: [48, 64]", "conc-list: [48]")
    repo.write(MASTER, master)
    head = repo.commit("disagg entry")
    assert found(repo, tmp_path, head) == {DISAGG: ["master entry changed"]}

    repo.checkout(repo.main)
    repo.write(GOLDEN, repo.read(GOLDEN) + "\n")
    repo.write(SHARED, repo.read(SHARED) + "\n")
    head = repo.commit("golden + shared")
    got = found(repo, tmp_path / "b", head)
    assert got == {
        DSPARK: [f"{SHARED} changed", f"{GOLDEN} changed"],
        DISAGG: [f"{GOLDEN} changed"],
    }

    repo.checkout(repo.main)
    git("update-index", "--add", "--cacheinfo", f"160000,{'cd' * 20},{SUBMODULE}", cwd=repo.work)
    git("commit", "--quiet", "-m", "srt-slurm pin", cwd=repo.work)
    head = git("rev-parse", "HEAD", cwd=repo.work)
    got = found(repo, tmp_path / "c", head)
    assert got == {DSPARK: [f"{SUBMODULE} changed"], DISAGG: [f"{SUBMODULE} changed"]}


def test_old_layout_at_the_root(tmp_path):
    repo = InferenceXRepo(tmp_path, tree=EXAMPLE / "inferencex-e2e")
    recipe = DSPARK_RECIPE.removeprefix("inferencex-e2e/")
    repo.write(recipe, repo.read(recipe) + "\n# retuned\n")
    head = repo.commit("retune")
    # The old layout pins no srt-slurm submodule; its recipe and golden files sit at the root.
    assert found(repo, tmp_path, head) == {DSPARK: [f"{recipe} changed"]}


def test_nothing_relevant_changed(repo, tmp_path):
    repo.write("README.md", "docs only\n")
    head = repo.commit("docs")
    assert found(repo, tmp_path, head) == {}


def test_bundled_rules_map_a_key_no_file_names():
    config = load_sync_config(ROOT / "sync.yaml")
    key = "dsv41flash-fp4-b300-sglang-agentic-" + "wide"
    model, why = config.model_for(key, "dsv41flash", "b300")
    assert (model.path, why) == ("deepseek-ai/deepseek-v4_1", None)
    model, why = config.model_for("qwen4-fp8-b200-sglang-agentic", "qwen4", "b200")
    assert model is None
    assert why == (
        "no cookbook page for qwen4-fp8-b200-sglang-agentic: no model of sync.yaml matches its "
        "model prefix qwen4 or its key"
    )
    model, why = config.model_for("dsv41flash-fp4-mi355x-sglang-agentic", "dsv41flash", "mi355x")
    assert model is None
    assert why.endswith("the DeepSeek-V4.1 page (deepseek-ai/deepseek-v4_1) has no mi355x chip")


def test_match_rules_by_key_pattern_and_bad_rules():
    text = """
inferencex: {main: "%s"}
models:
  - path: zai-org/glm-5
    model: GLM-5
    page: docs/glm.mdx
    section: AgentX
    hardware: [{id: b200, label: B200}]
    match: {keys: ["glm5*-sglang-agentic*"]}
""" % ("a" * 40)
    config = parse_sync_config(text)
    model, _ = config.model_for("glm5-fp8-b200-sglang-agentic", "glm5", "b200")
    assert model.path == "zai-org/glm-5"
    assert config.model_for("glm5-fp8-b200-vllm-agentic", "glm5", "b200")[0] is None
    refused = r"sync.yaml:4:5: model zai-org/glm-5: expected 'configs' or 'match' rules"
    with pytest.raises(SyncError, match=refused):
        parse_sync_config(text.replace('    match: {keys: ["glm5*-sglang-agentic*"]}\n', ""))
    with pytest.raises(SyncError, match=r"unknown key \"prefix\""):
        parse_sync_config(text.replace("keys:", "prefix:"))


def test_a_master_config_that_does_not_parse_is_the_prs_error(repo, tmp_path):
    repo.write(MASTER, repo.read(MASTER) + "\nbroken: [unclosed\n")
    head = repo.commit("broken master")
    with pytest.raises(SyncError, match=r"nvidia-master\.yaml"):
        found(repo, tmp_path, head)


def test_published_pins_are_read_from_every_module_version(reference):
    """A config's state comes from the module already published: each reference module (cell
    provenance of every format) gives a pin for each of its configs, as its cells record it."""
    from syncer.cookbook.jsmodule import load_module
    from syncer.usecases.generate import module_pins

    modules = sorted((reference / "cookbook" / "agentx").rglob("*.jsx"))
    assert modules
    for path in modules:
        value = load_module(path).value
        pins = module_pins(value, str(path))
        keys = list(dict.fromkeys(c["configKey"] for c in value["cells"]))
        assert list(pins) == keys, path
        for cell in value["cells"]:
            prov = {**(cell.get("prov") or {}), **cell["points"][0]}
            pin = pins[cell["configKey"]]
            if "sha" in prov:  # the newest formats; older ones link the recipe at the commit
                assert pin.sha == prov["sha"], path
            assert str(pin.status) == prov["status"], path


def test_a_runner_script_is_read_only_by_the_keys_whose_srt_slurm_it_chooses(tmp_path):
    """The old layout's runner clones srt-slurm per key: a change to it changes those keys'
    release. A runner that clones none for a key (the submodule pin decides) changes nothing."""
    eras = ROOT / "tests" / "fixtures" / "eras" / "inferencex"
    repo = InferenceXRepo(tmp_path / "eras", tree=eras)
    script = "runners/launch_gb300-test.sh"
    text = repo.read(script)
    repo.write(script, text.replace("    git checkout v1.0.38\n", "    git checkout main\n"))
    head = repo.commit("m2: srt-slurm main")
    changed = found(repo, tmp_path / "a", head)
    assert set(changed) >= {
        "m2-fp4-gb300-dynamo-sglang-agentic-agg",
        "m2-fp4-gb300-dynamo-sglang-agentic-disagg",
    }
    assert set(changed["m2-fp4-gb300-dynamo-sglang-agentic-agg"]) == {f"{script} changed"}
    # A runner cloning no srt-slurm at all: editing it is no change of any key.
    repo.write(script, "#!/usr/bin/env bash\necho 'no srt-slurm here'\n")
    quiet = repo.commit("runner without srt-slurm")
    repo.write(script, "#!/usr/bin/env bash\necho 'still none'\n")
    edited = repo.commit("runner edited")
    assert found(repo, tmp_path / "b", edited, base=quiet) == {}


def test_the_reference_curve_changes_only_the_keys_whose_rows_read_it(tmp_path):
    """Issue 40.8: the old layout's reference acceptance curve flagged every key of the
    checkout, though its injector reads it only for a row asking for synthetic acceptance
    without a length of its own."""
    repo = InferenceXRepo(tmp_path, tree=EXAMPLE / "inferencex-e2e")
    curve = "benchmarks/speedbench-reference-al.yaml"
    repo.write(curve, "dsv41flash:\n  thinking_on: {5: 3.5}\n")
    base = repo.commit("the reference curve")
    repo.write(curve, "dsv41flash:\n  thinking_on: {5: 3.6}\n")
    head = repo.commit("curve retuned")
    assert found(repo, tmp_path / "a", head, base=base) == {}
    master = "configs/nvidia-master.yaml"
    text = repo.read(master)
    row = "      - { tp: 4, ep: 1, kv-offloading: none,"
    assert row in text, "the example's first dspark row"
    asks = row.replace("{ tp:", "{ additional-settings: [SYNTHETIC_ACCEPTANCE=true], tp:")
    repo.write(master, text.replace(row, asks, 1))
    asking = repo.commit("synthetic acceptance from the curve")
    repo.write(curve, "dsv41flash:\n  thinking_on: {5: 3.7}\n")
    again = repo.commit("curve retuned again")
    assert found(repo, tmp_path / "b", again, base=asking) == {DSPARK: [f"{curve} changed"]}
