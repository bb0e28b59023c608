"""The audit's round-trip check finds the first line where this tool's compaction differs from a
module without encoding a cell when that line comes before the env pool (issue 39.2): the note
is the one the whole re-encoding gives, word for word."""

from __future__ import annotations

from pathlib import Path

import pytest

from syncer.cookbook.decode import Decoder
from syncer.cookbook.jsmodule import parse_module, read_text
from syncer.encoder.cells import cells_from_module
from syncer.encoder.encode import compact_module, head_lines, module_text
from syncer.usecases.audit import ENCODED, ModuleRow, _first_difference, _roundtrip


def _modules(reference: Path) -> list[Path]:
    found = sorted((reference / "cookbook" / "agentx").rglob("*.jsx"))
    if not found:
        pytest.skip("no reference modules")
    return found


def test_head_lines_are_what_the_whole_compaction_begins_with(reference: Path) -> None:
    for path in _modules(reference):
        module = parse_module(read_text(path), str(path))
        spec = cells_from_module(module.value, Decoder(module.value, str(path)), str(path))
        head = head_lines(spec, module.header)
        whole = module_text(compact_module(spec), module.header).split("\n")
        assert whole[: len(head)] == head
        assert whole[len(head)].startswith(' "envs": ')


def test_the_round_trip_note_is_the_whole_compactions(reference: Path) -> None:
    found_in_head = 0
    for path in _modules(reference):
        text = read_text(path)
        module = parse_module(text, str(path))
        decoder = Decoder(module.value, str(path))
        row = ModuleRow(str(path), "")
        spec = _roundtrip(module, decoder, text, row)
        assert spec is not None and not row.findings
        again = module_text(compact_module(spec), module.header)
        assert row.notes == ([] if again == text else [_first_difference(text, again, ENCODED)])
        head = head_lines(spec, module.header)
        found_in_head += any(a != b for a, b in zip(text.split("\n"), head, strict=False))
    # the reference cookbook has modules of both kinds: the head differs, or only what follows
    assert 0 < found_in_head < len(_modules(reference))
