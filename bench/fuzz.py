"""`python -m bench fuzz [--seed N] [--cases N] [--timeout S] [--only SUBSTR] [--list]`:
bad input must exit 2, never 3.

Mutates the project's own bundled inputs (the InferenceX example's master config, recipes,
shared recipe blocks and golden AL file; ``sync.yaml``; the sweep logs and JSON files of
``examples/runs/41000000001/``; the data modules under ``cookbook_snippets/``), one mutation at
a time, in a temporary copy of the project, and runs the real commands in-process through
``syncer.cli.main`` (``render`` of every key, cookbook form and ``--raw``; ``verify``;
``generate --all --check``; ``decode --all``; ``lint`` against an empty git repository;
``diff`` against the unmutated module both ways; ``reencode``) on
each mutated copy. ``syncer/data/policy.yaml`` is not user input and is left alone.

Mutations:

* YAML (by node, through PyYAML's composer, so anchors, tags and merge keys survive): every
  node replaced in turn by a value of each other type (null, true, 0, -1, a huge int, an
  infinite float, NaN, "", a long string, a list, a mapping, a deeply nested list), by an alias
  to an earlier node or to its own parent (a recursive document); every mapping entry deleted
  and duplicated; plus text-level truncation, a tab, bad UTF-8.
* logs (by line): truncated, `Env:` / `Command:` lines dropped and duplicated, a garbage line
  inserted, bad UTF-8 inserted; the file emptied.
* JSON (modules, run JSON): every value replaced by values of the other types, every object
  member deleted; text-level truncation and bad UTF-8.
* the run packed as a ``.zip`` and a ``.tar.gz`` (``verify --run ARCHIVE``): truncated, bytes
  flipped, junk inserted.
* issue 22's kinds, run first: the master config, a recipe, ``sync.yaml``, the module, the
  golden AL file and a sweep log replaced by a FIFO, a directory, a character device, a
  symlink to ``/dev/zero`` or to nothing, or made mode 000; YAML 1.1 keys (``on``, ``off``,
  ``yes``, ``No``, ``TRUE``, ``~``) and values (octal-looking and unquoted ids, unquoted and
  impossible dates, hex, digit separators), lists nested 199, 400 and 5000 deep, a merge list
  with a conflicting key; a sweep log twice in each archive (changed copy first or last,
  identical) and a zip end record claiming 65535 members; and ``generate`` writing a changed
  module and page, stopped by SIGTERM at seven moments.
* issue 36's kinds, run with them: a remote, clone, URL or revision beginning with ``-`` or
  naming a helper (``--upload-pack=touch PWNED``, ``ext::…``) in every command that passes
  one to git (the bot's ``--inferencex-remote``, ``--inferencex-clone``, ``--cookbook``,
  ``--push-url``; ``audit --fetch``; ``diff REV:PATH``): refused, and no ``PWNED`` anywhere;
  a master key, a ``model-prefix`` and a sync.yaml key holding a control character, a line
  break into ``::warning``, or a space: refused, with no raw control and no line beginning
  ``::`` in any output; the bot's gate on an event field of another type than GitHub's
  (``action``, ``inputs``), a mistyped event name and no ``--event``: refused. Unbounded
  work and values published: a master row's conc-start 0, negative or text and counts past
  their bounds, a recipe's 30,000,000 workers or 0 GPUs a node, golden ALs ``nan`` /
  ``3.51; touch PWNED``, ``--as-of`` 2026-13-45 and 9999-12-31: refused; nested aliases
  bound by 47 variants, ``Env:`` and ``Command:`` records over hundreds of thousands of
  lines, an ``Env:`` line of 480 more keys, a module whose envRefs build millions of
  entries: no hang, no exit 3 (the process's peak memory is printed).
* issue 36's kinds (``page_value_mutations``), run with issue 22's: what the page's JavaScript
  reads otherwise than JSON (numbers beyond 2**53, from 1e21, below 1e-6, beyond the doubles;
  ``__proto__`` keys; array-index keys; a missing ``cmd``), lone surrogates in a module,
  ``sync.yaml`` and an event, CR-only and CRLF line endings, raw U+2028 / U+2029.
* issue 36's kinds too: the module (and a ``zz.jsx`` beside it) a symlink out
  of the folder ``lint --all``, ``audit``, ``verify --cookbook`` scan and ``generate --out``
  writes, the page one out of ``--pages`` (each command must refuse it, and the file outside is
  checked unchanged after every command); and GitHub answers of the wrong shape: ``audit`` with
  a token against a fake GitHub (started in-process) that answers with the project copy's
  ``api/*.json``, whose JSON mutations (every value of another type, every member deleted,
  truncation, bad UTF-8) are the answers' mutations.

Every exit code 3, uncaught exception, hang (``--timeout`` per command, default 30 s),
exit-2 command that changed a file, temp file left behind, SIGTERM that ended other than
143 (or 0, when it came after the work) or left a file written, injected command that ran or
raw control echoed (issue 36's kinds) is recorded with the mutation
that caused it, deduplicated by the innermost frame of its traceback. The mutation list is
enumerated in a fixed order, shuffled per file with ``--seed`` and interleaved across files
(issue 22's kinds first), so a seed and a case count name the same cases on every machine.
Exit status: 0 no crash, 1 crashes found.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import dataclasses
import hashlib
import io
import json
import math
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DSPARK = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
DISAGG = "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"
RUN = "examples/runs/41000000001"
MODULE = "cookbook_snippets/deepseek-ai/deepseek-v4_1.jsx"
IX = "examples/inferencex"
E2E = f"{IX}/inferencex-e2e"
MASTER = f"{E2E}/configs/nvidia-master.yaml"
SINGLE = (
    f"{E2E}/benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/gb300-fp4-mtp/agentic.yaml"
)
MULTI = (
    f"{E2E}/benchmarks/multi_node/srt-slurm-recipes/dsv41flash/sglang/gb300-fp4/agentx/"
    "disagg-variants.yaml"
)
SHARED = f"{E2E}/configs/srt-recipes"
GOLDEN = f"{E2E}/infx/golden_al_distribution/dsv41flash_dspark.yaml"

ARCHIVES = "run-archives/"  # the run packed as a .zip and a .tar.gz, made by make_project
# Made by make_project too: a regular file the outputs' mutations replace (`diff -o`,
# `reencode --out`), and an event file for `bot --event` (only its fs mutations run: the
# names end in neither .json nor .txt, so no content mutation picks them up).
OUTPUT = "outputs/report.out"
EVENT = "events/comment.event"
NOBODY = 65534
Command = list[str]


def _render(key: str) -> list[Command]:
    return [["render", key, "--inferencex", IX], ["render", key, "--inferencex", IX, "--raw"]]


VERIFY: Command = [
    "verify",
    DSPARK,
    "--run",
    RUN,
    "--inferencex",
    IX,
    "--cookbook",
    "cookbook_snippets",
]
VERIFY_PINNED: Command = ["verify", DSPARK, "--inferencex", IX, "--cookbook", "cookbook_snippets"]
GENERATE: Command = [
    "generate",
    "--all",
    "--check",
    "--config",
    "sync.yaml",
    "--inferencex",
    IX,
    "--out",
    "cookbook_snippets",
    "--pages",
    "examples/cookbook",
]
DECODE: Command = ["decode", MODULE, "--all", "--format", "json"]


def commands_for(rel: str, lint_repo: str) -> list[Command]:
    """The commands that read the file ``rel`` (a path relative to the project copy)."""
    if rel == MASTER or rel.startswith(SHARED):
        return [*_render(DSPARK), *_render(DISAGG), VERIFY, GENERATE]
    if rel in (SINGLE, GOLDEN):
        return [*_render(DSPARK), VERIFY, GENERATE]
    if rel == MULTI:
        return [*_render(DISAGG), GENERATE]
    if rel == "sync.yaml":
        return [GENERATE, VERIFY_PINNED]
    if rel.startswith(RUN):
        return [VERIFY]
    if rel.startswith(ARCHIVES):
        return [[*VERIFY[:3], rel, *VERIFY[4:]]]
    if rel == OUTPUT:
        return [["diff", MODULE, MODULE, "-o", rel], ["reencode", MODULE, "--out", rel]]
    if rel == EVENT:
        return [["bot", "--event", rel, "--event-name", "issue_comment", "--dry-run"]]
    if rel.startswith(API):
        return [_api_command()]
    if rel.startswith("examples/events/"):  # the gate reads an event file without a token
        name = Path(rel).name.split(".", 1)[0]
        return [["bot", "--event", rel, "--event-name", name, "--models-only"]]
    if rel.startswith("cookbook_snippets/"):
        pristine = str(Path(lint_repo).parent / "pristine.jsx")
        return [
            DECODE,
            VERIFY,
            GENERATE,
            ["lint", MODULE, "--sglang", lint_repo],
            ["diff", pristine, MODULE, "--format", "json"],
            ["diff", MODULE, pristine, "--format", "markdown"],
            ["reencode", MODULE],
        ]
    raise ValueError(rel)


# ---------------------------------------------------------------------------------- mutations


@dataclass(frozen=True)
class Mutation:
    path: str  # relative to the project copy
    name: str  # what was done, for the report
    apply: Callable[[bytes], bytes] = field(compare=False, repr=False)
    # instead of new bytes: what is put at the path (a FIFO, a directory, a symlink, a device,
    # a mode), undone by _restore
    place: Callable[[Path], None] | None = field(default=None, compare=False, repr=False)
    # a SIGTERM sent this many seconds into each command (the commands then write)
    sigterm_after: float | None = None
    # what is put at the path is not a regular file or cannot be read: every command reading
    # it must refuse it (exit 2), never take it for drift or nothing (exit 0, 1)
    refused: bool = False
    # a run's member: instead of refused it may be skipped, named so in the report (a run's
    # links are never followed and its FIFOs and devices never read, as in an archive)
    or_skipped: bool = False
    # run the commands as a user other than root (a mode stops root only through this)
    as_nobody: bool = False
    # what else the mutation changed (a folder's mode), undone after its commands
    undo: Callable[[Path], None] | None = field(default=None, compare=False, repr=False)
    # instead of the commands that read the file: these (issue 36's option injection)
    commands: tuple[Command, ...] = ()
    # a file git would create if it ran the injected command: never found after a command
    marker: str = ""
    # no output holds a raw control character or a line beginning with "::" (a workflow
    # command in an Actions log)
    echo_free: bool = False


def _deep(depth: int) -> object:
    value: object = "bottom"
    for _ in range(depth):
        value = [value]
    return value


REPLACEMENTS: list[tuple[str, object]] = [
    ("null", None),
    ("true", True),
    ("0", 0),
    ("-1", -1),
    ("huge int", 10**40),
    ("inf", math.inf),
    ("nan", math.nan),
    ("empty string", ""),
    ("long string", "x" * 20000),
    ("list", [1, "a"]),
    ("empty list", []),
    ("mapping", {"fuzz": 1}),
    ("empty mapping", {}),
    ("nested", _deep(120)),
]

_REPRESENTER = yaml.representer.SafeRepresenter()


def _yaml_node(value: object) -> yaml.Node:
    _REPRESENTER.represented_objects = {}
    return _REPRESENTER.represent_data(value)


def _walk_yaml(
    node: yaml.Node, path: str = ""
) -> Iterator[tuple[str, yaml.Node, yaml.Node | None]]:
    """Every node in pre-order, with its path and parent; aliases visited once."""
    seen: set[int] = set()

    def walk(n: yaml.Node, p: str, parent: yaml.Node | None):
        if id(n) in seen:
            return
        seen.add(id(n))
        yield p, n, parent
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                label = k.value if isinstance(k, yaml.ScalarNode) else "?"
                yield from walk(v, f"{p}.{label}", n)
        elif isinstance(n, yaml.SequenceNode):
            for i, v in enumerate(n.value):
                yield from walk(v, f"{p}[{i}]", n)

    yield from walk(node, path, None)


def _compose(data: bytes) -> yaml.Node:
    return yaml.compose(data.decode("utf-8"), Loader=yaml.SafeLoader)


def _serialize(node: yaml.Node) -> bytes:
    return yaml.serialize(node, Dumper=yaml.SafeDumper, allow_unicode=True).encode("utf-8")


def _replace_in_parent(parent: yaml.Node, old: yaml.Node, new: yaml.Node) -> None:
    if isinstance(parent, yaml.MappingNode):
        parent.value = [(k, new if v is old else v) for k, v in parent.value]
    else:
        parent.value = [new if v is old else v for v in parent.value]


def _yaml_op(index: int, op: str, arg: object = None) -> Callable[[bytes], bytes]:
    def apply(data: bytes) -> bytes:
        root = _compose(data)
        nodes = list(_walk_yaml(root))
        _, node, parent = nodes[index]
        if op == "replace":
            if parent is None:
                return _serialize(_yaml_node(arg))
            _replace_in_parent(parent, node, _yaml_node(arg))
        elif op == "alias-earlier":
            _replace_in_parent(parent, node, nodes[arg][1])
        elif op == "alias-parent":
            _replace_in_parent(parent, node, parent)
        elif op == "delete":
            node.value = [kv for i, kv in enumerate(node.value) if i != arg]
        elif op == "duplicate":
            key = node.value[arg][0]
            node.value = [*node.value, (copy.deepcopy(key), _yaml_node("duplicate"))]
        return _serialize(root)

    return apply


def _text_ops(rel: str, data: bytes, rng: random.Random) -> list[Mutation]:
    out = [
        Mutation(rel, "emptied", lambda _d: b""),
        Mutation(rel, "bad UTF-8 at start", lambda d: b"\xff\xfe" + d),
    ]
    for _ in range(3):
        cut = rng.randrange(1, max(2, len(data)))
        out.append(Mutation(rel, f"truncated at byte {cut}", lambda d, c=cut: d[:c]))
    for _ in range(2):
        at = rng.randrange(0, max(1, len(data)))
        out.append(
            Mutation(rel, f"bad UTF-8 at byte {at}", lambda d, a=at: d[:a] + b"\xc3\x28" + d[a:])
        )
    return out


def yaml_mutations(rel: str, data: bytes, rng: random.Random) -> list[Mutation]:
    out = _text_ops(rel, data, rng)
    out.append(Mutation(rel, "tab at start of a line", lambda d: d.replace(b"\n  ", b"\n\t", 1)))
    nodes = list(_walk_yaml(_compose(data)))
    for i, (path, node, parent) in enumerate(nodes):
        where = path or "<root>"
        for label, value in REPLACEMENTS:
            out.append(Mutation(rel, f"{where} := {label}", _yaml_op(i, "replace", value)))
        if parent is not None:
            if i > 1:
                earlier = rng.randrange(1, i)
                out.append(
                    Mutation(
                        rel,
                        f"{where} := alias of {nodes[earlier][0]}",
                        _yaml_op(i, "alias-earlier", earlier),
                    )
                )
            out.append(
                Mutation(rel, f"{where} := alias of its parent", _yaml_op(i, "alias-parent"))
            )
        if isinstance(node, yaml.MappingNode):
            for j, (k, _v) in enumerate(node.value):
                key = k.value if isinstance(k, yaml.ScalarNode) else "?"
                out.append(Mutation(rel, f"{where}: delete {key!s}", _yaml_op(i, "delete", j)))
                out.append(
                    Mutation(rel, f"{where}: duplicate {key!s}", _yaml_op(i, "duplicate", j))
                )
    return out


_JSX = re.compile(rb"\A(?P<head>.*?export const \w+ = )(?P<body>\{.*\})(?P<tail>;?\s*)\Z", re.S)


def _json_paths(value: object, path: tuple = ()) -> Iterator[tuple]:
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _json_paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _json_paths(v, (*path, i))


def _json_set(doc: object, path: tuple, value: object, delete: bool = False) -> object:
    if not path:
        return value
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


def _json_op(path: tuple, value: object = None, delete: bool = False):
    def apply(data: bytes) -> bytes:
        m = _JSX.match(data)
        head, body, tail = (m["head"], m["body"], m["tail"]) if m else (b"", data, b"")
        doc = _json_set(json.loads(body), path, copy.deepcopy(value), delete)
        text = json.dumps(doc, indent=1, ensure_ascii=False).encode("utf-8")
        return head + text + tail

    return apply


def _label(path: tuple) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path) or "<root>"


def json_mutations(rel: str, data: bytes, rng: random.Random) -> list[Mutation]:
    out = _text_ops(rel, data, rng)
    m = _JSX.match(data)
    doc = json.loads(m["body"] if m else data)
    for path in _json_paths(doc):
        for label, value in REPLACEMENTS:
            out.append(Mutation(rel, f"{_label(path)} := {label}", _json_op(path, value)))
        if path and isinstance(path[-1], str):
            out.append(Mutation(rel, f"{_label(path)}: deleted", _json_op(path, delete=True)))
    return out


def log_mutations(rel: str, data: bytes, rng: random.Random) -> list[Mutation]:
    out = _text_ops(rel, data, rng)
    lines = data.split(b"\n")

    def edit(fn: Callable[[list[bytes]], list[bytes]]) -> Callable[[bytes], bytes]:
        return lambda d: b"\n".join(fn(d.split(b"\n")))

    for i, line in enumerate(lines):
        if not line:
            continue
        cut = rng.randrange(0, len(line))
        out.append(
            Mutation(
                rel,
                f"line {i + 1} truncated at {cut}",
                edit(lambda ls, i=i, c=cut: [*ls[:i], ls[i][:c], *ls[i + 1 :]]),
            )
        )
        garbage = bytes(rng.randrange(32, 127) for _ in range(rng.randrange(1, 80)))
        out.append(
            Mutation(
                rel,
                f"garbage line after line {i + 1}",
                edit(lambda ls, i=i, g=garbage: [*ls[: i + 1], g, *ls[i + 1 :]]),
            )
        )
        at = rng.randrange(0, len(line))
        out.append(
            Mutation(
                rel,
                f"bad UTF-8 in line {i + 1}",
                edit(
                    lambda ls, i=i, a=at: [*ls[:i], ls[i][:a] + b"\xff" + ls[i][a:], *ls[i + 1 :]]
                ),
            )
        )
        if b"Env:" in line or b"Command:" in line or b"Starting " in line:
            out.append(
                Mutation(
                    rel, f"line {i + 1} dropped", edit(lambda ls, i=i: [*ls[:i], *ls[i + 1 :]])
                )
            )
            out.append(
                Mutation(
                    rel,
                    f"line {i + 1} duplicated",
                    edit(lambda ls, i=i: [*ls[: i + 1], ls[i], *ls[i + 1 :]]),
                )
            )
            body = line.split(b": ", 1)[-1] if b": " in line else line
            out.append(
                Mutation(
                    rel,
                    f"line {i + 1} repeated bare (continuation)",
                    edit(lambda ls, i=i, b=body: [*ls[: i + 1], b, *ls[i + 1 :]]),
                )
            )
    return out


def binary_mutations(rel: str, data: bytes, rng: random.Random) -> list[Mutation]:
    """An archive: truncated, bytes flipped, a chunk of junk inserted, at seeded offsets."""
    out = []
    for _ in range(20):
        cut = rng.randrange(0, len(data))
        out.append(Mutation(rel, f"truncated at byte {cut}", lambda d, c=cut: d[:c]))
    for _ in range(40):
        at = rng.randrange(0, len(data))
        out.append(
            Mutation(
                rel,
                f"byte {at} flipped",
                lambda d, a=at: d[:a] + bytes([d[a] ^ 0xFF]) + d[a + 1 :],
            )
        )
    for _ in range(10):
        at = rng.randrange(0, len(data))
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        out.append(Mutation(rel, f"junk at byte {at}", lambda d, a=at, j=junk: d[:a] + j + d[a:]))
    return out


# ---- issue 36's kinds: symlinks out of the folders the commands scan or write; GitHub
# answers of the wrong shape

PAGE = "examples/cookbook/docs/cookbook/autoregressive/DeepSeek/DeepSeek-V4_1.mdx"
OUTSIDE = "outside"  # beside the project: what a link out of it names; never changed or read


def _link_out(name: str) -> Callable[[Path], None]:
    """The file replaced by a link to its copy outside the project (``../outside/NAME``)."""

    def place(path: Path) -> None:
        outside = _project_of(path).parent / OUTSIDE / name
        path.symlink_to(os.path.relpath(outside, path.parent))

    return place


def _project_of(path: Path) -> Path:
    return next(p for p in path.parents if (p / "sync.yaml").is_file())


def _sibling_to(target: str) -> Callable[[Path], None]:
    def place(path: Path) -> None:
        path.write_bytes((_project_of(path).parent / OUTSIDE / path.name).read_bytes())
        (path.parent / "zz.jsx").symlink_to(target)

    return place


def _sibling_gone(path: Path) -> None:
    (path.parent / "zz.jsx").unlink(missing_ok=True)


def _scans(lint_repo: str) -> tuple[Command, ...]:
    return (
        VERIFY,
        ["audit", "--cookbook", "cookbook_snippets", "--format", "json"],
        ["lint", "--all", "--cookbook", "cookbook_snippets", "--sglang", lint_repo],
    )


def symlink_mutations(lint_repo: str) -> list[Mutation]:
    """A module, a page or a file beside them that is a symlink out of the folder a command
    scans (``lint --all``, ``audit``, ``verify --cookbook``) or writes (``generate --out`` /
    ``--pages``): every such command refuses it (exit 2), and the file outside is never
    changed (checked after every command)."""
    keep = lambda d: d  # noqa: E731
    name = Path(MODULE).name
    return [
        Mutation(
            MODULE, "a symlink out of --out and the scanned folder", keep,
            place=_link_out(name), refused=True,
            commands=(GENERATE_WRITE, GENERATE, *_scans(lint_repo)),
        ),
        Mutation(
            MODULE, "a sibling zz.jsx linking to /etc/passwd", keep,
            place=_sibling_to("/etc/passwd"), refused=True, undo=_sibling_gone,
            commands=_scans(lint_repo),
        ),
        Mutation(
            MODULE, "a sibling zz.jsx linking out of the project", keep,
            place=_sibling_to(f"../../../{OUTSIDE}/{name}"), refused=True, undo=_sibling_gone,
            commands=_scans(lint_repo),
        ),
        Mutation(
            PAGE, "a symlink out of --pages", keep, place=_link_out(Path(PAGE).name),
            refused=True, commands=(GENERATE_WRITE, GENERATE),
        ),
    ]  # fmt: skip


# The fake GitHub `audit` asks (with a token and --api-url): each answer is the file
# api/<name>.json of the project copy, so the JSON mutations of those files are GitHub answers
# of the wrong shape; every command must exit 0, 1 or 2 (an error naming the field), never 3.
API = "api/"
API_ANSWERS: dict[str, object] = {
    "pull": {
        "number": 1, "state": "closed", "merged": True, "merged_at": "2026-10-01T00:00:00Z",
        "title": "t", "body": "b", "user": {"login": "u"}, "html_url": "https://x/1",
        "head": {"ref": "h", "sha": "a" * 40, "repo": {"full_name": "o/r"}},
        "base": {"ref": "main"}, "labels": [{"name": "full-sweep"}],
        "maintainer_can_modify": False,
    },
    "artifacts": {
        "total_count": 1,
        "artifacts": [{
            "id": 7, "name": "server_logs", "expired": False, "size_in_bytes": 10,
            "archive_download_url": "https://x/zip", "expires_at": "2027-01-01T00:00:00Z",
        }],
    },
    "comments": [{
        "id": 9, "body": "/use 41000000001", "user": {"login": "maintainer"},
        "author_association": "MEMBER", "created_at": "2026-10-01T00:00:00Z",
        "updated_at": "2026-10-01T00:00:00Z", "html_url": "https://x/c/9",
    }],
    "user": {"login": "github-actions[bot]"},
}  # fmt: skip
_API_ROUTES = [
    (re.compile(r"/repos/[^/]+/[^/]+/pulls/\d+"), "pull"),
    (re.compile(r"/repos/[^/]+/[^/]+/actions/runs/\d+/artifacts"), "artifacts"),
    (re.compile(r"/repos/[^/]+/[^/]+/issues/\d+/comments"), "comments"),
    (re.compile(r"/user"), "user"),
]
_API_URL: list[str] = []  # the fake's address, once started


def _serve_api() -> str:
    """Start (once) the fake GitHub: each request answered with the project's api/ file."""
    if _API_URL:
        return _API_URL[0]
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            return

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            name = next((n for rx, n in _API_ROUTES if rx.fullmatch(path)), None)
            page = re.search(r"[?&]page=(\d+)", self.path)
            if name is None:
                status, body = 404, b'{"message": "Not Found"}'
            elif page and page.group(1) != "1":
                status, body = 200, b"[]" if name == "comments" else b'{"artifacts": []}'
            else:
                status, body = 200, (Path.cwd() / API / f"{name}.json").read_bytes()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _API_URL.append(f"http://127.0.0.1:{server.server_address[1]}")
    return _API_URL[0]


def _api_command() -> Command:
    return ["audit", "--cookbook", "cookbook_snippets", "--format", "json", "--api-url", "API"]


@contextlib.contextmanager
def _api_env(argv: Command) -> Iterator[Command]:
    """A command asking the fake GitHub: its address put in, a token and short timeouts in
    the environment while it runs."""
    if "--api-url" not in argv:
        yield argv
        return
    env = {"GITHUB_TOKEN": "ghp_" + "F" * 36, "SYNC_API_PAUSE": "0", "SYNC_API_TIMEOUT": "5"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield [_serve_api() if a == "API" else a for a in argv]
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def api_mutations(project: Path, rng: random.Random) -> list[Mutation]:
    """A sample of each answer's JSON mutations (all of them run among the content kinds)."""
    out: list[Mutation] = []
    for name in API_ANSWERS:
        rel = f"{API}{name}.json"
        muts = json_mutations(rel, (project / rel).read_bytes(), rng)
        out.extend(rng.sample(muts, min(12, len(muts))))
    return out


# ---- issue 22's kinds: files that are not regular, permissions, signals, duplicate archive
# members, YAML 1.1 keys and values, deep nesting, merge lists


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.mkdir()
    (path / "inside").write_text("x")


def _symlink_to(target: str) -> Callable[[Path], None]:
    def place(path: Path) -> None:
        path.symlink_to(target)

    return place


def _device(path: Path) -> None:
    if os.geteuid() == 0:  # /dev/null's numbers: reading it ends at once, writing it is lost
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    else:
        path.symlink_to(os.devnull)


def _unreadable(data: bytes) -> Callable[[Path], None]:
    def place(path: Path) -> None:
        path.write_bytes(data)
        path.chmod(0)

    return place


def _folder_unreadable(data: bytes) -> Callable[[Path], None]:
    def place(path: Path) -> None:
        path.write_bytes(data)
        path.parent.chmod(0)

    return place


def _folder_readable(path: Path) -> None:
    path.parent.chmod(0o755)


def fs_mutations(rel: str, data: bytes, *, folder: bool = False) -> list[Mutation]:
    """The file replaced by what is not a regular file, or made unreadable (run as root, the
    commands then run as nobody, whom the mode stops). Every command reading the file must
    refuse it. ``folder``: a run's member, whose folder is made unreadable too (refused), and
    which may be skipped instead when the report names it."""
    # as root, the mode stops only another user: the commands run as nobody then
    nobody = os.geteuid() == 0
    out = [
        Mutation(rel, "a FIFO", lambda d: d, place=_fifo, refused=True),
        Mutation(rel, "a directory", lambda d: d, place=_directory, refused=True),
        Mutation(rel, "a character device", lambda d: d, place=_device, refused=True),
        Mutation(
            rel, "a symlink to /dev/zero", lambda d: d, place=_symlink_to("/dev/zero"), refused=True
        ),
        Mutation(
            rel, "a dangling symlink", lambda d: d, place=_symlink_to("no/such/file"), refused=True
        ),
        Mutation(
            rel, "mode 000", lambda d: d, place=_unreadable(data), refused=True, as_nobody=nobody
        ),
    ]
    if folder:  # a run's member: a folder in a run is one more folder of its tree
        out = [
            m
            if m.name == "mode 000"
            else dataclasses.replace(m, refused=m.name != "a directory", or_skipped=True)
            for m in out
        ]
        out.append(
            Mutation(
                rel,
                "its folder mode 000",
                lambda d: d,
                place=_folder_unreadable(data),
                refused=True,
                as_nobody=nobody,
                undo=_folder_readable,
            )
        )
    return out


def output_mutations(rel: str) -> list[Mutation]:
    """The file a command writes (`-o`, `--out`) replaced by what is not a regular file: each
    must be refused and left as it is; a symlink to a regular file is written through."""
    out = [m for m in fs_mutations(rel, b"") if m.name != "mode 000"]
    out.append(
        Mutation(
            rel,
            "a symlink to a regular file",
            lambda d: d,
            place=_link_to_regular,
            undo=_regular_gone,
        )
    )
    return out


def _link_to_regular(path: Path) -> None:
    (path.parent / "real.out").write_text("old\n")
    path.symlink_to("real.out")


def _regular_gone(path: Path) -> None:
    (path.parent / "real.out").unlink(missing_ok=True)


_YAML_KEY = re.compile(rb"^(\s+)([A-Za-z][\w-]*):", re.M)


def yaml11_mutations(rel: str, data: bytes, rng: random.Random) -> list[Mutation]:
    """What YAML 1.1 reads otherwise than a person does: keys on/off/yes/No, octal-looking
    and unquoted ids, unquoted dates, 400-deep nesting, merge lists with a conflict."""
    out = []
    keys = list(_YAML_KEY.finditer(data))
    for word in (b"on", b"off", b"yes", b"No", b"TRUE", b"~"):
        if keys:
            m = keys[rng.randrange(len(keys))]

            def apply(d: bytes, s: int = m.start(2), e: int = m.end(2), w: bytes = word) -> bytes:
                return d[:s] + w + d[e:]

            out.append(Mutation(rel, f"key {m.group(2).decode()} := {word.decode()}", apply))
    for old, new in (
        (rb'"(\d{6,})"', rb"0\1"),  # octal-looking id
        (rb'"(\d{6,})"', rb"\1"),  # unquoted id
        (rb'"(\d{4}-\d\d-\d\d)"', rb"\1"),  # unquoted date
        (rb'"(\d{4})-\d\d-\d\d"', rb"\1-13-45"),  # no such date
        (rb": (\d+)\n", rb": 0x\1\n"),  # hex
        (rb": (\d+)\n", rb": 1_0\1\n"),  # YAML 1.1 digit separators
    ):
        if re.search(old, data):
            out.append(
                Mutation(
                    rel,
                    f"value {old.decode()} -> {new.decode()}",
                    lambda d, o=old, n=new: re.sub(o, n, d, count=1),
                )
            )
    for depth in (199, 400, 5000):
        deep = b"[" * depth + b"]" * depth
        out.append(
            Mutation(
                rel,
                f"{depth}-deep list added",
                lambda d, x=deep: _YAML_KEY.sub(lambda m: m.group(0) + b" " + x + b"\n#", d, 1),
            )
        )
    anchors = b"_fz_a: &fz_a {fz-key: 1, fz-x: [a]}\n_fz_b: &fz_b {fz-key: 2}\n"
    out.append(
        Mutation(
            rel,
            "merge list with a conflicting key added",
            lambda d: (
                anchors
                + _YAML_KEY.sub(
                    lambda m: (
                        m.group(0)
                        + b"\n"
                        + m.group(1)
                        + b"  <<: [*fz_a, *fz_b]\n"
                        + m.group(1)
                        + b"  fz-own: 3\n"
                        + m.group(1)
                        + b"  _drop:"
                    ),
                    d,
                    1,
                )
            ),
        )
    )
    return out


def _rezip(
    data: bytes, extra: Callable[[list[tuple[str, bytes]]], list[tuple[str, bytes]]]
) -> bytes:
    import warnings
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = [(i.filename, zf.read(i)) for i in zf.infolist() if not i.is_dir()]
    out = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        warnings.simplefilter("ignore")  # zipfile warns about a duplicate name
        for name, content in extra(members):
            zf.writestr(name, content)
    return out.getvalue()


def _retar(
    data: bytes, extra: Callable[[list[tuple[str, bytes]]], list[tuple[str, bytes]]]
) -> bytes:
    import tarfile

    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tf:
        members = [(m.name, tf.extractfile(m).read()) for m in tf.getmembers() if m.isreg()]
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tf:
        for name, content in extra(members):
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tf.addfile(info, io.BytesIO(content))
    return out.getvalue()


def duplicate_member_mutations(rel: str) -> list[Mutation]:
    """A sweep log twice (changed, first or last; identical), a million-member declaration."""
    repack = _rezip if rel.endswith(".zip") else _retar

    def log_of(members: list[tuple[str, bytes]]) -> tuple[str, bytes]:
        return next((n, c) for n, c in members if n.endswith(".log"))

    def changed(members, first: bool):
        name, content = log_of(members)
        other = (name, content.replace(b"3600", b"9"))
        return [other, *members] if first else [*members, other]

    out = [
        Mutation(
            rel, "a log twice, changed copy last", lambda d: repack(d, lambda m: changed(m, False))
        ),
        Mutation(
            rel, "a log twice, changed copy first", lambda d: repack(d, lambda m: changed(m, True))
        ),
        Mutation(rel, "a log twice, identical", lambda d: repack(d, lambda m: [*m, log_of(m)])),
    ]
    if rel.endswith(".zip"):
        # the end record claims 0xFFFF entries (zip64 marker without a zip64 record)
        def claim(d: bytes) -> bytes:
            at = d.rfind(b"PK\x05\x06")
            return d[: at + 8] + b"\xff\xff\xff\xff" + d[at + 12 :]

        out.append(Mutation(rel, "end record claims 65535 members", claim))
    return out


def signal_mutations() -> list[Mutation]:
    """generate writing a changed module and page, stopped by SIGTERM at several moments."""
    edit = lambda d: d.replace(b"watchdog-timeout: 3600", b"watchdog-timeout: 3601", 1)  # noqa: E731
    return [
        Mutation(SINGLE, f"SIGTERM {delay:g}s into generate", edit, sigterm_after=delay)
        for delay in (0.0, 0.05, 0.2, 0.5, 1.0, 2.0, 3.0)
    ]


# ---- issue 36's kinds: what the page's JavaScript reads differently ----------------------------


def _first(old: bytes, new: bytes) -> Callable[[bytes], bytes]:
    def apply(data: bytes) -> bytes:
        if old not in data:
            raise ValueError(f"{old!r} not in the file")
        return data.replace(old, new, 1)

    return apply


def _then(first: Callable[[bytes], bytes], second: Callable[[bytes], bytes]):
    return lambda data: second(first(data))


def _endings(ending: bytes) -> Callable[[bytes], bytes]:
    return lambda data: data.replace(b"\n", ending)


_FLAG = b'"--reasoning-parser", "auto"'
_ENV_REF = b'"envRef": 0\n'
_SECTION = b"section: Agentic Long-Context Deployment"


def _flag(value: bytes) -> Callable[[bytes], bytes]:
    """The first worker's ``--reasoning-parser`` value written as ``value`` (JSON text)."""
    return _first(_FLAG, b'"--reasoning-parser", ' + value)


def _env(literal: bytes) -> Callable[[bytes], bytes]:
    """The first worker's pooled env replaced by an env object of its own."""
    return _first(_ENV_REF, b'"env": ' + literal + b"\n")


def page_value_mutations() -> list[Mutation]:
    """A module's numbers the page writes otherwise (beyond 2**53, from 1e21, below 1e-6,
    beyond the doubles), ``__proto__`` keys (plain, twice, an object, escaped), array-index
    keys, a missing ``cmd``; lone surrogates in a module, ``sync.yaml`` and an event; CR-only
    and CRLF line endings; raw U+2028 / U+2029 inside and outside strings."""
    numbers = (b"1000000000000000000000", b"9007199254740993", b"1e400", b"-1e400",
               b"0.0000001", b"-0", b"5e-324", b"1" + b"0" * 400)  # fmt: skip
    out = [Mutation(MODULE, f"flag value := {n[:30].decode()}", _flag(n)) for n in numbers]
    envs = [
        ("__proto__ key", b'{"__proto__": "x", "A": "1"}'),
        ("__proto__ twice", b'{"__proto__": "x", "__proto__": "y"}'),
        ("__proto__ object", b'{"__proto__": {"A": "1"}}'),
        ("__proto__ null", b'{"__proto__": null}'),
        ("__proto__ escaped, twice", b'{"__proto__": 1, "\\u005f_proto__": 2}'),
        ("array-index keys", b'{"B": "1", "10": "a", "2": "b", "4294967295": "c"}'),
    ]
    out += [Mutation(MODULE, f"env := {name}", _env(env)) for name, env in envs]
    cmd = b'"cmd": "python3 -m sglang.launch_server",'
    comment = (
        b'"issue": {"number": 3859, "pull_request": {"url": "x"}}, "comment": {"id": 1, '
        b'"body": "/use 41000000001\\ud800", "user": {"login": "m\\udc00"}, '
        b'"author_association": "MEMBER"}}\n'
    )
    events = [
        b'{"action": "created", "repository": {"full_name": "SemiAnalysisAI/InferenceX"}, ',
        b'{"action": "created\\ud800", "repository": {"full_name": "SemiAnalysisAI/InferenceX"}, ',
        b'{"action": "created", "repository": {"full_name": "SemiAnalysisAI/InferenceX\\ud800"}, ',
    ]
    out += [
        Mutation(MODULE, "top-level __proto__", _first(b"= {", b'= {"__proto__": null, ')),
        Mutation(MODULE, "cmd deleted", _first(cmd, b"")),
        Mutation(MODULE, "lone surrogate in a value", _flag(b'"au\\ud800to"')),
        Mutation(MODULE, "lone surrogates, low then high", _flag(b'"\\udc00\\ud800"')),
        Mutation(MODULE, "lone surrogate in a key", _first(b'"kind"', b'"k\\udc00ind"')),
        Mutation("sync.yaml", "lone surrogate in section", _first(_SECTION, b'section: "\\ud800"')),
        Mutation(MODULE, "CR-only line endings", _endings(b"\r")),
        Mutation(MODULE, "CRLF line endings", _endings(b"\r\n")),
        Mutation("sync.yaml", "CR-only line endings", _endings(b"\r")),
    ]
    out += [
        Mutation(EVENT, f"lone surrogates in an event ({i})", lambda _d, e=event: e + comment)
        for i, event in enumerate(events)
    ]
    for char in ("\u2028", "\u2029"):
        raw, name = char.encode("utf-8"), f"raw U+{ord(char):04X}"
        in_string = _flag(b'"au' + raw + b'to"')
        out += [
            Mutation(MODULE, f"{name} in a string", in_string),
            Mutation(MODULE, f"{name} in a string, CRLF", _then(in_string, _endings(b"\r\n"))),
            Mutation(MODULE, f"{name} between tokens", _first(b'"kind":', raw + b'"kind":')),
            Mutation(MODULE, f"{name} ending a header comment", _first(b"\n", raw)),
        ]
    # named apart (`--match js:`), as no other kind's name begins so
    return [dataclasses.replace(m, name=f"js: {m.name}") for m in out]


HOSTILE_FILES = (MASTER, SINGLE, "sync.yaml", MODULE, GOLDEN)


def hostile_mutations(project: Path, rng: random.Random) -> list[Mutation]:
    out: list[Mutation] = []
    log = next(p for p in sorted((project / RUN).rglob("*.log")))
    for rel in (*HOSTILE_FILES, EVENT):
        out.extend(fs_mutations(rel, (project / rel).read_bytes()))
    out.extend(fs_mutations(log.relative_to(project).as_posix(), log.read_bytes(), folder=True))
    out.extend(output_mutations(OUTPUT))
    for rel in (MASTER, SINGLE, MULTI, "sync.yaml"):
        out.extend(yaml11_mutations(rel, (project / rel).read_bytes(), rng))
    for archive in sorted((project / ARCHIVES).iterdir()):
        out.extend(duplicate_member_mutations(archive.relative_to(project).as_posix()))
    out.extend(signal_mutations())
    out.extend(page_value_mutations())
    out.extend(symlink_mutations(str(project.parent / "sglang")))
    out.extend(api_mutations(project, rng))
    out.extend(injection_mutations(str(project.parent / "sglang")))
    out.extend(control_key_mutations())
    out.extend(event_misuse_mutations())
    out.extend(bounds_mutations(project))
    return out


# ------------------------------------------------- issue 36's kinds: git injection, raw keys

MARKER = "PWNED"
# Remotes, URLs and revisions git would read as an option or hand to a helper program.
_GIT_INJECTIONS = (
    f"--upload-pack=touch {MARKER}",
    f"-oProxyCommand=touch {MARKER}",
    f"ext::sh -c touch% {MARKER}",
    f"--template={MARKER}",
)
# What a config key or label must never carry into a log, a terminal or a commit.
_CONTROLS = ("\n::warning ::injected", "\x1b[31m", "\r", "\x00", "\x7f", "\u2028", " ", "\t")
_RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029]|^\s*::", re.M)


def injection_mutations(lint_repo: str) -> list[Mutation]:
    """Each value as every remote, clone, URL and revision a command passes to git: refused
    (exit 2) before git runs, so the marker file is never made."""
    out = []
    for value in _GIT_INJECTIONS:
        bot = ["bot", "--event", EVENT, "--event-name", "pull_request", "--models-only"]
        # a clone is a path: "ext::…" is a folder's name there, only a leading "-" is hostile
        clone = [[*bot, f"--inferencex-clone={value}"]] if value.startswith("-") else []
        commands = (
            [*bot, "--inferencex-clone", "clone.git", f"--inferencex-remote={value}"],
            *clone,
            ["bot", "--event", EVENT, "--event-name", "issue_comment", "--dry-run",
             f"--cookbook={value}"],
            ["bot", "--event", EVENT, "--event-name", "issue_comment", "--dry-run",
             "--push-repo", "a/b", f"--push-url={value}"],
            ["audit", "--inferencex", lint_repo, f"--fetch={value}"],
            ["diff", "-C", lint_repo, f"{value}:README", MODULE],
        )  # fmt: skip
        out.append(Mutation(EVENT, f"git argument {value!r}", lambda d: d, commands=commands,
                            refused=True, marker=MARKER))  # fmt: skip
    return out


def _rename(old: str, new: str) -> Callable[[bytes], bytes]:
    def apply(data: bytes) -> bytes:
        text = data.decode("utf-8")
        if old not in text:
            raise ValueError(f"{old} not in the file")
        return text.replace(old, new, 1).encode("utf-8")

    return apply


def control_key_mutations() -> list[Mutation]:
    """A config key (the master's and sync.yaml's) and a label printed beside it holding a
    control character, a line break into a workflow command, or a space: refused (exit 2),
    the character shown escaped, never written raw."""
    out = []
    for ctl in _CONTROLS:
        shown = json.dumps(ctl)
        renamed = json.dumps(DSPARK + ctl)  # a JSON string is a YAML double-quoted scalar
        prefix = json.dumps("dsv41flash" + ctl)
        for rel, old, new, what in (
            (MASTER, f"\n{DSPARK}:", f"\n{renamed}:", "master key"),
            (MASTER, "model-prefix: dsv41flash\n", f"model-prefix: {prefix}\n", "model-prefix"),
            ("sync.yaml", f"key: {DSPARK}\n", f"key: {renamed}\n", "sync.yaml key"),
        ):
            out.append(Mutation(rel, f"{what} + {shown}", _rename(old, new), refused=True,
                                echo_free=True))  # fmt: skip
    return out


# An issue_comment event of GitHub's shape, as far as the gate reads it.
_COMMENT_EVENT = {
    "action": "created",
    "repository": {"full_name": "SemiAnalysisAI/InferenceX"},
    "issue": {"number": 3859, "pull_request": {"url": "x"}},
    "comment": {"id": 1, "body": "/use 1", "author_association": "MEMBER"},
}


def _event(event: dict[str, object]) -> Callable[[bytes], bytes]:
    return lambda _data: json.dumps(event).encode("utf-8")


def event_misuse_mutations() -> list[Mutation]:
    """Issue 36.11 / 40.6: an event field of another type than GitHub's, a mistyped event
    name, no event at all: each refused (exit 2) by the gate's `--models-only`, which reads
    no token and no API, never taken as something else (exit 0)."""
    gate = ("bot", "--event", EVENT, "--models-only")
    out = []
    for name, field_, value in (
        ("issue_comment", "action", 5),
        ("issue_comment", "action", ["created"]),
        ("workflow_dispatch", "inputs", ["cookbook_pr", "1"]),
        ("workflow_dispatch", "inputs", "1"),
    ):
        event = {**_COMMENT_EVENT, field_: value}
        out.append(Mutation(EVENT, f"{name} event: {field_} := {json.dumps(value)}", _event(event),
                            commands=([*gate, "--event-name", name],), refused=True))  # fmt: skip
    good = _event(_COMMENT_EVENT)
    out.append(Mutation(EVENT, "event name mistyped", good, refused=True,
                        commands=([*gate, "--event-name", "pull_requst"],)))  # fmt: skip
    no_event = ["bot", "--models-only", "--event-name", "schedule"]
    out.append(Mutation(EVENT, "no --event", good, refused=True, commands=(no_event,)))
    return out


# ---------------------------------------- issue 36's kinds: unbounded work, values published

_ROW = "conc-list: [1, 4, 16], srt-recipe: agentic.yaml"
_ALIASES = (
    "  observability:\n    enabled: false\n    l0: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
    + "".join(f"    l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 6))
)
_UNUSED_VARIANTS = "".join(
    f"\noverride_unused_{i}:\n  benchmark:\n    env:\n      CONC: '9{i}'\n" for i in range(40)
)


def _after_line_holding(marker: str, added: str) -> Callable[[bytes], bytes]:
    def apply(data: bytes) -> bytes:
        lines = data.decode("utf-8").splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if marker in line)
        return "".join([*lines[: at + 1], added, *lines[at + 1 :]]).encode("utf-8")

    return apply


def _env_pool_grown(data: bytes) -> bytes:
    match = _JSX.match(data)
    assert match is not None
    doc = json.loads(match.group("body"))
    for env in doc["envs"]:
        env.update({f"K{k:05d}": "v" for k in range(30_000)})
    return match.group("head") + json.dumps(doc, indent=1).encode() + match.group("tail")


def bounds_mutations(project: Path) -> list[Mutation]:
    """A master row's concurrencies (0, negative, text, past the bound), a recipe's counts
    (30,000,000 workers, 0 GPUs a node), invalid golden acceptance lengths and ``--as-of``
    dates: refused (exit 2). Small inputs of large cost (nested aliases bound by 47
    variants, an Env: or Command: record over hundreds of thousands of lines, an Env: line of
    480 keys, a module whose envRefs build millions of entries): no hang, no exit 3."""
    dspark = (*_render(DSPARK), VERIFY, GENERATE)  # the DISAGG key reads no DSPARK row
    out = [
        Mutation(MASTER, f"row 0 {row}", _rename(_ROW, f"{row}, srt-recipe: agentic.yaml"),
                 commands=dspark, refused=True)
        for row in ("conc-start: 0, conc-end: 8", "conc-start: -4, conc-end: 8",
                    'conc-start: "x", conc-end: 8', "conc-start: 1, conc-end: 99999999999",
                    "conc-start: 64, conc-end: 8", f"conc-list: [{', '.join(['1'] * 65)}]",
                    "conc-list: [4, 0]")
    ]  # fmt: skip
    for old, new in (
        ("gpus_per_node: 4", "gpus_per_node: 0"),
        ("gpus_per_node: 4", "gpus_per_node: -8"),
        ("      workers: 1\n", "      workers: 30000000\n"),
        ("      gpus: 4\n", "      gpus: 1000000000000\n"),
        ("      nodes: 1\n", "      nodes: 5000\n"),
    ):
        out.append(Mutation(SINGLE, f"recipe {new.strip()}", _rename(old, new), refused=True))
    for value in ('"nan"', ".nan", ".inf", '"3.51; touch PWNED"', "0.5", "1e400"):
        out.append(Mutation(GOLDEN, f"golden AL {value}", _rename("    5: 3.51\n",
                   f"    5: {value}\n"), refused=True, marker=MARKER))  # fmt: skip
    for when in ("2026-13-45", "2026-02-30", "9999-12-31", "1969-12-31"):
        commands = tuple([*c, "--as-of", when] for c in (_render(DSPARK)[0], VERIFY, GENERATE))
        out.append(Mutation(SINGLE, f"--as-of {when}", lambda d: d, commands=commands,
                            refused=True))  # fmt: skip
    aliases = _rename("  observability:\n    enabled: false\n", _ALIASES)
    out.append(Mutation(SINGLE, "nested aliases, 47 variants",
                        lambda d: aliases(d) + _UNUSED_VARIANTS.encode()))  # fmt: skip
    log = next(p for p in sorted((project / RUN).rglob("*.log"))).relative_to(project).as_posix()
    keys = " ".join(f"ZZ{i:04d}={'v ' * 4000}" for i in range(480))
    out += [
        Mutation(log, "Env: record over 4 MiB of lines",
                 _after_line_holding("] Env: ", ("x" * 999 + "\n") * 4300), refused=True),
        Mutation(log, "Env: record over 500,000 lines",
                 _after_line_holding("] Env: ", "a b\n" * 500_000)),
        Mutation(log, "Command: quote open over 20,000 lines",
                 lambda d: re.sub(rb"(\] Command: [^\n]*)", lambda m: m.group(1) + b" '\n"
                                  + b"x' 'y\n" * 20_000 + b"'", d, count=1)),
        Mutation(log, "Env: line of 480 more keys, 3.8 MB",
                 lambda d: re.sub(rb"(\] Env: [^\n]*)", lambda m: m.group(1) + b" "
                                  + keys.encode(), d, count=1)),
        Mutation(MODULE, "env pool of 30,000 entries a use", _env_pool_grown),
    ]  # fmt: skip
    return out


def all_mutations(project: Path, seed: int) -> list[Mutation]:
    """Every mutation, per file (the run's files together) shuffled with ``seed``, interleaved
    across files."""
    groups: dict[str, list[Mutation]] = {}
    files = sorted(
        p
        for p in project.rglob("*")
        if p.is_file()
        and not p.name.endswith(".md")
        and not p.name.endswith(".mdx")
        and ".git" not in p.parts
    )
    for p in files:
        rel = p.relative_to(project).as_posix()
        rng = random.Random(f"{seed}:{rel}")
        data = p.read_bytes()
        if rel.endswith((".yaml", ".yml")):
            muts = yaml_mutations(rel, data, rng)
        elif rel.endswith((".json", ".jsx")):
            muts = json_mutations(rel, data, rng)
        elif rel.endswith((".log", ".txt")):
            muts = log_mutations(rel, data, rng)
        elif rel.startswith(ARCHIVES):
            muts = binary_mutations(rel, data, rng)
        else:
            continue
        # The run's files are one group: its seven jobs are alike.
        groups.setdefault(RUN if rel.startswith(RUN) else rel, []).extend(muts)
    per_file = []
    for name, muts in groups.items():
        random.Random(f"{seed}:{name}").shuffle(muts)
        per_file.append(muts)
    # Issue 22's kinds first (a few hundred cases cover all of them), then the rest.
    out: list[Mutation] = hostile_mutations(project, random.Random(f"{seed}:hostile"))
    for i in range(max(map(len, per_file), default=0)):
        out.extend(muts[i] for muts in per_file if i < len(muts))
    return out


# -------------------------------------------------------------------------------------- running


class Hang(BaseException):
    """A command ran past ``--timeout`` (a BaseException, so cli.main's bug handler lets it by)."""


def _on_alarm(signum, frame):
    raise Hang


_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)')


def _site(text: str) -> str:
    """The innermost frame of the last traceback in ``text``, relative to the project."""
    frames = _FRAME.findall(text)
    if not frames:
        return "<no traceback>"
    file, line, fn = frames[-1]
    with contextlib.suppress(ValueError):
        file = str(Path(file).relative_to(ROOT))
    return f"{file}:{line} in {fn}"


def _last_error(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith(" ")]
    for ln in reversed(lines):
        if not ln.startswith("error: internal error"):
            return ln[:200]
    return ""


def _late_sigterm(signum, frame):
    """A SIGTERM that arrives after its command ended: ignored (the campaign goes on)."""


def run_command(
    argv: Command, timeout: float, sigterm_after: float | None = None, as_nobody: bool = False
) -> tuple[int, str, str]:
    if as_nobody:  # the effective ids only: the real ones stay root's, to come back
        os.setegid(NOBODY)
        os.seteuid(NOBODY)
    try:
        with _api_env(argv) as argv:
            return _run_command(argv, timeout, sigterm_after)
    finally:
        if as_nobody:
            os.seteuid(0)
            os.setegid(0)


def _run_command(
    argv: Command, timeout: float, sigterm_after: float | None = None
) -> tuple[int, str, str]:
    from syncer.cli import main

    out, err = io.StringIO(), io.StringIO()
    signal.signal(signal.SIGALRM, _on_alarm)
    # cli.main installs its own SIGTERM handler and puts this one back when it returns
    previous_term = signal.signal(signal.SIGTERM, _late_sigterm)
    timer = None
    if sigterm_after is not None:
        timer = threading.Timer(sigterm_after, os.kill, (os.getpid(), signal.SIGTERM))
        timer.start()
    signal.setitimer(signal.ITIMER_REAL, timeout)
    code: int
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(argv)
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    except Hang:
        return -1, out.getvalue(), err.getvalue() + "\nHANG"
    except BaseException:  # an exception cli.main let through
        import traceback

        return -2, out.getvalue(), err.getvalue() + traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if timer is not None:
            timer.cancel()
            timer.join()
        signal.signal(signal.SIGTERM, previous_term)
    return code, out.getvalue(), err.getvalue()


def _restore(target: Path, original: bytes) -> None:
    """Whatever a mutation put at ``target`` removed, the original file back."""
    if (
        target.is_symlink()
        or target.is_file()
        or stat.S_ISFIFO(_lmode(target))
        or (target.exists() and not target.is_dir())
    ):
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)
    target.write_bytes(original)


def _take_marker(tmp: Path, name: str) -> bool:
    """Whether a command made a file ``name`` anywhere under ``tmp`` (each one removed)."""
    found = [p for p in tmp.rglob(name) if p.is_file()]
    for p in found:
        p.unlink()
    return bool(found)


def _lmode(path: Path) -> int:
    try:
        return path.lstat().st_mode
    except OSError:
        return 0


def _tree_hashes(project: Path) -> dict[str, str]:
    return {
        p.relative_to(project).as_posix(): (
            hashlib.sha256(p.read_bytes()).hexdigest()
            if p.is_file() and not p.is_symlink() and os.access(p, os.R_OK)
            else f"<{stat.filemode(p.lstat().st_mode)}>"
        )
        for p in sorted(project.rglob("*"))
        if ".git" not in p.parts and not p.is_dir()
    }


GENERATE_WRITE: Command = [a for a in GENERATE if a != "--check"] + ["--date", "2026-10-13"]


@dataclass
class Crash:
    site: str
    kind: str
    error: str
    examples: list[tuple[str, str, str]] = field(default_factory=list)  # (file, mutation, argv)


def make_project(tmp: Path) -> tuple[Path, str]:
    project = tmp / "project"
    project.mkdir()
    shutil.copy2(ROOT / "sync.yaml", project / "sync.yaml")
    shutil.copytree(ROOT / "examples", project / "examples")
    shutil.copytree(ROOT / "cookbook_snippets", project / "cookbook_snippets")
    archives = project / ARCHIVES
    archives.mkdir()
    run = project / RUN
    shutil.make_archive(str(archives / run.name), "zip", run.parent, run.name)
    shutil.make_archive(str(archives / run.name), "gztar", run.parent, run.name)
    shutil.copy2(ROOT / MODULE, tmp / "pristine.jsx")
    (project / OUTPUT).parent.mkdir()
    (project / OUTPUT).write_text("a report a command overwrites\n")
    (project / EVENT).parent.mkdir()
    (project / EVENT).write_text("{}\n")
    (project / API).mkdir()
    for name, answer in API_ANSWERS.items():
        (project / API / f"{name}.json").write_text(json.dumps(answer, indent=1) + "\n")
    outside = tmp / OUTSIDE
    outside.mkdir(exist_ok=True)
    for rel in (MODULE, PAGE):
        shutil.copy2(project / rel, outside / Path(rel).name)
    lint_repo = tmp / "sglang"
    lint_repo.mkdir()
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "f",
        "GIT_AUTHOR_EMAIL": "f@f",
        "GIT_COMMITTER_NAME": "f",
        "GIT_COMMITTER_EMAIL": "f@f",
    }
    (lint_repo / "README").write_text("empty\n")
    for args in (["init", "-q"], ["add", "README"], ["commit", "-q", "-m", "x"]):
        subprocess.run(["git", *args], cwd=lint_repo, env=env, check=True, capture_output=True)
    if os.geteuid() == 0:  # readable by the user the mode mutations run as
        for path in (tmp, *tmp.rglob("*")):
            if not path.is_symlink():
                path.chmod(0o755 if path.is_dir() else 0o644)
    return project, str(lint_repo)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench fuzz", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", type=int, default=300, help="mutations to run (0: all)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per command")
    parser.add_argument("--only", default="", help="only files whose path contains this")
    parser.add_argument("--match", default="", help="only mutations whose name contains this")
    parser.add_argument("--list", action="store_true", help="list the mutations and stop")
    parser.add_argument(
        "--traceback", action="store_true", help="print the output of every crashing command"
    )
    parser.add_argument("--show", type=int, default=2, help="examples printed per crash site")
    args = parser.parse_args(argv)

    import logging

    logging.disable(logging.WARNING)  # the recipes' warnings would flood the report
    here = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="sync-fuzz-") as tmpdir:
        Path(tmpdir).chmod(0o755)  # as root, the mode mutations run as nobody: let them in
        project, lint_repo = make_project(Path(tmpdir))
        mutations = [
            m
            for m in all_mutations(project, args.seed)
            if args.only in m.path and args.match in m.name
        ]
        total = len(mutations)
        if args.cases:
            mutations = mutations[: args.cases]
        if args.list:
            for m in mutations:
                print(f"{m.path}: {m.name}")
            return 0
        pristine = _tree_hashes(project)
        crashes: dict[str, Crash] = {}
        codes: dict[int, int] = {}
        commands = 0
        start = time.monotonic()
        os.chdir(project)
        try:
            for n, mut in enumerate(mutations, 1):
                target = project / mut.path
                original = target.read_bytes()
                try:
                    mutated = mut.apply(original)
                except Exception as exc:  # the mutation does not apply to this file
                    print(f"skip {mut.path}: {mut.name}: {exc!r}", file=sys.stderr)
                    continue
                if mut.place is not None:
                    target.unlink()
                    mut.place(target)
                else:
                    target.write_bytes(mutated)
                mutated_tree = _tree_hashes(project)
                signalled = mut.sigterm_after is not None
                cmds = list(mut.commands) or (
                    [GENERATE_WRITE] if signalled else commands_for(mut.path, lint_repo)
                )
                outside = _tree_hashes(project.parent / OUTSIDE)
                try:
                    placed = _lmode(target)
                    for cmd in cmds:
                        code, out, err = run_command(
                            cmd, args.timeout, mut.sigterm_after, mut.as_nobody
                        )
                        named_skip = mut.or_skipped and f"{Path(mut.path).name} in the run" in out
                        commands += 1
                        codes[code] = codes.get(code, 0) + 1
                        kind = {3: "exit 3", -1: "hang", -2: "uncaught"}.get(code)
                        site = _site(err) if kind else ""
                        now = _tree_hashes(project)
                        changed = [k for k, v in now.items() if mutated_tree.get(k) != v]
                        left = [k for k in now if k not in mutated_tree and k.endswith(".tmp")]
                        ran = mut.marker and _take_marker(Path(tmpdir), mut.marker)
                        if kind is None and _tree_hashes(project.parent / OUTSIDE) != outside:
                            kind, site = "wrote outside", f"{cmd[0]} {mut.name}"
                        elif kind is None and ran:
                            kind, site = "ran an injected command", f"{cmd[0]} {mut.name}"
                        elif kind is None and mut.echo_free and _RAW.search(out + err):
                            kind, site = "echoed a raw control", f"{cmd[0]} {mut.name}"
                        elif kind is None and left:
                            kind, site = "temp file left", f"{cmd[0]} left {left[0]}"
                        elif kind is None and code == 2 and changed:
                            kind, site = "wrote on error", f"{cmd[0]} wrote {changed[0]}"
                        elif kind is None and signalled and code not in (0, 143):
                            kind, site = f"exit {code} on SIGTERM", cmd[0]
                        elif kind is None and signalled and code == 143 and changed:
                            kind, site = "wrote on SIGTERM", f"{cmd[0]} wrote {changed[0]}"
                        elif kind is None and mut.refused and code != 2 and not named_skip:
                            kind, site = f"exit {code}, not refused", f"{cmd[0]} {mut.name}"
                        elif kind is None and _lmode(target) != placed:
                            kind, site = "replaced", f"{cmd[0]} replaced {mut.name}"
                        if signalled and changed:  # undo what a finished generate wrote
                            for k in changed:
                                (project / k).unlink(missing_ok=True)
                        if kind is None:
                            continue
                        crash = crashes.setdefault(
                            f"{kind} {site}", Crash(site, kind, _last_error(err))
                        )
                        crash.examples.append((mut.path, mut.name, " ".join(cmd)))
                        if args.traceback:
                            shown = "\n".join(ln[:300] for ln in err.splitlines()[-40:])
                            print(f"--- {mut.path}: {mut.name}: sync {' '.join(cmd)}\n{shown}")
                finally:
                    if mut.undo is not None:
                        mut.undo(target)
                    _restore(target, original)
                    if _tree_hashes(project) != pristine:
                        shutil.rmtree(project)
                        project, lint_repo = make_project(Path(tempfile.mkdtemp(dir=tmpdir)))
                        os.chdir(project)
                if n % 50 == 0:
                    print(
                        f"{n}/{len(mutations)} cases, {len(crashes)} crash sites, "
                        f"{time.monotonic() - start:.0f} s",
                        file=sys.stderr,
                    )
        finally:
            os.chdir(here)
        elapsed = time.monotonic() - start
    print(
        f"seed {args.seed}: {len(mutations)} of {total} mutations, {commands} commands, "
        f"{elapsed:.0f} s; exit codes: " + ", ".join(f"{k}: {v}" for k, v in sorted(codes.items()))
    )
    # The commands run in this process: its peak is the most any one of them held (issue 36:
    # no run over 1 GB).
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    print(f"peak memory of the campaign's process: {peak} MiB")
    if not crashes:
        print("no crashes")
        return 0
    print(f"{len(crashes)} crash sites:")
    for crash in sorted(crashes.values(), key=lambda c: -len(c.examples)):
        print(f"\n[{crash.kind}] {crash.site}  ({len(crash.examples)} commands)")
        if crash.error:
            print(f"    {crash.error}")
        for path, name, cmd in crash.examples[: args.show]:
            print(f"    {path}: {name}\n        sync {cmd}")
    return 1
