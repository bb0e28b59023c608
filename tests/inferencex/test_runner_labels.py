"""Which launch script a key's runner label runs (issue 40.8): InferenceX runs
``runners/launch_${RUNNER_NAME%%_*}.sh`` on the runner the label picked, and
``configs/runners.yaml`` lists each label's runners, so ``cluster:h200-dgxc`` runs
``launch_h200-dgxc-slurm.sh``. On our own old-layout tree (tests/fixtures/eras), through the
real command."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import forkserver
import pytest
from conftest import TESTS

from syncer.inferencex.discovery import files_read
from syncer.inferencex.master import load_master
from syncer.inferencex.releases import DEFAULT, release_for

ERAS = TESTS / "fixtures" / "eras" / "inferencex"
AGG = "m2-fp4-gb300-dynamo-sglang-agentic-agg"
RUNNERS = """\
labels:
  cluster:gb300-test:
    - gb300-test-slurm_0
    - gb300-test-slurm_1
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """The eras tree whose runners are named ``gb300-test-slurm_N``: the label's script is
    ``launch_gb300-test-slurm.sh``, and no script has the label's own name."""
    tree = shutil.copytree(ERAS, tmp_path / "inferencex")
    (tree / "runners/launch_gb300-test.sh").rename(tree / "runners/launch_gb300-test-slurm.sh")
    (tree / "configs/runners.yaml").write_text(RUNNERS)
    return tree


def render(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*forkserver.command(), "render", AGG, "--inferencex", str(tree), "--point", "0"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_the_label_runs_the_script_its_runners_are_named_for(tree: Path) -> None:
    done = render(tree)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "# rules: srt-slurm v1.0.38 (1.x rules; checked out by "
        "runners/launch_gb300-test-slurm.sh line 26)"
    )
    (tree / "configs/runners.yaml").unlink()  # then only a script of the label's name counts
    assert release_for(load_master(tree).entry(AGG)) == DEFAULT


def test_a_change_to_that_script_is_a_change_to_the_key(tree: Path) -> None:
    read = files_read(load_master(tree), AGG)
    assert "runners/launch_gb300-test-slurm.sh" in read


def test_runners_of_two_clusters_cloning_different_releases_are_refused(tree: Path) -> None:
    other = tree / "runners/launch_gb300-other.sh"
    text = (tree / "runners/launch_gb300-test-slurm.sh").read_text()
    other.write_text(text.replace("git checkout v1.0.38", "git checkout v1.0.44"))
    (tree / "configs/runners.yaml").write_text(RUNNERS + "    - gb300-other_0\n")
    done = render(tree)
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        "runner label cluster:gb300-test runs launch scripts that clone different srt-slurm "
        in done.stderr
    )
    assert "launch_gb300-test-slurm.sh: srt-slurm v1.0.38" in done.stderr
    assert "launch_gb300-other.sh: srt-slurm v1.0.44" in done.stderr


def test_a_multinode_keys_script_may_test_is_multinode(tree: Path) -> None:
    # benchmark-multinode-tmpl.yml exports IS_MULTINODE=true before the launch script
    script = tree / "runners/launch_gb300-test-slurm.sh"
    text = script.read_text()
    script.write_text(text.replace(
        '[[ "$IS_AGENTIC" == "1" && $FRAMEWORK == "dynamo-sglang" && $MODEL_PREFIX == "m2" ]]',
        '[[ "$IS_MULTINODE" == "true" && $MODEL_PREFIX == "m2" ]]',
    ))  # fmt: skip
    done = render(tree)
    assert done.returncode == 0, done.stderr
    assert "srt-slurm v1.0.38" in done.stdout.splitlines()[0]


def test_runners_yaml_is_a_file_the_labels_keys_read(tree: Path) -> None:
    # which script a cluster label runs is decided there, so a change to it changes the key
    assert "configs/runners.yaml" in files_read(load_master(tree), AGG)
    (tree / "configs/runners.yaml").unlink()
    (tree / ".github/configs").mkdir(parents=True)
    (tree / ".github/configs/runners.yaml").write_text(RUNNERS)  # the other layout's place
    assert ".github/configs/runners.yaml" in files_read(load_master(tree), AGG)
