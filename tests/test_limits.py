"""Issue 12.5: inputs read whole are capped, and reporting an error costs no more than parsing.

Memory is measured as the peak RSS of a fresh interpreter (``resource.getrusage``), never as
time. The bounds are loose on purpose (tens of MB of slack around a parse of ~70 MB); what they
catch is the old error-position lookup, which took 2.3 GB for a 20 MB string and 0.6 GB for a
6 MB list of numbers.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import forkserver
import pytest

from syncer.cookbook.jsmodule import MAX_MODULE_BYTES

MEASURE = """
import resource, sys
from syncer.cookbook.jsmodule import locate, parse_module, read_text
from syncer.cookbook.decode import decoder_for_text
from syncer.errors import SyncError
path, mode = sys.argv[1], sys.argv[2]
text = read_text(path)
if mode == "parse":
    parse_module(text, path)
else:
    try:
        decoder_for_text(text, path)
    except SyncError as exc:
        print(exc)
    print(locate(text, ("cells",)))
print("peak-mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def peak_mb(path: Path, mode: str) -> tuple[int, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path), mode], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    return int(lines[-1].split()[1]), lines[:-1]


# The literals, built when their test runs rather than when every test process collects the
# tests (26 MB of text, about 0.15 s of CPU each time).
LITERALS = {
    # One long string: the old tokeniser's (?:[^"\\]|\\.)* kept a state per character.
    "long-string": lambda: '{"formatVersion": 3, "x": "' + "a" * 20_000_000 + '"}',
    # Millions of tokens: the old lookup listed them all before walking.
    "many-tokens": lambda: '{"formatVersion": 3, "x": [' + "1," * 3_000_000 + '1], "cells": 7}',
}


@pytest.mark.parametrize("name", sorted(LITERALS))
def test_error_position_costs_no_more_than_the_parse(tmp_path: Path, name: str):
    path = tmp_path / f"{name}.jsx"
    path.write_text(f"export const agentx = {LITERALS[name]()};\n", encoding="utf-8")
    parse, _ = peak_mb(path, "parse")
    report, out = peak_mb(path, "report")
    assert out[0].startswith(f"{path}:1:23: module: expected a non-empty `cells` list")
    assert report <= parse + 40, (parse, report)


def test_a_module_over_the_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsx"
    with path.open("wb") as out:
        out.truncate(MAX_MODULE_BYTES + 1)  # sparse: costs nothing to make
    proc = subprocess.run(
        [*forkserver.command(), "decode", str(path)], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        f"error: {path}: data module is {MAX_MODULE_BYTES + 1} bytes, over the "
        f"{MAX_MODULE_BYTES}-byte limit (not a file this tool reads)\n"
    )


def test_an_endless_input_is_refused_before_it_is_read(tmp_path: Path) -> None:
    # stat() says 0 bytes for a character device: it is refused as not a regular file (issue
    # 22.4; the read cap used to stop it after 1 KiB). A file that grows while it is read is
    # still cut at the cap by the read itself.
    from syncer.errors import SyncError
    from syncer.fsio import read_capped

    with pytest.raises(SyncError, match="the event: a device, not a regular file"):
        read_capped("/dev/zero", 1024, "the event")


def test_a_cookbook_page_over_the_cap_is_refused(tmp_path: Path) -> None:
    from syncer.encoder.page import MAX_PAGE_BYTES
    from syncer.errors import SyncError
    from syncer.syncconfig import load_sync_config
    from syncer.usecases.generate import generate_model

    root = Path(__file__).resolve().parent.parent
    config = load_sync_config(root / "sync.yaml")
    page = tmp_path / config.models[0].page
    page.parent.mkdir(parents=True)
    with page.open("wb") as out:
        out.truncate(MAX_PAGE_BYTES + 1)
    with pytest.raises(SyncError, match=r"cookbook page is .* over the"):
        generate_model(
            config.models[0].path,
            config=config,
            inferencex=root / "examples/inferencex",
            out_dir=tmp_path / "out",
            pages_dir=tmp_path,
            check=True,
        )


def test_a_big_module_off_the_generators_layout_is_refused_not_parsed_for_minutes(
    tmp_path: Path,
) -> None:
    # esprima (the reader for hand-edited layouts, and for error positions) is quadratic in a
    # string's length: 2 MB took a minute, 20 MB hours. Such a text is refused at once.
    from syncer.cookbook.jsmodule import MAX_ESPRIMA_CHARS

    path = tmp_path / "single-quoted.jsx"
    path.write_text("export const agentx = {x: '" + "a" * 2_000_000 + "'};\n", encoding="utf-8")
    proc = subprocess.run(
        [*forkserver.command(), "decode", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        f"error: {path}: data module of 2000031 characters is not in the generator's layout "
        f"(`export const NAME = <JSON>;`); other layouts are read up to {MAX_ESPRIMA_CHARS}\n"
    )


def test_a_number_of_thousands_of_digits_in_a_recipe_is_bad_input(tmp_path: Path) -> None:
    # int() raised ValueError from the YAML loader: exit 3 on a file a PR controls.
    import shutil

    root = Path(__file__).resolve().parent.parent
    checkout = tmp_path / "checkout"
    shutil.copytree(root / "examples/inferencex", checkout)
    recipe = next(checkout.rglob("gb300-fp4-mtp/agentic.yaml"))
    recipe.write_text("huge: " + "9" * 5000 + "\n" + recipe.read_text())
    key = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
    proc = subprocess.run(
        [*forkserver.command(), "render", key, "--inferencex", str(checkout)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        f"error: {recipe}: YAML value the loader cannot build: Exceeds the limit"
    )
