"""Issue 36 points 5, 6 and 13: ``sync decode`` shows what the page shows, through the real
command (``python -m syncer`` in a copy of the project), each failing on the code before.

The page reads a module as JavaScript: its numbers are doubles written by Number::toString,
its objects list array-index keys first, ``__proto__`` is no key, a missing ``cmd`` is
``undefined``. What the page cannot show one way (a number beyond the doubles) or cannot load
(a second ``__proto__``) is one ``error:`` line naming the file and line, exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_hardening import MODULE, copy_project, edit, error_line, sync

ARG = '["--reasoning-parser", "auto"]'
ENV_REF = '"envRef": 0\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_project(tmp_path)


def line_of(project: Path, text: str) -> int:
    """The line of the module where ``text`` first is (the bundled module may be generated
    again)."""
    module = (project / MODULE).read_text(encoding="utf-8")
    return module[: module.index(text)].count("\n") + 1


def _decoded_arg(project: Path, literal: str, *args: str) -> list[str]:
    edit(project / MODULE, ARG, f'["--reasoning-parser", {literal}]')
    proc = sync(project, "decode", MODULE, *args)
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if "--reasoning-parser" in line]


@pytest.mark.parametrize(
    ("literal", "shown"),
    [
        ("1000000000000000000000", "1e+21"),
        ("9007199254740993", "9007199254740992"),
        ("123456789012345683968", "123456789012345680000"),
        ("0.0000001", "1e-7"),
        ("1.0", "1"),
    ],
)
def test_numbers_are_shown_as_the_page_writes_them(project: Path, literal: str, shown: str) -> None:
    assert _decoded_arg(project, literal) == [f"  --reasoning-parser {shown} \\"]


@pytest.mark.parametrize(
    ("literal", "shown"),
    [("1000000000000000000000", "1e+21"), ("1152921504606846977", "1152921504606847000")],
)
def test_numbers_in_the_json_are_the_pages_too(project: Path, literal: str, shown: str) -> None:
    edit(project / MODULE, ARG, f'["--reasoning-parser", {literal}]')
    proc = sync(project, "decode", MODULE, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert f"  --reasoning-parser {shown} \\" in json.loads(proc.stdout)["text"][-1]
    # the block's value as the page's JSON.stringify writes it
    assert f'["--reasoning-parser",{shown}]' in proc.stdout


def test_a_number_beyond_the_doubles_is_refused_naming_its_line(project: Path) -> None:
    number = line_of(project, ARG)
    edit(project / MODULE, ARG, '["--reasoning-parser", 1e400]')
    line = error_line(sync(project, "decode", MODULE))
    assert line.startswith(f"error: {MODULE}:{number}:")
    assert "args[10][1]" in line and "Infinity" in line


def test_env_keys_in_the_pages_order_and_proto_never_shown(project: Path) -> None:
    edit(project / MODULE, ENV_REF, '"env": {"__proto__": "x", "B": "1", "10": "a", "2": "b"}\n')
    proc = sync(project, "decode", MODULE)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    start = lines.index("# Worker") + 1
    shown = ["2=b \\", "10=a \\", "B=1 \\", "python3 -m sglang.launch_server \\"]
    assert lines[start : start + 4] == shown


def test_a_second_proto_is_refused_as_the_page_cannot_load_the_module(project: Path) -> None:
    number = line_of(project, ENV_REF)
    edit(project / MODULE, ENV_REF, '"env": {"__proto__": "x", "__proto__": "y"}\n')
    line = error_line(sync(project, "decode", MODULE))
    assert line.startswith(f"error: {MODULE}:{number}:") and "__proto__" in line
    assert "cannot load" in line


def test_a_proto_object_is_refused_naming_its_line(project: Path) -> None:
    number = line_of(project, ENV_REF)
    edit(project / MODULE, ENV_REF, '"env": {"__proto__": {"A": "1"}}\n')
    line = error_line(sync(project, "decode", MODULE))
    assert line.startswith(f"error: {MODULE}:{number}:") and "prototype" in line


def test_a_missing_command_is_shown_undefined_as_on_the_page(project: Path) -> None:
    edit(project / MODULE, '"cmd": "python3 -m sglang.launch_server",\n', "")
    proc = sync(project, "decode", MODULE)
    assert proc.returncode == 0, proc.stderr
    assert "undefined \\" in proc.stdout.splitlines()


# ---- point 13: modules the page loads -------------------------------------------------------


def test_a_module_with_cr_only_line_endings_is_decoded(project: Path) -> None:
    module = project / MODULE
    expected = sync(project, "decode", MODULE)
    module.write_bytes(module.read_bytes().replace(b"\n", b"\r"))
    proc = sync(project, "decode", MODULE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected.stdout


def test_an_error_in_a_cr_only_module_names_its_true_line(project: Path) -> None:
    module = project / MODULE
    number = line_of(project, '["--host", "0.0.0.0"]')
    edit(module, '["--host", "0.0.0.0"]', '["--host", "0.0.0.0" x]')
    module.write_bytes(module.read_bytes().replace(b"\n", b"\r"))
    assert error_line(sync(project, "decode", MODULE)).startswith(f"error: {MODULE}:{number}:30: ")
    # a shape error found after parsing, located by the decoder's own walk: the block's line
    block = line_of(project, '"kind": "worker"') - 1  # the block's opening brace
    edit(module, ARG, '["--reasoning-parser", "auto", {}]')  # (read with universal newlines:
    edit(module, '["--host", "0.0.0.0" x]', '["--host", "0.0.0.0"]')  # written back as LF)
    module.write_bytes(module.read_bytes().replace(b"\n", b"\r"))
    assert b"\n" not in module.read_bytes()
    line = error_line(sync(project, "decode", MODULE))
    assert line.startswith(f"error: {MODULE}:{block}:7: cells[0].routers.sglang.blocks[0]: ")


@pytest.mark.parametrize("separator", ["\u2028", "\u2029"])
def test_a_raw_line_separator_inside_a_string_is_read_as_the_page_reads_it(
    project: Path, separator: str
) -> None:
    # A hand-edited module (CRLF endings: off the generator's layout, read by esprima).
    module = project / MODULE
    edit(module, ARG, f'["--reasoning-parser", "au{separator}to"]')
    module.write_bytes(module.read_bytes().replace(b"\n", b"\r\n"))
    proc = sync(project, "decode", MODULE)
    assert proc.returncode == 0, proc.stderr
    assert f"  --reasoning-parser 'au\\u{ord(separator):04x}to' \\" in proc.stdout.splitlines()
    # the value itself is the module's: the JSON has it
    proc = sync(project, "decode", MODULE, "--format", "json")
    assert any(f"au{separator}to" in text for text in json.loads(proc.stdout)["text"])
