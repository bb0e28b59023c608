"""A runner's launch script (``runners/launch_<cluster>.sh``) read as data, never run: which
srt-slurm ref it clones or checks out for a job (the ``if``/``elif`` chains around its ``git
clone`` / ``git checkout`` lines evaluated with the key's own values; a condition the master
config cannot decide is refused with the script and line), and the GPUs per node it writes into
srt-slurm's cluster file. :mod:`syncer.inferencex.releases` turns the ref into a release.

A file of the tree the script sources (``source "$(dirname "${BASH_SOURCE[0]}")/srt_slurm.sh"``)
is read in its place, as bash would, and a version file it reads into a variable (``read -r V <
"$ROOT/configs/srt-slurm-version.txt"``, ``V=$(cat configs/srt-slurm-version.txt)``) gives that
variable its value (InferenceX PR #2384, commits 8fa3b4a3c and d8bdc7172): both are then files
the key's render reads. A path this reader cannot work out, or one outside the tree, is not
read; a ref that then stays a variable is refused as before.
"""

from __future__ import annotations

import os
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
    script as shown and the line (of the file it sources, when the clone is there), and the
    version file the ref was read from, if any."""

    ref: str
    fork: str
    script: str
    line: int
    ref_file: str | None = None


SCRIPT_LIMIT = 1 << 20  # a launch script is a few hundred lines
VERSION_LIMIT = 1 << 12  # a version file holds one ref
SOURCE_DEPTH = 4  # files sourced by files sourced ...: InferenceX's go one deep
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


# An assignment of a directory computed by `cd`-ing into it: `ROOT="$(cd "$(dirname
# "${BASH_SOURCE[0]}")/.." >/dev/null 2>&1 || exit 1; pwd)"` (its lines joined), or `&& pwd`.
_CD_PWD = re.compile(
    r'^\s*(?:export\s+)?([A-Za-z_]\w*)="?\$\(\s*cd\s+(.+?)\s*(?:[12]?>\s*/dev/null(?:\s+2>&1)?)?'
    r'\s*(?:\|\|\s*exit\b[^;&]*?)?\s*(?:&&|;)\s*pwd\s*\)"?\s*$'
)
# A version file read into a variable: `read -r V < FILE`, `V=$(cat FILE)`, `V="$(< FILE)"`.
_READ = re.compile(r"^\s*(?:IFS=\S*\s+)?read\s+(?:-r\s+)?([A-Za-z_]\w*)\s*<\s*(\S.*?)\s*$")
_CAT = re.compile(r'^\s*(?:export\s+)?([A-Za-z_]\w*)="?\$\(\s*(?:cat\s+|<\s*)(.+?)\s*\)"?\s*$')
# Any other assignment of one word, kept when the word is a path this reader can work out.
_WORD_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_]\w*)=(\S+)\s*$")
_SOURCE = re.compile(r"^\s*(?:source|\.)\s+(\S.*?)\s*(?:\|\|\s*(?:exit|return)\b.*)?$")
# `$(dirname "${BASH_SOURCE[0]}")`, `${BASH_SOURCE[0]%/*}`, and the same of `$0`, as shlex
# leaves them (inner quotes gone).
_DIRNAME = re.compile(
    r'\$\(\s*dirname\s+"?\$\{?(BASH_SOURCE(?:\[0\])?|0)\}?"?\s*\)|\$\{(BASH_SOURCE(?:\[0\])?|0)%/\*\}'
)
_VAR = re.compile(r"\$\{?([A-Za-z_]\w*)\}?")
# A `$(` left open at the end of an assignment's line, and the line closing it.
_OPEN_SUBST = re.compile(r'^\s*(?:export\s+)?[A-Za-z_]\w*="?\$\(\s*$')
_CLOSE_SUBST = re.compile(r'^\s*\)"?\s*$')


@dataclass
class _Frame:
    """One ``if`` statement: its branches' conditions (None for ``else``) and where each is
    (the file as shown, the line)."""

    branches: list[tuple[str | None, tuple[str, int]]]


@dataclass(frozen=True)
class _Step:
    """A clone or checkout of srt-slurm in a runner script, where it is."""

    where: tuple[str, int]  # the file as shown (the launch script or a file it sources), line
    kind: str  # "clone" (ref may be None) or "checkout"
    ref: str | None
    repo: str | None
    path: tuple[tuple[int, int], ...]  # (frame id, branch index) from the outermost
    ref_file: str | None = None  # the version file a `--branch "$V"` ref was read from


@dataclass
class _Parsed:
    """A launch script read with the files it sources: its srt-slurm steps, the ``if``
    frames, its plain top-level assignments (version files' values included), the version
    file each such variable was read from, and every file read besides the script."""

    steps: list[_Step]
    frames: list[_Frame]
    assigned: dict[str, str]
    ref_files: dict[str, str]
    reads: list[Path]
    missing: list[Path]  # tree paths it would read that are not there (yet)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """The script's lines as bash reads its commands: a line ending in ``\\`` joined with the
    next, an assignment's ``$(`` left open joined with its lines up to the closing ``)``
    (``; ``-separated); each with the number of its first line."""
    out: list[tuple[int, str]] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        number, line = index + 1, lines[index]
        index += 1
        while line.endswith("\\") and index < len(lines):
            line = line[:-1] + " " + lines[index].strip()
            index += 1
        if _OPEN_SUBST.match(line):
            body: list[str] = []
            while index < len(lines) and not _CLOSE_SUBST.match(lines[index]):
                body.append(lines[index].strip())
                index += 1
            if index < len(lines):
                closing = lines[index].strip()
                index += 1
                line = line.rstrip() + "; ".join(body) + closing
        out.append((number, line))
    return out


def _parse(script: Path, root: Path | None) -> _Parsed:
    """``script``'s srt-slurm steps, reading the tree's files it sources in their place
    (``root``: the checkout, which files are shown relative to; else the script's tree)."""
    tree = root or script.parent.parent
    parsed = _Parsed([], [], {}, {}, [], [])
    paths: dict[str, Path] = {}  # variables holding a directory or file of the tree
    stack: list[int] = []
    # InferenceX's workflows run `bash ./runners/launch_<cluster>.sh` from the workspace root.
    cwd = script.parent.parent

    def path_of(word: str, here: Path) -> Path | None:
        """The tree file or directory ``word`` names, or None when this reader cannot tell
        or it is outside the tree (a virtualenv, $HOME: nothing InferenceX holds)."""
        try:
            words = shlex.split(word, comments=True)
        except ValueError:
            return None
        if len(words) != 1:
            return None
        text = _DIRNAME.sub(
            lambda m: str((here if (m.group(1) or m.group(2)).startswith("B") else script).parent),
            words[0],
        )

        def value(m: re.Match[str]) -> str:
            name = m.group(1)
            if name in ("GITHUB_WORKSPACE", "PWD"):
                return str(cwd)
            if name in paths:
                return str(paths[name])
            return parsed.assigned.get(name, m.group(0))

        text = _VAR.sub(value, text)
        if "$" in text or "`" in text or not text:
            return None
        found = Path(os.path.normpath(cwd / text))
        try:
            found.resolve().relative_to(tree.resolve())
        except (OSError, ValueError):
            return None
        return found

    def version(name: str, word: str, here: Path, *, first_line: bool) -> None:
        file = path_of(word, here)
        if file is None or not file.is_file():
            parsed.missing += [file] if file is not None else []
            return
        text = read_capped(file, VERSION_LIMIT, "srt-slurm version file").decode("utf-8", "replace")
        value = (text.splitlines() or [""])[0].strip() if first_line else text.strip()
        parsed.reads.append(file)
        if value and not any(c.isspace() for c in value):
            parsed.assigned[name] = value
            parsed.ref_files[name] = _shown(file, root)

    def walk(path: Path, chain: tuple[Path, ...]) -> None:
        shown = _shown(path, root)
        for number, raw in _logical_lines(_read(path)):
            line = raw.split(" #", 1)[0] if not raw.lstrip().startswith("#") else ""
            where = (shown, number)
            if m := _IF.match(line):
                if m.group(1) == "if":
                    parsed.frames.append(_Frame([]))
                    stack.append(len(parsed.frames) - 1)
                if stack:
                    parsed.frames[stack[-1]].branches.append((m.group(2), where))
                continue
            if _ELSE.match(line):
                if stack:
                    parsed.frames[stack[-1]].branches.append((None, where))
                continue
            if _FI.match(line):
                if stack:
                    stack.pop()
                continue
            if m := _SOURCE.match(line):
                target = path_of(m.group(1), path)
                if target is not None and not target.is_file():
                    parsed.missing.append(target)
                known = target is not None and target.is_file() and target not in chain
                if known and target is not None and len(chain) < SOURCE_DEPTH:
                    parsed.reads.append(target)
                    walk(target, (*chain, target))
                continue
            if not stack:
                _assignment(line, path)
            if m := _CLONE.match(line):
                try:
                    given = shlex.split(m.group(1), comments=True)
                except ValueError:
                    given = m.group(1).split()
                words = [_expand(w, parsed.assigned) for w in given]
                repo = next((w for w in words if "srt-slurm" in w and "://" in w), None)
                if repo is None and not any("srt-slurm" in w or "SRT" in w for w in words):
                    continue
                ref = ref_file = None
                if "--branch" in words and words.index("--branch") + 1 < len(words):
                    at = words.index("--branch") + 1
                    ref, ref_file = words[at], _variable_file(given[at])
                parsed.steps.append(_Step(where, "clone", ref, repo, _at(), ref_file))
            elif (m := _CHECKOUT.match(line)) and parsed.steps:
                # a checkout after an srt-slurm clone moves that checkout
                ref = m.group(1).strip("\"'")
                parsed.steps.append(_Step(where, "checkout", ref, None, _at()))

    def _variable_file(word: str) -> str | None:
        m = re.fullmatch(r"\$\{?([A-Za-z_]\w*)\}?", word)
        return parsed.ref_files.get(m.group(1)) if m else None

    def _at() -> tuple[tuple[int, int], ...]:
        return tuple((f, len(parsed.frames[f].branches) - 1) for f in stack)

    def _assignment(line: str, here: Path) -> None:
        if m := _CD_PWD.match(line):
            if (folder := path_of(m.group(2), here)) is not None:
                paths[m.group(1)] = folder
        elif m := _READ.match(line):
            version(m.group(1), m.group(2), here, first_line=True)
        elif m := _CAT.match(line):
            version(m.group(1), m.group(2), here, first_line=False)
        elif m := _ASSIGN.match(line):
            parsed.assigned[m.group(1)] = m.group(2).strip("\"'")
        elif (m := _WORD_ASSIGN.match(line)) and "$" in m.group(2):
            named = path_of(m.group(2), here)
            if named is not None:
                paths[m.group(1)] = named

    walk(script, (script,))
    return parsed


def _expand(word: str, assigned: dict[str, str]) -> str:
    """A word that is exactly ``$VAR`` / ``${VAR}`` of a plain top-level assignment."""
    m = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", word)
    return assigned.get(m.group(1), word) if m else word


def _parsed(script: Path, root: Path | None) -> _Parsed:
    """:func:`_parse`, once per version of the script and of every file it read (every key
    of a cluster reads the same script, for its release and for discovery)."""
    key = (str(script), str(root))
    cached = _PARSED.get(key)
    if cached is not None and cached[0] == _stamps([script, *cached[1].reads, *cached[1].missing]):
        return cached[1]
    parsed = _parse(script, root)
    if len(_PARSED) >= 64:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[key] = (_stamps([script, *parsed.reads, *parsed.missing]), parsed)
    return parsed


_PARSED: dict[tuple[str, str], tuple[tuple[tuple[int, int] | None, ...], _Parsed]] = {}


def _stamps(paths: list[Path]) -> tuple[tuple[int, int] | None, ...]:
    out: list[tuple[int, int] | None] = []
    for path in paths:
        try:
            st = path.stat()
        except OSError:
            out.append(None)
            continue
        out.append((st.st_mtime_ns, st.st_size))
    return tuple(out)


def script_reads(script: Path, root: Path | None = None) -> list[Path]:
    """The files of the tree ``script`` reads for its srt-slurm choice besides itself: the
    files it sources and the version files it reads a ref from."""
    return list(dict.fromkeys(_parsed(script, root).reads))


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

    def refuse(why: str) -> SyncError:
        return SyncError(
            f"cannot decide which srt-slurm this runner clones: the condition {js(cond)} {why}",
            path=script,
            line=line,
        )

    if pos != len(cond.rstrip()) and cond[pos:].strip():
        raise refuse("is not a [[ ... ]] string test")
    words = [t for t in tokens if t not in ("[[", "]]")]
    if not words or tokens.count("[[") != tokens.count("]]"):
        raise refuse("is not a [[ ... ]] string test")
    at = 0

    def operand() -> str:
        nonlocal at
        word = words[at]
        at += 1
        if word.startswith("'"):
            return word[1:-1]
        inner = word[1:-1] if word.startswith('"') else word
        m = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}?", inner)
        if m:
            name, default = m.group(1), m.group(2)
            if name in variables:
                return variables[name]
            if default is not None and name not in variables:
                raise refuse(f"tests ${name}, which the master config does not give")
            raise refuse(f"tests ${name}, which the master config does not give")
        if "$" in inner or "`" in inner:
            raise refuse(f"tests {js(word)}, which this reader cannot expand")
        return inner

    def primary() -> bool:
        nonlocal at
        if at >= len(words):
            raise refuse("ends early")
        if words[at] == "!":
            at += 1
            return not primary()
        if words[at] == "(":
            at += 1
            value = disjunction()
            if at >= len(words) or words[at] != ")":
                raise refuse("has unbalanced parentheses")
            at += 1
            return value
        if words[at].startswith("-"):
            raise refuse(f"uses the file or string test {js(words[at])}")
        left = operand()
        if at >= len(words) or words[at] not in ("==", "=", "!="):
            raise refuse("is not a string comparison")
        op = words[at]
        at += 1
        if at >= len(words):
            raise refuse("ends early")
        right = operand()
        return (left == right) if op != "!=" else (left != right)

    # both sides are evaluated: a refusal anywhere in the test is a refusal (bash would have
    # short-circuited, but an undecidable test is worth naming either way)
    def chain(op: str, term: Callable[[], bool]) -> bool:
        """``term (op term)*``; every term evaluated (a refusal in any one is a refusal)."""
        nonlocal at
        values = [term()]
        while at < len(words) and words[at] == op:
            at += 1
            values.append(term())
        return all(values) if op == "&&" else any(values)

    def conjunction() -> bool:
        return chain("&&", primary)

    def disjunction() -> bool:
        return chain("||", conjunction)

    result = disjunction()
    if at != len(words):
        raise refuse("has trailing words")
    return result


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
    parsed = _parsed(script, root)
    if not parsed.steps:
        return None
    frames, assigned = parsed.frames, parsed.assigned
    memo: dict[tuple[int, int], bool] = {}

    def taken(step: _Step) -> bool:
        for frame, branch in step.path:
            for index in range(branch + 1):
                cond, (shown, number) = frames[frame].branches[index]
                key = (frame, index)
                if key not in memo:
                    memo[key] = True if cond is None else _evaluate(cond, variables, shown, number)
                if index < branch and memo[key]:
                    return False
                if index == branch and not memo[key]:
                    return False
        return True

    last: _Step | None = None
    repo: str | None = None
    for step in parsed.steps:
        if not taken(step):
            continue
        last = step
        if step.kind == "clone":
            repo = step.repo
    if last is None:
        return None
    (shown, where), ref, ref_file = last.where, last.ref, last.ref_file
    if ref is None:
        ref = "main"  # a clone without --branch and no checkout: the default branch
    if ref.startswith("$"):
        name = ref.strip('${}"')
        if name not in assigned:
            raise SyncError(
                f"the srt-slurm ref {js(ref)} is a variable this reader cannot resolve "
                "(no plain assignment in the script, nor a version file it reads); cannot "
                "tell which srt-slurm ran",
                path=shown,
                line=where,
            )
        ref, ref_file = assigned[name], parsed.ref_files.get(name)
    fork = "" if repo is None or "NVIDIA/srt-slurm" in repo else f" of {repo}"
    return Checkout(ref, fork, shown, where, ref_file)
