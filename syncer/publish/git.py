"""The cookbook checkout: the bot branch, commits of generated files, and a push that never
overwrites anyone.

Commits are built with git plumbing (``hash-object``, a private index, ``commit-tree``) on top
of the remote branch tip, so the working tree of the checkout is never touched, a failure leaves
nothing half-written, and "nothing changed" is a tree comparison. Pushes are plain fast-forward
pushes of a commit whose parent is the tip we inspected: if anyone pushed in between, git refuses
and nothing is lost. The branch is never force-pushed, and when it carries a commit the bot did
not make, the bot stops (:class:`BranchState.foreign`).

Tokens reach git through ``GIT_ASKPASS`` and the environment, never through a URL or argument
(both end up in logs and process lists); every git message is masked before it is shown.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from syncer import gitrun, secrets
from syncer.errors import SyncError
from syncer.gitcheckout import ObjectReader, Unanswered
from syncer.github.plan import Plan
from syncer.wording import PATH_CHARS, js

BRANCH_PREFIX = "infx-sync/"
_SAFE_PATH = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*(?:/[A-Za-z0-9_][A-Za-z0-9._-]*)*$")


@dataclass(frozen=True)
class Identity:
    name: str = "infx-cookbook-sync"
    email: str = "infx-cookbook-sync@users.noreply.github.com"

    @classmethod
    def from_env(cls) -> Identity:
        return cls(
            os.environ.get("SYNC_GIT_NAME") or cls.name,
            os.environ.get("SYNC_GIT_EMAIL") or cls.email,
        )


def branch_name(model_path: str) -> str:
    """``infx-sync/<org>/<model>``: one branch per cookbook model."""
    if not _SAFE_PATH.match(model_path) or ".." in model_path:
        raise SyncError(f"model path {js(model_path)} is not a safe <org>/<model> branch component")
    return BRANCH_PREFIX + model_path


@dataclass
class BranchState:
    """The remote bot branch as fetched: its tip and the commits someone else made on it."""

    name: str
    base: str
    base_tip: str
    tip: str | None = None
    foreign: list[tuple[str, str]] = field(default_factory=list)  # (sha, "Author <email>")

    @property
    def exists(self) -> bool:
        return self.tip is not None


class CookbookClone:
    """A local clone of the cookbook repository, used only through git plumbing."""

    def __init__(
        self,
        path: Path,
        *,
        plan: Plan | None = None,
        identity: Identity | None = None,
        token: str | None = None,
        remote: str = "origin",
        push_url: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.plan = plan or Plan()
        self.identity = identity or Identity()
        self.remote = remote
        # The bot branch lives where it is pushed: the cookbook itself, or a fork.
        self.push_url = push_url
        self.push_remote = "fork" if push_url else remote
        self._token = token
        self._default_branch: str | None = None
        self._objects: ObjectReader | None = None
        secrets.register(token)

    @classmethod
    def open(
        cls,
        source: str | Path,
        *,
        cache_dir: Path,
        plan: Plan | None = None,
        identity: Identity | None = None,
        token: str | None = None,
        push_url: str | None = None,
    ) -> CookbookClone:
        """A checkout at ``source`` (a path) or a clone of ``source`` (a URL) in ``cache_dir``;
        ``push_url`` names a fork the bot branch is pushed to.

        In a dry run a checkout is never fetched into (nor given a remote): its ``origin`` is
        cloned into ``cache_dir`` instead, borrowing the checkout's objects (a checkout
        without one is cloned itself), and the caller passes a scratch ``cache_dir`` so nothing
        outlives the run.
        """
        local = Path(source)
        kw = {"plan": plan, "identity": identity, "token": token, "push_url": push_url}
        reference: list[str] = []
        if local.is_dir() and (local / ".git").exists():
            if not (plan and plan.dry_run):
                book = cls(local, **kw)  # type: ignore[arg-type]
                book.fetch()
                return book
            origin = cls(local)._git("remote", "get-url", operands=["origin"], check=False).strip()
            # A checkout without an origin (a cookbook made locally) is its own source: it is
            # cloned as it is, its branches being the cookbook's.
            source = origin or str(local.resolve())
            reference = [f"--reference={local}"] if origin else []
        digest = hashlib.sha256(str(source).encode()).hexdigest()[:16]
        target = Path(cache_dir) / f"cookbook-{digest}"
        book = cls(target, **kw)  # type: ignore[arg-type]
        cloned = not (target / ".git").exists()
        if cloned:
            target.parent.mkdir(parents=True, exist_ok=True)
            book._git(
                "clone", "--quiet", "--no-checkout", *reference, remote=str(source),
                operands=[str(target)], cwd=None,
            )  # fmt: skip
            book._default_branch = book._cloned_default_branch()
        book.fetch(cloned=cloned)
        return book

    def _cloned_default_branch(self) -> str | None:
        """The default branch a clone just made was told by its origin (``origin/HEAD``, which
        ``git clone`` writes as a symbolic ref), or None to ask the remote: also when the ref
        is not a loose file (another ref storage than git's default), so nothing is guessed."""
        try:
            text = (self.path / ".git" / "refs" / "remotes" / self.remote / "HEAD").read_text()
        except (OSError, UnicodeDecodeError):
            return None
        m = re.fullmatch(rf"ref: refs/remotes/{re.escape(self.remote)}/(\S+)\n", text)
        return m.group(1) if m else None

    # -- plumbing ---------------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        """What this checkout's git gets beyond :func:`gitrun.git_env`: the bot's identity,
        and the token through an askpass helper."""
        env = {
            "GIT_AUTHOR_NAME": self.identity.name,
            "GIT_AUTHOR_EMAIL": self.identity.email,
            "GIT_COMMITTER_NAME": self.identity.name,
            "GIT_COMMITTER_EMAIL": self.identity.email,
        }
        if self._token:
            env["GIT_ASKPASS"] = str(_askpass())
            env["SYNC_GIT_PASSWORD"] = self._token
        return env

    def _git(
        self,
        *args: str,
        cwd: Path | str | None = "",
        remote: str | None = None,
        operands: list[str] | tuple[str, ...] = (),
        input: str | None = None,
        extra_env: dict[str, str] | None = None,
        check: bool = True,
    ) -> str:
        where = self.path if cwd == "" else cwd
        env = self._env()
        env.update(extra_env or {})
        proc = gitrun.run(
            *args, cwd=where, remote=remote, operands=operands, env=env,
            input=None if input is None else input.encode("utf-8"), check=check,
            where=str(self.path),
        )  # fmt: skip
        return proc.stdout.decode("utf-8", "replace")

    def fetch(self, *, cloned: bool = False) -> None:
        """Bring every remote's branches up to date (``cloned``: the clone just made holds
        its origin's branches as they are, so only a fork is fetched)."""
        if self.push_url:
            remotes = self._git("remote", check=False).split()
            verb = "set-url" if self.push_remote in remotes else "add"
            self._git("remote", verb, operands=[self.push_remote, gitrun.remote(self.push_url)])
        for remote in dict.fromkeys((self.remote, self.push_remote)):
            if cloned and remote == self.remote:
                continue
            self._git(
                "fetch", "--quiet", "--prune", remote=remote,
                operands=[f"+refs/heads/*:refs/remotes/{remote}/*"],
            )  # fmt: skip

    def rev(self, ref: str) -> str | None:
        try:
            found = self._batch().info([f"{ref}^{{commit}}"])[0]
        except Unanswered:
            out = self._git(
                "rev-parse", "--verify", "--quiet", operands=[f"{ref}^{{commit}}"], check=False
            )
            return out.strip() or None
        return found[1] if found is not None and found[0] == "commit" else None

    def default_branch(self) -> str:
        """The remote's default branch, asked once (``ls-remote``) per checkout object, unless
        the clone was made by this object (its origin told it then)."""
        if self._default_branch is None:
            out = self._git("ls-remote", "--symref", remote=self.remote, operands=["HEAD"])
            m = re.search(r"^ref: refs/heads/(\S+)\s+HEAD$", out, re.M)
            if not m:
                raise SyncError(
                    f"cannot tell the default branch of remote {self.remote}", path=str(self.path)
                )
            self._default_branch = m.group(1)
        return self._default_branch

    def read(self, ref: str, relpath: str) -> str | None:
        """``relpath`` at ``ref`` (None when absent or not a file)."""
        data = self._blob(f"{ref}:{relpath}")
        return data.decode("utf-8") if data is not None else None

    def _blob(self, name: str) -> bytes | None:
        """The blob ``name`` names (``<rev>:<path>``), None when it names nothing or no blob."""
        try:
            found = self._batch().contents([name])[0]
        except Unanswered:
            out = gitrun.run(
                "cat-file", "blob", cwd=self.path, operands=[name], env=self._env(), check=False
            )
            return out.stdout if out.returncode == 0 else None
        return found[2] if found is not None and found[0] == "blob" else None

    def _object_id(self, name: str) -> str:
        """The id of the object ``name`` names (``<rev>:<path>``), "" when it names nothing."""
        try:
            found = self._batch().info([name])[0]
        except Unanswered:
            return self._git(
                "rev-parse", "--verify", "--quiet", operands=[name], check=False
            ).strip()
        return found[1] if found is not None else ""

    def _batch(self) -> ObjectReader:
        # One reader per checkout object: the bot reads a module and a page at several commits
        # per run, and a git process each was most of the git processes it started.
        if self._objects is None or not self._objects.alive:
            self._objects = ObjectReader(cwd=self.path, env=self._env())
        return self._objects

    def export(self, ref: str, dest: Path, paths: list[str]) -> None:
        """Copy ``paths`` (files) as they are at ``ref`` into ``dest`` (for generators to read)."""
        for rel in paths:
            text = self.read(ref, rel)
            if text is not None:
                target = dest / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")

    # -- the bot branch ---------------------------------------------------------------------

    def branch_state(self, branch: str, base: str) -> BranchState:
        """Fetch first (a cached answer is how bots overwrite humans), then inspect ``branch``."""
        self.fetch()
        base_tip = self.rev(f"{self.remote}/{base}")
        if base_tip is None:
            raise SyncError(f"the cookbook has no branch {js(base)}", path=str(self.path))
        state = BranchState(branch, base, base_tip)
        state.tip = self.rev(f"{self.push_remote}/{branch}")
        if state.tip is None:
            return state
        log = self._git(
            "log", "--format=%H%x00%an <%ae>%x00%cn <%ce>", operands=[f"{base_tip}..{state.tip}"]
        )
        me = f"{self.identity.name} <{self.identity.email}>"
        for line in log.splitlines():
            sha, author, committer = line.split("\x00")
            if author != me or committer != me:
                state.foreign.append((sha, author if author != me else committer))
        return state

    def commit_files(
        self,
        state: BranchState,
        files: dict[str, str],
        message: str,
        *,
        parent: str | None = None,
    ) -> str | None:
        """A commit of ``files`` on ``parent`` (default: the branch tip, else the base); None
        when nothing changes. ``parent=state.base_tip`` restarts a branch that only holds the
        bot's commits (the push then replaces it, guarded by the lease on the inspected tip).

        In dry-run the change is computed the same way and described, and no object is written.
        """
        if state.foreign:
            raise SyncError(f"branch {state.name} has commits not made by the bot; not committing")
        parent = parent or state.tip or state.base_tip
        for rel in files:
            if not _SAFE_PATH.match(rel) or ".." in rel.split("/"):
                raise SyncError(f"refusing to write outside the checkout: {js(rel, PATH_CHARS)}")
        # Hashed and, unless a dry run, written in one pass: a file that did not change is an
        # object the repository holds already, so writing it adds nothing.
        write = [] if self.plan.dry_run else ["-w"]
        changed: dict[str, str] = {}  # path -> its new blob
        for rel, text in sorted(files.items()):
            current = self._object_id(f"{parent}:{rel}")
            blob = self._git("hash-object", *write, "--stdin", f"--path={rel}", input=text).strip()
            if current != blob:
                changed[rel] = blob
        if not changed:
            return None
        for rel in changed:
            self.plan.note(f"git: write {rel} ({len(files[rel].encode())} bytes) on {state.name}")
        self.plan.note(f"git: commit on {state.name} (parent {parent[:12]})\n{message}")
        if self.plan.dry_run:
            return "0" * 40
        with tempfile.TemporaryDirectory(prefix="infx-index-") as tmp:
            index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self._git("read-tree", operands=[parent], extra_env=index)
            # rel is a safe path: no quoting
            entries = [f"100644 blob {blob}\t{rel}\n" for rel, blob in changed.items()]
            self._git("update-index", "--index-info", input="".join(entries), extra_env=index)
            tree = self._git("write-tree", extra_env=index).strip()
        return self._git(
            "commit-tree", "-p", parent, "-F", "-", operands=[tree], input=message
        ).strip()

    def push(self, state: BranchState, commit: str) -> None:
        """Move ``state.name`` to ``commit`` where the branch lives; refused by git if anyone
        pushed since ``state`` was inspected. No fetch follows: every later inspection
        (:meth:`branch_state`) fetches first."""
        target = self.push_remote
        self.plan.note(f"git: push {commit[:12]} to {target} refs/heads/{state.name}")
        if self.plan.dry_run:
            return
        # The lease names the tip we inspected: a human push in between makes this fail.
        expect = state.tip or ""
        self._git(
            "push",
            "--quiet",
            "--porcelain",
            f"--force-with-lease=refs/heads/{state.name}:{expect}",
            remote=target,
            operands=[f"{commit}:refs/heads/{state.name}"],
        )


_ASKPASS: Path | None = None


def _askpass() -> Path:
    """A helper script that hands git the token from the environment (never from argv)."""
    global _ASKPASS
    if _ASKPASS is None or not _ASKPASS.exists():
        fd, name = tempfile.mkstemp(prefix="infx-askpass-", suffix=".sh")
        with os.fdopen(fd, "w") as out:
            out.write(
                '#!/bin/sh\ncase "$1" in\n  Username*) echo x-access-token ;;\n'
                '  *) echo "$SYNC_GIT_PASSWORD" ;;\nesac\n'
            )
        os.chmod(name, stat.S_IRWXU)
        _ASKPASS = Path(name)
        # Made once per process and removed when it ends (a SIGTERM included: the CLI turns it
        # into an exception), so no run leaves a helper behind in the temp directory.
        atexit.register(_ASKPASS.unlink, missing_ok=True)
    return _ASKPASS
