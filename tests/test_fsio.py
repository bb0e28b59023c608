"""The one atomic write: all or nothing, and a clear error when the target cannot be written."""

from __future__ import annotations

from pathlib import Path

import pytest

from syncer.errors import SyncError
from syncer.fsio import write_atomic


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
