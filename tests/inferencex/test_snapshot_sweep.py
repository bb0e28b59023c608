"""Every key of a real InferenceX tree (the 843c6254 snapshot of the old layout) renders or is
refused for a reason the tool owns; every SGLang multi-node recipe key renders, and its
cookbook form is publishable. Reads the snapshot from the shared reference folder when it
exists and skips cleanly otherwise (it is never copied into the project).
"""

from __future__ import annotations

import collections
import re
import subprocess
from pathlib import Path
from typing import Any

import forkserver
import pytest
from conftest import REFERENCE

from syncer.errors import SyncError
from syncer.inferencex import yamlsafe
from syncer.inferencex.master import (
    AGENTIC,
    LaunchedByScript,
    NotSGLang,
    RecipeAbsent,
    is_sglang,
    load_master,
)
from syncer.inferencex.recipe_bundles import compose_shared, expand_variants
from syncer.inferencex.render import RenderedConfig, RenderedPoint, render_config

SNAPSHOT = REFERENCE / "inferencex-snapshots" / "843c6254"

# The refusal reasons an old tree may give (the acceptance list), matched on the message so
# that a refusal raised elsewhere with the same reason counts too.
REASONS = {
    "not agentic": re.compile(rf"no {AGENTIC} scenario"),
    "not SGLang": re.compile(r"is not SGLang"),
    "launched by a bash script": re.compile(r"launched by a bash script"),
    "recipe absent": re.compile(r"is absent from the tree"),
}


@pytest.fixture(scope="module")
def snapshot() -> Path:
    if not SNAPSHOT.is_dir():
        pytest.skip(f"InferenceX snapshot not present at {SNAPSHOT}")
    return SNAPSHOT


@pytest.fixture(scope="module")
def outcomes(snapshot: Path) -> dict[str, RenderedConfig | SyncError]:
    """Each key's rendering or its refusal. Anything but a SyncError is a bug (exit 3) and
    fails here, naming the key."""
    out: dict[str, RenderedConfig | SyncError] = {}
    for key in load_master(snapshot).data:
        try:
            out[key] = render_config(snapshot, key)
        except SyncError as exc:
            out[key] = exc
        except Exception as exc:  # pragma: no cover - the assertion is the report
            pytest.fail(f"{key}: internal error {type(exc).__name__}: {exc}")
    return out


def _recipe_keys(snapshot: Path) -> list[str]:
    """SGLang multi-node keys with an agentic scenario whose rows name a recipe."""
    master = load_master(snapshot)
    keys = []
    for key in master.data:
        raw, _ = master.data[key]
        framework = raw.get("framework")
        blocks = (raw.get("scenarios") or {}).get(AGENTIC) or []
        rows = [r for b in blocks for r in (b.get("search-space") or [])]
        names_recipe = any(
            "srt-recipe" in r
            or any(
                isinstance(s, str) and s.startswith("CONFIG_FILE=")
                for role in ("worker", "prefill", "decode")
                for s in ((r.get(role) or {}).get("additional-settings") or [])
            )
            for r in rows
        )
        sglang = isinstance(framework, str) and is_sglang(framework)
        if sglang and raw.get("multinode") and names_recipe:
            keys.append(key)
    return keys


def test_every_key_renders_or_is_refused_for_an_accepted_reason(
    outcomes: dict[str, RenderedConfig | SyncError],
) -> None:
    tally: collections.Counter[str] = collections.Counter()
    unexplained = []
    for key, outcome in outcomes.items():
        if isinstance(outcome, RenderedConfig):
            tally["renders"] += 1
            continue
        reasons = [name for name, pattern in REASONS.items() if pattern.search(outcome.message)]
        if len(reasons) != 1 or "\n" in str(outcome):
            unexplained.append(f"{key}: {outcome}")
        else:
            tally[reasons[0]] += 1
    assert not unexplained, "\n".join(unexplained)
    assert sum(tally.values()) == len(outcomes) == 208
    # the snapshot's shape (its INDEX): 75 agentic keys, 13 SGLang multi-node recipe keys
    assert tally["renders"] >= 13 and tally["not agentic"] == 75


def test_refusals_carry_their_reason_as_a_type(
    outcomes: dict[str, RenderedConfig | SyncError],
) -> None:
    """Callers (the bot, generate) can tell the reasons apart without reading messages. A key
    with no recipe on any row may also be recognised elsewhere as a bash-script launch; the
    message names the reason either way."""
    refused = [o for o in outcomes.values() if isinstance(o, SyncError)]
    for outcome in refused:
        if REASONS["not SGLang"].search(outcome.message):
            assert isinstance(outcome, NotSGLang)
        if REASONS["recipe absent"].search(outcome.message):
            assert isinstance(outcome, RecipeAbsent)
        if isinstance(outcome, LaunchedByScript):
            assert REASONS["launched by a bash script"].search(outcome.message)
    assert any(isinstance(o, NotSGLang) for o in refused)
    assert any(REASONS["launched by a bash script"].search(o.message) for o in refused)


def test_every_sglang_multinode_recipe_key_renders(
    snapshot: Path, outcomes: dict[str, RenderedConfig | SyncError]
) -> None:
    keys = _recipe_keys(snapshot)
    assert len(keys) == 13
    failed = {k: str(outcomes[k]) for k in keys if not isinstance(outcomes[k], RenderedConfig)}
    assert not failed
    for key in keys:
        rendered = outcomes[key]
        assert isinstance(rendered, RenderedConfig) and rendered.points
        for point in rendered.points:
            assert set(point.cookbook) == {"sglang", "dynamo"}
            assert any(b["kind"] == "worker" for b in point.cookbook[point.submitted])


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("glm5.2-fp4-gb200-dynamo-sglang-agentic-disagg", None),
        ("dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp", "launched by a bash script"),
        ("dsv4-fp4-b200-vllm-agentic-mtp", "is not SGLang"),
        ("qwen3.5-fp8-h100-sglang-agentic", "launched by a bash script"),
    ],
)
def test_cli_exit_codes_on_the_snapshot(snapshot: Path, key: str, reason: str | None) -> None:
    """Exit 0, or exit 2 with one line naming the reason; never 3."""
    out = subprocess.run(
        [*forkserver.command(), "render", key, "--inferencex", str(snapshot)],
        capture_output=True,
        text=True,
        check=False,
    )
    if reason is None:
        assert out.returncode == 0, out.stderr
    else:
        assert out.returncode == 2 and out.stdout == ""
        assert out.stderr.count("\n") == 1 and reason in out.stderr


# ---- the cookbook form of the rendered keys ------------------------------------------------

# Settings InferenceX or srt-slurm add for the benchmark (metrics, the NCCL port, config dumps,
# the router's policy config), never part of a production launch: listed here independently of
# the policy file that removes them.
INFX_ONLY_FLAGS = re.compile(
    r"--(enable-metrics|nccl-port|dump-config-to|router-policy-config|prometheus-\S+)$"
)
INFX_ONLY_ENV = re.compile(
    r"(PYTHONNOUSERSITE|PYTHONUNBUFFERED|SGLANG_SIMULATE_ACC_\w+|SGLANG_CUDA_COREDUMP_BEFORE_CRASH"
    r"|SGLANG_PYSPY_DUMP_BEFORE_CRASH|AIPERF_\w+|AGENTIC_\w+|CONC|CONC_LIST|HF_HUB_CACHE|HF_HOME"
    r"|HUGGINGFACE_HUB_CACHE|PIP_BREAK_SYSTEM_PACKAGES|DYN_SKIP_SGLANG_LOG_FORMATTING|DYN_LOG"
    r"|DYN_SYSTEM_PORT|HEAD_NODE_IP|CUDA_VISIBLE_DEVICES|OTEL_\w+|TLLM_\w+|INFMAX_\w+|RESULT_DIR)$"
)
# srt-slurm templates and values only true on one cluster (paths it mounts, device names,
# addresses, launcher markers). Bind addresses 0.0.0.0 / 127.0.0.1 are not cluster values.
CLUSTER_LITERAL = re.compile(
    r"\{node(_id|_ip)?\}|@fabric\.|@dram\.|\bmlx5_\d|\brdma\d|/hf_hub_cache|/lustre/|/scratch/"
    r"|/mnt/|/configs/|/logs/|/model/|\b(?!0\.0\.0\.0\b|127\.0\.0\.1\b)\d{1,3}(\.\d{1,3}){3}\b"
)
# Router flags that name one worker each: repeated once per worker by design.
PER_WORKER_FLAGS = {"--prefill", "--decode"}


def _blocks(outcomes: dict[str, Any], snapshot: Path) -> list[tuple[str, int, str, dict]]:
    out = []
    for key in _recipe_keys(snapshot):
        rendered = outcomes[key]
        if not isinstance(rendered, RenderedConfig):
            continue
        for point in rendered.points:
            for router, blocks in point.cookbook.items():
                out.extend((key, point.index, router, b) for b in blocks)
    return out


def test_no_flag_twice_in_a_cookbook_block(
    snapshot: Path, outcomes: dict[str, RenderedConfig | SyncError]
) -> None:
    twice = set()
    for key, index, router, block in _blocks(outcomes, snapshot):
        counts = collections.Counter(a[0] for a in block["args"])
        for flag, n in counts.items():
            if n > 1 and not (block["kind"] == "sglang-router" and flag in PER_WORKER_FLAGS):
                twice.add(f"{key} point {index} {router} {block['kind']}: {flag} x{n}")
    assert not twice, "\n".join(sorted(twice))


def test_no_inferencex_only_setting_in_the_cookbook_form(
    snapshot: Path, outcomes: dict[str, RenderedConfig | SyncError]
) -> None:
    found = set()
    for key, _, router, block in _blocks(outcomes, snapshot):
        found |= {f"{key} {router}: {a[0]}" for a in block["args"] if INFX_ONLY_FLAGS.match(a[0])}
        found |= {f"{key} {router}: {k}" for k in block["env"] if INFX_ONLY_ENV.match(k)}
    assert not found, "\n".join(sorted(found))


def test_no_srt_slurm_template_or_cluster_literal_in_the_cookbook_form(
    snapshot: Path, outcomes: dict[str, RenderedConfig | SyncError]
) -> None:
    found = set()
    for key, _, router, block in _blocks(outcomes, snapshot):
        for name, value in block["env"].items():
            if CLUSTER_LITERAL.search(value):
                found.add(f"{key} {router} {block['kind']}: {name}={value}")
        for arg in block["args"]:
            if any(CLUSTER_LITERAL.search(v) for v in arg[1:]):
                found.add(f"{key} {router} {block['kind']}: {' '.join(arg)}")
    assert not found, "\n".join(sorted(found))


def test_files_of_srt_slurms_checkout_are_named_and_their_content_is_not_invented(
    snapshot: Path, outcomes: dict[str, RenderedConfig | SyncError]
) -> None:
    """The glm5.2 recipes pass srt-slurm's configs/deepep_config.json by its /configs path:
    the cookbook form names the file, and since the snapshot holds no srt-slurm checkout its
    content is reported missing (generate refuses) rather than shipped."""
    missing: dict[str, set[str]] = collections.defaultdict(set)
    for key, rendered in outcomes.items():
        if not isinstance(rendered, RenderedConfig):
            continue
        for point in rendered.points:
            for router, refs in point.missing_files.items():
                missing[key] |= {f"{router}: {ref.source}" for ref in refs}
                names = {a[1] for b in point.cookbook[router] for a in b["args"] if len(a) > 1}
                assert {ref.name for ref in refs} <= names, key
            assert not any(
                fid.startswith("deepep_config.json#") for f in point.files.values() for fid in f
            ), key
    glm = {k for k in missing if k.startswith("glm5.2-")}
    assert glm and set(missing) == glm
    assert set().union(*missing.values()) == {
        "dynamo: configs/deepep_config.json",
        "sglang: configs/deepep_config.json",
    }
    for key in glm:
        error = outcomes[key].missing_file_error()  # type: ignore[union-attr]
        assert error is not None and "configs/deepep_config.json" in error.message


def _declared_services(recipe: dict[str, Any]) -> set[str]:
    """The processes besides workers and frontends a recipe asks srt-slurm for."""
    declared: set[str] = set()
    frontend = recipe.get("frontend") or {}
    if frontend.get("type", "dynamo") == "dynamo":
        declared.add("etcd")
        infra = recipe.get("infra") or {}
        dynamo = recipe.get("dynamo") or {}
        if infra.get("nats_max_payload_mb") or dynamo.get("request_plane") == "nats":
            declared.add("nats")  # a NATS payload limit or a NATS request plane needs NATS
    services = recipe.get("services") or []
    items = services.values() if isinstance(services, dict) else services
    for service in items:
        if isinstance(service, dict):
            kind = str(service.get("type", service.get("name", "")))
            declared.add("mooncake-master" if kind.startswith("mooncake") else kind)
    if (recipe.get("backend") or {}).get("mooncake_kv_store") is not None:
        declared.add("mooncake-master")
    return declared


def _variant(root: Path, rendered: RenderedConfig, point: RenderedPoint) -> dict[str, Any]:
    """The recipe variant a point was rendered from, read again from its file: the base with
    the point's override merged, shared blocks composed."""
    shared_path = rendered.entry.shared_block_path()
    shared = yamlsafe.load(shared_path) if shared_path else None
    doc = compose_shared(shared, yamlsafe.load(root / point.recipe))
    variants = expand_variants(doc, None, path=point.recipe)
    return variants.get(point.override or "") or variants["base"]


def test_every_declared_service_is_in_the_cookbook_form(
    snapshot: Path, outcomes: dict[str, RenderedConfig | SyncError]
) -> None:
    missing = set()
    for key in _recipe_keys(snapshot):
        rendered = outcomes[key]
        assert isinstance(rendered, RenderedConfig)
        for point in rendered.points:
            kinds = {b["kind"] for b in point.cookbook[point.submitted]}
            declared = _declared_services(_variant(snapshot, rendered, point))
            if declared - kinds:
                missing.add(f"{key} point {point.index}: {sorted(declared - kinds)}")
    assert not missing, "\n".join(sorted(missing))
