"""Shell text of decoded blocks, exactly as the cookbook page prints it (format section b.6-7).

The one place in the project that formats commands: quoting, one block's text, block titles,
the placeholder export lines and the "Copy all" text. ``check_publishable`` refuses values
whose text would not paste safely.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from syncer.errors import SyncError
from syncer.model import Block

_BARE = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
# `$`, `{`, `}` on top of the bare set: double quotes keep $PLACEHOLDERS expandable.
_DOUBLE = re.compile(r"[A-Za-z0-9_@%+=:,./${}-]+")
_PLACEHOLDER = re.compile(r"\$([A-Z][A-Z0-9_]*)")
_ROLE_N_HEAD = re.compile(r"(AGG|PREFILL|DECODE)_(\d+)_HEAD_IP")
_FRONTEND_N = re.compile(r"FRONTEND_(\d+)_IP")

ROLE_TITLES = {"agg": "Worker", "prefill": "Prefill worker", "decode": "Decode worker"}
KIND_TITLES = {
    "etcd": "etcd — Dynamo control plane",
    "nats": "NATS — Dynamo KV-event plane",
    "mooncake-master": "Mooncake master",
    "mooncake-store": "Mooncake store",
    "dynamo-frontend": "Dynamo frontend (OpenAI API)",
    "sglang-router": "SGLang router (OpenAI API)",
    "nginx": "nginx — optional frontend load balancer",
}
PLACEHOLDER_TEXT = {
    "NODE_RANK": "rank of this node within its worker (0 on the worker's first node)",
    "NODE_IP": "IP of the node the command runs on",
    "ETCD_IP": "node running etcd",
    "NATS_IP": "node running NATS",
    "MOONCAKE_MASTER_IP": "node running mooncake_master",
    "AGG_HEAD_IP": "first node of this worker",
    "PREFILL_HEAD_IP": "first node of this prefill worker",
    "DECODE_HEAD_IP": "first node of this decode worker",
    "IB_DEVICES": "the node's RDMA NICs",
    "EFA_DEVICES": "EFA device filter (AWS EFA fabrics only)",
}
NGINX_COMMAND = "nginx -c nginx.conf -g 'daemon off;'"
EXPORTS_HEADING = "# Set per node before running the commands below"


def js_string(value: Any) -> str:
    """``String(value)`` as JavaScript writes it (values in modules are nearly always strings)."""
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        text = repr(value)
        return re.sub(r"e([+-])0*(\d)", lambda m: f"e{m.group(1)}{m.group(2)}", text)
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    return str(value)


def quote(value: Any) -> str:
    """One shell word: bare when safe, ``"..."`` when only ``$ { }`` are extra (placeholders
    stay expandable), otherwise single quotes with ``'`` written as ``'\\''``."""
    text = js_string(value)
    if _BARE.fullmatch(text):
        return text
    if _DOUBLE.fullmatch(text):
        return f'"{text}"'
    return "'" + text.replace("'", "'\\''") + "'"


def format_block(block: Block) -> str:
    """The block's command text: preamble lines, ``KEY=value \\`` env lines, the command and
    one indented line per arg (no trailing newline)."""
    lines = [js_string(line) for line in block.get("preamble") or []]
    for key, value in (block.get("env") or {}).items():
        lines.append(f"{key}={quote(value)} \\")
    args = block.get("args") or []
    cmd = block.get("cmd")
    if not args:
        lines.append(NGINX_COMMAND if block.get("kind") == "nginx" else js_string(cmd))
        return "\n".join(lines)
    lines.append(f"{js_string(cmd)} \\")
    last = len(args) - 1
    for i, arg in enumerate(args):
        values = " ".join(quote(v) for v in arg[1:])
        tail = " \\" if i < last else ""
        lines.append(f"  {arg[0]}{' ' + values if values else ''}{tail}")
    return "\n".join(lines)


def block_title(block: Block) -> str:
    """``Worker`` / ``Prefill worker`` / ``Decode worker`` or the kind's title."""
    if block.get("kind") == "worker":
        return ROLE_TITLES.get(block.get("role"), js_string(block.get("role")))
    kind = block.get("kind")
    return KIND_TITLES.get(kind, js_string(kind))


def placeholder_text(name: str) -> str | None:
    """What a ``$NAME`` placeholder stands for, or None when the page does not describe it."""
    known = PLACEHOLDER_TEXT.get(name)
    if known:
        return known
    match = _ROLE_N_HEAD.fullmatch(name)
    if match:
        return f"first node of {match.group(1).lower()} worker {match.group(2)}"
    match = _FRONTEND_N.fullmatch(name)
    if match:
        return f"node of frontend {match.group(1)}"
    return None


def placeholders(text: str) -> list[str]:
    """Described placeholder names used in ``text``, unique, in first-appearance order."""
    seen: dict[str, None] = {}
    for name in _PLACEHOLDER.findall(text):
        seen.setdefault(name, None)
    return [name for name in seen if placeholder_text(name)]


def all_text(blocks: Iterable[Block]) -> str:
    """Every block as ``# <title>`` plus its text, separated by blank lines."""
    return "\n\n".join(f"# {block_title(b)}\n{format_block(b)}" for b in blocks)


def export_lines(names: Iterable[str]) -> list[str]:
    return [f"export {name}=<{placeholder_text(name)}>" for name in names]


def copy_all(blocks: list[Block], files: Mapping[str, str] | None = None) -> str:
    """The page's "Copy all" text: export lines for the placeholders used (in the commands or
    the router's config ``files``, id -> content), a blank line, then every block."""
    body = all_text(blocks)
    contents = json.dumps(list((files or {}).values()), ensure_ascii=False)
    names = placeholders(body + contents)
    if not names:
        return body
    return EXPORTS_HEADING + "\n" + "\n".join(export_lines(names)) + "\n\n" + body


# ---- publishability ------------------------------------------------------------------------

# What a double-quoted or bare word may expand: `$NAME` / `${NAME}` for a described placeholder.
_EXPANSION = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_SAFE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SAFE_FLAG = re.compile(r"-{1,2}[A-Za-z0-9][A-Za-z0-9_.-]*|[A-Za-z0-9_./-]+")
_RAW_UNSAFE = re.compile(r"[\x00-\x1f\x7f;&|`$<>(){}\\\"'*?!#~\[\]]")


def _unsafe_expansion(word: str) -> str | None:
    """Why a value the quoting rules print bare or double-quoted is unsafe, or None."""
    if any(ch in word for ch in "\n\r`;") or "$(" in word:
        return "contains a command separator or substitution"
    rest = _EXPANSION.sub(
        lambda m: "" if placeholder_text(m.group(1) or m.group(2)) else "\0", word
    )
    if "\0" in rest:
        names = [m.group(1) or m.group(2) for m in _EXPANSION.finditer(word)]
        unknown = [n for n in names if not placeholder_text(n)]
        return f"expands ${unknown[0]}, which is not a known placeholder"
    if "$" in rest:
        return "contains a `$` that is not a known placeholder"
    if "{" in rest or "}" in rest:
        return "contains braces outside a `${PLACEHOLDER}`"
    return None


def _check_value(value: Any, what: str, where: str) -> None:
    text = js_string(value)
    if any(ch in text for ch in "\x00\r\n\u2028\u2029"):
        raise SyncError(f"{where}: {what} = {text!r} contains a line break or NUL")
    if _BARE.fullmatch(text) or not _DOUBLE.fullmatch(text):
        return  # bare words are inert; single quotes make everything literal
    reason = _unsafe_expansion(text)
    if reason:
        raise SyncError(f"{where}: {what} = {text!r} {reason}; refusing to publish it")


def _check_raw(text: Any, what: str, where: str, pattern: re.Pattern[str]) -> None:
    # Printed unquoted (flag names, env keys, the command): must be plain words.
    value = js_string(text)
    if not pattern.fullmatch(value):
        raise SyncError(f"{where}: {what} {value!r} is printed unquoted and is not a plain word")


def check_publishable(blocks: list[Block], where: str) -> None:
    """Refuse blocks whose shell text could do something the cookbook never shows: a ``$`` that
    is not a known placeholder, ``$(``, backticks, ``;`` or a newline in a bare or
    double-quoted value, or a flag / env key / command that is not a plain word. ``where``
    names the deployment in the error (e.g. ``cell X point 2 router sglang``)."""
    for index, block in enumerate(blocks):
        title = f"{where}, block {index} ({block_title(block)})"
        for key, value in (block.get("env") or {}).items():
            _check_raw(key, "env key", title, _SAFE_NAME)
            _check_value(value, f"env {key}", title)
        cmd = js_string(block.get("cmd"))
        nginx_fixed = block.get("kind") == "nginx" and not block.get("args")
        if not nginx_fixed and (not cmd or _RAW_UNSAFE.search(cmd)):
            raise SyncError(f"{title}: command {cmd!r} is not a plain command line")
        for line in block.get("preamble") or []:
            if any(ch in js_string(line) for ch in "\r\n\u2028\u2029\x00"):
                raise SyncError(f"{title}: preamble line {line!r} contains a line break")
        for arg in block.get("args") or []:
            if not arg:
                raise SyncError(f"{title}: empty argument")
            _check_raw(arg[0], "flag", title, _SAFE_FLAG)
            for value in arg[1:]:
                _check_value(value, f"flag {arg[0]}", title)
