"""The shapes of the identifiers read from InferenceX content that the tool logs, commits and
posts: a config key and the labels of its entry (``model-prefix``, ``precision``, ``runner``).

A PR, a fork's included, writes these; the bot prints them in the log of the job that holds
the cookbook token, puts them in cookbook commit messages and PR bodies, and names them in
comments. So each is held to the shape InferenceX writes before anything is rendered, logged
or committed: a line break in a key would start a new log line (``::warning …`` there is a
workflow command) and an ESC would act on a terminal.

The shapes are those of every key and label of InferenceX's master configs (339 keys in
``configs/**/*-master.yaml`` of commit 843c6254, ``deprecated/`` included): keys are lower-case
letters, digits, ``.`` and ``-`` (``dsv4-fp4-gb300-dynamo-sglang-agentic-disagg``), at most 64
characters; labels the same with ``:`` (``cluster:h100-dgxc``). Upper case and ``_`` are taken
too (sync.yaml's and the status records' keys always allowed them), and up to 200 characters;
a label may also hold ``/`` and start with any of its characters (where a label names a file,
its reader refuses a path out of the checkout). Nothing of those can act on a log, a
terminal, a shell word or a commit message.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeGuard

from syncer.errors import SyncError
from syncer.wording import js

CONFIG_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
LABEL = re.compile(r"[A-Za-z0-9._:/-]{1,200}")
# What an error says was expected, by shape.
_EXPECTED = {
    CONFIG_KEY: "letters, digits, '.', '-' or '_', starting with a letter or digit, at most 200",
    LABEL: "letters, digits, '.', ':', '/', '-' or '_', at most 200",
}


def is_config_key(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and CONFIG_KEY.fullmatch(value) is not None


def check(
    value: str,
    shape: re.Pattern[str],
    what: str,
    *,
    path: str | None,
    line: Callable[[], int | None] = lambda: None,
) -> str:
    """``value`` when it has ``shape``; else a ``SyncError`` naming ``what``, the file and
    the line (``line()``, asked only then), the value escaped (a control character is shown,
    never written)."""
    if shape.fullmatch(value) is None:
        raise SyncError(
            f"{what} {js(value)} is not of the shape InferenceX writes ({_EXPECTED[shape]})",
            path=path,
            line=line(),
        )
    return value
