"""Where the project's own files are: ``sync.yaml``, the bundled example, the downloaded runs,
the generated modules.

The commands' options default to these names relative to the working directory (their reports
show the paths as given). Where a command finds a file itself there is one rule: the project
checkout is the working directory or its nearest ancestor holding ``sync.yaml`` (whatever it
is: a ``sync.yaml`` that is a directory or a FIFO is refused when read, never skipped). The
package's own checkout is never read in its place: from another directory, an editable install
used to verify its bundled example and print "all agree" about data the user never named. A
file that is not found raises a ``SyncError`` naming the option that supplies it.
"""

from __future__ import annotations

import os
from pathlib import Path

from syncer.errors import SyncError

SYNC_YAML = "sync.yaml"
EXAMPLE_INFERENCEX = Path("examples") / "inferencex"
EXAMPLE_RUNS = Path("examples") / "runs"
EXAMPLE_PAGES = Path("examples") / "cookbook"
SNIPPETS = Path("cookbook_snippets")


def project_root(start: Path | None = None) -> Path:
    """The directory holding ``sync.yaml``: ``start`` (default the working directory) or an
    ancestor; else ``start`` itself, whose files callers then report missing."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        try:
            if os.path.lexists(d / SYNC_YAML):
                return d
        except OSError:
            break
    return here


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
    checkout (never of the package's own source checkout: see the module's docstring)."""
    candidate = project_root() / EXAMPLE_INFERENCEX
    if candidate.is_dir():
        return candidate
    raise SyncError(
        f"no InferenceX checkout given and no bundled example ({EXAMPLE_INFERENCEX}/ of a "
        f"project checkout holding {SYNC_YAML}) here; pass --inferencex PATH",
        path=str(Path.cwd()),
    )


def user_cache_dir() -> Path:
    """The tool's cache of things it can always make again (a cloned cookbook, compiled
    templates): ``$XDG_CACHE_HOME/infx-cookbook-sync``, by default under ``~/.cache``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "infx-cookbook-sync"
