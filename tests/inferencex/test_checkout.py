"""Issue 12.1: every file read from an InferenceX checkout stays inside it.

The checkout is a copy of the bundled example with one hostile change each; the file outside
holds a marker value that must never come out (rendered, published), and the command exits 2
with one line naming the row or file.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import forkserver
import pytest
from conftest import ROOT

from syncer.errors import SyncError
from syncer.inferencex.acceptance import golden_al_file
from syncer.inferencex.master import load_master
from syncer.inferencex.render import render_config

EXAMPLE = ROOT / "examples" / "inferencex"
KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
MASTER = "inferencex-e2e/configs/nvidia-master.yaml"
RECIPES = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/gb300-fp4-mtp"
SHARED = "inferencex-e2e/configs/srt-recipes/agentic-single.yaml"
GOLDEN = "inferencex-e2e/infx/golden_al_distribution/dsv41flash_dspark.yaml"
SECRET = "runner-secret-value-0451"


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    """(checkout, outside): a copy of the example, and a folder beside it holding files with
    the secret marker in them."""
    checkout = tmp_path / "checkout"
    shutil.copytree(EXAMPLE, checkout)
    outside = tmp_path / "outside"
    outside.mkdir()
    recipe = (EXAMPLE / RECIPES / "agentic.yaml").read_text()
    (outside / "agentic.yaml").write_text(recipe.replace("--", f"--{SECRET}-", 1))
    (outside / "recipes").mkdir()
    (outside / "recipes" / "agentic.yaml").write_text(recipe.replace("--", f"--{SECRET}-", 1))
    (outside / "shared.yaml").write_text((EXAMPLE / SHARED).read_text() + f"# {SECRET}\n")
    (outside / "golden.yaml").write_text((EXAMPLE / GOLDEN).read_text())
    (outside / "master.yaml").write_text((EXAMPLE / MASTER).read_text())
    return checkout, outside


def _row_recipe(value: str) -> Callable[[Path, Path], None]:
    def change(checkout: Path, outside: Path) -> None:
        master = checkout / MASTER
        text = master.read_text()
        old = "srt-recipe: agentic.yaml }"
        new = "srt-recipe: " + value.format(outside=outside) + " }"
        master.write_text(text.replace(old, new, 1))

    return change


def _link(rel: str, target: str) -> Callable[[Path, Path], None]:
    def change(checkout: Path, outside: Path) -> None:
        path = checkout / rel
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
        path.symlink_to(outside / target)

    return change


def _recipe_dir_link(checkout: Path, outside: Path) -> None:
    # The folder on the recipe's path is the link, not the file.
    (outside / "dir").mkdir()
    for f in (checkout / RECIPES).iterdir():
        shutil.copy(f, outside / "dir" / f.name)
    (outside / "dir" / "agentic.yaml").write_text((outside / "agentic.yaml").read_text())
    shutil.rmtree(checkout / RECIPES)
    (checkout / RECIPES).symlink_to(outside / "dir")


CASES = {
    "absolute srt-recipe": (
        _row_recipe("{outside}/agentic.yaml"),
        f'{MASTER}:24: {KEY}: row 0 srt-recipe "{{outside}}/agentic.yaml" is an absolute path',
    ),
    "srt-recipe climbing with ..": (
        _row_recipe("../../../../../../../../outside/agentic.yaml"),
        f'{MASTER}:24: {KEY}: row 0 srt-recipe "../../../../../../../../outside/agentic.yaml" '
        "climbs out with '..'",
    ),
    "recipe file is a symlink out": (
        _link(f"{RECIPES}/agentic.yaml", "agentic.yaml"),
        f"{MASTER}:24: {KEY}: row 0 srt-recipe: {RECIPES}/agentic.yaml is a symlink (or lies "
        "under one) pointing outside the InferenceX checkout; not followed",
    ),
    "recipe folder is a symlink out": (
        _recipe_dir_link,
        f"{MASTER}:24: {KEY}: row 0 srt-recipe: {RECIPES}/agentic.yaml is a symlink (or lies "
        "under one) pointing outside",
    ),
    "shared recipe block is a symlink out": (
        _link(SHARED, "shared.yaml"),
        f"{SHARED}: {KEY}: shared recipe block: {SHARED} is a symlink",
    ),
    "golden AL file is a symlink out": (
        _link(GOLDEN, "golden.yaml"),
        f"{GOLDEN}: {KEY}: golden AL file: {GOLDEN} is a symlink",
    ),
    "master config is a symlink out": (
        _link(MASTER, "master.yaml"),
        f"{MASTER}: master config: {MASTER} is a symlink",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_paths_out_of_the_checkout_are_refused(world: tuple[Path, Path], case: str) -> None:
    checkout, outside = world
    change, expected = CASES[case]
    change(checkout, outside)
    proc = subprocess.run(
        [*forkserver.command(), "render", KEY, "--inferencex", str(checkout)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2, proc.stdout[:300] + proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"error: {checkout}/" + expected.format(outside=outside)), line
    assert SECRET not in proc.stdout + proc.stderr and proc.stdout == ""


def test_config_file_rows_of_the_old_layout_are_held_too(tmp_path: Path) -> None:
    checkout = tmp_path / "old"
    (checkout / "configs").mkdir(parents=True)
    (checkout / "configs" / "nvidia-master.yaml").write_text(
        "m-fp8-h100-dynamo-sglang-agentic:\n"
        "  image: img:1\n  model: org/M-1\n  framework: dynamo-sglang\n  multinode: true\n"
        "  scenarios:\n    agentic-coding:\n    - search-space:\n"
        "      - {conc-list: [4], worker: {num-worker: 1, tp: 8, additional-settings: "
        '["CONFIG_FILE=recipes/../../../etc/agg.yaml:override_tp8"]}}\n'
    )
    entry = load_master(checkout).entry("m-fp8-h100-dynamo-sglang-agentic")
    with pytest.raises(SyncError) as info:
        entry.recipe_path(entry.rows[0])
    assert "row 0 srt-recipe \"../../../etc/agg.yaml\" climbs out with '..'" in info.value.message
    assert info.value.line == 1


def test_model_prefix_cannot_lead_the_golden_file_out(world: tuple[Path, Path]) -> None:
    checkout, _ = world
    master = checkout / MASTER
    master.write_text(master.read_text().replace("model-prefix: dsv41flash", "model-prefix: /x", 1))
    entry = load_master(checkout).entry(KEY)
    with pytest.raises(SyncError, match=r'golden AL file \(from model-prefix\) "/x_dspark.yaml"'):
        golden_al_file(entry, "dspark")


def test_links_that_stay_inside_the_checkout_are_followed(world: tuple[Path, Path]) -> None:
    checkout, _ = world
    recipe = checkout / RECIPES / "agentic.yaml"
    kept = checkout / "inferencex-e2e" / "kept-agentic.yaml"
    recipe.rename(kept)
    recipe.symlink_to(Path("../../../../../../kept-agentic.yaml"))
    assert recipe.resolve() == kept.resolve()
    ours, example = render_config(checkout, KEY), render_config(EXAMPLE, KEY)
    assert [p.raw for p in ours.points] == [p.raw for p in example.points]
