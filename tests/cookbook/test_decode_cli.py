"""`sync decode`: page defaults, selectors, text and JSON output, one-line errors with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import TESTS, match_golden

from syncer.cli import main

FIXTURES = TESTS / "fixtures" / "cookbook"
DEMO = str(FIXTURES / "agg_sglang.jsx")
LEGACY = str(FIXTURES / "legacy_perpoint.jsx")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(["decode", *args])
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


@pytest.mark.parametrize(
    ("args", "golden_name"),
    [
        (["--cell", "2"], "agg_sglang.cell2.measured-mooncake.txt"),
        (
            ["--cell", "demo-fp8-b300-dynamo-disagg#0", "--kv", "none"],
            "agg_sglang.cell2.kv-none.txt",
        ),
        (["--cell", "1", "--kv", "mooncake"], "agg_sglang.cell1.kv-mooncake.txt"),
        (["--cell", "demo-fp8-b300-sglang-agg#0@c4"], "agg_sglang.c4.txt"),
    ],
)
def test_copy_all_text(
    capsys: pytest.CaptureFixture[str], golden: Path, args: list[str], golden_name: str
) -> None:
    code, out, err = run(capsys, DEMO, *args)
    assert (code, err) == (0, "")
    match_golden(golden / "decode" / golden_name, out)


def test_legacy_placement_text(capsys: pytest.CaptureFixture[str], golden: Path) -> None:
    code, out, _ = run(capsys, LEGACY, "--router", "sglang", "--kv", "mooncake")
    assert code == 0
    match_golden(golden / "decode" / "legacy.sglang.kv-mooncake.txt", out)


def test_defaults_are_the_pages(capsys: pytest.CaptureFixture[str]) -> None:
    _, default, _ = run(capsys, DEMO)
    _, explicit, _ = run(capsys, DEMO, "--cell", "0", "--point", "0", "--router", "dynamo")
    assert default == explicit
    assert default.startswith("# Set per node before running the commands below\n")
    assert "\n# Worker\n" in default and "python3 -m dynamo.sglang" in default


def test_conc_selects_the_point(capsys: pytest.CaptureFixture[str]) -> None:
    _, by_conc, _ = run(capsys, DEMO, "--conc", "8", "--format", "json")
    case = json.loads(by_conc)
    assert (case["point"], case["status"]) == (1, "verified")
    assert ["--max-running-requests", "8"] in case["blocks"][2]["args"]


def test_single_case_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, DEMO, "--cell", "1", "--router", "sglang", "--format", "json")
    case = json.loads(out)
    assert code == 0
    assert list(case) == ["cell", "cellId", "point", "router", "kv", "status", "blocks", "text"]
    assert (case["cell"], case["kv"], case["status"]) == (1, "hicache", "in-progress")
    assert case["text"][0].startswith(
        "SGLANG_A=1 \\\nSGLANG_B=2 \\\npython3 -m sglang.launch_server"
    )


def test_all_json_is_oracle_shaped(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, DEMO, "--all", "--format", "json")
    doc = json.loads(out)
    assert code == 0
    assert doc["module"] == DEMO
    assert len(doc["cases"]) == 38
    # One case per line, like the oracle files.
    assert out.count("\n") == 38 + 5
    from syncer.cookbook.decode import load_decoder

    expected = [c.as_json() for c in load_decoder(DEMO).cases()]
    assert doc["cases"] == expected


@pytest.mark.parametrize("hostile", [False, True], ids=["plain", "hidden-characters"])
def test_all_json_lines_are_each_case_encoded_whole(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, hostile: bool
) -> None:
    # The printer builds a case's line from the JSON of its blocks and texts, each encoded
    # once; the line is what encoding the whole case gives, hidden characters escaped alike
    # and named per cell (here in a shared env value, the derived master's arg and port, an id).
    from syncer.commands.decode import _dump, _Pieces
    from syncer.cookbook.decode import load_decoder

    module = tmp_path / "module.jsx"
    text = (FIXTURES / "agg_sglang.jsx").read_text(encoding="utf-8")
    if hostile:
        text = text.replace('"SGLANG_A": "1"', '"SGLANG_A": "1\\u200b\\u001b[31m"')
        text = text.replace('"--port", "8700"', '"--port", "87\\u202e00"')
        text = text.replace('"ports": ["8700"]', '"ports": ["\\u2066"]')  # not in its text
        text = text.replace('"demo-fp8-b300-dynamo-disagg#0"', '"demo\\u00ad#0"')
    module.write_text(text, encoding="utf-8")
    code, out, err = run(capsys, str(module), "--all", "--format", "json")
    assert code == 0
    hidden: dict[str, list[str]] = {}
    lines = [
        f"    {_dump(c.as_json(), hidden.setdefault(c.cell_id, []))}"
        for c in load_decoder(module).cases()
    ]
    joined = ",\n".join(lines)
    assert out == f'{{\n  "module": {_dump(str(module))},\n  "cases": [\n{joined}\n  ]\n}}\n'
    named = {cell for cell, chars in hidden.items() if chars}
    shared = {"demo-fp4-gb300-dynamo-agg#0", "demo-fp4-gb300-sglang-agg#0", "demo\u00ad#0"}
    assert named == (shared if hostile else set())
    # each cell's warning names what its cases hold (the derived Mooncake master is one block
    # shown by two cells)
    warned = sorted(line.split(" holds ")[1] for line in err.splitlines() if " holds " in line)
    shown = [", ".join(sorted(set(hidden[c]), key=lambda e: (len(e), e))) for c in named]
    assert warned == sorted(
        f"control or invisible characters ({chars}), written as \\u escapes (the JSON values "
        "are unchanged)"
        for chars in shown
    )
    assert ("\\u202e" in out) is hostile and "\u202e" not in out
    # A case printed again (all its parts known by then) holds the same characters.
    pieces = _Pieces()
    for case in load_decoder(module).cases(fresh=False):
        first: list[str] = []
        again: list[str] = []
        assert pieces.case(case, first) == pieces.case(case, again)
        assert sorted(set(first)) == sorted(set(again))


def test_all_filters_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, DEMO, "--all", "--cell", "0", "--router", "sglang", "--kv", "none")
    assert code == 0
    headings = [line for line in out.splitlines() if line.startswith("#### ")]
    assert headings == [
        "#### demo-fp4-gb300-dynamo-agg#0 · point 0 (c1) · router sglang · kv none · derived",
        "#### demo-fp4-gb300-dynamo-agg#0 · point 1 (c4,8) · router sglang · kv none · derived",
        "#### demo-fp4-gb300-dynamo-agg#0 · point 2 (c16) · router sglang · kv none · derived",
    ]
    _, conc_only, _ = run(capsys, DEMO, "--all", "--conc", "16", "--format", "json")
    cases = json.loads(conc_only)["cases"]
    assert {(c["cell"], c["point"]) for c in cases} == {(0, 2)}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--point", "1", "--conc", "4"], "give --point or --conc, not both"),
        (["--point", "3"], 'cell "demo-fp4-gb300-dynamo-agg#0": --point 3 out of range (0..2)'),
        (
            ["--conc", "5"],
            "no point at concurrency 5 (concurrencies: 1, 4, 8, 16); no cell has it",
        ),
        (
            ["--conc", "64"],
            'cell "demo-fp4-gb300-dynamo-agg#0": no point at concurrency 64 (concurrencies: 1, 4,'
            " 8, 16); measured at 64 in: demo-fp4-gb300-sglang-agg#0",
        ),
        (
            ["--cell", "3", "--conc", "4"],
            "measured at 4 in: demo-fp4-gb300-dynamo-agg#0, demo-fp8-b300-sglang-agg#0@c4",
        ),
        (["--kv", "mooncake", "--cell", "3"], '"mooncake" is not offered for cell'),
        (["--cell", "nope#1"], 'no cell with id "nope#1"'),
        (["--router", "vllm"], 'unknown router "vllm"'),
    ],
)
def test_bad_selection(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    code, out, err = run(capsys, DEMO, *args)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err
    assert err.count("\n") == 1


def test_all_with_filters_matching_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, DEMO, "--all", "--router", "vllm", "--kv", "none")
    assert (code, out) == (2, "")
    assert "no case matches --router vllm --kv none" in err


def test_module_without_kv_tiers_accepts_its_measured_tier(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from syncer.cookbook.jsmodule import load_module
    from syncer.encoder.emit import emit_module

    module = load_module(DEMO)
    for cell in module.value["cells"]:
        cell.pop("kv", None)
        for point in cell["points"]:
            point.pop("kv", None)
    path = tmp_path / "nokv.jsx"
    path.write_text(emit_module(module.header, module.name, module.value), encoding="utf-8")
    code, default, _ = run(capsys, str(path), "--cell", "4")
    assert code == 0
    assert run(capsys, str(path), "--cell", "4", "--kv", "none") == (0, default, "")
    code, _, err = run(capsys, str(path), "--cell", "4", "--kv", "hicache")
    assert code == 2 and '"hicache" is not offered' in err and "(available: none listed)" in err


def test_unavailable_tier_names_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run(capsys, DEMO, "--cell", "3", "--kv", "hicache")
    assert 'not offered for cell "demo-fp8-b300-sglang-agg#0@c1": no donor (available: none)' in err


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (
            "export const agentx = {\n  cells: f()\n};\n",
            ":2:10:",
            "non-literal node CallExpression",
        ),
        ("export const agentx = [1];\n", ":1:23: module:", "expected an object, found an array"),
        ('export const agentx = {"cells": 1};\n', ":1:23: module:", "unknown module shape"),
        ('// x\nexport const agentx = {\n "cells": [\n', ":4:1:", "Unexpected end of input"),
    ],
)
def test_bad_module(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, where: str, message: str
) -> None:
    path = tmp_path / "bad.jsx"
    path.write_text(text, encoding="utf-8")
    code, out, err = run(capsys, str(path))
    assert code == 2 and out == ""
    assert err.startswith(f"error: {path}{where}")
    assert message in err and err.count("\n") == 1


def test_decoder_errors_name_the_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from syncer.cookbook.jsmodule import load_module
    from syncer.encoder.emit import emit_module

    module = load_module(DEMO)
    module.value["cells"][0]["routers"]["sglang"]["blocks"] = [{"ref": [1, "sglang", 0]}]
    path = tmp_path / "cycle.jsx"
    text = emit_module(module.header, module.name, module.value)
    path.write_text(text, encoding="utf-8")
    code, _, err = run(capsys, str(path), "--cell", "1", "--router", "sglang")
    assert code == 2
    lines = text.splitlines()
    # cells[1].routers.sglang: the error points at that router's object in the file.
    line_no = int(err.split(":")[2])
    assert lines[line_no - 2].strip() == '"routers": {'
    assert lines[line_no - 1].strip() == '"sglang": {'
    assert "ref cycle: cells[1].routers.sglang -> cells[0].routers.sglang" in err


def test_missing_module(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, str(tmp_path / "absent.jsx"))
    assert code == 2 and "cannot read data module" in err


def test_reference_module_all_json_matches_oracle(
    capsys: pytest.CaptureFixture[str], reference: Path
) -> None:
    module = reference / "cookbook" / "agentx" / "deepseek-ai" / "deepseek-v4_1" / "2b484a51.jsx"
    oracle = reference / "oracle" / "deepseek-ai" / "deepseek-v4_1" / "2b484a51.json"
    code, out, _ = run(capsys, str(module), "--all", "--format", "json")
    assert code == 0
    got = json.loads(out)["cases"]
    expected = json.loads(oracle.read_text("utf-8"))["cases"]
    assert [{k: v for k, v in c.items() if k != "status"} for c in got] == expected
    assert {c["status"] for c in got} == {"derived", "in-progress", "verified"}


def test_decode_imports_only_what_it_needs() -> None:
    # Start-up is part of the decode benchmark: the CLI must not pull in rich, PyGithub, jinja2,
    # YAML or markdown-it for a decode, nor esprima for a module in the generator's layout.
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from syncer.cli import main\n"
        "try:\n"
        f"    main(['decode', {DEMO!r}, '--all', '--format', 'json'])\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "heavy = ('rich', 'github', 'jinja2', 'yaml', 'markdown_it', 'esprima', 'deepdiff')\n"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stderr.strip() == "[]"


def test_a_config_key_selects_its_one_cell_and_lists_several(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Issue 37.7: --cell wanted the "#n" suffix even for a config shown in one cell.
    by_key = run(capsys, DEMO, "--cell", "demo-fp8-b300-dynamo-disagg", "--kv", "none")
    by_id = run(capsys, DEMO, "--cell", "demo-fp8-b300-dynamo-disagg#0", "--kv", "none")
    assert by_key == by_id and by_key[0] == 0
    code, out, err = run(capsys, DEMO, "--cell", "demo-fp8-b300-sglang-agg")
    assert (code, out) == (2, "")
    assert err.endswith(
        'cells: config "demo-fp8-b300-sglang-agg" is shown in 2 cells: '
        "demo-fp8-b300-sglang-agg#0@c1, demo-fp8-b300-sglang-agg#0@c4; give one\n"
    ), err


def test_markdown_is_each_cases_copy_all_text_as_one_bash_block(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Issue 37.7: decode had no markdown.
    from markdown_it import MarkdownIt

    code, text, _ = run(capsys, DEMO, "--all")
    assert code == 0
    code, markdown, _ = run(capsys, DEMO, "--all", "--format", "markdown")
    assert code == 0
    fences = [t for t in MarkdownIt().parse(markdown) if t.type == "fence"]
    sections = text.split("#### ")[1:]
    assert len(fences) == len(sections) > 1
    for fence, section in zip(fences, sections, strict=True):
        assert fence.info == "bash"
        assert fence.content.rstrip("\n") == section.split("\n", 1)[1].rstrip("\n")
    code, one, _ = run(capsys, DEMO, "--cell", "1", "--format", "markdown")
    assert code == 0 and one.count("```bash") == 1
