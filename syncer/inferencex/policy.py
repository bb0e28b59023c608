"""Raw blocks -> cookbook form, driven by the one exclusion policy (``syncer/data/policy.yaml``).

Each policy entry names a flag or env pattern, the process kinds it applies to, an action
and the reason reports print. Beyond the entries, the cookbook form has a fixed layout the
published cells show (worker args in the cookbook's lead-flag order, env keys sorted, the rest
in :mod:`syncer.inferencex.cookbook_layout`).
"""

from __future__ import annotations

import copy
import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from syncer.errors import SyncError
from syncer.inferencex import yamlsafe
from syncer.inferencex.cookbook_layout import (
    DISCOVERY,
    cookbook_order,
    frontend_count,
    infra_command,
    key_ordered,
    kv_events_endpoint,
    last_wins,
    merge_stores,
    preamble_nats_conf,
    repeated_flags,
    router_layout,
    split_equals,
    without_unused_dynamo_plane,
    worker_url,
)
from syncer.inferencex.policy_rules import (
    ACTIONS,
    KINDS,
    Exclusion,
    MountedFile,
    MountRule,
    PolicyAction,
    ValueRule,
)
from syncer.inferencex.processes import nginx_block
from syncer.inferencex.releases import FRONTEND_INTERNAL_PORT, FrontendTopology
from syncer.inferencex.srtconfigs import SrtSlurmFiles
from syncer.model import Block, as_block, block_data, sort_worker_args, sorted_env
from syncer.wording import js


@dataclass
class Policy:
    """The exclusion policy: its entries, value rules and mounted-directory rules."""

    entries: list[Exclusion]
    path: str = "syncer/data/policy.yaml"
    values: list[ValueRule] = field(default_factory=list)
    mounts: list[MountRule] = field(default_factory=list)
    _memo: dict[tuple[str, str, str, str | None], Exclusion | None] = field(
        default_factory=dict, repr=False
    )
    # (kind, field) -> the entries that can cover it: those with ``values:``, the others
    _candidates: dict[tuple[str, str], tuple[list[Exclusion], list[Exclusion]]] = field(
        default_factory=dict, repr=False, compare=False
    )
    _placeheld: dict[tuple[str, str], str] = field(default_factory=dict, repr=False, compare=False)

    def exclusion(
        self, kind: str, field: str, name: str, value: str | None = None
    ) -> Exclusion | None:
        """First entry covering ``name`` (a flag with ``--`` or an env key) for a process kind;
        entries that apply only to some values (``values:``) need the ``value``."""
        # Memoised with the value: every point of a config asks about the same flags and
        # values again, and each answer is a scan of the whole policy.
        key = (kind, field, name, value)
        try:
            return self._memo[key]
        except KeyError:
            pass
        candidates = self._candidates.get((kind, field))
        if candidates is None:
            covering = [e for e in self.entries if e.field == field and kind in e.kinds]
            candidates = self._candidates[(kind, field)] = (
                [e for e in covering if e.values],
                [e for e in covering if not e.values],
            )
        valued, plain = candidates
        found = None
        if value is not None:
            found = next((e for e in valued if e.matches(kind, field, name, value)), None)
        if found is None:
            found = next((e for e in plain if e.matches(kind, field, name)), None)
        self._memo[key] = found
        return found

    def to_cookbook(
        self, raw_blocks: list[Block], layer: FrontendTopology | None = None
    ) -> list[Block]:
        """Cookbook form of one deployment's raw blocks (never mutates the input). ``layer``:
        where srt-slurm ran the frontends (default: behind nginx when an nginx block is there,
        else on the head node)."""
        raw_blocks = without_unused_dynamo_plane(raw_blocks)
        workers = [b for b in raw_blocks if b.get("kind") == "worker"]
        if layer is None:
            nginx = any(b.get("kind") == "nginx" for b in raw_blocks)
            local = True
        else:
            nginx, local = layer.port == FRONTEND_INTERNAL_PORT, layer.on_head
        ran_nginx = any(b.get("kind") == "nginx" for b in raw_blocks)
        if layer is not None and layer.nginx and not ran_nginx:
            # shown behind nginx where srt-slurm ran none (one node: published_frontend_layer)
            raw_blocks = [nginx_block(), *raw_blocks]
        kinds = {str(b.get("kind")) for b in raw_blocks}
        blocks = [self._block(_copied(b), workers, nginx, kinds, local) for b in raw_blocks]
        if layer is not None:
            blocks = [frontend_count(b, layer.count) for b in blocks]
        return cookbook_order(merge_stores(blocks))

    def files(
        self, raw_blocks: list[Block], srt: SrtSlurmFiles | None = None
    ) -> dict[str, dict[str, str]]:
        """Config files the cookbook ships with the deployment's commands, keyed
        ``<name>#<first 8 hex of the content's SHA-256>`` (the published modules' file ids), in
        id order (the published routers list them so): the NATS config srt-slurm writes when
        the recipe limits the payload size, and each file of srt-slurm's checkout a kept value
        names whose content ``srt`` has (see :meth:`missing_files` for the others)."""
        out: dict[str, dict[str, str]] = {}
        for block in raw_blocks:
            if block.get("kind") == "nats":
                content = preamble_nats_conf(block)
                if content is not None:
                    out[file_id("nats.conf", content)] = {"name": "nats.conf", "content": content}
        for ref in self.mounted_files(raw_blocks):
            content = srt.read(ref.rule.directory, ref.relpath) if srt is not None else None
            if content is not None:
                out[file_id(ref.name, content)] = {"name": ref.name, "content": content}
        return {fid: out[fid] for fid in sorted(out)}

    def missing_files(
        self, raw_blocks: list[Block], srt: SrtSlurmFiles | None = None
    ) -> list[MountedFile]:
        """The files of srt-slurm's checkout the commands name but ``srt`` cannot provide
        (one reference per file): the cookbook form names them, the content is unknown."""
        out: list[MountedFile] = []
        seen: set[str] = set()
        for ref in self.mounted_files(raw_blocks):
            if ref.source in seen:
                continue
            seen.add(ref.source)
            if srt is None or srt.read(ref.rule.directory, ref.relpath) is None:
                out.append(ref)
        return out

    def mounted_files(self, raw_blocks: list[Block]) -> list[MountedFile]:
        """Every kept arg or env value naming a file of srt-slurm's checkout, in block
        order. Two different files with one name cannot both be in the working directory the
        cookbook's commands assume, so that is refused."""
        if not self.mounts:
            return []
        refs: list[MountedFile] = []
        for block in raw_blocks:
            kind = str(block.get("kind", ""))
            values = [
                (arg[0], v)
                for arg in block.get("args") or []
                if self.exclusion(kind, "flag", arg[0], _first(arg)) is None
                for v in arg[1:]
            ]
            values += [
                (key, v)
                for key, v in (block.get("env") or {}).items()
                if self.exclusion(kind, "env", key, v) is None
            ]
            for setting, value in values:
                ref = self._mounted(kind, setting, value)
                if ref is not None:
                    refs.append(ref)
        by_name: dict[str, MountedFile] = {}
        for ref in refs:
            other = by_name.setdefault(ref.name, ref)
            if other.source != ref.source:
                raise SyncError(
                    f"{other.setting} {other.value} and {ref.setting} {ref.value} are two "
                    f"srt-slurm files named {ref.name}; the cookbook's commands name files in "
                    "the working directory, where only one of them can be"
                )
        return refs

    def _mounted(self, kind: str, setting: str, value: str) -> MountedFile | None:
        for rule in self.mounts:
            rel = rule.relpath(kind, value)
            if rel is not None:
                return MountedFile(rule, rel, kind, setting, value)
        return None

    def applied(self, raw_blocks: list[Block]) -> list[Exclusion]:
        """The entries that removed or replaced a setting of ``raw_blocks`` (each once, in the
        order the blocks name them): what the bot's PR body lists as excluded."""
        found: dict[Exclusion, None] = {}
        for block in raw_blocks:
            kind = str(block.get("kind", ""))
            names = [("flag", arg[0], _first(arg)) for arg in block.get("args") or []]
            names += [("env", key, value) for key, value in (block.get("env") or {}).items()]
            for setting, name, value in names:
                entry = self.exclusion(kind, setting, name, value)
                if entry is not None:
                    found[entry] = None
        return list(found)

    def disclosures(self, raw_blocks: list[Block]) -> list[str]:
        """Disclosures the cookbook shows for settings the policy removed (e.g. a chat
        template that lives in the InferenceX workspace)."""
        return list(dict.fromkeys(e.disclosure for e in self.applied(raw_blocks) if e.disclosure))

    # -- per block ------------------------------------------------------------------------

    def _block(
        self,
        block: Block,
        workers: list[Block],
        nginx: bool = False,
        kinds: set[str] | None = None,
        local: bool = True,
    ) -> Block:
        kind = block.get("kind", "")
        role = str(block.get("role", "agg"))
        block.pop("service", None)
        env = self._env(block, role, nginx, kinds)
        raw_args = [list(a) for a in block.get("args") or []]
        if kind == "mooncake-master":
            raw_args = split_equals(raw_args)
        repeated = repeated_flags(raw_args) if kind == "worker" else set()
        if kind in ("worker", "mooncake-master"):
            raw_args = last_wins(raw_args, keep_first_position=kind == "worker")
        args: list[list[str]] = []
        for arg in raw_args:
            entry = self.exclusion(kind, "flag", arg[0], _first(arg))
            if entry is None:
                args.append([arg[0], *(self._placeholders(kind, v) for v in arg[1:])])
            elif entry.action == PolicyAction.SET:
                if not entry.any_source and (arg[0] in repeated or not entry.injected_into(block)):
                    # the recipe repeats a flag srt-slurm injects (its own value is the one
                    # SGLang uses: argparse keeps the last), or sets one srt-slurm does not
                    # inject here: either way the value is the recipe's and the cookbook shows it
                    args.append(list(arg))
                else:
                    args.append([arg[0], self._value(entry, role, nginx)])
            elif entry.action == PolicyAction.KV_EVENTS:
                text = arg[1] if len(arg) > 1 else "{}"
                args.append([arg[0], kv_events_endpoint(text, entry.value or "")])
            elif entry.action == PolicyAction.WORKER_URL:
                args.append(worker_url(arg, entry.value or "30000", workers, local))
        if kind == "worker":
            args = sort_worker_args(args)
        elif kind == "sglang-router":
            args = router_layout(args)
        block["env"] = sorted_env(env)
        block["args"] = args
        cmd = str(block.get("cmd", ""))
        if kind in ("etcd", "nats"):
            infra_command(block)
        elif cmd.startswith("python -m ") and kind != "mooncake-store":
            # the cookbook names one interpreter for every SGLang/router process; published
            # Mooncake store blocks keep the store's own `python -m` (as the published modules do)
            block["cmd"] = "python3" + cmd[len("python") :]
        if kind == "sglang-router" and block.get("count", 1) == 1:
            block.pop("count", None)
        return key_ordered(block)

    def _env(self, block: Block, role: str, nginx: bool, kinds: set[str] | None) -> dict[str, str]:
        """A block's env in the cookbook form: excluded keys dropped, set ones replaced."""
        kind = block.get("kind", "")
        env: dict[str, str] = {}
        for key, value in (block.get("env") or {}).items():
            if (
                kind in ("mooncake-master", "mooncake-store")
                and key in DISCOVERY
                and kinds is not None
                and DISCOVERY[key] not in kinds
            ):
                # the address of a service this deployment does not run (srt-slurm sets it on
                # every Mooncake process; published SGLang-router cells show none)
                continue
            entry = self.exclusion(kind, "env", key, value)
            if entry is None:
                env[key] = self._placeholders(kind, value)
            elif entry.action == PolicyAction.SET:
                env[key] = self._value(entry, role, nginx)
            # drop / pinning: removed (the pinning is carried by the block's gpu_pinning)
        return env

    def _placeholders(self, kind: str, value: str) -> str:
        # Memoised: every point and router of a config passes the same values again.
        key = (kind, value)
        done = self._placeheld.get(key)
        if done is not None:
            return done
        mounted = self._mounted(kind, "", value)
        if mounted is not None:
            # the router ships the file; the command names it in the working directory
            done = mounted.name
        else:
            done = value
            for rule in self.values:
                done = rule.apply(kind, done)
        self._placeheld[key] = done
        return done

    @staticmethod
    def _value(entry: Exclusion, role: str, nginx: bool = False) -> str:
        value = entry.nginx_value if nginx and entry.nginx_value is not None else entry.value
        return (value or "").replace("{ROLE}", role.upper())


def _copied(block: Block) -> Block:
    """The copy of a raw block that ``_block`` turns into its cookbook form. Its ``env`` and
    ``args`` (most of a block) are only read there and replaced by the cookbook's own, so they
    are not copied; the rest is."""
    return as_block(
        {k: v if k in ("env", "args") else _plain_copy(v) for k, v in block_data(block).items()}
    )


def _plain_copy(value: Any) -> Any:
    """A deep copy of plain data (what blocks are made of: mappings, lists, strings, numbers),
    without ``copy.deepcopy``'s dispatch and memo per object; anything else is deep-copied."""
    kind = type(value)
    if kind is dict:
        return {k: _plain_copy(v) for k, v in value.items()}
    if kind is list:
        return [_plain_copy(v) for v in value]
    if kind is str or kind is int or kind is bool or kind is float or value is None:
        return value
    return copy.deepcopy(value)


def file_id(name: str, content: str) -> str:
    return f"{name}#{hashlib.sha256(content.encode('utf-8')).hexdigest()[:8]}"


def _first(arg: list[str]) -> str | None:
    return arg[1] if len(arg) > 1 else None


# The package's own file, read as helptext reads help.txt (importlib.resources is a cost of
# every start-up).
POLICY_FILE = Path(__file__).parents[1] / "data" / "policy.yaml"


@lru_cache(maxsize=1)
def _default_policy() -> Policy:
    text = POLICY_FILE.read_text(encoding="utf-8")
    return parse_policy(yamlsafe.loads(text, "syncer/data/policy.yaml"), "syncer/data/policy.yaml")


def load_policy(path: str | None = None) -> Policy:
    """The exclusion policy (the packaged one unless a path is given)."""
    if path is None:
        return _default_policy()
    return parse_policy(yamlsafe.load(path), str(path))


_REQUIRED_KEYS = {"name", "field", "pattern", "kinds", "action", "reason"}
_OPTIONAL_KEYS = {"value", "nginx_value", "values", "disclosure", "injected_for", "any_source"}
_VALUE_KEYS = {"name", "regex", "replace", "kinds", "reason"}


def parse_policy(doc: object, path: str) -> Policy:
    if (
        not isinstance(doc, dict)
        or doc.get("version") != 1
        or not isinstance(doc.get("entries"), list)
    ):
        raise SyncError("policy must be {version: 1, entries: [...]}", path=path)
    entries: list[Exclusion] = []
    names: set[str] = set()
    for i, raw in enumerate(doc["entries"]):
        entries.append(_entry(raw, f"entries[{i}]", path, names))
    return Policy(
        entries=entries,
        path=path,
        values=_value_rules(doc.get("values"), path),
        mounts=_mount_rules(doc.get("mounted_files"), path),
    )


def _entry(raw: object, where: str, path: str, names: set[str]) -> Exclusion:
    """One entry of the policy, checked (``names``: the entry names read so far)."""
    raw = _entry_keys(raw, where, path)
    kinds = tuple(raw["kinds"]) if isinstance(raw["kinds"], list) else ()
    if not kinds or set(kinds) - KINDS:
        raise SyncError(f"{where}: kinds must be a list of {', '.join(sorted(KINDS))}", path=path)
    if raw["action"] in ("set", "kv-events", "worker-url") and not isinstance(
        raw.get("value"), str
    ):
        raise SyncError(f"{where}: action {raw['action']} needs a string value", path=path)
    if raw["name"] in names:
        raise SyncError(f"{where}: duplicate entry name {js(raw['name'])}", path=path)
    names.add(raw["name"])
    values = raw.get("values", [])
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise SyncError(f"{where}: values must be a list of glob strings", path=path)
    if raw.get("disclosure") is not None and not isinstance(raw["disclosure"], str):
        raise SyncError(f"{where}: disclosure must be a string", path=path)
    injected = raw.get("injected_for", [])
    if not isinstance(injected, list) or set(injected) - {
        "agg",
        "prefill",
        "decode",
        "multi-node",
    }:
        raise SyncError(
            f"{where}: injected_for must list agg, prefill, decode or multi-node", path=path
        )
    if not isinstance(raw.get("any_source", False), bool):
        raise SyncError(f"{where}: any_source must be true or false", path=path)
    return Exclusion(
        name=str(raw["name"]),
        field=raw["field"],
        pattern=str(raw["pattern"]),
        kinds=kinds,
        action=PolicyAction(raw["action"]),
        reason=str(raw["reason"]),
        value=raw.get("value"),
        nginx_value=raw.get("nginx_value"),
        values=tuple(values),
        disclosure=raw.get("disclosure"),
        injected_for=tuple(injected),
        any_source=raw.get("any_source", False),
    )


def _entry_keys(raw: object, where: str, path: str) -> dict[str, Any]:
    """An entry's keys: the required ones there, no unknown one, a known field and action."""
    if not isinstance(raw, dict):
        raise SyncError(f"{where} must be a mapping", path=path)
    missing = _REQUIRED_KEYS - set(raw)
    if missing:
        raise SyncError(f"{where}: missing {', '.join(sorted(missing))}", path=path)
    unknown = set(raw) - _REQUIRED_KEYS - _OPTIONAL_KEYS
    if unknown:
        raise SyncError(f"{where}: unknown key {js(sorted(unknown)[0])}", path=path)
    if raw["field"] not in ("flag", "env"):
        raise SyncError(f"{where}: field must be flag or env", path=path)
    if raw["action"] not in ACTIONS:
        raise SyncError(f"{where}: action must be one of {', '.join(sorted(ACTIONS))}", path=path)
    return raw


def _value_rules(doc: object, path: str) -> list[ValueRule]:
    """The ``values:`` section: cluster values and srt-slurm templates inside kept values."""
    if doc is None:
        return []
    if not isinstance(doc, list):
        raise SyncError("values must be a list of rules", path=path)
    rules: list[ValueRule] = []
    for i, raw in enumerate(doc):
        where = f"values[{i}]"
        if not isinstance(raw, dict) or set(raw) != _VALUE_KEYS:
            raise SyncError(f"{where} needs exactly {', '.join(sorted(_VALUE_KEYS))}", path=path)
        kinds = tuple(raw["kinds"]) if isinstance(raw["kinds"], list) else ()
        if not kinds or set(kinds) - KINDS:
            raise SyncError(f"{where}: kinds must be a list of process kinds", path=path)
        try:
            regex = re.compile(str(raw["regex"]))
        except re.error as exc:
            raise SyncError(f"{where}: bad regex: {exc}", path=path) from None
        rules.append(
            ValueRule(str(raw["name"]), regex, str(raw["replace"]), kinds, str(raw["reason"]))
        )
    return rules


_MOUNT_KEYS = {"name", "mount", "directory", "kinds", "reason"}


def _mount_rules(doc: object, path: str) -> list[MountRule]:
    """The ``mounted_files:`` section: directories of srt-slurm's checkout mounted into the
    containers."""
    if doc is None:
        return []
    if not isinstance(doc, list):
        raise SyncError("mounted_files must be a list of rules", path=path)
    rules: list[MountRule] = []
    for i, raw in enumerate(doc):
        where = f"mounted_files[{i}]"
        if not isinstance(raw, dict) or set(raw) != _MOUNT_KEYS:
            raise SyncError(f"{where} needs exactly {', '.join(sorted(_MOUNT_KEYS))}", path=path)
        mount, directory = raw["mount"], raw["directory"]
        if not isinstance(mount, str) or not re.fullmatch(r"(/[A-Za-z0-9_.-]+)+", mount):
            raise SyncError(f"{where}: mount must be an absolute path like /configs", path=path)
        if (
            not isinstance(directory, str)
            or not re.fullmatch(r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*", directory)
            or ".." in directory.split("/")
        ):
            raise SyncError(f"{where}: directory must be a relative path like configs", path=path)
        kinds = tuple(raw["kinds"]) if isinstance(raw["kinds"], list) else ()
        if not kinds or set(kinds) - KINDS:
            raise SyncError(f"{where}: kinds must be a list of process kinds", path=path)
        rules.append(MountRule(str(raw["name"]), mount, directory, kinds, str(raw["reason"])))
    return rules
