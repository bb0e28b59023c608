"""The report of a ``Review`` (``review_report``): GitHub markdown within a size budget, its
JSON document and a coloured terminal view, shown by :mod:`syncer.reporting`.

Markdown is built from ``review.md.j2`` (summary, counts, one table per cell) and
``review_fold.md.j2`` (one ``<details>`` fold of full commands per cell). Folds are rendered on
their own so the budget can drop them one by one: past the budget the summary and tables stay,
folds go first (and the text says which), then per-cell tables from the end, and only as a last
resort is the text cut.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from syncer.reporting import Report, fitted
from syncer.review.review import CellReview, MetaChange, Review, Row
from syncer.templating import render
from syncer.untrusted import term_text
from syncer.wording import count

if TYPE_CHECKING:
    # rich is imported only when the terminal view is printed (the bot renders markdown only).
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

_NOTE_SLACK = 400  # room for the "left out" note, whose length depends on what is left out
_CUT_NOTE = "\n\n… (cut to stay within the size budget; run `sync diff` for the full diff)\n"


def _points_text(row: Row) -> str:
    return "all points" if row.all_points else "; ".join(row.where)


def _row(row: Row) -> dict[str, Any]:
    change = row.change
    return {
        "where": _points_text(row),
        "process": change.process,
        "kind": change.kind,
        "action": change.action,
        "name": change.name,
        "old": change.old,
        "new": change.new,
        "note": change.note,
    }


def _meta(meta: MetaChange) -> dict[str, Any]:
    return {
        "field": meta.field,
        "old": meta.old,
        "new": meta.new,
        "where": "all points" if meta.points is None else ", ".join(meta.points),
        "command": meta.command,
    }


def _cell_head(cell: CellReview) -> dict[str, Any]:
    ref = cell.cell
    return {
        "id": ref.id,
        "old_id": None if cell.old is None else cell.old.id,
        "moved": cell.moved,
        "hw": ref.hw,
        "label": ref.label,
        "points": ", ".join(p.name for p in ref.points),
    }


def _cell_context(cell: CellReview) -> dict[str, Any]:
    return {
        **_cell_head(cell),
        "state": cell.state,
        "meta": [_meta(m) for m in cell.meta],
        "points_added": cell.points_added,
        "points_removed": cell.points_removed,
        "points_regrouped": cell.points_regrouped,
        "routers_added": cell.routers_added,
        "routers_removed": cell.routers_removed,
        "tiers_added": cell.tiers_added,
        "tiers_removed": cell.tiers_removed,
        "structural": cell.structural,
        "measured": [_row(r) for r in cell.measured],
        "derived": [_row(r) for r in cell.derived],
        "measured_where": cell.measured_where,
        "table": True,
    }


def _fold(cell: CellReview, old_label: str, new_label: str) -> str | None:
    """Changed measured selections as whole-text diffs, then new points' (or a new cell's)
    full commands."""
    sections = [{"where": ", ".join(d.where), "body": d.diff, "lang": "diff"} for d in cell.diffs]
    sections += [{"where": ", ".join(t.where), "body": t.text, "lang": "bash"} for t in cell.texts]
    if not sections:
        return None
    if cell.old is None:
        title = "commands"
    elif cell.texts and not cell.diffs:
        title = "commands of new points"
    elif cell.texts:
        title = "changed measured commands and new points"
    else:
        title = "changed measured commands"
    fold = render(
        "review_fold.md.j2",
        cell=_cell_head(cell),
        title=title,
        sections=sections,
        old_label=old_label,
        new_label=new_label,
    )
    return fold.rstrip("\n")


def _context(review: Review) -> dict[str, Any]:
    changed = [c for c in review.cells if c.state == "changed"]
    added = review.by_state("added")
    folds: list[tuple[str, str]] = []
    cells: list[dict[str, Any]] = []
    for cell in changed + added:
        fold = _fold(cell, review.old_label, review.new_label)
        if fold is not None:
            folds.append((cell.cell.id, fold))
    for cell in changed:
        cells.append(_cell_context(cell))
    counts = review.counts()
    return {
        "old_label": review.old_label,
        "new_label": review.new_label,
        "has_changes": review.has_changes,
        "counts": counts,
        "count_rows": _count_rows(counts),
        "module": [_meta(m) for m in review.module],
        "hardware_added": review.hardware_added,
        "hardware_removed": review.hardware_removed,
        "checkpoints_added": review.checkpoints_added,
        "checkpoints_removed": review.checkpoints_removed,
        "added": [{**_cell_head(c), "status": c.status} for c in added],
        "removed": [{**_cell_head(c), "status": c.status} for c in review.by_state("removed")],
        "metadata": [
            {**_cell_head(c), "meta": [_meta(m) for m in c.meta]}
            for c in review.by_state("metadata")
        ],
        "cells": cells,
        "folds": folds,
    }


_KIND_LABELS = (
    ("flag", "flags"),
    ("env", "env"),
    ("cmd", "command prefixes"),
    ("block", "processes"),
    ("field", "placement"),
    ("order", "launch order"),
    ("file", "config files"),
)


def _count_rows(counts: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """The counts table: structure first, then changes by kind (measured, then derived only)."""
    rows: list[tuple[str, str, str, str]] = []

    def put(label: str, tally: dict[str, int], always: bool = False, changed: bool = True) -> None:
        if always or any(tally.values()):
            rows.append(
                (
                    label,
                    str(tally.get("added", 0)),
                    str(tally.get("removed", 0)),
                    str(tally.get("changed", 0)) if changed else "",
                )
            )

    put("hardware", counts["hardware"], changed=False)
    put("checkpoints", counts["checkpoints"], changed=False)
    cells = counts["cells"]
    put("cells", {k: cells[k] for k in ("added", "removed", "changed")}, always=True)
    put("points", counts["points"], changed=False)
    put("routers", counts["routers"], changed=False)
    put("KV tiers", counts["tiers"], changed=False)
    for kind, label in _KIND_LABELS:
        put(f"{label} (measured)", counts["measured"][kind], always=kind in ("flag", "env"))
    for kind, label in _KIND_LABELS:
        put(f"{label} (derived only)", counts["derivedOnly"][kind])
    return rows


def _render(ctx: dict[str, Any], included: set[int], budget: int | None, tables: int = -1) -> str:
    """The review with the folds ``included`` and the change tables of the first ``tables``
    cells (all of them when negative)."""
    folds = ctx["folds"]
    left_out = [cell_id for i, (cell_id, _) in enumerate(folds) if i not in included]
    by_cell: dict[str, list[str]] = {}
    for i, (cell_id, fold) in enumerate(folds):
        if i in included:
            by_cell.setdefault(cell_id, []).append(fold)
    cells = ctx["cells"]
    if 0 <= tables < len(cells):
        cells = cells[:tables] + [{**c, "table": False} for c in cells[tables:]]
    tables_left_out = [c["id"] for c in cells if not c["table"]]
    return render(
        "review.md.j2",
        **{**ctx, "cells": cells},
        folds_by_cell=by_cell,
        folds_left_out=left_out,
        tables_left_out=tables_left_out,
        budget=budget,
    )


def _renderings(ctx: dict[str, Any], budget: int) -> Iterator[str]:
    """The review from everything to the summary alone, in the order parts are dropped."""
    folds = ctx["folds"]
    yield _render(ctx, set(range(len(folds))), budget)
    # 1. Folded commands go first: the ones that fit by their size are kept, in document
    # order, then dropped from the last while the whole is still over.
    base = len(_render(ctx, set(), budget)) + _NOTE_SLACK
    included: list[int] = []
    total = base
    for i, (_, fold) in enumerate(folds):
        if total + len(fold) + 2 <= budget:
            included.append(i)
            total += len(fold) + 2
    while True:
        yield _render(ctx, set(included), budget)
        if not included:
            break
        included.pop()
    # 2. Then per-cell tables, from the last cell up; every cell keeps its heading line.
    for tables in reversed(range(len(ctx["cells"]))):
        yield _render(ctx, set(), budget, tables)


def _renderings_of(ctx: dict[str, Any]) -> Callable[[int | None], Iterator[str]]:
    def renderings(budget: int | None) -> Iterator[str]:
        if budget is None:
            return iter([_render(ctx, set(range(len(ctx["folds"]))), budget)])
        return _renderings(ctx, budget)

    return renderings


def review_report(review: Review) -> Report:
    """The report of ``review``: its markdown has no size limit unless a budget is given;
    within one, the parts go in the order of ``_renderings``, and the summary alone over the
    budget is cut, saying so."""
    return Report(
        exit_code=review.exit_code,
        document=review.json,
        renderings=_renderings_of(_context(review)),
        terminal=lambda console: render_terminal(review, console),
        cut_note=_CUT_NOTE,
        default_budget=None,
        json_indent=1,
    )


def review_markdown(review: Review) -> Callable[[int | None], str]:
    """``review_report(review).markdown``, holding only what the markdown is rendered from
    (the changed cells' rows and folds, the counts), not the review and the cells it matched:
    for a caller keeping many until it knows their budgets (the audit's report)."""
    renderings = _renderings_of(_context(review))
    return lambda budget: fitted(renderings, budget or None, _CUT_NOTE)


# ---- terminal ------------------------------------------------------------------------------

_ACTION_STYLE = {"added": "green", "removed": "red", "changed": "yellow"}


def _t(value: object, style: str = "") -> Text:
    """Untrusted value as terminal text: no escapes, and never parsed as rich markup."""
    from rich.text import Text

    if value is None:
        return Text("—", style="dim")
    return Text(term_text(value, limit=300), style=style)


def _value(value: str | None) -> Text:
    from rich.text import Text

    return Text("(bare flag)", style="italic") if value == "" else _t(value)


def _rows_table(title: str, rows: list[Row], with_where: bool = True) -> Table:
    from rich.table import Table

    table = Table(title=title, title_justify="left", show_lines=False)
    if with_where:
        table.add_column("where", overflow="fold")
    for name in ("process", "setting", "before", "after"):
        table.add_column(name, overflow="fold")
    for row in rows:
        style = _ACTION_STYLE[row.change.action]
        name = row.change.name + (" (page note)" if row.change.note else "")
        cells = [
            _t(row.change.process),
            _t(name, style),
            _value(row.change.old),
            _value(row.change.new),
        ]
        if with_where:
            cells.insert(0, _t(_points_text(row)))
        table.add_row(*cells)
    return table


def _diff_text(diff: str) -> Text:
    from rich.text import Text

    out = Text()
    for line in diff.splitlines():
        style = ""
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        out.append(term_text(line) + "\n", style=style)
    return out


def render_terminal(review: Review, console: Console) -> None:
    from rich.text import Text

    _terminal_counts(review, console)
    for meta in review.module:
        console.print(
            Text.assemble(
                _t(meta.field, "bold"), ": ", _t(meta.old, "red"), " → ", _t(meta.new, "green")
            )
        )
    for state, style in (("added", "green"), ("removed", "red")):
        for cell in review.by_state(state):
            ref = cell.cell
            console.print(
                Text.assemble(
                    (f"cell {state}: ", style),
                    _t(ref.id, "bold"),
                    " ",
                    _t(f"{ref.hw} · {ref.label} · {', '.join(p.name for p in ref.points)}"),
                )
            )
    for cell in review.cells:
        if cell.state in ("changed", "metadata"):
            _terminal_cell(cell, console)


def _terminal_counts(review: Review, console: Console) -> None:
    """The heading, the one-line verdict and the table of counts."""
    from rich.table import Table
    from rich.text import Text

    counts = review.counts()
    cells = counts["cells"]
    console.print(
        Text.assemble(("Reviewer diff ", "bold"), _t(review.old_label), " → ", _t(review.new_label))
    )
    if review.has_changes:
        console.print(
            Text(
                f"Commands changed: {cells['changed']} of {count(cells['matched'], 'cell')} "
                f"in both, {cells['added']} added, {cells['removed']} removed; "
                f"{count(counts['measuredRows'], 'measured change')}, "
                f"{counts['derivedOnlyRows']} only in derived selections",
                style="bold yellow",
            )
        )
    else:
        console.print(Text("No command changes", style="bold green"))
    summary = Table(title="counts", title_justify="left")
    for name in ("", "added", "removed", "changed"):
        summary.add_column(name, justify="right" if name else "left")
    for key in ("hardware", "checkpoints", "points", "routers", "tiers"):
        summary.add_row(key, str(counts[key]["added"]), str(counts[key]["removed"]), "")
    summary.add_row("cells", str(cells["added"]), str(cells["removed"]), str(cells["changed"]))
    for scope, label in (("measured", "measured"), ("derivedOnly", "derived only")):
        for kind, kind_label in _KIND_LABELS:
            tally = counts[scope][kind]
            if any(tally.values()):
                summary.add_row(
                    f"{kind_label} ({label})",
                    str(tally["added"]),
                    str(tally["removed"]),
                    str(tally["changed"]),
                )
    console.print(summary)


def _terminal_cell(cell: CellReview, console: Console) -> None:
    """A changed cell: its heading, metadata, what it gained or lost, its change tables
    and the diffs of its measured commands."""
    from rich.table import Table
    from rich.text import Text

    ref = cell.cell
    # A rule's title is cut to one line; the heading is printed whole below it.
    console.rule(style="dim")
    console.print(Text.assemble(_t(ref.hw), " · ", _t(ref.label), " · ", _t(ref.id), style="bold"))
    if cell.moved and cell.old is not None:
        console.print(Text.assemble("renumbered from ", _t(cell.old.id)))
    if cell.meta:
        meta_table = Table(title="cell", title_justify="left")
        for name in ("field", "before", "after", "where"):
            meta_table.add_column(name, overflow="fold")
        for meta in cell.meta:
            meta_table.add_row(
                _t(meta.field),
                _t(meta.old, "red"),
                _t(meta.new, "green"),
                _t("all points" if meta.points is None else ", ".join(meta.points)),
            )
        console.print(meta_table)
    for label, items in (
        ("points added", cell.points_added),
        ("points removed", cell.points_removed),
        ("routers added", cell.routers_added),
        ("routers removed", cell.routers_removed),
        ("KV tiers added", cell.tiers_added),
        ("KV tiers removed", cell.tiers_removed),
    ):
        if items:
            console.print(Text.assemble(f"{label}: ", _t(", ".join(items))))
    if cell.measured:
        console.print(_rows_table(f"measured ({cell.measured_where})", cell.measured))
    if cell.derived:
        console.print(_rows_table("only in derived selections", cell.derived))
    for diff in cell.diffs:
        console.print(Text.assemble(("commands: ", "bold"), _t(", ".join(diff.where))))
        console.print(_diff_text(diff.diff))
