"""The project's own Python sources as syntax trees, parsed once per test process: the tests
that hold the code to the architecture's rules (layers, imports inside functions, one runner of
processes) each read every module of ``syncer`` (and ``bench``), and parsing them is most of
their time (about a second of CPU a pass). The trees are shared: read them, never change them."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path


@cache
def _parsed(path: Path, stamp: tuple[int, int]) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def parsed(path: Path) -> ast.Module:
    """``path``'s module as ``ast.parse`` gives it (parsed again only if the file changed)."""
    info = path.stat()
    return _parsed(path, (info.st_mtime_ns, info.st_size))
