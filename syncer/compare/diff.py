"""Normalised structural comparison of two lists of blocks.

Every key of every block is classified: ``match``, ``differs``, ``only-<side>`` (``only-cookbook``,
``only-recipe``, ``only-log``), ``excluded`` (an InferenceX-only setting: the policy entry's name
and reason are carried along, never a second list), ``not-logged`` (srt-slurm never logs it,
e.g. a router's environment) or ``ambiguous`` (a logged ``Env:`` line that splits two ways).

Normalisation: ``--a=b`` equals ``--a b``; SGLang flag aliases (``--tp-size`` and
``--tensor-parallel-size``, ...) and ``_``/``-`` spellings are one flag; a flag given several
times is a list of its distinct values; JSON-valued flags (and Python ``repr`` mappings, which
srt-slurm logs for mapping args) compare as data, with ``deepdiff`` naming the nested change;
numbers compare by value (``0.80`` = ``0.8``); env is a map. With ``placement=True`` (raw recipe
vs raw log) cluster addresses and ``$PLACEHOLDERS`` compare equal.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from syncer.compare.verdicts import FAILING, Verdict
from syncer.cookbook.jsvalues import js_string
from syncer.flags import canonical_flag
from syncer.model import Block

STRUCTURE_FIELDS = ("workers", "nodes_per_worker", "count", "count_nodes", "gpu_pinning", "ports")
# Kinds whose processes srt-slurm starts without logging a command line (1.x and the first
# 2.x versions; the 2.x services layer logs etcd, NATS and Mooncake as `Starting service`).
UNLOGGED_KINDS = ("etcd", "nats", "nginx", "mooncake-master", "mooncake-store")

_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_IPV4 = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b")
_PLACEHOLDER = re.compile(r"\$\{?[A-Z][A-Z0-9_]*\}?")
_PYTHON = re.compile(r"^python\d*(?:\.\d+)? ")


@dataclass(frozen=True)
class ExclusionRef:
    name: str
    reason: str


# (block kind, "flag" | "env", name[, value]) -> the policy entry that excludes it, or None.
# The value matters for entries that cover only some values (a chat template inside the
# InferenceX workspace, not any chat template).
ExclusionLookup = Callable[..., ExclusionRef | None]


@dataclass
class Entry:
    block: str
    field: str  # cmd | flag | env | structure | block | wrapper | process
    key: str
    status: Verdict
    left: str | None = None
    right: str | None = None
    exclusion: ExclusionRef | None = None
    note: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "block": self.block,
            "field": self.field,
            "key": self.key,
            "status": self.status,
            "left": self.left,
            "right": self.right,
        }
        if self.exclusion:
            out["exclusion"] = {"name": self.exclusion.name, "reason": self.exclusion.reason}
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class Comparison:
    left: str
    right: str
    router: str | None = None
    entries: list[Entry] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for e in self.entries:
            out[e.status] = out.get(e.status, 0) + 1
        return out

    @property
    def agrees(self) -> bool:
        return not any(e.status in FAILING for e in self.entries)

    @property
    def problems(self) -> list[Entry]:
        return [e for e in self.entries if e.status in FAILING]

    def as_json(self) -> dict[str, Any]:
        return {
            "left": self.left,
            "right": self.right,
            "router": self.router,
            "agrees": self.agrees,
            "counts": self.counts(),
            "entries": [e.as_json() for e in self.entries],
        }


def block_label(block: Block) -> str:
    kind = block.get("kind", "?")
    return f"{block['role']} {kind}" if kind == "worker" and block.get("role") else str(kind)


def _parse_structured(value: str) -> Any:
    text = value.strip()
    if not text or text[0] not in "{[":
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        # srt-slurm logs mapping args as Python repr; literal_eval evaluates literals only.
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


# A rendered value that is one cluster token as a whole (``$IB_DEVICES``, ``<node>``): the
# cluster fills it in per run, so in a placement comparison it stands for any logged value.
_ANY = ("any",)
_WHOLE_TOKEN = re.compile(r"\$\{?[A-Z][A-Z0-9_]*\}?|<[a-z][a-z-]*>")


def _norm_value(value: str, placement: bool) -> Any:
    if placement and _WHOLE_TOKEN.fullmatch(value):
        return _ANY
    data = _parse_structured(value)
    if data is not None:
        try:
            return ("data", json.dumps(data, sort_keys=True))
        except (RecursionError, TypeError):
            pass  # nested too deeply (or a repr of a set) to compare as data: compare as text
    if _NUMBER.match(value):
        try:
            return ("num", float(value))
        except ValueError:
            pass
    if placement:
        value = _PLACEHOLDER.sub("<addr>", _IPV4.sub("<addr>", value))
    return ("str", value)


def _args_map(args: list[list[str]]) -> dict[str, tuple[str, list[list[str]]]]:
    """canonical flag -> (spelling seen first, distinct value lists in order)."""
    out: dict[str, tuple[str, list[list[str]]]] = {}
    for arg in args or []:
        if arg and arg[0].startswith("--") and "=" in arg[0]:
            flag, _, first = arg[0].partition("=")
            arg = [flag, first, *arg[1:]]
        canon = canonical_flag(arg[0])
        values = out.setdefault(canon, (arg[0], []))[1]
        if list(arg[1:]) not in values:
            values.append(list(arg[1:]))
    return out


def _show_values(values: list[list[str]] | None) -> str | None:
    if values is None:
        return None
    return " | ".join(" ".join(v) if v else "(bare flag)" for v in values)


def _detail(a: str, b: str) -> str | None:
    da, db = _parse_structured(a), _parse_structured(b)
    if da is None or db is None:
        return None
    from deepdiff import DeepDiff  # only for a differing structured value; costly to import

    try:
        text = DeepDiff(da, db, verbose_level=2).pretty()
    except RecursionError:
        return None  # nested too deeply to name the change; the values are still shown
    return "; ".join(line.strip() for line in text.splitlines() if line.strip()) or None


def _cmd(cmd: Any) -> str | None:
    if cmd is None:
        return None
    return _PYTHON.sub("python3 ", str(cmd).strip())


class _Comparer:
    def __init__(
        self,
        left: str,
        right: str,
        exclusion: ExclusionLookup | None,
        placement: bool,
    ) -> None:
        self.left, self.right = left, right
        self.exclusion = exclusion
        self.placement = placement

    def lookup(
        self, kind: str, fld: str, name: str, alt: str | None = None, value: str | None = None
    ) -> ExclusionRef | None:
        if self.exclusion is None:
            return None
        extra = () if value is None else (value,)
        found = self.exclusion(kind, fld, name, *extra)
        if found is None and alt and alt != name:
            found = self.exclusion(kind, fld, alt, *extra)
        return found

    def pair(self, a: Block, b: Block, out: list[Entry]) -> None:
        label = block_label(a)
        kind = str(a.get("kind"))
        unlogged = set(b.get("unlogged") or []) | set(a.get("unlogged") or [])
        # Who launched the logged side: srt-slurm, or a benchmark script (script-era runs).
        logger = str(b.get("logged_by") or a.get("logged_by") or "srt-slurm")
        if "cmd" in unlogged:
            out.append(
                Entry(
                    label,
                    "cmd",
                    "command",
                    Verdict.NOT_LOGGED,
                    _cmd(a.get("cmd")),
                    None,
                    note=f"{logger} does not log this process's command line or flags: "
                    "cannot verify",
                )
            )
        else:
            ca, cb = _cmd(a.get("cmd")), _cmd(b.get("cmd"))
            out.append(
                Entry(
                    label, "cmd", "command", Verdict.MATCH if ca == cb else Verdict.DIFFERS, ca, cb
                )
            )
        self.structure(label, a, b, out)
        self.wrapper(label, a, b, out)
        if "args" not in unlogged:
            self.flags(label, kind, a.get("args") or [], b.get("args") or [], out)
        if "env" in unlogged:
            if a.get("env") or b.get("env"):
                out.append(
                    Entry(
                        label,
                        "env",
                        "(environment)",
                        Verdict.NOT_LOGGED,
                        _j(a.get("env")) if "env" not in (a.get("unlogged") or []) else None,
                        None,
                        note=f"{logger} does not log this process's environment: cannot verify",
                    )
                )
        else:
            logged = b.get("logged_env") or a.get("logged_env")
            self.env(label, kind, a.get("env") or {}, b.get("env") or {}, out, logged, logger)

    def structure(self, label: str, a: Block, b: Block, out: list[Entry]) -> None:
        """The placement fields both sides state (with ``placement``, only the counts)."""
        fields = (
            STRUCTURE_FIELDS if not self.placement else ("workers", "nodes_per_worker", "count")
        )
        for name in fields:
            if name in a or name in b:
                va, vb = a.get(name), b.get(name)
                if (va is None or vb is None) and self.placement:
                    continue  # one side does not state it (e.g. the log's count of routers)
                status = Verdict.MATCH if va == vb else Verdict.DIFFERS
                out.append(Entry(label, "structure", name, status, _j(va), _j(vb)))

    def wrapper(self, label: str, a: Block, b: Block, out: list[Entry]) -> None:
        """The command prefix (``wrapper``) when either side has one."""
        wa, wb = a.get("wrapper") or [], b.get("wrapper") or []
        if not (wa or wb):
            return
        status = (
            Verdict.MATCH
            if wa == wb
            else (
                Verdict.only_in(self.left)
                if not wb
                else Verdict.only_in(self.right)
                if not wa
                else Verdict.DIFFERS
            )
        )
        out.append(
            Entry(
                label,
                "wrapper",
                "command prefix",
                status,
                " ".join(wa) or None,
                " ".join(wb) or None,
            )
        )

    def flags(
        self, label: str, kind: str, a: list[list[str]], b: list[list[str]], out: list[Entry]
    ) -> None:
        ma, mb = _args_map(a), _args_map(b)
        for canon in sorted(set(ma) | set(mb)):
            sa = ma.get(canon)
            sb = mb.get(canon)
            # canon is a key of ma or mb: one of the two is there
            spelling = next(s for s in (sa, sb) if s)[0]
            va = sa[1] if sa else None
            vb = sb[1] if sb else None
            shown_a, shown_b = _show_values(va), _show_values(vb)
            first = next((v[0] for v in (va or vb or []) if v), None)
            excl = self.lookup(kind, "flag", canon, spelling, first)
            if excl is not None:
                agree = va is not None and vb is not None and self._same(va, vb)
                note = "values agree" if agree else None
                out.append(
                    Entry(label, "flag", canon, Verdict.EXCLUDED, shown_a, shown_b, excl, note)
                )
                continue
            if va is None:
                out.append(Entry(label, "flag", canon, Verdict.only_in(self.right), None, shown_b))
            elif vb is None:
                out.append(Entry(label, "flag", canon, Verdict.only_in(self.left), shown_a, None))
            elif self._same(va, vb):
                note = None
                if sa and sb and sa[0] != sb[0]:
                    note = f"spelled {sa[0]} / {sb[0]}"
                out.append(Entry(label, "flag", canon, Verdict.MATCH, shown_a, shown_b, note=note))
            else:
                note = None
                if len(va) == 1 and len(vb) == 1 and len(va[0]) == 1 and len(vb[0]) == 1:
                    note = _detail(va[0][0], vb[0][0])
                out.append(
                    Entry(label, "flag", canon, Verdict.DIFFERS, shown_a, shown_b, note=note)
                )

    def _same(self, va: list[list[str]], vb: list[list[str]]) -> bool:
        if va == vb:  # most values: the same text normalises the same (no NaN spelling does)
            return True

        def norm(vals: list[list[str]]) -> list[list[Any]]:
            return [[_norm_value(v, self.placement) for v in vs] for vs in vals]

        na, nb = norm(va), norm(vb)
        if not self.placement:
            return na == nb
        return len(na) == len(nb) and all(
            len(x) == len(y) and all(a == b or _ANY in (a, b) for a, b in zip(x, y, strict=True))
            for x, y in zip(na, nb, strict=True)
        )

    def env(
        self,
        label: str,
        kind: str,
        a: dict[str, str],
        b: dict[str, str],
        out: list[Entry],
        logged: str | None = None,
        logger: str = "srt-slurm",
    ) -> None:
        """``logged``: the env-name pattern the logged side shows (a script logs only
        ``SGLANG_*``); a key outside it is not-logged, whatever the other side holds."""
        for key in sorted(set(a) | set(b)):
            va, vb = a.get(key), b.get(key)
            excl = self.lookup(kind, "env", key, value=va if va is not None else vb)
            if excl is not None:
                note = "values agree" if va is not None and va == vb else None
                out.append(Entry(label, "env", key, Verdict.EXCLUDED, va, vb, excl, note))
            elif logged is not None and not fnmatch.fnmatchcase(key, logged):
                note = f"{logger} logs only {logged} env: cannot verify"
                out.append(Entry(label, "env", key, Verdict.NOT_LOGGED, va, vb, note=note))
            elif va is None:
                out.append(Entry(label, "env", key, Verdict.only_in(self.right), None, vb))
            elif vb is None:
                out.append(Entry(label, "env", key, Verdict.only_in(self.left), va, None))
            elif self._same([[va]], [[vb]]):
                out.append(Entry(label, "env", key, Verdict.MATCH, va, vb))
            else:
                out.append(Entry(label, "env", key, Verdict.DIFFERS, va, vb, note=_detail(va, vb)))


def _j(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def _as_shown(block: Block) -> Block:
    """``block`` with its flag values and env values as the page shows them (JavaScript's
    ``String(value)``): a module may hold a number, a boolean or null where the format has a
    string, and the page prints it; the comparison is of that text."""
    args, env = block.get("args"), block.get("env")
    if all(type(v) is str for a in args or [] for v in a) and all(
        type(v) is str for v in (env or {}).values()
    ):
        return block
    shown = block.copy()
    if args:
        shown["args"] = [[js_string(v) for v in a] for a in args]
    if env:
        shown["env"] = {k: js_string(v) for k, v in env.items()}
    return shown


def block_key(block: Block) -> tuple[str, str]:
    """``(kind, role)``: how the processes of two block lists pair up."""
    return (str(block.get("kind")), str(block.get("role") or ""))


def compare_blocks(
    left_blocks: list[Block],
    right_blocks: list[Block],
    *,
    left: str,
    right: str,
    router: str | None = None,
    exclusion: ExclusionLookup | None = None,
    placement: bool = False,
    right_logged: bool = False,
    unlogged_kinds: tuple[str, ...] = UNLOGGED_KINDS,
) -> Comparison:
    """Compare two block lists key by key. Blocks pair by (kind, role), in order.

    ``right_logged=True`` says the right side is a sweep log, so kinds srt-slurm does not log
    (``unlogged_kinds``: etcd, NATS, nginx, Mooncake before the 2.x services layer) are
    ``not-logged`` rather than missing.
    """
    comp = Comparison(left, right, router)
    comparer = _Comparer(left, right, exclusion, placement)
    left_blocks = [_as_shown(b) for b in left_blocks]
    remaining = [_as_shown(b) for b in right_blocks]
    for a in left_blocks:
        match = next((b for b in remaining if block_key(b) == block_key(a)), None)
        if match is None:
            label = block_label(a)
            if right_logged and a.get("kind") in unlogged_kinds:
                comp.entries.append(
                    Entry(
                        label,
                        "block",
                        "process",
                        Verdict.NOT_LOGGED,
                        _cmd(a.get("cmd")),
                        None,
                        note="srt-slurm starts this service without logging its command",
                    )
                )
            else:
                comp.entries.append(
                    Entry(
                        label, "block", "process", Verdict.only_in(left), _cmd(a.get("cmd")), None
                    )
                )
            continue
        remaining.remove(match)
        comparer.pair(a, match, comp.entries)
    for b in remaining:
        comp.entries.append(
            Entry(
                block_label(b), "block", "process", Verdict.only_in(right), None, _cmd(b.get("cmd"))
            )
        )
    return comp
