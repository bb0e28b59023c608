"""yamlsafe builds what PyYAML's own safe construction builds: the same values, types, order and
sharing (pickled alike), and the same first error, on documents of every kind YAML 1.1 knows
and on every YAML file the project ships (and the reference data, when it is here). The
reference is PyYAML's pure-Python SafeLoader with srt-slurm's merge-key rule, since that rule is
where the strict loader means to differ from an installed PyYAML; the other departures are
refusals, each tested here: a recursive document (as too deep), an alias bomb (as too large), and
a ``!!timestamp`` that is none (PyYAML crashes on it)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import yaml
import yamlnodes

from syncer.errors import SyncError
from syncer.inferencex import yamlsafe

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT.parent / "shared" / "reference"

DOCUMENTS = {
    "alias": "a: &x [1, 2]\nb: *x\nc: [*x, *x]\n",
    "alias-of-inner-mapping": "list:\n  - &m {k: v}\n  - *m\nagain: *m\n",
    "merge": "base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  y: 3\n",
    "merge-list": "a: &a {k: 1}\nb: &b {k: 2, j: 3}\nc:\n  <<: [*a, *b]\n  z: 0\n",
    "merge-nested": "a: &a {x: 1}\nb: &b {<<: *a, y: 2}\nc: {<<: *b, z: 3}\n",
    "merge-twice": "a: &a {x: 1}\nb: {<<: *a, c: {<<: *a, x: 2}}\n",
    "value-key": "m: {=: 1, k: 2}\n",
    "set": "s: !!set {a, b, c}\n",
    "omap": "o: !!omap [a: 1, b: 2]\n",
    "pairs": "p: !!pairs [a: 1, a: 2]\n",
    "timestamps": "d: 2026-10-13\nt: 2001-12-14t21:59:43.10-05:00\nu: 2001-12-15 2:59:43.10\n",
    "binary": "b: !!binary aGVsbG8=\n",
    "binary-of-no-base64": "b: !!binary '@@@'\n",
    "ints": "a: [0x1f, 0o17, 017, 1_000, 0b101, 1:20, +5, -0, 0, 12345678901234567890]\n",
    "floats": "f: [.inf, -.Inf, 1e3, 6.8523015e+5, 190:20:30.15, 1_0.5, .5, -1.0]\n",
    "nulls-and-bools": "v: [~, null, Null, yes, No, on, OFF, true, y, n]\n",
    "explicit-tags": "a: !!str 1\nb: !!int '3'\nc: !!float 1\nd: !!map {k: !!seq [1]}\n",
    "numeric-keys": "1: a\n2.5: b\n0x10: c\n2026-01-02: d\n",
    "strings": "a: 'it''s'\nb: \"tab\\there\"\nc: |\n  kept\n  lines\nd: >\n  folded\n  text\n",
    "duplicate-last-wins": "a: 1\nb: {x: 1}\na: 2\n",
    "empty": "",
    "scalar": "just text\n",
    "sequence-of-mappings": "- {a: 1}\n- {a: 1}\n- [a, {b: [c]}]\n",
}

FAULTS = {
    "unhashable-key": "? [1, 2]\n: v\n",
    "unknown-tag": "x: !evil 1\n",
    "python-tag": "x: !!python/name:os.system ''\n",
    "several-faults": "a: !evil 1\nb: !other 2\nc: {? [k] : v}\n",
    "merge-of-a-scalar": "a: {<<: 1}\n",
    "merge-list-with-a-scalar": "a: &a {x: 1}\nb: {<<: [*a, 2]}\n",
    "undefined-alias": "a: *nope\n",
    "bad-syntax": "a: [1, 2\nb: 3\n",
}


class _PyYAML(yamlsafe._MergeAsSrtSlurm, yaml.SafeLoader):
    """PyYAML's own construction, with srt-slurm's merge-key rule."""


class _PyYAMLParsedInC(yamlsafe._MergeAsSrtSlurm, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """The same construction over libyaml's parser (the same events, faster): for the many
    files, whose faults are only asked to be refused."""


def pyyaml(text: str, loader: type = _PyYAML) -> object:
    return yaml.load(text, Loader=loader)


def same(a: object, b: object) -> bool:
    # pickle keeps types, order and which values are one object, and cycles
    return pickle.dumps(a, protocol=5) == pickle.dumps(b, protocol=5)


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_a_document_is_built_as_pyyaml_builds_it(name: str) -> None:
    text = DOCUMENTS[name]
    assert same(yamlsafe.loads(text, duplicates=[]), pyyaml(text))


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_a_faulty_document_is_refused_at_pyyamls_first_fault(name: str) -> None:
    text = FAULTS[name]
    with pytest.raises(yaml.YAMLError) as expected:
        pyyaml(text)
    mark = getattr(expected.value, "problem_mark", None)
    with pytest.raises(SyncError) as got:
        yamlsafe.loads(text, "doc.yaml", duplicates=[])
    assert got.value.line == (mark.line + 1 if mark else None)
    problem = getattr(expected.value, "problem", None)
    if problem:
        assert problem.split(" ")[0] in got.value.message


@pytest.mark.parametrize("text", ["&r [1, *r]\n", "&m {name: m, self: *m}\n"])
def test_a_recursive_document_pyyaml_builds_is_refused_as_too_deep(text: str) -> None:
    pyyaml(text)
    with pytest.raises(SyncError, match="nesting deeper than"):
        yamlsafe.loads(text, duplicates=[])


def test_a_timestamp_that_is_none_is_refused_at_its_line_where_pyyaml_crashes() -> None:
    text = "a: 1\nt: !!timestamp nope\n"
    with pytest.raises(AttributeError):
        pyyaml(text)
    with pytest.raises(SyncError, match="not a YAML timestamp") as got:
        yamlsafe.loads(text, "doc.yaml")
    assert got.value.line == 2


def _yaml_files(*, reference: bool = True) -> list[Path]:
    roots = [ROOT / "examples", ROOT / "syncer", ROOT / "tests" / "fixtures", ROOT / "sync.yaml"]
    if reference and REFERENCE.is_dir():
        roots.append(REFERENCE)
    found: list[Path] = []
    for root in roots:
        if root.is_file():
            found.append(root)
        else:
            found += [p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()]
    return sorted(found)


def test_every_yaml_file_here_is_built_as_pyyaml_builds_it() -> None:
    files = _yaml_files()
    assert len(files) > 10
    differ = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        try:
            expected = pyyaml(text, _PyYAMLParsedInC)
        except yaml.YAMLError:
            with pytest.raises(SyncError):
                yamlsafe.loads(text, str(path), duplicates=[])
            continue
        try:
            got = yamlsafe.loads(text, str(path), duplicates=[])
        except SyncError as exc:  # a bomb fixture, refused on purpose; anything else differs
            if "expands to more than" not in exc.message:
                differ.append(path)
            continue
        if not same(got, expected):
            differ.append(path)
    assert differ == []


def test_sync_yaml_nodes_from_libyaml_carry_the_pure_python_composers_marks() -> None:
    # sync.yaml's reader (yamlsafe.Nodes) composes with libyaml for speed; every message it
    # gives names a node's start line and column, which must be the ones the pure-Python
    # composer gives, and a document libyaml refuses is composed by the pure-Python one.
    # The bundled sync.yaml is composed by libyaml (else nothing below would test it).
    assert yamlsafe._libyaml_composes_alike((ROOT / "sync.yaml").read_text(encoding="utf-8"))
    for name, text in {**DOCUMENTS, "unicode": "k: ünï — x\nl: ['é', \"ü\"]\n"}.items():
        expected = yamlnodes.start_marks(yaml.SafeLoader(text).get_single_node())
        assert yamlnodes.start_marks(yamlsafe.Nodes(text, name).root()) == expected, name
    differ = []
    # The project's own files (the pure-Python composer takes 10 s over the reference data).
    for path in _yaml_files(reference=False):
        text = path.read_text(encoding="utf-8")
        try:
            expected = yamlnodes.start_marks(yaml.SafeLoader(text).get_single_node())
        except yaml.YAMLError:
            continue
        if yamlnodes.start_marks(yamlsafe.Nodes(text, str(path)).root()) != expected:
            differ.append(path)
    assert differ == []
    # A document libyaml refuses, and one only the pure-Python parser refuses (libyaml takes
    # a tab after a key's colon): the error is the pure-Python composer's, line and column.
    for bad in ("a: [1, 2\nb: 3\n", "a: 1\nb:\t2\n"):
        with pytest.raises(SyncError) as refused:
            yamlsafe.Nodes(bad, "bad.yaml").root()
        with pytest.raises(yaml.MarkedYAMLError) as composed:
            yaml.SafeLoader(bad).get_single_node()
        mark = composed.value.problem_mark
        assert refused.value.message == f"not valid YAML: {composed.value.problem}"
        assert (refused.value.line, refused.value.column) == (mark.line + 1, mark.column + 1)


def test_sync_yaml_nodes_are_the_pure_python_composers_on_random_documents() -> None:
    # libyaml and the pure-Python parser differ on some documents (a tab after a colon, a
    # comment right after a block scalar's indicator, an empty value in a flow collection, a
    # byte-order mark inside the text): yamlsafe.Nodes sends those the pure-Python way. Over
    # seeded random documents of YAML's indicators, every outcome is the pure-Python one's:
    # the same nodes at the same lines and columns, or a refusal.
    import random

    rng = random.Random(23)
    pieces = [*"ab1 :-[]{},\n#\"'.!?|>%&*@`\\\t\r", "  ", "\n  ", ": ", "- ", "\n- ", "a: "]
    pieces += ["é", "\x85", "\ufeff", "\u2028", "x: y\n", "# c\n", "# |>!\n", " #", "{a: }"]
    differ = []
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 16)))
        expected, got = yamlnodes.both(text)
        if got != expected:
            differ.append(text)
    assert differ == []
