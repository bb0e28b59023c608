"""sync.yaml's reader composes a document with a backslash but no double quote with libyaml
(issue 39), with the pure-Python composer's nodes, lines and columns."""

from __future__ import annotations

import random

import pytest
import yaml
import yamlnodes

from syncer.inferencex import yamlsafe

WINDOWS = "models:\n  - name: C:\\models\\qwen\n    match: ^qwen\\d+\\.\\d+$\n    note: 'a \\ b'\n"


def test_a_backslash_outside_double_quotes_is_composed_by_libyaml() -> None:
    assert yamlsafe._libyaml_composes_alike(WINDOWS)
    expected = yamlnodes.start_marks(yaml.SafeLoader(WINDOWS).get_single_node())
    assert yamlnodes.start_marks(yamlsafe.Nodes(WINDOWS, "sync.yaml").root()) == expected
    # an escape in a double-quoted scalar is still read the pure-Python way
    assert not yamlsafe._libyaml_composes_alike('a: "C:\\\\x"\n')


def test_unquoted_documents_with_backslashes_are_the_pure_python_composers() -> None:
    # as tests/inferencex/test_yamlsafe_pyyaml.py's random documents, without `"` and with
    # many backslashes: every outcome is the pure-Python composer's, or a refusal
    rng = random.Random(39)
    pieces = [*"ab1 :-[]{},\n#'.\\\\\\", "\\n", "\\x4", "\\u00e9", "  ", "\n  ", ": ", "- "]
    pieces += ["\n- ", "a: ", "x: y\n", "# c\n", " #", "'\\'", "é"]
    differ = []
    fast = 0
    for _ in range(4000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 16)))
        assert '"' not in text
        fast += "\\" in text and yamlsafe._libyaml_composes_alike(text)
        expected, got = yamlnodes.both(text)
        if got != expected:
            differ.append(text)
    assert differ == []
    assert fast > 500  # the documents this is about were composed by libyaml


@pytest.mark.parametrize("text", [WINDOWS, "a: b\\\nc: '\\'\n"])
def test_the_values_are_pyyamls(text: str) -> None:
    nodes = yamlsafe.Nodes(text, "sync.yaml")
    assert nodes.construct(nodes.root()) == yaml.safe_load(text)
