"""YAML loading the way srt-slurm does it (PyYAML ``safe_load``, YAML 1.1), made strict.

PyYAML keeps the last of two duplicate keys without a word. Our own inputs (master configs,
the policy, sync.yaml) refuse a duplicate with its line. A recipe is read as srt-slurm read it
when it ran (``duplicates=`` a list): the last value wins, and a warning naming both lines is
added to the list, since a duplicate is almost always a mistake that changed the launch. Aliases
are resolved by PyYAML to shared objects, so an "alias bomb" costs nothing at load time but
explodes in every later merge and render: the expanded size is measured once and refused
above a sane limit.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import re
from collections import OrderedDict, deque
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import yaml

from syncer import gcpause
from syncer.errors import SyncError
from syncer.fsio import read_capped
from syncer.recent import Recent
from syncer.wording import js

MAX_FILE_BYTES = 8 * 1024 * 1024
# A real master config (~150 keys) expands to well under a million nodes; a billion-laughs
# document needs far more.
MAX_EXPANDED_NODES = 2_000_000
MAX_DEPTH = 200
TOO_DEEP = f"YAML nesting deeper than {MAX_DEPTH} levels; refusing it"

if TYPE_CHECKING:
    _Base = yaml.SafeLoader
else:
    _Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR_TAG = "tag:yaml.org,2002:str"


_MERGE = "tag:yaml.org,2002:merge"


class _MergeAsSrtSlurm:
    """Merge keys resolved the way srt-slurm's PyYAML resolved them, whatever PyYAML is
    installed: PyYAML up to 6.0.3 (and the YAML merge spec) give the *first* mapping of
    ``<<: [*a, *b]`` precedence; 6.0.4 gives the last one for most keys (yaml/pyyaml#953).
    srt-slurm pins no PyYAML (``pyyaml>=6.0``, no lock) and the runs InferenceX pinned were
    read with a release before the change. Explicit keys win over merged ones; a mapping
    merged several times is flattened once and its keys counted once, so nested merges cost
    what the document holds (PyYAML's merge-key blow-up, yaml/pyyaml#897, stays closed)."""

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        merged: list[tuple[yaml.Node, yaml.Node]] = []
        explicit: list[tuple[yaml.Node, yaml.Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE:
                if key_node.tag == "tag:yaml.org,2002:value":
                    key_node.tag = "tag:yaml.org,2002:str"
                explicit.append((key_node, value_node))
                continue
            if isinstance(value_node, yaml.MappingNode):
                sources = [value_node]
            elif isinstance(value_node, yaml.SequenceNode):
                sources = list(reversed(value_node.value))  # the later pairs win below
                for source in sources:
                    if not isinstance(source, yaml.MappingNode):
                        raise yaml.constructor.ConstructorError(
                            "while constructing a mapping",
                            node.start_mark,
                            f"expected a mapping for merging, but found {source.id}",
                            source.start_mark,
                        )
            else:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "expected a mapping or list of mappings for merging, but found "
                    f"{value_node.id}",
                    value_node.start_mark,
                )
            for source in sources:
                self.flatten_mapping(source)
                merged.extend(source.value)
        if len(explicit) != len(node.value):
            node.value = _last_wins(merged + explicit)


def _last_wins(pairs: list[tuple[yaml.Node, yaml.Node]]) -> list[tuple[yaml.Node, yaml.Node]]:
    """``pairs`` with one pair per key: placed where the key first appears, with the value of
    its last appearance (what building a dict from all of them gives)."""
    slots: dict[object, int] = {}
    out: list[tuple[yaml.Node, yaml.Node]] = []
    for key_node, value_node in pairs:
        ident = (
            (key_node.tag, key_node.value) if isinstance(key_node, yaml.ScalarNode) else key_node
        )
        if ident in slots:
            out[slots[ident]] = (out[slots[ident]][0], value_node)
        else:
            slots[ident] = len(out)
            out.append((key_node, value_node))
    return out


class _StrictLoader(_MergeAsSrtSlurm, _Base):
    """Safe loader that refuses duplicate mapping keys (merge keys excepted) and keys YAML 1.1
    reads as booleans (``on:``, ``off:``, ``yes:``)."""

    source_path = "<yaml>"
    # None: a duplicate key is refused; a list: the last value wins and a warning is appended
    duplicates: list[str] | None = None

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._tags: dict[str, str] = {}

    def resolve(self, kind: type, value: str, implicit: tuple[bool, bool]) -> str:
        # The parser asks for the tag of every scalar, and a document repeats its scalars
        # (keys, numbers, flags): a plain scalar's tag depends on its text only.
        if kind is _SCALAR_NODE and implicit[0] and not self.yaml_path_resolvers:
            tag = self._tags.get(value)
            if tag is None:
                # PyYAML's resolver is untyped (its stubs too); the tag it gives is a str.
                tag = self._tags[value] = super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]
            return tag
        resolved: str = super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]
        return resolved

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[object, object]:
        self._check_keys(node)
        return super().construct_mapping(node, deep=deep)

    def _check_keys(self, node: yaml.MappingNode) -> bool:
        """Refuse a duplicate or boolean key of ``node``; whether it has a merge key."""
        seen: dict[object, yaml.Node] = {}
        merges = False
        for key_node, _ in node.value:
            tag = key_node.tag
            if tag in _TEXT_KEY_TAGS and type(key_node) is _SCALAR_NODE:
                key = key_node.value  # what constructing a string scalar gives, for less
            elif tag == _MERGE:
                merges = True
                continue
            else:
                key = self.construct_object(key_node, deep=True)
                try:
                    hash(key)
                except TypeError:
                    continue
                if key is None or isinstance(key, bool):
                    # `on: 1` renders as `--True 1`, and srt-slurm fails on it: said, with its
                    # line.
                    what = "null" if key is None else f"the boolean {js(key)}"
                    raise SyncError(
                        f"key {js(key_node.value)} is read by YAML 1.1 as {what}, not a name; "
                        f"quote it ('{key_node.value}':) if the name is meant",
                        path=self.source_path,
                        line=key_node.start_mark.line + 1,
                        column=key_node.start_mark.column + 1,
                    )
            if key in seen:
                self._duplicate(key, seen[key], key_node)
            seen[key] = key_node
        return merges

    def _duplicate(self, key: object, first: yaml.Node, again: yaml.Node) -> None:
        line, first_line = again.start_mark.line + 1, first.start_mark.line + 1
        if self.duplicates is None:
            raise SyncError(
                f"duplicate key {js(key)} (first defined on line {first_line})",
                path=self.source_path,
                line=line,
                column=again.start_mark.column + 1,
            )
        self.duplicates.append(
            f"{self.source_path}:{line}: duplicate key {js(key)} (lines {first_line} and "
            f"{line}): the value on line {line} wins, as PyYAML's safe_load reads it"
        )

    def construct_document(self, node: yaml.Node) -> object:
        """What PyYAML's construction gives, for less: the plain nodes every input is made of
        (strings, numbers, booleans, nulls, dates, lists, mappings) are built here without
        PyYAML's generator and bookkeeping per node, which cost as much as parsing; any other
        node is built by PyYAML itself. Breadth first, as PyYAML's generators run, so a
        document with several faults is refused for the same first one; aliases share one
        object as in PyYAML (``constructed_objects`` is the one memo of both)."""
        pending: deque[tuple[Any, Any]] = deque()
        data = self._plain(node, pending)
        while pending:
            parent, container = pending.popleft()
            if type(container) is list:
                container.extend([self._plain(child, pending) for child in parent.value])
            else:
                self._fill_mapping(parent, container, pending)
        while self.state_generators:  # PyYAML's own, if a node it built left any
            generators, self.state_generators = self.state_generators, []
            for generator in generators:
                for _ in generator:
                    pass
        self.constructed_objects = {}
        self.recursive_objects = {}
        self.deep_construct = False
        return data

    def _plain(self, node: yaml.Node, pending: deque[tuple[Any, Any]]) -> object:
        """``node``'s value; a list or mapping is returned empty and filled from ``pending``."""
        kind, tag = type(node), node.tag
        if kind is _SCALAR_NODE:
            if tag == _STR_TAG:
                return node.value
            if tag == _INT_TAG:
                text = node.value
                if text.isascii() and text.isdigit() and (text[0] != "0" or text == "0"):
                    return int(text)  # a plain decimal, what construct_yaml_int makes of it
            if tag in _PLAIN_SCALARS:
                # PyYAML's own constructor (plain functions for these tags, no generator)
                return self.yaml_constructors[tag](self, node)
        elif kind is yaml.MappingNode or kind is yaml.SequenceNode:
            built = self.constructed_objects
            if node in built:
                return built[node]  # an alias
            if tag == _MAP_TAG and kind is yaml.MappingNode:
                mapping: dict[object, object] = {}
                built[node] = mapping
                pending.append((node, mapping))
                return mapping
            if tag == _SEQ_TAG and kind is yaml.SequenceNode:
                items: list[object] = []
                built[node] = items
                pending.append((node, items))
                return items
        return self.construct_object(node, deep=True)

    def _fill_mapping(
        self, node: yaml.MappingNode, mapping: dict[object, object], pending: deque[Any]
    ) -> None:
        # PyYAML's order: the keys checked, merge keys resolved, then each pair built (the
        # value key `=` is the string flatten_mapping makes of it)
        if self._check_keys(node):
            self.flatten_mapping(node)
        for key_node, value_node in node.value:
            if key_node.tag in _TEXT_KEY_TAGS and type(key_node) is yaml.ScalarNode:
                key = key_node.value
            else:
                key = self._plain(key_node, pending)
                try:
                    hash(key)
                except TypeError:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        "found unhashable key",
                        key_node.start_mark,
                    ) from None
            mapping[key] = self._plain(value_node, pending)


_SCALAR_NODE = yaml.ScalarNode
# Key tags built as the key's text: strings, and YAML 1.1's value key `=`, which PyYAML's
# flatten_mapping turns into the string "=" before any mapping is built.
_TEXT_KEY_TAGS = frozenset((_STR_TAG, "tag:yaml.org,2002:value"))
_INT_TAG = "tag:yaml.org,2002:int"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
# Scalar tags whose safe constructors are plain functions (no generator, no recursion).
_PLAIN_SCALARS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("null", "bool", "int", "float", "binary", "timestamp")
)


def _timestamp(loader: Any, node: yaml.ScalarNode) -> object:
    # PyYAML's own constructor fails with an AttributeError on `!!timestamp` of a text that is
    # no timestamp; refused as the bad value it is, at its line.
    if loader.timestamp_regexp.match(loader.construct_scalar(node)) is None:
        raise yaml.constructor.ConstructorError(
            None, None, f"{js(node.value)} is not a YAML timestamp", node.start_mark
        )
    return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)


def _loader_for(path: str, duplicates: list[str] | None = None) -> type:
    return type("_PathLoader", (_StrictLoader,), {"source_path": path, "duplicates": duplicates})


# Documents parsed in this process, by what decides the value (the text, and whether duplicates
# are warned of) -> the value's marshal bytes, and the warnings it gave with the path they name,
# newest last: one command or bot event renders the same recipes and shared blocks again and
# again (often from copies of a tree at other paths), and unmarshalling is several times cheaper
# than building the value again. Marshal (version 3 and later) keeps the objects aliases share
# shared, and every hit builds fresh objects a caller may mutate. A value marshal cannot hold (a
# date) is parsed each time; a refusal is never kept; warnings naming another path are not
# reused.
_PARSED: Recent[tuple[str, bool], tuple[bytes, str, tuple[str, ...]]] = Recent(128)
_PARSED_MAX_CHARS = 1024 * 1024  # larger texts are few (master configs, kept by master.py)


def loads(text: str, path: str = "<yaml>", *, duplicates: list[str] | None = None) -> object:
    """Parse YAML text strictly; errors name ``path`` and the line. With ``duplicates`` (a
    list), a duplicate key keeps its last value and a warning is appended instead. Each call
    returns values of its own (the same text is parsed once per process)."""
    key = (text, duplicates is not None)
    kept = _PARSED.recall(key)
    if kept is not None and (not kept[2] or kept[1] == path):
        if duplicates is not None:
            duplicates.extend(kept[2])
        return marshal.loads(kept[0])
    warned: list[str] | None = [] if duplicates is not None else None
    try:
        data = _parse(text, path, warned)
    finally:  # also when it is refused: a duplicate key is often why
        if duplicates is not None and warned:
            duplicates.extend(warned)
    if len(text) <= _PARSED_MAX_CHARS:
        with contextlib.suppress(ValueError):  # a type marshal does not write (datetime)
            _PARSED.keep(key, (marshal.dumps(cast(Any, data), 4), path, tuple(warned or ())))
    return data


def _parse(text: str, path: str, duplicates: list[str] | None) -> object:
    try:
        with gcpause.paused():
            data = yaml.load(text, Loader=_loader_for(path, duplicates))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        raise SyncError(
            f"YAML syntax error: {problem}",
            path=path,
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
        ) from None
    except yaml.YAMLError as exc:
        raise SyncError(f"YAML error: {exc}", path=path) from None
    except ValueError as exc:
        # int() refuses a scalar of thousands of digits: a PR's recipe must not crash the bot.
        raise SyncError(f"YAML value the loader cannot build: {str(exc)[:80]}", path=path) from None
    except RecursionError:
        raise SyncError(TOO_DEEP, path=path) from None
    check_size(data, path)
    return data


def load(path: Path | str, *, duplicates: list[str] | None = None) -> Any:
    """Read and parse a YAML file strictly (size-limited); ``duplicates`` as in :func:`loads`."""
    p = Path(path)
    raw = read_capped(p, MAX_FILE_BYTES, "YAML file")  # refuses FIFOs, devices, directories
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SyncError(f"YAML file is not UTF-8: {exc.reason}", path=str(p)) from None
    return loads(text, str(p), duplicates=duplicates)


class _NodesLoader(_MergeAsSrtSlurm, yaml.SafeLoader):
    """The pure-Python safe loader with srt-slurm's merge-key precedence."""


for _loader in (_StrictLoader, _NodesLoader):
    _loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)


# What libyaml and the pure-Python parser read differently, outside whole-line comments
# (tried over 100,000 random documents of YAML's indicators): libyaml takes a tab after a key's
# colon, a comment right after a block scalar's `|` or `>`, and a byte-order mark or NEL in
# places the pure-Python parser refuses; tags, anchors and `?` keys are near those; an empty
# value in a flow collection starts at another column. A document holding any of these is
# composed the pure-Python way. (A line in a block scalar can look like a comment, but a block
# scalar needs a `|` or `>` on a line that is not one.)
_DIVERGENT_MARKS = r"!?|>%&*@`\t\r\ufeff\x85\u2028\u2029"
_DIVERGENT_PAIRS = r":\s*[,}\]]|[\[{,]\s*[,}\]:]"
_DIVERGENT_BARE = re.compile(f"[{_DIVERGENT_MARKS}]|{_DIVERGENT_PAIRS}")
# A backslash is an escape in a double-quoted scalar only, where the two parsers' escapes can
# differ; in a document without a `"` it is a plain character to both (a Windows path, a regex).
_DIVERGENT = re.compile(rf"[{_DIVERGENT_MARKS}\\]|{_DIVERGENT_PAIRS}")


def _libyaml_composes_alike(text: str) -> bool:
    # Lines as YAML breaks them: a text with a break other than "\n" is not looked into.
    if "\r" in text or "\x85" in text or "\u2028" in text or "\u2029" in text:
        return False
    divergent = _DIVERGENT if '"' in text else _DIVERGENT_BARE
    return not any(
        divergent.search(line) for line in text.split("\n") if not line.lstrip().startswith("#")
    )


class Nodes:
    """One YAML document as composed nodes, for a reader that names the line and column of
    every key and value and refuses unknown keys (``sync.yaml``): the same safe constructors
    (YAML 1.1) as :func:`loads`, applied node by node with :meth:`construct`. Duplicate keys are
    the reader's to refuse, since it walks every mapping itself."""

    def __init__(self, text: str, path: str) -> None:
        self.path = path
        self._text = text
        self._loader = _NodesLoader(text)  # constructs the values, and composes when asked

    def root(self) -> yaml.Node | None:
        """The document's root node, ``None`` for an empty document."""
        node = self._fast_root() if _libyaml_composes_alike(self._text) else self._python_root()
        if node is not None and _node_depth(node) > MAX_DEPTH:
            raise SyncError(TOO_DEEP, path=self.path)
        return node

    def _fast_root(self) -> yaml.Node | None:
        """libyaml's composer, ten times faster, whose nodes carry the pure-Python composer's
        start marks (line, column of characters) for what :func:`_libyaml_composes_alike`
        lets through."""
        try:
            # Composing only: the values are built by the pure-Python loader's constructors.
            return yaml.compose(self._text, Loader=_Base)
        except yaml.YAMLError:
            # Composed again by the pure-Python composer, which refuses it too, with the
            # problem texts this reader's messages have always shown (or takes it, as before).
            return self._python_root()

    def _python_root(self) -> yaml.Node | None:
        try:
            return self._loader.get_single_node()
        except RecursionError:
            raise SyncError(TOO_DEEP, path=self.path) from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise SyncError(
                f"not valid YAML: {getattr(exc, 'problem', exc)}",
                path=self.path,
                line=mark.line + 1 if mark else None,
                column=mark.column + 1 if mark else None,
            ) from None

    def fail(self, node: yaml.Node, message: str) -> SyncError:
        """An error at ``node``'s line and column."""
        return SyncError(
            message,
            path=self.path,
            line=node.start_mark.line + 1,
            column=node.start_mark.column + 1,
        )

    def construct(self, node: yaml.Node) -> object:
        """The value of ``node``, built by the safe constructors."""
        try:
            return self._loader.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            # A tag the safe loader does not know (`!evil`, `!!python/name:...`): our own
            # inputs hold plain strings, numbers, lists and mappings only.
            problem = getattr(exc, "problem", None) or str(exc)
            raise self.fail(node, f"not a plain YAML value: {problem}") from None
        except ValueError:
            # A scalar PyYAML resolves to an int that int() refuses (thousands of digits).
            raise self.fail(node, "a number too long to be a PR, run or comment id") from None


def _node_depth(root: yaml.Node) -> int:
    """How deep ``root`` nests (iterative: the depth of a hostile file is what is measured);
    stops counting past ``MAX_DEPTH``."""
    deepest = 0
    stack = [(root, 1)]
    seen: set[int] = set()
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))
    return deepest


def expanded_size(data: object, limit: int = MAX_EXPANDED_NODES, path: str | None = None) -> int:
    """Number of nodes ``data`` has once every shared (aliased) object is copied out.

    Shared objects are sized once (memo by id), so this is linear in the *document*, not in
    the expansion; it stops counting past ``limit``.
    """
    memo: dict[int, int] = {}
    # A scalar is 1 without a call (a master config holds tens of thousands of them); a child
    # past MAX_DEPTH is refused whatever it is, as the call would have refused it.
    containers = (dict, list)

    def size(obj: object, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise SyncError(TOO_DEEP, path=path)
        if isinstance(obj, dict):
            key = id(obj)
            if key in memo:
                return memo[key]
            if obj and depth >= MAX_DEPTH:
                raise SyncError(TOO_DEEP, path=path)
            total = 1
            for value in obj.values():
                total += 1 + (size(value, depth + 1) if isinstance(value, containers) else 1)
                if total > limit:
                    break
            memo[key] = total
            return total
        if isinstance(obj, list):
            key = id(obj)
            if key in memo:
                return memo[key]
            if obj and depth >= MAX_DEPTH:
                raise SyncError(TOO_DEEP, path=path)
            total = 1
            for value in obj:
                total += size(value, depth + 1) if isinstance(value, containers) else 1
                if total > limit:
                    break
            memo[key] = total
            return total
        return 1

    return size(data, 0)


def check_size(data: object, path: str) -> None:
    n = expanded_size(data, path=path)
    if n > MAX_EXPANDED_NODES:
        raise SyncError(
            f"YAML expands to more than {MAX_EXPANDED_NODES} nodes through aliases; refusing it",
            path=path,
        )


def key_line(path: Path | str, dotted: Sequence[str | int]) -> int | None:
    """Line (1-based) of the mapping key at ``dotted`` in a YAML file, for error messages; an
    integer step is an item of a sequence (its line, when the path ends there).

    Follows merge keys and aliases, so a key written under an anchor is found where it is
    written. Returns the line of the deepest step found, None when the file or the first key
    cannot be found.
    """
    return _walk(path, dotted)[0]


def written_line(path: Path | str, dotted: Sequence[str | int]) -> int | None:
    """The line of the key at ``dotted`` when every step of it is written in the file (as
    :func:`key_line` finds it), else None."""
    line, whole = _walk(path, dotted)
    return line if whole else None


def _walk(path: Path | str, dotted: Sequence[str | int]) -> tuple[int | None, bool]:
    """The line of the deepest step of ``dotted`` found, and whether every step was."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None, False
    node = _composed(text)
    if node is None:
        return None, False
    line: int | None = None
    for part in dotted:
        if isinstance(part, int):
            if not isinstance(node, yaml.SequenceNode) or not 0 <= part < len(node.value):
                return line, False
            node = node.value[part]
            line = node.start_mark.line + 1
            continue
        found = _find_key(node, part, 0)
        if found is None:
            return line, False
        key_node, node = found
        line = key_node.start_mark.line + 1
    return line, True


# The node trees ``key_line`` looks keys up in, by the file content's digest: one render
# asks for dozens of lines of the same master YAML, and composing it is the costly part.
_COMPOSED: OrderedDict[bytes, object] = OrderedDict()
_COMPOSED_MAX = 32


def _composed(text: str) -> object:
    """The composed node tree of ``text`` (None when it is no YAML), once per content."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    try:
        _COMPOSED.move_to_end(digest)
        return _COMPOSED[digest]
    except KeyError:
        pass
    try:
        # The C parser's nodes carry the same marks (line, column) as the pure-Python one's.
        node = yaml.compose(text, Loader=_Base)
    except yaml.YAMLError:
        node = None
    _COMPOSED[digest] = node
    if len(_COMPOSED) > _COMPOSED_MAX:
        _COMPOSED.popitem(last=False)
    return node


def _find_key(node: Any, name: str, depth: int) -> tuple[Any, object] | None:
    if depth > 50 or not isinstance(node, yaml.MappingNode):
        return None
    merges = []
    for key_node, value_node in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            merges.append(value_node)
        elif isinstance(key_node, yaml.ScalarNode) and key_node.value == name:
            return key_node, value_node
    for merge in merges:
        targets = merge.value if isinstance(merge, yaml.SequenceNode) else [merge]
        for target in targets:
            found = _find_key(target, name, depth + 1)
            if found is not None:
                return found
    return None
