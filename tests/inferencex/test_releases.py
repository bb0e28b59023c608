"""Issue 21: which srt-slurm release a key ran with (its runner script read as data, the
submodule pin, the run's srt-slurm-sha.txt) and the rules that differ between releases, on our
own old-layout tree (tests/fixtures/eras: one runner branch per era rule) and through the real
commands."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import forkserver
import pytest
from conftest import TESTS
from srthistory import copied_history, dated_commit, dated_git

from syncer.errors import SyncError
from syncer.inferencex.master import load_master
from syncer.inferencex.releases import (
    DEFAULT,
    FRONTEND_INTERNAL_PORT,
    FRONTEND_PUBLIC_PORT,
    Release,
    allocated_gpus,
    from_run,
    frontend_topology,
    injects_nccl_port,
    line_of,
    published_frontend_layer,
    release_for,
    script_release,
)
from syncer.inferencex.render import render_config
from syncer.inferencex.renders import Renders, RunFacts
from syncer.inferencex.runner_launch import cluster_gpus_per_node
from syncer.locations import bundled_inferencex

ERAS = TESTS / "fixtures" / "eras" / "inferencex"
SCRIPT = "runners/launch_gb300-test.sh"
AGG = "m2-fp4-gb300-dynamo-sglang-agentic-agg"
DISAGG = "m2-fp4-gb300-dynamo-sglang-agentic-disagg"


def _entry(key: str):
    return load_master(ERAS).entry(key)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The real command, as a user runs it (exit codes included)."""
    return subprocess.run(
        [*forkserver.command(), *args], capture_output=True, text=True, timeout=120
    )


# --- point 1: which release ran ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "ref", "line"),
    [
        # clone, then `git checkout <tag>` in the model's branch
        (AGG, "v1.0.38", 26),
        # a nested `if` on the precision inside the model's branch
        ("m3-fp8-gb300-dynamo-sglang-agentic-agg", "v1.0.25", 32),
        ("m3-fp4-gb300-dynamo-sglang-agentic-agg", "sa-submission-q2-2026", 34),
        # `git clone --branch <tag>` and no checkout after it
        ("m4-fp4-gb300-dynamo-sglang-agentic-agg", "v1.0.36", 37),
        # the final `else`
        ("m6-fp4-gb300-dynamo-sglang-agentic-agg", "main", 51),
    ],
)
def test_the_runner_branch_the_key_takes_names_the_release(key: str, ref: str, line: int) -> None:
    release = release_for(_entry(key))
    assert (release.ref, release.line) == (ref, "1")
    assert release.source == f"checked out by {SCRIPT} line {line}"


def test_a_ref_held_in_a_variable_of_a_fork_is_resolved_and_the_fork_named() -> None:
    release = release_for(_entry("m7-fp4-gb300-dynamo-sglang-agentic-agg"))
    assert release.ref == (
        "0123456789abcdef0123456789abcdef01234567 of https://github.com/example-fork/srt-slurm.git"
    )
    assert release.source == f"checked out by {SCRIPT} line 47"


def test_an_undecidable_condition_is_refused_naming_script_and_line() -> None:
    # m5's branch asks a variable the runner computes from the recipe at run time
    with pytest.raises(SyncError) as err:
        release_for(_entry("m5-fp4-gb300-dynamo-sglang-agentic-agg"))
    assert (err.value.path, err.value.line) == (SCRIPT, 39)
    assert "$USES_POWER" in err.value.message and "cannot decide" in err.value.message


def test_the_refusal_reaches_the_user_through_sync_render() -> None:
    out = _cli("render", "m5-fp4-gb300-dynamo-sglang-agentic-agg", "--inferencex", str(ERAS))
    assert out.returncode == 2
    assert f"{SCRIPT}:39: cannot decide which srt-slurm this runner clones" in out.stderr


def test_a_variable_ref_without_a_plain_assignment_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "launch.sh"
    script.write_text(
        'PIN="$(cat pin.txt)"\n'
        'git clone https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"\n'
        'git checkout "$PIN"\n'
    )
    with pytest.raises(SyncError) as err:
        script_release(script, {})
    assert err.value.line == 3 and "cannot resolve" in err.value.message


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ('[[ "$IS_AGENTIC" == "1" && ( $MODEL_PREFIX == "x" || $MODEL_PREFIX == "m" ) ]]', True),
        ('[[ ! $PRECISION == "fp4" ]]', True),
        ('[[ $PRECISION != "fp8" ]]', False),
        ('[[ "${SPEC_DECODING:-}" == "mtp" ]]', False),
        ("[[ $FRAMEWORK == 'sglang' ]]", True),
    ],
)
def test_conditions_are_evaluated_with_the_keys_values(
    tmp_path: Path, condition: str, expected: bool
) -> None:
    script = tmp_path / "launch.sh"
    script.write_text(
        f"if {condition}; then\n"
        "    git clone --branch v1.0.1 https://github.com/NVIDIA/srt-slurm.git d\n"
        "else\n"
        "    git clone --branch v1.0.2 https://github.com/NVIDIA/srt-slurm.git d\n"
        "fi\n"
    )
    variables = {
        "IS_AGENTIC": "1",
        "MODEL_PREFIX": "m",
        "PRECISION": "fp8",
        "FRAMEWORK": "sglang",
        "SPEC_DECODING": "none",
    }
    chosen = script_release(script, variables)
    assert chosen is not None and chosen.ref == ("v1.0.1" if expected else "v1.0.2")


@pytest.mark.parametrize("condition", ['[[ -f "$CONFIG_FILE" ]]', "command -v srtctl"])
def test_file_tests_and_commands_cannot_decide(tmp_path: Path, condition: str) -> None:
    script = tmp_path / "launch.sh"
    script.write_text(
        f"if {condition}; then\n"
        "    git clone --branch v1.0.1 https://github.com/NVIDIA/srt-slurm.git d\n"
        "fi\n"
    )
    with pytest.raises(SyncError) as err:
        script_release(script, {})
    assert err.value.line == 1


def test_a_script_cloning_no_srt_slurm_names_no_release(tmp_path: Path) -> None:
    script = tmp_path / "launch.sh"
    script.write_text("git clone https://github.com/example/other.git d\ngit checkout v9\n")
    assert script_release(script, {}) is None


def test_without_runner_scripts_the_submodule_pin_then_the_newest_rules_apply() -> None:
    entry = load_master(bundled_inferencex()).entry("dsv41flash-fp4-gb300-sglang-agentic-dspark")
    assert release_for(entry) == DEFAULT
    pinned = release_for(entry, submodule_commit="4be1c0d2" * 5)
    assert (pinned.ref, pinned.line) == ("4be1c0d2" * 5, "2")
    assert "submodule" in pinned.source


def test_the_runs_own_record_wins_and_keeps_the_checkouts_line() -> None:
    run = from_run("abc1234", release_for(_entry(AGG)))
    assert (run.ref, run.line) == ("abc1234", "1")
    assert "srt-slurm-sha.txt" in run.source


def test_lines_of_refs() -> None:
    assert line_of("v1.0.38", pinned=False) == "1"
    assert line_of("v2.3.0", pinned=False) == "2"
    assert line_of("sa-submission-q2-2026", pinned=False) == "1"
    assert line_of("sa-submission-q2-2026", pinned=True) == "2"


def test_render_and_its_json_say_which_release_was_applied() -> None:
    out = _cli("render", AGG, "--inferencex", str(ERAS), "--point", "0", "--router", "sglang")
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first == f"# rules: srt-slurm v1.0.38 (1.x rules; checked out by {SCRIPT} line 26)"
    doc = json.loads(_cli("render", AGG, "--inferencex", str(ERAS), "--format", "json").stdout)
    assert doc["srt_slurm"] == {
        "ref": "v1.0.38",
        "line": "1",
        "source": f"checked out by {SCRIPT} line 26",
    }
    forced = _cli("render", AGG, "--inferencex", str(ERAS), "--srt-slurm", "2", "--point", "0")
    assert forced.stdout.splitlines()[0] == "# rules: srt-slurm 2.x rules (chosen by --srt-slurm)"


# --- point 2: that release's rules ------------------------------------------------------------


def _point(key: str, index: int = 0):
    return render_config(ERAS, key).points[index]


def _block(blocks: list[dict], kind: str, role: str | None = None) -> dict:
    return next(b for b in blocks if b["kind"] == kind and (role is None or b["role"] == role))


def test_1x_router_of_a_one_node_job_is_shown_on_the_internal_port_off_the_head() -> None:
    point = _point(AGG)
    # what v1.0.38 ran (and its logs show): one router on the head, public port, the worker
    # addressed by its node's IP (frontends/sglang.py: get_hostname_ip)
    ran = _block(point.raw["sglang"], "sglang-router")
    assert ["--port", "8000"] in ran["args"]
    assert ["--worker-urls", "http://$AGG_0_HEAD_IP:6100"] in ran["args"]
    assert not any(b["kind"] == "nginx" for b in point.raw["sglang"])
    # what the published cells of that era show
    router = _block(point.cookbook["sglang"], "sglang-router")
    assert ["--port", "8180"] in router["args"]
    assert ["--worker-urls", "http://$AGG_0_HEAD_IP:30000"] in router["args"]
    assert not any(b["kind"] == "nginx" for b in point.cookbook["sglang"])
    # the derived Dynamo arm never ran: the newest rules (public port, no nginx)
    assert ["--http-port", "8000"] in _block(point.cookbook["dynamo"], "dynamo-frontend")["args"]


def test_the_same_recipe_under_2x_rules_keeps_the_router_on_the_head() -> None:
    point = render_config(ERAS, AGG, version="2").points[0]
    router = _block(point.cookbook["sglang"], "sglang-router")
    assert ["--port", "8000"] in router["args"]
    assert ["--worker-urls", "http://127.0.0.1:30000"] in router["args"]


def test_a_job_holds_whole_nodes_of_its_cluster() -> None:
    # the recipe uses 2 GPUs of a node; the runner's srtslurm.yaml says nodes have 4
    assert cluster_gpus_per_node(_entry(AGG)) == 4
    assert _point(AGG).gpus == 4
    assert _point(DISAGG).gpus == 8  # two worker nodes; the dedicated etcd node serves no model


def test_bootstrap_ports_are_placement_for_both_roles_whoever_set_them() -> None:
    point = _point(DISAGG)
    raw = point.raw["dynamo"]
    prefill = [a for a in _block(raw, "worker", "prefill")["args"] if "bootstrap" in a[0]]
    decode = [a for a in _block(raw, "worker", "decode")["args"] if "bootstrap" in a[0]]
    # srt-slurm's allocated port goes first; the recipe's own follows and wins in argparse
    assert prefill == [
        ["--disaggregation-bootstrap-port", "7200"],
        ["--disaggregation-bootstrap-port", "31000"],
    ]
    assert decode == [["--disaggregation-bootstrap-port", "31000"]]
    for router, blocks in point.cookbook.items():
        for role in ("prefill", "decode"):
            shown = [a for a in _block(blocks, "worker", role)["args"] if "bootstrap" in a[0]]
            assert shown == [["--disaggregation-bootstrap-port", "8998"]], (router, role)


def test_1x_nginx_fronts_several_dynamo_frontends_on_the_internal_port() -> None:
    blocks = _point(DISAGG).cookbook["dynamo"]
    assert [b["kind"] for b in blocks][:4] == ["etcd", "nats", "nginx", "dynamo-frontend"]
    frontend = _block(blocks, "dynamo-frontend")
    # published: num_additional_frontends + 1 = 4, capped by the job's two worker nodes
    assert frontend["count"] == 2 and ["--http-port", "8180"] in frontend["args"]
    # what v1.0.38 ran: the dedicated etcd node is no worker, and the head (the prefill node)
    # runs nginx, so one frontend on the decode node
    ran = _point(DISAGG).raw["dynamo"]
    assert [b["kind"] for b in ran].count("nginx") == 1
    assert _block(ran, "dynamo-frontend")["count"] == 1


def test_an_sglang_router_deployment_shows_no_dynamo_plane_though_1x_starts_one() -> None:
    point = _point(AGG)
    raw_kinds = [b["kind"] for b in point.raw["sglang"]]
    assert {"etcd", "nats"} <= set(raw_kinds)  # srt-slurm 1.x launches them for every frontend
    assert "ETCD_ENDPOINTS" in _block(point.raw["sglang"], "worker")["env"]
    shown = point.cookbook["sglang"]
    assert [b["kind"] for b in shown] == ["worker", "sglang-router"]
    assert not any(k.startswith(("DYN_", "ETCD", "NATS")) for k in shown[0]["env"])


def test_dynamo_built_from_a_pinned_commit_is_named_in_the_install_lines() -> None:
    assert _point(DISAGG).install["dynamo"] == [
        "# Dynamo built from source at https://github.com/ai-dynamo/dynamo/commit/"
        "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
    ]


@pytest.mark.parametrize(
    ("frontend", "nodes", "line", "expected"),
    [
        # srt-slurm's own rule (frontend_stage.py): one worker node, or multiple frontends
        # off: one frontend on the head on 8000; else nginx and frontends on the other nodes
        ({}, 1, "1", (False, 1, FRONTEND_PUBLIC_PORT, True)),
        ({}, 2, "1", (True, 1, FRONTEND_INTERNAL_PORT, False)),
        ({}, 3, "1", (True, 2, FRONTEND_INTERNAL_PORT, False)),
        ({"enable_multiple_frontends": False}, 3, "1", (False, 1, FRONTEND_PUBLIC_PORT, True)),
        ({"num_additional_frontends": 1}, 5, "1", (True, 2, FRONTEND_INTERNAL_PORT, False)),
        # 2.x: the same rule and the same default (on)
        ({}, 3, "2", (True, 2, FRONTEND_INTERNAL_PORT, False)),
        ({"enable_multiple_frontends": False}, 3, "2", (False, 1, FRONTEND_PUBLIC_PORT, True)),
        ({"enable_multiple_frontends": True}, 1, "2", (False, 1, FRONTEND_PUBLIC_PORT, True)),
        ({"enable_multiple_frontends": True}, 4, "2", (True, 3, FRONTEND_INTERNAL_PORT, False)),
    ],
)
def test_frontend_topology_is_srt_slurms_rule(
    frontend: dict, nodes: int, line: str, expected: tuple
) -> None:
    got = frontend_topology(frontend, nodes, line)
    assert (got.nginx, got.count, got.port, got.on_head) == expected


@pytest.mark.parametrize(
    ("frontend", "nodes", "line", "expected"),
    [
        # where the published cells depart: a 1.x one-node SGLang router shown on 8180 off the
        # head (the Qwen3.5 GB300 aggregated TP2 cell at eb1e4107)
        ({"type": "sglang"}, 1, "1", (False, 1, FRONTEND_INTERNAL_PORT, False)),
        # ... a one-node Dynamo frontend with several wanted, behind nginx (one per worker node
        # here: etcd/NATS have a node of their own; tests/inferencex/test_one_node_nginx.py)
        ({}, 1, "1", (True, 1, FRONTEND_INTERNAL_PORT, False)),
        ({}, 1, "2", (True, 1, FRONTEND_INTERNAL_PORT, False)),
        # ... and the count behind nginx is one per worker node when etcd/NATS have a node
        # of their own (these cases; without one: tests/inferencex/test_published_eras.py)
        ({}, 2, "1", (True, 2, FRONTEND_INTERNAL_PORT, False)),
        ({}, 3, "1", (True, 3, FRONTEND_INTERNAL_PORT, False)),
        ({"num_additional_frontends": 1}, 5, "1", (True, 2, FRONTEND_INTERNAL_PORT, False)),
        ({"enable_multiple_frontends": True}, 4, "2", (True, 4, FRONTEND_INTERNAL_PORT, False)),
        # elsewhere the cookbook shows what ran
        ({"enable_multiple_frontends": False}, 3, "1", (False, 1, FRONTEND_PUBLIC_PORT, True)),
        ({"enable_multiple_frontends": False}, 3, "2", (False, 1, FRONTEND_PUBLIC_PORT, True)),
        ({"enable_multiple_frontends": False}, 1, "2", (False, 1, FRONTEND_PUBLIC_PORT, True)),
        ({"type": "sglang"}, 1, "2", (False, 1, FRONTEND_PUBLIC_PORT, True)),
    ],
)
def test_published_frontend_layer_departs_only_where_the_cells_do(
    frontend: dict, nodes: int, line: str, expected: tuple
) -> None:
    got = published_frontend_layer(frontend, nodes, line, dedicated_infra=True)
    assert (got.nginx, got.count, got.port, got.on_head) == expected
    # nginx is shown where srt-slurm ran one, and beyond that only before a Dynamo frontend
    if frontend.get("type", "dynamo") != "dynamo":
        assert got.nginx == frontend_topology(frontend, nodes, line).nginx
    elif frontend_topology(frontend, nodes, line).nginx:
        assert got.nginx


def test_allocated_gpus_count_whole_nodes() -> None:
    assert allocated_gpus(1, 2, 4) == 4
    assert allocated_gpus(2, 4, None) == 8
    assert allocated_gpus(1, 8, 4) == 8


def test_workers_get_srt_slurms_nccl_port_only_from_v1_0_58() -> None:
    def rel(ref: str, line: str = "1") -> Release:
        return Release(ref, line, "test")

    assert not injects_nccl_port(rel("v1.0.38")) and not injects_nccl_port(rel("v1.0.57"))
    assert injects_nccl_port(rel("v1.0.58")) and injects_nccl_port(rel("main"))
    assert not injects_nccl_port(rel("sa-submission-q2-2026"))
    assert injects_nccl_port(rel("4be1c0d2", "2"))
    raw = _block(_point(AGG).raw["sglang"], "worker")
    assert not any(a[0] == "--nccl-port" for a in raw["args"])  # v1.0.38 passes none
    newest = render_config(ERAS, AGG, release=rel("v1.0.60")).points[0].raw["sglang"]
    assert any(a[0] == "--nccl-port" for a in _block(newest, "worker")["args"])


# --- point 3: a branch is what it was when the run happened --------------------------------

FORK_URL = "https://github.com/example-fork/srt-slurm.git"


@pytest.fixture
def srt_history(tmp_path: Path) -> dict[str, str]:
    """Our own srt-slurm history: main tagged v1.0.41 in July and v1.0.58 late in August;
    sa-submission-q2-2026 cut before any tag; a fork's branch as a remote of the clone."""
    return copied_history(tmp_path / "srt-slurm", _srt_history, "releases")


def _srt_history(repo: Path) -> dict[str, str]:
    repo.mkdir()
    (repo / "CHANGES").write_text("")
    dated_git(repo, "init", "-q", "-b", "main")
    out = {"repo": str(repo)}
    out["root"] = dated_commit(repo, "start", "2026-06-01T10:00:00+00:00")
    dated_git(repo, "branch", "sa-submission-q2-2026")
    out["v41"] = dated_commit(repo, "release 1.0.41", "2026-07-30T10:00:00+00:00")
    dated_git(repo, "tag", "v1.0.41")
    out["aug"] = dated_commit(repo, "work on main", "2026-08-03T10:00:00+00:00")
    out["v58"] = dated_commit(
        repo, "release 1.0.58: workers get an NCCL port", "2026-08-18T10:00:00+00:00"
    )
    dated_git(repo, "tag", "v1.0.58")
    dated_git(repo, "checkout", "-q", "sa-submission-q2-2026")
    out["submission"] = dated_commit(repo, "submission fixes", "2026-06-20T10:00:00+00:00")
    dated_commit(repo, "later submission fixes", "2026-09-01T10:00:00+00:00")
    out["fork"] = dated_commit(repo, "fork work", "2026-08-01T10:00:00+00:00")
    dated_git(repo, "update-ref", "refs/remotes/fork/power", out["fork"])
    dated_git(repo, "reset", "-q", "--hard", "HEAD~1")
    dated_git(repo, "remote", "add", "fork", FORK_URL)
    dated_git(repo, "checkout", "-q", "main")
    return out


def _runner_cloning(tmp_path: Path, checkout: str, *, dated: str | None = None) -> Path:
    """The eras tree with the m2 branch of its runner checking out ``checkout``; a git
    checkout committed at ``dated`` when given."""
    tree = tmp_path / "inferencex"
    shutil.copytree(ERAS, tree)
    script = tree / SCRIPT
    text = script.read_text()
    assert "    git checkout v1.0.38\n" in text
    script.write_text(text.replace("    git checkout v1.0.38\n", f"    {checkout}\n"))
    if dated is not None:
        dated_git(tree, "init", "-q", "-b", "main")
        dated_git(tree, "add", "-A")
        dated_git(tree, "commit", "-q", "-m", "InferenceX at the run", date=dated)
    return tree


def _render_json(tree: Path, *args: str) -> dict:
    out = _cli("render", AGG, "--inferencex", str(tree), "--format", "json", "--raw", *args)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _nccl(doc: dict) -> bool:
    worker = next(b for b in doc["points"][0]["routers"]["sglang"] if b["kind"] == "worker")
    return any(a[0] == "--nccl-port" for a in worker["args"])


def test_a_branch_is_taken_at_the_inferencex_commits_date(
    tmp_path: Path, srt_history: dict[str, str]
) -> None:
    tree = _runner_cloning(tmp_path, "git checkout main", dated="2026-08-05T12:00:00+00:00")
    repo = srt_history["repo"]
    text = _cli("render", AGG, "--inferencex", str(tree), "--point", "0", "--srt-slurm-repo", repo)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0] == (
        f"# rules: srt-slurm main as of 2026-08-05T12:00:00+00:00 = {srt_history['aug']} "
        f"(1.x rules, carrying v1.0.41; checked out by {SCRIPT} line 26)"
    )
    doc = _render_json(tree, "--srt-slurm-repo", repo)
    assert doc["srt_slurm"]["commit"] == srt_history["aug"]
    assert doc["srt_slurm"]["tag"] == "v1.0.41"
    # main then carried v1.0.41: no NCCL port yet (today's head, v1.0.58, passes one)
    assert not _nccl(doc)


def test_as_of_moves_the_branch_and_its_rules(tmp_path: Path, srt_history: dict[str, str]) -> None:
    tree = _runner_cloning(tmp_path, "git checkout main", dated="2026-08-05T12:00:00+00:00")
    repo = srt_history["repo"]
    later = _render_json(tree, "--srt-slurm-repo", repo, "--as-of", "2026-08-20")
    assert later["srt_slurm"]["commit"] == srt_history["v58"]
    assert _nccl(later)
    # a day before a commit: the one before it
    assert (
        _render_json(tree, "--srt-slurm-repo", repo, "--as-of", "2026-08-02T10:00:00+00:00")[
            "srt_slurm"
        ]["commit"]
        == srt_history["v41"]
    )


def test_a_branch_cut_before_any_tag_and_a_forks_branch(
    tmp_path: Path, srt_history: dict[str, str]
) -> None:
    repo = srt_history["repo"]
    tree = _runner_cloning(tmp_path, "git checkout sa-submission-q2-2026")
    doc = _render_json(tree, "--srt-slurm-repo", repo, "--as-of", "2026-08-05")
    assert doc["srt_slurm"]["commit"] == srt_history["submission"]
    assert doc["srt_slurm"]["tag"] == ""
    assert not _nccl(doc)
    text = _cli(
        "render", AGG, "--inferencex", str(tree), "--point", "0", "--srt-slurm-repo", repo,
        "--as-of", "2026-08-05",
    )  # fmt: skip
    assert "before any release tag" in text.stdout.splitlines()[0]
    fork = _runner_cloning(tmp_path / "fork", "git checkout power")
    script = fork / SCRIPT
    script.write_text(
        script.read_text().replace(
            'git clone https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"\n    cd',
            f'git clone {FORK_URL} "$SRT_REPO_DIR"\n    cd',
            1,
        )
    )
    doc = _render_json(fork, "--srt-slurm-repo", repo, "--as-of", "2026-08-05")
    assert doc["srt_slurm"]["ref"] == f"power of {FORK_URL}"
    assert doc["srt_slurm"]["commit"] == srt_history["fork"]


def test_an_unresolved_branch_says_why_and_a_bad_date_is_refused(
    tmp_path: Path, srt_history: dict[str, str]
) -> None:
    tree = _runner_cloning(tmp_path, "git checkout main")
    out = _cli("render", AGG, "--inferencex", str(tree), "--point", "0")
    assert "judged as read at its head: no date to resolve it at" in out.stdout.splitlines()[0]
    out = _cli("render", AGG, "--inferencex", str(tree), "--point", "0", "--as-of", "2026-08-05")
    assert "no srt-slurm history to resolve it in" in out.stdout.splitlines()[0]
    doc = _render_json(tree, "--as-of", "2026-08-05")
    assert "commit" not in doc["srt_slurm"] and doc["srt_slurm"]["unresolved"]
    assert _nccl(doc)  # main as read at its head
    missing = _render_json(tree, "--srt-slurm-repo", srt_history["repo"], "--as-of", "2026-05-01")
    assert "no commit of it at or before 2026-05-01" in missing["srt_slurm"]["unresolved"]
    bad = _cli("render", AGG, "--inferencex", str(tree), "--as-of", "05/08/2026")
    assert bad.returncode == 2 and "--as-of" in bad.stderr and "is not a date" in bad.stderr


def test_a_tag_is_no_branch_and_is_left_alone(tmp_path: Path, srt_history: dict[str, str]) -> None:
    doc = _render_json(ERAS, "--srt-slurm-repo", srt_history["repo"], "--as-of", "2026-08-05")
    assert doc["srt_slurm"] == {
        "ref": "v1.0.38",
        "line": "1",
        "source": f"checked out by {SCRIPT} line 26",
    }


def test_the_real_v1_0_38_cells_raw_is_srt_slurms_code_and_cookbook_the_published_form(
    reference: Path,
) -> None:
    """InferenceX eb1e4107 (srt-slurm v1.0.38): what ran follows frontend_stage.py, what the
    cookbook shows follows the published cells (releases.published_frontend_layer)."""
    tree = reference / "pairs" / "inferencex" / "eb1e4107"
    if not tree.is_dir():
        pytest.skip("the eb1e4107 pair tree is not in the reference data")
    agg = render_config(tree, "qwen3.5-fp4-gb300-dynamo-sglang-agentic-agg").points[0]
    ran = _block(agg.raw["sglang"], "sglang-router")
    assert ["--port", "8000"] in ran["args"]  # one node: one router on the head, public port
    shown = _block(agg.cookbook["sglang"], "sglang-router")
    assert ["--port", "8180"] in shown["args"]
    assert ["--worker-urls", "http://$AGG_0_HEAD_IP:30000"] in shown["args"]
    disagg = render_config(tree, "qwen3.5-fp4-gb300-dynamo-sglang-agentic-disagg").points[0]
    # the dedicated etcd node is no worker; the head (prefill node) runs nginx: 1 frontend
    assert _block(disagg.raw["dynamo"], "dynamo-frontend")["count"] == 1
    assert _block(disagg.cookbook["dynamo"], "dynamo-frontend")["count"] == 2


def test_a_linked_worktree_of_inferencex_gives_its_commits_date(
    tmp_path: Path, srt_history: dict[str, str]
) -> None:
    from syncer.inferencex import commits

    tree = _runner_cloning(tmp_path, "git checkout main", dated="2026-08-05T12:00:00+00:00")
    linked = tmp_path / "linked"
    dated_git(tree, "worktree", "add", "-q", str(linked))
    assert (linked / ".git").is_file()
    assert commits.checkout_date(linked) == "2026-08-05T12:00:00+00:00"
    assert commits.checkout_date(ERAS) is None  # inside our checkout, no checkout of its own
    doc = _render_json(linked, "--srt-slurm-repo", srt_history["repo"])
    assert doc["srt_slurm"]["commit"] == srt_history["aug"]


# ---- which rendering: syncer.inferencex.renders --------------------------------------------


def test_verify_takes_the_branch_at_the_runs_date(
    tmp_path: Path, srt_history: dict[str, str]
) -> None:
    from syncer.runs.collect import RunData
    from syncer.runs.logs import parse_sweep_log
    from syncer.usecases.verify import run_facts

    tree = _runner_cloning(tmp_path, "git checkout main", dated="2026-08-05T12:00:00+00:00")
    repo = Path(srt_history["repo"])
    renders = Renders(srt_repo=repo)
    rendered = renders.get(tree, AGG)
    assert rendered.release is not None and rendered.release.commit == srt_history["aug"]
    log = (
        "2026-08-19 09:00:00 [INFO] Starting agg worker 0 on node-a\n"
        "2026-08-19 09:00:01 [INFO] Env: A=1\n"
        "2026-08-19 09:00:01 [INFO] Command: python3 -m sglang.launch_server --port 6100\n"
        "2026-08-19 09:00:01 [INFO] Log: /logs/node-a_agg_w0.out\n"
    )
    sweep = parse_sweep_log(io.BytesIO(log.encode()), "sweep_1.log")
    assert sweep.started == "2026-08-19T09:00:00"
    again = renders.get(tree, AGG, run=run_facts(RunData("run", sweeps=[sweep])))
    assert again.release is not None and again.release.commit == srt_history["v58"]
    assert again.release.as_of == "2026-08-19T09:00:00"
    worker = _block(again.points[0].raw["sglang"], "worker")
    assert any(a[0] == "--nccl-port" for a in worker["args"])
    # the same state at both dates: the rendering is kept
    assert renders.get(tree, AGG, run=run_facts(RunData("run", sweeps=[]))) is rendered
    # --as-of fixes the date: the run's does not move it
    fixed = Renders(srt_repo=repo, as_of="2026-08-05T12:00:00+00:00")
    at = fixed.get(tree, AGG, run=run_facts(RunData("run", sweeps=[sweep])))
    assert at.release is not None and at.release.commit == srt_history["aug"]


def test_the_runs_recorded_commit_decides_the_rules_when_the_clone_has_it(
    srt_history: dict[str, str],
) -> None:
    repo = Path(srt_history["repo"])
    renders = Renders(srt_repo=repo)
    rendered = renders.get(ERAS, AGG)  # the runner checks out v1.0.38: no NCCL port
    assert not any(
        a[0] == "--nccl-port" for a in _block(rendered.points[0].raw["sglang"], "worker")["args"]
    )
    again = renders.get(ERAS, AGG, run=RunFacts(srt_shas=(srt_history["v58"],)))
    assert again.release is not None and again.release.commit == srt_history["v58"]
    assert again.release.describe() == (
        f"srt-slurm {srt_history['v58']} (1.x rules, carrying v1.0.58; "
        "recorded by the run's srt-slurm-sha.txt)"
    )
    worker = _block(again.points[0].raw["sglang"], "worker")
    assert any(a[0] == "--nccl-port" for a in worker["args"])
    # a commit the clone lacks, or no clone: the statement only, the rendering is kept
    assert renders.get(ERAS, AGG, run=RunFacts(srt_shas=("f" * 40,))) is rendered
    plain = Renders()
    first = plain.get(ERAS, AGG)
    assert plain.get(ERAS, AGG, run=RunFacts(srt_shas=(srt_history["v58"],))) is first


def test_a_pins_run_date_reads_the_branch_unless_as_of_is_given(
    tmp_path: Path, srt_history: dict[str, str]
) -> None:
    tree = _runner_cloning(tmp_path, "git checkout main", dated="2026-08-05T12:00:00+00:00")
    repo = Path(srt_history["repo"])
    pinned = Renders(srt_repo=repo, pin_dates={AGG: "2026-08-19"})
    at_pin = pinned.get(tree, AGG, date="2026-08-05")
    assert at_pin.release is not None and at_pin.release.commit == srt_history["v58"]
    chosen = Renders(srt_repo=repo, as_of="2026-08-05", pin_dates={AGG: "2026-08-19"})
    at_as_of = chosen.get(tree, AGG)
    assert at_as_of.release is not None and at_as_of.release.commit == srt_history["aug"]
    # a caller's date (a tree written from git objects has no checkout date) comes last
    dated = Renders(srt_repo=repo).get(tree, AGG, date="2026-08-19")
    assert dated.release is not None and dated.release.commit == srt_history["v58"]


def test_each_rendering_is_made_once_whoever_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    import syncer.inferencex.render as render_mod

    calls: list[tuple[str, str | None]] = []
    real = render_mod.render_config

    def counting(tree: Path, key: str, **kw: object) -> object:
        calls.append((key, kw.get("version")))  # type: ignore[arg-type]
        return real(tree, key, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(render_mod, "render_config", counting)
    renders = Renders()
    first = renders.get(ERAS, AGG)
    assert renders.get(ERAS, AGG, run=RunFacts()) is first
    assert renders(ERAS, AGG) is first
    assert renders.get(ERAS, AGG, version=first.srt_version) is first  # its own line
    assert calls == [(AGG, None)]
    [(tree, key, rendering)] = list(renders.rendered())
    assert (tree, key, rendering) == (ERAS, AGG, first)


def test_a_refusal_is_kept_and_raised_again(monkeypatch: pytest.MonkeyPatch) -> None:
    import syncer.inferencex.render as render_mod

    calls: list[str] = []

    def refusing(tree: Path, key: str, **kw: object) -> object:
        calls.append(key)
        raise SyncError(f"{key}: refused")

    monkeypatch.setattr(render_mod, "render_config", refusing)
    renders = Renders()
    for _ in range(2):
        with pytest.raises(SyncError, match="refused"):
            renders.get(ERAS, AGG)
    assert calls == [AGG]


def test_a_trees_srt_slurm_files_and_a_keys_release_are_read_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every ask of a config (generate asks each several times) costs no git read after the
    first: the tree's submodule pin and the key's release are kept with the renderings."""
    import syncer.inferencex.renders as renders_mod

    found: list[Path] = []
    real = renders_mod.discover

    def counting(tree: Path, configs: Path | None = None) -> object:
        found.append(tree)
        return real(tree, configs)

    monkeypatch.setattr(renders_mod, "discover", counting)
    renders = Renders()
    first = renders.get(ERAS, AGG)
    for _ in range(3):
        assert renders.get(ERAS, AGG) is first
    assert found == [ERAS]
