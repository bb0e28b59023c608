"""`sync lint` on the real cookbook modules in ../shared/reference. Only what can be resolved
offline is checked: which SGLang version each cell pins, and a full lint against a scratch
SGLang repository whose release tags those modules name. Set ``SYNC_SGLANG_GIT`` to an SGLang
checkout to also lint them against the real sources (skipped otherwise)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import REFERENCE
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


# The opt-in checks against a real SGLang checkout (`SYNC_SGLANG_GIT`). Which revisions:
# `SYNC_SGLANG_REVS` (tags or commits, space or comma separated) when set, else every `v*`
# release tag of the checkout plus every reference cell's pin that resolves in it.
# Flags every SGLang version declares, from the first releases on.
CORE_WORKER = frozenset(
    {
        "--model-path",
        "--tp-size",
        "--tensor-parallel-size",
        "--dp-size",
        "--mem-fraction-static",
        "--context-length",
        "--trust-remote-code",
        "--host",
        "--port",
    }
)
# Flags that come with a subsystem: when the tree has the package, the parser has its flags
# (each was added together with the package).
CORE_BY_PACKAGE = {
    "python/sglang/srt/disaggregation": frozenset(
        {
            "--disaggregation-mode",
            "--disaggregation-transfer-backend",
            "--disaggregation-bootstrap-port",
        }
    ),
    "python/sglang/srt/speculative": frozenset(
        {
            "--speculative-algorithm",
            "--speculative-num-steps",
            "--speculative-eagle-topk",
            "--speculative-num-draft-tokens",
        }
    ),
}
CORE_ROUTER = frozenset({"--host", "--port", "--policy", "--worker-urls"})
# The split-out router_args.py came after prefill/decode disaggregation reached the router.
CORE_ROUTER_ARGS = CORE_ROUTER | {"--pd-disaggregation", "--prefill", "--decode"}


def real_checkout() -> SGLangSource:
    checkout = os.environ.get("SYNC_SGLANG_GIT")
    if not checkout:
        pytest.skip("SYNC_SGLANG_GIT (an SGLang git checkout) not set")
    return SGLangSource(Path(checkout))


def revisions(source: SGLangSource) -> list[str]:
    asked = os.environ.get("SYNC_SGLANG_REVS", "").replace(",", " ").split()
    if asked:
        return asked
    tags = git(source.git_dir, "tag", "--list", "v*").split()
    pins: set[str] = set()
    if REFERENCE.is_dir():
        for path in sorted((REFERENCE / "cookbook" / "agentx").rglob("*.jsx")):
            for cell in load_decoder(path).cells:
                pin = image_pin(cell.get("image"), cell.get("imageCommit"))
                if pin.rev and source.resolve(pin)[0]:
                    pins.add(pin.rev.removeprefix("refs/tags/"))
    return sorted(set(tags) | pins) or ["HEAD"]


def missing_core(source: SGLangSource, rev: str) -> list[str]:
    """What ``rev`` should declare and the collector did not find (empty when all is there)."""
    commit = source.resolve_rev(rev)
    version = source.version(commit)
    expected = set(CORE_WORKER)
    packages = git(source.git_dir, "ls-tree", "--name-only", commit, "--", *CORE_BY_PACKAGE)
    for package in packages.split():
        expected |= CORE_BY_PACKAGE[package]
    problems = [f"worker {f}" for f in sorted(expected - version.worker.flags)]
    if version.router is not None:
        assert version.router_path is not None
        router = (
            CORE_ROUTER_ARGS if version.router_path.endswith("/router_args.py") else CORE_ROUTER
        )
        problems += [f"router {f}" for f in sorted(router - version.router.flags)]
    if problems:
        unresolved = version.worker.dynamic + (version.router.dynamic if version.router else [])
        problems += [f"(unresolved: {note})" for note in unresolved]
    return problems


def test_real_checkout_declares_the_core_flags_at_every_revision() -> None:
    source = real_checkout()
    revs = revisions(source)
    failures = {rev: missing for rev in revs if (missing := missing_core(source, rev))}
    assert not failures, "\n".join(f"{rev}: {', '.join(m)}" for rev, m in failures.items())


def test_real_checkout_core_check_fails_on_a_version_without_them(tmp_path: Path) -> None:
    # The check itself must be able to fail: a tree with the disaggregation package whose
    # server_args.py lacks one of its flags is reported, flag by flag.
    root = tmp_path / "sglang"
    root.mkdir()
    git(root, "init", "-q")
    calls = "".join(f"    parser.add_argument({f!r})\n" for f in sorted(CORE_WORKER))
    commit_files(
        root,
        {
            "python/sglang/srt/server_args.py": f"def add(parser):\n{calls}",
            "python/sglang/srt/disaggregation/__init__.py": "",
        },
        "v1",
    )
    missing = missing_core(SGLangSource(root), "HEAD")
    assert missing == [
        f"worker {f}" for f in sorted(CORE_BY_PACKAGE["python/sglang/srt/disaggregation"])
    ]


def test_real_sglang_checkout(reference: Path) -> None:
    source = real_checkout()
    result = lint_paths([str(p) for p in modules(reference)], source)
    for version in result.versions.values():
        assert len(version.worker.flags) > 100  # a real server_args.py was read
    assert result.exit_code in (0, 1)
