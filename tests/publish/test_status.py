"""The state the bot records in its cookbook PR body is read back under sync.yaml's rules."""

from __future__ import annotations

import json

import pytest

from syncer.github.records import Pull
from syncer.publish import status as st
from syncer.syncconfig import Pin

LOGIN = "sync-bot"
MODEL = "o/m"
SHA = "a" * 40


def _pull(pins: dict[str, dict[str, str]]) -> Pull:
    state = json.dumps({"model": MODEL, "pins": pins}, sort_keys=True, separators=(",", ":"))
    return Pull(
        repo="o/book",
        number=1,
        title="t",
        body=f"{st.pr_marker(MODEL)}\n{st.STATE_PREFIX}{state} -->",
        state="open",
        merged=False,
        user=LOGIN,
        head_ref="infx-sync/o/m",
        head_sha=SHA,
        head_repo="o/book",
        base_ref="main",
        labels=(),
        html_url="https://github.com/o/book/pull/1",
    )


def test_a_recorded_pin_reads_back() -> None:
    raw = {"sha": SHA, "run": "41000000001/attempts/2", "status": "verified-pr", "pr": "7"}
    assert st.read_state(_pull({"k-1": raw}), LOGIN, MODEL) == {
        "k-1": Pin("k-1", "7", SHA, "41000000001/attempts/2", None, "verified-pr", None)
    }


@pytest.mark.parametrize(
    "field,value",
    [
        ("sha", SHA + "\n"),  # `$` would have let the newline through
        ("run", "41000000001\n"),
        ("pr", "7\n"),
        ("date", "2026-10-13\n"),
        ("date", "2026-02-30"),  # not a calendar day, as sync.yaml refuses it
        ("run", "٤١"),  # other scripts' digits
    ],
)
def test_a_malformed_field_drops_the_pin(field: str, value: str) -> None:
    raw = {"sha": SHA, "status": "verified-pr", field: value}
    assert st.read_state(_pull({"k": raw}), LOGIN, MODEL) == {}


def test_a_key_with_a_trailing_newline_is_dropped() -> None:
    assert st.read_state(_pull({"k\n": {"sha": SHA, "status": "verified"}}), LOGIN, MODEL) == {}
