"""Lint a data module's commands against the SGLang version each cell pins.

For every cell: its pin (``imageCommit``, else the release tag in ``image``) is resolved in an
SGLang git checkout (``syncer.lint.source``); then every (point, router, KV tier) case is
decoded as the cookbook does and each flag of its SGLang processes is looked up in what that
version declares:

- worker blocks running ``sglang.launch_server`` / ``sglang serve`` / ``dynamo.sglang`` against
  ``server_args.py``. ``dynamo.sglang`` also takes Dynamo's own flags, which no SGLang file
  declares: those in ``DYNAMO_FLAGS`` and every ``--dyn-*`` flag (Dynamo's prefix for its own
  options) are skipped in ``dynamo.sglang`` blocks only, never in ``sglang.launch_server`` ones;
- ``sglang-router`` blocks against the router's ``RouterArgs`` at that commit.

The rule for certainty: a flag missing from a file whose declarations ``ast`` proved entirely
is **undeclared** (the command would not start); when the file also declares flags in ways the
collector could not resolve (listed in the report), a missing flag is **possibly undeclared**.
A missing flag that is the prefix of exactly one declared long option starts the command
(argparse's abbreviations, unless the file sets ``allow_abbrev=False``) but breaks as soon as a
version adds another flag with that prefix: an **abbreviation** finding, naming the full flag.
A flag declared only through one of SGLang's ``Deprecated*`` actions is **deprecated**: an
alias still accepted with a warning (its replacement named), or a retired ``DeprecatedAction``
flag, which stops the server when its action (read at the same commit) says so.
A cell whose pin does not resolve (unknown or ambiguous commit, a tag not in the checkout, no
pin at all) is an **unresolved** finding; its flags are not checked. Each finding names the
closest declared flags, since a rename is the usual cause.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass, field
from typing import Any

from syncer.cookbook.decode import Decoder, decoder_for_text, load_decoder
from syncer.lint.source import SGLangSource, SourcePin, Version, image_pin
from syncer.model import Block, Selection
from syncer.untrusted import Prose
from syncer.wording import closest

SCHEMA = 1

WORKER_COMMANDS = ("sglang.launch_server", "sglang serve", "dynamo.sglang")
ROUTER_COMMANDS = ("sglang_router.launch_router",)
DYNAMO_COMMAND = "dynamo.sglang"
# Flags `python3 -m dynamo.sglang` adds to SGLang's own (Dynamo's runtime, not SGLang's parser).
DYNAMO_FLAGS = frozenset(
    {
        "--request-plane",
        "--event-plane",
        "--endpoint",
        "--namespace",
        "--component",
        "--migration-limit",
        "--store-kv",
        "--discovery-backend",
        "--use-sglang-tokenizer",
        "--custom-jinja-template",
        "--embedding-worker",
        "--multimodal-processor",
        "--multimodal-encode-worker",
        "--multimodal-worker",
        "--multimodal-encode-prefill-worker",
        "--dump-config-to",
    }
)
DYNAMO_PREFIX = "--dyn-"

UNDECLARED = "undeclared"
POSSIBLY = "possibly-undeclared"
UNRESOLVED = "unresolved"
ABBREVIATION = "abbreviation"
DEPRECATED = "deprecated"
NEAREST = 3
# (status, nearest declared flags, note) for a flag that is a finding.
Outcome = tuple[str, list[str], str | None]


@dataclass
class Finding:
    """A flag (``flag`` set) or a cell's version (``flag`` None, status unresolved)."""

    module: str
    cell: int
    cell_id: str
    status: str
    version: str  # the pin's label: short commit or tag
    flag: str | None = None
    component: str | None = None  # "worker" or "router"
    cmds: list[str] = field(default_factory=list)  # the commands it appears in
    nearest: list[str] = field(default_factory=list)
    cases: list[Selection] = field(default_factory=list)
    reason: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "module": self.module,
            "cell": self.cell,
            "cellId": self.cell_id,
            "status": self.status,
            "version": self.version,
            "flag": self.flag,
            "component": self.component,
            "cmds": self.cmds,
            "nearest": self.nearest,
            "cases": [{"point": c.point, "router": c.router, "kv": c.kv} for c in self.cases],
            "reason": self.reason,
        }


@dataclass
class CellVersion:
    cell: int
    cell_id: str
    image: str
    pin: SourcePin
    commit: str | None
    problem: str | None


@dataclass
class ModuleLint:
    path: str
    cells: list[CellVersion]
    findings: list[Finding]
    cases: int
    notes: list[str] = field(default_factory=list)


@dataclass
class LintResult:
    """Every module linted in one run, against one SGLang checkout."""

    git_dir: str
    modules: list[ModuleLint]
    versions: dict[str, Version]  # commit -> flags, for every commit a cell resolved to

    @property
    def findings(self) -> list[Finding]:
        return [f for m in self.modules for f in m.findings]

    @property
    def exit_code(self) -> int:
        return 1 if self.findings else 0

    def counts(self) -> dict[str, int]:
        out = {UNDECLARED: 0, POSSIBLY: 0, DEPRECATED: 0, ABBREVIATION: 0, UNRESOLVED: 0}
        for f in self.findings:
            out[f.status] += 1
        return out


def component_of(block: Block) -> str | None:
    """``worker`` / ``router`` for the SGLang processes this lint checks, else None."""
    cmd = block.get("cmd") or ""
    if not isinstance(cmd, str):
        return None
    if block.get("kind") == "worker" and any(c in cmd for c in WORKER_COMMANDS):
        return "worker"
    if block.get("kind") == "sglang-router" or any(c in cmd for c in ROUTER_COMMANDS):
        return "router"
    return None


class _Checker:
    """Flag lookups of one version, memoised (a flag repeats in every case of a cell)."""

    def __init__(self, version: Version) -> None:
        self.version = version
        self._memo: dict[tuple[str, str, bool], Outcome | None] = {}
        self._sorted: dict[str, list[str]] = {}

    def check(self, component: str, flag: str, dynamo: bool) -> Outcome | None:
        key = (component, flag, dynamo)
        if key in self._memo:
            return self._memo[key]
        outcome = self._check(component, flag, dynamo)
        self._memo[key] = outcome
        return outcome

    def _check(self, component: str, flag: str, dynamo: bool) -> Outcome | None:
        if dynamo and (flag in DYNAMO_FLAGS or flag.startswith(DYNAMO_PREFIX)):
            return None
        flags = self.version.worker if component == "worker" else self.version.router
        if flags is None:
            return None
        if flag in flags.flags:
            retired = flags.deprecated.get(flag)
            if retired is None:
                return None
            return DEPRECATED, [retired.new_flag] if retired.new_flag else [], retired.describe()
        names = self._sorted.setdefault(component, sorted(flags.flags))
        if flags.abbreviations and flag.startswith("--"):
            # argparse accepts a prefix naming exactly one long option: the command starts,
            # but only as long as no later flag shares the prefix.
            at = bisect.bisect_left(names, flag)
            matches = list(itertools.takewhile(lambda n: n.startswith(flag), names[at : at + 2]))
            if len(matches) == 1:
                return ABBREVIATION, matches, f"argparse takes it as {matches[0]}"
        status = UNDECLARED if flags.complete else POSSIBLY
        return status, closest(flag, names, n=NEAREST), None


def lint_decoder(decoder: Decoder, source: SGLangSource, module: str | None = None) -> ModuleLint:
    """Lint every case of one decoded module."""
    name = module or decoder.path
    cells: list[CellVersion] = []
    findings: list[Finding] = []
    notes: list[str] = []
    checkers: dict[str, _Checker] = {}
    cases = 0
    for ci, cell in enumerate(decoder.cells):
        cell_id = str(cell.get("id", ci))
        pin = image_pin(cell.get("image"), cell.get("imageCommit"))
        commit, problem = source.resolve(pin)
        image = cell.get("image")
        cells.append(CellVersion(ci, cell_id, str(image or ""), pin, commit, problem))
        if commit is None:
            findings.append(
                Finding(name, ci, cell_id, UNRESOLVED, pin.label, reason=problem or "unresolved")
            )
            continue
        checker = checkers.get(commit)
        if checker is None:
            checker = checkers[commit] = _Checker(source.version(commit))
        if checker.version.router is None and _has_router(decoder, ci):
            notes.append(
                Prose(
                    "{cell}: router flags not checked (no sglang_router argument file at {pin})",
                    cell=cell_id,
                    pin=pin.label,
                )
            )
        by_flag: dict[tuple[str, str], Finding] = {}
        for sel in decoder.selections(ci):
            cases += 1
            for block in decoder.shown_blocks(sel):  # read only: the decoder's, not copies
                _check_block(block, sel, checker, by_flag, (name, ci, cell_id, pin.label))
        findings.extend(by_flag.values())
    return ModuleLint(name, cells, findings, cases, notes)


def _check_block(
    block: Block,
    sel: Selection,
    checker: _Checker,
    by_flag: dict[tuple[str, str], Finding],
    where: tuple[str, int, str, str],
) -> None:
    """The flags of one block checked, each finding kept once per (component, flag) with
    the commands and cases it was seen in; ``where``: (module, cell index, cell id, pin)."""
    component = component_of(block)
    if component is None:
        return
    cmd = block.get("cmd") or ""
    dynamo = DYNAMO_COMMAND in cmd
    for arg in block.get("args") or []:
        outcome = checker.check(component, arg[0], dynamo)
        if outcome is None:
            continue
        key = (component, arg[0])
        found = by_flag.get(key)
        if found is None:
            module, ci, cell_id, pin = where
            found = by_flag[key] = Finding(
                module,
                ci,
                cell_id,
                outcome[0],
                pin,
                flag=arg[0],
                component=component,
                nearest=outcome[1],
                reason=outcome[2],
            )
        if cmd not in found.cmds:
            found.cmds.append(cmd)
        if not found.cases or found.cases[-1] != sel:
            found.cases.append(sel)


def _has_router(decoder: Decoder, ci: int) -> bool:
    return any(
        component_of(b) == "router" for r in decoder.routers(ci) for b in decoder.materialise(ci, r)
    )


def lint_texts(modules: list[tuple[str, str]], source: SGLangSource) -> LintResult:
    """Lint module sources (``(path, text)`` pairs) against one checkout."""
    linted = [lint_decoder(decoder_for_text(text, path), source, path) for path, text in modules]
    return _result(source, linted)


def lint_paths(paths: list[str], source: SGLangSource) -> LintResult:
    return _result(source, [lint_decoder(load_decoder(p), source, p) for p in paths])


def _result(source: SGLangSource, linted: list[ModuleLint]) -> LintResult:
    commits = {c.commit for m in linted for c in m.cells if c.commit}
    versions = {c: source.version(c) for c in sorted(commits)}
    return LintResult(str(source.git_dir), linted, versions)
