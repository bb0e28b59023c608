"""Benchmarks: `python -m bench NAME [args]`, run from the repository root. Each reports ratios
against a reference run made in the same process, so the figures travel between machines.

A top-level package of the repository, not part of `syncer`: it is never installed with the
tool (pyproject's `packages.find` includes `syncer*` only)."""

import os
from pathlib import Path

# The shared reference data (real modules, master configs, oracles) every benchmark defaults to:
# ``SYNC_REFERENCE_DIR``, else ``../shared/reference`` next to the project.
REFERENCE = Path(
    os.environ.get(
        "SYNC_REFERENCE_DIR", Path(__file__).resolve().parents[1].parent / "shared" / "reference"
    )
)
