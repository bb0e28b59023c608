"""Rendering reads each recipe variant once: its cost is linear in the points of a config.

Counted, not timed: every point used to bind and normalise every variant of its recipe
(points x variants normalisations); now each variant is normalised once for matching and
each point normalises the variant it runs (and its other-router form).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import render as bench
from syncer.inferencex import render as render_mod
from syncer.inferencex import variants as variants_mod


@pytest.mark.parametrize("scale", [1, 4])
def test_normalisations_grow_with_points_not_points_times_variants(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scale: int
) -> None:
    root = bench.scaled_checkout(tmp_path / "checkout", scale)
    calls = []
    real = render_mod.normalise

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    # the variants are normalised where they are matched, the other-router form where it is
    # rendered
    monkeypatch.setattr(variants_mod, "normalise", counting)
    monkeypatch.setattr(render_mod, "normalise", counting)
    rendered = render_mod.render_config(root, bench.DSPARK)
    points = len(rendered.points)
    variants = 7 * scale
    assert points == 7 * scale
    assert len({p.override for p in rendered.points}) == points  # one variant per point
    # one probe per variant, the run variant and its other-router form per point
    assert len(calls) == variants + 2 * points


@pytest.mark.bench  # runs the benchmark end to end: `pytest -m bench`
def test_the_scaled_benchmark_reports_the_per_point_ratio(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert bench.main(["--runs", "1", "--scale", "2", "--case", "scale"]) == 0
    out = capsys.readouterr().out
    assert "scale: 7 points" in out and "14 points" in out and "per-point ratio" in out


@pytest.mark.bench  # runs the benchmark end to end: `pytest -m bench`
def test_the_many_keys_benchmark_reports_the_cost_per_config(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert bench.main(["--case", "keys", "--keys", "1,3", "--process-runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "keys: one master of 1 keys" in out and "keys: one master of 3 keys" in out
    assert "the cost per config at 1 (target <= 1.2x)" in out


def test_the_many_keys_master_holds_copies(tmp_path: Path) -> None:
    from syncer.inferencex.master import load_master

    root = bench.many_keys_checkout(tmp_path / "k", 5)
    text = (root / "inferencex-e2e" / "configs" / "nvidia-master.yaml").read_text()
    assert "&id" not in text  # no anchor: each key is written out, as a real master is
    assert len(load_master(root).keys()) == 5


def test_the_real_tree_case_finds_the_13_sglang_multi_node_keys(reference: Path) -> None:
    tree = reference / "inferencex-snapshots" / "843c6254"
    if not tree.is_dir():
        pytest.skip(f"InferenceX snapshot not present at {tree}")
    keys = bench.real_keys(tree)
    assert len(keys) == 13
    for files in keys.values():
        assert all(f.is_file() for f in files)
        assert any(f.name == "nvidia-master.yaml" for f in files)
        assert any("srt-slurm-recipes" in f.parts for f in files)
