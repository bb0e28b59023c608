"""`sync render`'s output is its report (``usecases/render_report.py``) shown by ``reporting``
(issue 38.5): what the command prints in each ``--format`` is the report's form, and the text
form, pasted into a shell, is written as it is: no rich console is made (nor imported) for it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT

from syncer.cli import main
from syncer.inferencex.renders import Renders
from syncer.inputs import Input, record
from syncer.locations import bundled_inferencex
from syncer.reporting import text_of
from syncer.usecases.render_report import RenderRun, render_report

KEY = "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def printed(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as exc:
        main(["render", KEY, *args])
    out, err = capsys.readouterr()
    assert exc.value.code in (0, None), err
    return out


def test_each_format_prints_the_reports_form(capsys: pytest.CaptureFixture[str]) -> None:
    inferencex = bundled_inferencex()
    rendered = Renders().get(inferencex, KEY)
    run = RenderRun(
        KEY, rendered, rendered.points, None, False, [record(Input.INFERENCEX, inferencex)]
    )
    report = render_report(run)
    assert report.plain is not None
    assert printed(capsys) == report.plain()
    assert printed(capsys, "--format", "markdown") == text_of(report, "markdown")
    doc = json.loads(printed(capsys, "--format", "json"))
    assert doc == report.json() and doc["config"] == KEY and len(doc["points"]) == len(run.points)


def test_the_text_form_imports_no_rich() -> None:
    probe = (
        "import sys\nfrom syncer.cli import main\ntry:\n    main(['render', sys.argv[1]])\n"
        "except SystemExit:\n    pass\nsys.stderr.write('rich' + str('rich' in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, KEY], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert "#### " + KEY in done.stdout
    assert done.stderr.endswith("richFalse"), done.stderr
