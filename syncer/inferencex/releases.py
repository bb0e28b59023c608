"""Which srt-slurm release a key ran with, and the rules that differ between releases.

Until InferenceX pinned one srt-slurm as a git submodule (``inferencex-e2e/utils/srt-slurm``,
the 2.x line), each cluster's ``runners/launch_<cluster>.sh`` cloned srt-slurm at a ref chosen
by ``if``/``elif`` chains over ``IS_AGENTIC``, ``MODEL_PREFIX``, ``FRAMEWORK``, ``PRECISION``
(and a few more). The script is read as data, never run (:mod:`syncer.inferencex.runner_launch`):
the chains around its ``git clone`` / ``git checkout`` lines are evaluated with the key's own
values. A condition that decides the ref but cannot be evaluated from the master config (a test
of a file, a variable the script computes at run time) is refused, naming the script and line:
the tool never guesses a release. A run's own ``srt-slurm-sha.txt`` wins over both
(``Release.from_run``).

The rules that changed between releases are functions of the release's line (``"1"``: the
``v1.0.x`` tags and the branches the old runners cloned; ``"2"``: the submodule era), each
naming the srt-slurm file and tag it was read from (docs/srt-slurm-rules.md, "Eras").
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from syncer.errors import SyncError
from syncer.inferencex import commits, srt_history
from syncer.inferencex.runner_launch import (
    checkout,
    job_variables,
    runner_scripts,
    script_reads,
)
from syncer.wording import js

if TYPE_CHECKING:
    from syncer.inferencex.master import ConfigEntry

NEWEST_LINE = "2"


@dataclass(frozen=True)
class Release:
    """One srt-slurm release: ``ref`` as named where it was found (tag, branch, commit; a
    fork's ref ends ``" of <url>"``), ``line`` the rule set it follows, ``source`` where it
    came from (for messages). A branch ref resolved at a date (:func:`at_date`) also has
    ``commit`` (the branch then), ``as_of`` (that date) and ``tag`` (the newest release tag
    the commit contains, ``""`` for none); ``unresolved`` says why one was not."""

    ref: str
    line: str
    source: str
    commit: str | None = None
    as_of: str | None = None
    tag: str | None = None
    unresolved: str | None = None

    def describe(self) -> str:
        if self.ref == f"{self.line}.x":
            return f"srt-slurm {self.line}.x rules ({self.source})"
        if self.commit is not None:
            carried = f", carrying {self.tag}" if self.tag else ", before any release tag"
            if self.as_of is None:  # a commit the run recorded
                return f"srt-slurm {self.ref} ({self.line}.x rules{carried}; {self.source})"
            return (
                f"srt-slurm {self.ref} as of {self.as_of} = {self.commit} "
                f"({self.line}.x rules{carried}; {self.source})"
            )
        if self.unresolved is not None:
            return (
                f"srt-slurm {self.ref} (a branch, judged as read at its head: {self.unresolved}; "
                f"{self.line}.x rules; {self.source})"
            )
        return f"srt-slurm {self.ref} ({self.line}.x rules; {self.source})"

    @property
    def branch(self) -> str | None:
        """The branch a runner cloned, when ``ref`` is one (not a tag, a commit or a line)."""
        name, _, _ = self.ref.partition(" of ")
        if self.line != "1" or _TAG.fullmatch(name) or _COMMIT.fullmatch(name):
            return None
        return name if _BRANCH.fullmatch(name) else None

    @property
    def fork(self) -> str | None:
        _, _, url = self.ref.partition(" of ")
        return url or None


_TAG = re.compile(r"v?\d+(?:\.\d+)*")
_COMMIT = re.compile(r"[0-9a-f]{7,40}")
_BRANCH = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")
# a date as given on the command line or read from a log: 2026-08-05, 2026-08-05T15:05:20-05:00
_DATE = re.compile(r"\d{4}-\d\d-\d\d(?:[ T]\d\d:\d\d(?::\d\d)?(?:Z|[+-]\d\d:?\d\d)?)?")


# git reads a date from 1970 to the end of 2099 (approxidate): a later one is read as no date,
# and `rev-list --before` then finds no commit, which would be reported as the branch having
# none at or before it.
_GIT_YEARS = range(1970, 2100)


def date_problem(when: str) -> str | None:
    """Why ``when`` is no date this tool can resolve a branch at, or None: it must be an ISO
    8601 date or date and time, a real one (no month 13), within the years git reads."""
    if not _DATE.fullmatch(when):
        return "is not a date: expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[+HH:MM]"
    try:
        year = datetime.fromisoformat(when).year
    except ValueError as exc:
        return f"is not a date: {exc}"
    if year not in _GIT_YEARS:
        return (
            f"is outside the dates git can resolve a branch at ({_GIT_YEARS[0]}-01-01 to "
            f"{_GIT_YEARS[-1]}-12-31)"
        )
    return None


def check_date(when: str, *, what: str) -> str:
    """``when`` if it is a date :func:`date_problem` accepts; else a SyncError naming ``what``."""
    problem = date_problem(when)
    if problem is not None:
        raise SyncError(f"{what} {js(when)} {problem}")
    return when


def at_date(release: Release, repo: Path | None, when: str | None) -> Release:
    """A branch ref as it was when the run happened: the newest commit of the branch not
    after ``when`` (the InferenceX commit's date, or the run's), read from ``repo`` (a clone
    of srt-slurm, or of the fork named); what ran is that commit, not the branch's head
    today. A tag, a commit or an already resolved branch is returned as it is; a branch that
    cannot be resolved says why (it is then judged by the rules read at its head)."""
    branch = release.branch
    if branch is None or release.commit is not None:
        return release
    why = None
    # a date in another form (git's own, from a log) goes to git as it always did
    problem = date_problem(when) if when is not None and _DATE.fullmatch(when) else None
    if when is None:
        why = "no date to resolve it at (InferenceX is no git checkout; give --as-of)"
    elif problem is not None:
        why = f"the date {js(when)} {problem}"
    elif repo is None:
        why = "no srt-slurm history to resolve it in (give --srt-slurm-repo)"
    if why is not None:
        return dataclasses.replace(release, unresolved=why)
    assert repo is not None and when is not None
    ref = srt_history.branch_ref(repo, branch, release.fork)
    sha = srt_history.newest_before(repo, ref, when) if ref is not None else None
    if ref is None or sha is None:
        missing = "no such branch" if ref is None else f"no commit of it at or before {when}"
        return dataclasses.replace(release, unresolved=f"{repo} has {missing}")
    return dataclasses.replace(
        release, commit=sha, as_of=when, tag=srt_history.newest_tag(repo, sha) or ""
    )


def branch_commit(release: Release | None) -> str | None:
    """The srt-slurm commit applied for a branch a runner cloned, once resolved at a date
    (what a published cell names in its provenance); None for a tag, a pin or an unresolved
    branch."""
    if release is None or release.branch is None or release.as_of is None:
        return None
    return release.commit


def line_of(ref: str, *, pinned: bool) -> str:
    """The rule set of a ref. A submodule pin is the 2.x line (InferenceX's docs of the
    submodule layout: "InferenceX requires srt-slurm 2.0 or newer and `schema: 2` recipes",
    pins named v2.2.1 and later; ../shared/docs/srt-slurm.md section 0); a ref a runner
    cloned is a 1.x release: the ``v1.0.x`` tags and the branches cut from them (every tag
    of NVIDIA/srt-slurm up to 2026-08-21 is v1.0.0 to v1.0.68, the last runner scripts of the
    old layout are of 2026-08-22)."""
    if pinned:
        return NEWEST_LINE
    m = re.fullmatch(r"v?(\d+)(?:\.\d+)*", ref)
    return m.group(1) if m else "1"


DEFAULT = Release(
    f"{NEWEST_LINE}.x", NEWEST_LINE, "the newest: no runner script or submodule pin names a release"
)


def release_for(entry: ConfigEntry, *, submodule_commit: str | None = None) -> Release:
    """The release a key's jobs ran with: the runner script's choice in a tree whose runners
    clone srt-slurm, else the submodule pin, else the newest rules."""
    chosen = _scripts_release(entry)
    if chosen is not None:
        return chosen
    if submodule_commit:
        return Release(
            submodule_commit,
            NEWEST_LINE,
            "pinned by the InferenceX checkout's submodule inferencex-e2e/utils/srt-slurm",
        )
    return DEFAULT


def deciding_scripts(entry: ConfigEntry) -> list[Path]:
    """The key's runner scripts that choose its srt-slurm release (each clones one for the
    key, or cannot be decided), with the files each sources or reads its version from, so a
    change to one changes the key's render; none when its scripts clone nothing (the
    submodule pin decides)."""
    out = []
    for script in runner_scripts(entry):
        try:
            decides = script_release(script, job_variables(entry), root=entry.root_dir) is not None
        except SyncError:
            decides = True  # the render refuses it, naming the script and line
        if decides:
            out += [script, *script_reads(script, entry.root_dir)]
    return out


def _scripts_release(entry: ConfigEntry) -> Release | None:
    """The release the key's runner scripts clone; None when none clones one. A label whose
    runners run scripts cloning different releases is refused: which one ran depends on the
    runner a job got."""
    chosen = {}
    for script in runner_scripts(entry):
        release = script_release(script, job_variables(entry), root=entry.root_dir)
        if release is not None:
            chosen[script] = release
    if len({r.ref for r in chosen.values()}) > 1:
        each = "; ".join(f"{s.name}: {r.describe()}" for s, r in chosen.items())
        raise SyncError(
            f"{entry.key}: runner label {entry.runner} runs launch scripts that clone "
            f"different srt-slurm releases ({each}); which ran depends on the runner a job got",
            path=entry.path,
        )
    return next(iter(chosen.values()), None)


def from_run(sha: str, fallback: Release, repo: Path | None = None) -> Release:
    """The run's own ``srt-slurm-sha.txt`` wins over what the checkout says; its line is the
    one the checkout implies (a commit alone does not say which line it belongs to). With a
    clone of srt-slurm holding that commit, the release tag it carried is read too, so the
    rules that changed between tags follow what the run checked out."""
    source = "recorded by the run's srt-slurm-sha.txt"
    if repo is not None and fallback.line == "1" and commits.resolve(repo, sha) is not None:
        tag = srt_history.newest_tag(repo, sha) or ""
        return Release(sha, fallback.line, source, commit=sha, tag=tag)
    return Release(sha, fallback.line, source)


def script_release(
    script: Path, variables: dict[str, str], *, root: Path | None = None
) -> Release | None:
    """The release ``script`` checks out for a job with these ``variables`` (see
    :func:`syncer.inferencex.runner_launch.checkout`); None when it clones no srt-slurm."""
    found = checkout(script, variables, root=root)
    if found is None:
        return None
    read = f", the ref read from {found.ref_file}" if found.ref_file else ""
    return Release(
        found.ref + found.fork,
        line_of(found.ref, pinned=False),
        f"checked out by {found.script} line {found.line}{read}",
    )


# --- rules that changed between releases ---------------------------------------------------

FRONTEND_PUBLIC_PORT = 8000  # src/srtctl/ports.py @v1.0.38 (same value in 2.x)
FRONTEND_INTERNAL_PORT = 8180  # src/srtctl/ports.py @v1.0.38: the frontends' port behind nginx
# FrontendConfig.num_additional_frontends in src/srtctl/core/schema.py @v1.0.38 (line 1468)
_DEFAULT_ADDITIONAL_FRONTENDS = 9


@dataclass(frozen=True)
class FrontendTopology:
    """Where a job's frontends run: ``nginx`` in front on the head node, ``count`` frontend
    processes listening on ``port``; ``on_head``: the (single) frontend runs on the head node,
    the node of the first worker."""

    nginx: bool
    count: int
    port: int
    on_head: bool


def multiple_frontends(frontend: dict[str, Any], line: str) -> bool:
    """``frontend.enable_multiple_frontends``, true when unset in both lines: ``FrontendConfig``
    in src/srtctl/core/schema.py line 1467 @v1.0.38 (every v1.0.x tag), and the 2.x schema
    (``FrontendConfig`` in docs/schema-reference.md @NVIDIA/srt-slurm db4a0654, generated from
    the schema). InferenceX's 2.x recipes set it false where they want one frontend."""
    del line  # the same default in every release read
    value = frontend.get("enable_multiple_frontends")
    if value is None:
        return True
    return bool(value)


def _wanted_frontends(frontend: dict[str, Any]) -> int:
    extra = frontend.get("num_additional_frontends", _DEFAULT_ADDITIONAL_FRONTENDS)
    if not isinstance(extra, int) or isinstance(extra, bool):
        extra = _DEFAULT_ADDITIONAL_FRONTENDS
    return extra + 1


def frontend_topology(frontend: dict[str, Any], worker_nodes: int, line: str) -> FrontendTopology:
    """The frontend layer srt-slurm stands up, as its code does it (what a run's logs show):
    ``_compute_frontend_topology`` in src/srtctl/cli/mixins/frontend_stage.py (lines 74-131
    @v1.0.38; the same rule in every tag from v1.0.0 to v1.0.68 and in 2.x, e.g. NVIDIA/srt-slurm
    @3b909b5d):

    * ``len(runtime.nodes.worker) == 1`` or multiple frontends off: one frontend on the head
      node on the public port, no nginx;
    * else nginx on the head and ``min(num_additional_frontends + 1, len(other_nodes))``
      frontends on the internal port, ``other_nodes`` being the worker nodes but the head.

    ``worker_nodes`` is ``runtime.nodes.worker``: the job's allocation (``#SBATCH
    --nodes={{ total_nodes }}``, templates/job_script_minimal.j2 line 44 @v1.0.38, from the
    recipe's nodes plus one for ``infra.etcd_nats_dedicated_node``, cli/submit.py lines
    448-452) less that dedicated etcd/NATS node (``Nodes.from_slurm``, core/runtime.py lines
    92-110 @v1.0.38: infra ``nodelist[0]``, head ``nodelist[1]``, workers ``nodelist[1:]``). The
    head is the first worker node either way, so the other nodes are ``worker_nodes - 1``.
    Neither the runner script nor srt-slurm asks SLURM for more nodes than that (``srtctl apply
    -f`` with ``--tags``/``--no-preflight`` only, runners/launch_gb300-nv.sh @InferenceX
    eb1e4107)."""
    if worker_nodes <= 1 or not multiple_frontends(frontend, line):
        return FrontendTopology(nginx=False, count=1, port=FRONTEND_PUBLIC_PORT, on_head=True)
    count = min(_wanted_frontends(frontend), worker_nodes - 1)
    return FrontendTopology(nginx=True, count=count, port=FRONTEND_INTERNAL_PORT, on_head=False)


def published_frontend_layer(
    frontend: dict[str, Any], worker_nodes: int, line: str, *, dedicated_infra: bool = False
) -> FrontendTopology:
    """The frontend layer as the published cells show it (the cookbook form). No srt-slurm
    code yields it where it departs from :func:`frontend_topology` (the upstream generator's
    own reading of the recipe; docs/srt-slurm-rules.md, "Where the published cells depart
    from srt-slurm's code"), so this is kept apart from what ran and used for nothing else:

    * the count behind nginx is ``min(num_additional_frontends + 1, worker_nodes + 1)`` with
      etcd/NATS on a worker node, ``min(num_additional_frontends + 1, worker_nodes)`` with
      ``dedicated_infra`` (``infra.etcd_nats_dedicated_node``): one frontend per worker node
      and one more on a head of its own unless that node is etcd/NATS's. srt-slurm places
      ``min(num_additional_frontends + 1, worker_nodes - 1)`` in every tag v1.0.0 to v1.0.68
      and on main (frontend_stage.py lines 110-117 @v1.0.38, the same lines @v1.0.50), and
      ``min(..., worker_nodes)`` on the branches that add the head as the last candidate
      (``candidate_nodes = [*other_nodes, head]``, frontend_stage.py lines 116-124 @branch
      kylliang/agentx-v1-srt-slurm-main-refresh); no code gives one more. The cells of three
      models agree with this rule and with no other: GLM-5.2 GB200 at v1.0.50 (etcd/NATS on
      a worker node, the default 10 wanted): 2 nodes -> 3, 6 -> 7, 8 -> 9; GLM-5.2 H200 2P2D
      (dedicated) 4 -> 4; Qwen3.5 GB300 1P1D at v1.0.38 (dedicated, 5 wanted) 2 -> 2 (the
      one-node Dynamo jobs below agree too);
    * a Dynamo frontend with multiple frontends on is shown behind nginx with that count even
      on a one-node job, where srt-slurm runs one frontend on the head on the public port and
      no nginx (``len(nodes) == 1`` takes the single-frontend branch, frontend_stage.py lines
      91-106 @v1.0.38, the same in every tag to v1.0.68): GLM-5.2 B200 aggregated (etcd/NATS
      on the head, the default ten wanted) and H200 aggregated (``etcd_nats_dedicated_node:
      false``, ten) show nginx and 2; DeepSeek-V4 H200 aggregated (dedicated, five wanted)
      nginx and 1; the one-node DeepSeek-V4 B200/B300 aggregated cells, whose recipes set
      ``enable_multiple_frontends: false``, show one frontend on 8000 and no nginx;
    * 1.x with multiple frontends on (the default): the router or frontend is shown on the
      internal port off the head node even for a one-node job, where v1.0.38 runs it on the
      head on the public port (frontend_stage.py lines 91-106) and the runner asks for one
      node (Qwen3.5 GB300 aggregated TP2 at eb1e4107: router on 8180 reaching the worker by
      its node address). An SGLang router gets no nginx where srt-slurm ran none.

    The cells were rendered by the generator with a later srt-slurm than the run's, not
    mirrored from it: the 1P1D cell's nginx.conf (Qwen/qwen3.5 @652614ed) has the keepalive
    lines templates/nginx.conf.j2 first has at v1.0.40. The node count and the settings are
    srt-slurm's, only the choices above are the cells'. (That a router on the head reaches a
    lone worker at ``127.0.0.1`` is the cookbook's too: srt-slurm always addresses a worker by
    its node's IP, frontends/sglang.py line 103 @v1.0.38 and ``collect_workers`` in
    frontends/static_router.py @NVIDIA/srt-slurm 1630a9ac.)"""
    ran = frontend_topology(frontend, worker_nodes, line)
    multiple = multiple_frontends(frontend, line)
    off_head = multiple and (line == "1" or worker_nodes >= 2)
    # a Dynamo frontend is shown behind nginx whenever several are wanted, one node or more
    nginx = ran.nginx or (multiple and _dynamo_frontend(frontend))
    if not (off_head or nginx):
        return ran
    count = 1
    if nginx:
        nodes = max(worker_nodes, 1) + (0 if dedicated_infra else 1)
        count = min(_wanted_frontends(frontend), nodes)
    return FrontendTopology(nginx=nginx, count=count, port=FRONTEND_INTERNAL_PORT, on_head=False)


def _dynamo_frontend(frontend: dict[str, Any]) -> bool:
    """``frontend.type`` is Dynamo's, the default (``FrontendConfig`` in src/srtctl/core/schema.py
    line 1444 @v1.0.38: "dynamo" (default), "sglang", "trtllm_serve" or "vllm")."""
    kind: object = frontend.get("type", "dynamo")
    return kind == "dynamo"


# First release whose SGLang backend passes its own --nccl-port (and drops a recipe's):
# src/srtctl/backends/sglang.py has none up to v1.0.57 and both from v1.0.58 on (lines
# 317-319 and 360 @v1.0.58).
_NCCL_PORT_FROM = (1, 0, 58)
# Branches the old runners cloned, as read at their heads (only for a branch that could not be
# resolved at the run's date): sa-submission-q2-2026 (head deb1dfd9, cut before v1.0.0) injects
# no NCCL port; main's head carries v1.0.68, which does.
_BRANCH_NCCL_PORT = {"sa-submission-q2-2026": False}


def _version(tag: str) -> tuple[int, ...] | None:
    m = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)", tag)
    return tuple(int(g) for g in m.groups()) if m else None


def injects_nccl_port(release: Release) -> bool:
    """Whether that release's workers get srt-slurm's allocated ``--nccl-port``: a tag by its
    number; a branch resolved at the run's date by the newest tag its commit contains (none:
    cut before v1.0.0, so none); an unresolved branch as read at its head."""
    if release.line != "1":
        return True
    ref = release.ref.split(" ", 1)[0]
    version = _version(ref)
    if version is None and release.commit is not None:
        version = _version(release.tag or "") or (0, 0, 0)
    if version is not None:
        return version >= _NCCL_PORT_FROM
    return _BRANCH_NCCL_PORT.get(ref, True)


def allocated_gpus(total_nodes: int, recipe_gpus_per_node: int, cluster_gpus: int | None) -> int:
    """The GPUs a cell is published with: the job's worker nodes, each with every GPU the
    cluster's nodes have (:func:`cluster_gpus_per_node`), even when the recipe uses fewer.

    This is the cookbook's measure, not what srt-slurm asked SLURM for: v1.0.38 writes
    ``#SBATCH --gpus-per-node={{ gpus_per_node }}`` from the recipe and ``--exclusive`` only
    when srtslurm.yaml sets ``use_exclusive_sbatch_directive`` (default false: ``ClusterConfig``
    in src/srtctl/core/schema.py line 193, cli/submit.py line 480, job_script_minimal.j2
    lines 52-60), which the runners do not set. The InferenceX recipes of that era ask for
    ``sbatch_directives: {mem: '0'}`` (all of each node's memory), so no other job shares a
    node; and published cells count whole nodes in every era, single-node runs launched
    without srt-slurm included (B300 TP2 cells: 8 GPUs)."""
    return total_nodes * max(recipe_gpus_per_node, cluster_gpus or 0)
