"""`sync list`: the AgentX SGLang configs of a checkout, how each launches, the model taking it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT

from syncer.cli import main

SNAPSHOT = "inferencex-snapshots/843c6254"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(["list", *args])
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_the_bundled_example_lists_its_two_configs_with_their_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "read sync.yaml: sync.yaml (the bundled example)"
    assert lines[1] == "read InferenceX checkout: examples/inferencex (the bundled example)"
    rows = [line.split() for line in lines[2:4]]
    assert rows == [
        ["dsv41flash-fp4-gb300-sglang-agentic-dspark", "recipe", "single-node", "agg", "gb300",
         "deepseek-ai/deepseek-v4_1"],
        ["dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg", "recipe", "multi-node", "disagg",
         "gb300", "deepseek-ai/deepseek-v4_1"],
    ]  # fmt: skip
    assert lines[4] == (
        "2 SGLang AgentX configs: 2 launched from a recipe, 0 by a script; "
        "2 taken by a cookbook model"
    )


def test_json_says_which_model_takes_a_key_by_a_match_rule_and_why_none_takes_another(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # One config listed, the other claimed by the match rule only; then no chip for it.
    text = (ROOT / "sync.yaml").read_text()
    listed, _, _ = text.partition("      # No authorised run yet")
    config = tmp_path / "sync.yaml"
    config.write_text(listed.replace("hicache: dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg",
                                     "hicache: null"))  # fmt: skip
    code, out, _ = run_cli(capsys, "--format", "json", "--config", str(config))
    assert code == 0
    doc = json.loads(out)
    assert [(c["model"], c["listed"]) for c in doc["configs"]] == [
        ("deepseek-ai/deepseek-v4_1", True),
        ("deepseek-ai/deepseek-v4_1", False),
    ]
    assert (doc["read"][0]["path"], doc["read"][0]["bundled"]) == (str(config), False)
    config.write_text(config.read_text().replace("prefix: [dsv41flash, dsv41]", "prefix: [dsv4]"))
    code, out, _ = run_cli(capsys, "--format", "json", "--config", str(config))
    second = json.loads(out)["configs"][1]
    assert (second["model"], second["why_not"]) == (
        None,
        "no cookbook page for dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg: no model of "
        "sync.yaml matches its model prefix dsv41flash or its key",
    )


def test_a_real_checkout_lists_script_and_recipe_keys_and_skips_other_frameworks(
    capsys: pytest.CaptureFixture[str], reference: Path
) -> None:
    tree = reference / SNAPSHOT
    code, out, _ = run_cli(capsys, "--inferencex", str(tree), "--format", "json")
    assert code == 0
    configs = json.loads(out)["configs"]
    keys = [c["key"] for c in configs]
    assert len(keys) == len(set(keys)) > 0
    assert all("sglang" in key for key in keys)  # vLLM, TRT-LLM and ATOM keys are not listed
    assert {c["launch"] for c in configs} == {"recipe", "script"}
    by_key = {c["key"]: c for c in configs}
    glm = by_key["glm5.2-fp4-gb200-dynamo-sglang-agentic-disagg"]
    assert (glm["launch"], glm["nodes"], glm["shape"], glm["hardware"]) == (
        "recipe", "multi-node", "disagg", "gb200",
    )  # fmt: skip
    # the bundled sync.yaml maps none of the snapshot's models: each says why
    assert all(
        c["model"] is None and c["why_not"] for c in configs if c["model_prefix"] == "glm5.2"
    )
