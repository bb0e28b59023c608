"""The verify benchmark's synthetic run is a valid run (timings are only measured by
`python -m bench verify`, never asserted here)."""

from __future__ import annotations

import tarfile
from pathlib import Path

from bench.verify import write_archive
from syncer.runs.collect import read_run


def test_synthetic_archive_is_a_run_of_the_example(tmp_path: Path) -> None:
    path = tmp_path / "run.tar.gz"
    size = write_archive(path, 16 / 1024)  # 16 MiB decompressed
    assert size >= 16 << 20
    with tarfile.open(path) as tar:
        names = tar.getnames()
    assert sum(n.endswith(".out") for n in names) == 7
    data = read_run(path)
    assert sorted(s.job_id for s in data.sweeps) == [str(5230101 + i) for i in range(7)]
    assert all(len(s.workers) == 1 for s in data.sweeps)
    # padded with realistic noise, not a bomb: compresses well under the ratio limit
    assert path.stat().st_size * 20 > size
