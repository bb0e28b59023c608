"""`sync audit --format json` writes each cell's entry as it is made (issue 39: its peak memory
flat as the cookbook grows), and the text is byte for byte the whole document's: laid out the
same, tokens masked and hidden characters escaped in every piece."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from syncer.cli import main
from syncer.inputs import Input, record
from syncer.reporting import JsonItems, Report, json_pieces, write
from syncer.untrusted import json_text
from syncer.usecases.audit import audit
from syncer.usecases.audit_report import audit_report
from syncer.usecases.audit_trees import FolderTree

MODULE = ROOT / "cookbook_snippets" / "deepseek-ai" / "deepseek-v4_1.jsx"
INFX = ROOT / "examples" / "inferencex"
TOKEN = "ghp_" + "Ab1" * 12
HIDDEN = "\u202e\x1b[31m\u200b"


def _whole(document: dict[str, Any], indent: int | None) -> str:
    """The text the JSON form had before it was written in pieces: one ``json_text``."""
    made = {k: list(v.items()) if isinstance(v, JsonItems) else v for k, v in document.items()}
    return json_text(made, indent=indent) + "\n"


DOCUMENTS: list[dict[str, Any]] = [
    {"a": 1, "cells": JsonItems(lambda: iter(())), "read": []},
    {"cells": JsonItems(lambda: iter([{}])), "z": {}},
    {
        "schema": 1,
        f"key {HIDDEN}": {"nested": [1, [2, {"x": None}]], "empty": {}, "list": []},
        "cells": JsonItems(
            lambda: (
                {"label": f"TP{n} {HIDDEN} {TOKEN}", "points": [{"concs": [n, 2 * n]}], "é": "ü"}
                for n in range(3)
            )
        ),
        "read": [{"what": f"token {TOKEN}"}],
    },
]


@pytest.mark.parametrize("document", DOCUMENTS)
@pytest.mark.parametrize("indent", [1, 2, 4])
def test_the_pieces_are_the_whole_documents_text(document: dict[str, Any], indent: int) -> None:
    text = "".join(json_pieces(document, indent))
    assert text == _whole(document, indent)
    assert TOKEN not in text and "\u202e" not in text and "\x1b" not in text


def test_a_document_without_items_is_one_piece() -> None:
    document = {"a": [1, 2], "b": {"c": TOKEN}}
    assert list(json_pieces(document, None)) == [_whole(document, None)]


def test_each_item_is_written_as_it_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """No item is made before the one before it has been written."""
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    written_before: list[int] = []

    def items() -> Any:
        for n in range(4):
            written_before.append(len(out.getvalue()))
            yield {"n": n}

    report = Report(
        exit_code=0,
        document=lambda: {"head": 1, "cells": JsonItems(items)},
        renderings=lambda budget: iter(["-"]),
        cut_note="",
        plain=lambda: "",
    )
    assert write(report, "json") == 0
    assert written_before == sorted(set(written_before))  # each later than the last
    assert json.loads(out.getvalue()) == {"head": 1, "cells": [{"n": n} for n in range(4)]}


def test_the_audits_json_is_the_whole_documents_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the command: a cell's label holding a token and hidden characters (a value a
    module's author wrote) is masked and escaped exactly as when the document was one text."""
    monkeypatch.chdir(ROOT)
    for name in ("GITHUB_TOKEN", "INFX_TOKEN", "GH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "agentx"
    shutil.copytree(MODULE.parent.parent, folder)
    module = folder / MODULE.relative_to(MODULE.parent.parent)
    text = module.read_text(encoding="utf-8")
    assert '"label": "Agg TP4"' in text
    module.write_text(
        text.replace('"label": "Agg TP4"', f'"label": "Agg TP4 {HIDDEN} {TOKEN}"', 1),
        encoding="utf-8",
    )
    with pytest.raises(SystemExit) as exc:
        main(["audit", "--cookbook", str(folder), "--inferencex", str(INFX), "--format", "json"])
    out, err = capsys.readouterr()
    assert exc.value.code in (0, 1), err
    result = audit(folder, FolderTree(INFX), reviews=False)
    reads = [record(Input.COOKBOOK, folder), record(Input.INFERENCEX, INFX)]
    report = audit_report(result, reads)
    assert out == json_text(report.json(), indent=report.json_indent) + "\n"
    labels = [c["label"] for c in json.loads(out)["cells"]]
    assert "Agg TP4 \u202e\x1b[31m\u200b ***" in labels
    assert TOKEN not in out and "\\u202e\\u001b[31m\\u200b" in out


def test_spooled_cells_are_written_as_the_held_ones(tmp_path: Path) -> None:
    """`--format json` spools each module's cells when its audit ends (nothing of a cell is
    held to the end): the counts, exit code and every cell's entry are those of the cells
    held, byte for byte, a token in a cell's label masked and hidden characters escaped."""
    folder = tmp_path / "agentx"
    shutil.copytree(MODULE.parent.parent, folder)
    module = folder / MODULE.relative_to(MODULE.parent.parent)
    text = module.read_text(encoding="utf-8")
    edited = text.replace('"label": "Agg TP4"', f'"label": "Agg TP4 {HIDDEN} {TOKEN}"', 1)
    flag = '"--max-running-requests": ["8"]'  # a hand edit of a published flag: a finding
    assert flag in edited
    module.write_text(edited.replace(flag, flag.replace("8", "9"), 1), encoding="utf-8")
    held = audit(folder, FolderTree(INFX), reviews=False)
    assert held.counts()["cellsWithFindings"] > 0
    spooled = audit(folder, FolderTree(INFX), reviews=False, spool=True)
    assert spooled.cells == [] and spooled.spooled is not None
    assert held.cells and held.exit_code == spooled.exit_code == 1
    assert spooled.counts() == held.counts()
    texts = ["".join(json_pieces(audit_report(r).document(), 2)) for r in (held, spooled)]
    assert texts[0] == texts[1]
    assert TOKEN not in texts[1] and "\\u202e\\u001b[31m\\u200b ***" in texts[1]
    assert audit_report(spooled).json() == audit_report(held).json()
