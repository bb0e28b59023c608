"""`sync verify --cookbook FOLDER` lists the folder once: the command's check that it holds a
data module and the search for the module with the key's cells read the same listing (it
walked the folder twice), and each module is read once."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT

from syncer.cli import main
from syncer.usecases import verify as verify_mod

KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
RUN = ROOT / "examples" / "runs" / "41000000001"
INFX = ROOT / "examples" / "inferencex"
MODULE = ROOT / "cookbook_snippets" / "deepseek-ai" / "deepseek-v4_1.jsx"


def test_the_cookbook_folder_is_walked_once_and_each_module_read_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(ROOT)
    cookbook = tmp_path / "snippets"
    for org in ("deepseek-ai", "other-org"):
        (cookbook / org).mkdir(parents=True)
    shutil.copy(MODULE, cookbook / "deepseek-ai" / "deepseek-v4_1.jsx")
    (cookbook / "other-org" / "m.jsx").write_text("export default {cells: []};\n")
    walked: Counter[str] = Counter()
    read: Counter[str] = Counter()
    walk, capped = os.walk, verify_mod.read_capped

    def counted_walk(top: str | os.PathLike[str], *args: object, **kw: object) -> Iterator:
        walked[os.fspath(top)] += 1
        return walk(top, *args, **kw)  # type: ignore[arg-type]

    def counted_read(path: Path, limit: int, what: str) -> bytes:
        read[str(path)] += 1
        return capped(path, limit, what)

    monkeypatch.setattr(os, "walk", counted_walk)
    monkeypatch.setattr(verify_mod, "read_capped", counted_read)
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "verify",
                KEY,
                "--run",
                str(RUN),
                "--inferencex",
                str(INFX),
                "--cookbook",
                str(cookbook),
            ]
        )
    out = capsys.readouterr().out
    assert exc.value.code in (0, None), out
    assert "deepseek-ai/deepseek-v4_1.jsx" in out  # the module with the key's cells was found
    assert walked[str(cookbook)] == 1
    assert sorted(read.values()) == [1, 1] and len(read) == 2
