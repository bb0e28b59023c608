"""The bot at InferenceX's scale, metered (issue 40.7): N open InferenceX PRs, A of them with an
AgentX config each, spread over M cookbook models (pages of their own), run through the
workflow's own jobs (``botworkflow.Workflow``) against the schema-validated fake GitHub; each
job's GitHub requests (per kind, writes apart, the GITHUB_TOKEN's counted), git processes (every
git the tool runs goes through ``syncer.gitrun``), the bytes its InferenceX clone fetched, the
InferenceX trees it wrote, the peak of its temporary files and the run artifacts it downloaded
(``syncer.costs``). Shared by tests/publish/test_bot_cost.py and
``python -m bench cost``."""

from __future__ import annotations

import re
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from botworkflow import Workflow
from botworld import BOOK_TOKEN, INFX_TOKEN, Replay, git
from conftest import ROOT
from infxrepo import MASTER, add_key

from syncer import costs

CHANGELOG = "inferencex-e2e/perf-changelog.yaml"
FIRST_PR = 5000


def model_path(i: int) -> str:
    return f"bench-org/model-{i}"


def agentx_key(model: int, pr: int) -> str:
    return "-".join(["dsv41flash", "fp4", "gb300", "sglang", "agentic", f"m{model}x{pr}"])


def config_text(models: int) -> str:
    """A sync.yaml of ``models`` models, each with a page of its own and the keys
    ``...-agentic-m<i>x*`` (the example's DeepSeek model's settings otherwise)."""
    main = re.search(r"^  main: (\S+)$", (ROOT / "sync.yaml").read_text(), re.M)
    assert main
    lines = [
        "inferencex:",
        "  repo: https://github.com/SemiAnalysisAI/InferenceX",
        f"  main: {main.group(1)}",
        "models:",
    ]
    for i in range(models):
        lines += [
            f"  - path: {model_path(i)}",
            f"    model: Model-{i}",
            f"    page: docs/cookbook/bench/Model-{i}.mdx",
            "    section: Agentic Long-Context Deployment",
            "    hardware:",
            "      - {id: gb300, label: GB300}",
            "      - {id: b200, label: B200}",
            "    match:",
            f'      keys: ["{agentx_key(i, 0).rsplit("x", 1)[0]}x*"]',
            "    kv_donors:",
            "      hicache: dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg",
            "      mooncake: null",
        ]
    return "\n".join(lines) + "\n"


@dataclass
class Job:
    """What one job of the workflow cost."""

    event: str
    job: str
    requests: Counter[str] = field(default_factory=Counter)  # "GET /pulls" -> count
    infx_requests: int = 0  # made with the GITHUB_TOKEN
    infx_kinds: Counter[str] = field(default_factory=Counter)  # those, per kind
    writes: int = 0
    git: int = 0
    fetched: int = 0  # bytes of the job's InferenceX clone after it
    bytes_fetched: int = 0  # of them, what its fetches brought in (the clone's growth)
    trees_written: int = 0  # bytes of temporary InferenceX trees written (once per blob)
    temp_peak: int = 0  # bytes of temporary files at their peak
    artifacts: int = 0  # run artifacts downloaded
    artifact_bytes: int = 0  # their bytes
    output: str = ""  # what the job's ``sync bot`` printed


# A request's kind: its path with numbers and names of this world left out.
_KIND = [
    (re.compile(r"/repos/[^/]+/[^/]+"), ""),
    (re.compile(r"/\d+"), "/{n}"),
    (re.compile(r"/actions/workflows/[^/]+"), "/actions/workflows/{w}"),
]


def kind(method: str, path: str) -> str:
    for pattern, replacement in _KIND:
        path = pattern.sub(replacement, path)
    return f"{method} {path}"


class MeteredWorkflow(Workflow):
    """``Workflow`` whose every job is metered into ``jobs`` (``event`` names what ran)."""

    def __init__(self, replay: Replay, config: Path, *, kept_clone: bool = False) -> None:
        super().__init__(replay, config, kept_clone=kept_clone)
        self.jobs: list[Job] = []
        self.event = ""

    def invoke(self, job: str, argv: list[str], env: dict[str, str], runner: str) -> Any:
        stats = Job(self.event, job)
        start = len(self.gh.log)
        temp = self.r.tmp / runner / "tmp"
        temp.mkdir(parents=True, exist_ok=True)
        done = threading.Event()

        def watch() -> None:
            while not done.wait(0.05):
                stats.temp_peak = max(stats.temp_peak, costs.disk_usage(temp))

        watcher = threading.Thread(target=watch, daemon=True)
        saved_tmp = tempfile.tempdir
        before = costs.snapshot()  # every git is counted where it starts (syncer.gitrun)
        tempfile.tempdir = str(temp)
        watcher.start()
        try:
            result = super().invoke(job, argv, env, runner)
        finally:
            done.set()
            watcher.join()
            tempfile.tempdir = saved_tmp
            spent = costs.COSTS.since(before)
            stats.git = spent.git_processes
            stats.bytes_fetched, stats.trees_written = spent.bytes_fetched, spent.tree_bytes_written
            stats.artifacts, stats.artifact_bytes = spent.artifact_downloads, spent.artifact_bytes
        for request in self.gh.log[start:]:
            stats.requests[kind(request.method, request.path)] += 1
            stats.writes += request.method != "GET"
            if INFX_TOKEN in (request.auth or ""):
                stats.infx_requests += 1
                stats.infx_kinds[kind(request.method, request.path)] += 1
        stats.fetched = costs.disk_usage(self.r.tmp / runner / "inferencex.git")
        stats.output = result.output
        self.jobs.append(stats)
        return result

    def metered(self, event: str, action: Any, *args: Any) -> list[Job]:
        """``action(*args)`` (one event through the workflow) and the jobs it ran."""
        self.event, start = event, len(self.jobs)
        action(*args)
        return self.jobs[start:]


class CostWorld:
    """``open_prs`` open InferenceX PRs (the first ``agentx`` of them each adding one AgentX
    config, of model ``i % models``; the others only a changelog line), ``models`` cookbook
    models, and the workflow metered."""

    def __init__(
        self,
        tmp: Path,
        server: Any,
        *,
        open_prs: int,
        agentx: int,
        models: int,
        kept_clone: bool = False,
    ) -> None:
        self.replay = Replay(tmp, server)
        self.models = models
        config = tmp / "sync.yaml"
        config.write_text(config_text(models))
        self._add_pages(tmp)
        self.flow = MeteredWorkflow(self.replay, config, kept_clone=kept_clone)
        self.pulls: list[dict[str, Any]] = []
        infx = self.replay.infx
        master = infx.read(MASTER)
        for i in range(open_prs):
            infx.checkout(infx.main)
            if i < agentx:
                infx.write(MASTER, add_key(master, agentx_key(i % models, i)))
            else:
                infx.write(CHANGELOG, f"- entry {i}\n")
            head = infx.commit(f"PR {i}")
            self.pulls.append(self.replay.open_pr(FIRST_PR + i, f"branch-{i}", head))
        infx.checkout(infx.main)

    def _add_pages(self, tmp: Path) -> None:
        """One page per model on the cookbook's main (a copy of the example's page)."""
        work = tmp / "pages"
        git("clone", "--quiet", str(self.replay.bare), str(work), cwd=tmp)
        page = (ROOT / "tests/fixtures/bot/DeepSeek-V4_1.mdx").read_text()
        for i in range(self.models):
            target = work / f"docs/cookbook/bench/Model-{i}.mdx"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(page.replace("DeepSeek-V4.1", f"Model-{i}"))
        git("add", ".", cwd=work)
        git("commit", "--quiet", "-m", "bench pages", cwd=work)
        git("push", "--quiet", "origin", "HEAD:main", cwd=work)

    def settle(self) -> None:
        """Every AgentX PR published (the first schedule), then found up to date once (the
        second, which fills the ledger): what an hourly run sees when nothing moved."""
        self.flow.schedule()
        self.flow.schedule()

    def push(self, index: int = 0) -> list[Job]:
        """A push to PR ``index`` (a changelog line) through the dispatch job."""
        pull = self.pulls[index]
        infx = self.replay.infx
        infx.checkout(pull["commits"][-1])
        infx.write(CHANGELOG, (infx.read(CHANGELOG) if (infx.work / CHANGELOG).exists() else "")
                   + "- a push\n")  # fmt: skip
        self.replay.push(pull, infx.commit("a push"))
        infx.checkout(infx.main)
        return self.flow.metered("push", self.flow.pushed, pull)

    def use(self, index: int = 0, *, at: str = "2026-10-13T09:00:00Z") -> list[Job]:
        """A collaborator's ``/use`` of a run of PR ``index``'s head (the run is added the
        first time; a later ``/use`` names the same run again)."""
        from botworld import INFX, RUN, add_pinned_run

        pull = self.pulls[index]
        if RUN not in self.replay.gh.repo(INFX).runs:
            add_pinned_run(self.replay.gh, pull["commits"][-1], pull["head_ref"])
        return self.flow.metered("/use", self.flow.comment, pull, f"/use {RUN}", at)

    def schedule(self) -> list[Job]:
        return self.flow.metered("schedule", self.flow.schedule)

    def merge_cookbook(self, model: int) -> int:
        """A maintainer merges model ``model``'s bot PR in the cookbook (no event reaches
        InferenceX); its number."""
        from botworld import BOOK

        branch = f"infx-sync/{model_path(model)}"
        [number] = [
            n for n, p in self.replay.gh.repo(BOOK).pulls.items()
            if p["head_ref"] == branch and p["state"] == "open"
        ]  # fmt: skip
        work = self.replay.tmp / f"maintainer-{number}"
        git("clone", "--quiet", str(self.replay.bare), str(work), cwd=self.replay.tmp)
        git("merge", "--quiet", "--no-ff", "-m", "Merge bot PR", f"origin/{branch}", cwd=work)
        git("push", "--quiet", "origin", "main", cwd=work)
        pull = self.replay.gh.repo(BOOK).pulls[number]
        pull["state"], pull["merged"] = "closed", True
        return number


def totals(jobs: list[Job]) -> Job:
    """The jobs of one event added up."""
    out = Job(jobs[0].event if jobs else "", "all")
    for j in jobs:
        out.requests.update(j.requests)
        out.infx_requests += j.infx_requests
        out.writes += j.writes
        out.git += j.git
        out.fetched += j.fetched
        out.bytes_fetched += j.bytes_fetched
        out.trees_written += j.trees_written
        out.temp_peak = max(out.temp_peak, j.temp_peak)
        out.artifacts += j.artifacts
        out.artifact_bytes += j.artifact_bytes
    return out


__all__ = ["BOOK_TOKEN", "CostWorld", "Job", "totals"]
