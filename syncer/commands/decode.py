"""`sync decode MODULE`: a data module's commands exactly as the cookbook page prints them.

Default selection is the page's: first hardware, its first checkpoint, that pair's first cell,
point 0, the submitted router and the measured KV tier; the output is the "Copy all" text.
``--all --format json`` prints every (cell, point, router, tier in ``kv.available``) in the
oracle's shape plus ``status``. Start-up is part of the decode benchmark, so this path imports
nothing it does not need (no rich, PyGithub or jinja2 unless ``--all`` is printed as text).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import Any, cast

import click

from syncer import gcpause, jsonenc
from syncer.commands import options
from syncer.cookbook.case import Case
from syncer.cookbook.decode import Decoder, load_decoder
from syncer.errors import SyncError
from syncer.model import Selection
from syncer.point_options import only_one, select_points
from syncer.untrusted import hidden_characters, json_escaped, term_text
from syncer.wording import js

# What an encoded case holds when a string of it may hold a control or invisible character:
# a character outside ASCII or DEL, or an escape json writes for a C0 control (ESC is
# `\u001b`). The characters by str methods and the escapes by a pattern that starts with a
# literal, so the scan jumps from one backslash to the next: one pattern for both scanned the
# 4.9 MB of the largest module's cases at a seventh of that speed.
_CONTROL_ESCAPE = re.compile(r"\\[ubfr]")


def _maybe_hidden(text: str) -> bool:
    return not text.isascii() or "\x7f" in text or _CONTROL_ESCAPE.search(text) is not None


def _dump(value: Any, hidden: list[str] | None = None) -> str:
    """``value`` as one line of JSON, the characters a terminal acts on or hides escaped (the
    same escape as ``untrusted.json_text`` but without its token masking: the oracle-shaped
    output is data compared with the cookbook's own decoder, and masking every case's JSON
    would triple the decode benchmark's time). ``hidden`` gets the characters escaped."""
    text = jsonenc.compact(value)
    # Nearly every case is plain ASCII without escapes.
    return _escaped(text, value, hidden) if _maybe_hidden(text) else text


def _escaped(text: str, value: Any, hidden: list[str] | None) -> str:
    """``text``, the JSON of ``value``, with the characters a terminal acts on or hides
    escaped; ``hidden`` gets them."""
    if hidden is not None:
        hidden.extend(hidden_characters("\n".join(_strings(value))))
    return json_escaped(text)


class _Pieces:
    """``_dump(case.as_json(), hidden)`` of many cases, built from the JSON of their parts:
    the cases of a module show the same blocks, texts and names again and again (on the
    largest module, 2,773 blocks of which 856 distinct objects), so each is encoded, scanned
    for hidden characters and escaped once. JSON text is a concatenation of its parts' texts,
    and the escape replaces single characters inside strings, so the line is the same. The
    blocks must not change while this is used (they are known by id)."""

    def __init__(self) -> None:
        self._objects: dict[int, str] = {}  # id of a dict -> its JSON
        self._kept: list[object] = []  # those dicts, kept so that an id names one
        self._values: dict[object, str] = {}  # a string, or (type, value) -> its JSON
        # The characters escaped, of the pieces that hold any (by id / by value, as above).
        self._object_chars: dict[int, list[str]] = {}
        self._value_chars: dict[object, list[str]] = {}

    def case(self, case: Case, hidden: list[str]) -> str:
        # The case's dict and lists are new each time: composed from their items' pieces.
        # While no piece met holds a character to escape (nearly always), a known key,
        # value or list item is a lookup, done in C over a list (a call per key or item was
        # half the time of printing the cases), and only what was not met is a call. A dict
        # kept here is alive, so no other object has its id.
        values, objects = self._values, self._objects
        parts = []
        value: Any
        for key, value in case.as_json().items():
            name = values.get(key)
            if name is None or self._value_chars or self._object_chars:
                parts.append(f"{self._piece(key, hidden)}:{self._piece(value, hidden)}")
                continue
            kind = type(value)
            texts: list[str | None]
            if kind is list and value and type(value[0]) is dict:
                texts = list(map(objects.get, map(id, value)))
            elif kind is list:
                try:
                    texts = list(map(values.get, value))
                except TypeError:  # an item that is no string: met piece by piece
                    texts = [None] * len(value)
            else:
                text = values.get(value if kind is str else (kind, value))
                parts.append(f"{name}:{self._piece(value, hidden) if text is None else text}")
                continue
            if None in texts:
                texts = [
                    self._piece(item, hidden) if text is None else text
                    for text, item in zip(texts, value, strict=True)
                ]
            parts.append(f"{name}:[{','.join(cast(list[str], texts))}]")  # None replaced
        return "{" + ",".join(parts) + "}"

    def _list(self, items: list[Any], hidden: list[str]) -> str:
        # Known items by lookups in C (map), not a call per item: the blocks and texts of
        # every case are nearly all known, and a call each was most of this.
        kinds = set(map(type, items))
        try:
            if kinds == {dict}:
                text = "[" + ",".join(map(self._objects.__getitem__, map(id, items))) + "]"
                held = self._object_chars
                if held:
                    for item in items:
                        hidden.extend(held.get(id(item), ()))
                return text
            if kinds == {str}:
                text = "[" + ",".join(map(self._values.__getitem__, items)) + "]"
                held_values = self._value_chars
                if held_values:
                    for item in items:
                        hidden.extend(held_values.get(item, ()))
                return text
        except KeyError:  # an item not met before
            pass
        return "[" + ",".join([self._piece(item, hidden) for item in items]) + "]"

    def _piece(self, value: Any, hidden: list[str]) -> str:
        kind = type(value)
        if kind is list:
            return self._list(value, hidden)
        chars: list[str] | None
        if kind is dict:
            text = self._objects.get(id(value))
            if text is None:
                chars = []
                text = self._objects[id(value)] = _dump(value, chars)
                self._kept.append(value)
                if chars:
                    self._object_chars[id(value)] = chars
            chars = self._object_chars.get(id(value))
        else:
            key = value if kind is str else (kind, value)
            text = self._values.get(key)
            if text is None:
                chars = []
                text = self._values[key] = _dump(value, chars)
                if chars:
                    self._value_chars[key] = chars
            chars = self._value_chars.get(key)
        if chars:
            hidden.extend(chars)
        return text


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _warn_hidden(module: str, where: str, chars: list[str], fmt: str) -> None:
    """Say on stderr that what was printed for ``where`` shows characters as escapes: a
    module someone else wrote can hold what a terminal would obey or hide, and the text
    printed is then not the text the module holds."""
    if not chars:
        return
    shown = (
        "written as \\u escapes (the JSON values are unchanged)"
        if fmt == "json"
        else "printed as escapes, so the text is not the module's own: do not paste it as it is"
    )
    sys.stderr.write(
        term_text(
            f"warning: {module}: {where} holds control or invisible characters "
            f"({', '.join(sorted(set(chars), key=lambda e: (len(e), e)))}), {shown}"
        )
        + "\n"
    )


@click.command("decode")
@click.argument("module", type=click.Path(path_type=str))
@click.option(
    "--cell",
    "cell",
    metavar="ID|INDEX|KEY",
    help="Cell id (configKey#n), index, or config key (a config shown in one cell).",
)
@click.option(
    "--point", "point", type=int, metavar="N", help="Only the cell's point at index N (default 0)."
)
@click.option(
    "--conc",
    "conc",
    type=int,
    metavar="C",
    help="The cell's point measured at concurrency C (default: point 0, as the page).",
)
@click.option("--router", "router", metavar="R", help="sglang or dynamo (default: submitted).")
@click.option("--kv", "kv", metavar="T", help="none, hicache or mooncake (default: measured).")
@click.option("--all", "all_cases", is_flag=True, help="Every case (the selectors filter them).")
@options.format_option(
    ["text", "markdown", "json"],
    help='text: the "Copy all" text the page shows; markdown: the same as bash blocks under a '
    "heading naming each case; json: the cookbook decoder's case shape.",
)
def decode_command(
    module: str,
    cell: str | None,
    point: int | None,
    conc: int | None,
    router: str | None,
    kv: str | None,
    all_cases: bool,
    fmt: str,
) -> None:
    """Decode a cookbook AgentX data module into launch commands."""
    if point is not None and conc is not None:
        # Before the module is read: the same message as point_options.select_points, sooner.
        raise SyncError("give --point or --conc, not both")
    if all_cases:
        # The module's parsed data and every case are built and kept until they are printed.
        with gcpause.paused():
            _print_all(load_decoder(module), module, cell, point, conc, router, kv, fmt)
        return
    decoder = load_decoder(module)
    ci = decoder.cell_index(cell) if cell is not None else decoder.default_cell()
    pi = _point(decoder, ci, point, conc)
    chosen_router = router or decoder.cells[ci]["submitted"]
    tier = _tier(decoder, ci, pi, kv)
    case = decoder.case(Selection(ci, pi, chosen_router, tier))
    where = f"cell {case.cell_id}, point {pi}, router {chosen_router}, KV tier {tier or 'none'}"
    if fmt == "json":
        hidden: list[str] = []
        sys.stdout.write(_dump(case.as_json(), hidden) + "\n")
        _warn_hidden(module, where, hidden, fmt)
        return
    if fmt == "markdown":
        from syncer.templating import render

        measured = decoder.cells[ci]["points"][pi].get("concs") or []
        items = [{"case": case, "concs": measured, "text": case.copy_all}]
        sys.stdout.write(render("decode_cases.md.j2", module=module, items=items))
        _warn_hidden(module, where, hidden_characters(case.copy_all), fmt)
        return

    sys.stdout.write(term_text(case.copy_all) + "\n")
    _warn_hidden(module, where, hidden_characters(case.copy_all), fmt)
    if (cell, point, conc, router, kv) == (None, None, None, None, None):
        # Without a selector the page's default case is shown: say which one it is (stderr,
        # so the text stays the page's "Copy all" text).
        concs = ",".join(map(str, decoder.cells[ci]["points"][pi].get("concs") or []))
        sys.stderr.write(
            term_text(
                f"decoded the page's default case: cell {decoder.cells[ci].get('id')}, point "
                f"{pi} (c{concs}), router {chosen_router}, KV tier {tier or 'none'}; choose "
                "another with --cell, --point or --conc, --router, --kv (--all: every case)"
            )
            + "\n"
        )


def _point(decoder: Decoder, ci: int, point: int | None, conc: int | None) -> int:
    points = decoder.cells[ci]["points"]
    owner = f"cell {js(decoder.cells[ci].get('id'))}"

    def concs(pi: int) -> list[int]:
        return points[pi].get("concs") or []

    def elsewhere() -> str:
        # --conc alone keeps the page's default cell rather than guessing another deployment;
        # the error names the cells that do measure C so the user can pick one with --cell.
        others = [
            str(cell.get("id", i))
            for i, cell in enumerate(decoder.cells)
            if any(conc in (p.get("concs") or []) for p in cell["points"])
        ]
        return f"; measured at {conc} in: {', '.join(others)}" if others else "; no cell has it"

    # The page shows point 0 until one is chosen.
    chosen = select_points(
        range(len(points)),
        point=0 if point is None and conc is None else point,
        conc=conc,
        concs=concs,
        owner=owner,
        noun="point",
        hint=elsewhere,
        path=decoder.path,
    )
    return only_one(
        chosen,
        conc=conc,
        index=lambda pi: pi,
        describe=lambda pi: f"c{','.join(map(str, concs(pi)))}, item {points[pi].get('item')}",
        owner=owner,
        noun="point",
        path=decoder.path,
    )


def _tier(decoder: Decoder, ci: int, pi: int, kv: str | None) -> str | None:
    measured = decoder.measured_tier(ci, pi)
    if kv is None:
        return measured
    available = decoder.available_tiers(ci)
    # A module without KV tiers (the oldest format) still has the measured one, shown as none.
    if kv not in available and kv != (measured or "none"):
        reasons = (decoder.cells[ci].get("kv") or {}).get("unavailable") or {}
        why = f": {reasons[kv]}" if isinstance(reasons, dict) and kv in reasons else ""
        raise SyncError(
            f"KV tier {js(kv)} is not offered for cell {js(decoder.cells[ci].get('id'))}{why} "
            f"(available: {', '.join(available) or 'none listed'})",
            path=decoder.path,
        )
    return kv


def _print_all(
    decoder: Decoder,
    module: str,
    cell: str | None,
    point: int | None,
    conc: int | None,
    router: str | None,
    kv: str | None,
    fmt: str,
) -> None:
    only_cell = decoder.cell_index(cell) if cell is not None else None
    cases = []
    # Blocks shared with the decoder (nothing here mutates them): no copy per case, and a
    # block many cases show is one object, encoded once.
    for case in decoder.cases(fresh=False):
        if only_cell is not None and case.cell != only_cell:
            continue
        if point is not None and case.point != point:
            continue
        if conc is not None and conc not in (
            decoder.cells[case.cell]["points"][case.point].get("concs") or []
        ):
            continue
        if (router is not None and case.router != router) or (kv is not None and case.kv != kv):
            continue
        cases.append(case)
    if not cases:
        given = {"--cell": cell, "--point": point, "--conc": conc, "--router": router, "--kv": kv}
        filters = " ".join(f"{k} {v}" for k, v in given.items() if v is not None)
        raise SyncError(f"no case matches {filters}", path=decoder.path)
    hidden: dict[str, list[str]] = {}  # cell id -> the characters its cases hold
    if fmt == "json":
        if jsonenc.ORJSON is not None:  # compiled: a case is one call, no pieces needed
            # Scanning the 4.9 MB of the largest module's cases took a twentieth of the
            # decode; the 312 KB of its text tell the same when it holds no such character.
            scan = decoder.may_hide
            lines = []
            for c in cases:
                value = c.as_json()
                line = jsonenc.compact(value)
                if scan and _maybe_hidden(line):
                    line = _escaped(line, value, hidden.setdefault(c.cell_id, []))
                lines.append(line)
        else:
            pieces = _Pieces()
            lines = [pieces.case(c, hidden.setdefault(c.cell_id, [])) for c in cases]
        # Every line is made before the first is written (nothing half-printed on an error),
        # then written one by one: the stream gathers them in its buffer, where joining them
        # first copied the 4.9 MB of the largest module's cases twice more (5% of the decode).
        write = sys.stdout.write
        write(f'{{\n  "module": {_dump(module)},\n  "cases": [\n    {lines[0]}')  # never empty
        for line in lines[1:]:
            write(",\n    ")
            write(line)
        write("\n  ]\n}\n")
    else:
        from syncer.templating import render

        items = []
        for c in cases:
            text = c.copy_all
            heading = (c.cell_id, c.router, c.kv, c.status)
            hidden.setdefault(c.cell_id, []).extend(hidden_characters("\n".join((text, *heading))))
            concs = decoder.cells[c.cell]["points"][c.point].get("concs") or []
            items.append({"case": c, "concs": concs, "text": text})
        template = "decode_cases.md.j2" if fmt == "markdown" else "decode_all.txt.j2"
        sys.stdout.write(render(template, module=module, items=items))
    for cell_id, chars in hidden.items():
        _warn_hidden(module, f"cell {cell_id}", chars, fmt)
