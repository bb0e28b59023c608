"""A case's command texts are built when read, not when the case is decoded (issue 39): the
proofs and comparisons read a case's blocks alone. Read, the texts are those of the blocks as
decoded, whatever the caller did to a fresh case's blocks since."""

from __future__ import annotations

import pytest
from conftest import TESTS

from syncer.cookbook import decode
from syncer.cookbook.decode import Decoder, load_decoder
from syncer.cookbook.shell import format_block

FIXTURES = TESTS / "fixtures" / "cookbook"


@pytest.fixture()
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Calls of the real ``format_block`` made by the decoder (counted, not replaced)."""
    calls: list[int] = []

    def real(block: decode.Block, **kw: bool) -> str:
        calls.append(1)
        return format_block(block, **kw)

    monkeypatch.setattr(decode, "format_block", real)
    return calls


def test_decoding_every_case_builds_no_text(counted: list[int]) -> None:
    decoder = load_decoder(FIXTURES / "agg_sglang.jsx")
    cases = list(decoder.cases(fresh=False)) + list(decoder.cases())
    assert len(cases) == 2 * 38 and all(c.blocks for c in cases)
    assert counted == []
    # read: one text per block, each distinct block formatted once across both lists
    assert all(len(c.text) == len(c.blocks) for c in cases)
    assert 0 < len(counted) < sum(len(c.blocks) for c in cases) / 2


def test_text_read_is_the_decoded_blocks_text() -> None:
    decoder: Decoder = load_decoder(FIXTURES / "agg_sglang.jsx")
    expected = [[format_block(b) for b in c.blocks] for c in decoder.cases(fresh=False)]
    fresh = list(decoder.cases())
    for case in fresh:  # the caller's own blocks, changed before the text is first read
        for block in case.blocks:
            block["args"].clear()
            block.setdefault("env", {})["X"] = "1"
    assert [c.text for c in fresh] == expected
    assert [c.as_json()["text"] for c in fresh] == expected
    assert fresh[0].text is fresh[0].text  # built once per case
