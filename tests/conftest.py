"""Shared fixtures. Reference data is read from ../shared/reference when it exists; tests that
need it skip cleanly when it does not (it is never copied into the project)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = Path(os.environ.get("SYNC_REFERENCE_DIR", ROOT.parent / "shared" / "reference"))
EXAMPLES = ROOT / "examples"
GOLDEN = ROOT / "golden"


@pytest.fixture
def reference() -> Path:
    if not REFERENCE.is_dir():
        pytest.skip(f"reference data not present at {REFERENCE}")
    return REFERENCE


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


@pytest.fixture
def golden() -> Path:
    return GOLDEN
