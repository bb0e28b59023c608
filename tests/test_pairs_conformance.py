"""Every complete recipe <-> published-cell pair: the cookbook form this tool renders from the
recipe at the cell's commit must equal the published cell's decoded blocks (submitted router,
measured KV tier), and so must the derived other router. Reads ../shared/reference; skips when
it is absent."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import pytest

from syncer.cookbook.jsmodule import load_module
from syncer.inferencex.render import RenderedConfig, render_config

ROOT = Path(__file__).resolve().parent.parent
# the same reference directory as the `reference` fixture (SYNC_REFERENCE_DIR honoured), so the
# pair list and the files the tests read never come from two places
_REF = Path(os.environ.get("SYNC_REFERENCE_DIR", ROOT.parent / "shared" / "reference"))


def _pairs() -> list[dict[str, Any]]:
    path = _REF / "pairs" / "PAIRS.json"
    if not path.is_file():
        return []
    return [e for e in json.loads(path.read_text()) if e["status"] == "complete"]


def _params() -> list[Any]:
    return _pairs()


@functools.cache
def _rendered(sha: str, key: str) -> RenderedConfig:
    """A pair's config rendered once for both tests of the pair (they only read it)."""
    return render_config(_REF / "pairs" / "inferencex" / sha[:8], key)


def _matching(rendered: RenderedConfig, override: str | None, concs: list[int]) -> list[Any]:
    """The rendered jobs of a pair's point: its concurrency list, and its override when the
    recipe has them (per-point recipe files have none)."""
    return [
        p
        for p in rendered.points
        if p.concs == concs and (override is None or p.override == override)
    ]


@functools.cache
def _published_cell(snippet_file: str, index: int) -> dict[str, Any]:
    return load_module(_REF / "pairs" / snippet_file).value["cells"][index]


def _describe(expected: list[dict], got: list[dict]) -> str:
    """Per block, which flags or env differ (what the failure message shows)."""
    lines = []
    if [b["kind"] for b in expected] != [b["kind"] for b in got]:
        lines.append(
            f"kinds: published {[b['kind'] for b in expected]} rendered {[b['kind'] for b in got]}"
        )
    for i, (a, b) in enumerate(zip(expected, got, strict=False)):
        ea = {x[0]: x[1:] for x in a.get("args", [])}
        ga = {x[0]: x[1:] for x in b.get("args", [])}
        for flag in sorted(set(ea) | set(ga)):
            if ea.get(flag) != ga.get(flag):
                lines.append(
                    f"block {i} {a['kind']} flag {flag}: "
                    f"published {ea.get(flag)} rendered {ga.get(flag)}"
                )
        if ea == ga and a.get("args") != b.get("args"):
            lines.append(f"block {i} {a['kind']} flag order differs")
        for key in sorted(set(a.get("env", {})) | set(b.get("env", {}))):
            if a.get("env", {}).get(key) != b.get("env", {}).get(key):
                lines.append(
                    f"block {i} {a['kind']} env {key}: published {a['env'].get(key)!r} "
                    f"rendered {b.get('env', {}).get(key)!r}"
                )
        for key in sorted((set(a) | set(b)) - {"args", "env"}):
            if a.get(key) != b.get(key):
                lines.append(
                    f"block {i} {a['kind']} {key}: published {a.get(key)!r} rendered {b.get(key)!r}"
                )
    return "\n".join(lines)


@functools.cache
def _oracle(reference: Path, snippet: str) -> dict[str, Any]:
    """The cookbook decoder's own output for a module version (read once per worker)."""
    return json.loads((reference / "oracle" / f"{snippet}.json").read_text())


def _published_cases(
    reference: Path, pair: dict[str, Any], failures: list[str]
) -> list[tuple[str, list[dict], list[dict]]]:
    """``(what, published blocks, rendered blocks)`` of every router of every point of a pair;
    a point whose tier or submitted router already differs is a failure instead."""
    oracle = _oracle(reference, pair["snippet"])
    rendered = _rendered(pair["sha"], pair["configKey"])
    published = _published_cell(pair["snippetFile"], pair["cellIndex"])["points"]
    out = []
    for pi, concs, override in zip(pair["points"], pair["concs"], pair["overrides"], strict=True):
        points = _matching(rendered, override, concs)
        assert len(points) == 1, f"point {pi}: no rendered job for {override} at {concs}"
        point = points[0]
        measured = published[pi]["kv"]  # the tier the published point was measured at
        if point.kv != measured:
            failures.append(
                f"point {pi} ({override}): measured tier {point.kv}, published {measured}"
            )
            continue
        cases = {
            c["router"]: c
            for c in oracle["cases"]
            if c["cell"] == pair["cellIndex"] and c["point"] == pi and c["kv"] == measured
        }
        if point.submitted not in cases:
            failures.append(
                f"point {pi} ({override}): submitted router {point.submitted} unpublished"
            )
            continue
        assert cases[point.submitted]["cellId"] == pair["cellId"]
        for router, case in cases.items():
            out.append(
                (f"point {pi} ({override}) router {router}", case["blocks"], point.cookbook[router])
            )
    return out


def _by_content(blocks: list[dict]) -> list[dict]:
    """The blocks in an order that depends on their content only (kind, role, then the rest):
    content is compared apart from the order a generator version lays blocks out in."""
    return sorted(
        blocks, key=lambda b: (b["kind"], b.get("role", ""), json.dumps(b, sort_keys=True))
    )


def _kinds(blocks: list[dict]) -> list[str]:
    return [b["kind"] + (f":{b['role']}" if "role" in b else "") for b in blocks]


def _frontend_last(kinds: list[str]) -> list[str]:
    """The block order of the older generator (modules such as deepseek-v4_1 @c4b47c36): the
    Dynamo frontend, with the nginx in front of it, after the workers."""
    front = [k for k in kinds if k in ("nginx", "dynamo-frontend")]
    if "dynamo-frontend" not in front:
        return kinds
    return [k for k in kinds if k not in front] + front


@pytest.mark.parametrize(
    "pair", _params(), ids=lambda e: f"{e['snippet'].split('/')[-1]}-{e['cellId']}"
)
def test_pair_renders_the_published_cell(reference: Path, pair: dict[str, Any]) -> None:
    failures: list[str] = []
    for what, published, rendered in _published_cases(reference, pair, failures):
        if _by_content(published) != _by_content(rendered):
            failures.append(f"{what}:\n" + _describe(_by_content(published), _by_content(rendered)))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(
    "pair", _params(), ids=lambda e: f"{e['snippet'].split('/')[-1]}-{e['cellId']}"
)
def test_pair_block_order_is_a_published_generators_order(
    reference: Path, pair: dict[str, Any]
) -> None:
    """The tool lays blocks out in the newest published order; a module written by the older
    generator shows the same blocks in its own order, which must be that generator's rule
    applied to what the tool renders (never an order of its own)."""
    failures: list[str] = []
    for what, published, rendered in _published_cases(reference, pair, failures):
        shown, ours = _kinds(published), _kinds(rendered)
        if shown not in (ours, _frontend_last(ours)):
            failures.append(f"{what}: published order {shown}, rendered {ours}")
    assert not failures, "\n".join(failures)


def test_the_older_generators_order_moves_only_the_dynamo_frontend_layer() -> None:
    newest = ["etcd", "nats", "nginx", "dynamo-frontend", "mooncake-master", "worker:prefill"]
    assert _frontend_last(newest) == [
        "etcd",
        "nats",
        "mooncake-master",
        "worker:prefill",
        "nginx",
        "dynamo-frontend",
    ]
    routed = ["worker:agg", "sglang-router"]
    assert _frontend_last(routed) == routed


@pytest.mark.parametrize(
    "pair", _params(), ids=lambda e: f"{e['snippet'].split('/')[-1]}-{e['cellId']}"
)
def test_pair_renders_the_published_cell_facts(reference: Path, pair: dict[str, Any]) -> None:
    """Label, detail, GPUs, image, install lines, measured tier and golden AL of each point."""
    cell = _published_cell(pair["snippetFile"], pair["cellIndex"])
    rendered = _rendered(pair["sha"], pair["configKey"])
    found = [
        _matching(rendered, override, concs)
        for override, concs in zip(pair["overrides"], pair["concs"], strict=True)
    ]
    assert all(len(f) == 1 for f in found), "every point matches exactly one rendered job"
    first = found[0][0]
    assert first.label == cell["label"]
    assert cell["detail"] in (first.detail, f"{first.detail} · {pair['configKey']}")
    assert (first.gpus, first.image, first.submitted) == (
        cell["gpus"],
        cell["image"],
        cell["submitted"],
    )
    assert first.install == {r: v["install"] for r, v in cell["routers"].items()}
    assert list(first.cookbook) == list(cell["routers"])
    for pi, (point,) in zip(pair["points"], found, strict=True):
        published = cell["points"][pi]
        assert (point.kv, point.item, point.concs) == (
            published["kv"],
            published["item"],
            published["concs"],
        )


def test_pairs_present_when_reference_is(reference: Path) -> None:
    assert len(_pairs()) >= 8


def test_failure_report_names_each_differing_flag_and_env() -> None:
    published = [{"kind": "worker", "env": {"A": "1", "B": "2"}, "args": [["--x", "1"], ["--y"]]}]
    rendered = [{"kind": "worker", "env": {"A": "1", "C": "3"}, "args": [["--x", "2"], ["--z"]]}]
    assert _describe(published, rendered).splitlines() == [
        "block 0 worker flag --x: published ['1'] rendered ['2']",
        "block 0 worker flag --y: published [] rendered None",
        "block 0 worker flag --z: published None rendered []",
        "block 0 worker env B: published '2' rendered None",
        "block 0 worker env C: published None rendered '3'",
    ]
