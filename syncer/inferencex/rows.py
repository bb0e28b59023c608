"""The search-space rows of a master config key: their parallel shape, concurrencies, the
recipe each names, and the jobs InferenceX runs for them.

Also the one rule of whether a row names an srt-slurm recipe (``names_a_recipe``): a key none
of whose rows does is launched by a bash script (``master.launched_by_script``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from syncer.errors import SyncError
from syncer.wording import closest, js

ROW_KEYS = {
    "tp",
    "ep",
    "dp-attn",
    "pp",
    "dcp-size",
    "pcp-size",
    "conc-list",
    "conc-start",
    "conc-end",
    "kv-offloading",
    "kv-offload-backend",
    "kv-p2p-transfer",
    "spec-decoding",
    "srt-recipe",
    "eval-srt-recipe",
    "router",
    "num-nodes",
    "power",
    "worker",
    "prefill",
    "decode",
    "additional-settings",
    "exp-name",
}


ROLE_KEYS = {
    "num-worker",
    "tp",
    "ep",
    "dp-attn",
    "pp",
    "dcp-size",
    "pcp-size",
    "hardware",
    "additional-settings",
}


# The shapes InferenceX's sweep takes from a row, bounded: a concurrency is a positive count of
# clients; a range doubles from conc-start to conc-end (so a start of 0 or below never ends);
# the parallel sizes count GPUs or nodes. The bounds sit far above any real config (concurrency
# 16,500, tp 56, 18 nodes) and keep every loop driven by a row, and the jobs it makes, small.
MAX_CONC = 1_048_576
MAX_CONC_POINTS = 64
MAX_PARALLEL = 4096


Locate = Callable[[str], int | None]


def _no_line(_name: str) -> int | None:
    return None


def _count(
    raw: dict[str, Any],
    name: str,
    where: str,
    path: str,
    locate: Locate,
    least: int = 1,
    most: int = MAX_PARALLEL,
    what: str = "a positive integer",
) -> None:
    """Refuse ``raw[name]`` unless it is an integer from ``least`` to ``most`` (absent is fine);
    ``what`` says the lower bound in the message."""
    value = raw.get(name)
    if name not in raw:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        expected = what
    elif value > most:
        expected = f"at most {most}"
    else:
        return
    raise SyncError(
        f"{where}: {name} must be {expected}, got {js(value)}", path=path, line=locate(name)
    )


def _closest(word: str, choices: set[str] | list[str], n: int = 3) -> str:
    close = closest(word, sorted(choices), n=n)
    return ", ".join(close) if close else "-"


def refuse_unknown_keys(
    raw: dict[str, object],
    known: set[str],
    where: str,
    path: str,
    locate: Callable[[str], int | None] | None = None,
) -> None:
    """Refuse the first key (by name) outside ``known``, naming the closest known keys: a
    misspelt key would otherwise be ignored and its setting silently lost. ``locate`` finds
    the key's line (only on error: it reads the file again)."""
    unknown = set(raw) - known
    if unknown:
        bad = sorted(unknown)[0]
        raise SyncError(
            f"{where}: unknown key {js(bad)}; closest keys: {_closest(bad, known)}",
            path=path,
            line=locate(bad) if locate is not None else None,
        )


@dataclass
class RoleSpec:
    """The parallel shape a multi-node row declares for one role. A worker's GPUs are
    ``tp * pp * pcp`` (``pcp-size``: prefill context parallel, which SGLang runs inside the
    tensor-parallel group)."""

    num_worker: int
    tp: int
    ep: int
    dp_attn: bool
    pp: int = 1
    pcp: int = 1

    @classmethod
    def parse(
        cls, raw: dict[str, Any], where: str, path: str, locate: Locate | None = None
    ) -> RoleSpec:
        """``locate(name)``: the line of the role's key ``name`` (for messages only)."""
        line = locate or _no_line
        refuse_unknown_keys(raw, ROLE_KEYS, where, path, line)
        for name in ("num-worker", "tp", "ep", "pp", "pcp-size", "dcp-size"):
            least = 0 if name == "num-worker" else 1  # aggregated rows say decode: 0 workers
            _count(raw, name, where, path, line, least, what=f"an integer of at least {least}")
        return cls(
            num_worker=raw.get("num-worker", 1),
            tp=raw.get("tp", 1),
            ep=raw.get("ep", 1),
            dp_attn=bool(raw.get("dp-attn", False)),
            pp=raw.get("pp", 1),
            pcp=raw.get("pcp-size", 1),
        )


@dataclass
class SearchRow:
    """One search-space row of an agentic scenario."""

    index: int
    concs: list[int]
    recipe: str | None  # as written (file or path), without the selector; None: script-launched
    selector: str | None
    eval_recipe: str | None
    eval_selector: str | None
    tp: int | None = None
    ep: int | None = None
    dp_attn: bool = False
    pp: int = 1
    pcp: int = 1
    spec_decoding: str = "none"
    kv_offloading: str | None = None
    kv_offload_backend: str | None = None
    router: dict[str, Any] | None = None
    roles: dict[str, RoleSpec] = field(default_factory=dict)
    config_file_style: bool = False  # recipe came from CONFIG_FILE=recipes/...
    # The row's old synthetic-acceptance settings (`SYNTHETIC_ACCEPTANCE=true`,
    # `SYNTHETIC_ACCEPTANCE_LENGTH=x` in additional-settings); None when the row has none.
    synthetic_acceptance: bool | None = None
    synthetic_acceptance_length: str | None = None

    @property
    def gpus(self) -> int:
        return (self.tp or 1) * self.pp * self.pcp


@dataclass
class Job:
    """One job InferenceX runs for a config: single node = (row, conc); multi node = row."""

    index: int
    row: SearchRow
    concs: list[int]


def split_selector(spec: str) -> tuple[str, str | None]:
    if ":" in spec:
        file, sel = spec.rsplit(":", 1)
        return file, sel or None
    return spec, None


def _concs(row: dict[str, Any], where: str, path: str, locate: Locate = _no_line) -> list[int]:
    if "conc-list" in row:
        concs = row["conc-list"]
        if (
            not isinstance(concs, list)
            or not concs
            or len(concs) > MAX_CONC_POINTS
            or not all(
                isinstance(c, int) and not isinstance(c, bool) and 1 <= c <= MAX_CONC for c in concs
            )
        ):
            raise SyncError(
                f"{where}: conc-list must be a list of 1 to {MAX_CONC_POINTS} integers "
                f"from 1 to {MAX_CONC}",
                path=path,
                line=locate("conc-list"),
            )
        return list(concs)
    if "conc-start" in row and "conc-end" in row:
        for name in ("conc-start", "conc-end"):
            _count(row, name, where, path, locate, most=MAX_CONC)
        start, end = row["conc-start"], row["conc-end"]
        if start > end:
            raise SyncError(
                f"{where}: conc-start ({start}) must not be above conc-end ({end})",
                path=path,
                line=locate("conc-start"),
            )
        out = []
        c = start
        while c <= end:  # doubles from a start of at least 1: at most 21 points up to MAX_CONC
            out.append(c)
            c *= 2
        return out
    raise SyncError(
        f"{where}: expected conc-list or conc-start/conc-end", path=path, line=locate("conc-list")
    )


def parse_row(
    key: str,
    index: int,
    raw: dict[str, Any],
    path: str,
    multinode: bool,
    script_launched: bool = False,
    locate: Callable[[list[str]], int | None] | None = None,
) -> SearchRow:
    """One search-space row, checked. ``locate(keys)``: the line of the row's key at ``keys``
    (``[]``: the row itself), for messages only (finding a line reads the file again)."""
    where = f"{key}: search-space row {index}"

    def line(*keys: str) -> int | None:
        return locate(list(keys)) if locate is not None else None

    if not isinstance(raw, dict):
        raise SyncError(f"{where} must be a mapping", path=path, line=line())
    refuse_unknown_keys(raw, ROW_KEYS, where, path, line)
    for name in ("tp", "ep", "pp", "pcp-size", "dcp-size", "num-nodes"):
        _count(raw, name, where, path, line)
    roles = {
        name: RoleSpec.parse(raw[name], f"{where}.{name}", path, functools.partial(line, name))
        for name in ("worker", "prefill", "decode")
        if isinstance(raw.get(name), dict)
    }
    named = row_recipe(raw)
    if named is None and not script_launched:
        raise SyncError(f"{where}: no srt-recipe (or CONFIG_FILE=) names the recipe", path=path)
    recipe, selector, config_file_style = named or (None, None, False)
    synthetic, synthetic_length = _synthetic(_settings(raw))
    eval_recipe, eval_selector = (None, None)
    if "eval-srt-recipe" in raw:
        eval_recipe, eval_selector = split_selector(str(raw["eval-srt-recipe"]))
    backend = raw.get("kv-offload-backend")
    # A row without a selector names a plain recipe file: the file is one configuration
    # (old-layout multi-node rows, `CONFIG_FILE=recipes/x.yaml`). A bundle named without a
    # selector would submit every variant; that is refused where the file is read.
    return SearchRow(
        index=index,
        concs=_concs(raw, where, path, line),
        recipe=recipe,
        selector=selector,
        eval_recipe=eval_recipe,
        eval_selector=eval_selector,
        tp=raw.get("tp"),
        ep=raw.get("ep"),
        dp_attn=bool(raw.get("dp-attn", False)),
        pp=int(raw.get("pp", 1)),
        pcp=int(raw.get("pcp-size", 1)),
        spec_decoding=str(raw.get("spec-decoding", "none")),
        kv_offloading=raw.get("kv-offloading"),
        kv_offload_backend=backend.get("name") if isinstance(backend, dict) else None,
        router=raw.get("router") if isinstance(raw.get("router"), dict) else None,
        roles=roles,
        config_file_style=config_file_style,
        synthetic_acceptance=synthetic,
        synthetic_acceptance_length=synthetic_length,
    )


def _synthetic(settings: dict[str, str]) -> tuple[bool | None, str | None]:
    """The row's ``SYNTHETIC_ACCEPTANCE`` (None: not set) and ``SYNTHETIC_ACCEPTANCE_LENGTH``."""
    enabled = (
        settings["SYNTHETIC_ACCEPTANCE"].strip().lower() == "true"
        if "SYNTHETIC_ACCEPTANCE" in settings
        else None
    )
    return enabled, settings.get("SYNTHETIC_ACCEPTANCE_LENGTH", "").strip() or None


def _settings(raw: dict[str, object]) -> dict[str, str]:
    """The row's ``additional-settings`` (row level, then each role block) as ``KEY=VALUE``;
    later settings win, the way the workflow exports them in order."""
    out: dict[str, str] = {}
    blocks = [raw, *(raw.get(r) for r in ("worker", "prefill", "decode"))]
    for block in blocks:
        if not isinstance(block, dict):
            continue
        listed = block.get("additional-settings")
        for setting in listed if isinstance(listed, list) else []:
            if isinstance(setting, str) and "=" in setting:
                name, _, value = setting.partition("=")
                out[name.strip()] = value
    return out


def row_recipe(raw: object) -> tuple[str, str | None, bool] | None:
    """``(file, selector, config_file_style)`` of the recipe a row names, or None."""
    if not isinstance(raw, dict):
        return None
    if "srt-recipe" in raw:
        recipe, selector = split_selector(str(raw["srt-recipe"]))
        return recipe, selector, False
    spec = _settings(raw).get("CONFIG_FILE")
    if spec is None:
        return None
    spec = spec.strip()
    spec = spec[len("recipes/") :] if spec.startswith("recipes/") else spec
    recipe, selector = split_selector(spec)
    return recipe, selector, True


def names_a_recipe(raw: object) -> bool:
    """Whether a search-space row names an srt-slurm recipe (``srt-recipe``, or ``CONFIG_FILE=``
    in its additional settings). A row that is not a mapping is not judged here (True): the
    row parser refuses it with its own reason."""
    return not isinstance(raw, dict) or row_recipe(raw) is not None
