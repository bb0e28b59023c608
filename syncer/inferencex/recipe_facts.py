"""What a normalised recipe says about its deployment, read the same way wherever it is asked.

A flag's value under any of its spellings (``first_arg``), the role whose flags describe the
speculative decoding, the parallel shape and label of a cell, the KV tier it measured, the
published cell detail (``DSpark 5``, ``MTP 3-1-4``) and what a Dynamo deployment installs.
"""

from __future__ import annotations

import re
from typing import Any

from syncer import links
from syncer.flags import DP_ARGS, DPA_ARGS, EP_ARGS, TP_ARGS
from syncer.inferencex.recipe import Recipe, Role

SPEC_ALGORITHM = ("speculative-algorithm", "speculative_algorithm")


def first_arg(args: dict[str, object], names: tuple[str, ...], default: Any = None) -> Any:
    for name in names:
        if name in args and args[name] is not None:
            return args[name]
    return default


def framework_engine(framework: str) -> str:
    for engine in ("sglang", "vllm", "trt", "atom"):
        if engine in framework:
            return "sglang" if engine == "sglang" else engine
    return framework


def measured_tier(recipe: Recipe) -> str:
    for role in recipe.roles.values():
        backend = first_arg(role.args, ("hicache-storage-backend", "hicache_storage_backend"))
        if backend == "mooncake" or recipe.mooncake_master:
            return "mooncake"
    for role in recipe.roles.values():
        if first_arg(role.args, ("enable-hierarchical-cache", "enable_hierarchical_cache")):
            return "hicache"
    return "none"


def parallel_label(args: dict[str, Any], npw: int) -> str:
    tp = int(first_arg(args, TP_ARGS, 1))
    ep = int(first_arg(args, EP_ARGS, 1))
    if first_arg(args, DPA_ARGS, False):
        text = f"DEP{int(first_arg(args, DP_ARGS, tp))}"
    else:
        text = f"TP{tp}" + (f"·EP{ep}" if ep > 1 else "")
    return text + (f" ({npw} nodes)" if npw > 1 else "")


def shape_and_label(recipe: Recipe) -> tuple[tuple[object, ...], str]:
    shape = []
    for name in ("agg", "prefill", "decode"):
        role = recipe.roles.get(name)
        if role is None:
            continue
        args = role.args
        shape.append(
            (
                name,
                role.workers,
                role.nodes_per_worker,
                role.gpus,
                int(first_arg(args, TP_ARGS, 1)),
                int(first_arg(args, EP_ARGS, 1)),
                int(first_arg(args, DP_ARGS, 1)),
                bool(first_arg(args, DPA_ARGS, False)),
            )
        )
    if recipe.disagg:
        p, d = recipe.roles["prefill"], recipe.roles["decode"]
        prefill = parallel_label(p.args, p.nodes_per_worker)
        decode = parallel_label(d.args, d.nodes_per_worker)
        label = f"Disagg {p.workers}P{d.workers}D · prefill {prefill} · decode {decode}"
    else:
        a = recipe.roles["agg"]
        label = f"Agg {parallel_label(a.args, a.nodes_per_worker)}" + (
            f" ×{a.workers}" if a.workers > 1 else ""
        )
    return tuple(shape), label


def lead_role(recipe: Recipe) -> Role:
    """The role whose flags describe the deployment's speculative decoding (prefill first)."""
    return (
        recipe.roles.get("prefill") or recipe.roles.get("agg") or next(iter(recipe.roles.values()))
    )


MTP_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "MTP")


def spec_detail(recipe: Recipe) -> str:
    """The cell detail published cells show: ``DSpark 5``, ``MTP 3-1-4`` (steps, top-k, draft
    tokens; EAGLE-family algorithms are all shown as MTP), or ``no spec``."""
    args = lead_role(recipe).args
    algo = first_arg(args, SPEC_ALGORITHM)
    if algo is None:
        return "no spec"
    if str(algo).upper() == "DSPARK":
        block = first_arg(args, ("speculative-dspark-block-size", "speculative_dspark_block_size"))
        return f"DSpark {block}" if block is not None else "DSpark"
    name = "MTP" if str(algo).upper() in MTP_ALGORITHMS else str(algo)
    parts = [
        first_arg(args, (f"speculative-{flag}", f"speculative_{flag.replace('-', '_')}"))
        for flag in ("num-steps", "eagle-topk", "num-draft-tokens")
    ]
    if all(p is not None for p in parts):
        return f"{name} " + "-".join(str(p) for p in parts)
    return name


def dynamo_wheel_version(dynamo: object) -> str | None:
    """The Dynamo version a recipe pins: ``dynamo.source.wheel`` (schema 2) or the flat
    ``dynamo.wheel`` of older recipes, given as a version or as an ``ai_dynamo-<version>-
    py3-none-any.whl`` file name (srt-slurm reads the version out of the name)."""
    if not isinstance(dynamo, dict):
        return None
    source = dynamo.get("source")
    wheel = (source.get("wheel") if isinstance(source, dict) else None) or dynamo.get("wheel")
    if not isinstance(wheel, str) or not wheel:
        return None
    name = wheel.rsplit("/", 1)[-1]
    if name.endswith(".whl"):
        m = re.fullmatch(r"ai_dynamo-(.+)-py3-none-any\.whl", name)
        return m.group(1) if m else None
    return wheel


def install_lines(recipe: Recipe) -> list[str]:
    """What a Dynamo deployment installs (srt-slurm's ``dynamo.install`` with a pinned wheel)."""
    dynamo = recipe.raw.get("dynamo") or {}
    version = dynamo_wheel_version(dynamo)
    if not isinstance(dynamo, dict) or not dynamo.get("install"):
        return []
    commit = dynamo.get("hash")
    if not version and isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{7,40}", commit):
        # srt-slurm builds Dynamo from source at `dynamo.hash` (1.x recipes): no pip line to
        # show, the commit is named instead, as published cells do
        return [f"# Dynamo built from source at {links.commit_url(links.DYNAMO_REPO, commit)}"]
    if not version:
        return []
    return [
        f"pip install --pre --extra-index-url {links.NVIDIA_PYPI_URL} "
        f'"ai-dynamo-runtime=={version}" "ai-dynamo=={version}"'
    ]


def router_of(recipe: Recipe) -> str:
    return "dynamo" if recipe.frontend.type == "dynamo" else "sglang"
