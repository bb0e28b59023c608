"""Trees of several commits holding the same master file (the pins `sync audit` reads) parse it
once (issue 39: parsing the master was the largest part of an audit's rendering); each tree's
master still names its own files, and a file read with a duplicate-key warning, which names
the file, is parsed for each tree. A master parsed by an earlier process is read back from the
user's cache (as compiled templates are), never for another content."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from syncer.inferencex import master, yamlsafe
from syncer.inferencex.master import load_master

MASTER = "inferencex-e2e/configs/nvidia-master.yaml"
AGENTX = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
AGAIN = """
dsr1-fp8-h200-sglang:
  image: lmsysorg/sglang:v0.5.10-cu129
  model: deepseek-ai/DeepSeek-R1-0528
  model-prefix: dsr1
  runner: h200
  precision: fp8
  framework: sglang
  multinode: false
"""


def _trees(tmp_path: Path, n: int, appended: str = "") -> list[Path]:
    trees = []
    for k in range(n):
        tree = shutil.copytree(ROOT / "examples/inferencex", tmp_path / f"infx-{k}")
        with (tree / MASTER).open("a") as f:
            f.write(appended or f"\n# a master file no other test reads ({tmp_path})\n")
        trees.append(tree)
    return trees


def _counting_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    loaded: list[str] = []
    real = yamlsafe.load

    def load(path: Path | str, **kwargs: Any) -> Any:
        loaded.append(str(path))
        return real(path, **kwargs)

    monkeypatch.setattr(yamlsafe, "load", load)
    return loaded


def test_the_same_master_file_in_two_trees_is_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = _counting_loads(monkeypatch)
    one, two = _trees(tmp_path, 2)
    first, second = load_master(one), load_master(two)
    assert loaded == [str(one / MASTER)]
    assert first.data[AGENTX][0] is second.data[AGENTX][0]
    assert first.data[AGENTX][1] == str(one / MASTER)
    assert second.data[AGENTX][1] == str(two / MASTER)
    assert second.files == [two / MASTER] and second.root == two


def test_a_file_read_with_a_warning_is_parsed_for_each_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = _counting_loads(monkeypatch)
    one, two = _trees(tmp_path, 2, appended=f"{AGAIN}# {tmp_path}\n")
    warnings = [load_master(tree).warnings for tree in (one, two)]
    assert loaded == [str(one / MASTER), str(two / MASTER)]
    assert [len(w) for w in warnings] == [1, 1]
    assert str(one / MASTER) in warnings[0][0] and str(two / MASTER) in warnings[1][0]


def _fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a new process starts with: no master parsed in memory."""
    for cache in ("_LOADED", "_BY_STAT", "_DOCS"):
        monkeypatch.setattr(master, cache, {})


def test_a_master_parsed_before_is_read_back_from_the_users_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    loaded = _counting_loads(monkeypatch)
    (tree,) = _trees(tmp_path, 1)
    _fresh_process(monkeypatch)
    parsed = load_master(tree).data
    (kept,) = (tmp_path / "cache" / "infx-cookbook-sync" / "masters").iterdir()
    _fresh_process(monkeypatch)
    assert load_master(tree).data == parsed and loaded == [str(tree / MASTER)]
    kept.write_bytes(kept.read_bytes()[:100])  # a truncated entry: parsed again
    _fresh_process(monkeypatch)
    assert load_master(tree).data == parsed and len(loaded) == 2
    with (tree / MASTER).open("a") as f:
        f.write("# changed\n")  # another content: parsed, never the kept entry
    _fresh_process(monkeypatch)
    assert load_master(tree).data == parsed and len(loaded) == 3


def test_nothing_is_kept_under_pythondontwritebytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    (tree,) = _trees(tmp_path, 1)
    _fresh_process(monkeypatch)
    assert AGENTX in load_master(tree).data
    assert not (tmp_path / "cache").exists()


def test_a_fifo_in_place_of_a_kept_parse_is_parsed_again_not_waited_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import threading

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    (tree,) = _trees(tmp_path, 1)
    _fresh_process(monkeypatch)
    parsed = load_master(tree).data
    (kept,) = (tmp_path / "cache" / "infx-cookbook-sync" / "masters").iterdir()
    kept.unlink()
    os.mkfifo(kept)  # no writer: an unbounded read would wait for one forever
    _fresh_process(monkeypatch)
    got: list[object] = []
    reader = threading.Thread(target=lambda: got.append(load_master(tree).data), daemon=True)
    reader.start()
    reader.join(timeout=30)
    assert got == [parsed]
