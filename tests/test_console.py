"""Reports on stdout when it is not a terminal: 120 columns, text lines never wrapped."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from pathlib import Path

import forkserver
import pytest

from syncer.console import WIDTH, report_console

FIXTURES = Path(__file__).parent / "fixtures" / "diff"


def test_piped_diff_keeps_its_title_on_one_line(tmp_path: Path) -> None:
    deep = tmp_path / ("a-rather-long-directory-name-" * 3) / "deepseek-ai"
    deep.mkdir(parents=True)
    old, new = deep / "old-version.jsx", deep / "new-version.jsx"
    shutil.copy(FIXTURES / "base.jsx", old)
    shutil.copy(FIXTURES / "commands.jsx", new)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run(
        [*forkserver.command(), "diff", str(old), str(new)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    first = done.stdout.splitlines()[0]
    assert first == f"Reviewer diff {old} → {new}"
    assert len(first) > 120  # longer than any width rich would wrap at


def test_terminal_and_piped_consoles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    piped = report_console(io.StringIO())
    assert piped.width == WIDTH and piped.soft_wrap and not piped.is_terminal
    monkeypatch.setenv("COLUMNS", "70")  # issue 22.12: a width asked for is honoured
    assert report_console(io.StringIO()).width == 70
    # Options still reach rich, and a terminal keeps its own width.
    shown = report_console(io.StringIO(), force_terminal=True, width=70)
    assert shown.is_terminal and shown.width == 70 and not shown.soft_wrap


def test_every_report_console_comes_from_syncer_console() -> None:
    """A Console made elsewhere would wrap at 80 columns on a pipe again."""
    root = Path(__file__).resolve().parent.parent / "syncer"
    makers = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if "Console(" in p.read_text(encoding="utf-8")
    )
    assert makers == ["console.py", "progress.py"]  # progress: stderr, only on a terminal
