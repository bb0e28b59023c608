"""Issue 41.3: a generator reproduces the block order of the module it writes into.

The upstream generator wrote three block orders over its versions (nginx before or after the
Dynamo frontends, the frontends before or after the workers: docs/srt-slurm-rules.md, "Block
order"). ``sync generate`` writes a new module in the newest order; into an existing module
(an edit with ``--only``/``--update``, as the bot makes, or a rebuild) it writes the cells in
that module's own order, read from its cells. Held through the real command on our own tree
(tests/fixtures/published_eras: one Dynamo-submitted 1P2D key behind nginx)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import forkserver
import pytest
from conftest import TESTS

from syncer.cookbook.decode import load_decoder
from syncer.cookbook.jsmodule import parse_module
from syncer.encoder import encode
from syncer.encoder.cells import laid_out, module_layout
from syncer.inferencex.cookbook_layout import (
    FRONTEND_BEFORE_NGINX,
    FRONTEND_LAST,
    NEWEST_LAYOUT,
    layout_order,
)
from syncer.model import Selection
from syncer.syncconfig import load_sync_config
from syncer.usecases.generate import build_module_spec

TREE = TESTS / "fixtures" / "published_eras" / "inferencex"
MODEL = "example-org/m9"
KEY = "m9-fp4-gb200-dynamo-sglang-agentic-disagg"
# the tree's sync.yaml, which tests/inferencex/test_published_eras.py reads too
SYNC_YAML = (TREE.parent / "sync.yaml").read_text(encoding="utf-8")
PINNED_RUN = 'run: "52000000009"'


def _config(tmp_path: Path, run: str) -> Path:
    path = tmp_path / f"sync-{run}.yaml"
    assert SYNC_YAML.count(PINNED_RUN) == 1
    path.write_text(SYNC_YAML.replace(PINNED_RUN, f'run: "{run}"'))
    return path


def _generate(tmp_path: Path, config: Path, *extra: str) -> Path:
    done = subprocess.run(
        [*forkserver.command(), "generate", MODEL, "--config", str(config),
         "--inferencex", str(TREE), "--out", str(tmp_path / "snippets"), "--no-page",
         "--date", "2026-10-10", *extra],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return tmp_path / "snippets" / f"{MODEL}.jsx"


def _older_module(tmp_path: Path, layout: str) -> Path:
    """The module an older generator version would have written: our cells, in ``layout``."""
    config = load_sync_config(_config(tmp_path, "52000000009"))
    model = config.model(MODEL)
    spec = build_module_spec(model, config=config, inferencex=TREE, today="2026-10-10").spec
    spec.cells = laid_out(spec.cells, layout)
    path = tmp_path / "snippets" / f"{MODEL}.jsx"
    path.parent.mkdir(parents=True)
    _, text, _ = encode.encode_module(spec, path=str(path), header=encode.header_lines(spec.source))
    path.write_text(text, encoding="utf-8")
    return path


def _orders(path: Path) -> list[list[str]]:
    decoder = load_decoder(path)
    return [
        [b["kind"] for b in decoder.blocks_for(Selection(ci, pi, router, None))]
        for ci, cell in enumerate(decoder.data["cells"])
        for pi in range(len(cell["points"]))
        for router in cell["routers"]
    ]


def _expected(path: Path, layout: str) -> list[list[str]]:
    decoder = load_decoder(path)
    return [
        [b["kind"] for b in layout_order(decoder.blocks_for(Selection(ci, pi, r, None)), layout)]
        for ci, cell in enumerate(decoder.data["cells"])
        for pi in range(len(cell["points"]))
        for r in cell["routers"]
    ]


def test_generate_writes_a_new_module_in_the_newest_order(tmp_path: Path) -> None:
    written = _generate(tmp_path, _config(tmp_path, "52000000009"))
    assert module_layout(load_decoder(written)) == NEWEST_LAYOUT
    dynamo = _orders(written)[0]
    assert dynamo.index("nginx") < dynamo.index("dynamo-frontend") < dynamo.index("worker")


@pytest.mark.parametrize("layout", [FRONTEND_BEFORE_NGINX, FRONTEND_LAST])
@pytest.mark.parametrize("how", [("--only", KEY), ("--update",), ()])
def test_generate_into_an_older_module_keeps_its_order(
    tmp_path: Path, layout: str, how: tuple[str, ...]
) -> None:
    old = _older_module(tmp_path, layout)
    assert module_layout(load_decoder(old)) == layout
    before = old.read_text(encoding="utf-8")
    # a new run of the config: its cell is written again (an edit, or a rebuild without flags)
    written = _generate(tmp_path, _config(tmp_path, "52000000010"), *how)
    after = written.read_text(encoding="utf-8")
    assert after != before and "52000000010" in after
    assert module_layout(load_decoder(written)) == layout
    assert _orders(written) == _expected(written, layout)
    if how:
        # an edit of a cell whose commands are as published keeps its router entries as they
        # are encoded: only its provenance moves
        old_cells = parse_module(before, "before").value["cells"]
        new_cells = parse_module(after, "after").value["cells"]
        assert [c["routers"] for c in new_cells] == [c["routers"] for c in old_cells]
