"""A key written twice in one master config: the last wins with a warning, as InferenceX reads
its masters (yaml.safe_load), instead of stopping every key of the checkout (issue 40.8: one
such key stopped discovery for a whole PR whose AgentX config was elsewhere)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import forkserver
import pytest
from conftest import ROOT

from syncer.errors import SyncError
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
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, ep: 1, conc-start: 4, conc-end: 64 }
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    tree = shutil.copytree(ROOT / "examples/inferencex", tmp_path / "infx")
    with (tree / MASTER).open("a") as f:
        f.write(AGAIN)
    return tree


def test_the_last_definition_wins_and_the_other_keys_are_read(tree: Path) -> None:
    master = load_master(tree)
    assert master.data["dsr1-fp8-h200-sglang"][0]["image"] == "lmsysorg/sglang:v0.5.10-cu129"
    assert AGENTX in master.data
    again = (ROOT / "examples/inferencex" / MASTER).read_text().count("\n") + 2
    assert master.warnings == [
        f'{tree / MASTER}:{again}: duplicate key "dsr1-fp8-h200-sglang" (lines 4 and {again}): '
        f"the value on line {again} wins, as PyYAML's safe_load reads it"
    ]


def test_an_agentx_key_beside_it_renders_and_the_warning_is_shown(tree: Path) -> None:
    done = subprocess.run(
        [*forkserver.command(), "render", AGENTX, "--inferencex", str(tree), "--point", "0"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert 'duplicate key "dsr1-fp8-h200-sglang"' in done.stderr


def test_a_key_in_two_master_files_is_still_refused(tree: Path) -> None:
    (tree / "inferencex-e2e/configs/amd-master.yaml").write_text(AGAIN)
    with pytest.raises(SyncError, match='config key "dsr1-fp8-h200-sglang" defined in two'):
        load_master(tree)
