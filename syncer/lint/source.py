"""The SGLang source of a cell's image, read from a git checkout with plumbing only.

Nothing is checked out, imported or executed: a cell's commit is resolved with
``git rev-parse``, the declaring files are located with ``git ls-tree`` and read with
``git cat-file``, and their flags are collected with ``ast`` (``syncer.lint.declared_flags``).
Parsed files are cached by blob id, so each version of ``server_args.py`` is parsed once however
many cells (or commits) share it.

Where the flags live:

- worker flags: ``python/sglang/srt/server_args.py`` (dataclass fields it reads through
  ``add_cli_args_from_dataclass`` may come from other ``sglang.*`` modules of the same commit);
- router flags: the ``sglang_router`` Python package's ``RouterArgs``, which moved over time:
  ``sgl-router/py_src/sglang_router/launch_router.py`` (the first releases kept it in the
  launcher), then ``router_args.py`` under ``sgl-router/py_src``, ``sgl-router/bindings/python``
  and, after the rename to the model gateway, ``sgl-model-gateway/bindings/python`` (with and
  without ``src/``). The newest location present at the commit wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from syncer import gitrun
from syncer.errors import SyncError
from syncer.lint.declared_flags import FlagSet, collect_flags

SERVER_ARGS = "python/sglang/srt/server_args.py"
# Newest first: the first one present at a commit is the router's argument definition.
ROUTER_ARGS = (
    "sgl-model-gateway/bindings/python/src/sglang_router/router_args.py",
    "sgl-model-gateway/bindings/python/sglang_router/router_args.py",
    "sgl-router/bindings/python/src/sglang_router/router_args.py",
    "sgl-router/bindings/python/sglang_router/router_args.py",
    "sgl-router/py_src/sglang_router/router_args.py",
    "sgl-router/py_src/sglang_router/launch_router.py",
)
PYTHON_ROOT = "python"

_HEX = re.compile(r"[0-9a-f]{4,40}")
# A release tag in an image tag: `v0.5.16`, `v0.5.16-cu130`, `0.5.3.post1`, `v0.6.0rc2`.
_RELEASE = re.compile(r"v?(\d+\.\d+\.\d+(?:\.\d+)?(?:\.?post\d+|rc\d+)?)(?![0-9A-Za-z.])")
# The file size read from git, as a guard against a blob that is not source code.
MAX_SOURCE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class SourcePin:
    """What a cell pins: the git revision to read and where it came from."""

    rev: str | None  # a commit id or `refs/tags/<tag>`; None when the cell pins nothing usable
    label: str  # shown in reports: the short commit or the tag
    origin: str  # "imageCommit", "image tag" or "none"
    problem: str | None = None  # why rev is None


@dataclass
class Version:
    """One resolved SGLang version and the flags it declares."""

    commit: str
    worker: FlagSet
    router: FlagSet | None  # None: no router argument file at this commit
    router_path: str | None = None


@dataclass
class _Cached:
    flags: FlagSet
    deps: dict[str, str | None] = field(default_factory=dict)  # path -> blob id (None: absent)


def image_pin(image: object, image_commit: object) -> SourcePin:
    """A cell's pin: ``imageCommit`` (a short commit of a nightly, or a release tag such as
    ``v0.5.17``) when set, else a release tag in the image name."""
    if image_commit not in (None, ""):
        if not isinstance(image_commit, str):
            return SourcePin(None, str(image_commit), "imageCommit", "imageCommit is not a string")
        text = image_commit.strip()
        release = _RELEASE.fullmatch(text)
        if release:
            return SourcePin(
                f"refs/tags/v{release.group(1)}", f"v{release.group(1)}", "imageCommit"
            )
        if not _HEX.fullmatch(text.lower()):
            return SourcePin(
                None, text, "imageCommit", "imageCommit is neither a commit id nor a tag"
            )
        return SourcePin(text.lower(), text.lower()[:12], "imageCommit")
    name = image if isinstance(image, str) else ""
    tag = _image_tag(name)
    if tag:
        found = _RELEASE.match(tag)
        if found:
            tag_name = f"v{found.group(1)}"
            return SourcePin(f"refs/tags/{tag_name}", tag_name, "image tag")
    reason = "no imageCommit and no release tag in the image name"
    return SourcePin(None, tag or name or "(no image)", "none", reason)


def _image_tag(image: str) -> str:
    """The tag of ``registry/repo:tag@sha256:…`` (empty when there is none)."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else ""


class SGLangSource:
    """An SGLang git repository read through plumbing; versions cached per commit."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = Path(git_dir)
        if not self.git_dir.exists():
            raise SyncError(
                "no such directory (expected an SGLang git checkout)", path=str(git_dir)
            )
        top = self._git("rev-parse", "--git-dir", check=False)
        if top is None:
            raise SyncError("not a git repository (expected an SGLang checkout)", path=str(git_dir))
        self._resolved: dict[str, tuple[str | None, str | None]] = {}
        self._versions: dict[str, Version] = {}
        self._parsed: dict[str, _Cached] = {}
        self.parses = 0  # files parsed (each blob once); the benchmark and tests read it

    def _git(
        self,
        *args: str,
        operands: list[str] | tuple[str, ...] = (),
        paths: list[str] | None = None,
        check: bool = True,
    ) -> str | None:
        proc = gitrun.run(
            *args, repo=self.git_dir, operands=operands, paths=paths or (), check=check
        )
        return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None

    def toplevel(self) -> Path:
        """The work tree's top directory (``SyncError`` for a bare repository)."""
        top = self._git("rev-parse", "--show-toplevel")
        assert top is not None
        return Path(top.strip())

    def has_server_args(self, rev: str = "HEAD") -> bool:
        """Whether ``rev`` has SGLang's ``server_args.py`` (is this an SGLang checkout?)."""
        return bool(self._ls_tree(rev, [SERVER_ARGS]))

    def resolve(self, pin: SourcePin) -> tuple[str | None, str | None]:
        """``(commit, None)`` or ``(None, why)`` for a pin."""
        if pin.rev is None:
            return None, pin.problem
        if pin.rev not in self._resolved:
            self._resolved[pin.rev] = self._resolve(pin)
        return self._resolved[pin.rev]

    def _resolve(self, pin: SourcePin) -> tuple[str | None, str | None]:
        assert pin.rev is not None
        revs = [pin.rev]
        if pin.rev.startswith("refs/tags/v"):
            # Release tags are `vX.Y.Z` upstream; a checkout may carry them without the `v`.
            revs.append("refs/tags/" + pin.rev.removeprefix("refs/tags/v"))
        stderr = ""
        for rev in revs:
            proc = gitrun.run(
                "rev-parse", "--verify", repo=self.git_dir, operands=[f"{rev}^{{commit}}"],
                check=False,
            )  # fmt: skip
            if proc.returncode == 0:
                return proc.stdout.decode().strip(), None
            stderr += proc.stderr.decode("utf-8", "replace")
        if pin.rev.startswith("refs/tags/"):
            return None, f"tag {pin.label} is not in the SGLang checkout (pruned or not fetched)"
        if "ambiguous" in stderr:
            return None, f"commit {pin.label} is ambiguous in the SGLang checkout"
        return None, f"commit {pin.label} is not in the SGLang checkout (unknown or not fetched)"

    def resolve_rev(self, rev: str) -> str:
        """The commit of a revision given on the command line (``SyncError`` when unknown)."""
        found = self._git("rev-parse", "--verify", operands=[f"{rev}^{{commit}}"])
        assert found is not None
        return found.strip()

    def version(self, commit: str) -> Version:
        """The flags ``commit`` declares (parsed files shared across commits by blob id)."""
        if commit in self._versions:
            return self._versions[commit]
        blobs = self._ls_tree(commit, [SERVER_ARGS, *ROUTER_ARGS])
        if SERVER_ARGS not in blobs:
            worker = FlagSet(SERVER_ARGS, frozenset(), [f"{SERVER_ARGS} is not in this commit"])
        else:
            worker = self._flags(commit, SERVER_ARGS, blobs[SERVER_ARGS])
        router_path = next((p for p in ROUTER_ARGS if p in blobs), None)
        router = self._flags(commit, router_path, blobs[router_path]) if router_path else None
        version = Version(commit, worker, router, router_path)
        self._versions[commit] = version
        return version

    def _ls_tree(self, rev: str, paths: list[str]) -> dict[str, str]:
        out = self._git("ls-tree", "--full-tree", operands=[rev], paths=paths, check=False)
        blobs: dict[str, str] = {}
        for line in (out or "").splitlines():
            meta, _, path = line.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob":
                blobs[path] = parts[2]
        return blobs

    def _read_blob(self, blob: str, path: str) -> str:
        # One process per blob (``cat-file --batch`` says the size before the content): the
        # size is checked before the content is read, as a separate ``cat-file -s`` did.
        proc = gitrun.popen("cat-file", "--batch", repo=self.git_dir)
        if proc is None:
            raise SyncError("cannot run git", path=path)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(f"{blob}\n".encode())
            proc.stdin.close()
            header = proc.stdout.readline().decode("utf-8", "replace").split()
            if len(header) != 3 or header[1] != "blob" or not header[2].isdigit():
                raise SyncError(
                    f"git cat-file failed: {' '.join(header) or 'no output'}", path=path
                )
            size = int(header[2])
            if size > MAX_SOURCE_BYTES:
                raise SyncError(f"{size} bytes, over the {MAX_SOURCE_BYTES} read", path=path)
            data = proc.stdout.read(size)
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SyncError(f"not UTF-8 text ({exc.reason})", path=path) from None

    def _flags(self, commit: str, path: str, blob: str) -> FlagSet:
        """The flags of ``path`` at ``commit``; reused when the blob and every module its
        dataclasses were read from are the same blobs here."""
        cached = self._parsed.get(blob)
        if cached is not None:
            if not cached.deps:
                return cached.flags
            now = self._ls_tree(commit, sorted(cached.deps))
            if all(now.get(p) == blob for p, blob in cached.deps.items()):
                return cached.flags
        deps: dict[str, str | None] = {}  # every path looked up -> its blob (None: absent)

        def module_source(dotted: str) -> str | None:
            if not dotted.startswith("sglang."):
                return None  # only SGLang's own modules live in this repository
            candidates = _module_paths(dotted)
            blobs = self._ls_tree(commit, candidates)
            deps.update((p, blobs.get(p)) for p in candidates)
            found = next((p for p in candidates if p in blobs), None)
            if found is None:
                return None
            return self._read_blob(blobs[found], f"{commit[:12]}:{found}")

        where = f"{commit[:12]}:{path}"
        flags = collect_flags(self._read_blob(blob, where), where, modules=module_source)
        self.parses += 1 + sum(1 for b in deps.values() if b)
        self._parsed[blob] = _Cached(flags, deps)
        return flags


def _module_paths(dotted: str) -> list[str]:
    """Where module ``dotted`` can live: ``a/b.py`` or the package ``a/b/__init__.py``."""
    base = f"{PYTHON_ROOT}/{dotted.replace('.', '/')}"
    return [f"{base}.py", f"{base}/__init__.py"]
