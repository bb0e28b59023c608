"""The ledger is written as every file the tool writes, through ``fsio`` (issue 35's review):
its folder made by the write, a target that is no regular file refused by name, and a folder
path blocked by a file an ``error:`` naming the ledger, not an internal error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from syncer.errors import SyncError
from syncer.github.records import Pull
from syncer.publish.ledger import Ledger

MODEL = "deepseek-ai/deepseek-v4_1"
FILE = "deepseek-ai__deepseek-v4_1.json"


def _marked(folder: Path) -> Ledger:
    ledger = Ledger.load(folder, MODEL)
    ledger.mark(
        Pull(
            repo="o/r",
            number=7,
            title="t",
            body="",
            state="open",
            merged=False,
            user="u",
            head_ref="b",
            head_sha="a" * 40,
            head_repo="o/r",
            base_ref="main",
            labels=(),
            html_url="",
            updated_at="2026-12-07T00:00:00Z",
        )
    )
    return ledger


def test_the_folder_is_made_by_the_write_and_the_ledger_reads_back(tmp_path: Path) -> None:
    folder = tmp_path / "cache" / "ledger"
    _marked(folder).save()
    assert Ledger.load(folder, MODEL).seen == {7: ("a" * 40, "2026-12-07T00:00:00Z")}
    assert sorted(p.name for p in folder.iterdir()) == [FILE]  # no temp file left


def test_a_file_where_the_folder_should_be_is_named_not_a_crash(tmp_path: Path) -> None:
    blocker = tmp_path / "ledger"
    ledger = _marked(blocker)
    blocker.write_text("someone's file\n")  # appeared after the load found no ledger
    with pytest.raises(SyncError, match="its folder is not a folder") as caught:
        ledger.save()
    assert caught.value.path == str(blocker / FILE)
    assert blocker.read_text() == "someone's file\n"


def test_a_fifo_at_the_ledger_path_is_refused_before_writing(tmp_path: Path) -> None:
    ledger = _marked(tmp_path)
    os.mkfifo(tmp_path / FILE)  # appeared after the load
    with pytest.raises(SyncError, match="cannot write the file"):
        ledger.save()
    assert sorted(p.name for p in tmp_path.iterdir()) == [FILE]
