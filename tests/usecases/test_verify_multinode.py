"""`sync verify` on a multi-node Dynamo disaggregated run (hand-written 2.x sweep log of the
example's 1P2D point): services and the frontend are not logged, two decode workers share a
node, and a disagreement between them is reported."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ROOT, TESTS

from syncer.usecases.verify import verify_config

KEY = "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"
RUN = TESTS / "fixtures" / "runs" / "disagg_1p2d"
INFX = ROOT / "examples" / "inferencex"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_disagg_point_agrees_with_unlogged_services_named() -> None:
    result = verify_config(KEY, inferencex=INFX, run=RUN, cookbook=None, point=0)
    assert result.exit_code == 0
    [point] = result.points
    assert point.concs == [48, 64] and point.verdict == "agree"
    comp = point.logs[0].comparison
    not_logged = sorted((e.block, e.key) for e in comp.entries if e.status == "not-logged")
    assert not_logged == [
        ("dynamo-frontend", "(environment)"),
        ("dynamo-frontend", "command"),
        ("etcd", "process"),
        ("nats", "process"),
    ]
    structure = {(e.block, e.key): e.left for e in comp.entries if e.field == "structure"}
    assert structure[("decode worker", "workers")] == "2"
    assert structure[("dynamo-frontend", "count")] == "1"


def test_whole_config_reports_the_point_without_a_log() -> None:
    result = verify_config(KEY, inferencex=INFX, run=RUN, cookbook=None)
    assert result.exit_code == 1
    assert [p.verdict for p in result.points] == ["agree", "no-log"]


def test_decode_workers_that_disagree_are_reported(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    log = run / "sweep_7700201.log"
    lines = log.read_text().splitlines()
    # the second decode worker (GPUs 2,3) runs with another memory fraction
    i = next(n for n, ln in enumerate(lines) if "Starting decode worker 1" in ln) + 2
    lines[i] = lines[i].replace("--mem-fraction-static 0.85", "--mem-fraction-static 0.8")
    log.write_text("\n".join(lines) + "\n")
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None, point=0)
    assert result.exit_code == 1
    [problem] = result.points[0].logs[0].problems
    assert "decode worker 1 on gb300-r01-n02" in problem
    assert "--mem-fraction-static 0.8 vs 0.85" in problem


SERVICE_LINES = [
    "2026-10-12 09:10:00 [INFO] Starting service etcd (etcd) on gb300-r01-n01: /configs/etcd"
    " --data-dir /tmp/etcd --listen-client-urls http://0.0.0.0:2379"
    " --advertise-client-urls http://10.30.1.1:2379",
    "2026-10-12 09:10:00 [INFO] Waiting for service etcd on gb300-r01-n01 (tcp/2379, timeout=300s)",
    "2026-10-12 09:10:01 [INFO] Service etcd ready on 1 node(s)",
    "2026-10-12 09:10:01 [INFO] Starting service nats (nats) on gb300-r01-n01:"
    " /configs/nats-server -js -sd /tmp/nats",
]


def _services_run(tmp_path: Path, lines: list[str]) -> Path:
    """The fixture run as the 2.x services layer logs it: one `Starting service` line per
    instance instead of the bespoke infrastructure stage."""
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    log = run / "sweep_7700201.log"
    old = log.read_text().splitlines()
    start = next(n for n, ln in enumerate(old) if "Starting infrastructure services" in ln)
    end = next(n for n, ln in enumerate(old) if "etcd is ready" in ln)
    log.write_text("\n".join([*old[:start], *lines, *old[end + 1 :]]) + "\n")
    return run


def test_logged_services_are_compared_with_the_rendering(tmp_path: Path) -> None:
    run = _services_run(tmp_path, SERVICE_LINES)
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None, point=0)
    assert result.exit_code == 0
    comp = result.points[0].logs[0].comparison
    for kind in ("etcd", "nats"):
        entries = [e for e in comp.entries if e.block == kind]
        checked = [e for e in entries if e.field in ("cmd", "flag")]
        assert {e.status for e in checked} <= {"match", "excluded"}, entries
        # the advertised address is a placeholder in the cookbook: excluded, but it agrees
        assert all(e.note == "values agree" for e in checked if e.status == "excluded")
    assert any(e.block == "nats" and e.key == "-js" for e in comp.entries)


def test_a_service_the_log_does_not_start_is_missing(tmp_path: Path) -> None:
    run = _services_run(tmp_path, SERVICE_LINES[:3])
    result = verify_config(KEY, inferencex=INFX, run=run, cookbook=None, point=0)
    assert result.exit_code == 1
    comp = result.points[0].logs[0].comparison
    assert [(e.block, e.status) for e in comp.entries if e.field == "block"] == [
        ("nats", "only-recipe")
    ]


def test_a_service_argv_that_differs_is_reported(tmp_path: Path) -> None:
    lines = [*SERVICE_LINES]
    lines[-1] = lines[-1].replace("-js -sd /tmp/nats", "-c /tmp/nats.conf")
    result = verify_config(
        KEY, inferencex=INFX, run=_services_run(tmp_path, lines), cookbook=None, point=0
    )
    assert result.exit_code == 1
    comp = result.points[0].logs[0].comparison
    bad = {(e.key, e.status) for e in comp.entries if e.block == "nats" and e.status != "match"}
    assert bad >= {("-c", "only-log"), ("-js", "only-recipe")}
