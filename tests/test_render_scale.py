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

    monkeypatch.setattr(render_mod, "normalise", counting)
    rendered = render_mod.render_config(root, bench.DSPARK)
    points = len(rendered.points)
    variants = 7 * scale
    assert points == 7 * scale
    assert len({p.override for p in rendered.points}) == points  # one variant per point
    # one probe per variant, the run variant and its other-router form per point
    assert len(calls) == variants + 2 * points


def test_the_scaled_benchmark_reports_the_per_point_ratio(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert bench.main(["--runs", "1", "--scale", "2"]) == 0
    out = capsys.readouterr().out
    assert "scale: 7 points" in out and "14 points" in out and "per-point ratio" in out
