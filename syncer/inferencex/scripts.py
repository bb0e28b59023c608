"""Config keys launched by a bash script instead of an srt-slurm recipe.

Before single-node AgentX moved to srt-slurm recipes, a master key's rows named no recipe at all
(no ``srt-recipe``, no ``CONFIG_FILE=``): the runner's launch script (``runners/launch_*.sh``)
picked ``benchmarks/single_node/agentic/<code>_<precision>_<gpu>_<framework>[_mtp].sh`` and ran
it, and that script built the ``sglang.launch_server`` command in shell. Such scripts come from
pull requests and are never executed or interpreted here; what their runs logged is read instead
(:mod:`syncer.runs.scriptrun`).

The name rule is the launch scripts' own: ``<code>`` is the matrix ``exp-name`` up to its first
``_`` (the master's ``model-prefix`` unless a row sets ``exp-name``), ``<gpu>`` the SKU each
runner's launch script hard-codes (the runner label's first part: ``cluster:b300-nv`` ->
``b300``), ``_mtp`` only for ``spec-decoding: mtp``. The framework-tagged name is tried first;
older launch scripts (and older scripts) use the name without the engine, except ``_trt`` /
``_atom`` engines, which kept their suffix. AMD's disaggregated frameworks ran multi-node scripts
``benchmarks/multi_node/agentic/<code>_<precision>_<gpu>_<framework>.sh``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from syncer import checkout
from syncer.inferencex import yamlsafe
from syncer.inferencex.master import LaunchedByScript, Master, agentic_rows, launched_by_script

SINGLE_NODE_DIR = "benchmarks/single_node/agentic"
MULTI_NODE_DIR = "benchmarks/multi_node/agentic"
# Engines whose scripts kept an engine suffix before the framework-tagged names.
LEGACY_ENGINE_SUFFIX = {"trt": "_trt", "atom": "_atom"}
MULTI_NODE_SCRIPT_FRAMEWORKS = ("sglang-disagg", "vllm-disagg", "atom-disagg")


class ScriptLaunchedError(LaunchedByScript):
    """A command that needs a recipe met a script-launched key; ``launch`` says which script
    (the master parser's own refusal, with the script found)."""

    def __init__(
        self,
        message: str,
        launch: ScriptLaunch,
        *,
        path: str | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(message, path=path, line=line)
        self.launch = launch


@dataclass(frozen=True)
class ScriptRef:
    """The script one row runs: the name found (or the first one tried) and every name tried."""

    name: str  # relative to the layout root
    path: Path | None  # absolute, when the checkout has it
    candidates: tuple[str, ...]
    also: tuple[str, ...] = ()  # other candidates that exist too (older launchers pick those)


@dataclass
class ScriptLaunch:
    """A script-launched config key: the script each of its rows runs."""

    key: str
    master_path: str
    multinode: bool
    rows: dict[int, ScriptRef] = field(default_factory=dict)  # row index -> script

    @functools.cached_property
    def line(self) -> int | None:
        """The key's line in its master config, found when a message names it: finding it
        composes the whole master (a tenth of a second for a real one), and most uses of a
        launch (discovery, a verify of its run) never say it."""
        return yamlsafe.key_line(self.master_path, [self.key])

    @property
    def scripts(self) -> list[ScriptRef]:
        """Distinct scripts in row order."""
        out: list[ScriptRef] = []
        for ref in self.rows.values():
            if ref.name not in [r.name for r in out]:
                out.append(ref)
        return out

    @property
    def found(self) -> bool:
        return all(ref.path is not None for ref in self.rows.values())

    def describe(self) -> str:
        """The scripts as messages name them: found ones by name, missing ones with the names
        tried."""
        parts = []
        for ref in self.scripts:
            if ref.path is not None and ref.also:
                parts.append(
                    f"{ref.name}; launch scripts without the engine name run {ref.also[0]}"
                )
            elif ref.path is not None:
                parts.append(ref.name)
            else:
                parts.append(f"{' or '.join(ref.candidates)} (not in this checkout)")
        return ", ".join(parts)

    def refusal(self) -> ScriptLaunchedError:
        """What commands that need a recipe say for this key (exit 2)."""
        how = (
            "this tool does not read multi-node script runs"
            if self.multinode
            else f"`sync verify {self.key} --run RUN` compares them with the cookbook"
        )
        return ScriptLaunchedError(
            f"{self.key}: launched by a bash script ({self.describe()}); commands come from its "
            f"run's logs: {how}",
            self,
            path=self.master_path,
            line=self.line,
        )


def gpu_of(raw: dict[str, object], key: str) -> str:
    """The SKU in script names: the runner label's first part, else the key's GPU part."""
    runner = str(raw.get("runner") or "").removeprefix("cluster:")
    if runner:
        return runner.split("-")[0]
    parts = key.split("-")
    return parts[2] if len(parts) > 2 else ""


def _candidates(raw: dict[str, object], row: dict[str, object], key: str) -> tuple[str, ...]:
    framework = str(raw.get("framework") or "")
    precision = str(raw.get("precision") or "")
    code = str(row.get("exp-name") or raw.get("model-prefix") or key.split("-")[0])
    code = code.split("_")[0]
    base = f"{code}_{precision}_{gpu_of(raw, key)}"
    if bool(raw.get("multinode")):
        return (f"{MULTI_NODE_DIR}/{base}_{framework}.sh",)
    spec = "_mtp" if str(row.get("spec-decoding", "none")) == "mtp" else ""
    tagged = f"{SINGLE_NODE_DIR}/{base}_{framework}{spec}.sh"
    legacy = f"{SINGLE_NODE_DIR}/{base}{LEGACY_ENGINE_SUFFIX.get(framework, '')}{spec}.sh"
    return (tagged,) if legacy == tagged else (tagged, legacy)


def script_launch(master: Master, key: str) -> ScriptLaunch | None:
    """The scripts ``key`` runs, or None when a row names a recipe (or the key is not an agentic
    key this module can judge: the master parser then reports what is wrong)."""
    if key not in master.data:
        return None
    raw, path = master.data[key]
    if not launched_by_script(raw):
        return None
    rows = agentic_rows(raw)
    multinode = bool(raw.get("multinode"))
    if multinode and str(raw.get("framework")) not in MULTI_NODE_SCRIPT_FRAMEWORKS:
        return None
    launch = ScriptLaunch(key, path, multinode)
    for index, row in enumerate(rows):
        names = _candidates(raw, row, key)
        existing = [n for n in names if _present(master, master.layout_root / n)]
        name = existing[0] if existing else names[0]
        launch.rows[index] = ScriptRef(
            name=name,
            path=(master.layout_root / name) if existing else None,
            candidates=names,
            also=tuple(existing[1:]),
        )
    return launch


def _present(master: Master, candidate: Path) -> bool:
    """Whether a script file is there, looked at only inside the checkout: the name is built from
    master values a pull request controls (``exp-name``, ``model-prefix``), and even whether a
    file exists outside the checkout is not ours to tell."""
    return (
        checkout.lexically_inside(master.root, candidate)
        and candidate.is_file()
        and checkout.inside(master.root, candidate)
    )


def refuse_script_launched(master: Master, key: str) -> None:
    """Raise the script refusal when ``key`` is launched by a bash script (no recipe to read)."""
    launch = script_launch(master, key)
    if launch is not None:
        raise launch.refusal()
