"""A command started under lowered resource limits (the bounds tests run theirs in at most
1 GB of address space) is forked too, with the client's limits: the same outcome as
``python -m syncer`` under those limits. A limit the fork could not set itself (above the
server's) still runs the real command."""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

import forkserver
import pytest

ROOT = Path(__file__).resolve().parent.parent
MODULE = "cookbook_snippets/deepseek-ai/deepseek-v4_1.jsx"
SAY = {"SYNC_TEST_FORKSERVER_SAY": "1"}
FORKED = "forkserver: forked\n"


@pytest.fixture(autouse=True)
def _server_on() -> None:
    if os.environ.get(forkserver.ENV) == "0":
        pytest.skip("the fork server is off (SYNC_TEST_FORKSERVER=0)")


def _small_files() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def _reencode(command: list[str], out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command, "reencode", MODULE, "--out", str(out)],
        cwd=ROOT, env={**os.environ, **SAY}, capture_output=True, text=True, timeout=120,
        preexec_fn=_small_files,
    )  # fmt: skip


def test_a_command_under_a_lower_file_size_limit_is_forked_and_bound_by_it(
    tmp_path: Path,
) -> None:
    assert (ROOT / MODULE).stat().st_size > 4096  # what it writes cannot fit
    real = _reencode(forkserver.real_command(), tmp_path / "real.jsx")
    forked = _reencode(forkserver.command(), tmp_path / "forked.jsx")
    assert forked.stderr.startswith(FORKED)
    assert real.returncode == forked.returncode == 2
    assert forked.stderr.removeprefix(FORKED) == real.stderr.replace("real.jsx", "forked.jsx")
    assert "File too large" in real.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing half-written, either way


def _identity_with(name: str, limit: int) -> dict[str, object]:
    identity = forkserver._identity()
    limits = identity["limits"]
    assert isinstance(limits, dict)
    identity["limits"] = {**limits, name: [limit, limit]}
    return identity


def test_only_limits_the_fork_can_set_itself_are_forked() -> None:
    own = forkserver._identity()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert forkserver._can_become(own, own)
    assert forkserver._can_become(_identity_with("RLIMIT_NOFILE", min(soft, 64)), own)
    # above the server's hard limit (only a privileged client can have it): the real command
    if hard != resource.RLIM_INFINITY:
        assert not forkserver._can_become(_identity_with("RLIMIT_NOFILE", hard + 1), own)
    assert not forkserver._can_become(_identity_with("RLIMIT_NOFILE", resource.RLIM_INFINITY), own)
    unlimited = {**own, "limits": {**own["limits"], "RLIMIT_AS": [-1, -1]}}  # type: ignore[dict-item]
    assert forkserver._can_become(_identity_with("RLIMIT_AS", 1 << 30), unlimited)
    assert not forkserver._can_become({**own, "executable": "/usr/bin/python0"}, own)
