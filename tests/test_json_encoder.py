"""JSON is written by orjson (a declared dependency) with the standard library's json kept as
the fallback, and both write the same bytes (issue 39: `sync decode` at most 0.3x node): the
encoder's functions against ``json.dumps`` on the values where the two differ on their own
(every character, lone surrogates, floats below 1e-4, ints beyond 64 bits, key order,
indentation), and `sync decode --all --format json` as a process with orjson and with it
hidden, on every reference module and on foreign modules holding what the escapes are for."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import random
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT
from test_hardening import MODULE, copy_project, edit

from syncer import jsonenc

REFERENCE = Path(os.environ.get("SYNC_REFERENCE_DIR", ROOT.parent / "shared" / "reference"))
# `sync` as a process, with orjson importable or hidden (None in sys.modules: ImportError).
RUN = "import sys; from syncer.cli import run; run()"
RUN_WITHOUT_ORJSON = "import sys; sys.modules['orjson'] = None; from syncer.cli import run; run()"


@pytest.fixture(params=["orjson", "json"])
def encoder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``syncer.jsonenc`` imported again with orjson hidden for the ``json`` run."""
    name: str = request.param
    if name == "json":
        monkeypatch.setitem(sys.modules, "orjson", None)
    importlib.reload(jsonenc)
    try:
        assert name == jsonenc.NAME
        yield name
    finally:
        monkeypatch.undo()
        importlib.reload(jsonenc)


def test_orjson_is_the_encoder_of_an_installed_tool() -> None:
    assert jsonenc.NAME == "orjson"  # a declared dependency (pyproject)


def _doubles() -> list[float]:
    rng = random.Random(39)
    found = [struct.unpack("d", rng.randbytes(8))[0] for _ in range(20_000)]
    found = [x for x in found if x == x and abs(x) != float("inf")]
    for exponent in range(-320, 309):
        for mantissa in (1.0, 1.5, 9.999999, 3.14159):
            with contextlib.suppress(OverflowError):
                found.append(mantissa * 10.0**exponent)
    return [x for x in found if abs(x) != float("inf")] + [0.0, -0.0, 5e-324, 1e-4, 9.9e-5]


VALUES: list[object] = [
    {"b": 1, "a": [True, None, False], "": {}, "z": [], "y": [[], {}]},
    "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, 0x110000, 7))),
    ['\x00\x1b[31m\x7f\x85\u200b\u202e\u2028\u2029\ufeff\t\n\r\b\f\\"/'],
    "au\ud800to",  # a lone surrogate (json writes it raw, orjson refuses it)
    {"k\udfff": ["\udc00"]},
    [2**63 - 1, -(2**63), 2**64 - 1, 2**64, -(2**63) - 1, 10**30],
    _doubles(),
    [1e-05, 1.5e-07, -9.456011395225814e-07, 0.0001, 0.00012],
    [float("nan"), float("inf"), -float("inf"), None, 1.5],  # orjson: null for the first three
    ["1e-5 as text", "0.00001", "--enable-hierarchical-cache"],
    (1, "tuple"),
    {1: "an int key", None: "null key"},
    {"nested": {"deep": [{"a": [1, 2.5, "x"]}]}},
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_every_function_writes_what_json_writes(encoder: str, value: object) -> None:
    assert jsonenc.compact(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for indent in (None, 1, 2):
        assert jsonenc.indented(value, indent) == json.dumps(
            value, indent=indent, ensure_ascii=False
        )


def test_what_json_refuses_is_refused(encoder: str) -> None:
    import dataclasses
    import datetime

    @dataclasses.dataclass
    class Point:
        x: int

    for value in (Point(1), datetime.date(2026, 1, 1), object()):
        with pytest.raises(TypeError):
            jsonenc.compact(value)
        with pytest.raises(TypeError):
            jsonenc.indented(value, 2)


def _decode(module: Path, program: str, cwd: Path = ROOT) -> tuple[int, bytes, bytes]:
    done = subprocess.run(
        [sys.executable, "-c", program, "decode", str(module), "--all", "--format", "json"],
        cwd=cwd,
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def _same_both_ways(module: Path, cwd: Path = ROOT) -> tuple[int, bytes, bytes]:
    compiled = _decode(module, RUN, cwd)
    assert compiled == _decode(module, RUN_WITHOUT_ORJSON, cwd)
    return compiled


def _reference_modules() -> list[Path]:
    return sorted((REFERENCE / "cookbook" / "agentx").rglob("*.jsx"))


@pytest.mark.skipif(not _reference_modules(), reason="no reference data (SYNC_REFERENCE_DIR)")
@pytest.mark.parametrize("index", range(4))
def test_decode_writes_the_same_bytes_with_and_without_orjson(index: int) -> None:
    modules = _reference_modules()
    if index >= len(modules):
        pytest.skip("fewer reference modules")
    code, out, err = _same_both_ways(modules[index])
    assert code == 0 and out.startswith(b'{\n  "module": ') and out.endswith(b"\n  ]\n}\n"), err


FOREIGN = {
    # what the escapes and the warning are for, a lone surrogate, numbers json writes alone
    "hidden": json.dumps(["--reasoning-parser", "au\u200bto\x1b[31mred\u202eb\u2028c\x85"]),
    "hidden-raw": json.dumps(["--reasoning-parser", "a\u200bb\x1bc\u202e"], ensure_ascii=False),
    "surrogate": '["--reasoning-parser", "au\\ud800to"]',
    "small-float": '["--reasoning-parser", 0.00001]',
    "big-int": '["--reasoning-parser", 123456789012345678901234567890]',
    "plain-float": '["--reasoning-parser", 0.85]',
}


@pytest.mark.parametrize("kind", list(FOREIGN))
def test_decode_of_a_foreign_module_writes_the_same_bytes_both_ways(
    tmp_path: Path, kind: str
) -> None:
    project = copy_project(tmp_path / "project")
    edit(project / MODULE, '["--reasoning-parser", "auto"]', FOREIGN[kind])
    code, out, err = _same_both_ways(Path(MODULE), project)
    assert code == 0, err
    doc = json.loads(out)
    shown = [arg for case in doc["cases"] for b in case["blocks"] for arg in b.get("args", [])]
    if kind != "big-int":  # read as the page's double: 123456789012345680000000000000
        assert json.loads("[" + FOREIGN[kind].split(",", 1)[1]) in [a[1:] for a in shown]
    if kind in ("hidden", "hidden-raw", "surrogate"):
        assert b"holds control or invisible characters" in err


@pytest.mark.parametrize(
    ("source", "hides"),
    [
        ('{"a": "plain \\"quoted\\" \\n\\t \\/ \\\' — ×"}', False),
        ('{"a": "\u200b"}', True),  # the character itself
        ('{"a": "\x1b[31m"}', True),
        ('{"a": "\\u200b"}', True),  # an escape that writes one
        ('{"a": "\\x1b"}', True),
        ('{"a": "\\r"}', True),
        ('{"a": "\\0"}', True),
        ('{"a": "line \\\ncontinued"}', True),
        ('{"a": "\\u{202e}"}', True),
    ],
)
def test_a_source_may_hide_what_its_strings_can_hold(source: str, hides: bool) -> None:
    from syncer.untrusted import may_hide

    assert may_hide(source) is hides
