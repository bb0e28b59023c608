"""`sync verify KEY --run <run_id>`: the run's server-log artifacts downloaded from the fake
GitHub (validated against GitHub's OpenAPI description), kept in the user cache, verified; a
second verify of the same run downloads nothing (issue 37.2)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from botworld import run_artifacts
from conftest import ROOT
from ghserver import GitHubServer, serving

from syncer.cli import main

KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
INFX = "SemiAnalysisAI/InferenceX"
TOKEN = "ghs_" + "R5" * 18
RUN = 41000000001
EXAMPLE = ("--inferencex", str(ROOT / "examples/inferencex"),
           "--cookbook", str(ROOT / "cookbook_snippets"))  # fmt: skip


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[GitHubServer]:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("SYNC_API_PAUSE", "0")
    monkeypatch.delenv("INFX_TOKEN", raising=False)
    with serving(TOKEN, "maintainer", INFX) as srv:
        srv.model.add_run(INFX, RUN, head_sha="6b07b8e6" * 5, artifacts=run_artifacts())
        yield srv


def verify(capsys: pytest.CaptureFixture[str], server: GitHubServer, *args: str) -> tuple:
    with pytest.raises(SystemExit) as exc:
        main(["verify", KEY, *args, *EXAMPLE, "--api-url", server.base_url])
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def downloads(server: GitHubServer) -> list[str]:
    return [r.path for r in server.model.log if "/zip" in r.path or "/artifacts" in r.path]


def test_a_run_id_is_downloaded_once_cached_and_verified(
    capsys: pytest.CaptureFixture[str],
    server: GitHubServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    code, out, err = verify(capsys, server, "--run", str(RUN))
    assert code == 0, err
    cached = tmp_path / "cache" / "infx-cookbook-sync" / "runs" / "SemiAnalysisAI_InferenceX"
    assert f"read run {RUN}: {cached / str(RUN)}\n" in out
    assert out.startswith(f"sync verify {KEY}: all 7 points agree\n")
    assert err == f"run {RUN} of {INFX}: server logs downloaded into {cached / str(RUN)}\n"
    fetched = downloads(server)
    zips = sorted(p.name for p in (cached / str(RUN)).glob("*.zip"))
    assert len(zips) == 7 and all(z.startswith("server_logs_") for z in zips)  # no result zip
    code, out, err = verify(capsys, server, "--run", f"{RUN}/attempts/1")
    assert code == 0
    assert downloads(server) == fetched  # the second verify asked GitHub for nothing
    kept = cached / str(RUN)
    assert err == f"run {RUN}/attempts/1 of {INFX}: server logs read from the cache at {kept}\n"
    assert f"read run {RUN}/attempts/1: " in out
    monkeypatch.delenv("GITHUB_TOKEN")
    monkeypatch.delenv("GH_TOKEN", raising=False)
    code, _, _ = verify(capsys, server, "--run", str(RUN))
    assert code == 0  # once downloaded, no token is needed to read it again


def test_a_run_id_without_a_token_or_logs_is_one_error_line(
    capsys: pytest.CaptureFixture[str], server: GitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GITHUB_TOKEN", "GH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    code, out, err = verify(capsys, server, "--run", str(RUN))
    assert (code, out) == (2, "")
    assert err == (
        f"error: --run {RUN}: a run id is downloaded from {INFX} with a token: set GITHUB_TOKEN "
        "(or INFX_TOKEN), or pass the downloaded run's folder or archive\n"
    )
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    server.model.add_run(INFX, 42, head_sha="a" * 40, artifacts={"bmk_agentic_results": b"{}"})
    code, out, err = verify(capsys, server, "--run", "42")
    assert (code, out) == (2, "")
    assert err == (
        f"error: run 42 of {INFX} has no unexpired server-log artifact (server_logs_*, "
        "multinode_server_logs_*) to verify against\n"
    )
