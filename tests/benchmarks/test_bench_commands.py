"""The verify and audit benchmarks measure commands that do the work they name (no timing is
asserted here): `sync verify` agrees on the synthetic archive, and the scaled cookbook holds
every module ``--scale`` times."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import ROOT

from bench import audit as audit_bench
from bench import timing
from bench.verify import _verify_cmd, write_archive
from syncer.usecases.audit import module_paths


def test_the_verify_bench_command_agrees_on_the_synthetic_run(tmp_path: Path) -> None:
    archive = tmp_path / "run.tar.gz"
    write_archive(archive, 8 / 1024)
    done = subprocess.run(
        _verify_cmd(archive), capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert '"verdict": "agree"' in done.stdout


def test_rusage_run_counts_a_pipelines_processes() -> None:
    cpu, rss, code = timing.rusage_run(["bash", "-c", "python3 -c 'sum(range(3_000_000))' | cat"])
    assert code == 0 and cpu > 0 and rss > 0


def test_the_scaled_cookbook_holds_every_module_scale_times(tmp_path: Path) -> None:
    cookbook = ROOT / "cookbook_snippets"
    paths = module_paths(cookbook)
    scaled = audit_bench._scaled(cookbook, paths, 3, tmp_path / "scaled")
    copies = module_paths(scaled)
    assert len(copies) == 3 * len(paths) > 0
    assert {p.read_bytes() for p in copies} == {p.read_bytes() for p in paths}
    assert len({p.parent for p in copies}) == 3 * len({p.parent for p in paths})
