"""The words of the bot's cookbook PR: its title, its commit message and its body (the reviewer
diff, the provenance of every deployment, the InferenceX-only settings excluded, the lint).

All of it comes from templates (``cookbook_pr_title.txt.j2``, ``cookbook_commit.txt.j2``,
``pr_body.md.j2``); the body is fitted to GitHub's limit by ``bodies.fit_body``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

from syncer import links
from syncer.cookbook.jsmodule import parse_module
from syncer.errors import SyncError
from syncer.inferencex.policy import load_policy
from syncer.inferencex.policy_rules import Exclusion
from syncer.inferencex.render import RenderedConfig
from syncer.publish import status as st
from syncer.publish.bodies import fit_body
from syncer.review.report import review_report
from syncer.review.review import review_texts
from syncer.syncconfig import ModelSpec, Pin
from syncer.templating import render

# A config's render by key (the event's one render of it); raises SyncError when it does not
# render.
Renders = Callable[[str], RenderedConfig]
# A config's render in this event, None when the event left it unrendered (cells as published).
RenderedNow = Callable[[str], RenderedConfig | None]


class ProvenanceRow(TypedDict):
    """One deployment of one config in the PR body's provenance table."""

    key: str
    label: str
    concs: str
    pr: str | None
    pr_url: str | None
    sha: str
    run: str | None
    run_url: str | None
    comment: str | None
    comment_url: str | None
    status: str


def title(model: ModelSpec) -> str:
    return render("cookbook_pr_title.txt.j2", model=model.model).rstrip("\n")


def commit_message(model: ModelSpec, pins: dict[str, Pin], inferencex_repo: str) -> str:
    return render(
        "cookbook_commit.txt.j2",
        title=title(model),
        inferencex_repo=inferencex_repo,
        pins=sorted(pins.items()),
    )


def pr_body(
    model: ModelSpec,
    pins: dict[str, Pin],
    *,
    files: dict[str, str],
    module_path: str,
    old: str | None,
    notes: list[str],
    lint: str | None,
    renders: Renders,
    rendered_now: RenderedNow,
    inferencex_repo: str,
    body_limit: int,
    say: Callable[[str], None],
    kept: Sequence[str] = (),
) -> str:
    """The PR body of ``model``'s module ``files[module_path]`` against the default branch's
    ``old``; ``pins`` holds every config of ``model``, ``kept`` the published cells the notes
    name as kept (recorded in the body's state). The provenance table renders no config for
    its own sake (``rendered_now``); the exclusions read the renders of the configs whose
    cells the PR changes (decided from the two texts, so every update of the PR says the
    same), and of no other config."""
    new = files[module_path]
    changed = _changed(old, new, module_path)
    pinned = [c.key for c in model.configs if c.key in pins]
    review = review_texts(old, new, old_label="cookbook (default branch)", new_label="this PR")
    ctx = {
        "marker": st.pr_marker(model.path),
        "state": st.state_marker(model.path, pins, kept),
        "model": model.model,
        "section": model.section,
        "files": sorted(files),
        "provenance": provenance(
            model, pins, rendered_now, inferencex_repo, say, shown=_deployments(new, module_path)
        ),
        "notes": notes,
        "lint": lint,
        "exclusions": exclusions([k for k in pinned if k in changed], renders),
        "excluded_in": [k for k in pinned if k in changed],
        "not_rendered": [k for k in pinned if k not in changed],
    }
    return fit_body(ctx, review_report(review).markdown, body_limit)


def provenance(
    model: ModelSpec,
    pins: dict[str, Pin],
    renders: RenderedNow,
    repo: str,
    say: Callable[[str], None],
    shown: Mapping[str, dict[str, list[int]]] | None = None,
) -> list[ProvenanceRow]:
    """One row per config and deployment; a config that does not render gets one row. A
    config the event did not render (``renders`` gives None) is not rendered for its row: its
    deployments are the ones its cells in the module show (``shown``)."""
    rows: list[ProvenanceRow] = []
    for cfg in model.configs:
        pin = pins.get(cfg.key)
        if pin is None:
            continue  # a config that left InferenceX main: its removal is in the notes
        groups: dict[str, list[int]] = {}
        try:
            rendered = renders(cfg.key)
        except SyncError as exc:
            rendered = None
            say(f"{cfg.key}: not rendered for provenance: {exc}")
        if rendered is None:
            groups = {k: list(v) for k, v in (shown or {}).get(cfg.key, {}).items()}
        for p in rendered.points if rendered is not None else []:
            groups.setdefault(p.label, []).extend(p.concs)
        for label, concs in groups.items() or {"–": []}.items():
            rows.append(
                {
                    "key": cfg.key,
                    "label": label,
                    "concs": ", ".join(str(c) for c in concs),
                    "pr": pin.pr,
                    "pr_url": links.pr_url(repo, pin.pr) if pin.pr else None,
                    "sha": pin.sha,
                    "run": pin.run,
                    "run_url": links.run_url(repo, pin.run) if pin.run else None,
                    "comment": pin.comment,
                    "comment_url": links.comment_url(repo, pin.pr, pin.comment)
                    if pin.comment and pin.pr
                    else None,
                    "status": pin.status,
                }
            )
    return rows


def exclusions(keys: list[str], renders: Renders) -> list[Exclusion]:
    """The policy entries that removed or replaced something in the launches of the configs
    ``keys`` (``Policy.applied``), by name; a config that does not render has none."""
    policy = load_policy()
    used: dict[str, Exclusion] = {}
    for key in keys:
        try:
            points = renders(key).points
        except SyncError:
            continue
        for p in points:
            for blocks in p.raw.values():
                for entry in policy.applied(blocks):
                    used.setdefault(entry.name, entry)
    return [used[k] for k in sorted(used)]


def _changed(old: str | None, new: str, where: str) -> set[str]:
    """The configs whose cells differ between the default branch's module (``old``; None: no
    module yet, so every config of ``new``) and the PR's."""
    before = _cells(old, where) if old is not None else {}
    return set(_written(before, _cells(new, where)))


def _deployments(text: str, where: str) -> dict[str, dict[str, list[int]]]:
    """Each config's deployments as the module ``text`` shows them: cell label -> the
    concurrencies of its points, in cell order."""
    out: dict[str, dict[str, list[int]]] = {}
    for cell in _cells(text, where).values():
        concs = out.setdefault(_config(cell), {}).setdefault(str(cell.get("label") or "–"), [])
        for point in cell.get("points") or []:
            concs.extend(c for c in point.get("concs") or [] if isinstance(c, int))
    return out


def edit_notes(
    old: str | None,
    new: str,
    *,
    gone: Mapping[str, str],
    unrendered: Mapping[str, str],
    where: str,
) -> list[str]:
    """What the PR body says of the module against the default branch's (``old``): whose cells
    differ (and that no other cell does), each cell that leaves and why, each cell a written
    config's new rendering no longer produces (kept), each config whose published cells are
    kept because it could not be rendered. Read from the two texts, so it says the same on
    every update."""
    if old is None:
        return []
    before = _cells(old, where)
    after = _cells(new, where)
    changed = _written(before, after)
    notes = []
    rendered = [k for k in changed if k not in gone]
    if rendered:
        notes.append(
            "the published module is edited, not regenerated: only the cells of "
            f"{', '.join(rendered)} differ from the default branch's"
            + (f" ({', '.join(sorted(gone))} left)" if gone else "")
            + "; every other cell is as published"
        )
    for cell_id, cell in before.items():
        if cell_id in after:
            continue
        key = _config(cell)
        notes.append(
            f"{cell_id} left the module: {gone[key]}"
            if key in gone
            else f"{cell_id} left the module: its config {key} was rendered again and no "
            "longer has that deployment"
        )
    for key, cells in kept_cells(old, new, where).items():
        for cell_id, label in cells:
            notes.append(
                f"{cell_id} ({label}) is kept as published, with its own provenance: {key} "
                "was rendered again and no longer produces that deployment. A cell leaves only "
                "with its config (removed from InferenceX main, or its PR closed unmerged); "
                "delete it in this PR if the page should no longer show it"
            )
    for key, why in unrendered.items():
        notes.append(f"{key}: its published cells are kept; it could not be rendered: {why}")
    return notes


def kept_cells(old: str | None, new: str, where: str) -> dict[str, list[tuple[str, str]]]:
    """The cells of configs written again (against ``old``) that are as published but for
    their routers' encoding (a ``ref`` into a rewritten cell is written out as the block it
    meant): a deployment the config's new rendering no longer produces, kept, its provenance
    its own (config key -> (cell id, label))."""
    if old is None:
        return {}
    before = _cells(old, where)
    after = _cells(new, where)
    written = set(_written(before, after))
    out: dict[str, list[tuple[str, str]]] = {}
    for cell_id, cell in after.items():
        was = before.get(cell_id)
        if _config(cell) in written and was is not None and _but_routers(was) == _but_routers(cell):
            out.setdefault(_config(cell), []).append((cell_id, str(cell.get("label") or "")))
    return out


def _but_routers(cell: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in cell.items() if k != "routers"}


def _written(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[str]:
    """The configs whose cells differ between two versions of a module."""
    return sorted(
        {_config(c) for i, c in after.items() if before.get(i) != c}
        | {_config(c) for i, c in before.items() if i not in after}
    )


@functools.lru_cache(maxsize=4)
def _cells(text: str, where: str) -> dict[str, dict[str, Any]]:
    """The cells of the module ``text`` by id, read once for the body's tables and notes, which
    all ask of the same two texts (never changed by a reader)."""
    value = parse_module(text, where).value
    cells = value.get("cells") if isinstance(value, dict) else None
    listed = cells if isinstance(cells, list) else []
    return {str(c.get("id")): c for c in listed if isinstance(c, dict)}


def _config(cell: dict[str, Any]) -> str:
    return str(cell.get("configKey") or str(cell.get("id", "")).partition("#")[0])
