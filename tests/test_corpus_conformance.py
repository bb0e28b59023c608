"""Issue 41: every published module version against the tool's render of the configs its cells
name, at the InferenceX commit each cell names. The corpus lives outside the repository (see
tests/corpus.py: the manifest is tests/fixtures/corpus-manifest.json, the cache
``$SYNC_CORPUS_DIR`` or ``~/.cache/infx-cookbook-sync/corpus``); these tests read the cache when
it is there and say what is absent otherwise.

Per module version the report gives the cells reproduced / the cells checkable / the cells not
checkable with their reasons; every checkable cell must be reproduced (or be a published
module's own inconsistency, named: NATS_UNSHIPPED), that is: the cookbook form of
each point for every router at its measured KV tier equals the published blocks (apart from
the block order, checked under the layout of the generator version that wrote the module), and
the cell's label, detail, GPUs, image and submitted router are the rendered ones."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import forkserver
import pytest
from corpus import INFERENCEX, MANIFEST, UNNAMED_VERSIONS, cache_dir, cached, cell_inputs

from syncer.cookbook.decode import decoder_for_text
from syncer.encoder.cells import module_layout
from syncer.errors import SyncError
from syncer.inferencex.cookbook_layout import layout_order
from syncer.inferencex.render import RenderedConfig, render_config
from syncer.model import Selection


@dataclass
class Tally:
    """One module version's outcome: cells reproduced, checkable, and why the rest are not."""

    reproduced: int = 0
    checkable: int = 0
    drift: int = 0  # checkable cells whose module contradicts itself (each explained)
    not_checkable: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    def line(self, name: str) -> str:
        why = "; ".join(f"{n} {reason}" for reason, n in sorted(self.not_checkable.items()))
        return (
            f"{name}: {self.reproduced}/{self.checkable} checkable cells reproduced"
            + (f", {self.drift} published drift ({NATS_UNSHIPPED})" if self.drift else "")
            + f", {sum(self.not_checkable.values())} not checkable"
            + (f" ({why})" if why else "")
        )


def _manifest() -> dict:
    return json.loads(MANIFEST.read_text())


def _by_content(blocks: list[dict]) -> list[str]:
    return sorted(json.dumps(b, sort_keys=True) for b in blocks)


@functools.cache
def _render(sha: str, key: str) -> RenderedConfig | str:
    """The config rendered from the cache's files of that commit, or why it could not be."""
    entry = _manifest()["inputs"][f"{sha} {key}"]
    scratch = Path(tempfile.mkdtemp(prefix="corpus-tree-"))
    try:
        for path in entry["files"]:
            source = cached({"repo": INFERENCEX, "commit": sha, "path": path})
            target = scratch / path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        return render_config(scratch, key)
    except SyncError as exc:
        return f"render refused: {exc.message}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _absent(sha: str, key: str) -> str | None:
    """Why a cell's inputs cannot be checked, or None when the cache holds them all."""
    entry = _manifest()["inputs"].get(f"{sha} {key}")
    if entry is None:
        return "not in the manifest (rebuild it: python tests/corpus.py build)"
    if "absent" in entry:
        return entry["absent"]
    for path in entry["files"]:
        if not cached({"repo": INFERENCEX, "commit": sha, "path": path}).is_file():
            return "inputs absent from the cache (python tests/corpus.py fill)"
    return None


def _kinds(blocks: list[dict]) -> list[str]:
    return [b["kind"] + (f":{b['role']}" if "role" in b else "") for b in blocks]


@functools.cache
def _layout(path: str) -> str:
    """The block layout a module version was written in, read from its own cells (the rule
    ``sync generate`` writes an existing module's new cells by)."""
    return module_layout(decoder_for_text(Path(path).read_text(encoding="utf-8"), path))


def _check_cell(decoder, module: dict, ci: int, sha: str, key: str) -> list[str]:
    """What differs between a published cell and the render of its config (empty: reproduced)."""
    rendered = _render(sha, key)
    if isinstance(rendered, str):
        return [rendered]
    cell = module["cells"][ci]
    out = []
    for pi, point in enumerate(cell["points"]):
        found = [
            q
            for q in rendered.points
            if q.concs == point["concs"]
            and (point.get("override") is None or q.override == point.get("override"))
        ]
        if len(found) != 1:
            out.append(f"point {pi}: {len(found)} rendered jobs at {point['concs']}")
            continue
        (q,) = found
        # a cell shows its first point's GPUs (a shape's points may differ in node count)
        facts = (q.label, q.kv) + ((q.gpus, q.image, q.submitted) if pi == 0 else ())
        shown = (cell["label"], point["kv"]) + (
            (cell["gpus"], cell["image"], cell["submitted"]) if pi == 0 else ()
        )
        if facts != shown or cell["detail"] not in (q.detail, f"{q.detail} · {key}"):
            out.append(f"point {pi}: facts {facts} {q.detail!r}, published {shown}")
        for router in cell["routers"]:
            published = decoder.blocks_for(Selection(ci, pi, router, None))
            ours = q.cookbook.get(router, [])
            if _by_content(published) == _by_content(ours):
                # the same blocks, in the order of the generator version that wrote the module
                layout = _layout(decoder.path)
                if _kinds(published) != _kinds(layout_order(ours, layout)):
                    out.append(f"point {pi} router {router}: order differs ({layout} layout)")
                continue
            drift = _published_drift(published, ours, decoder.router_files(ci, router))
            out.append(f"point {pi} router {router}: " + (drift or "blocks differ"))
    return out


NATS_UNSHIPPED = (
    "drift: NATS shown as `nats-server -c nats.conf` without the nats.conf the command reads "
    "(the module ships none; the recipe declares NATS with no payload limit, for which srt-slurm "
    "2.x starts `nats-server -js -sd /tmp/nats`, as the module's later version 2b484a51 shows)"
)


def _published_drift(published: list[dict], ours: list[dict], files: dict) -> str | None:
    """Why a published cell's blocks cannot be reproduced, when it is the module's own
    inconsistency rather than a rule of ours: the only difference is a NATS block reading a
    config file that the module does not ship."""
    theirs, mine = Counter(_by_content(published)), Counter(_by_content(ours))
    only_theirs = [json.loads(b) for b in theirs - mine]
    only_mine = [json.loads(b) for b in mine - theirs]
    unshipped = not any(name.startswith("nats.conf") for name in files)
    if (
        unshipped
        and [(b["kind"], b["cmd"]) for b in only_theirs] == [("nats", "nats-server -c nats.conf")]
        and [(b["kind"], b["cmd"]) for b in only_mine]
        == [("nats", "nats-server -js -sd /tmp/nats")]
    ):
        return NATS_UNSHIPPED
    return None


@functools.cache
def _tallies() -> dict[str, Tally]:
    tallies: dict[str, Tally] = {}
    for entry in _manifest()["modules"]:
        name = f"{entry['model']}@{entry['commit'][:8]}"
        tally = tallies[name] = Tally()
        path = cached(entry)
        if not path.is_file():
            tally.not_checkable["module absent from the cache"] += 1
            continue
        text = path.read_text(encoding="utf-8")
        decoder = decoder_for_text(text, str(path))
        module = decoder.data
        for ci, sha, key in cell_inputs(module):
            why = _absent(sha, key)
            if why is not None:
                tally.not_checkable[why] += 1
                continue
            tally.checkable += 1
            differences = _check_cell(decoder, module, ci, sha, key)
            if differences and all(d.endswith(NATS_UNSHIPPED) for d in differences):
                tally.drift += 1
            elif differences:
                tally.failures.append(f"{name} cell {ci} ({key} @{sha[:8]}): {differences}")
            else:
                tally.reproduced += 1
    return tallies


def _cache_present() -> bool:
    return any(cached(e).is_file() for e in _manifest()["modules"])


def test_every_checkable_cell_of_every_module_version_is_reproduced() -> None:
    if not _cache_present():
        pytest.skip(
            f"corpus cache absent at {cache_dir()} (every module version and input of "
            f"{MANIFEST.name}): fill it with python tests/corpus.py fill"
        )
    tallies = _tallies()
    report = "\n".join([*(t.line(name) for name, t in tallies.items()), *_versions_absent()])
    print(report)
    failures = [f for t in tallies.values() for f in t.failures]
    assert not failures, report + "\n" + "\n".join(failures)
    assert sum(t.checkable for t in tallies.values()) > 0, report


def _versions_absent() -> list[str]:
    """Per model, the versions the store holds that the corpus lacks, with the reason."""
    held = Counter(entry["model"] for entry in _manifest()["modules"])
    return [
        f"{model}: {held[model]} of {stored} stored versions in the corpus"
        + (f"; {stored - held[model]} not: {UNNAMED_VERSIONS}" if stored > held[model] else "")
        for model, stored in sorted(_manifest()["stored_versions"].items())
    ]


def test_the_manifest_names_every_cells_inputs_or_why_they_are_not_public() -> None:
    """Without the cache too: each (commit, key) a module names has files or a reason, and
    every file listed has its length and digest."""
    manifest = _manifest()
    assert manifest["modules"], "no module version in the manifest"
    for entry in [*manifest["modules"], *manifest["files"]]:
        assert entry["length"] > 0 and len(entry["sha256"]) == 64, entry
        assert len(entry["commit"]) == 40, entry
    listed = {(f["commit"], f["path"]) for f in manifest["files"]}
    for name, entry in manifest["inputs"].items():
        sha = name.split(" ", 1)[0]
        assert ("files" in entry) != ("absent" in entry), name
        for path in entry.get("files", []):
            assert (sha, path) in listed, (name, path)


# --- `sync audit` over the corpus ---------------------------------------------------------------

# The upstream generator's own encoding (an older format's checkpoint precision, its env-pool
# order) is a note of the audit since issue 37.4, no finding: every edit keeps it as published.


def _audits(root: Path) -> dict[str, dict]:
    """``sync audit`` (offline) of every module version of the cache against the InferenceX
    trees the cache holds (a folder of trees named by commit): its JSON report per version."""
    trees = root / "trees"
    for name, entry in _manifest()["inputs"].items():
        sha = name.split(" ", 1)[0]
        for path in entry.get("files", []):
            target = trees / sha[:8] / path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(cached({"repo": INFERENCEX, "commit": sha, "path": path}), target)
    reports = {}
    for module in _manifest()["modules"]:
        version = f"{module['model']}@{module['commit'][:8]}"
        if not cached(module).is_file():
            continue
        cookbook = root / version.replace("/", "_")
        (cookbook / module["model"]).parent.mkdir(parents=True)
        shutil.copyfile(cached(module), cookbook / f"{module['model']}.jsx")
        done = subprocess.run(
            [*forkserver.command(), "audit", "--cookbook", str(cookbook),
             "--inferencex-trees", str(trees), "--offline", "--format", "json",
             "--date", "2026-10-10"],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stderr
        reports[version] = json.loads(done.stdout)
    return reports


def _findings(report: dict) -> list[dict]:
    return [f for m in report["modules"] for f in m["findings"]] + [
        f for c in report["cells"] for f in c.get("findings", [])
    ]


def _explained(finding: dict) -> str | None:
    """Why a finding of the audit on a published cell is the module's own drift, or None."""
    nats = [("nats", "nats-server -c nats.conf", "nats-server -js -sd /tmp/nats")]
    if (
        finding["check"] == "recipe"
        and [(d["block"], d["cookbook"], d["recipe"]) for d in finding["differences"]] == nats
    ):
        return NATS_UNSHIPPED
    return None


def test_sync_audit_over_the_corpus_finds_only_explained_drift(tmp_path: Path) -> None:
    """Every finding of the audit on a published cell is the module's own drift, explained;
    and the audit agrees with the corpus test on which cells reproduce."""
    if not _cache_present():
        pytest.skip(f"corpus cache absent at {cache_dir()}: python tests/corpus.py fill")
    reports, tallies = _audits(tmp_path), _tallies()
    lines, unexplained, total = [], [], Counter[str]()
    for version, report in reports.items():
        findings = _findings(report)
        reasons = Counter((_explained(f) or "UNEXPLAINED") for f in findings)
        total.update(reasons)
        recipe = report["counts"]["recipe"]
        lines.append(
            f"{version}: {len(findings)} findings"
            + (f" ({reasons[NATS_UNSHIPPED]} NATS_UNSHIPPED)" if findings else "")
            + f"; recipe agrees {recipe['agrees']}, differs {recipe['differs']}, "
            f"not checked {recipe['not-checked']}"
        )
        unexplained += [(version, f["message"]) for f in findings if _explained(f) is None]
        # the audit's verdict per cell is the corpus test's: reproduced cells agree, the
        # module's own drift differs
        tally = tallies[version]
        assert (recipe["agrees"], recipe["differs"]) == (tally.reproduced, tally.drift), version
    print(f"sync audit over the corpus: {sum(total.values())} findings, {dict(total)}")
    print("\n".join(lines))
    assert not unexplained, unexplained
