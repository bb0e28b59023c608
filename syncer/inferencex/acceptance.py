"""Synthetic acceptance: the golden acceptance length InferenceX makes a speculative worker
simulate, in both launcher eras.

The newer launcher derives it for every point from the generation role (decode, else agg) and
the committed golden AL curves (``golden_al``); the old runners rewrote the recipe file only on
a row's ``SYNTHETIC_ACCEPTANCE=true`` (its length wins, else the era's reference curve,
thinking on: ``inject_legacy_acceptance``).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from syncer import checkout
from syncer.errors import SyncError
from syncer.fsio import present
from syncer.inferencex import yamlsafe
from syncer.inferencex.master import ConfigEntry, check_entry_name, entry_file
from syncer.inferencex.recipe import Recipe
from syncer.inferencex.recipe_facts import SPEC_ALGORITHM, first_arg, lead_role
from syncer.inferencex.rows import SearchRow
from syncer.wording import js

SIMULATE = {
    "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
    "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token",
}


# An acceptance length is the tokens a speculative step accepts, the verified one included: a
# plain decimal from 1 up (InferenceX's curves hold 1.78 to 3.5x). It is published as the cell's
# goldenAL and exported to every worker, so "nan" or "3.51; touch x" must never pass.
_AL = re.compile(r"\d{1,3}(?:\.\d{1,6})?")
MAX_AL = 100


def acceptance_length(value: object, what: str, path: str, line: int | None = None) -> str:
    """``value`` as the AL text published and exported, when it is a plain decimal from 1 to
    ``MAX_AL``; else refused, naming ``what`` and where it was read."""
    text = value if isinstance(value, str) else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        text = str(value)
    if text is None or not _AL.fullmatch(text) or not 1 <= float(text) <= MAX_AL:
        raise SyncError(
            f"{what} must be a decimal number from 1 to {MAX_AL} (an acceptance length), "
            f"got {js(value)}",
            path=path,
            line=line,
        )
    return text


def simulate_env(
    entry: ConfigEntry, recipe: Recipe, row: SearchRow, path: str = "<recipe>"
) -> tuple[dict[str, str] | None, str | None]:
    """The golden-acceptance env the launcher adds to every worker, and the AL the point ran
    with. In the old layout :func:`inject_legacy_acceptance` did it before the recipe is read:
    nothing is added here, the AL is whatever the workers' env carries."""
    # the generation role (decode, else agg) sets the acceptance target: a prefill worker may
    # draft to another depth, and InferenceX reads the decode worker's parameters
    lead = recipe.roles.get("decode") or lead_role(recipe)
    if entry.old_layout:
        env = {**lead.env, **recipe.environment}
        given = env.get("SGLANG_SIMULATE_ACC_LEN")
        if given is None:
            return None, None
        return None, acceptance_length(given, "SGLANG_SIMULATE_ACC_LEN", path)
    if row.spec_decoding == "none":
        return None, None
    algo = first_arg(lead.args, SPEC_ALGORITHM)
    if algo is None:
        return None, None
    method = str(algo).lower()
    if method in ("eagle", "eagle3", "nextn", "mtp"):
        method = "mtp"
        length = first_arg(lead.args, ("speculative-num-steps", "speculative_num_steps"))
    else:
        length = first_arg(
            lead.args,
            (
                f"speculative-{method}-block-size",
                f"speculative_{method}_block_size",
                "speculative-num-steps",
                "speculative_num_steps",
            ),
        )
    if length is None:
        return None, None
    env = {**recipe.environment, **lead.env}
    thinking = str(env.get("SGLANG_DEFAULT_THINKING", "0")).lower() in ("1", "true", "yes", "on")
    al = golden_al(entry, method, int(length), thinking)
    if al is None:
        return None, None
    return {"SGLANG_SIMULATE_ACC_LEN": al, **SIMULATE}, al


LEGACY_SIMULATE_ENV_MODES = ("aggregated", "prefill", "decode")


def inject_legacy_acceptance(
    variant: dict[str, Any], entry: ConfigEntry, row: SearchRow, plain: bool, path: str
) -> dict[str, object]:
    """Synthetic acceptance of the old layout: the runner rewrote the recipe file only
    when the row says ``SYNTHETIC_ACCEPTANCE=true``, adding the three SGLANG_SIMULATE_ACC_*
    variables to each schema-1 ``backend.<mode>_environment`` block written at the file's top
    level. The row's ``SYNTHETIC_ACCEPTANCE_LENGTH`` wins; without it the era's reference
    curve is read with thinking on. A recipe it cannot rewrite stopped the job: refused."""
    if not row.synthetic_acceptance:
        return variant
    given = variant.get("backend")
    backend: dict[str, Any] = given if isinstance(given, dict) else {}
    modes = [
        m
        for m in LEGACY_SIMULATE_ENV_MODES
        if plain and isinstance(backend.get(f"{m}_environment"), dict)
    ]
    if not modes:
        raise SyncError(
            f"{entry.key}: row {row.index} sets SYNTHETIC_ACCEPTANCE=true but the recipe has no "
            "top-level backend.<mode>_environment block to add SGLANG_SIMULATE_ACC_* to "
            "(the runner stops such a job)",
            path=path,
        )
    if any("SGLANG_SIMULATE_ACC_LEN" in backend[f"{m}_environment"] for m in modes):
        raise SyncError(
            f"{entry.key}: row {row.index} sets SYNTHETIC_ACCEPTANCE=true but the recipe "
            "already sets SGLANG_SIMULATE_ACC_LEN (the runner stops such a job)",
            path=path,
        )
    al = legacy_acceptance_length(variant, entry, row, path)
    out = dict(variant)
    out["backend"] = dict(backend)
    for m in modes:
        out["backend"][f"{m}_environment"] = {
            "SGLANG_SIMULATE_ACC_LEN": al,
            **SIMULATE,
            **backend[f"{m}_environment"],
        }
    return out


def legacy_acceptance_length(
    variant: dict[str, Any], entry: ConfigEntry, row: SearchRow, path: str
) -> str:
    """The AL string the CONFIG_FILE-era injector writes (a float in ``%g`` form)."""
    explicit = row.synthetic_acceptance_length
    if explicit is None:
        steps = None
        config = (variant.get("backend") or {}).get("sglang_config") or {}
        for mode in LEGACY_SIMULATE_ENV_MODES:
            args = config.get(mode) if isinstance(config, dict) else None
            if isinstance(args, dict) and args.get("speculative-num-steps") is not None:
                steps = args["speculative-num-steps"]
                break
        if steps is None:
            steps = 2  # the injector's default when the recipe names no step count
        if isinstance(steps, bool) or not str(steps).isdigit():
            raise SyncError(
                f"{entry.key}: speculative-num-steps must be an integer, got {js(steps)}",
                path=path,
            )
        explicit = legacy_reference_al(entry, int(steps))
    what = f"{entry.key}: row {row.index}: SYNTHETIC_ACCEPTANCE_LENGTH"
    try:
        written = f"{float(explicit):g}"
    except ValueError:
        raise SyncError(f"{what} must be a number, got {js(explicit)}", path=entry.path) from None
    return acceptance_length(written, what, entry.path)


# ---- golden acceptance length ------------------------------------------------------------

GOLDEN_DIRS = ("infx/golden_al_distribution", "golden_al_distribution")


def golden_al_file(entry: ConfigEntry, method: str) -> Path | None:
    name = f"{entry.model_prefix}_{method}.yaml"
    check_entry_name(entry, name, f"{entry.key}: golden AL file (from model-prefix)")
    for base in (entry.layout_root, entry.layout_root.parent):
        for sub in GOLDEN_DIRS:
            candidate = base / sub / name
            if checkout.lexically_inside(entry.root_dir, candidate) and present(
                candidate, "golden AL file"
            ):
                return entry_file(entry, candidate, f"{entry.key}: golden AL file")
    return None


def golden_al(entry: ConfigEntry, method: str, draft_length: int, thinking: bool) -> str | None:
    """The committed golden acceptance length for model / method / thinking mode / draft
    length, as the string InferenceX injects (``3.51``); None when no curve file exists."""
    path = golden_al_file(entry, method)
    if path is None:
        return None
    doc = _golden_doc(path)
    if not isinstance(doc, dict) or not doc:
        raise SyncError(
            "golden AL file must map a model name to thinking_on/thinking_off curves",
            path=str(path),
        )
    model_name = entry.model.rsplit("/", 1)[-1].lower()
    curves = doc.get(model_name)
    if curves is None:
        if len(doc) != 1:
            raise SyncError(
                f"golden AL file has no curve for {js(model_name)} "
                f"(models: {', '.join(map(str, doc))})",
                path=str(path),
            )
        curves = next(iter(doc.values()))
    mode = "thinking_on" if thinking else "thinking_off"
    if not isinstance(curves, dict):
        raise SyncError(
            f"golden AL file: {js(model_name)} must map thinking_on/thinking_off to curves",
            path=str(path),
        )
    curve = curves.get(mode)
    if not isinstance(curve, dict):
        raise SyncError(f"golden AL file has no {mode} curve for {js(model_name)}", path=str(path))
    value = curve.get(draft_length, curve.get(str(draft_length)))
    if value is None:
        raise SyncError(
            f"golden AL file has no {mode} value for draft length {draft_length} "
            f"(lengths: {', '.join(str(k) for k in curve)})",
            path=str(path),
        )
    where = [str(model_name if model_name in doc else next(iter(doc))), mode, str(draft_length)]
    return acceptance_length(
        value,
        f"golden AL {mode} value for draft length {draft_length}",
        str(path),
        yamlsafe.key_line(path, where),
    )


# Parsed golden AL files by path and content: every point of a config asks for its curve.
_GOLDEN: dict[tuple[str, bytes], object] = {}


_GOLDEN_MAX = 16


def _golden_doc(path: Path) -> object:
    """``yamlsafe.load(path)``, parsed once per content (callers only read the result)."""
    try:
        key = (str(path), hashlib.sha256(path.read_bytes()).digest())
    except OSError:
        return yamlsafe.load(path)  # names the unreadable file
    if key not in _GOLDEN:
        if len(_GOLDEN) >= _GOLDEN_MAX:
            del _GOLDEN[next(iter(_GOLDEN))]
        _GOLDEN[key] = yamlsafe.load(path)
    return _GOLDEN[key]


# The CONFIG_FILE era's reference curve (read by the runner's injector when a row sets
# SYNTHETIC_ACCEPTANCE=true without a length): one file for every model, keyed by a name the
# injector derives from the model prefix (the prefixes below were renamed; others are kept).
LEGACY_REFERENCE_AL = "benchmarks/speedbench-reference-al.yaml"


LEGACY_REFERENCE_KEYS = {
    "dsv4": "deepseek-v4-pro",
    "dsr1": "deepseek-r1",
    "dsv4dspark": "deepseek-v4-pro-0813",
    "dsv4dsparkprob": "deepseek-v4-pro-0813",
}


def legacy_reference_al(entry: ConfigEntry, draft_length: int) -> str:
    """AL for ``draft_length`` from the era's reference curve; the injector of that era reads
    thinking mode ``thinking_on`` (its default) when the curve is split by thinking mode."""
    path = entry.layout_root / LEGACY_REFERENCE_AL
    if not path.is_file():
        raise SyncError(
            f"{entry.key}: SYNTHETIC_ACCEPTANCE=true without SYNTHETIC_ACCEPTANCE_LENGTH needs "
            f"the reference curve {LEGACY_REFERENCE_AL}, which the tree does not hold",
            path=entry.path,
        )
    doc = yamlsafe.load(path)
    name = LEGACY_REFERENCE_KEYS.get(entry.model_prefix, entry.model_prefix)
    block = doc.get(name) if isinstance(doc, dict) else None
    value: object = None
    if isinstance(block, list):
        for item in block:
            if isinstance(item, dict) and draft_length in item:
                value = item[draft_length]
                break
    elif isinstance(block, dict):
        if any(str(k).startswith("thinking") for k in block):
            block = block.get("thinking_on")
        value = block.get(draft_length) if isinstance(block, dict) else None
    if value is None:
        raise SyncError(
            f"reference curve has no value for {js(name)} at draft length {draft_length}",
            path=str(path),
        )
    return acceptance_length(
        value, f"reference curve value for {js(name)} at draft length {draft_length}", str(path)
    )
