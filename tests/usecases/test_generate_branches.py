"""`sync generate` for a key whose runner cloned an srt-slurm branch: the branch is taken as
it was at the run (the pin's date, else the InferenceX checkout's commit date, or --as-of),
read from --srt-slurm-repo, and the published cells name the commit applied."""

from __future__ import annotations

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
    eras_tree_on_main(tree)
    return {"repo": repo, "tree": tree, "aug": aug, "v58": v58, "tmp": tmp_path}


def _cli(world: dict, *args: str, date: str = "") -> subprocess.CompletedProcess[str]:
    """The real command, as a user runs it (exit codes included)."""
    tmp = world["tmp"]
    config = tmp / "sync.yaml"
    config.write_text(
        M2_SYNC_YAML.format(
            sha="4f1e2d3c5b6a79880a1b2c3d4e5f60718293a4b5",
            date=f'          date: "{date}"\n' if date else "",
        )
    )
    return subprocess.run(
        [*forkserver.command(), "generate", MODEL, "--config", str(config),
         "--inferencex", str(world["tree"]), "--out", str(tmp / "snippets"), "--no-page", *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _generate(world: dict, *args: str, date: str = "") -> tuple[str, dict]:
    done = _cli(world, *args, date=date)
    assert done.returncode == 0, done.stderr
    module = load_module(world["tmp"] / "snippets" / f"{MODEL}.jsx").value
    return done.stdout, module


def _applied(module: dict) -> set[str | None]:
    return {cell["prov"].get("srtSlurm") for cell in module["cells"]}


def test_a_branch_is_resolved_at_the_checkouts_date_and_named_in_the_cells(world: dict) -> None:
    result, module = _generate(world, "--srt-slurm-repo", str(world["repo"]))
    assert _applied(module) == {world["aug"]}
    assert (
        f"{AGG}: rules of srt-slurm main as of 2026-08-05T12:00:00+00:00 = {world['aug']} "
        "(1.x rules, carrying v1.0.41" in result
    )


def test_the_pins_run_date_wins_over_the_checkout_and_as_of_over_both(world: dict) -> None:
    _, module = _generate(world, "--srt-slurm-repo", str(world["repo"]), date="2026-08-20")
    assert _applied(module) == {world["v58"]}
    _, forced = _generate(
        world, "--srt-slurm-repo", str(world["repo"]), "--as-of", "2026-08-04", date="2026-08-20"
    )
    assert _applied(forced) == {world["aug"]}


def test_without_a_clone_the_branch_is_unresolved_and_no_commit_is_named(world: dict) -> None:
    result, module = _generate(world)
    assert _applied(module) == {None}
    assert "judged as read at its head" in result
    assert "give --srt-slurm-repo" in result


def test_a_bad_as_of_is_refused_and_nothing_written(world: dict) -> None:
    done = _cli(world, "--as-of", "05/08/2026")
    assert done.returncode == 2
    assert "--as-of" in done.stderr and "is not a date" in done.stderr
    assert not (world["tmp"] / "snippets").exists()
