"""yamlsafe's expanded-size walk: its nesting limit holds for every kind of value."""

from __future__ import annotations

import pytest

from syncer.errors import SyncError
from syncer.inferencex import yamlsafe


def nested(levels: int, leaf: object) -> object:
    value = leaf
    for i in range(levels):
        value = [value] if i % 2 else {"k": value}
    return value


@pytest.mark.parametrize("leaf", [1, "x", None, [], {}, [1], {"a": 1}])
def test_a_value_past_the_nesting_limit_is_refused_whatever_it_is(leaf: object) -> None:
    # The leaf sits at depth `levels` (the root is at 0); a container leaf adds its children.
    deepest = yamlsafe.MAX_DEPTH - (1 if leaf in ([1], {"a": 1}) else 0)
    assert yamlsafe.expanded_size(nested(deepest, leaf)) > deepest
    with pytest.raises(SyncError, match="nesting deeper than"):
        yamlsafe.expanded_size(nested(deepest + 1, leaf))


def test_shared_values_count_once_per_reference_and_the_limit_stops_counting() -> None:
    row = {"tp": 8, "ep": [1, 2]}
    doc = {"a": row, "b": row, "c": [row, row]}
    # a mapping is 1 plus 1 per key and its value's size; a list 1 plus its items' sizes
    assert yamlsafe.expanded_size(row) == 1 + (1 + 1) + (1 + 3)
    assert yamlsafe.expanded_size(doc) == 1 + 2 * (1 + 7) + (1 + 1 + 2 * 7)
    assert yamlsafe.expanded_size([list(range(100))], limit=10) <= 12
