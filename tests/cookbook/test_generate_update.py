"""`sync generate --update` (issue 35): the existing module is edited, only the configs whose
pin in sync.yaml differs from what the module records are written again, every other byte
stays as published; `--check` with it is the gate that a module already shows sync.yaml."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ROOT, TESTS

from syncer.cli import main as cli_main
from syncer.cookbook.decode import Decoder
from syncer.cookbook.jsmodule import parse_module

MODEL = "deepseek-ai/deepseek-v4_1"
KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
LEGACY = TESTS / "fixtures/edit/legacy-deepseek-v4_1.jsx"


def _run(capsys, *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        cli_main(["generate", MODEL, "--no-page", *args])
    return int(done.value.code or 0), capsys.readouterr().out


def _only_dspark(tmp: Path) -> Path:
    """The bundled sync.yaml without its second config (PR #3871's)."""
    text = (ROOT / "sync.yaml").read_text(encoding="utf-8")
    path = tmp / "sync.yaml"
    path.write_text(text[: text.index("      # No authorised run yet")], encoding="utf-8")
    return path


def _other_cases(text: str) -> dict[tuple[str, int, str, str], list]:
    decoder = Decoder(parse_module(text).value, "m")
    return {
        (c.cell_id, c.point, c.router, c.kv): c.blocks
        for c in decoder.cases()
        if not c.cell_id.startswith(KEY + "#")
    }


def _cells(text: str, key: str | None = None) -> list[dict]:
    return [c for c in parse_module(text).value["cells"] if key is None or c["configKey"] != key]


def test_update_of_a_module_that_shows_sync_yaml_changes_nothing(tmp_path, capsys) -> None:
    out = tmp_path / "snippets"
    shutil.copytree(ROOT / "cookbook_snippets", out)
    code, said = _run(capsys, "--update", "--check", "--out", str(out))
    assert code == 0, said
    assert "unchanged" in said


def test_update_edits_only_the_config_whose_pin_moved(tmp_path, capsys, reference) -> None:
    """The real published 2b484a51 as the module: its dspark config pinned to the example's
    PR and run in sync.yaml; only that config's cells are written again."""
    published = (reference / "cookbook/agentx/deepseek-ai/deepseek-v4_1/2b484a51.jsx").read_text(
        encoding="utf-8"
    )
    _update_edits_only_dspark(tmp_path, capsys, published)


def test_update_edits_an_older_format_module_in_its_format(tmp_path, capsys) -> None:
    # The fixture records the example's own pins; its /use comment is another one here.
    published = LEGACY.read_text(encoding="utf-8").replace("4100000000117", "4100000000999")
    _update_edits_only_dspark(tmp_path, capsys, published)


def _update_edits_only_dspark(tmp_path: Path, capsys, published: str) -> None:
    out = tmp_path / "snippets"
    module = out / f"{MODEL}.jsx"
    module.parent.mkdir(parents=True)
    module.write_text(published, encoding="utf-8")
    config = _only_dspark(tmp_path)
    code, said = _run(capsys, "--update", "--check", "--config", str(config), "--out", str(out))
    assert code == 1, said  # the gate: the module does not show sync.yaml's pin yet
    assert module.read_text(encoding="utf-8") == published
    code, said = _run(capsys, "--update", "--config", str(config), "--out", str(out))
    assert code == 0, said
    assert "edited in place: " in said
    edited = module.read_text(encoding="utf-8")
    # Every other config's cells as published, byte for byte in the module's own format.
    assert _cells(edited, KEY) == _cells(published, KEY)
    legacy = not any("prov" in c for c in _cells(published))
    assert all(("prov" in c) != legacy for c in _cells(edited))
    assert _other_cases(edited) == _other_cases(published)
    # Run again: nothing left to change.
    code, said = _run(capsys, "--update", "--check", "--config", str(config), "--out", str(out))
    assert code == 0, said
