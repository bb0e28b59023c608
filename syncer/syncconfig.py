"""The sync configuration (``sync.yaml``): which cookbook models show which InferenceX configs, and
the pin of every config (the measured run a `/use` comment chose, or "in progress").

The file is read node by node (``syncconfig_nodes``, over ``yamlsafe.Nodes``: the composer and
the safe constructors of the project's one YAML loader) so that every error names the line of
the offending value, and unknown keys are refused instead of ignored: a typo in a pin must not
silently publish the wrong run.
"""

from __future__ import annotations

import dataclasses
import datetime
import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from syncer import identifiers, links
from syncer.errors import SyncError
from syncer.fsio import read_capped
from syncer.model import ROUTERS, PointStatus
from syncer.syncconfig_nodes import NodeReader
from syncer.wording import js

# The statuses a pin records (``derived`` is the decoder's, never pinned).
STATUSES = (PointStatus.VERIFIED, PointStatus.VERIFIED_PR, PointStatus.IN_PROGRESS)
# Matched whole (fullmatch): `$` would let a trailing newline through, `\d` Unicode digits.
# sync.yaml lists a few dozen configs (a few kB); a bigger file is not one.
MAX_CONFIG_BYTES = 4 * 1024 * 1024
# The values of a pin (sync.yaml's `pin:`, and the state the bot records in a cookbook PR body).
SHA = re.compile(r"[0-9a-f]{40}")
RUN = links.RUN_REF  # `<run id>` or `<run id>/attempts/<n>`
DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
DIGITS = re.compile(links.GITHUB_ID)
PIN_VALUES = {"pr": DIGITS, "sha": SHA, "run": RUN, "comment": DIGITS, "date": DATE}
MODEL_PATH = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")
DEFAULT_REPO = links.repo_url(links.INFERENCEX_REPO)


def is_pin_value(name: str, value: object) -> bool:
    """Whether ``value`` is a valid pin field ``name`` (``PIN_VALUES``: matched whole; a date
    also a real calendar day)."""
    if not isinstance(value, str) or not PIN_VALUES[name].fullmatch(value):
        return False
    return name != "date" or is_date(value)


def recorded_pin(key: object, raw: object) -> Pin | None:
    """The pin a record (a bot PR body's state, a module cell's provenance) holds for config
    ``key``; None when anything in it is malformed."""
    if not identifiers.is_config_key(key) or not isinstance(raw, dict):
        return None
    values: dict[str, str | None] = {}
    # A recorded pin is held to sync.yaml's own pin values (``syncconfig.is_pin_value``).
    for name in PIN_VALUES:
        value = raw.get(name)
        if value is not None and not is_pin_value(name, value):
            return None
        values[name] = value
    status = raw.get("status")
    if status not in STATUSES or values["sha"] is None:
        return None
    return Pin(
        config=key,
        pr=values["pr"],
        sha=values["sha"] or "",
        run=values["run"],
        comment=values["comment"],
        status=PointStatus(status),
        date=values["date"],
    )


def is_date(text: str) -> bool:
    """``YYYY-MM-DD`` and a real calendar day (a pin's date, ``sync generate --date``)."""
    if not DATE.fullmatch(text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Pin:
    """Where one config's cookbook commands come from.

    ``pr``/``sha``: the InferenceX PR and its head commit (``pr`` None and ``sha`` the main
    commit for a config on main); ``run``: the pinned Actions run (``<id>`` or
    ``<id>/attempts/<n>``), None while in progress; ``comment``: the issue-comment id of the
    authorising ``/use``; ``date``: the dashboard date of the run.
    """

    config: str
    pr: str | None
    sha: str
    run: str | None
    comment: str | None
    status: PointStatus
    date: str | None

    def prov(self) -> dict[str, str]:
        """The cell ``prov`` keys this pin decides, in module key order (recipe is per point)."""
        out: dict[str, str] = {"sha": self.sha}
        if self.run:
            out["run"] = self.run
        if self.pr:
            out["pr"] = self.pr
        if self.comment:
            out["comment"] = self.comment
        out["status"] = self.status
        if self.date:
            out["date"] = self.date
        return out


@dataclass
class ConfigSpec:
    """One InferenceX config shown by a cookbook model."""

    key: str
    source: str  # "main" or "pr"
    pin: Pin
    hw: str | None = None
    detail: str | None = None
    image_status: str = "ok"
    image_commit: str | None = None
    setup: list[dict[str, str]] = field(default_factory=list)
    install: dict[str, list[str]] = field(default_factory=dict)
    disclosures: list[str] = field(default_factory=list)
    mooncake_unavailable: str | None = None
    # The config whose HiCache settings this config's cells borrow, instead of the model's
    # kv_donors.hicache (published modules borrow per hardware).
    hicache_donor: str | None = None
    line: int | None = None


@dataclass
class ModelSpec:
    """One cookbook model page and its data module ``<org>/<model>.jsx``."""

    path: str  # org/model, the module path without .jsx
    model: str  # display name
    page: str  # page path inside a cookbook checkout
    section: str  # heading text of the AgentX section
    hardware: list[dict[str, str]]
    configs: list[ConfigSpec]
    hicache_donor: str | None = None
    mooncake_donor: str | None = None
    line: int | None = None
    # The mapping rules (``match:``): InferenceX keys of these model prefixes, or matching
    # these key patterns (shell-style), belong to this model's page.
    prefixes: list[str] = field(default_factory=list)
    key_patterns: list[str] = field(default_factory=list)

    @property
    def module_relpath(self) -> str:
        return f"{self.path}.jsx"

    def config(self, key: str) -> ConfigSpec:
        for spec in self.configs:
            if spec.key == key:
                return spec
        raise SyncError(f"config {js(key)} is not listed under model {js(self.path)}")

    def listed(self, key: str) -> ConfigSpec | None:
        return next((spec for spec in self.configs if spec.key == key), None)

    def matches(self, key: str, model_prefix: str) -> bool:
        """Whether this model's rules claim InferenceX key ``key`` (of ``model_prefix``)."""
        return (
            self.listed(key) is not None
            or model_prefix in self.prefixes
            or any(fnmatch.fnmatchcase(key, pattern) for pattern in self.key_patterns)
        )

    def chip(self, hardware: str) -> bool:
        return any(h["id"] == hardware for h in self.hardware)


@dataclass
class SyncConfig:
    path: str
    repo: str
    main: str
    models: list[ModelSpec]

    def model(self, name: str) -> ModelSpec:
        """The model by org/model path or display name (case-insensitive)."""
        for spec in self.models:
            if name.lower() in (spec.path.lower(), spec.model.lower()):
                return spec
        known = ", ".join(m.path for m in self.models) or "none"
        raise SyncError(f"unknown model {js(name)}; sync.yaml lists: {known}", path=self.path)

    def pins(self) -> dict[str, Pin]:
        return {c.key: c.pin for m in self.models for c in m.configs}

    def model_for(
        self, key: str, model_prefix: str, hardware: str
    ) -> tuple[ModelSpec | None, str | None]:
        """The cookbook model an InferenceX key belongs to by the rules of ``sync.yaml`` (a
        model listing it, else the first whose ``match`` claims it), or None and why not, in
        the words the status comment uses."""
        model = next((m for m in self.models if m.listed(key) is not None), None)
        model = model or next((m for m in self.models if m.matches(key, model_prefix)), None)
        if model is None:
            return None, (
                f"no cookbook page for {key}: no model of sync.yaml matches its model prefix "
                f"{model_prefix} or its key"
            )
        listed = model.listed(key)
        if not model.chip(hardware) and (listed is None or not listed.hw):
            return None, (
                f"no cookbook page for {key}: the {model.model} page ({model.path}) has no "
                f"{hardware} chip"
            )
        return model, None

    def config_spec(self, model: ModelSpec, key: str, pin: Pin) -> ConfigSpec:
        """``key`` as ``model`` shows it: sync.yaml's listing (its overrides) with ``pin``, or a
        plain config with ``pin`` when sync.yaml lists nothing for it."""
        listed = model.listed(key)
        source = "pr" if pin.pr and pin.status != PointStatus.VERIFIED else "main"
        if listed is None:
            return ConfigSpec(key=key, source=source, pin=pin)
        return dataclasses.replace(listed, source=source, pin=pin)

    def model_of(self, config_key: str) -> ModelSpec | None:
        for spec in self.models:
            if any(c.key == config_key for c in spec.configs):
                return spec
        return None

    def pr_sources(self) -> dict[str, Pin]:
        """PR number -> pin of every PR-sourced config of the whole sync, first listing wins."""
        out: dict[str, Pin] = {}
        for spec in self.models:
            for cfg in spec.configs:
                if cfg.source == "pr" and cfg.pin.pr and cfg.pin.pr not in out:
                    out[cfg.pin.pr] = cfg.pin
        return out


def _hardware(r: NodeReader, node: yaml.Node, what: str) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for item in r.sequence(node, what):
        keys = r.mapping(item, what, ("id", "label"))
        if "id" not in keys or "label" not in keys:
            raise r.fail(item, f"{what}: each entry needs 'id' and 'label'")
        hw = {
            "id": r.text(keys["id"], f"{what}.id"),
            "label": r.text(keys["label"], f"{what}.label"),
        }
        if any(h["id"] == hw["id"] for h in out):
            raise r.fail(item, f"{what}: hardware {js(hw['id'])} listed twice")
        out.append(hw)
    if not out:
        raise r.fail(node, f"{what}: expected at least one hardware entry")
    return out


def _pin(
    r: NodeReader,
    key: str,
    source_node: yaml.Node,
    pin_node: yaml.Node | None,
    main: str,
    what: str,
) -> tuple[str, Pin]:
    source, pr, sha = _source(r, source_node, main, what)
    if pin_node is None:
        raise r.fail(
            source_node, f"{what}: missing 'pin' (status verified, verified-pr or in-progress)"
        )
    pin = r.mapping(pin_node, f"{what}.pin", ("status", "run", "comment", "date", "pr", "sha"))
    if "status" not in pin:
        raise r.fail(pin_node, f"{what}.pin: missing 'status'")
    status_text = r.text(pin["status"], f"{what}.pin.status")
    if status_text not in STATUSES:
        raise r.fail(
            pin["status"],
            f"{what}.pin.status: expected one of {', '.join(STATUSES)}, got {js(status_text)}",
        )
    status = PointStatus(status_text)
    run = r.optional_text(
        pin, "run", f"{what}.pin", pattern=RUN, hint="a run id or '<run id>/attempts/<n>'"
    )
    comment = r.optional_text(
        pin, "comment", f"{what}.pin", pattern=DIGITS, hint="an issue-comment id"
    )
    date = r.optional_text(pin, "date", f"{what}.pin", pattern=DATE, hint="a date YYYY-MM-DD")
    if date is not None and not is_date(date):
        raise r.fail(pin["date"], f"{what}.pin.date: {js(date)} is not a calendar date")
    # A config on main may still name the PR that introduced it and the commit it was measured at.
    if "pr" in pin:
        if source == "pr":
            raise r.fail(pin["pr"], f"{what}.pin.pr: the PR is given by 'source' for a PR config")
        pr = r.optional_text(pin, "pr", f"{what}.pin", pattern=DIGITS, hint="a PR number")
    if "sha" in pin:
        if source == "pr":
            raise r.fail(
                pin["sha"], f"{what}.pin.sha: the commit is given by 'source' for a PR config"
            )
        sha = r.text(pin["sha"], f"{what}.pin.sha", SHA, "a commit (40 lowercase hex)")
    node = pin["status"]
    if status == PointStatus.IN_PROGRESS and (run or comment):
        raise r.fail(node, f"{what}.pin: an in-progress config has no pinned run or /use comment")
    if status == PointStatus.VERIFIED_PR and (source != "pr" or not run):
        raise r.fail(node, f"{what}.pin: 'verified-pr' needs a PR source and a pinned run")
    if status == PointStatus.VERIFIED and not run:
        raise r.fail(node, f"{what}.pin: 'verified' needs the measured run")
    if status == PointStatus.VERIFIED and source == "pr":
        raise r.fail(node, f"{what}.pin: a PR that is not merged is 'verified-pr', not 'verified'")
    return source, Pin(
        config=key, pr=pr, sha=sha, run=run, comment=comment, status=status, date=date
    )


def _source(r: NodeReader, node: yaml.Node, main: str, what: str) -> tuple[str, str | None, str]:
    """A config's ``source``: ``main`` (no PR, measured at ``main``), or ``pr`` with its PR
    number and head commit."""
    if r.value(node) == "main":
        return "main", None, main
    src = r.mapping(node, f"{what}.source", ("pr", "sha"))
    if "pr" not in src or "sha" not in src:
        raise r.fail(node, f"{what}.source: expected 'main' or a mapping with 'pr' and 'sha'")
    pr = r.text(src["pr"], f"{what}.source.pr", DIGITS, "a PR number")
    sha = r.text(src["sha"], f"{what}.source.sha", SHA, "the PR head commit (40 lowercase hex)")
    return "pr", pr, sha


_CONFIG_KEYS = (
    "key",
    "source",
    "pin",
    "hw",
    "detail",
    "image_status",
    "image_commit",
    "setup",
    "install",
    "disclosures",
    "mooncake_unavailable",
    "hicache_donor",
)


def _config(r: NodeReader, node: yaml.Node, main: str, what: str) -> ConfigSpec:
    keys = r.mapping(node, what, _CONFIG_KEYS)
    if "key" not in keys:
        raise r.fail(node, f"{what}: each config needs 'key'")
    key = r.text(
        keys["key"], f"{what}.key", identifiers.CONFIG_KEY, "a config key as InferenceX writes one"
    )
    what = f"config {key}"
    if "source" in keys:
        source, pin = _pin(r, key, keys["source"], keys.get("pin"), main, what)
    elif "pin" in keys:
        raise r.fail(keys["pin"], f"{what}: a 'pin' needs its 'source' (main or a PR)")
    else:
        # Overrides only: the bot reads the config's state from InferenceX and the module.
        source = "main"
        pin = Pin(key, None, main, None, None, PointStatus.IN_PROGRESS, None)
    spec = ConfigSpec(key=key, source=source, pin=pin, line=node.start_mark.line + 1)
    spec.hw = r.optional_text(keys, "hw", what)
    spec.detail = r.optional_text(keys, "detail", what)
    spec.image_commit = r.optional_text(keys, "image_commit", what)
    spec.mooncake_unavailable = r.optional_text(keys, "mooncake_unavailable", what)
    spec.hicache_donor = r.optional_text(keys, "hicache_donor", what)
    if "image_status" in keys:
        spec.image_status = r.text(keys["image_status"], f"{what}.image_status")
        if spec.image_status not in ("ok", "pruned", "digest-only"):
            raise r.fail(
                keys["image_status"], f"{what}.image_status: expected ok, pruned or digest-only"
            )
    if "setup" in keys:
        spec.setup.extend(
            _setup(r, item, what) for item in r.sequence(keys["setup"], f"{what}.setup")
        )
    if "install" in keys:
        for router, lines_node in r.mapping(keys["install"], f"{what}.install", ROUTERS).items():
            spec.install[router] = [
                r.text(n, f"{what}.install.{router}")
                for n in r.sequence(lines_node, f"{what}.install.{router}")
            ]
    if "disclosures" in keys:
        for item in r.sequence(keys["disclosures"], f"{what}.disclosures"):
            value = r.text(item, f"{what}.disclosures")
            if value not in ("synthetic-acceptance", "chat-template"):
                raise r.fail(
                    item, f"{what}.disclosures: expected synthetic-acceptance or chat-template"
                )
            spec.disclosures.append(value)
    return spec


def _setup(r: NodeReader, item: yaml.Node, what: str) -> dict[str, str]:
    """One ``setup`` entry of a config: a command or a script, with its reason."""
    entry = r.mapping(item, f"{what}.setup", ("command", "script", "reason"))
    if "reason" not in entry or ("command" in entry) == ("script" in entry):
        raise r.fail(
            item,
            f"{what}.setup: each entry needs 'reason' and one of 'command' or 'script'",
        )
    if "command" in entry:
        return {
            "kind": "setup",
            "command": r.text(entry["command"], f"{what}.setup.command"),
            "reason": r.text(entry["reason"], f"{what}.setup.reason"),
        }
    return {
        "script": r.text(entry["script"], f"{what}.setup.script"),
        "reason": r.text(entry["reason"], f"{what}.setup.reason"),
    }


_MODEL_KEYS = ("path", "model", "page", "section", "hardware", "kv_donors", "match", "configs")
_MATCH_KEYS = ("model-prefix", "keys")


def _match(r: NodeReader, node: yaml.Node, spec: ModelSpec, what: str) -> None:
    rules = r.mapping(node, what, _MATCH_KEYS)
    if not rules:
        raise r.fail(node, f"{what}: expected 'model-prefix' and/or 'keys'")
    for name, target in (("model-prefix", spec.prefixes), ("keys", spec.key_patterns)):
        if name in rules:
            target.extend(r.text(n, f"{what}.{name}") for n in r.sequence(rules[name], what))


def _model(r: NodeReader, node: yaml.Node, main: str) -> ModelSpec:
    keys = r.mapping(node, "model", _MODEL_KEYS)
    for required in ("path", "model", "page", "section", "hardware"):
        if required not in keys:
            raise r.fail(node, f"model: missing {js(required)}")
    path = r.text(
        keys["path"], "model.path", MODEL_PATH, "'<org>/<model>' (the snippet path without .jsx)"
    )
    what = f"model {path}"
    spec = ModelSpec(
        path=path,
        model=r.text(keys["model"], f"{what}.model"),
        page=r.text(keys["page"], f"{what}.page"),
        section=r.text(keys["section"], f"{what}.section"),
        hardware=_hardware(r, keys["hardware"], f"{what}.hardware"),
        configs=[],
        line=node.start_mark.line + 1,
    )
    if not spec.page.endswith(".mdx") or spec.page.startswith("/") or ".." in spec.page.split("/"):
        raise r.fail(keys["page"], f"{what}.page: expected a relative path to an .mdx page")
    if "kv_donors" in keys:
        donors = r.mapping(keys["kv_donors"], f"{what}.kv_donors", ("hicache", "mooncake"))
        spec.hicache_donor = r.optional_text(donors, "hicache", f"{what}.kv_donors")
        spec.mooncake_donor = r.optional_text(donors, "mooncake", f"{what}.kv_donors")
    if "match" in keys:
        _match(r, keys["match"], spec, f"{what}.match")
    for item in r.sequence(keys["configs"], f"{what}.configs") if "configs" in keys else []:
        cfg = _config(r, item, main, f"{what}.configs")
        if any(c.key == cfg.key for c in spec.configs):
            raise r.fail(item, f"{what}: config {js(cfg.key)} listed twice")
        spec.configs.append(cfg)
    if not spec.configs and not (spec.prefixes or spec.key_patterns):
        raise r.fail(node, f"{what}: expected 'configs' or 'match' rules (or both)")
    return spec


def parse_sync_config(text: str, path: str = "sync.yaml") -> SyncConfig:
    r = NodeReader(path, text, ids=(DIGITS, RUN))
    root = r.root()
    top = r.mapping(root, "sync.yaml", ("inferencex", "models"))
    if "inferencex" not in top or "models" not in top:
        raise r.fail(root, "sync.yaml: expected 'inferencex' and 'models'")
    ix = r.mapping(top["inferencex"], "inferencex", ("repo", "main"))
    if "main" not in ix:
        raise r.fail(top["inferencex"], "inferencex: missing 'main' (the InferenceX main commit)")
    repo = r.text(ix["repo"], "inferencex.repo") if "repo" in ix else DEFAULT_REPO
    main = r.text(ix["main"], "inferencex.main", SHA, "a commit (40 lowercase hex)")
    models: list[ModelSpec] = []
    for item in r.sequence(top["models"], "models"):
        model = _model(r, item, main)
        if any(m.path == model.path for m in models):
            raise r.fail(item, f"model {js(model.path)} listed twice")
        # A page imports its module as `agentx`: one AgentX section, so one model, per page.
        other = next((m for m in models if m.page == model.page), None)
        if other is not None:
            raise r.fail(item, f"page {js(model.page)} is already the page of {js(other.path)}")
        models.append(model)
    seen: dict[str, str] = {}
    for model in models:
        for cfg in model.configs:
            if cfg.key in seen:
                raise SyncError(
                    f"config {js(cfg.key)} is listed by both {js(seen[cfg.key])} "
                    f"and {js(model.path)}",
                    path=path,
                    line=cfg.line,
                )
            seen[cfg.key] = model.path
    return SyncConfig(path=path, repo=repo.rstrip("/"), main=main, models=models)


def load_sync_config(path: Path | str) -> SyncConfig:
    """Read and validate ``sync.yaml``."""
    p = Path(path)
    if not p.exists():
        raise SyncError("sync configuration not found", path=str(p))
    raw = read_capped(p, MAX_CONFIG_BYTES, "the sync configuration")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SyncError(f"not UTF-8: {exc}", path=str(p)) from None
    return parse_sync_config(text, str(p))
