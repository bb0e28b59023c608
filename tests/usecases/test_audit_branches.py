"""`sync audit` of a cell whose key's runner cloned an srt-slurm branch: each pin's tree is
written from git objects (no checkout), so the branch is taken at the date of the pin's commit
(or the run's date the cell names), read from --srt-slurm-repo, as `sync generate` took it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import forkserver
import pytest
from srthistory import AGG, M2_SYNC_YAML, MODEL, eras_tree_on_main, srt_slurm_history

from syncer.cookbook.jsmodule import load_module


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path | str]:
    """Our own srt-slurm history (main: v1.0.41 in July, a commit on 2026-08-03, v1.0.58 on
    2026-08-18) and the eras tree whose runner checks out ``main``, committed 2026-08-05."""
    repo, tree = tmp_path / "srt-slurm", tmp_path / "inferencex"
    history = srt_slurm_history(repo)
    aug, v58 = history["aug"], history["v58"]
    sha = eras_tree_on_main(tree)
    return {"repo": repo, "tree": tree, "aug": aug, "v58": v58, "tmp": tmp_path, "sha": sha}


def _sync(world: dict, *args: str) -> subprocess.CompletedProcess[str]:
    """The real command, as a user runs it (exit codes included)."""
    return subprocess.run(
        [*forkserver.command(), *args], capture_output=True, text=True, timeout=120
    )


def _audit(world: dict, *args: str) -> list[dict]:
    done = _sync(
        world, "audit", "--cookbook", str(world["tmp"] / "snippets"),
        "--inferencex", str(world["tree"]), "--offline", "--format", "json", *args,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    cells = json.loads(done.stdout)["cells"]
    assert {c["configKey"] for c in cells} == {AGG}
    return cells


def _generated(world: dict, date: str, *args: str) -> dict:
    config = world["tmp"] / "sync.yaml"
    config.write_text(M2_SYNC_YAML.format(sha=world["sha"], date=date))
    made = _sync(
        world, "generate", MODEL, "--config", str(config), "--inferencex", str(world["tree"]),
        "--out", str(world["tmp"] / "snippets"), "--no-page", "--srt-slurm-repo",
        str(world["repo"]), *args,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    return load_module(world["tmp"] / "snippets" / f"{MODEL}.jsx").value


def _srt_findings(cells: list[dict]) -> list[str]:
    return [f["message"] for c in cells for f in c["findings"] if "names srt-slurm" in f["message"]]


@pytest.mark.parametrize(
    ("date", "applied"), [("", "aug"), ('          date: "2026-08-20"\n', "v58")]
)
def test_audit_takes_the_branch_at_the_date_generate_took_it(
    world: dict, date: str, applied: str
) -> None:
    """No run date: the pin's commit (2026-08-05, main then at the August commit); a run date
    in the cell: that date (v1.0.58)."""
    module = _generated(world, date)
    assert {c["prov"]["srtSlurm"] for c in module["cells"]} == {world[applied]}
    cells = _audit(world, "--srt-slurm-repo", str(world["repo"]))
    assert {c["recipe"] for c in cells} == {"agrees"}
    assert _srt_findings(cells) == []


def test_audit_finds_a_cell_naming_another_commit_than_the_branch_had(world: dict) -> None:
    # generated with a forced date, published with the run's: the cell names the wrong commit
    _generated(world, '          date: "2026-08-20"\n', "--as-of", "2026-08-04")
    cells = _audit(world, "--srt-slurm-repo", str(world["repo"]))
    [found] = _srt_findings(cells)
    assert found.startswith(f"the cell names srt-slurm {world['aug'][:12]}, the recipe's ")
    assert f"srt-slurm main as of 2026-08-20 = {world['v58']}" in found
    # without a clone the commit cannot be checked, and the report says so
    reasons = [n["reason"] for c in _audit(world) for n in c["notChecked"]]
    [unchecked] = [r for r in reasons if "names srt-slurm" in r]
    assert "give --srt-slurm-repo" in unchecked
