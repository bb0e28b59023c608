"""The cookbook PR body's exclusions table covers only the configs the PR changes, as the
provenance table renders no config for its own sake (issue 35's leftover). Before, it rendered
every config of the model, so a `/use` on one config listed the exclusions of another whose
cells the PR leaves as published. Which configs is decided from the module's two texts (the
default branch's and the PR's), so a later run that renders nothing writes the same body.

Through `sync bot`, real git repositories and the fake GitHub: the published module is the
older-format fixture holding both configs of the bundled sync.yaml; a `/use` on the dspark
config's PR edits only that config (the Dynamo disaggregated config's pin is the one the module
records)."""

from __future__ import annotations

import re

from botworld import MODULE, plain
from conftest import ROOT
from test_bot_edits import LEGACY_FIXTURE, _publish, _use

DSPARK = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
DISAGG = "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"
# Settings only the Dynamo disaggregated config's launches carry (NATS, etcd, Dynamo's logs,
# the disaggregation bootstrap port), never the aggregated dspark config's.
DISAGG_ONLY = ("NATS_SERVER", "ETCD_ENDPOINTS", "DYN_LOG", "--disaggregation-bootstrap-port")


def test_the_exclusions_are_those_of_the_configs_the_event_rendered(world) -> None:
    _publish(world, MODULE, LEGACY_FIXTURE.read_text(encoding="utf-8"))
    out = _use(world, ROOT / "sync.yaml", "2026-10-13T09:00:00Z")
    assert "would" not in out
    [pull] = world.book_pulls()
    body = pull["body"]
    table = body[body.index("## InferenceX-only settings left out") :]
    rows = re.findall(r"^\| `([^`]+)` \| `(?:env|flag)` \|", table, re.M)
    assert "CUDA_VISIBLE_DEVICES" in rows and "--enable-metrics" in rows
    assert not set(DISAGG_ONLY) & set(rows), rows
    assert f"{len(rows)} exclusions applied to these configs" in plain(table)
    assert (
        f"Read from the launches of the configs whose cells this PR changes: {DSPARK}. Not "
        f"read, their cells as published: {DISAGG}."
    ) in plain(table)
    # The provenance table still shows both configs, the other one as its cells show it.
    assert f"| `{DISAGG}` | `Disagg 1P2D" in body and f"| `{DSPARK}` | `Agg TP4` |" in body

    # A later run that renders nothing (the module already shows the pin) writes the same
    # body: the table does not depend on which run wrote it.
    _use(world, ROOT / "sync.yaml", "2026-10-13T09:30:00Z")
    [again] = world.book_pulls()
    assert again["body"] == body
