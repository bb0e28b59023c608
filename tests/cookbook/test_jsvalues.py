"""jsvalues.clone copies as the page's JSON.parse(JSON.stringify(x)) does."""

from __future__ import annotations

from syncer.cookbook.jsvalues import clone
from syncer.model import PointStatus


def test_a_clone_is_equal_and_shares_no_container() -> None:
    shared = ["--tp", "8"]
    value = {"args": [shared, shared], "env": {"A": "1"}, "n": 1.5, "ok": True, "none": None}
    copy = clone(value)
    assert copy == value
    assert [type(v) for v in copy.values()] == [type(v) for v in value.values()]
    # An object met twice is copied twice, as JSON does.
    assert copy["args"][0] is not copy["args"][1]
    assert copy["args"][0] is not shared and copy["env"] is not value["env"]
    copy["args"][0].append("x")
    assert shared == ["--tp", "8"] and copy["args"][1] == ["--tp", "8"]


def test_values_marshal_refuses_are_copied_by_the_walk() -> None:
    value = {"status": PointStatus.VERIFIED, "args": [["--a"]]}
    copy = clone(value)
    assert copy == value and copy["status"] is PointStatus.VERIFIED
    assert copy["args"] is not value["args"] and copy["args"][0] is not value["args"][0]
