"""Master configs in both layouts, rows, jobs, recipe paths and golden acceptance lengths."""

from __future__ import annotations

import os
import shutil
import textwrap
import time
from pathlib import Path

import pytest
from conftest import ROOT

from syncer.errors import SyncError
from syncer.inferencex.acceptance import golden_al
from syncer.inferencex.master import load_master

DSPARK = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
DISAGG = "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"
EXAMPLE = ROOT / "examples" / "inferencex"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def old_layout(tmp_path: Path) -> Path:
    """A checkout in the pre-`inferencex-e2e/` layout with CONFIG_FILE-style multi-node rows."""
    _write(
        tmp_path / "configs" / "nvidia-master.yaml",
        """\
        m-fp8-h100-dynamo-sglang-agentic:
          image: img:1
          model: org/M-1
          model-prefix: m
          runner: h100
          precision: fp8
          framework: dynamo-sglang
          multinode: true
          disagg: false
          scenarios:
            agentic-coding:
            - search-space:
              - spec-decoding: none
                conc-start: 4
                conc-end: 32
                worker:
                  num-worker: 1
                  tp: 8
                  additional-settings:
                  - "CONFIG_FILE=recipes/m/agg.yaml:override_tp8"
        """,
    )
    _write(
        tmp_path / "benchmarks" / "multi_node" / "srt-slurm-recipes" / "m" / "agg.yaml",
        "base: {}\n",
    )
    _write(
        tmp_path / "golden_al_distribution" / "m_dspark.yaml",
        """\
        m-1:
          thinking_on: {3: 2.90}
          thinking_off: {3: 3.27}
        """,
    )
    return tmp_path


def test_bundled_example_keys_and_jobs(examples: Path) -> None:
    master = load_master(examples / "inferencex")
    assert {DSPARK, DISAGG} <= set(master.keys())
    entry = master.entry(DSPARK)
    assert entry.layout_root.name == "inferencex-e2e"
    assert (entry.framework, entry.multinode, entry.model_prefix) == ("sglang", False, "dsv41flash")
    assert entry.hardware == "gb300"
    assert entry.image.startswith("lmsysorg/sglang:nightly-dev-cu13-20261012-e6072935@sha256:")
    jobs = entry.jobs()
    assert [(j.row.index, j.concs) for j in jobs] == [
        (0, [1]),
        (0, [4]),
        (0, [16]),
        (1, [16]),
        (1, [32]),
        (2, [64]),
        (2, [128]),
    ]
    dep2 = entry.rows[2]
    assert dep2.dp_attn and dep2.router == {"name": "sglang-router", "version": "0.3.2"}
    assert (dep2.tp, dep2.ep, dep2.gpus, dep2.selector) == (2, 2, 2, None)
    path = entry.recipe_path(dep2)
    assert path.as_posix().endswith(
        "single_node/srt-slurm-recipes/dsv41flash/sglang/gb300-fp4-mtp/agentic.yaml"
    )
    assert entry.shared_block_path().name == "agentic-single.yaml"


def test_multinode_rows_run_their_concurrency_list_in_one_job(examples: Path) -> None:
    entry = load_master(examples / "inferencex").entry(DISAGG)
    assert entry.disagg and entry.kv_p2p_transfer == "mooncake"
    assert [(j.row.index, j.concs) for j in entry.jobs()] == [(0, [48, 64]), (1, [160])]
    row = entry.rows[1]
    assert (row.selector, row.eval_selector) == (
        "override_1p1d_hicache_c160",
        "override_1p1d_hicache_c160_eval",
    )
    assert row.roles["prefill"].num_worker == 1 and row.roles["decode"].tp == 2
    assert row.kv_offload_backend == "hicache"
    assert entry.recipe_path(row, eval_job=True) == entry.recipe_path(row)


def test_old_layout_config_file_rows(old_layout: Path) -> None:
    master = load_master(old_layout)
    entry = master.entry("m-fp8-h100-dynamo-sglang-agentic")
    assert entry.layout_root == old_layout
    assert entry.hardware == "h100"
    row = entry.rows[0]
    assert row.concs == [4, 8, 16, 32]  # conc-start/conc-end doubles
    assert (row.recipe, row.selector, row.config_file_style) == ("m/agg.yaml", "override_tp8", True)
    assert (
        entry.recipe_path(row) == old_layout / "benchmarks/multi_node/srt-slurm-recipes/m/agg.yaml"
    )
    assert golden_al(entry, "dspark", 3, thinking=True) == "2.9"
    assert golden_al(entry, "dspark", 3, thinking=False) == "3.27"
    assert golden_al(entry, "mtp", 3, thinking=True) is None  # no curve file for the method
    with pytest.raises(SyncError, match="no thinking_on value for draft length 5"):
        golden_al(entry, "dspark", 5, thinking=True)


def test_golden_al_of_the_example(examples: Path) -> None:
    entry = load_master(examples / "inferencex").entry(DSPARK)
    assert golden_al(entry, "dspark", 5, thinking=True) == "3.51"
    assert golden_al(entry, "dspark", 5, thinking=False) == "4.07"


def test_unknown_config_key_lists_the_closest(examples: Path) -> None:
    with pytest.raises(SyncError) as err:
        load_master(examples / "inferencex").entry("dsv41flash-fp4-gb300-sglang-agentic-dsparc")
    assert f"closest keys: {DSPARK}" in err.value.message
    assert err.value.path.endswith("nvidia-master.yaml")


def test_unknown_entry_and_row_keys_name_the_closest(tmp_path: Path) -> None:
    _write(
        tmp_path / "configs" / "nvidia-master.yaml",
        """\
        k:
          image: i
          model: o/m
          framework: sglang
          srt-recipe-dri: x
          scenarios: {agentic-coding: [{search-space: [{conc-list: [1], srt-recipe: a.yaml}]}]}
        r:
          image: i
          model: o/m
          framework: sglang
          scenarios: {agentic-coding: [{search-space: [{conc-lst: [1], srt-recipe: a.yaml}]}]}
        """,
    )
    master = load_master(tmp_path)
    with pytest.raises(SyncError) as err:
        master.entry("k")
    assert 'unknown key "srt-recipe-dri"; closest keys: srt-recipe-dir' in err.value.message
    assert err.value.line == 5
    with pytest.raises(SyncError, match='unknown key "conc-lst"; closest keys: conc-list'):
        master.entry("r")


def test_multinode_row_without_a_selector_names_a_plain_recipe(tmp_path: Path) -> None:
    """A row without a selector names a recipe file that is one configuration (old-layout
    CONFIG_FILE rows); a bundle named that way is refused where the file is read."""
    _write(
        tmp_path / "inferencex-e2e" / "configs" / "nvidia-master.yaml",
        """\
        k:
          image: i
          model: o/m
          framework: dynamo-sglang
          multinode: true
          scenarios: {agentic-coding: [{search-space: [{conc-list: [1], srt-recipe: a.yaml}]}]}
        """,
    )
    (row,) = load_master(tmp_path).entry("k").rows
    assert (row.recipe, row.selector) == ("a.yaml", None)


def test_master_yaml_errors_name_file_and_line(tmp_path: Path) -> None:
    # (a key written twice was the example here until issue 40.8: it is read last-wins now, as
    # InferenceX reads it; test_master_duplicates.py)
    _write(tmp_path / "configs" / "nvidia-master.yaml", "a:\n  image: i\nb: [j\n")
    with pytest.raises(SyncError) as err:
        load_master(tmp_path)
    assert err.value.line == 4 and err.value.path.endswith("nvidia-master.yaml")


def test_no_master_config_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SyncError, match="no master config found"):
        load_master(tmp_path)


def test_row_parallelism_must_be_integers(tmp_path: Path) -> None:
    _write(
        tmp_path / "configs" / "nvidia-master.yaml",
        """\
        k:
          image: i
          model: o/m
          framework: sglang
          scenarios: {agentic-coding: [{search-space: [{tp: "2", conc-list: [1], srt-recipe: a}]}]}
        """,
    )
    with pytest.raises(SyncError, match='tp must be a positive integer, got "2"'):
        load_master(tmp_path).entry("k")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ("scenarios: [agentic-coding]", "scenarios must be a mapping"),
        ("scenarios: {agentic-coding: {search-space: []}}", "must be a list of blocks"),
        ("scenarios: {agentic-coding: [x]}", "block must be a mapping"),
        ("scenarios: {agentic-coding: [{search-space: 1.5}]}", "search-space must be a list"),
        (
            "srt-recipe-dir: -1\n"
            "scenarios: {agentic-coding: [{search-space: [{conc-list: [1], srt-recipe: a}]}]}",
            "srt-recipe-dir must be a path, got -1",
        ),
        (
            "scenarios: {agentic-coding: [{search-space: [{conc-list: [1], worker: true}]}]}",
            "no srt-recipe",
        ),
    ],
)
def test_wrong_shapes_in_an_entry_are_named(tmp_path: Path, fields: str, message: str) -> None:
    """A value of the wrong YAML type is a one-line SyncError, never a TypeError traceback."""
    body = textwrap.indent(fields, "  ")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "nvidia-master.yaml").write_text(
        f"k:\n  image: i\n  model: o/m\n  framework: sglang\n{body}\n"
    )
    with pytest.raises(SyncError, match=message):
        load_master(tmp_path).entry("k")


def test_golden_al_curves_must_be_a_mapping(old_layout: Path) -> None:
    (old_layout / "golden_al_distribution" / "m_dspark.yaml").write_text("m-1: 1.5\n")
    entry = load_master(old_layout).entry("m-fp8-h100-dynamo-sglang-agentic")
    with pytest.raises(SyncError, match='"m-1" must map thinking_on/thinking_off'):
        golden_al(entry, "dspark", 3, thinking=True)


def test_master_is_parsed_once_per_content(tmp_path: Path) -> None:
    path = tmp_path / "configs" / "nvidia-master.yaml"
    _write(path, "a:\n  image: i\n")
    first = load_master(tmp_path)
    assert load_master(tmp_path) is first  # every key rendered reads the same parse
    _write(path, "b:\n  image: i\n")  # same size, new content (mtime may not tick)
    assert load_master(tmp_path).keys() == ["b"]


def test_a_settled_master_is_known_by_its_stat_and_any_write_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from syncer.inferencex import master as master_module

    # Every file counts as settled (changed long before it is read), as real checkouts are.
    monkeypatch.setattr(master_module, "_SETTLED_NS", 0)
    path = tmp_path / "configs" / "nvidia-master.yaml"
    _write(path, "a:\n  image: i\n")
    first = load_master(tmp_path)
    assert load_master(tmp_path) is first
    stat = path.stat()
    while path.stat().st_ctime_ns == stat.st_ctime_ns:  # a write of a later clock tick
        time.sleep(0.005)
        _write(path, "c:\n  image: i\n")  # same size, and the old mtime put back
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_mtime_ns == stat.st_mtime_ns
    assert load_master(tmp_path).keys() == ["c"]
    (tmp_path / "configs" / "amd-master.yaml").write_text("d:\n  image: i\n")
    assert load_master(tmp_path).keys() == ["d", "c"]  # a new master file is read too


def _render_edited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, old: str, new: str
) -> tuple[int, str]:
    """`sync render KEY` on a copy of the bundled example whose master config has ``old``
    replaced by ``new``: (exit code, stderr)."""
    from syncer.cli import main

    checkout = tmp_path / "inferencex"
    shutil.copytree(EXAMPLE, checkout)
    master = checkout / "inferencex-e2e" / "configs" / "nvidia-master.yaml"
    text = master.read_text(encoding="utf-8")
    assert old in text, old
    master.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main(["render", key, "--inferencex", str(checkout)])
    return int(exc.value.code or 0), capsys.readouterr().err


def test_a_null_role_parallelism_is_refused_by_render(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tp: null` in a multi-node row's role was taken for a value and crashed the render."""
    code, err = _render_edited(
        tmp_path,
        capsys,
        DISAGG,
        "        prefill:\n          num-worker: 1\n          tp: 2",
        "        prefill:\n          num-worker: 1\n          tp: null",
    )
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "nvidia-master.yaml" in err
    assert (
        "decode: tp must be an integer of at least 1" in err
        or "prefill: tp must be an integer of at least 1" in err
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("x" * 300, "is not a file name (a NUL character, or a part longer than 255 bytes)"),
        ('"a\\0.yaml"', 'srt-recipe "a\\u0000.yaml" is not a file name'),
    ],
)
def test_a_recipe_name_no_file_system_holds_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, message: str
) -> None:
    """A 300-byte recipe name (the OS's "File name too long") or one with a NUL character
    (Python's "embedded null byte") was looked up on disk and crashed."""
    code, err = _render_edited(
        tmp_path,
        capsys,
        DSPARK,
        "conc-list: [1, 4, 16], srt-recipe: agentic.yaml",
        f"conc-list: [1, 4, 16], srt-recipe: {name}",
    )
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "nvidia-master.yaml:" in err and message in err
