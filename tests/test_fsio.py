"""The one atomic write: all or nothing, and a clear error when the target cannot be written."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import forkserver
import pytest

from syncer.errors import SyncError
from syncer.fsio import write_all, write_atomic


def test_writes_whole_text_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "m.jsx"
    write_atomic(target, "a\n")
    write_atomic(target, "b — c\n")
    assert target.read_text("utf-8") == "b — c\n"
    assert [p.name for p in target.parent.iterdir()] == ["m.jsx"]


def test_a_directory_in_the_way_is_a_sync_error_and_nothing_is_left(tmp_path: Path) -> None:
    target = tmp_path / "m.jsx"
    target.mkdir()
    (target / "keep").write_text("x")
    with pytest.raises(SyncError) as info:
        write_atomic(target, "new\n")
    assert info.value.path == str(target)
    assert "cannot write the file" in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.jsx"]
    assert (target / "keep").read_text() == "x"


def test_new_files_get_the_usual_mode_and_existing_ones_keep_theirs(tmp_path: Path) -> None:
    # Issue 12.7: mkstemp's private 0600 leaked into every module, page and output written.
    old = os.umask(0o022)
    try:
        fresh = tmp_path / "new.jsx"
        write_atomic(fresh, "x\n")
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
        os.umask(0o027)
        write_atomic(tmp_path / "grouped.jsx", "x\n")
        assert stat.S_IMODE((tmp_path / "grouped.jsx").stat().st_mode) == 0o640
        for mode in (0o600, 0o664, 0o755):
            kept = tmp_path / f"kept-{mode:o}.mdx"
            kept.write_text("old\n")
            kept.chmod(mode)
            write_atomic(kept, "new\n")
            assert (stat.S_IMODE(kept.stat().st_mode), kept.read_text()) == (mode, "new\n")
    finally:
        os.umask(old)


def test_generate_writes_modules_and_pages_with_the_usual_mode(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    pages = tmp_path / "pages"
    shutil.copytree(root / "examples/cookbook", pages)
    page = next(pages.rglob("*.mdx"))
    page.chmod(0o664)  # an existing page keeps its mode
    proc = subprocess.run(
        [*forkserver.command(), "generate", "--all", "--out", str(tmp_path / "out"),
         "--pages", str(pages), "--date", "2026-10-13"],
        cwd=root, capture_output=True, text=True,
        preexec_fn=lambda: os.umask(0o022),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    [module] = (tmp_path / "out").rglob("*.jsx")
    assert stat.S_IMODE(module.stat().st_mode) == 0o644
    assert stat.S_IMODE(page.stat().st_mode) == 0o664


def test_write_all_puts_back_what_a_failed_rename_left_half_done(tmp_path: Path) -> None:
    # Staging succeeds for all three (the temp files sit beside their targets); the rename
    # onto the directory fails after the first two were replaced: both are undone.
    old = tmp_path / "old.jsx"
    old.write_text("old\n")
    old.chmod(0o640)
    new = tmp_path / "new.mdx"
    blocked = tmp_path / "blocked.jsx"
    blocked.mkdir()
    with pytest.raises(SyncError) as info:
        write_all({old: "changed\n", new: "fresh\n", blocked: "x\n"})
    assert info.value.path == str(blocked)
    assert old.read_text() == "old\n" and stat.S_IMODE(old.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocked.jsx", "old.jsx"]
