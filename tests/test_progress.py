"""Progress on stderr (syncer.progress): shown on a terminal, nothing anywhere else."""

from __future__ import annotations

import os
import pty
import subprocess
import tarfile
import zipfile
from pathlib import Path

import forkserver
import pytest
from conftest import ROOT

from syncer import progress
from syncer.inferencex.render import render_config
from syncer.runs.collect import read_run

KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
RUN = ROOT / "examples" / "runs" / "41000000001"


def archive(tmp_path: Path, kind: str = "tar.gz") -> Path:
    path = tmp_path / f"bmk_run.{kind}"
    if kind == "zip":  # zipfile seeks: the progress wrapper must be the file itself to it
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in sorted(RUN.rglob("*")):
                if f.is_file():
                    zf.write(f, f.relative_to(RUN).as_posix())
        return path
    with tarfile.open(path, "w:gz") as tar:
        tar.add(RUN, arcname=".")
    return path


def test_points_rendered_on_a_terminal(stderr_as) -> None:
    buf = stderr_as(True)
    render_config(None, KEY)
    shown = buf.getvalue()
    assert f"rendering {KEY}" in shown
    assert "/7 points" in shown


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_archive_bytes_read_on_a_terminal(
    tmp_path: Path, monkeypatch, stderr_as, kind: str
) -> None:
    path = archive(tmp_path, kind)
    monkeypatch.setattr(progress, "MIN_BYTES", 0)  # the example run is small
    buf = stderr_as(True)
    data = read_run(path)
    assert len(data.sweeps) == 7  # the wrapped file reads like the file itself
    shown = buf.getvalue()
    assert f"reading bmk_run.{kind}" in shown
    assert f"/{path.stat().st_size / 1000:.1f} kB" in shown


def test_nothing_when_not_a_terminal(tmp_path: Path, monkeypatch, stderr_as) -> None:
    path = archive(tmp_path)
    monkeypatch.setattr(progress, "MIN_BYTES", 0)
    buf = stderr_as(False)  # a file: not a terminal
    render_config(None, KEY)
    read_run(path)
    assert buf.getvalue() == ""


def sync(*args: str, stderr: int) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*forkserver.command(), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env={**os.environ, "TERM": "xterm", "COLUMNS": "120"},
        check=False,
        timeout=120,
    )


def test_piped_stderr_gets_nothing_extra() -> None:
    proc = sync("verify", KEY, stderr=subprocess.PIPE)
    assert proc.returncode == 0
    assert proc.stderr == b""


@pytest.mark.skipif(not hasattr(pty, "openpty"), reason="needs a pseudo-terminal")
def test_terminal_stderr_shows_progress() -> None:
    leader, follower = pty.openpty()
    try:
        proc = sync("render", KEY, "--conc", "64", stderr=follower)
        os.close(follower)
        follower = -1
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the writer is gone
                break
            if not chunk:
                break
            shown += chunk
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    assert proc.returncode == 0
    assert f"rendering {KEY}".encode() in shown
    assert b"points" in shown
    assert b"rendering" not in proc.stdout  # the commands on stdout stay clean


def test_a_large_module_off_the_generator_layout_shows_its_parse(monkeypatch, stderr_as) -> None:
    from syncer.cookbook import jsmodule

    monkeypatch.setattr(jsmodule, "PARSE_PROGRESS_CHARS", 0)
    text = "// hand-written\nexport const agentx = { cells: [1, 2, 3] }\n"  # esprima's path
    buf = stderr_as(True)
    module = jsmodule.parse_module(text, "big.jsx")
    assert module.value == {"cells": [1, 2, 3]}
    assert "parsing big.jsx (0.0 MiB)" in buf.getvalue()
