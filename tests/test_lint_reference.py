"""`sync lint` on the real cookbook modules in ../shared/reference. Only what can be resolved
offline is checked: which SGLang version each cell pins, and a full lint against a scratch
SGLang repository whose release tags those modules name. Set ``SYNC_SGLANG_GIT`` to an SGLang
checkout to also lint them against the real sources (skipped otherwise)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lintrepo import commit_files, git

from syncer.cookbook.decode import load_decoder
from syncer.lint.lint import UNDECLARED, UNRESOLVED, component_of, lint_paths
from syncer.lint.source import SGLangSource, image_pin


def modules(reference: Path) -> list[Path]:
    found = sorted((reference / "cookbook" / "agentx").rglob("*.jsx"))
    if not found:
        pytest.skip("no reference modules")
    return found


def test_every_cell_pins_a_version_or_says_why_not(reference: Path) -> None:
    origins: dict[str, set[str]] = {}
    for path in modules(reference):
        decoder = load_decoder(path)
        for cell in decoder.cells:
            pin = image_pin(cell.get("image"), cell.get("imageCommit"))
            origins.setdefault(pin.origin, set()).add(pin.label)
            if cell.get("imageCommit"):
                assert pin.rev == cell["imageCommit"] and len(pin.rev) == 8
    # Nightlies carry imageCommit; the release images name their tag; one old nightly tag
    # (no commit recorded) cannot be resolved anywhere.
    assert {"v0.5.16", "v0.5.19"} == origins["image tag"]
    assert origins["none"] == {"dev-cu13-nightly-0924"}
    assert len(origins["imageCommit"]) >= 10


def test_lint_against_a_checkout_with_the_release_tags(reference: Path, tmp_path: Path) -> None:
    """A scratch SGLang repository: `v0.5.16` and `v0.5.19` tag a server_args.py declaring the
    flags of the cells pinned to them, all but one; no nightly commit exists in it."""
    paths = modules(reference)
    tagged: dict[str, set[str]] = {}
    for path in paths:
        decoder = load_decoder(path)
        for case in decoder.cases():
            cell = decoder.cells[case.cell]
            pin = image_pin(cell.get("image"), cell.get("imageCommit"))
            if pin.origin != "image tag":
                continue
            for block in case.blocks:
                if component_of(block) == "worker":
                    tagged.setdefault(pin.label, set()).update(a[0] for a in block["args"])
    dropped = "--mem-fraction-static"
    for flags in tagged.values():
        flags.discard("--request-plane")
    assert all(dropped in flags for flags in tagged.values())
    root = tmp_path / "sglang"
    root.mkdir()
    git(root, "init", "-q")
    for tag, flags in sorted(tagged.items()):
        calls = "".join(f"    parser.add_argument({f!r})\n" for f in sorted(flags - {dropped}))
        commit_files(root, {"python/sglang/srt/server_args.py": f"def add(parser):\n{calls}"}, tag)
        git(root, "tag", tag)
    result = lint_paths([str(p) for p in paths], SGLangSource(root))
    undeclared = [f for f in result.findings if f.status == UNDECLARED]
    assert undeclared and {f.flag for f in undeclared} == {dropped}
    assert all(f.version in tagged for f in undeclared)
    unresolved = [f for f in result.findings if f.status == UNRESOLVED]
    pinned = sum(1 for m in result.modules for c in m.cells if c.pin.origin != "image tag")
    assert len(unresolved) == pinned
    # The cells on release images run no sglang-router (so no router flag is reported, and no
    # note says router flags went unchecked), and the Dynamo-only --request-plane is skipped.
    assert not any(n for m in result.modules for n in m.notes)


def test_real_sglang_checkout(reference: Path) -> None:
    checkout = os.environ.get("SYNC_SGLANG_GIT")
    if not checkout:
        pytest.skip("SYNC_SGLANG_GIT (an SGLang git checkout) not set")
    source = SGLangSource(Path(checkout))
    result = lint_paths([str(p) for p in modules(reference)], source)
    for version in result.versions.values():
        assert len(version.worker.flags) > 100  # a real server_args.py was read
    assert result.exit_code in (0, 1)
