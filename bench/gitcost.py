"""The git, disk and download side of one bot job (issue 40.7), counted by ``syncer.costs``:
`python -m bench gitcost [N ...]` (default 1 10 50 200 open InferenceX PRs, a quarter of them
with an AgentX config of the model, the rest changing docs only).

Run through ``sync bot`` in this process against the tests' local GitHub server and real git
repositories (``tests/botworld.py``), one model's job each:

- ``schedule, fresh``: a scheduled run that changes nothing, on a fresh runner (empty clone);
- ``schedule, kept``: the same with the clone ``actions/cache`` restores;
- ``/use``: a comment pinning a run on one PR, on a fresh runner (its logs downloaded);
- ``/use again``: the same comment repeated on that runner (nothing downloaded again).

GitHub requests are not counted here (the fake's log holds them; ``bench cost`` reads them)."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ("git", "fetches", "fetched kB", "tree kB", "tree peak kB", "downloads", "s")


def main(argv: list[str]) -> int:
    sizes = [int(a) for a in argv] or [1, 10, 50, 200]
    sys.path.insert(0, str(ROOT / "tests"))
    print(f"{'open PRs':>8} {'job':<16} " + " ".join(f"{c:>12}" for c in COLUMNS))
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="bench-gitcost-") as tmp:
            for job, row in _world(Path(tmp), n):
                cells = " ".join(f"{v:>12}" for v in row)
                print(f"{n:>8} {job:<16} {cells}", flush=True)
    return 0


def _world(tmp: Path, n: int) -> list[tuple[str, tuple[Any, ...]]]:
    from botworld import INFX, MODEL, RUN, SEED_KEY, Replay, add_pinned_run
    from ghserver import GitHubServer
    from infxrepo import MASTER, add_key

    schedule = {"schedule": "17 * * * *", "repository": {"full_name": INFX}}
    rows = []
    server = GitHubServer()
    with server:
        replay = Replay(tmp, server)
        infx = replay.infx
        agentx = max(1, n // 4)
        first = None
        for i in range(n):
            if i < agentx:
                infx.write(MASTER, add_key(infx.read(MASTER), f"{SEED_KEY}{i}"))
            else:
                infx.write(f"docs/note-{i}.md", f"note {i}\n")
            head = infx.commit(f"PR {i}")
            infx.checkout(infx.main)
            pull = replay.open_pr(7000 + i, f"branch-{i}", head)
            if first is None:
                first = pull
                add_pinned_run(replay.gh, head, "branch-0")
        assert first is not None

        def job(name: str, clone: str, run: Any) -> None:
            replay.clone = tmp / clone
            counts = _costs().COSTS
            counts.tree_bytes_peak = counts.tree_bytes_held  # this job's peak, from here
            before = _costs().snapshot()
            start = time.perf_counter()
            run()
            spent = _costs().COSTS.since(before)
            rows.append((name, _row(spent, time.perf_counter() - start)))

        def scheduled() -> None:
            replay.send("schedule", schedule, "--model", MODEL)

        scheduled()  # the catch-up: every PR synced once
        job("schedule, fresh", "fresh.git", scheduled)
        job("schedule, kept", "fresh.git", scheduled)
        job("/use", "use.git", lambda: replay.comment(first, f"/use {RUN}", "2026-10-13T09:00:00Z"))
        job(
            "/use again",
            "use.git",
            lambda: replay.comment(first, f"/use {RUN}", "2026-10-13T10:00:00Z"),
        )
    return rows


def _costs() -> Any:
    from syncer import costs

    return costs


def _row(spent: Any, seconds: float) -> tuple[Any, ...]:
    return (
        spent.git_processes,
        spent.fetches,
        round(spent.bytes_fetched / 1000, 1),
        round(spent.tree_bytes_written / 1000, 1),
        round(spent.tree_bytes_peak / 1000, 1),
        spent.artifact_downloads,
        round(seconds, 2),
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
