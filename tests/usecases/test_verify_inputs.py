"""`sync verify`: the bundled example stands in for no input once another is named, and a
cookbook folder named with `--cookbook` is one of data modules (issue 37.1)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from syncer.cli import main

KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
RUN = ROOT / "examples" / "runs" / "41000000001"
INFX = ROOT / "examples" / "inferencex"
MODULE = ROOT / "cookbook_snippets" / "deepseek-ai" / "deepseek-v4_1.jsx"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def verify(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(["verify", KEY, *args])
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_nothing_named_is_the_bundled_example_throughout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = verify(capsys)
    assert code == 0
    assert "read run 41000000001: examples/runs/41000000001 (the bundled example)" in out


def test_a_named_checkout_and_cookbook_without_a_run_is_refused_not_given_the_example_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Before: the example's run was verified against them, "16 of 16 points do not agree".
    tree = shutil.copytree(INFX, tmp_path / "infx")
    code, out, err = verify(capsys, "--inferencex", str(tree), "--cookbook", str(MODULE))
    assert (code, out) == (2, "")
    assert err == (
        f"error: {KEY}: --inferencex and --cookbook name your own inputs, so the bundled "
        "example cannot stand in for the rest; pass --run too\n"
    )


def test_a_named_run_alone_asks_for_the_checkout_and_the_cookbook(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run = shutil.copytree(RUN, tmp_path / "run")
    code, _, err = verify(capsys, "--run", str(run))
    assert code == 2
    assert err.endswith("pass --inferencex and --cookbook too\n"), err
    code, _, _ = verify(
        capsys, "--run", str(run), "--inferencex", str(INFX), "--cookbook", str(MODULE)
    )
    assert code == 0  # the example named on purpose is taken


def test_a_cookbook_folder_without_any_module_is_an_error_not_drift(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pages = ROOT / "examples" / "cookbook"  # the example's pages: no data module under it
    code, out, err = verify(
        capsys, "--run", str(RUN), "--inferencex", str(INFX), "--cookbook", str(pages)
    )
    assert (code, out) == (2, "")
    assert err == (
        f"error: {pages}: no data module (.jsx) under this folder; name the module file, or "
        "the folder of the cookbook's modules (docs/src/snippets/agentx)\n"
    )


def test_many_modules_with_the_cells_are_named_a_few_and_the_option_to_use_said(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for name in "abcde":
        (tmp_path / name).mkdir()
        shutil.copy(MODULE, tmp_path / name / "deepseek-v4_1.jsx")
    code, _, err = verify(
        capsys, "--run", str(RUN), "--inferencex", str(INFX), "--cookbook", str(tmp_path)
    )
    assert code == 2
    shown = ", ".join(str(tmp_path / n / "deepseek-v4_1.jsx") for n in "abc")
    assert err == (
        f"error: {tmp_path}: 5 cookbook modules have cells of {KEY} ({shown} and 2 more); "
        "name one module file with --cookbook\n"
    )


def test_markdown_names_each_source_once(capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 37.7: the checkout, the run and the module were listed twice, once as "Read ...".
    code, out, _ = verify(capsys, "--format", "markdown")
    assert code == 0
    sources = out.split("<summary>Sources</summary>")[1].split("</details>")[0]
    for path in ("`examples/inferencex`", "`examples/runs/41000000001`", "`sync.yaml`",
                 "`cookbook_snippets/deepseek-ai/deepseek-v4_1.jsx`"):  # fmt: skip
        assert sources.count(path) == 1, (path, sources)
