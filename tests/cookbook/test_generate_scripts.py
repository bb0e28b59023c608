"""`sync generate` with a script-launched config: its cells are kept from the existing module
exactly as they were (proven case by case), and the output says which ones were kept."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from syncer.cli import main as cli_main
from syncer.cookbook.decode import Decoder, load_decoder
from syncer.cookbook.jsmodule import load_module
from syncer.encoder.cells import ModuleSpec, cells_from_module
from syncer.encoder.encode import encode_module
from syncer.errors import SyncError
from syncer.syncconfig import load_sync_config
from syncer.usecases.generate import KeptConfig, generate_model

FIX = ROOT / "tests" / "fixtures" / "scriptera"
MODEL = "deepseek-ai/deepseek-v4_1"
KEY = "m1-fp8-b300-sglang-agentic-mtp"
SCRIPT = "benchmarks/single_node/agentic/m1_fp8_b300_sglang_mtp.sh"
CONFIG_ENTRY = f"""
      # A config of the script era: launched by {SCRIPT}.
      - key: {KEY}
        source: main
        pin:
          status: verified
          run: "52000000001"
          pr: "2500"
          sha: {"c0" * 20}
          date: "2026-08-01"
"""


def _spec(path: Path) -> ModuleSpec:
    value = load_module(path).value
    return cells_from_module(value, Decoder(value, str(path)), str(path))


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    """The bundled example plus the fixture's script-era key: the checkout, sync.yaml, and a
    published module holding the example's cells and the script key's cells."""
    infx = tmp_path / "inferencex"
    shutil.copytree(ROOT / "examples" / "inferencex", infx)
    layout = infx / "inferencex-e2e"
    master = layout / "configs" / "nvidia-master.yaml"
    script_key = (FIX / "inferencex" / "configs" / "nvidia-master.yaml").read_text()
    head = script_key.split("\n# An older script name")[0]
    master.write_text(master.read_text() + "\n" + head.split("\n\n", 1)[1])
    agentic = layout / "benchmarks" / "single_node" / "agentic"
    agentic.mkdir(parents=True)
    shutil.copy(FIX / "inferencex" / SCRIPT, agentic)
    config = tmp_path / "sync.yaml"
    config.write_text((ROOT / "sync.yaml").read_text() + CONFIG_ENTRY)
    out = tmp_path / "snippets"
    module = out / f"{MODEL}.jsx"
    module.parent.mkdir(parents=True)
    example = _spec(ROOT / "cookbook_snippets" / f"{MODEL}.jsx")
    scripted = _spec(FIX / "cookbook" / "example-org" / "m1.jsx")
    example.cells += scripted.cells
    example.hardware += scripted.hardware
    example.checkpoints += scripted.checkpoints
    _, text, _ = encode_module(example, path=str(module))
    module.write_text(text, encoding="utf-8")
    return {"infx": infx, "config": config, "out": out, "module": module}


def _cases(path: Path, prefix: str) -> dict:
    decoder = load_decoder(path)
    return {
        (c.cell_id, c.point, c.router, c.kv): (c.blocks, c.status)
        for c in decoder.cases()
        if c.cell_id.startswith(prefix)
    }


def test_script_cells_are_kept_untouched(world: dict[str, Path]) -> None:
    config = load_sync_config(world["config"])
    before = _cases(world["module"], KEY)
    result = generate_model(
        MODEL, config=config, inferencex=world["infx"], out_dir=world["out"], check=True
    )
    assert result.kept == [KeptConfig(KEY, SCRIPT, [f"{KEY}#0", f"{KEY}#1", f"{KEY}#2"])]
    assert result.cells == 8  # the example's 5 cells re-derived, the script key's 3 kept
    written = world["out"] / "check.jsx"
    written.write_text(result.text, encoding="utf-8")
    assert _cases(written, KEY) == before
    # The recipe configs were re-derived: the example's own cells are what generation gives.
    assert _cases(written, "dsv41flash") == _cases(
        ROOT / "cookbook_snippets" / f"{MODEL}.jsx", "dsv41flash"
    )


def test_cli_says_which_cells_it_kept(world: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    args = ["generate", MODEL, "--config", str(world["config"]), "--inferencex"]
    args += [str(world["infx"]), "--out", str(world["out"]), "--no-page"]
    with pytest.raises(SystemExit) as done:
        cli_main(args)
    out = capsys.readouterr().out
    assert done.value.code == 0
    assert (
        f"kept 3 cells of {KEY} as they were, without re-deriving them: launched by a bash "
        f"script ({SCRIPT}); check them against a run with `sync verify {KEY} --run RUN` "
        f"({KEY}#0, {KEY}#1, {KEY}#2)"
    ) in out
    assert _cases(world["module"], KEY) == _cases(FIX / "cookbook" / "example-org" / "m1.jsx", KEY)


def test_no_existing_cells_to_keep_is_an_error(world: dict[str, Path]) -> None:
    config = load_sync_config(world["config"])
    world["module"].unlink()
    with pytest.raises(SyncError) as exc:
        generate_model(
            MODEL, config=config, inferencex=world["infx"], out_dir=world["out"], check=True
        )
    assert "launched by a bash script" in exc.value.message
    assert "its cells cannot be generated, and there is no existing module" in exc.value.message
    assert exc.value.path == str(world["config"])


def test_refreshing_only_the_script_key_is_refused(world: dict[str, Path]) -> None:
    config = load_sync_config(world["config"])
    with pytest.raises(SyncError, match="launched by a bash script"):
        generate_model(
            MODEL, config=config, inferencex=world["infx"], out_dir=world["out"], only=KEY,
            check=True,
        )  # fmt: skip


def test_refreshing_another_key_keeps_the_script_cells(world: dict[str, Path]) -> None:
    config = load_sync_config(world["config"])
    result = generate_model(
        MODEL, config=config, inferencex=world["infx"], out_dir=world["out"],
        only="dsv41flash-fp4-gb300-sglang-agentic-dspark", check=True,
    )  # fmt: skip
    written = world["out"] / "check.jsx"
    written.write_text(result.text, encoding="utf-8")
    assert _cases(written, KEY) == _cases(world["module"], KEY)


def test_kept_cells_keep_the_files_they_name(world: dict[str, Path]) -> None:
    """A kept cell's router may ship a file (a config the script wrote); the regenerated module
    still carries it, since no rendering produces it again."""
    import hashlib

    content = "max_payload: 8388608\n"
    fid = f"nats.conf#{hashlib.sha256(content.encode()).hexdigest()[:8]}"
    spec = _spec(world["module"])
    mine = next(c for c in spec.cells if c.config_key == KEY)
    next(iter(mine.routers.values())).files.append(fid)
    spec.files[fid] = {"name": "nats.conf", "content": content}
    _, text, _ = encode_module(spec, path=str(world["module"]))
    world["module"].write_text(text, encoding="utf-8")
    result = generate_model(
        MODEL,
        config=load_sync_config(world["config"]),
        inferencex=world["infx"],
        out_dir=world["out"],
        check=True,
    )
    written = world["out"] / "check.jsx"
    written.write_text(result.text, encoding="utf-8")
    assert load_module(written).value["files"][fid] == {"name": "nats.conf", "content": content}
