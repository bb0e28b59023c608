"""`sync config check` / `sync config schema` (issue 37.5): a sync.yaml's keys looked up in the
master configs, each missing one on its own sync.yaml line; the shipped JSON schema held to
the parser's vocabulary and to every sync.yaml the project ships."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from conftest import ROOT

from syncer import syncconfig
from syncer.cli import main

SCHEMA = json.loads((ROOT / "syncer/data/sync.schema.json").read_text(encoding="utf-8"))
SHIPPED = [ROOT / "sync.yaml", ROOT / "configs/sglang-cookbook.sync.yaml"]
INFX = str(ROOT / "examples/inferencex")
DISAGG = "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(["config", *args])
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_the_bundled_sync_yaml_checks_clean(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check")
    assert code == 0
    assert out.splitlines()[-1] == (
        "✓ 1 model, 2 configs listed and 1 KV donor named: every key is in the checkout's "
        "master configs"
    )


def test_a_mistyped_key_is_named_on_its_sync_yaml_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = (ROOT / "sync.yaml").read_text(encoding="utf-8")
    typo = DISAGG.replace("disagg", "disag")
    config = tmp_path / "sync.yaml"
    config.write_text(text.replace(f"- key: {DISAGG}", f"- key: {typo}"), encoding="utf-8")
    line = config.read_text().splitlines().index(f"      - key: {typo}") + 1
    code, out, _ = run(capsys, "check", "--config", str(config), "--inferencex", INFX)
    assert code == 1
    said = (
        f"✗ {config}:{line}: model deepseek-ai/deepseek-v4_1: config {typo} is in no master "
        f"config of the checkout; closest: {DISAGG}, "  # the one meant first
    )
    assert any(row.startswith(said) for row in out.splitlines()), out


def test_a_shape_error_and_a_missing_checkout_are_bad_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = (ROOT / "sync.yaml").read_text(encoding="utf-8")
    config = tmp_path / "sync.yaml"
    config.write_text(text.replace("    kv_donors:", "    kv_donor:"), encoding="utf-8")
    code, out, err = run(capsys, "check", "--config", str(config), "--inferencex", INFX)
    line = config.read_text().splitlines().index("    kv_donor:") + 1
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {config}:{line}:") and 'unknown key "kv_donor"' in err
    code, _, err = run(capsys, "check", "--config", str(config))
    assert code == 2 and "pass --inferencex PATH" in err


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_sync_yaml_is_valid_by_the_schema(path: Path) -> None:
    jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), SCHEMA)


def test_the_schema_names_exactly_the_parsers_keys() -> None:
    props = lambda d: set(d["properties"])  # noqa: E731
    defs = SCHEMA["$defs"]
    assert props(SCHEMA) == {"inferencex", "models"}
    assert props(defs["model"]) == set(syncconfig._MODEL_KEYS)
    assert props(defs["model"]["properties"]["match"]) == set(syncconfig._MATCH_KEYS)
    assert props(defs["config"]) == set(syncconfig._CONFIG_KEYS)
    pin = defs["config"]["properties"]["pin"]
    assert props(pin) == {"status", "run", "comment", "date", "pr", "sha"}
    assert set(pin["properties"]["status"]["enum"]) == {s.value for s in syncconfig.STATUSES}


def test_what_the_parser_refuses_for_an_unknown_key_the_schema_refuses_too() -> None:
    doc = yaml.safe_load((ROOT / "sync.yaml").read_text(encoding="utf-8"))
    doc["models"][0]["configs"][0]["pinn"] = {"status": "verified"}
    with pytest.raises(jsonschema.ValidationError, match="'pinn' was unexpected"):
        jsonschema.validate(doc, SCHEMA)


def test_config_schema_prints_the_shipped_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "schema")
    assert code == 0 and json.loads(out) == SCHEMA
