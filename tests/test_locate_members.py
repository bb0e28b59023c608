"""An error's position in a data module is found by walking the literal (jsmodule.locate); the
members of an object no key path leads into are skipped in runs (``key: scalar,``) rather than
token by token. What lies after such an object, or inside one the path does lead into, is
still named at its own line and column, whatever the members before it hold."""

from __future__ import annotations

import time

from syncer.cookbook.jsmodule import locate

TEXT = """export const agentx = {
  envs: [{"A": "1", 'B': "2", C: x, /* note */ "D": "a\\"b", "E\\u0041": 3,}, {"F": 1}],
  "skipped": {"a": 1, "b": {"c": [1, 2, {"d": 4}]}, "e": "}", "f": 2},
  cells: [
    {"k": 1, // a comment
     "env": {"A": "1", "B": "2"}, "kv": [1, 2]},
    {"k": 2, "kv": {"x": 1, "y": 2, "z": 3}}
  ]
};
"""


def at(marker: str, text: str = TEXT) -> tuple[int, int]:
    """1-based (line, column) of the one occurrence of ``marker`` in ``text``."""
    assert text.count(marker) == 1, marker
    offset = text.index(marker)
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def test_a_path_past_objects_skipped_in_runs_is_named_at_its_position() -> None:
    assert locate(TEXT, ("cells",)) == at("[\n    {")
    assert locate(TEXT, ("cells", 0, "kv")) == at("[1, 2]}")
    assert locate(TEXT, ("cells", 1, "kv", "z")) == at("3}}")
    assert locate(TEXT, ("envs", 1, "F")) == at("1}]")
    assert locate(TEXT, ("envs", 0, "EA")) == at("3,}")


def test_a_path_to_a_member_that_is_not_there_names_its_object() -> None:
    assert locate(TEXT, ("cells", 1, "kv", "missing")) == at('{"x"')


def test_an_object_of_many_members_is_skipped_in_one_run() -> None:
    members = ", ".join(f'"K{k:06d}": "v"' for k in range(300_000))
    text = f'export const agentx = {{"envs": [{{{members}}}], "cells": [{{"kv": 1}}]}};\n'
    start = time.process_time()
    assert locate(text, ("cells", 0, "kv")) == at("1}]}", text)
    # token by token it took seconds (each key decoded); one regular-expression run: well
    # under one
    assert time.process_time() - start < 1.0
