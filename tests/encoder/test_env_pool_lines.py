"""The env pool of this tool's compaction without encoding the cells (issue 39.2): which blocks
the encoder writes whole is all the pool depends on, so the audit finds a first difference in
the pool without the patches and refs. Both answers are checked against the whole compaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from syncer.cookbook.decode import Decoder
from syncer.cookbook.jsmodule import parse_module, read_text
from syncer.encoder.cells import ModuleSpec, cells_from_module
from syncer.encoder.encode import (
    Pool,
    best_entry,
    compact_module,
    head_and_env_lines,
    module_text,
    writes_whole,
)
from syncer.model import block_data


def _specs(reference: Path) -> list[tuple[ModuleSpec, list[str]]]:
    found = sorted((reference / "cookbook" / "agentx").rglob("*.jsx"))
    if not found:
        pytest.skip("no reference modules")
    out = []
    for path in found:
        module = parse_module(read_text(path), str(path))
        decoder = Decoder(module.value, str(path))
        out.append((cells_from_module(module.value, decoder, str(path)), module.header))
    return out


def test_head_and_env_lines_are_what_the_whole_compaction_begins_with(reference: Path) -> None:
    pooled = 0
    for spec, header in _specs(reference):
        lines = head_and_env_lines(spec, header)
        value = compact_module(spec)
        whole = module_text(value, header).split("\n")
        assert whole[: len(lines)] == lines
        # the pool ends there: the next line is the key after it
        assert whole[len(lines)].startswith((' "kvMooncake": ', ' "files": '))
        pooled += bool(value["envs"])
    assert pooled  # the reference modules pool envs: the lines hold more than an empty list


def test_writes_whole_is_best_entrys_choice(reference: Path) -> None:
    answers = set()
    for spec, _ in _specs(reference):
        pool = Pool()
        for ci, cell in enumerate(spec.cells):
            for router in cell.routers:
                for block in cell.points[0].blocks[router]:
                    whole = writes_whole(block, router, cell, pool)
                    assert whole == (best_entry(block, router, cell, pool) == block_data(block))
                    answers.add(whole)
            for router in cell.routers:
                pool.add(ci, router, cell.points[0].blocks[router])
    assert answers == {True, False}
