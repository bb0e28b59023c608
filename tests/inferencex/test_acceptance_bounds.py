"""Issue 36, point 9, in the old layout: an acceptance length a row or a recipe gives is a
plain decimal from 1 up, or one ``error:`` line; it is published as the cell's goldenAL and
exported to every worker, so ``nan`` or a shell command never passes (``sync render`` as a
subprocess)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_layouts import AGG, RECIPE, _cli_error, old_checkout


@pytest.mark.parametrize("length", ["nan", "inf", "0.2", "1e9"])
def test_a_rows_synthetic_acceptance_length_that_is_no_acceptance_length_is_refused(
    tmp_path: Path, length: str
) -> None:
    settings = (
        "SYNTHETIC_ACCEPTANCE=true",
        f"SYNTHETIC_ACCEPTANCE_LENGTH={length}",
        "CONFIG_FILE=recipes/m/agentic/agg.yaml",
    )
    root = old_checkout(tmp_path, settings=settings)
    error = _cli_error(root)
    assert error.startswith(f"error: {root}/configs/")
    assert "SYNTHETIC_ACCEPTANCE_LENGTH must be a decimal number from 1 to 100" in error
    assert error.count("\n") == 1


@pytest.mark.parametrize("value", ['"nan"', '"3.51; touch PWNED"', '"-2"'])
def test_a_recipes_simulated_acceptance_length_that_is_no_acceptance_length_is_refused(
    tmp_path: Path, value: str
) -> None:
    recipe = AGG.replace(
        '    SGLANG_DEFAULT_THINKING: "0"\n',
        f'    SGLANG_DEFAULT_THINKING: "0"\n    SGLANG_SIMULATE_ACC_LEN: {value}\n',
    )
    root = old_checkout(tmp_path, recipe)
    assert _cli_error(root) == (
        f"error: {root}/{RECIPE}: SGLANG_SIMULATE_ACC_LEN must be a decimal number from 1 to "
        f"100 (an acceptance length), got {value}\n"
    )
