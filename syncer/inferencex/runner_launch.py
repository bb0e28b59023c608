"""A runner's launch script (``runners/launch_<cluster>.sh``) read as data, never run: which
srt-slurm ref it clones or checks out for a job (the ``if``/``elif`` chains around its ``git
clone`` / ``git checkout`` lines evaluated with the key's own values; a condition the master
config cannot decide is refused with the script and line), and the GPUs per node it writes into
srt-slurm's cluster file. :mod:`syncer.inferencex.releases` turns the ref into a release.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from syncer.checkout import contained
from syncer.errors import SyncError
from syncer.fsio import read_capped
from syncer.inferencex import yamlsafe
from syncer.wording import js

if TYPE_CHECKING:
    from syncer.inferencex.master import ConfigEntry


@dataclass(frozen=True)
class Checkout:
    """The srt-slurm a runner script checks out: the ref, `` of <repo>`` for a fork, the
    script as shown and the line."""

    ref: str
    fork: str
    script: str
    line: int


SCRIPT_LIMIT = 1 << 20  # a launch script is a few hundred lines
RUNNERS_FILE = "runners.yaml"  # configs/runners.yaml: each runner label's self-hosted runners


# The variables a runner's srt-slurm choice may test, as the workflow exports them per job
# (.github/workflows/benchmark-multinode-tmpl.yml @InferenceX eb1e4107: MODEL_PREFIX,
# FRAMEWORK, PRECISION, SPEC_DECODING from the job's inputs, lines 211-219; IS_AGENTIC is
# '1' for the agentic-coding scenario, line 231, the only scenario this tool renders).
_AGENTIC = "1"


def runner_scripts(entry: ConfigEntry) -> list[Path]:
    """The launch scripts the key's runner label can run, in the layout root or the checkout
    root. InferenceX's benchmark templates run ``bash ./runners/launch_${RUNNER_NAME%%_*}.sh``
    on the self-hosted runner the label picked, and ``configs/runners.yaml`` lists each label's
    runners under ``labels:`` (``cluster:h200-dgxc`` -> ``h200-dgxc-slurm_0`` ... -> the script
    ``launch_h200-dgxc-slurm.sh``; @InferenceX 843c6254). A label that file does not list (or
    a tree without it) runs the script of the label's own name."""
    names = _runner_names(entry)
    clusters = dict.fromkeys(name.split("_", 1)[0] for name in names) if names else None
    if clusters is None:
        clusters = {entry.runner.removeprefix("cluster:"): None}
    out: list[Path] = []
    for cluster in clusters:
        if not re.fullmatch(r"[A-Za-z0-9.-]+", cluster):
            continue
        for base in dict.fromkeys((entry.layout_root, entry.root_dir)):
            path = base / "runners" / f"launch_{cluster}.sh"
            if path.is_file():
                out.append(path)
                break
    return out


def runners_file(entry: ConfigEntry) -> Path | None:
    """The tree's ``runners.yaml``, beside the master configs in either layout
    (``configs/`` or ``.github/configs/``, as ``master.load_master`` looks), or None."""
    for base in dict.fromkeys((entry.layout_root, entry.root_dir)):
        for folder in ("configs", ".github/configs"):
            path = base / folder / RUNNERS_FILE
            if path.is_file():
                return contained(entry.root_dir, path, what="runner labels file")
    return None


def _runner_names(entry: ConfigEntry) -> list[str] | None:
    """The runners ``runners.yaml`` lists under the key's label; None when the tree has no
    such file or the file does not list the label."""
    path = runners_file(entry)
    if path is None:
        return None
    stat = path.stat()
    names = _runner_labels(str(path), stat.st_mtime_ns, stat.st_size).get(entry.runner)
    return list(names) if names else None


@lru_cache(maxsize=8)
def _runner_labels(path: str, mtime_ns: int, size: int) -> dict[str, tuple[str, ...]]:
    del mtime_ns, size  # part of the cache key only: one read per version of the file
    data = yamlsafe.load(path)
    labels = data.get("labels") if isinstance(data, dict) else None
    if not isinstance(labels, dict):
        return {}
    return {
        str(label): tuple(str(n) for n in names)
        for label, names in labels.items()
        if isinstance(names, list)
    }


def job_variables(entry: ConfigEntry) -> dict[str, str]:
    specs = {row.spec_decoding for row in entry.rows}
    out = {
        "IS_AGENTIC": _AGENTIC,
        # .github/workflows/benchmark-multinode-tmpl.yml @InferenceX 843c6254 line 356 exports
        # it before the launch script; benchmark-tmpl.yml (single node, line 293) leaves it
        # unset, which a test reads as empty.
        "IS_MULTINODE": "true" if entry.multinode else "",
        "MODEL_PREFIX": entry.model_prefix,
        "FRAMEWORK": entry.framework,
        "PRECISION": entry.precision,
    }
    if len(specs) == 1:
        # the workflow exports the row's value; one value for every row decides it
        out["SPEC_DECODING"] = next(iter(specs))
    return out


_CLONE = re.compile(r"^\s*git\s+clone\b(.*)$")


_CHECKOUT = re.compile(r"^\s*git\s+checkout\s+(\S+)\s*(?:\|\|.*)?$")


_IF = re.compile(r"^\s*(if|elif)\s+(.*?);\s*then\s*$")


_ELSE = re.compile(r"^\s*else\s*$")


_FI = re.compile(r"^\s*fi\s*$")


_ASSIGN = re.compile(
    r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"$`]*\"|'[^']*'|[^\s\"'$`;]*)\s*$"
)


@dataclass
class _Frame:
    """One ``if`` statement: its branches' conditions (None for ``else``) and lines."""

    branches: list[tuple[str | None, int]]


@dataclass(frozen=True)
class _Step:
    """A clone or checkout of srt-slurm in a runner script, where it is."""

    line: int
    kind: str  # "clone" (ref may be None) or "checkout"
    ref: str | None
    repo: str | None
    path: tuple[tuple[int, int], ...]  # (frame id, branch index) from the outermost


@lru_cache(maxsize=64)
def _steps(text: str) -> tuple[list[_Step], list[_Frame], dict[str, str]]:
    """The script's srt-slurm clone/checkout steps with the ``if`` frames enclosing each, and
    its plain top-level assignments (parsed once per script text; callers only read them)."""
    frames: list[_Frame] = []
    stack: list[int] = []
    steps: list[_Step] = []
    assigned: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0] if not raw.lstrip().startswith("#") else ""
        if m := _IF.match(line):
            if m.group(1) == "if":
                frames.append(_Frame([]))
                stack.append(len(frames) - 1)
            if stack:
                frames[stack[-1]].branches.append((m.group(2), number))
            continue
        if _ELSE.match(line):
            if stack:
                frames[stack[-1]].branches.append((None, number))
            continue
        if _FI.match(line):
            if stack:
                stack.pop()
            continue
        path = tuple((f, len(frames[f].branches) - 1) for f in stack)
        if (m := _ASSIGN.match(line)) and not stack:
            assigned[m.group(1)] = m.group(2).strip("\"'")
        if m := _CLONE.match(line):
            try:
                words = shlex.split(m.group(1), comments=True)
            except ValueError:
                words = m.group(1).split()
            words = [_expand(w, assigned) for w in words]
            repo = next((w for w in words if "srt-slurm" in w and "://" in w), None)
            if repo is None and not any("srt-slurm" in w or "SRT" in w for w in words):
                continue
            ref = None
            if "--branch" in words and words.index("--branch") + 1 < len(words):
                ref = words[words.index("--branch") + 1]
            steps.append(_Step(number, "clone", ref, repo, path))
        elif (m := _CHECKOUT.match(line)) and steps:
            # a checkout after an srt-slurm clone moves that checkout
            steps.append(_Step(number, "checkout", m.group(1).strip("\"'"), None, path))
    return steps, frames, assigned


def _expand(word: str, assigned: dict[str, str]) -> str:
    """A word that is exactly ``$VAR`` / ``${VAR}`` of a plain top-level assignment."""
    m = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", word)
    return assigned.get(m.group(1), word) if m else word


def _read(script: Path) -> str:
    stat = script.stat()
    return _read_once(str(script), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _read_once(path: str, mtime_ns: int, size: int) -> str:
    """A runner script's text, read once per version of the file (every key of a cluster
    reads the same script, for its release and its nodes' GPU count)."""
    del mtime_ns, size  # part of the cache key only
    return read_capped(path, SCRIPT_LIMIT, "runner launch script").decode("utf-8", "replace")


def _shown(script: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return script.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return str(script)


_TOKEN = re.compile(
    r"\s*(\[\[|\]\]|&&|\|\||==|!=|=|\(|\)|!|\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\s()\"']+)"
)


def _evaluate(cond: str, variables: dict[str, str], script: str, line: int) -> bool:
    """A ``[[ ... ]]`` test of string (in)equalities joined by ``&&``, ``||``, ``!`` and
    parentheses, with the job's variables. Anything else cannot be decided: refused."""
    tokens: list[str] = []
    pos = 0
    while pos < len(cond):
        m = _TOKEN.match(cond, pos)
        if not m:
            break
        tokens.append(m.group(1))
        pos = m.end()
    test = _Test(cond, [t for t in tokens if t not in ("[[", "]]")], variables, script, line)
    if pos != len(cond.rstrip()) and cond[pos:].strip():
        raise test.refuse("is not a [[ ... ]] string test")
    if not test.words or tokens.count("[[") != tokens.count("]]"):
        raise test.refuse("is not a [[ ... ]] string test")
    result = test.disjunction()
    if test.at != len(test.words):
        raise test.refuse("has trailing words")
    return result


class _Test:
    """The words of one ``[[ ... ]]`` test, read left to right from ``at``."""

    def __init__(
        self, cond: str, words: list[str], variables: dict[str, str], script: str, line: int
    ) -> None:
        self.cond, self.words, self.variables = cond, words, variables
        self.script, self.line = script, line
        self.at = 0

    def refuse(self, why: str) -> SyncError:
        return SyncError(
            f"cannot decide which srt-slurm this runner clones: the condition {js(self.cond)} "
            f"{why}",
            path=self.script,
            line=self.line,
        )

    def operand(self) -> str:
        word = self.words[self.at]
        self.at += 1
        if word.startswith("'"):
            return word[1:-1]
        inner = word[1:-1] if word.startswith('"') else word
        m = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}?", inner)
        if m:
            name, default = m.group(1), m.group(2)
            if name in self.variables:
                return self.variables[name]
            if default is not None and name not in self.variables:
                raise self.refuse(f"tests ${name}, which the master config does not give")
            raise self.refuse(f"tests ${name}, which the master config does not give")
        if "$" in inner or "`" in inner:
            raise self.refuse(f"tests {js(word)}, which this reader cannot expand")
        return inner

    def primary(self) -> bool:
        words = self.words
        if self.at >= len(words):
            raise self.refuse("ends early")
        if words[self.at] == "!":
            self.at += 1
            return not self.primary()
        if words[self.at] == "(":
            self.at += 1
            value = self.disjunction()
            if self.at >= len(words) or words[self.at] != ")":
                raise self.refuse("has unbalanced parentheses")
            self.at += 1
            return value
        if words[self.at].startswith("-"):
            raise self.refuse(f"uses the file or string test {js(words[self.at])}")
        left = self.operand()
        if self.at >= len(words) or words[self.at] not in ("==", "=", "!="):
            raise self.refuse("is not a string comparison")
        op = words[self.at]
        self.at += 1
        if self.at >= len(words):
            raise self.refuse("ends early")
        right = self.operand()
        return (left == right) if op != "!=" else (left != right)

    # both sides are evaluated: a refusal anywhere in the test is a refusal (bash would have
    # short-circuited, but an undecidable test is worth naming either way)
    def chain(self, op: str, term: Callable[[], bool]) -> bool:
        """``term (op term)*``; every term evaluated (a refusal in any one is a refusal)."""
        values = [term()]
        while self.at < len(self.words) and self.words[self.at] == op:
            self.at += 1
            values.append(term())
        return all(values) if op == "&&" else any(values)

    def conjunction(self) -> bool:
        return self.chain("&&", self.primary)

    def disjunction(self) -> bool:
        return self.chain("||", self.conjunction)


def cluster_gpus_per_node(entry: ConfigEntry) -> int | None:
    """GPUs of one node of the key's cluster: the ``gpus_per_node:`` its runners write into
    srt-slurm's cluster file (``srtslurm.yaml``; ``gpus_per_node: 4`` in
    runners/launch_gb300-nv.sh @InferenceX eb1e4107, read by ``ClusterConfig`` in
    src/srtctl/core/schema.py @v1.0.38), when the label's scripts write exactly one value."""
    found = {
        value
        for script in runner_scripts(entry)
        for value in re.findall(r"(?m)^\s*gpus_per_node:\s*(\d+)\s*$", _read(script))
    }
    return int(next(iter(found))) if len(found) == 1 else None


def checkout(
    script: Path, variables: dict[str, str], *, root: Path | None = None
) -> Checkout | None:
    """The srt-slurm ref ``script`` checks out for a job with these ``variables``; None when
    the script clones no srt-slurm. Undecidable choices are refused with the line."""
    text = _read(script)
    steps, frames, assigned = _steps(text)
    if not steps:
        return None
    shown = _shown(script, root)
    memo: dict[tuple[int, int], bool] = {}

    def taken(step: _Step) -> bool:
        for frame, branch in step.path:
            for index in range(branch + 1):
                cond, number = frames[frame].branches[index]
                key = (frame, index)
                if key not in memo:
                    memo[key] = True if cond is None else _evaluate(cond, variables, shown, number)
                if index < branch and memo[key]:
                    return False
                if index == branch and not memo[key]:
                    return False
        return True

    ref: str | None = None
    repo: str | None = None
    where = 0
    for step in steps:
        if not taken(step):
            continue
        if step.kind == "clone":
            ref, repo, where = step.ref, step.repo, step.line
        else:
            ref, where = step.ref, step.line
    if where == 0:
        return None
    if ref is None:
        ref = "main"  # a clone without --branch and no checkout: the default branch
    if ref.startswith("$"):
        name = ref.strip('${}"')
        if name not in assigned:
            raise SyncError(
                f"the srt-slurm ref {js(ref)} is a variable this reader cannot resolve "
                "(no plain assignment in the script); cannot tell which srt-slurm ran",
                path=shown,
                line=where,
            )
        ref = assigned[name]
    fork = "" if repo is None or "NVIDIA/srt-slurm" in repo else f" of {repo}"
    return Checkout(ref, fork, shown, where)
