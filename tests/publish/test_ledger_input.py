"""The ledger restored from the workflow's cache is read as any other input: capped, and
something that is no regular file refused by name, never taken for an absent ledger."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from syncer.errors import SyncError
from syncer.publish import ledger as ledger_mod
from syncer.publish.ledger import Ledger

MODEL = "deepseek-ai/deepseek-v4_1"


def test_no_ledger_reads_every_pr(tmp_path: Path) -> None:
    assert Ledger.load(tmp_path, MODEL).seen == {}


def test_a_fifo_at_the_ledger_path_is_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "deepseek-ai__deepseek-v4_1.json")
    with pytest.raises(SyncError, match="ledger"):
        Ledger.load(tmp_path, MODEL)


def test_a_ledger_over_its_cap_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ledger_mod, "MAX_BYTES", 64)
    (tmp_path / "deepseek-ai__deepseek-v4_1.json").write_text("{" + " " * 100 + "}\n")
    with pytest.raises(SyncError, match="ledger"):
        Ledger.load(tmp_path, MODEL)
