"""Files of srt-slurm's own checkout that a recipe passes by path (its ``configs/`` directory,
mounted at ``/configs`` in every container): the raw form keeps the path srt-slurm ran, the
cookbook form names the file, the router ships it with srt-slurm's bytes when they are
available, and otherwise ``render`` says the content is unknown and ``generate`` refuses.

The fixtures are the bundled example recipe with our own settings added and our own file
contents (never srt-slurm's).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

from syncer.cli import main as cli_main
from syncer.cookbook.decode import Decoder
from syncer.encoder.encode import encode_module
from syncer.errors import SyncError
from syncer.inferencex.policy import load_policy, parse_policy
from syncer.inferencex.render import RenderedConfig, render_config
from syncer.inferencex.srtconfigs import SUBMODULE, discover
from syncer.inferencex.yamlsafe import loads
from syncer.syncconfig import load_sync_config
from syncer.usecases.generate import build_module_spec

DISAGG = "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"
MODEL = "deepseek-ai/deepseek-v4_1"
# Our own contents, shaped like a DeepEP tuning file and a nested tuning table.
DEEPEP = '{\n  "normal_dispatch": {"num_sms": 64},\n  "normal_combine": {"num_sms": 64}\n}\n'
TABLE = "[moe]\nblock = 7\n"
SHA = "0123456789abcdef0123456789abcdef01234567"


def _fid(name: str, content: str) -> str:
    return f"{name}#{hashlib.sha256(content.encode('utf-8')).hexdigest()[:8]}"


def _tree(tmp_path: Path, deepep: str = "/configs/deepep_config.json") -> Path:
    """The bundled InferenceX example with the disagg workers passing ``deepep`` by path and
    an env value naming a nested file of the mount."""
    infx = tmp_path / "inferencex"
    shutil.copytree(ROOT / "examples" / "inferencex", infx)
    recipe = next(infx.rglob("disagg-variants.yaml"))
    text = recipe.read_text(encoding="utf-8")
    text = text.replace(
        "      args: &worker_args\n",
        f"      args: &worker_args\n        deepep-config: {deepep}\n",
        1,
    )
    text = text.replace(
        "      env: &worker_env\n",
        "      env: &worker_env\n        SGLANG_MOE_TUNING_FILE: /configs/tuning/moe.toml\n",
        1,
    )
    assert deepep in text and "/configs/tuning/moe.toml" in text
    recipe.write_text(text, encoding="utf-8")
    return infx


def _configs(directory: Path) -> Path:
    (directory / "tuning").mkdir(parents=True)
    (directory / "deepep_config.json").write_text(DEEPEP, encoding="utf-8")
    (directory / "tuning" / "moe.toml").write_text(TABLE, encoding="utf-8")
    return directory


def _workers(rendered: RenderedConfig, router: str, *, raw: bool = False) -> list[dict]:
    forms = rendered.points[0].raw if raw else rendered.points[0].cookbook
    return [b for b in forms[router] if b["kind"] == "worker"]


def _arg(block: dict, flag: str) -> list[str]:
    return next(a for a in block["args"] if a[0] == flag)


def _run(*argv: str) -> int:
    with pytest.raises(SystemExit) as done:
        cli_main(list(argv))
    return int(done.value.code or 0)


# --- the file is available ------------------------------------------------------------------


def test_available_file_is_named_in_the_command_and_shipped_by_the_router(tmp_path) -> None:
    infx = _tree(tmp_path)
    srt = discover(infx, _configs(tmp_path / "srt-configs"))
    rendered = render_config(infx, DISAGG, srt_files=srt)
    submitted = rendered.points[0].submitted
    # raw: what srt-slurm ran (and what the logs show), so `sync verify` still agrees
    for block in _workers(rendered, submitted, raw=True):
        assert _arg(block, "--deepep-config") == ["--deepep-config", "/configs/deepep_config.json"]
        assert block["env"]["SGLANG_MOE_TUNING_FILE"] == "/configs/tuning/moe.toml"
    ids = sorted([_fid("deepep_config.json", DEEPEP), _fid("moe.toml", TABLE)])
    for router in ("dynamo", "sglang"):
        for block in _workers(rendered, router):
            assert _arg(block, "--deepep-config") == ["--deepep-config", "deepep_config.json"]
            assert block["env"]["SGLANG_MOE_TUNING_FILE"] == "moe.toml"
        files = rendered.points[0].files[router]
        assert list(files) == sorted(files)  # id order, as the published routers list them
        assert files[ids[0]] == {"name": "deepep_config.json", "content": DEEPEP}
        assert files[ids[1]] == {"name": "moe.toml", "content": TABLE}
    assert all(not p.missing_files for p in rendered.points)
    assert rendered.missing_file_error() is None


def test_available_file_is_in_the_generated_module(tmp_path) -> None:
    infx = _tree(tmp_path)
    srt = discover(infx, _configs(tmp_path / "srt-configs"))
    config = load_sync_config(ROOT / "sync.yaml")
    spec = build_module_spec(
        config.model(MODEL),
        config=config,
        inferencex=infx,
        today="2026-12-01",
        renderer=lambda root, key: render_config(root, key, srt_files=srt),
    ).spec
    fid = _fid("deepep_config.json", DEEPEP)
    assert spec.files[fid] == {"name": "deepep_config.json", "content": DEEPEP}
    cell = next(c for c in spec.cells if c.config_key == DISAGG)
    assert fid in cell.routers["dynamo"].files and fid in cell.routers["sglang"].files
    value, _, _ = encode_module(spec, path="mounted")  # decoded back and compared before use
    ci = next(i for i, c in enumerate(value["cells"]) if c["id"] == cell.id)
    assert Decoder(value).router_files(ci, "sglang")[fid] == DEEPEP


def test_submodule_of_the_inferencex_checkout_is_read_without_an_option(tmp_path) -> None:
    infx = _tree(tmp_path)
    _configs(infx / SUBMODULE / "configs")
    rendered = render_config(infx, DISAGG)
    assert _fid("deepep_config.json", DEEPEP) in rendered.points[0].files["sglang"]
    assert rendered.missing_file_error() is None


def test_cli_render_ships_the_file_given_by_option(tmp_path, capsys) -> None:
    infx = _tree(tmp_path)
    configs = _configs(tmp_path / "srt-configs")
    argv = ["render", DISAGG, "--inferencex", str(infx), "--point", "0", "--router", "sglang"]
    assert _run(*argv, "--srt-slurm-configs", str(configs)) == 0
    out = capsys.readouterr().out
    assert "--deepep-config deepep_config.json" in out and "/configs/" not in out
    assert _fid("deepep_config.json", DEEPEP) in out and "content unknown" not in out


# --- the file is not available ----------------------------------------------------------------


def test_missing_file_is_named_and_render_says_its_content_is_unknown(tmp_path, capsys) -> None:
    infx = _tree(tmp_path)
    rendered = render_config(infx, DISAGG)
    for router in ("dynamo", "sglang"):
        for block in _workers(rendered, router):
            assert _arg(block, "--deepep-config") == ["--deepep-config", "deepep_config.json"]
        assert not any(
            f.startswith("deepep_config.json#") for f in rendered.points[0].files[router]
        )
        missing = rendered.points[0].missing_files[router]
        assert [m.source for m in missing] == [
            "configs/deepep_config.json",
            "configs/tuning/moe.toml",
        ]
    argv = ["render", DISAGG, "--inferencex", str(infx), "--point", "0", "--router", "sglang"]
    assert _run(*argv) == 0
    out = capsys.readouterr().out
    assert "--deepep-config deepep_config.json" in out
    assert (
        "file deepep_config.json: content unknown (srt-slurm's configs/deepep_config.json, "
        "mounted at /configs, at the srt-slurm commit the run used" in out
    )


def test_render_json_lists_shipped_and_missing_files(tmp_path, capsys) -> None:
    import json

    infx = _tree(tmp_path)
    argv = ["render", DISAGG, "--inferencex", str(infx), "--point", "0", "--format", "json"]
    assert _run(*argv, "--router", "sglang") == 0
    point = json.loads(capsys.readouterr().out)["points"][0]
    assert "files" not in point
    assert point["missing_files"] == {
        "sglang": [
            {
                "name": "deepep_config.json",
                "source": "configs/deepep_config.json",
                "mount": "/configs",
            },
            {"name": "moe.toml", "source": "configs/tuning/moe.toml", "mount": "/configs"},
        ]
    }
    configs = _configs(tmp_path / "srt-configs")
    assert _run(*argv, "--srt-slurm-configs", str(configs)) == 0
    point = json.loads(capsys.readouterr().out)["points"][0]
    assert "missing_files" not in point and set(point["files"]) == {"dynamo", "sglang"}
    fid = _fid("deepep_config.json", DEEPEP)
    assert point["files"]["sglang"][fid] == {"name": "deepep_config.json", "content": DEEPEP}
    assert _run(*argv, "--raw") == 0  # the raw form is what srt-slurm ran: no cookbook files
    point = json.loads(capsys.readouterr().out)["points"][0]
    assert "files" not in point and "missing_files" not in point


def test_generate_refuses_a_missing_file_naming_it_and_the_commit(tmp_path, capsys) -> None:
    infx = _tree(tmp_path)
    # the newest layout pins srt-slurm as a submodule: the gitlink names the commit
    git = ["git", "-C", str(infx)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run(
        [*git, "update-index", "--add", "--cacheinfo", f"160000,{SHA},{SUBMODULE}"], check=True
    )
    subprocess.run([*git, "commit", "-q", "-m", "pin"], check=True)
    rendered = render_config(infx, DISAGG)
    error = rendered.missing_file_error()
    assert error is not None and error.path and error.path.endswith("disagg-variants.yaml")
    assert "srt-slurm's configs/deepep_config.json" in error.message
    assert f"srt-slurm commit {SHA}" in error.message
    assert "--srt-slurm-configs DIR" in error.message
    config = load_sync_config(ROOT / "sync.yaml")
    with pytest.raises(SyncError, match=r"configs/deepep_config\.json"):
        build_module_spec(config.model(MODEL), config=config, inferencex=infx, today="2026-12-01")
    out = tmp_path / "out"
    code = _run(
        "generate", MODEL, "--inferencex", str(infx), "--out", str(out), "--no-page",
    )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "disagg-variants.yaml" in err and f"srt-slurm commit {SHA}" in err
    assert not out.exists()


def test_a_configs_directory_without_the_file_is_still_missing(tmp_path) -> None:
    infx = _tree(tmp_path)
    empty = tmp_path / "srt-configs"
    empty.mkdir()
    rendered = render_config(infx, DISAGG, srt_files=discover(infx, empty))
    assert rendered.missing_file_error() is not None


# --- not a file of the mount ----------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["/opt/tuning/deepep_config.json", "/configsx/deepep_config.json", "/configs/../x.json"],
)
def test_path_outside_the_mount_is_left_alone(tmp_path, value) -> None:
    infx = _tree(tmp_path, deepep=value)
    srt = discover(infx, _configs(tmp_path / "srt-configs"))
    rendered = render_config(infx, DISAGG, srt_files=srt)
    for router in ("dynamo", "sglang"):
        for block in _workers(rendered, router):
            assert _arg(block, "--deepep-config") == ["--deepep-config", value]
        files = rendered.points[0].files[router]
        assert not any(f.startswith("deepep_config.json#") for f in files)
        assert [m.source for m in rendered.points[0].missing_files.get(router, [])] == []


# --- refusals -------------------------------------------------------------------------------


def test_two_files_with_one_name_are_refused(tmp_path) -> None:
    infx = _tree(tmp_path, deepep="/configs/a/moe.toml")
    with pytest.raises(SyncError, match=r"two srt-slurm files named moe\.toml"):
        render_config(infx, DISAGG)


def test_a_file_linking_out_of_the_directory_is_refused(tmp_path) -> None:
    infx = _tree(tmp_path)
    configs = _configs(tmp_path / "srt-configs")
    (tmp_path / "secret.json").write_text("{}", encoding="utf-8")
    (configs / "deepep_config.json").unlink()
    (configs / "deepep_config.json").symlink_to(tmp_path / "secret.json")
    with pytest.raises(SyncError, match="resolves outside srt-slurm's configs/") as info:
        render_config(infx, DISAGG, srt_files=discover(infx, configs))
    assert info.value.path is not None


def test_policy_mount_rules_are_checked() -> None:
    assert [m.mount for m in load_policy().mounts] == ["/configs"]
    entry = "{name: m, mount: %s, directory: %s, kinds: [worker], reason: r}"
    for mount, directory, message in (
        ("configs", "configs", "mount must be an absolute path"),
        ("/configs", "../configs", "directory must be a relative path"),
        ("/configs", "/configs", "directory must be a relative path"),
    ):
        doc = loads(f"version: 1\nentries: []\nmounted_files: [{entry % (mount, directory)}]", "p")
        with pytest.raises(SyncError, match=message):
            parse_policy(doc, "p")
    doc = loads("version: 1\nentries: []\nmounted_files: [{name: m, mount: /c}]", "p")
    with pytest.raises(SyncError, match="mounted_files\\[0\\] needs exactly"):
        parse_policy(doc, "p")
