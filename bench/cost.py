"""`python -m bench cost [--prs 1,10,50,200] [--models 1,5]`: what the bot costs per event at
InferenceX's scale (issue 40.7), run through the workflow's own jobs (gate, one publish job per
model, each on a fresh runner with what the workflow's caches give it: the bot's InferenceX
clone, the ledger, the pinned runs' logs) against the schema-validated fake GitHub of the tests.

For each number of open InferenceX PRs (a quarter of them with an AgentX config, at least one)
and of cookbook models, once every PR is published and found up to date, it measures: a
scheduled run with nothing changed (with the kept clone, and on empty clones as the first run
of a tool commit's week), a push to one PR (the dispatch job hands its number on), a
collaborator's ``/use`` and the same ``/use`` repeated in a new job. One table, per event
(its jobs summed; per job, the largest): GitHub requests made with the ``GITHUB_TOKEN`` (the
budget InferenceX's own workflows share) and in all, writes, git processes, the bytes the
jobs' clones fetched, the InferenceX trees written, the peak of a job's temporary files, and
the run artifacts downloaded. Then requests per kind, and the growth against GitHub's limits:
1,000 requests an hour for ``GITHUB_TOKEN`` per repository (5,000 for an App or a PAT),
content-creating requests 80 a minute and 500 an hour, projected to 4 reconciles an hour (a
tenth of the hourly budget at most).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GITHUB_TOKEN_PER_HOUR = 1000
APP_TOKEN_PER_HOUR = 5000
CONTENT_PER_MINUTE = 80
CONTENT_PER_HOUR = 500
RECONCILES_PER_HOUR = 4


def _numbers(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def _kb(n: int) -> str:
    return f"{n / 1024:,.0f} kB"


def measure(open_prs: int, models: int) -> dict[str, object]:
    """One world of ``open_prs`` PRs and ``models`` models: each event's jobs, summed."""
    sys.path.insert(0, str(ROOT / "tests"))
    from costworld import CostWorld, totals
    from ghserver import GitHubServer

    agentx = max(1, open_prs // 4)
    with tempfile.TemporaryDirectory(prefix="bench-cost-") as tmp:
        server = GitHubServer()
        with server:
            world = CostWorld(
                Path(tmp), server, open_prs=open_prs, agentx=agentx, models=models,
                kept_clone=True,
            )  # fmt: skip
            world.settle()
            events = {"schedule (nothing changed)": world.schedule()}
            kept, world.flow.kept_clone = world.flow.kept_clone, False
            events["schedule, empty clones"] = world.schedule()
            world.flow.kept_clone = kept
            events["push to one PR"] = world.push(0)
            events["/use on one PR"] = world.use(0)
            events["/use again, a new job"] = world.use(0, at="2026-10-13T10:00:00Z")
    rows = {}
    for name, jobs in events.items():
        total = totals(jobs)
        rows[name] = {
            "jobs": len(jobs),
            "github_token": total.infx_requests,
            "all_requests": sum(total.requests.values()),
            "writes": total.writes,
            "kinds": dict(total.requests.most_common()),
            "git": total.git,
            "fetched": total.bytes_fetched,
            "trees": total.trees_written,
            "temp_max": max(j.temp_peak for j in jobs),
            "artifacts": total.artifacts,
            "artifact_bytes": total.artifact_bytes,
        }
    return {"open_prs": open_prs, "agentx": agentx, "models": models, "events": rows}


def report(results: list[dict[str, object]]) -> str:
    lines = [
        "| open PRs (AgentX) | models | event | jobs | GITHUB_TOKEN requests | all requests "
        "| writes | git processes | bytes fetched | trees written | temp per job (max) "
        "| artifacts downloaded |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for name, e in r["events"].items():  # type: ignore[attr-defined]
            lines.append(
                f"| {r['open_prs']} ({r['agentx']}) | {r['models']} | {name} | {e['jobs']} "
                f"| {e['github_token']} | {e['all_requests']} | {e['writes']} | {e['git']} "
                f"| {_kb(e['fetched'])} | {_kb(e['trees'])} | {_kb(e['temp_max'])} "
                f"| {e['artifacts']} ({_kb(e['artifact_bytes'])}) |"
            )
    lines += ["", "Requests per kind (all tokens; writes are POST/PATCH/PUT/DELETE):"]
    for r in results:
        for name, e in r["events"].items():  # type: ignore[attr-defined]
            kinds = ", ".join(f"{k} {n}" for k, n in e["kinds"].items())
            lines.append(f"- {r['open_prs']} PRs, {r['models']} models, {name}: {kinds}")
    lines += ["", _limits(results)]
    return "\n".join(lines)


def _limits(results: list[dict[str, object]]) -> str:
    """The growth against GitHub's limits, and the projection to 4 reconciles an hour."""
    out = ["Against GitHub's limits (per hour unless said):"]
    worst = 0
    for r in results:
        events = r["events"]
        noop = events["schedule (nothing changed)"]  # type: ignore[index]
        push = events["push to one PR"]  # type: ignore[index]
        hourly = RECONCILES_PER_HOUR * noop["github_token"]
        worst = max(worst, hourly)
        writes = push["writes"]
        out.append(
            f"- {r['open_prs']} open PRs, {r['models']} models: {RECONCILES_PER_HOUR} "
            f"reconciles/h = {hourly} GITHUB_TOKEN requests "
            f"({100 * hourly / GITHUB_TOKEN_PER_HOUR:.1f}% of {GITHUB_TOKEN_PER_HOUR:,}, "
            f"{100 * hourly / APP_TOKEN_PER_HOUR:.1f}% of an App's {APP_TOKEN_PER_HOUR:,}); "
            f"a push costs {push['github_token']} ({writes} writes: "
            f"{math.floor(CONTENT_PER_HOUR / max(writes, 1))} such pushes/h before the "
            f"{CONTENT_PER_HOUR}/h content limit, {CONTENT_PER_MINUTE}/min)"
        )
    verdict = "under" if worst < GITHUB_TOKEN_PER_HOUR / 10 else "OVER"
    out.append(
        f"Worst projection: {worst} requests/h, {verdict} a tenth of the GITHUB_TOKEN's "
        f"{GITHUB_TOKEN_PER_HOUR:,}/h."
    )
    return "\n".join(out)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench cost", description=__doc__)
    parser.add_argument("--prs", default="1,10,50,200", help="open InferenceX PRs, comma-separated")
    parser.add_argument("--models", default="1,5", help="cookbook models, comma-separated")
    args = parser.parse_args(argv)
    results = []
    for n in _numbers(args.prs):
        for m in _numbers(args.models):
            print(f"measuring {n} open PRs, {m} models ...", file=sys.stderr, flush=True)
            results.append(measure(n, m))
    print(report(results))
    return 0
