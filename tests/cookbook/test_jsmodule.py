"""Data modules are read as literals only; anything else is an error with its position."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT, TESTS

from syncer.cookbook.jsmodule import _parse_esprima, _parse_fast, load_module, parse_module
from syncer.errors import SyncError

FIXTURES = TESTS / "fixtures" / "cookbook"


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


def test_every_literal_kind_on_the_esprima_path() -> None:
    text = (
        "export const data = {\n"
        "  s: 'it\\'s', d: \"q\\u00e9\", t: `a\\nb`, yes: true, no: false, none: null,\n"
        "  ints: [0, -0, 7, -7, 0x1F, 0o17, 0b101], floats: [1.0, .5, 5., 1e3, 1E-2, -2.5],\n"
        "  nested: {a: [[], {}], 'b c': [{}]},\n"
        "  1.5: 'float key', 0x10: 'hex key', 1e21: 'exp key', 'q': `\u00b7`,\n"
        "};\n"
    )
    value = parse_module(text).value
    assert value == {
        "s": "it's",
        "d": "qé",
        "t": "a\nb",
        "yes": True,
        "no": False,
        "none": None,
        "ints": [0, 0, 7, -7, 31, 15, 5],
        "floats": [1.0, 0.5, 5.0, 1000.0, 0.01, -2.5],
        "nested": {"a": [[], {}], "b c": [{}]},
        "1.5": "float key",
        "16": "hex key",
        "1e+21": "exp key",  # String(1e21) in JavaScript
        "q": "·",
    }
    assert [type(v) for v in value["ints"]] == [int] * 7
    assert [type(v) for v in value["floats"]] == [float] * 6


def fixture_modules() -> list[Path]:
    root = ROOT
    return sorted(
        [
            *(root / "tests" / "fixtures").rglob("*.jsx"),
            *(root / "cookbook_snippets").rglob("*.jsx"),
        ]
    )


@pytest.mark.parametrize("path", fixture_modules(), ids=lambda p: p.name)
def test_both_readers_agree_on_our_modules(path: Path) -> None:
    # The reference modules are checked too (tests/encoder/test_emit.py), but only the
    # smallest one, as esprima needs seconds for the large ones; ours are small enough for all.
    text = path.read_text(encoding="utf-8")
    fast = _parse_fast(text)
    assert fast is not None, "not in the generator's layout"
    slow = _parse_esprima(text, str(path))
    assert slow == fast
    assert json.dumps(slow.value) == json.dumps(fast.value)  # key order too


@pytest.mark.parametrize(
    ("text", "node", "line", "column"),
    [
        ("export const a = {\n  b: c\n};\n", "Identifier", 2, 6),
        ('// h\nexport const agentx = {\n "n": NaN\n};\n', "Identifier", 3, 7),
        ('export const agentx = {\n "n": -Infinity\n};\n', "unary minus on Identifier", 2, 7),
        ("export const a = {a: undefined};\n", "Identifier", 1, 22),
        ("export const a = {a};\n", "non-literal property", 1, 19),
        ("export const a = {get a() { return 1 }};\n", "non-literal property", 1, 19),
        ("export const a = {a: new Date()};\n", "NewExpression", 1, 22),
        ("export const a = {a: x.y};\n", "MemberExpression", 1, 22),
        ("export const a = {a: 1 + 2};\n", "BinaryExpression", 1, 22),
        ("export const a = {a: a ? 1 : 2};\n", "ConditionalExpression", 1, 22),
        ("export const a = {a: class {}};\n", "ClassExpression", 1, 22),
        ("export const a = {a: tag`x`};\n", "TaggedTemplateExpression", 1, 22),
        ("export const a = {a: +1};\n", "UnaryExpression", 1, 22),
        ("export const a = {a: <div/>};\n", "JSXElement", 1, 22),
        ("export const a = {a: (1, 2)};\n", "SequenceExpression", 1, 23),
        ("export default {a: 1};\n", "found ExportDefaultDeclaration", 1, 1),
        ("export const a = 1, b = 2;\n", "export const", 1, 1),
        ("export const {a} = {a: 1};\n", "export const", 1, 1),
        ('import x from "y";\nexport const a = 1;\n', "found ImportDeclaration", 1, 1),
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


def test_syntax_error_in_a_whole_file_is_not_called_truncated() -> None:
    with pytest.raises(SyncError) as info:
        parse_module("export const a = {a: 1}};\n", "m.jsx")
    assert "malformed JavaScript: Unexpected token }" in info.value.message
    assert "truncated" not in info.value.message
    assert (info.value.line, info.value.column) == (1, 24)


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


@pytest.mark.parametrize("text", ["", "\n  \n", "// generated\n/* nothing */\n"])
def test_a_module_of_nothing_is_refused_without_esprima(text: str, tmp_path: Path) -> None:
    """Refusing an empty module must not cost more than reading a good one: esprima's import
    alone is several times the whole fast path, so it is not loaded for a blank file."""
    import subprocess
    import sys

    module = tmp_path / "empty.jsx"
    module.write_text(text, encoding="utf-8")
    probe = (
        "import sys\n"
        "from syncer.cookbook.jsmodule import load_module\n"
        "from syncer.errors import SyncError\n"
        "try:\n"
        f"    load_module({str(module)!r})\n"
        "except SyncError as exc:\n"
        "    print(exc.message)\n"
        "print('esprima' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.splitlines() == [
        "expected `export const <name> = <literal>`, found no statement",
        "False",
    ]
