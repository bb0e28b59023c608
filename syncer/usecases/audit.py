"""`sync audit`: is every published AgentX cell still what InferenceX measured?

For every data module of a cookbook checkout (every model, not only those of ``sync.yaml``)
and every cell of it: its status and provenance; whether the recipe at the cell's own pinned
commit renders exactly the published commands (``compare.published.compare_published``, the
comparison ``sync verify`` makes, shown as the reviewer diff of ``compare.review``); whether
the module is what the generator writes for its cells (``cells_from_module`` and
``encode_module``, the round trip of ``sync reencode``); whether a merged config left the
master on InferenceX's default branch; lint findings against the cell's SGLang version when a
checkout is given. What needs the GitHub API (PR states, artifact expiry, re-pins, the bot's
evidence records) is asked through ``AuditApi`` when the command has a token, and listed as not
checked otherwise.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from syncer import checkout, gcpause, links, progress
from syncer.compare.published import compare_published
from syncer.compare.verdicts import RecipeVerdict, Verdict
from syncer.cookbook.decode import Decoder
from syncer.cookbook.jsmodule import JsModule, locate, parse_module, read_text
from syncer.encoder.cells import PROV_KEYS, CellSpec, ModuleSpec, cells_from_module
from syncer.encoder.emit import emit_module
from syncer.encoder.encode import (
    compact_module,
    head_and_env_lines,
    head_lines,
    module_text,
    plain_module,
)
from syncer.errors import SyncError
from syncer.fsio import files_in, inside_folder
from syncer.inferencex.master import Master, load_master
from syncer.inferencex.releases import branch_commit
from syncer.inferencex.render import RenderedConfig, RenderedPoint
from syncer.inferencex.renders import Renders
from syncer.inferencex.scripts import ScriptLaunchedError
from syncer.model import PointStatus
from syncer.review.matching import ModuleSide
from syncer.review.report import review_markdown
from syncer.review.review import Review, review_sides
from syncer.untrusted import Prose
from syncer.usecases.audit_github import API_CHECKS, NO_API, AuditApi, api_checks
from syncer.usecases.audit_result import (
    AuditFinding,
    AuditResult,
    CellRow,
    Check,
    ModuleRow,
    NotChecked,
    PointRow,
    SpooledCells,
)
from syncer.usecases.audit_trees import TreeSource

# Where a cookbook checkout keeps the generated AgentX data modules.
SNIPPETS_IN_CHECKOUT = Path("docs") / "src" / "snippets" / "agentx"
MODULE_SUFFIXES = (".jsx", ".js", ".mjs")
# Our words, shown as written in markdown too (``Prose``: only values are escaped).
NO_SGLANG = Prose("needs an SGLang git checkout: give --sglang GIT_DIR")


# ---- the cookbook's modules ----------------------------------------------------------------


def snippets_root(cookbook: Path) -> Path:
    """The folder of data modules: ``docs/src/snippets/agentx`` of a cookbook checkout, else
    ``cookbook`` itself (a folder of ``<org>/<model>.jsx``)."""
    inside = cookbook / SNIPPETS_IN_CHECKOUT
    if not inside.is_dir():
        return cookbook
    # (a docs/ of the checkout linking elsewhere is no folder of the checkout's modules)
    inside_folder(cookbook, inside, "cannot read the data modules' folder")
    return inside


def module_paths(cookbook: Path) -> list[Path]:
    """Every data module under the cookbook, in path order."""
    if cookbook.is_file():
        return [cookbook]
    root = snippets_root(cookbook)
    if not root.is_dir():
        raise SyncError("no such cookbook checkout or folder of data modules", path=str(cookbook))
    found = files_in(root, MODULE_SUFFIXES, "data module")
    if not found:
        raise SyncError(f"no data modules ({', '.join(MODULE_SUFFIXES)}) here", path=str(root))
    return found


# ---- one cell's provenance -----------------------------------------------------------------

_LINK_KEYS = ("recipeUrl", "runUrl", "jobUrl", "prUrl", "useComment")


def _provenance(decoder: Decoder, ci: int, pi: int) -> tuple[dict[str, str], dict[str, str]]:
    """``(ids, links)`` of a point: the newest format's ids (sha, recipe, run, job, pr,
    comment, status, date) and the GitHub links, whichever format the module has."""
    info = decoder.point_info(ci, pi)
    ids = {k: str(info[k]) for k in PROV_KEYS if info.get(k) not in (None, "")}
    repo = str((decoder.data.get("source") or {}).get("repo") or "").rstrip("/")
    for url_key, id_key, prefix in (
        ("runUrl", "run", links.RUNS),
        ("jobUrl", "job", links.RUNS),
        ("useComment", "comment", links.COMMENT),
    ):
        url = info.get(url_key)
        if id_key not in ids and isinstance(url, str) and prefix in url:
            ids[id_key] = url.rsplit(prefix, 1)[1]
    urls = {k: str(info[k]) for k in _LINK_KEYS if isinstance(info.get(k), str)}
    if repo and "sha" in ids and "recipe" not in ids and "recipeUrl" in urls:
        marker = f"{links.BLOB}{ids['sha']}/"
        if marker in urls["recipeUrl"]:
            ids["recipe"] = urls["recipeUrl"].split(marker, 1)[1]
    return {k: ids[k] for k in PROV_KEYS if k in ids}, urls


def _cell_row(decoder: Decoder, ci: int, module: str, model: str, same: dict[str, str]) -> CellRow:
    """The row of cell ``ci``; its texts taken from ``same`` (the module's texts seen so far)
    where an earlier row holds an equal one: a module's points repeat their status, commit
    and links, and the rows are held to the end of the audit."""

    def one(text: str) -> str:
        return same.setdefault(text, text)

    cell = decoder.cells[ci]
    points = []
    statuses: list[str] = []
    for pi, point in enumerate(cell["points"]):
        ids, _ = _provenance(decoder, ci, pi)
        status = one(ids.get("status", ""))
        if status not in statuses:
            statuses.append(status)
        sha = ids.get("sha")
        points.append(
            PointRow(pi, list(point.get("concs") or []), status, one(sha) if sha else sha)
        )
    ids, urls = _provenance(decoder, ci, 0)
    return CellRow(
        module=module,
        model=model,
        index=ci,
        id=str(cell.get("id")),
        config_key=one(str(cell.get("configKey"))),
        hw=one(str(cell.get("hw"))),
        label=one(str(cell.get("label", ""))),
        image=one(str(cell.get("image", ""))),
        status=one(", ".join(statuses)),
        provenance={k: one(v) for k, v in ids.items()},
        links={k: one(v) for k, v in urls.items()},
        points=points,
    )


# ---- the audit -----------------------------------------------------------------------------


@dataclass
class _Masters:
    done: dict[Path, Master | SyncError] = field(default_factory=dict)

    def get(self, tree: Path) -> Master | SyncError:
        if tree not in self.done:
            try:
                self.done[tree] = load_master(tree)
            except SyncError as exc:
                self.done[tree] = exc
        return self.done[tree]


def audit(
    cookbook: Path,
    trees: TreeSource,
    *,
    api: AuditApi | None = None,
    lint: Callable[[Decoder, str], dict[str, list[str]]] | None = None,
    today: _dt.date | None = None,
    srt_repo: Path | None = None,
    reviews: bool = True,
    spool: bool = False,
) -> AuditResult:
    """Audit every module under ``cookbook`` against the InferenceX ``trees``.

    ``lint(decoder, path)``: cell id -> lint findings (one line each), when an SGLang checkout
    is given; ``api``: the GitHub questions, when there is a token; ``srt_repo``: a clone of
    srt-slurm, where a branch a runner cloned is read as it was at the run; ``reviews``: keep
    what each drifted module's reviewer diff is made from (``ModuleRow.review``), for a
    report that shows it (markdown); without, nothing of a module outlives its audit.
    ``spool``: each module's cells are written away when its audit ends
    (``AuditResult.spooled``), for a report that lists them only as JSON."""
    day = today or _dt.datetime.now(_dt.UTC).date()
    root = cookbook if cookbook.is_dir() else cookbook.parent
    paths = module_paths(cookbook)
    result = AuditResult(
        cookbook=str(cookbook),
        inferencex=trees.label,
        modules=[],
        cells=[],
        spooled=SpooledCells() if spool else None,
    )
    if trees.note:
        result.notes.append(trees.note)
    if api is None:
        result.not_checked.extend(NotChecked(c, NO_API) for c in API_CHECKS)
    if lint is None:
        result.not_checked.append(NotChecked(Check.LINT, NO_SGLANG))
    renders, masters = Renders(srt_repo=srt_repo), _Masters()
    for path in progress.track(paths, "auditing data modules", len(paths), unit="modules"):
        shown = checkout.relative(path, snippets_root(root) if cookbook.is_dir() else root)
        # Paused per module: what a module's audit builds (its decoder, spec, renderings) is
        # alive until it returns, so a collection meanwhile frees nothing; the next one, in
        # the next module, collects whatever it left.
        with gcpause.paused():
            module_row, rows = _audit_module(path, shown, trees, renders, masters, lint, reviews)
        if api is not None:
            for row in rows:
                api_checks(row, api, day)
        result.modules.append(module_row)
        result.add_cells(rows)
    return result


def _audit_module(
    path: Path,
    shown: str,
    trees: TreeSource,
    renders: Renders,
    masters: _Masters,
    lint: Callable[[Decoder, str], dict[str, list[str]]] | None,
    reviews: bool,
) -> tuple[ModuleRow, list[CellRow]]:
    text = read_text(path)
    try:
        module = parse_module(text, str(path))
        decoder = Decoder(module.value, str(path), locate=lambda keys: locate(text, keys))
    except SyncError as exc:
        row = ModuleRow(shown, "")
        row.findings.append(AuditFinding(Check.MODULE, f"does not decode: {exc}"))
        return row, []
    model = str(decoder.data.get("model", ""))
    row = ModuleRow(shown, model, cells=len(decoder.cells))
    same: dict[str, str] = {}
    cells = [_cell_row(decoder, ci, shown, model, same) for ci in range(len(decoder.cells))]
    spec = _roundtrip(module, decoder, text, row)
    drifted: dict[tuple[int, int], RenderedPoint] = {}
    for key, sha, members in _groups(cells):
        drifted.update(_check_recipe(decoder, key, sha, members, cells, trees, renders))
    for cell in cells:
        _check_master(cell, trees, masters)
    if reviews and drifted and spec is not None:
        # Made now, while the module is at hand: the report keeps the review alone, not the
        # module's decoder and spec (JSON and text reports list the differences themselves).
        review = _review(decoder, spec, drifted, shown)
        if review is not None:
            row.review = review_markdown(review)
    if lint is not None:
        found = lint(decoder, str(path))
        for cell in cells:
            cell.findings.extend(AuditFinding(Check.LINT, line) for line in found.get(cell.id, []))
    return row, cells


def _roundtrip(module: JsModule, decoder: Decoder, text: str, row: ModuleRow) -> ModuleSpec | None:
    """Whether the bot can edit the module without touching lines nobody changed: a module
    whose text is not the generator's layout of its own value (edited by hand) is a finding,
    since an edit would rewrite it (``encoder/edit.py``). One in the layout whose cells another
    generator encoded differently (its env pool, patches) is kept as published by every edit:
    a note, saying what ``sync reencode`` would change, never a finding."""
    try:
        # (nothing of the audit changes a block: the spec shares the decoder's)
        spec = cells_from_module(module.value, decoder, row.path, shared=True)
    except SyncError as exc:
        row.findings.append(
            AuditFinding(Check.ROUNDTRIP, f"the generator cannot read its cells: {exc}")
        )
        return None
    laid_out = emit_module(module.header, module.name, module.value)
    if laid_out != text:
        row.findings.append(
            AuditFinding(Check.ROUNDTRIP, _first_difference(text, laid_out, LAID_OUT))
        )
        return spec
    try:
        # The lines before the env pool are the module's own values laid out: a difference
        # there is the first one, found without encoding a cell (most of an audit's time).
        lines = text.split("\n")
        for begins in (head_lines, head_and_env_lines):
            # Then the env pool, which needs only which blocks are written whole, not how the
            # others are: a difference there is found without encoding a patch or a ``ref``.
            head = begins(spec, module.header)
            if _differing_line(lines, head) is not None:
                row.notes.append(_first_difference(text, "\n".join(head), ENCODED))
                return spec
        # What the generator writes is compaction + emission; its own decode-back proof is
        # the encoder's test, not the audit's: a text equal to the module's proves itself.
        again = module_text(compact_module(spec), module.header)
    except SyncError as exc:
        row.notes.append(f"`sync reencode` could not write it in this tool's compaction: {exc}")
        return spec
    if again != text:
        row.notes.append(_first_difference(text, again, ENCODED))
    return spec


LAID_OUT = (
    "not in the generator's layout (edited by hand?): an edit of the bot would rewrite lines "
    "nobody changed, so it refuses to edit the module; `sync reencode` rewrites it on purpose"
)
ENCODED = (
    "encoded by another generator (or an older one): every edit keeps its cells as published; "
    "`sync reencode` would rewrite it in this tool's compaction"
)


def _differing_line(old: list[str], new: list[str]) -> int | None:
    """The number of the first line where ``old`` and ``new`` differ, both having it."""
    for n, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return n
    return None


def _first_difference(text: str, again: str, what: str) -> str:
    old, new = text.split("\n"), again.split("\n")
    n = _differing_line(old, new)
    if n is not None:
        return (
            f"{what} (line {n} is {old[n - 1].strip()[:80]!r}, the generator writes "
            f"{new[n - 1].strip()[:80]!r})"
        )
    return f"{what} ({len(old)} lines, the generator writes {len(new)})"


def _groups(cells: list[CellRow]) -> list[tuple[str, str | None, list[tuple[int, int]]]]:
    """(config key, pinned commit, its (cell, point)s): the points one rendering covers."""
    out: dict[tuple[str, str | None], list[tuple[int, int]]] = {}
    for cell in cells:
        for p in cell.points:
            out.setdefault((cell.config_key, p.sha), []).append((cell.index, p.index))
    return [(k, s, m) for (k, s), m in out.items()]


def _check_recipe(
    decoder: Decoder,
    key: str,
    sha: str | None,
    members: list[tuple[int, int]],
    cells: list[CellRow],
    trees: TreeSource,
    renders: Renders,
) -> dict[tuple[int, int], RenderedPoint]:
    """Compare the published points of ``key`` pinned at ``sha`` with the recipe at ``sha``;
    returns the points that differ with their rendering (for the reviewer diff)."""
    touched = sorted({ci for ci, _ in members})

    def not_checked(reason: str) -> dict[tuple[int, int], RenderedPoint]:
        for ci in touched:
            cells[ci].not_checked.append(NotChecked(Check.RECIPE, reason))
        return {}

    tree, why = trees.at(sha)
    if tree is None:
        return not_checked(why or "no InferenceX tree for this commit")
    # A branch a runner cloned is taken at the run's date when the cell names one, else at
    # its commit's (a tree written from git objects is no checkout): as `sync generate` did.
    run_date = decoder.point_info(*members[0]).get("date")
    as_of = run_date if isinstance(run_date, str) and run_date else trees.date(sha)
    try:
        rendered = renders.get(tree, key, date=as_of)
    except ScriptLaunchedError as exc:
        return not_checked(
            f"script-era config ({exc.launch.describe()}): no recipe to render; its "
            "commands come from its run's logs (sync verify KEY --run RUN checks them)"
        )
    except SyncError as exc:
        for ci in touched:
            where = f" at {sha[:12]}" if sha else ""
            cells[ci].findings.append(
                AuditFinding(Check.RENDER, f"the recipe of {key}{where} cannot be rendered: {exc}")
            )
        return {}
    _check_srt_commit(decoder, members, cells, rendered)
    return _compare_points(decoder, key, sha, members, cells, rendered)


def _compare_points(
    decoder: Decoder,
    key: str,
    sha: str | None,
    members: list[tuple[int, int]],
    cells: list[CellRow],
    rendered: RenderedConfig,
) -> dict[tuple[int, int], RenderedPoint]:
    """Each rendered point against the published point it matches; a point on one side only
    is a finding. Returns the published points that differ, with their rendering."""
    touched = sorted({ci for ci, _ in members})
    drifted: dict[tuple[int, int], RenderedPoint] = {}
    matched: set[tuple[int, int]] = set()
    for p in rendered.points:
        found = _published_point(decoder, members, p)
        if found is None:
            ci = touched[0]
            cells[ci].findings.append(
                AuditFinding(
                    Check.POINTS,
                    f"the recipe of {key} at {(sha or '')[:12]} has a point the cookbook does "
                    f"not show: item {p.item} at concurrency "
                    f"{', '.join(str(c) for c in p.concs)}",
                )
            )
            continue
        matched.add(found)
        ci, pi = found
        differences = _differences(decoder, ci, pi, p)
        cells[ci].points[pi].recipe = RecipeVerdict.DIFFERS if differences else RecipeVerdict.AGREES
        if differences:
            drifted[found] = p
            cells[ci].findings.append(
                AuditFinding(
                    Check.RECIPE,
                    f"point {pi} ({_concs(cells[ci].points[pi].concs)}): the recipe of {key} at "
                    f"{(sha or '')[:12]} renders other commands "
                    f"({len(differences)} difference{'s' if len(differences) != 1 else ''})",
                    point=pi,
                    differences=differences,
                )
            )
    for ci, pi in members:
        if (ci, pi) not in matched:
            cells[ci].points[pi].recipe = RecipeVerdict.MISSING
            cells[ci].findings.append(
                AuditFinding(
                    Check.POINTS,
                    f"point {pi} ({_concs(cells[ci].points[pi].concs)}): the recipe of {key} at "
                    f"{(sha or '')[:12]} has no such point",
                    point=pi,
                )
            )
    return drifted


def _check_srt_commit(
    decoder: Decoder, members: list[tuple[int, int]], cells: list[CellRow], rendered: RenderedConfig
) -> None:
    """A cell naming the srt-slurm commit its runner's branch was rendered under (prov
    ``srtSlurm``) is held to the commit that branch had at the pin's date."""
    applied = branch_commit(rendered.release)
    seen: set[int] = set()
    for ci, pi in members:
        named = str(decoder.point_info(ci, pi).get("srtSlurm") or "")
        if ci in seen or not named or named == applied or rendered.release is None:
            continue
        seen.add(ci)
        release = rendered.release.describe()
        if applied is None:
            cells[ci].not_checked.append(
                NotChecked(Check.RECIPE, f"the cell names srt-slurm {named[:12]}; {release}")
            )
            continue
        cells[ci].findings.append(
            AuditFinding(
                Check.RECIPE, f"the cell names srt-slurm {named[:12]}, the recipe's {release}"
            )
        )


def _concs(concs: list[int]) -> str:
    return "c" + "/".join(str(c) for c in concs)


def _published_point(
    decoder: Decoder, members: list[tuple[int, int]], p: RenderedPoint
) -> tuple[int, int] | None:
    """The published point of this pin measuring ``p``: same master row, a shared
    concurrency (the rule of ``compare.verify.cookbook_point``, within one pin's points)."""
    for ci, pi in members:
        point = decoder.cells[ci]["points"][pi]
        if point.get("item") == p.item and set(point.get("concs") or []) & set(p.concs):
            return ci, pi
    return None


def _differences(decoder: Decoder, ci: int, pi: int, p: RenderedPoint) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    image = decoder.cells[ci].get("image")
    if image != p.image:
        out.append(
            {"router": None, "block": "cell", "field": "image", "key": "image",
             "status": Verdict.DIFFERS, "cookbook": image, "recipe": p.image}
        )  # fmt: skip
    for comp in compare_published(decoder, ci, pi, p):
        for e in comp.problems:
            out.append(
                {"router": comp.router, "block": e.block, "field": e.field, "key": e.key,
                 "status": str(e.status), "cookbook": e.left, "recipe": e.right}
            )  # fmt: skip
    return out


def _check_master(cell: CellRow, trees: TreeSource, masters: _Masters) -> None:
    """A merged config (status ``verified``) must still be in the default branch's master;
    a PR's config is not there until the PR merges (the API checks those)."""
    if cell.status != PointStatus.VERIFIED:
        return
    main = trees.main()
    if main is None:
        cell.not_checked.append(NotChecked(Check.MASTER, "no tree of InferenceX's default branch"))
        return
    master = masters.get(main)
    if isinstance(master, SyncError):
        cell.not_checked.append(NotChecked(Check.MASTER, f"its master cannot be read: {master}"))
        return
    if cell.config_key not in master.data:
        sha = cell.provenance.get("sha")
        if trees.on_main(sha) is False:
            # The key is not there, but neither is the commit it was measured at: the clone's
            # default branch is older than the pin (stale), or the PR was squashed; the
            # config cannot be said to have left.
            cell.not_checked.append(
                NotChecked(
                    Check.MASTER,
                    f"{cell.config_key} is not in the default branch's master, which does not "
                    f"contain its pinned commit {str(sha)[:12]} either (a stale clone?)",
                )
            )
            return
        cell.findings.append(
            AuditFinding(
                Check.MASTER,
                f"{cell.config_key} is no longer in the master config on InferenceX's default "
                "branch, but the cookbook still shows it",
            )
        )


def _review(
    decoder: Decoder,
    spec: ModuleSpec,
    drifted: dict[tuple[int, int], RenderedPoint],
    shown: str,
) -> Review | None:
    """The reviewer diff from the published module (its ``decoder``) to the same module with
    the drifted points' commands (and image) as their recipes render them. The review reads
    both through the decoder, so the new side is the spec decoded as it stands
    (``plain_module``): the same commands as this tool's compaction of it, without its search
    for the smallest text, which no reader of the review sees."""
    for (ci, pi), p in drifted.items():
        cell: CellSpec = spec.cells[ci]
        point = cell.points[pi]
        for router in cell.routers:
            if router in p.cookbook:
                point.blocks[router] = p.cookbook[router]
        cell.meta["image"] = p.image
    try:
        again = Decoder(plain_module(spec), NEW_LABEL)
    except SyncError:
        return None  # the rendering cannot be written into this module; the findings stand
    # Only the drifted cells differ: the others are the published cells decoded and written
    # back (the encoder's round trip, proven by its tests and `sync reencode`), unless the
    # drift moved the module's Mooncake-master placement, which every cell's derived tiers
    # follow.
    same_placement = again.master_placement == decoder.master_placement
    changed = {ci for ci, _ in drifted} if same_placement else None
    return review_sides(ModuleSide(decoder, f"{shown} (published)"), ModuleSide(again), changed)


NEW_LABEL = "the recipes at their pins"
