"""Where the content of a file from srt-slurm's own checkout comes from.

srt-slurm mounts directories of its checkout into every container (its ``configs/`` at
``/configs``), and a recipe may pass such a file by path (``--deepep-config
/configs/deepep_config.json``). The cookbook ships that file with the commands, so the renderer
needs its bytes at the srt-slurm commit the run used. Nothing here guesses them: the content is
read from a directory the user names (``--srt-slurm-configs DIR``), else from the srt-slurm
submodule of the InferenceX checkout when it is checked out (the newest layout pins srt-slurm
that way). Without either, :meth:`SrtSlurmFiles.read` answers None and the callers say which
file from which commit is needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from syncer import gitrun
from syncer.errors import SyncError
from syncer.inferencex import commits

# The newest InferenceX layout pins srt-slurm as a git submodule here.
SUBMODULE = "inferencex-e2e/utils/srt-slurm"
OPTION_HELP = (
    "srt-slurm's configs/ directory at the commit the run used (files a recipe passes by "
    f"/configs path are shipped from it; default: {SUBMODULE}/configs in the InferenceX checkout)."
)


@dataclass(frozen=True)
class SrtSlurmFiles:
    """srt-slurm's checkout as far as it is available: ``root`` holds its directories
    (``configs/`` ...), ``commit`` is the pinned commit when known, ``origin`` says how they
    were found (for messages)."""

    root: Path | None = None
    commit: str | None = None
    origin: str = "none given"
    # a directory given for one mount only (``--srt-slurm-configs``): directory name -> path
    directories: tuple[tuple[str, Path], ...] = ()

    def directory(self, name: str) -> Path | None:
        for known, path in self.directories:
            if known == name:
                return path
        return self.root / name if self.root is not None else None

    def read(self, directory: str, relpath: str) -> str | None:
        """The text of ``<directory>/<relpath>`` in srt-slurm's checkout, or None when it is
        not available. A file that resolves outside its directory (a symlink out of it) or
        is not UTF-8 text is refused: the cookbook ships text files only."""
        base = self.directory(directory)
        if base is None or not base.is_dir():
            return None
        path = base / relpath
        if not path.is_file():
            return None
        try:
            path.resolve().relative_to(base.resolve())
        except ValueError:
            raise SyncError(
                f"{directory}/{relpath} resolves outside srt-slurm's {directory}/ directory",
                path=str(path),
            ) from None
        try:
            return path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SyncError(
                f"{directory}/{relpath} is not UTF-8 text (byte {exc.start}); the cookbook ships "
                "text files only",
                path=str(path),
            ) from None

    def describe_commit(self) -> str:
        if self.commit:
            return f"srt-slurm commit {self.commit}"
        return "the srt-slurm commit the run used (its srt-slurm-sha.txt records it)"


def discover(inferencex_root: Path, configs_dir: Path | None = None) -> SrtSlurmFiles:
    """The srt-slurm files a render may read: ``configs_dir`` (srt-slurm's ``configs/``
    directory, given by the user) wins; else the InferenceX checkout's srt-slurm submodule when
    its files are there. The pinned commit is read from the superproject's gitlink when the
    checkout is a git repository (an old-layout tree names srt-slurm refs in its runner scripts
    instead, which are not pins)."""
    commit = _submodule_commit(inferencex_root)
    if configs_dir is not None:
        if not configs_dir.is_dir():
            raise SyncError(
                "not a directory (srt-slurm's configs/ expected)", path=str(configs_dir)
            )
        return SrtSlurmFiles(
            commit=commit,
            origin=f"--srt-slurm-configs {configs_dir}",
            directories=(("configs", configs_dir),),
        )
    submodule = inferencex_root / SUBMODULE
    if (submodule / "configs").is_dir():
        return SrtSlurmFiles(root=submodule, commit=commit, origin=f"the submodule {SUBMODULE}")
    return SrtSlurmFiles(commit=commit)


def _submodule_commit(root: Path) -> str | None:
    """The commit the InferenceX checkout pins for its srt-slurm submodule (``git ls-tree``
    of the gitlink; for a tree written from git objects, the gitlink it recorded), or None
    when that is not a git checkout with the submodule."""
    pinned = commits.gitlink(root, SUBMODULE)
    if pinned is not None:
        return pinned
    if not (root / ".git").exists():
        return None
    out = gitrun.text("ls-tree", "HEAD", repo=root, paths=[SUBMODULE], timeout=30)
    fields = (out or "").split()
    if len(fields) >= 3 and fields[1] == "commit":
        return fields[2]
    return None
