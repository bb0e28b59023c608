"""Where the project's own files are: ``sync.yaml``, the bundled example, the downloaded runs,
the generated modules.

The commands' options default to these names relative to the working directory (their reports
show the paths as given). Where a command finds a file itself there is one rule: the project
checkout is the working directory or its nearest ancestor holding ``sync.yaml``; failing that,
the source checkout this package runs from (a development install), so the commands keep
working from any directory there. An installed
package has no checkout of its own: a file that is not found then raises a ``SyncError`` naming
the option that supplies it, never a path inside site-packages.
"""

from __future__ import annotations

from pathlib import Path

from syncer.errors import SyncError

SYNC_YAML = "sync.yaml"
EXAMPLE_INFERENCEX = Path("examples") / "inferencex"
EXAMPLE_RUNS = Path("examples") / "runs"
EXAMPLE_PAGES = Path("examples") / "cookbook"
SNIPPETS = Path("cookbook_snippets")


def _source_checkout() -> Path | None:
    """The checkout holding this package's source, when it is one (``syncer/`` beside
    ``sync.yaml``); ``None`` for an installed package."""
    root = Path(__file__).resolve().parents[1]
    return root if (root / SYNC_YAML).is_file() else None


def project_root(start: Path | None = None) -> Path:
    """The directory holding ``sync.yaml``: ``start`` (default the working directory) or an
    ancestor, else the source checkout; else ``start`` itself, whose files callers then report
    missing."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / SYNC_YAML).is_file():
            return d
    return _source_checkout() or here


def sync_config_path(root: Path) -> Path:
    return root / SYNC_YAML


def runs_dir(root: Path) -> Path:
    """Where pinned runs are downloaded: ``examples/runs/<run_id>/``."""
    return root / EXAMPLE_RUNS


def snippets_dir(root: Path) -> Path:
    """The generated data modules, ``cookbook_snippets/<org>/<model>.jsx``."""
    return root / SNIPPETS


def bundled_inferencex() -> Path:
    """The bundled miniature InferenceX checkout, ``examples/inferencex/`` of the project
    checkout, else of the source checkout."""
    candidates = [project_root() / EXAMPLE_INFERENCEX]
    source = _source_checkout()
    if source is not None:
        candidates.append(source / EXAMPLE_INFERENCEX)
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise SyncError(
        f"no InferenceX checkout given and no bundled example ({EXAMPLE_INFERENCEX}/ of a "
        f"project checkout holding {SYNC_YAML}) here; pass --inferencex PATH",
        path=str(Path.cwd()),
    )
