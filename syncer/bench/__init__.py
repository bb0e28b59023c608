"""Benchmarks: `python -m syncer.bench NAME [args]`. Each reports ratios against a reference run
made in the same process, so the figures travel between machines."""

import os
from pathlib import Path

# The shared reference data (real modules, master configs, oracles) every benchmark defaults to:
# ``SYNC_REFERENCE_DIR``, else ``../shared/reference`` next to the project.
REFERENCE = Path(
    os.environ.get(
        "SYNC_REFERENCE_DIR", Path(__file__).resolve().parents[2].parent / "shared" / "reference"
    )
)
