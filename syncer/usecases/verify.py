"""`sync verify`: for every point of a config, the cookbook command, the command rendered from
the recipe and the command srt-slurm logged, compared.

This module finds the inputs (the pinned run in ``sync.yaml``, the data module with the key's
cells) and hands them to the comparisons: :mod:`syncer.compare.verify` for a recipe-launched
key, :mod:`syncer.compare.verify_scripts` for a key launched by a bash script. The CLI command
and the bot call ``verify_config``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from syncer import inputs, locations
from syncer.compare.diff import ExclusionLookup
from syncer.compare.results import PointResult, VerifyResult
from syncer.compare.verify import compare_point, policy_lookup
from syncer.compare.verify_scripts import assign_dirs, compare_script_point, script_points
from syncer.cookbook.decode import Decoder, decoder_for_text
from syncer.cookbook.jsmodule import MAX_MODULE_BYTES, decode_text, read_text
from syncer.errors import SyncError
from syncer.fsio import files_in, read_capped
from syncer.inferencex.master import load_master
from syncer.inferencex.policy import load_policy
from syncer.inferencex.releases import DEFAULT, from_run
from syncer.inferencex.render import RenderedConfig, RenderedPoint
from syncer.inferencex.renders import Renders, RunFacts
from syncer.inferencex.scripts import ScriptLaunch, script_launch
from syncer.inputs import Input, Read, shown
from syncer.point_options import select_points
from syncer.runs.collect import RunData, read_run
from syncer.runs.mapping import assign
from syncer.runs.scriptrun import read_script_run
from syncer.syncconfig import load_sync_config

T = TypeVar("T")
MODULE_SUFFIXES = (".jsx", ".js", ".mjs")
SHOWN_MODULES = 3  # of several modules with cells of a key, the ones an error names

# ---- locating the inputs -------------------------------------------------------------------


def pinned_run(key: str, root: Path) -> Path:
    """The downloaded run ``sync.yaml`` pins for ``key`` (``examples/runs/<run_id>/``)."""
    return _pinned(key, root)[1]


def _pinned(key: str, root: Path) -> tuple[str, Path]:
    """The id of the run ``sync.yaml`` pins for ``key``, and its download."""
    cfg_path = locations.sync_config_path(root)
    if not cfg_path.exists() and not cfg_path.is_symlink():
        # (one that is there but no regular file is refused by the read below)
        raise SyncError("no sync.yaml to find the pinned run in; pass --run PATH", path=str(root))
    pin = load_sync_config(cfg_path).pins().get(key)
    if pin is None:
        raise SyncError(f"{key} is not a config of sync.yaml; pass --run PATH", path=str(cfg_path))
    if not pin.run:
        raise SyncError(
            f"{key} has no pinned run in sync.yaml (status {pin.status}); pass --run PATH",
            path=str(cfg_path),
        )
    run_id = str(pin.run)
    runs = locations.runs_dir(root)
    for candidate in (runs / run_id, runs / run_id.split("/")[0]):
        if candidate.exists():
            return run_id, candidate
    raise SyncError(
        f"run {run_id} is pinned for {key} but not downloaded under examples/runs/; "
        "pass --run PATH (a run directory, artifact archive or sweep log)",
        path=str(cfg_path),
    )


class Cookbook:
    """The cookbook a key is verified against, as named: one data module, or a folder whose
    modules are listed once (the command asks whether it holds any before the run is read,
    and the search for the key's cells reads the same listing)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def is_folder(self) -> bool:
        return self.path.is_dir()

    @functools.cached_property
    def modules(self) -> list[Path]:
        """The data modules under the folder (``modules_under``), listed on the first ask."""
        return modules_under(self.path)


def find_modules(key: str, cookbook: Cookbook) -> list[tuple[Path, str]]:
    """Data modules of ``cookbook`` (a file or a folder) that name ``key``, with their text
    (each file is read once)."""
    if cookbook.path.is_file():
        return [(cookbook.path, read_text(cookbook.path))]
    if not cookbook.is_folder():
        raise SyncError("no such cookbook module or directory", path=str(cookbook.path))
    found = []
    needle = key.encode("utf-8")
    for path in cookbook.modules:
        raw = read_capped(path, MAX_MODULE_BYTES, "data module")
        if needle in raw:
            found.append((path, decode_text(raw, str(path))))
    return found


def modules_under(folder: Path) -> list[Path]:
    """The data modules (``.jsx``, ``.js``, ``.mjs``) under ``folder``, in name order, none
    reached through a symlink out of it (``fsio.files_in``); a folder named as a module is
    listed, and refused by the read of it, not skipped."""
    return files_in(folder, MODULE_SUFFIXES, "data module")


def cookbook_module(key: str, cookbook: Cookbook) -> tuple[Decoder | None, str | None]:
    """The decoder and path of the one module under ``cookbook`` with cells of ``key``, or
    ``(None, None)``. A module may name the key without showing it (e.g. as a KV-tier donor),
    so only cells count; two modules with cells of the key are ambiguous."""
    having = []
    for m, text in find_modules(key, cookbook):
        candidate = decoder_for_text(text, str(m))
        if any(c.get("configKey") == key for c in candidate.cells):
            having.append((candidate, str(m)))
    if len(having) > 1:
        names = ", ".join(path for _, path in having[:SHOWN_MODULES])
        more = len(having) - SHOWN_MODULES
        names += f" and {more} more" if more > 0 else ""
        raise SyncError(
            f"{len(having)} cookbook modules have cells of {key} ({names}); name one module "
            "file with --cookbook",
            path=str(cookbook.path),
        )
    if not having:
        return None, None
    return having[0]


# ---- the use case --------------------------------------------------------------------------


@dataclass
class _Inputs:
    """What every key is verified against, found the same way whatever launched it: the run
    (``--run``, else the one sync.yaml pins) and the data module with the key's cells."""

    key: str
    inferencex: Path
    run_path: Path
    decoder: Decoder | None
    module_path: str | None
    lookup: ExclusionLookup
    read: list[Read]

    def result(self, points: list[PointResult], **found: Any) -> VerifyResult:
        return VerifyResult(
            key=self.key,
            inferencex=shown(self.inferencex),
            run=shown(self.run_path),
            cookbook=shown(self.module_path) if self.module_path else None,
            points=points,
            read=self.read,
            **found,
        )


def _inputs(
    key: str,
    inferencex: Path,
    run: Path | None,
    cookbook: Cookbook | None,
    read: Callable[[Path], T],
    run_id: str | None = None,
) -> tuple[_Inputs, T]:
    """The inputs, with the run read by ``read`` (before the module is looked for, so a bad
    run is reported first); ``run_id``: the id of a ``run`` downloaded by it."""
    root = locations.project_root()
    reads = []
    if run is None:
        reads.append(inputs.record(Input.SYNC_YAML, locations.sync_config_path(root)))
        run_id, run_path = _pinned(key, root)
    else:
        run_path = run
    data = read(run_path)
    decoder, module_path = cookbook_module(
        key, cookbook if cookbook is not None else Cookbook(locations.snippets_dir(root))
    )
    reads.append(inputs.record(Input.INFERENCEX, inferencex))
    reads.append(inputs.record(Input.RUN, run_path, id=run_id))
    if module_path is not None:
        reads.append(inputs.record(Input.MODULE, module_path))
    lookup = policy_lookup(load_policy())
    return _Inputs(key, inferencex, run_path, decoder, module_path, lookup, reads), data


def verify_config(
    key: str,
    *,
    inferencex: Path,
    run: Path | None,
    cookbook: Path | Cookbook | None,
    point: int | None = None,
    conc: int | None = None,
    renders: Renders | None = None,
    srt_repo: Path | None = None,
    as_of: str | None = None,
    run_id: str | None = None,
) -> VerifyResult:
    """Verify every point of ``key``, or those ``--point``/``--conc`` select
    (:mod:`syncer.point_options`, the rule ``sync render`` follows too). ``renders``: the
    caller's renderings (the bot's, so the event renders each config once); which rendering
    the run is compared with is :class:`Renders`' choice (the run's recorded srt-slurm commit,
    its date, ``as_of``). A branch of srt-slurm the key's runner
    cloned is taken as it was at ``as_of``, else at the run's date when its logs give one, else
    at the InferenceX commit's date (read from ``srt_repo``; ``releases.at_date``).
    ``cookbook``: a module or a folder of modules (default: the bundled ``cookbook_snippets``)."""
    if isinstance(cookbook, Path):
        cookbook = Cookbook(cookbook)
    launch = script_launch(load_master(inferencex), key)
    if launch is not None:
        return verify_script_config(
            key,
            launch,
            inferencex=inferencex,
            run=run,
            cookbook=cookbook,
            point=point,
            conc=conc,
            run_id=run_id,
        )
    renders = renders or Renders(srt_repo=srt_repo, as_of=as_of)
    return _verify_recipe_config(
        key, inferencex, run, cookbook, (point, conc), renders, srt_repo, run_id
    )


def _verify_recipe_config(
    key: str,
    inferencex: Path,
    run: Path | None,
    cookbook: Cookbook | None,
    selected: tuple[int | None, int | None],
    renders: Renders,
    srt_repo: Path | None,
    run_id: str | None,
) -> VerifyResult:
    """``verify_config`` of a key srt-slurm launched from a recipe; ``selected``: the
    ``--point`` and ``--conc`` given."""
    point, conc = selected
    # Rendered before the run is read, so a recipe's refusal is reported first.
    rendered = renders.get(inferencex, key)
    points = select_points(
        rendered.points, point=point, conc=conc, concs=lambda p: p.concs, owner=key
    )
    found, data = _inputs(key, inferencex, run, cookbook, read_run, run_id)
    as_ran = renders.get(inferencex, key, run=run_facts(data))
    if as_ran is not rendered:
        rendered = as_ran
        points = select_points(
            rendered.points, point=point, conc=conc, concs=lambda p: p.concs, owner=key
        )
    # A lone nameless log is taken for the verified point only when exactly one is verified.
    only = points[0].index if len(points) == 1 and (point, conc) != (None, None) else None
    srt_version, raw_points, notes = _raw_rendering(renders, inferencex, rendered, data)
    release = rendered.release or DEFAULT
    shas = sorted(set(data.srt_slurm_shas.values()))
    if len(shas) == 1:
        # the run's own record of the commit it checked out wins over the checkout's choice
        release = from_run(shas[0], release, srt_repo)
    # All points take part in the assignment, so a log of an unselected point is not "unmatched".
    assignment = assign(data.sweeps, rendered.points, only=only)
    results = [
        compare_point(
            p,
            raw_points[p.index].raw.get(p.submitted) or next(iter(p.raw.values()), []),
            key=key,
            assignment=assignment,
            lookup=found.lookup,
            decoder=found.decoder,
            module_path=found.module_path,
            cookbook=cookbook.path if cookbook is not None else None,
        )
        for p in points
    ]
    return found.result(
        results,
        run_data=data,
        assignment=assignment,
        srt_version=srt_version,
        notes=notes,
        srt_release=release.describe(),
    )


def run_facts(data: RunData) -> RunFacts:
    """What ``data`` says of the srt-slurm it ran: its recorded commits, its first log line."""
    started = sorted(s.started for s in data.sweeps if s.started)
    return RunFacts(tuple(data.srt_slurm_shas.values()), started[0] if started else None)


def _raw_rendering(
    renders: Renders, inferencex: Path, rendered: RenderedConfig, data: RunData
) -> tuple[str, dict[int, RenderedPoint], list[str]]:
    """``(srt-slurm major version, point index -> rendered point, notes)`` to compare the logs
    with. Logs from srt-slurm 1.x (router on ``Router command:`` lines) are compared with the
    1.x rendering: the two differ in env defaults and router flags (see
    ``docs/srt-slurm-rules.md``)."""
    current: tuple[str, dict[int, RenderedPoint], list[str]] = (
        rendered.srt_version,
        {p.index: p for p in rendered.points},
        [],
    )
    if not data.sweeps or not all(s.router_style == "1.x" for s in data.sweeps):
        return current
    if rendered.srt_version == "1":
        return current  # already the 1.x rendering (of the release the key ran with)
    try:
        old = renders.get(inferencex, rendered.key, version="1")
    except SyncError:
        # E.g. a schema-2 recipe, which 1.x cannot read: compare with 2.x and say so.
        note = (
            "the logs come from srt-slurm 1.x, which cannot read this schema-2 recipe: "
            "compared with the 2.x rendering"
        )
        return current[0], current[1], [note]
    return "1", {p.index: p for p in old.points}, []


def verify_script_config(
    key: str,
    launch: ScriptLaunch,
    *,
    inferencex: Path,
    run: Path | None,
    cookbook: Cookbook | None,
    point: int | None = None,
    conc: int | None = None,
    run_id: str | None = None,
) -> VerifyResult:
    """Verify every point of the script-launched ``key``, or those ``--point``/``--conc``
    select (:mod:`syncer.point_options`), against ``run``."""
    if launch.multinode:
        raise SyncError(
            f"{key}: launched by a multi-node bash script ({launch.describe()}); its run's logs "
            "are not read by this tool",
            path=launch.master_path,
            line=launch.line,
        )
    entry = load_master(inferencex).entry(key, script_launched=True)
    points = script_points(entry, launch)
    selected = select_points(points, point=point, conc=conc, concs=lambda p: p.concs, owner=key)
    # A lone nameless result directory is taken for the verified point only when one is.
    only = selected[0].index if len(selected) == 1 and (point, conc) != (None, None) else None
    found, data = _inputs(key, inferencex, run, cookbook, read_script_run, run_id)
    assignment = assign_dirs(data.dirs, points, only=only)
    notes: list[str] = list(data.missing)
    results = []
    for p in selected:
        res, how_notes = compare_script_point(
            p,
            key=key,
            model=entry.model,
            assignment=assignment,
            lookup=found.lookup,
            decoder=found.decoder,
            module_path=found.module_path,
            cookbook=cookbook.path if cookbook is not None else None,
        )
        notes.extend(how_notes)
        results.append(res)
    return found.result(
        results,
        run_data=data,
        assignment=assignment,
        srt_version="",
        notes=notes,
        launched_by=launch.describe(),
    )
