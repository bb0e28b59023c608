"""InferenceX master configs: config keys, their search-space rows and the jobs they make.

Both repository layouts are read: the newest keeps everything under ``inferencex-e2e/``
(``inferencex-e2e/configs/*-master.yaml``), the old one at the root (``configs/``). Rows name
their recipe as ``srt-recipe: <file>[:<selector>]`` relative to ``srt-recipe-dir`` (newest),
as a repo-relative path (older), or through ``additional-settings:
["CONFIG_FILE=recipes/<path>:<selector>"]`` (oldest multi-node form).
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syncer import checkout
from syncer.errors import SyncError
from syncer.fsio import present, read_capped
from syncer.inferencex import yamlsafe
from syncer.wording import PATH_CHARS, js

ENTRY_KEYS = {
    "image",
    "model",
    "model-prefix",
    "runner",
    "precision",
    "framework",
    "multinode",
    "disagg",
    "router",
    "srt-recipe-dir",
    "scenarios",
    "kv-p2p-transfer",
}
# `duration` is the agentic block's old run-length key (seconds); the job length is not part
# of a launch command, so it is accepted and ignored.
BLOCK_KEYS = {
    "dram-utilization",
    "duration",
    "isl",
    "osl",
    "search-space",
    "trace-source",
    "require-power",
}
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
AGENTIC = "agentic-coding"


class NotSGLang(SyncError):
    """The config key's framework runs no SGLang worker: nothing here renders it."""


class LaunchedByScript(SyncError):
    """No search-space row names an srt-slurm recipe: InferenceX launches the key from a bash
    script (the old single-node AgentX arms, the AMD multi-node disagg scripts)."""


class RecipeAbsent(SyncError):
    """A row names a recipe file the checkout does not hold (it lives only upstream, in the
    srt-slurm checkout the runner clones)."""


def is_sglang(framework: str) -> bool:
    """Whether a master ``framework`` runs SGLang workers: ``sglang``, ``dynamo-sglang``,
    ``sglang-disagg`` (the engine behind a ``dynamo-*`` framework decides)."""
    return "sglang" in framework.split("-")


def _closest(word: str, choices: set[str] | list[str], n: int = 3) -> str:
    close = difflib.get_close_matches(word, sorted(choices), n=n, cutoff=0.5)
    return ", ".join(close) if close else "-"


def _known_keys(
    raw: dict[str, Any],
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
    def parse(cls, raw: dict[str, Any], where: str, path: str) -> RoleSpec:
        _known_keys(raw, ROLE_KEYS, where, path)
        for name in ("num-worker", "tp", "ep", "pp", "pcp-size", "dcp-size"):
            value = raw.get(name)
            least = 0 if name == "num-worker" else 1  # aggregated rows say decode: 0 workers
            if name in raw and (
                isinstance(value, bool) or not isinstance(value, int) or value < least
            ):
                raise SyncError(
                    f"{where}: {name} must be an integer of at least {least}, got {js(value)}",
                    path=path,
                )
        return cls(
            num_worker=raw.get("num-worker", 1),
            tp=raw.get("tp", 1),
            ep=raw.get("ep", 1),
            dp_attn=bool(raw.get("dp-attn", False)),
            pp=raw.get("pp", 1),
            pcp=raw.get("pcp-size", 1),
        )


@dataclass
class Row:
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
    row: Row
    concs: list[int]


@dataclass
class ConfigEntry:
    key: str
    path: str  # master file the key lives in
    layout_root: Path  # <checkout>/inferencex-e2e or <checkout>
    image: str
    model: str
    model_prefix: str
    runner: str
    precision: str
    framework: str
    multinode: bool
    disagg: bool
    router: dict[str, Any] | None
    kv_p2p_transfer: str | None
    srt_recipe_dir: str | None
    rows: list[Row]
    dram_utilization: float | None = None
    checkout_root: Path | None = None  # every file read for this entry stays inside it

    @property
    def root_dir(self) -> Path:
        return self.checkout_root or self.layout_root

    @property
    def old_layout(self) -> bool:
        """The tree keeps configs at its root (before the move under ``inferencex-e2e/``): its
        runners rewrote recipes themselves (synthetic acceptance only on a row's
        ``SYNTHETIC_ACCEPTANCE=true``), where the newer launcher derives it for every point."""
        return self.layout_root.name != "inferencex-e2e"

    @property
    def hardware(self) -> str:
        """Hardware id as the cookbook names it (``gb300``): the key's GPU part by the naming
        convention ``<model>-<precision>-<gpu>-...``, else the runner's cluster label."""
        parts = self.key.split("-")
        if len(parts) >= 3 and parts[1] == self.precision:
            return parts[2]
        runner = self.runner.removeprefix("cluster:")
        return runner.split("-")[0]

    def jobs(self) -> list[Job]:
        out: list[Job] = []
        for row in self.rows:
            if self.multinode:
                out.append(Job(len(out), row, list(row.concs)))
            else:
                for conc in row.concs:
                    out.append(Job(len(out), row, [conc]))
        return out

    def recipe_path(self, row: Row, *, eval_job: bool = False) -> Path:
        """Absolute path of the row's recipe in the checkout."""
        name = row.eval_recipe if eval_job else row.recipe
        if name is None:
            raise SyncError(
                f"{self.key}: row {row.index} has no "
                f"{'eval-srt-recipe' if eval_job else 'srt-recipe'}",
                path=self.path,
            )
        what = f"{self.key}: row {row.index} {'eval-srt-recipe' if eval_job else 'srt-recipe'}"
        _entry_name(self, name, what)
        if self.srt_recipe_dir:
            _entry_name(self, self.srt_recipe_dir, f"{self.key}: srt-recipe-dir")
        lane = "multi_node" if self.multinode else "single_node"
        recipes_root = self.layout_root / "benchmarks" / lane / "srt-slurm-recipes"
        candidates: list[Path] = []
        if row.config_file_style:
            candidates.append(
                self.layout_root / "benchmarks" / "multi_node" / "srt-slurm-recipes" / name
            )
        if self.srt_recipe_dir:
            candidates.append(recipes_root / self.srt_recipe_dir / name)
        candidates += [self.layout_root / name, self.layout_root.parent / name, recipes_root / name]
        candidates = [c for c in candidates if checkout.lexically_inside(self.root_dir, c)]
        for candidate in candidates:
            if candidate.is_file():
                return _entry_file(self, candidate, what, row=True)
        raise RecipeAbsent(
            f"{self.key}: recipe {js(name, PATH_CHARS)} of row {row.index} is absent from the tree "
            f"(looked in {', '.join(str(c) for c in candidates[:2])})",
            path=self.path,
        )

    def shared_block_path(self) -> Path | None:
        lane = "agentic-multi.yaml" if self.multinode else "agentic-single.yaml"
        candidate = self.layout_root / "configs" / "srt-recipes" / lane
        if not candidate.is_file():
            return None
        return _entry_file(self, candidate, f"{self.key}: shared recipe block")


@dataclass
class Master:
    root: Path
    layout_root: Path
    files: list[Path]
    data: dict[str, tuple[dict[str, Any], str]]  # key -> (raw entry, file)

    def keys(self) -> list[str]:
        return list(self.data)

    def check_sglang(self, key: str) -> None:
        """Refuse a key whose framework runs no SGLang worker. Callers check it before any
        other refusal: nothing of a vLLM, TRT-LLM or ATOM key is rendered, so its other
        problems (rows, scripts, recipes) are not this tool's to report."""
        if key not in self.data:
            return
        raw, path = self.data[key]
        framework = raw.get("framework")
        if isinstance(framework, str) and not is_sglang(framework):
            raise NotSGLang(
                f"{key}: framework {js(framework)} is not SGLang "
                "(only SGLang workers are rendered)",
                path=path,
                line=yamlsafe.key_line(path, [key, "framework"]),
            )

    def entry(self, key: str, *, script_launched: bool = False) -> ConfigEntry:
        if key not in self.data:
            close = difflib.get_close_matches(key, list(self.data), n=5, cutoff=0.6)
            if not close:
                close = [k for k in self.data if k.split("-")[0] == key.split("-")[0]][:5]
            hint = f"; closest keys: {', '.join(close)}" if close else ""
            raise SyncError(
                f"unknown config key {js(key)}{hint}", path=", ".join(str(f) for f in self.files)
            )
        raw, path = self.data[key]
        self.check_sglang(key)
        entry = parse_entry(key, raw, path, self.layout_root, script_launched=script_launched)
        entry.checkout_root = self.root
        return entry


def find_layout(inferencex_dir: Path) -> Path:
    """The directory holding ``configs/`` and ``benchmarks/`` (newest layout first)."""
    for candidate in (inferencex_dir / "inferencex-e2e", inferencex_dir):
        if any((candidate / "configs").glob("*-master.yaml")):
            return candidate
    if any((inferencex_dir / ".github" / "configs").glob("*-master.yaml")):
        return inferencex_dir
    raise SyncError(
        "no master config found (expected inferencex-e2e/configs/*-master.yaml "
        "or configs/*-master.yaml)",
        path=str(inferencex_dir),
    )


# Parsed master configs by checkout and file contents: every config key rendered (generate,
# the bot, verify) reads the same master files, the slowest part of rendering one key.
_LOADED: dict[tuple[str, tuple[tuple[str, bytes], ...]], Master] = {}
_LOADED_MAX = 8


def load_master(inferencex_dir: Path | str) -> Master:
    """The checkout's master configs, parsed once per content (a changed file is re-read).
    Callers only read the result."""
    root = Path(inferencex_dir)
    if not root.is_dir():
        raise SyncError("InferenceX checkout not found", path=str(root))
    layout = find_layout(root)
    files = sorted((layout / "configs").glob("*-master.yaml")) or sorted(
        (layout / ".github" / "configs").glob("*-master.yaml")
    )
    for f in files:
        checkout.contained(root, f, what="master config")
    try:
        if any(f.stat().st_size > yamlsafe.MAX_FILE_BYTES for f in files):
            raise OSError  # never read whole; yamlsafe.load refuses it with its size
        digests = tuple(
            (
                str(f),
                hashlib.sha256(read_capped(f, yamlsafe.MAX_FILE_BYTES, "master config")).digest(),
            )
            for f in files
        )
    except OSError:
        return read_master(root, layout, files)  # yamlsafe.load names the unreadable file
    key = (str(root), digests)
    if key not in _LOADED:
        if len(_LOADED) >= _LOADED_MAX:
            del _LOADED[next(iter(_LOADED))]
        _LOADED[key] = read_master(root, layout, files)
    return _LOADED[key]


def read_master(root: Path, layout: Path, files: list[Path]) -> Master:
    """Parse the master ``files`` (no cache: :func:`load_master` is the entry point)."""
    data: dict[str, tuple[dict[str, Any], str]] = {}
    for f in files:
        doc = yamlsafe.load(f)
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise SyncError("a master config must be a mapping of config keys", path=str(f))
        for key, value in doc.items():
            if key in data:
                raise SyncError(
                    f"config key {js(key)} defined in two master configs (also in {data[key][1]})",
                    path=str(f),
                    line=yamlsafe.key_line(f, [str(key)]),
                )
            if isinstance(value, dict):
                data[str(key)] = (value, str(f))
    return Master(root=root, layout_root=layout, files=files, data=data)


def _split_selector(spec: str) -> tuple[str, str | None]:
    if ":" in spec:
        file, sel = spec.rsplit(":", 1)
        return file, sel or None
    return spec, None


def _concs(row: dict[str, Any], where: str, path: str) -> list[int]:
    if "conc-list" in row:
        concs = row["conc-list"]
        if (
            not isinstance(concs, list)
            or not concs
            or not all(isinstance(c, int) and not isinstance(c, bool) for c in concs)
        ):
            raise SyncError(f"{where}: conc-list must be a non-empty list of integers", path=path)
        return list(concs)
    if "conc-start" in row and "conc-end" in row:
        start, end = int(row["conc-start"]), int(row["conc-end"])
        out = []
        c = start
        while c <= end:
            out.append(c)
            c *= 2
        return out
    raise SyncError(f"{where}: expected conc-list or conc-start/conc-end", path=path)


def parse_entry(
    key: str,
    raw: dict[str, Any],
    path: str,
    layout_root: Path,
    *,
    script_launched: bool = False,
) -> ConfigEntry:
    """One config key; ``script_launched``: rows name no recipe (see ``inferencex.scripts``)."""
    _known_keys(raw, ENTRY_KEYS, key, path, lambda bad: yamlsafe.key_line(path, [key, bad]))
    for required in ("image", "model", "framework"):
        if not isinstance(raw.get(required), str):
            raise SyncError(
                f"{key}: {required} must be set", path=path, line=yamlsafe.key_line(path, [key])
            )
    scenarios = raw.get("scenarios") or {}
    if not isinstance(scenarios, dict):
        raise SyncError(f"{key}: scenarios must be a mapping", path=path)
    blocks = scenarios.get(AGENTIC)
    if blocks is not None and not isinstance(blocks, list):
        raise SyncError(f"{key}: scenarios.{AGENTIC} must be a list of blocks", path=path)
    if not blocks:
        raise SyncError(
            f"{key}: no {AGENTIC} scenario (scenarios: {', '.join(scenarios) or 'none'})",
            path=path,
            line=yamlsafe.key_line(path, [key]),
        )
    multinode = bool(raw.get("multinode", False))
    rows_raw = [
        row
        for block in blocks
        if isinstance(block, dict) and isinstance(block.get("search-space"), list)
        for row in block["search-space"]
    ]
    if not script_launched and rows_raw and all(_row_recipe(row) is None for row in rows_raw):
        raise LaunchedByScript(
            f"{key}: launched by a bash script: no search-space row names an srt-slurm recipe "
            "(no srt-recipe or CONFIG_FILE=)",
            path=path,
            line=yamlsafe.key_line(path, [key]),
        )
    rows: list[Row] = []
    dram = None
    for block in blocks:
        if not isinstance(block, dict):
            raise SyncError(f"{key}: {AGENTIC} block must be a mapping", path=path)
        _known_keys(block, BLOCK_KEYS, f"{key}: {AGENTIC} block", path)
        dram = block.get("dram-utilization", dram)
        search_space = block.get("search-space") or []
        if not isinstance(search_space, list):
            raise SyncError(f"{key}: search-space must be a list of rows", path=path)
        for row_raw in search_space:
            rows.append(_parse_row(key, len(rows), row_raw, path, multinode, script_launched))
    router = raw.get("router")
    recipe_dir = raw.get("srt-recipe-dir")
    if recipe_dir is not None and not isinstance(recipe_dir, str):
        raise SyncError(f"{key}: srt-recipe-dir must be a path, got {js(recipe_dir)}", path=path)
    return ConfigEntry(
        key=key,
        path=path,
        layout_root=layout_root,
        image=raw["image"],
        model=raw["model"],
        model_prefix=str(raw.get("model-prefix", "")),
        runner=str(raw.get("runner", "")),
        precision=str(raw.get("precision", "")),
        framework=raw["framework"],
        multinode=multinode,
        disagg=bool(raw.get("disagg", False)),
        router=router if isinstance(router, dict) else None,
        kv_p2p_transfer=raw.get("kv-p2p-transfer"),
        srt_recipe_dir=recipe_dir,
        rows=rows,
        dram_utilization=dram,
    )


def _parse_row(
    key: str,
    index: int,
    raw: dict[str, Any],
    path: str,
    multinode: bool,
    script_launched: bool = False,
) -> Row:
    where = f"{key}: search-space row {index}"
    if not isinstance(raw, dict):
        raise SyncError(f"{where} must be a mapping", path=path)
    _known_keys(raw, ROW_KEYS, where, path)
    for name in ("tp", "ep", "pp", "pcp-size", "dcp-size", "num-nodes"):
        value = raw.get(name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise SyncError(
                f"{where}: {name} must be a positive integer, got {js(value)}", path=path
            )
    roles = {
        name: RoleSpec.parse(raw[name], f"{where}.{name}", path)
        for name in ("worker", "prefill", "decode")
        if isinstance(raw.get(name), dict)
    }
    named = _row_recipe(raw)
    if named is None and not script_launched:
        raise SyncError(f"{where}: no srt-recipe (or CONFIG_FILE=) names the recipe", path=path)
    recipe, selector, config_file_style = named or (None, None, False)
    settings = _settings(raw)
    eval_recipe, eval_selector = (None, None)
    if "eval-srt-recipe" in raw:
        eval_recipe, eval_selector = _split_selector(str(raw["eval-srt-recipe"]))
    backend = raw.get("kv-offload-backend")
    row = Row(
        index=index,
        concs=_concs(raw, where, path),
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
        synthetic_acceptance=(
            settings["SYNTHETIC_ACCEPTANCE"].strip().lower() == "true"
            if "SYNTHETIC_ACCEPTANCE" in settings
            else None
        ),
        synthetic_acceptance_length=settings.get("SYNTHETIC_ACCEPTANCE_LENGTH", "").strip() or None,
    )
    # A row without a selector names a plain recipe file: the file is one configuration
    # (old-layout multi-node rows, `CONFIG_FILE=recipes/x.yaml`). A bundle named without a
    # selector would submit every variant; that is refused where the file is read.
    return row


def _settings(raw: dict[str, Any]) -> dict[str, str]:
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


def _row_recipe(raw: Any) -> tuple[str, str | None, bool] | None:
    """``(file, selector, config_file_style)`` of the recipe a row names, or None."""
    if not isinstance(raw, dict):
        return None
    if "srt-recipe" in raw:
        recipe, selector = _split_selector(str(raw["srt-recipe"]))
        return recipe, selector, False
    spec = _settings(raw).get("CONFIG_FILE")
    if spec is None:
        return None
    spec = spec.strip()
    spec = spec[len("recipes/") :] if spec.startswith("recipes/") else spec
    recipe, selector = _split_selector(spec)
    return recipe, selector, True


# ---- golden acceptance length ------------------------------------------------------------

GOLDEN_DIRS = ("infx/golden_al_distribution", "golden_al_distribution")


def golden_al_file(entry: ConfigEntry, method: str) -> Path | None:
    name = f"{entry.model_prefix}_{method}.yaml"
    _entry_name(entry, name, f"{entry.key}: golden AL file (from model-prefix)")
    for base in (entry.layout_root, entry.layout_root.parent):
        for sub in GOLDEN_DIRS:
            candidate = base / sub / name
            if checkout.lexically_inside(entry.root_dir, candidate) and present(
                candidate, "golden AL file"
            ):
                return _entry_file(entry, candidate, f"{entry.key}: golden AL file")
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
    return str(value)


# Parsed golden AL files by path and content: every point of a config asks for its curve.
_GOLDEN: dict[tuple[str, bytes], Any] = {}
_GOLDEN_MAX = 16


def _golden_doc(path: Path) -> Any:
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
    value: Any = None
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
    return str(value)


def _entry_file(entry: ConfigEntry, candidate: Path, what: str, *, row: bool = False) -> Path:
    """``candidate``, a file found for master entry ``entry``, when it lies inside the
    checkout; ``row``: the error names the master file and the entry's line (the row's
    recipe name led there)."""
    try:
        return checkout.contained(
            entry.root_dir, candidate, what=what, path=entry.path if row else None
        )
    except SyncError as exc:
        if row:
            exc.line = _entry_line(entry)
        raise


def _entry_name(entry: ConfigEntry, name: str, what: str) -> None:
    """:func:`syncer.checkout.check_name` for a name master entry ``entry`` gives; the error
    names the master file and the entry's line."""
    try:
        checkout.check_name(name, what=what, path=entry.path)
    except SyncError as exc:
        exc.line = _entry_line(entry)
        raise


def _entry_line(entry: ConfigEntry) -> int | None:
    # Looked up only for a message: finding a line reads the whole master file again, and these
    # checks run for every row and file of every key rendered.
    return yamlsafe.key_line(entry.path, [entry.key])
