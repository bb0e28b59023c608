"""The emitter writes the generator's layout byte for byte; parse -> emit is the identity."""

from __future__ import annotations

from pathlib import Path

import pytest

from syncer.cookbook.jsmodule import _parse_esprima, load_module, parse_module
from syncer.encoder.emit import dumps, emit_module
from syncer.errors import SyncError


def reference_modules(reference: Path) -> list[Path]:
    modules = sorted((reference / "cookbook" / "agentx").glob("*/*/*.jsx"))
    assert modules, "reference folder present but holds no data modules"
    return modules


def test_roundtrip_every_reference_module(reference: Path) -> None:
    for path in reference_modules(reference):
        text = path.read_text(encoding="utf-8")
        module = load_module(path)
        assert len(module.header) == 3
        assert module.name == "agentx"
        assert emit_module(module.header, module.name, module.value) == text, path


def test_esprima_reader_agrees_with_fast_reader(reference: Path) -> None:
    # Only the smallest module: esprima needs seconds for the large ones.
    path = min(reference_modules(reference), key=lambda p: p.stat().st_size)
    text = path.read_text(encoding="utf-8")
    slow = _parse_esprima(text, str(path))
    fast = parse_module(text, str(path))
    assert slow == fast
    assert emit_module(slow.header, slow.name, slow.value) == text


def test_layout_rules() -> None:
    value = {
        "b": [1, 2.5, "x", None, True, False],
        "a": {},
        "c": [],
        "gpu_pinning": [["0,1"], ["2,3"]],
        "patch": [None, {"args": {"--x": []}}],
        "text": 'Disagg · prefill — "q"',
    }
    assert dumps(value) == (
        "{\n"
        ' "b": [1, 2.5, "x", null, true, false],\n'
        ' "a": {},\n'
        ' "c": [],\n'
        ' "gpu_pinning": [\n'
        '  ["0,1"],\n'
        '  ["2,3"]\n'
        " ],\n"
        ' "patch": [\n'
        "  null,\n"
        "  {\n"
        '   "args": {\n'
        '    "--x": []\n'
        "   }\n"
        "  }\n"
        " ],\n"
        ' "text": "Disagg · prefill — \\"q\\""\n'
        "}"
    )


def test_module_text_and_header_marker() -> None:
    text = emit_module(["// one", "two"], "agentx", {"k": [1]})
    assert text == '// one\n// two\nexport const agentx = {\n "k": [1]\n};\n'
    assert parse_module(text).value == {"k": [1]}


@pytest.mark.parametrize("line", ["a\nexport const x = 1;", "a\rb", "a\u2028b"])
def test_header_line_breaks_refused(line: str) -> None:
    with pytest.raises(SyncError, match="line break"):
        emit_module([line], "agentx", {})


@pytest.mark.parametrize(
    ("value", "match"),
    [(float("nan"), "not a JSON number"), ({1: "x"}, "keys must be strings"), (object(), "object")],
)
def test_unwritable_values(value: object, match: str) -> None:
    with pytest.raises(SyncError, match=match):
        dumps(value)


def test_bad_export_name() -> None:
    with pytest.raises(SyncError, match="identifier"):
        emit_module([], "agent x", {})
