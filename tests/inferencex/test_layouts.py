"""Old InferenceX layouts and schema-1 recipes, one fixture per rule.

Each test builds a checkout of the old layout (``configs/``, ``benchmarks/multi_node/
srt-slurm-recipes/``, rows naming ``CONFIG_FILE=recipes/...``) with our own files and checks
one rule: what InferenceX and srt-slurm did with that shape, not what one real file contains.
"""

from __future__ import annotations

import logging
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import forkserver
import pytest

from syncer.errors import SyncError
from syncer.inferencex.master import NotSGLang, RecipeAbsent, load_master
from syncer.inferencex.render import render_config

KEY = "m-fp8-h200-dynamo-sglang-agentic"

# A schema-1 aggregated recipe: one TP8 worker behind a Dynamo frontend.
AGG = """\
name: "agg-tp8"
model: {path: "m-alias", container: "dynamo-sglang", precision: "fp8"}
dynamo:
  install: true
  wheel: "1.3.0.dev20260718"
resources: {gpu_type: h200, gpus_per_node: 8, agg_nodes: 1, agg_workers: 1}
frontend:
  type: dynamo
  args: {router-mode: kv}
backend:
  type: sglang
  aggregated_environment:
    SGLANG_DEFAULT_THINKING: "0"
  sglang_config:
    aggregated:
      served-model-name: org/M
      tp-size: 8
      speculative-algorithm: EAGLE
      speculative-num-steps: 3
benchmark:
  type: custom
  command: bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh
"""

# A schema-1 disaggregated recipe: one TP4 prefill and one TP4 decode worker.
DISAGG = """\
name: "disagg-1p1d"
model: {path: "m-alias", container: "dynamo-sglang", precision: "fp8"}
resources:
  gpu_type: h200
  gpus_per_node: 8
  prefill_nodes: 1
  decode_nodes: 1
  prefill_workers: 1
  decode_workers: 1
  gpus_per_prefill: 8
  gpus_per_decode: 8
frontend: {type: dynamo}
backend:
  type: sglang
  kv_events_config: true
  prefill_environment: {A: "1"}
  decode_environment: {B: "2"}
  sglang_config:
    prefill: {tp-size: 8, disaggregation-transfer-backend: mooncake}
    decode: {tp-size: 8, disaggregation-transfer-backend: mooncake}
"""


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def old_checkout(
    tmp: Path,
    recipe: str = AGG,
    *,
    settings: tuple[str, ...] = ("CONFIG_FILE=recipes/m/agentic/agg.yaml",),
    roles: str = "",
    framework: str = "dynamo-sglang",
    block: str = "",
    name: str = "agg.yaml",
) -> Path:
    """An old-layout checkout whose one key has one multi-node row; ``roles`` replaces the
    row's default old-style aggregated role blocks (prefill = the worker, decode = 0)."""
    listed = "\n".join(f"      - {s}" for s in settings)
    role_blocks = roles or (
        f"    prefill:\n      num-worker: 1\n      tp: 8\n      additional-settings:\n{listed}\n"
        "    decode: {num-worker: 0, tp: 8}\n"
    )
    master = (
        f"{KEY}:\n"
        "  image: lmsysorg/sglang:v1\n"
        "  model: org/M\n"
        "  model-prefix: m\n"
        "  runner: cluster:h200\n"
        "  precision: fp8\n"
        f"  framework: {framework}\n"
        "  multinode: true\n"
        "  scenarios:\n"
        "    agentic-coding:\n"
        f"    - dram-utilization: 0.8\n{block}"
        "      search-space:\n"
        "      - spec-decoding: mtp\n"
        "        conc-list: [4, 8]\n"
        f"{textwrap.indent(role_blocks, '    ')}"
    )
    _write(tmp / "configs" / "nvidia-master.yaml", master)
    _write(tmp / "benchmarks" / "multi_node" / "srt-slurm-recipes" / "m" / "agentic" / name, recipe)
    return tmp


def worker_env(rendered: Any, role: str = "agg") -> dict[str, str]:
    (point,) = rendered.points
    (blocks,) = point.raw.values()
    (worker,) = [b for b in blocks if b["kind"] == "worker" and b["role"] == role]
    return worker["env"]


def worker_flags(rendered: Any, role: str) -> dict[str, list[str]]:
    (point,) = rendered.points
    (blocks,) = point.raw.values()
    (worker,) = [b for b in blocks if b["kind"] == "worker" and b["role"] == role]
    return {a[0]: a[1:] for a in worker["args"]}


# ---- rows naming a plain recipe file --------------------------------------------------------


def test_config_file_row_without_selector_renders_the_file_as_one_configuration(
    tmp_path: Path,
) -> None:
    rendered = render_config(old_checkout(tmp_path), KEY)
    (point,) = rendered.points
    assert point.override is None and point.concs == [4, 8]
    assert point.recipe == "benchmarks/multi_node/srt-slurm-recipes/m/agentic/agg.yaml"
    assert point.label == "Agg TP8"


def test_srt_recipe_row_without_selector_renders_a_plain_file(tmp_path: Path) -> None:
    roles = "    srt-recipe: benchmarks/multi_node/srt-slurm-recipes/m/agentic/agg.yaml\n"
    (point,) = render_config(old_checkout(tmp_path, roles=roles), KEY).points
    assert point.override is None


def test_a_bundle_named_without_a_selector_is_refused(tmp_path: Path) -> None:
    """srt-slurm would submit every variant of a bundle named without a selector: a master row
    is one job, so this is refused, naming the variants."""
    bundle = "base:\n" + textwrap.indent(AGG, "  ") + "override_a: {}\noverride_b: {}\n"
    with pytest.raises(SyncError, match=r"yields 2 variants \(override_a, override_b\)"):
        render_config(old_checkout(tmp_path, bundle), KEY)


# ---- schema-1 backend shapes ---------------------------------------------------------------


def test_kv_events_config_true_turns_events_on_for_prefill_and_decode(tmp_path: Path) -> None:
    settings = ("CONFIG_FILE=recipes/m/agentic/agg.yaml",)
    roles = (
        "    prefill:\n      num-worker: 1\n      tp: 8\n      additional-settings:\n"
        f"      - {settings[0]}\n"
        "    decode: {num-worker: 1, tp: 8}\n"
    )
    rendered = render_config(old_checkout(tmp_path, DISAGG, roles=roles), KEY)
    prefill, decode = worker_flags(rendered, "prefill"), worker_flags(rendered, "decode")
    assert prefill["--kv-events-config"] == [
        '{"publisher": "zmq", "topic": "kv-events", "endpoint": "tcp://*:5200"}'
    ]
    assert decode["--kv-events-config"][0].endswith('"tcp://*:5201"}')


def test_kv_events_config_true_leaves_aggregated_workers_without_events(tmp_path: Path) -> None:
    recipe = AGG.replace("  type: sglang\n", "  type: sglang\n  kv_events_config: true\n")
    rendered = render_config(old_checkout(tmp_path, recipe), KEY)
    assert "--kv-events-config" not in worker_flags(rendered, "agg")


def test_kv_events_config_per_mode_mapping(tmp_path: Path) -> None:
    recipe = AGG.replace(
        "  type: sglang\n", "  type: sglang\n  kv_events_config: {aggregated: {topic: t}}\n"
    )
    rendered = render_config(old_checkout(tmp_path, recipe), KEY)
    (value,) = worker_flags(rendered, "agg")["--kv-events-config"]
    assert '"topic": "t"' in value


@pytest.mark.parametrize("value", ["yes-please", "[prefill]", "{decode: 3}"])
def test_kv_events_config_of_another_shape_is_bad_input(tmp_path: Path, value: str) -> None:
    recipe = DISAGG.replace("kv_events_config: true", f"kv_events_config: {value}")
    roles = (
        "    prefill:\n      num-worker: 1\n      tp: 8\n      additional-settings:\n"
        "      - CONFIG_FILE=recipes/m/agentic/agg.yaml\n"
        "    decode: {num-worker: 1, tp: 8}\n"
    )
    with pytest.raises(SyncError, match="kv_events_config"):
        render_config(old_checkout(tmp_path, recipe, roles=roles), KEY)


def test_flat_dynamo_wheel_is_the_pinned_dynamo_version(tmp_path: Path) -> None:
    (point,) = render_config(old_checkout(tmp_path), KEY).points
    (line,) = point.install["dynamo"]
    assert '"ai-dynamo-runtime==1.3.0.dev20260718" "ai-dynamo==1.3.0.dev20260718"' in line


def test_flat_dynamo_wheel_file_name_gives_its_version(tmp_path: Path) -> None:
    recipe = AGG.replace(
        'wheel: "1.3.0.dev20260718"', "wheel: wheels/ai_dynamo-1.2.0-py3-none-any.whl"
    )
    (point,) = render_config(old_checkout(tmp_path, recipe), KEY).points
    (line,) = point.install["dynamo"]
    assert '"ai-dynamo==1.2.0"' in line


# ---- master row shapes of the old era -----------------------------------------------------


def test_old_aggregated_row_is_checked_against_the_agg_worker(tmp_path: Path) -> None:
    """Old aggregated rows write the worker as `prefill` next to `decode: {num-worker: 0}`."""
    roles = (
        "    prefill:\n      num-worker: 1\n      tp: 4\n      additional-settings:\n"
        "      - CONFIG_FILE=recipes/m/agentic/agg.yaml\n"
        "    decode: {num-worker: 0, tp: 4}\n"
    )
    with pytest.raises(SyncError, match=r"row says prefill\.tp 4 but the recipe has"):
        render_config(old_checkout(tmp_path, roles=roles), KEY)


@pytest.mark.parametrize(("tp", "pcp", "ok"), [(1, 8, True), (2, 4, True), (1, 4, False)])
def test_role_pcp_size_counts_inside_tensor_parallel(
    tmp_path: Path, tp: int, pcp: int, ok: bool
) -> None:
    """`pcp-size` (prefill context parallel) in a role spec: SGLang runs it inside the
    tensor-parallel group, so tp x pcp-size is the recipe's tensor-parallel-size."""
    roles = (
        f"    prefill:\n      num-worker: 1\n      tp: {tp}\n      pcp-size: {pcp}\n"
        "      additional-settings:\n      - CONFIG_FILE=recipes/m/agentic/agg.yaml\n"
        "    decode: {num-worker: 1, tp: 8}\n"
    )
    root = old_checkout(tmp_path, DISAGG, roles=roles)
    if ok:
        assert render_config(root, KEY).points
    else:
        with pytest.raises(SyncError, match=r"prefill.tp 1 x pcp-size 4 but the recipe has"):
            render_config(root, KEY)


def test_agentic_block_duration_is_accepted(tmp_path: Path) -> None:
    root = old_checkout(tmp_path, block="      duration: 1800\n")
    assert load_master(root).entry(KEY).rows


# ---- synthetic acceptance of the CONFIG_FILE era -------------------------------------------


def _golden_on_only(root: Path) -> None:
    """A golden curve with thinking_on only: the newer launcher would look up thinking_off
    for a thinking-off recipe and fail; the old runner never reads it."""
    _write(root / "golden_al_distribution" / "m_mtp.yaml", "m:\n  thinking_on: {3: 2.99}\n")


def test_without_synthetic_acceptance_the_recipe_env_is_what_ran(tmp_path: Path) -> None:
    recipe = AGG.replace(
        '    SGLANG_DEFAULT_THINKING: "0"\n',
        '    SGLANG_DEFAULT_THINKING: "0"\n    SGLANG_SIMULATE_ACC_LEN: "2.49"\n',
    )
    root = old_checkout(tmp_path, recipe)
    _golden_on_only(root)
    rendered = render_config(root, KEY)
    assert worker_env(rendered)["SGLANG_SIMULATE_ACC_LEN"] == "2.49"
    assert "SGLANG_SIMULATE_ACC_METHOD" not in worker_env(rendered)
    assert rendered.points[0].golden_al == "2.49"


def test_without_any_acceptance_setting_nothing_is_injected(tmp_path: Path) -> None:
    root = old_checkout(tmp_path)
    _golden_on_only(root)
    rendered = render_config(root, KEY)
    assert not any(k.startswith("SGLANG_SIMULATE") for k in worker_env(rendered))
    assert rendered.points[0].golden_al is None


def test_the_rows_synthetic_acceptance_length_wins(tmp_path: Path) -> None:
    settings = (
        "SYNTHETIC_ACCEPTANCE=true",
        "SYNTHETIC_ACCEPTANCE_LENGTH=3.50",
        "CONFIG_FILE=recipes/m/agentic/agg.yaml",
    )
    root = old_checkout(tmp_path, settings=settings)
    _golden_on_only(root)
    _write(root / "benchmarks" / "speedbench-reference-al.yaml", "m:\n  thinking_on: {3: 9.9}\n")
    rendered = render_config(root, KEY)
    env = worker_env(rendered)
    assert (env["SGLANG_SIMULATE_ACC_LEN"], env["SGLANG_SIMULATE_ACC_METHOD"]) == (
        "3.5",
        "match-expected",
    )
    assert env["SGLANG_SIMULATE_ACC_TOKEN_MODE"] == "real-draft-token"
    assert rendered.points[0].golden_al == "3.5"


def test_synthetic_acceptance_without_length_reads_the_reference_curve_thinking_on(
    tmp_path: Path,
) -> None:
    """The recipe turns thinking off, but the era's injector reads thinking_on unless told."""
    root = old_checkout(
        tmp_path, settings=("SYNTHETIC_ACCEPTANCE=true", "CONFIG_FILE=recipes/m/agentic/agg.yaml")
    )
    _write(
        root / "benchmarks" / "speedbench-reference-al.yaml",
        "m:\n  thinking_on: {2: 2.5, 3: 2.99}\n  thinking_off: {3: 3.3}\n",
    )
    assert worker_env(render_config(root, KEY))["SGLANG_SIMULATE_ACC_LEN"] == "2.99"


def test_synthetic_acceptance_false_injects_nothing(tmp_path: Path) -> None:
    root = old_checkout(
        tmp_path,
        settings=(
            "SYNTHETIC_ACCEPTANCE=false",
            "SYNTHETIC_ACCEPTANCE_LENGTH=3.5",
            "CONFIG_FILE=recipes/m/agentic/agg.yaml",
        ),
    )
    assert "SGLANG_SIMULATE_ACC_LEN" not in worker_env(render_config(root, KEY))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('  aggregated_environment:\n    SGLANG_DEFAULT_THINKING: "0"\n', ""), "no top-level"),
        (
            ('    SGLANG_DEFAULT_THINKING: "0"\n', '    SGLANG_SIMULATE_ACC_LEN: "2"\n'),
            "already sets SGLANG_SIMULATE_ACC_LEN",
        ),
    ],
)
def test_synthetic_acceptance_the_runner_could_not_inject_is_refused(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    settings = (
        "SYNTHETIC_ACCEPTANCE=true",
        "SYNTHETIC_ACCEPTANCE_LENGTH=3.5",
        "CONFIG_FILE=recipes/m/agentic/agg.yaml",
    )
    root = old_checkout(tmp_path, AGG.replace(*change), settings=settings)
    with pytest.raises(SyncError, match=message):
        render_config(root, KEY)


def test_synthetic_acceptance_without_length_or_curve_is_refused(tmp_path: Path) -> None:
    root = old_checkout(
        tmp_path, settings=("SYNTHETIC_ACCEPTANCE=true", "CONFIG_FILE=recipes/m/agentic/agg.yaml")
    )
    with pytest.raises(SyncError, match=r"speedbench-reference-al\.yaml"):
        render_config(root, KEY)


# ---- duplicate YAML keys -------------------------------------------------------------------


def test_duplicate_recipe_key_renders_the_last_value_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    recipe = AGG.replace("      tp-size: 8\n", "      tp-size: 4\n      tp-size: 8\n")
    with caplog.at_level(logging.WARNING, logger="syncer"):
        rendered = render_config(old_checkout(tmp_path, recipe), KEY)
    assert worker_flags(rendered, "agg")["--tp-size"] == ["8"]
    (warning,) = rendered.warnings
    assert 'agg.yaml:18: duplicate key "tp-size" (lines 17 and 18)' in warning
    assert warning in caplog.text


def test_duplicate_master_key_is_read_as_inferencex_reads_it(tmp_path: Path) -> None:
    # Refused until issue 40.8: InferenceX reads its masters with yaml.safe_load, the last
    # value winning (test_master_duplicates.py).
    root = old_checkout(tmp_path)
    master = root / "configs" / "nvidia-master.yaml"
    master.write_text(
        master.read_text().replace("  model: org/M\n", "  model: org/M\n  model: x\n")
    )
    loaded = load_master(root)
    assert [e["model"] for e, _ in loaded.data.values()] == ["x"]
    assert 'duplicate key "model"' in loaded.warnings[0]


def test_cli_prints_the_duplicate_warning_and_renders(tmp_path: Path) -> None:
    import subprocess

    recipe = AGG.replace("      tp-size: 8\n", "      tp-size: 4\n      tp-size: 8\n")
    root = old_checkout(tmp_path, recipe)
    out = subprocess.run(
        [*forkserver.command(), "render", KEY, "--inferencex", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr.startswith("warning: ") and 'duplicate key "tp-size"' in out.stderr


# ---- refusals with their reason ------------------------------------------------------------


def test_a_key_that_is_not_sglang_is_refused_first(tmp_path: Path) -> None:
    """Even with rows nothing could read, the first reason given is the framework."""
    root = old_checkout(tmp_path, framework="dynamo-vllm", roles="    bogus-key: 1\n")
    with pytest.raises(NotSGLang, match='framework "dynamo-vllm" is not SGLang'):
        render_config(root, KEY)


def test_a_key_without_any_recipe_is_launched_by_a_bash_script(tmp_path: Path) -> None:
    roles = "    prefill: {num-worker: 1, tp: 8, additional-settings: [PREFILL_NODES=1]}\n"
    root = old_checkout(tmp_path, framework="sglang-disagg", roles=roles)
    with pytest.raises(SyncError, match="launched by a bash script"):
        render_config(root, KEY)


def test_a_recipe_the_tree_does_not_hold_is_absent(tmp_path: Path) -> None:
    root = old_checkout(tmp_path, settings=("CONFIG_FILE=recipes/upstream/only.yaml",))
    with pytest.raises(RecipeAbsent, match=r'"upstream/only\.yaml" of row 0 is absent'):
        render_config(root, KEY)


def _move_to_new_layout(root: Path) -> Path:
    """The same checkout after the move under ``inferencex-e2e/`` (the newer launcher)."""
    new = root / "inferencex-e2e"
    new.mkdir()
    for part in ("configs", "benchmarks"):
        (root / part).rename(new / part)
    return root


def test_the_newer_launcher_derives_acceptance_without_any_row_setting(tmp_path: Path) -> None:
    """Same row, same recipe, after the move under inferencex-e2e/: the launcher there adds
    the golden AL for every throughput point, from the curve of the recipe's thinking mode."""
    root = _move_to_new_layout(old_checkout(tmp_path))
    _write(
        root / "inferencex-e2e" / "infx" / "golden_al_distribution" / "m_mtp.yaml",
        "m:\n  thinking_on: {3: 2.99}\n  thinking_off: {3: 3.27}\n",
    )
    rendered = render_config(root, KEY)
    assert worker_env(rendered)["SGLANG_SIMULATE_ACC_LEN"] == "3.27"
    assert rendered.points[0].golden_al == "3.27"


def test_the_generation_role_sets_the_acceptance_target(tmp_path: Path) -> None:
    """A prefill worker drafting to another depth does not change the AL: decode's counts."""
    recipe = DISAGG.replace(
        "prefill: {tp-size: 8,",
        "prefill: {tp-size: 8, speculative-algorithm: EAGLE, speculative-num-steps: 1,",
    ).replace(
        "decode: {tp-size: 8,",
        "decode: {tp-size: 8, speculative-algorithm: EAGLE, speculative-num-steps: 3,",
    )
    roles = (
        "    prefill:\n      num-worker: 1\n      tp: 8\n      additional-settings:\n"
        "      - CONFIG_FILE=recipes/m/agentic/agg.yaml\n"
        "    decode: {num-worker: 1, tp: 8}\n"
    )
    root = _move_to_new_layout(old_checkout(tmp_path, recipe, roles=roles))
    _write(
        root / "inferencex-e2e" / "infx" / "golden_al_distribution" / "m_mtp.yaml",
        "m:\n  thinking_off: {1: 1.8, 3: 3.27}\n",
    )
    rendered = render_config(root, KEY)
    assert rendered.points[0].golden_al == "3.27"
    assert worker_env(rendered, "prefill")["SGLANG_SIMULATE_ACC_LEN"] == "3.27"


@pytest.mark.parametrize(
    ("field", "value"), [("pcp-size", '"8"'), ("tp", "0"), ("num-worker", "-1")]
)
def test_role_spec_values_of_the_wrong_type_are_bad_input(
    tmp_path: Path, field: str, value: str
) -> None:
    fields = {"num-worker": "1", "tp": "8", field: value}
    roles = (
        "    prefill:\n"
        + "".join(f"      {k}: {v}\n" for k, v in fields.items())
        + "      additional-settings:\n      - CONFIG_FILE=recipes/m/agentic/agg.yaml\n"
        "    decode: {num-worker: 0, tp: 8}\n"
    )
    with pytest.raises(SyncError, match=f"prefill: {field} must be an integer"):
        load_master(old_checkout(tmp_path, roles=roles)).entry(KEY)


def test_a_step_count_that_is_not_a_number_is_bad_input(tmp_path: Path) -> None:
    recipe = AGG.replace("speculative-num-steps: 3", "speculative-num-steps: three")
    root = old_checkout(
        tmp_path,
        recipe,
        settings=("SYNTHETIC_ACCEPTANCE=true", "CONFIG_FILE=recipes/m/agentic/agg.yaml"),
    )
    with pytest.raises(SyncError, match="speculative-num-steps must be an integer"):
        render_config(root, KEY)


# ---- through the CLI: exit 2, one line naming the file (and line), values as JSON spells them


def _cli_error(root: Path, key: str = KEY) -> str:
    proc = subprocess.run(
        [*forkserver.command(), "render", key, "--inferencex", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    return proc.stderr


RECIPE = "benchmarks/multi_node/srt-slurm-recipes/m/agentic/agg.yaml"


def test_cli_names_a_yaml_boolean_where_a_string_belongs_as_yaml_spells_it(tmp_path: Path) -> None:
    recipe = AGG.replace('SGLANG_DEFAULT_THINKING: "0"', "SGLANG_DEFAULT_THINKING: no")
    assert _cli_error(old_checkout(tmp_path, recipe)) == (
        f"error: {tmp_path}/{RECIPE}:13: backend.aggregated_environment.SGLANG_DEFAULT_THINKING: "
        "Not a valid string (got false); quote it\n"
    )


def test_cli_cuts_a_long_mapping_of_the_wrong_type_in_json_spelling(tmp_path: Path) -> None:
    mapping = ", ".join(f"k{i}: {i}" for i in range(20))
    recipe = AGG.replace("speculative-num-steps: 3", f"speculative-num-steps: {{{mapping}}}")
    assert _cli_error(old_checkout(tmp_path, recipe)) == (
        f"error: {tmp_path}/{RECIPE}: backend.sglang_config.aggregated.speculative-num-steps "
        'must be an integer, got {"k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, '
        '"k6": 6, "k7": 7, "k8": 8… (120 more characters)\n'
    )


def test_cli_quotes_an_unknown_config_key_and_an_unknown_entry_key(tmp_path: Path) -> None:
    root = old_checkout(tmp_path / "a")
    assert _cli_error(root, "nope") == (
        f'error: {root}/configs/nvidia-master.yaml: unknown config key "nope"\n'
    )
    root = old_checkout(tmp_path / "b", framework="dynamo-sglang\n  srt-recipe-dri: x")
    assert _cli_error(root) == (
        f"error: {root}/configs/nvidia-master.yaml:8: {KEY}: "
        'unknown key "srt-recipe-dri"; closest keys: srt-recipe-dir\n'
    )
