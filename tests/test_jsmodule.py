"""Data modules are read as literals only; anything else is an error with its position."""

from __future__ import annotations

from pathlib import Path

import pytest

from syncer.cookbook.jsmodule import load_module, parse_module
from syncer.errors import SyncError

FIXTURES = Path(__file__).parent / "fixtures" / "cookbook"


def test_generator_layout_reads_as_json() -> None:
    module = parse_module('// a\n// b\nexport const agentx = {\n "x": [1, -2, 2.5]\n};\n')
    assert module.header == ["// a", "// b"]
    assert module.name == "agentx"
    assert module.value == {"x": [1, -2, 2.5]}
    assert isinstance(module.value["x"][2], float)


def test_js_literal_syntax_off_the_generator_layout() -> None:
    text = (
        "/* block\n   comment */\n// line\n"
        "export const data = {a: 'single', \"b\": `tmpl`, c: -3, d: 1.0, e: 0x10, f: [true, null,],"
        " 7: 'numkey', // trailing comment\n};"
    )
    module = parse_module(text)
    assert module.header == ["/* block", "   comment */", "// line"]
    assert module.name == "data"
    assert module.value == {
        "a": "single",
        "b": "tmpl",
        "c": -3,
        "d": 1.0,
        "e": 16,
        "f": [True, None],
        "7": "numkey",
    }
    assert isinstance(module.value["d"], float) and isinstance(module.value["e"], int)


@pytest.mark.parametrize(
    ("text", "node", "line", "column"),
    [
        ("export const a = {\n  b: c\n};\n", "Identifier", 2, 6),
        ("export const a = {\n  b: f(1)\n};\n", "CallExpression", 2, 6),
        ("export const a = {...x};\n", "SpreadElement", 1, 19),
        ("export const a = [...x];\n", "SpreadElement", 1, 19),
        ("export const a = {f: () => 1};\n", "ArrowFunctionExpression", 1, 22),
        ("export const a = {f: function () {}};\n", "FunctionExpression", 1, 22),
        ("export const a = {f() {}};\n", "non-literal property", 1, 19),
        ("export const a = {[k]: 1};\n", "non-literal property", 1, 19),
        ("export const a = {t: `x${y}`};\n", "substitutions", 1, 22),
        ("export const a = {r: /x/};\n", "RegExp", 1, 22),
        ("export const a = {n: NaN};\n", "Identifier", 1, 22),
        ("export const a = {n: -'1'};\n", "unary minus", 1, 22),
        ("export const a = {n: !0};\n", "UnaryExpression", 1, 22),
        ("export const a = [1,,2];\n", "hole", 1, 18),
        ("export const a = 1;\nalert(1);\n", "nothing after the export", 2, 1),
        ("export let a = 1;\n", "export const", 1, 1),
        ("const a = 1;\n", "export const", 1, 1),
        ("// only a comment\n", "no statement", None, None),
    ],
)
def test_non_literals_refused(text: str, node: str, line: int | None, column: int | None) -> None:
    with pytest.raises(SyncError) as info:
        parse_module(text, "m.jsx")
    assert node in info.value.message
    assert (info.value.path, info.value.line, info.value.column) == ("m.jsx", line, column)


def test_jsx_is_refused_not_rendered() -> None:
    with pytest.raises(SyncError) as info:
        parse_module("export const a = {x: <div/>};\n", "m.jsx")
    assert info.value.line == 1


def test_truncated_file_names_the_position() -> None:
    full = (FIXTURES / "agg_sglang.jsx").read_text(encoding="utf-8")
    lines = full.splitlines(keepends=True)
    cut = "".join(lines[: len(lines) // 2])
    with pytest.raises(SyncError) as info:
        parse_module(cut, "cut.jsx")
    assert "Unexpected end of input" in info.value.message
    assert "truncated?" in info.value.message
    assert info.value.line == cut.count("\n") + 1
    mid_string = full[: full.index("demo/Demo-1-FP4") + 4]
    with pytest.raises(SyncError) as info:
        parse_module(mid_string, "cut.jsx")
    assert "truncated?" in info.value.message
    assert info.value.line == mid_string.count("\n") + 1


def test_load_module_errors(tmp_path: Path) -> None:
    with pytest.raises(SyncError, match="cannot read"):
        load_module(tmp_path / "missing.jsx")
    bad = tmp_path / "bad.jsx"
    bad.write_bytes(b"// x\nexport const a = '\xff';\n")
    with pytest.raises(SyncError, match="not UTF-8") as info:
        load_module(bad)
    assert info.value.line == 2


def test_absurd_nesting_is_an_error_not_a_crash() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(SyncError, match="nested too deeply"):
        parse_module(f"export const agentx = {deep};\n", "deep.jsx")
