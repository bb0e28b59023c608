"""Shell text of decoded blocks, exactly as the cookbook page prints it (format section b.6-7).

The one place in the project that formats commands: quoting, one block's text, block titles,
the placeholder export lines and the "Copy all" text. ``check_publishable`` refuses values
whose text would not paste safely.
"""

from __future__ import annotations

import json
import marshal
import re
from collections.abc import Iterable, Mapping

from syncer import shellwords
from syncer.cookbook.jsvalues import UNDEFINED, js_join_item, js_string
from syncer.errors import SyncError
from syncer.model import Block, block_data
from syncer.recent import Recent
from syncer.wording import js

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


# Flag values repeat across the cases of a module; decoding them all quotes each one once.
_QUOTED: dict[str, str] = {}
_QUOTED_MAX = 100_000
# The line of a [flag, value] arg by (flag, value), per `literal`: the 29,000 arg lines of
# the largest module's distinct blocks are 313 distinct args. Only strings: 1, 1.0 and True
# are one key but three words.
_ARG_LINES: dict[bool, dict[tuple[str, str], str]] = {False: {}, True: {}}
_ENV_LINES: dict[bool, dict[tuple[str, str], str]] = {False: {}, True: {}}  # by (key, value)


def quote(value: object) -> str:
    """One shell word: bare when safe, ``"..."`` when only ``$ { }`` are extra (placeholders
    stay expandable), otherwise single quotes with ``'`` written as ``'\\''``."""
    if type(value) is str:
        done = _QUOTED.get(value)
        if done is None:
            done = _quote(value)
            if len(_QUOTED) < _QUOTED_MAX:  # bounded: a long-running bot decodes many modules
                _QUOTED[value] = done
        return done
    return _quote(js_string(value))


def _quote(text: str) -> str:
    if _BARE.fullmatch(text):
        return text
    if _DOUBLE.fullmatch(text):
        return f'"{text}"'
    return "'" + text.replace("'", "'\\''") + "'"


def quote_literal(value: object) -> str:
    """One shell word for what srt-slurm passed as argv (the raw form): as :func:`quote`, but
    double quotes only when every expansion inside is one of the renderer's cluster tokens
    (``$INFRA_IP``); anything else with a ``$`` (``${HOME}``, ``$(...)``) is single-quoted,
    so the paste passes it literally, as srt-slurm did."""
    text = value if type(value) is str else js_string(value)
    if _BARE.fullmatch(text) or not _DOUBLE.fullmatch(text):
        return _quote(text)
    if _expansion_problem(text, raw=True) is None:
        return f'"{text}"'
    return "'" + text.replace("'", "'\\''") + "'"


def format_block(block: Block, *, literal: bool = False) -> str:
    """The block's command text: preamble lines, ``KEY=value \\`` env lines, the command and
    one indented line per arg (no trailing newline). ``literal``: values quoted with
    :func:`quote_literal` (the raw form)."""
    quote_value = quote_literal if literal else quote
    lines = [js_string(line) for line in block.get("preamble") or []]
    env = block.get("env")
    if env:
        known = _ENV_LINES[literal]
        for item in env.items():
            plain = type(item[0]) is str and type(item[1]) is str  # as _ARG_LINES
            line = known.get(item) if plain else None
            if line is None:
                line = f"{item[0]}={quote_value(item[1])} \\"
                if plain and len(known) < _QUOTED_MAX:
                    known[item] = line
            lines.append(line)
    args = block.get("args")
    # A block without `cmd` reads undefined there: the page writes it `${b.cmd} \` before
    # args, and pushes it into the lines it joins (null and undefined as nothing) without.
    cmd = block.get("cmd", UNDEFINED)
    if not args:
        lines.append(NGINX_COMMAND if block.get("kind") == "nginx" else js_join_item(cmd))
        return "\n".join(lines)
    lines.append(f"{js_string(cmd)} \\")
    # Every arg line but the last ends with " \"; a bare flag has no trailing space. Most
    # args are a flag and one value: that case first, without slicing (every case's text).
    arg_lines = []
    known = _ARG_LINES[literal]
    for arg in args:
        count = len(arg)
        if count == 2:
            flag, value = arg
            if type(flag) is str and type(value) is str:
                line = known.get((flag, value))
                if line is None:
                    line = f"  {flag} {quote_value(value)}"
                    if len(known) < _QUOTED_MAX:
                        known[flag, value] = line
                arg_lines.append(line)
            else:
                arg_lines.append(f"  {flag} {quote_value(value)}")
        elif count > 2:
            arg_lines.append(f"  {arg[0]} {' '.join(map(quote_value, arg[1:]))}")
        else:
            arg_lines.append(f"  {arg[0]}")
    lines.append(" \\\n".join(arg_lines))
    return "\n".join(lines)


def block_title(block: Block) -> str:
    """``Worker`` / ``Prefill worker`` / ``Decode worker`` or the kind's title."""
    if block.get("kind") == "worker":
        return _title(ROLE_TITLES, block.get("role"))
    return _title(KIND_TITLES, block.get("kind"))


def _title(titles: dict[str, str], value: object) -> str:
    """The title of a known role or kind, else the value as JavaScript prints it."""
    return titles.get(value, js_string(value)) if isinstance(value, str) else js_string(value)


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


def all_text(blocks: Iterable[Block], *, literal: bool = False) -> str:
    """Every block as ``# <title>`` plus its text, separated by blank lines."""
    return "\n\n".join(f"# {block_title(b)}\n{format_block(b, literal=literal)}" for b in blocks)


def export_lines(names: Iterable[str]) -> list[str]:
    return [f"export {name}=<{placeholder_text(name)}>" for name in names]


def copy_all(
    blocks: list[Block], files: Mapping[str, str] | None = None, *, literal: bool = False
) -> str:
    """The page's "Copy all" text: export lines for the placeholders used (in the commands or
    the router's config ``files``, id -> content), a blank line, then every block.
    ``literal``: the raw form's quoting (:func:`quote_literal`)."""
    body = all_text(blocks, literal=literal)
    contents = json.dumps(list((files or {}).values()), ensure_ascii=False)
    names = placeholders(body + contents)
    if not names:
        return body
    return EXPORTS_HEADING + "\n" + "\n".join(export_lines(names)) + "\n\n" + body


# ---- publishability ------------------------------------------------------------------------

# A shell parameter expansion as bash reads it inside double quotes or a bare word.
_EXPANSION = re.compile(r"\$(?:\{([^}]*)\}|([A-Za-z_][A-Za-z0-9_]*)|(.|$))", re.DOTALL)
_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FLAG = re.compile(r"--?[A-Za-z0-9][A-Za-z0-9_.-]*")
# Commands and preamble lines are printed as they are: plain words only, placeholders allowed.
_PLAIN_LINE = re.compile(r"[A-Za-z0-9_@%+=:,./ $-]*")
# C0/C1 controls (line breaks included), line/paragraph separators, the bidi marks, overrides
# and isolates that make the page show a value in another order than the shell reads it, and
# the invisible characters (zero-width space and joiners, word joiner, BOM, soft hyphen) that
# make a value differ from what a reviewer sees.
_UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064"
    "\u2066-\u2069\ufeff]"
)
# The cluster facts the renderer writes into raw blocks as ``$TOKENS`` (inferencex/services.py
# SERVICE_TEMPLATES, processes.py, render.py's device lists) besides the cookbook placeholders.
RAW_TOKENS = frozenset(
    {"NODE_IP", "HEAD_NODE_IP", "INFRA_IP", "NODE_ID", "INSTANCE_INDEX", "IB_DEVICES"}
)
_RAW_ROLE_HEAD = re.compile(r"[A-Z]+_\d+_HEAD_IP")


def _expansion_problem(text: str, *, raw: bool = False) -> str | None:
    """Why ``text`` would expand something other than a described placeholder (``raw``: or
    a bare renderer token), or None."""
    for match in _EXPANSION.finditer(text):
        braced, name, other = match.groups()
        if braced is not None:
            if raw:
                return f"has ${{{braced}}}, which srt-slurm passed literally"
            name = braced
        elif other is not None:
            shown = f"${other}" if other else "a trailing $"
            return f"has {shown!s}, a shell expansion the cookbook never shows"
        if raw and (name in RAW_TOKENS or _RAW_ROLE_HEAD.fullmatch(name)):
            continue
        if not placeholder_text(name):
            return f"expands ${name}, which is not a known placeholder"
    return None


def _refuse(where: str, what: str, value: str, reason: str, verb: str) -> SyncError:
    return SyncError(f"{where}: {what} = {quoted_visible(value)} {reason}; refusing to {verb} it")


def quoted_visible(text: str) -> str:
    """``text`` as a JSON-style string with every unprintable or invisible character written
    as an escape (``\\u200b``), so a message shows what a terminal or a page would hide."""
    shown = js(text)
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", shown)


def _check_printable(
    value: object, what: str, where: str, verb: str, *, shown: str | None = None
) -> None:
    """Refuse ``value`` if it holds what :data:`_UNPRINTABLE` names (``shown``: if its shown
    form holds it, the message still quoting the value)."""
    text = js_string(value)
    if _UNPRINTABLE.search(text if shown is None else shown):
        raise _refuse(
            where,
            what,
            text,
            "contains a line break, a control character, a bidi control or an invisible character",
            verb,
        )


def _check_value(value: object, what: str, where: str, literal: bool, verb: str) -> None:
    _check_printable(value, what, where, verb)
    text = js_string(value)
    if literal or _BARE.fullmatch(text) or not _DOUBLE.fullmatch(text):
        return  # bare words expand nothing; single quotes make everything literal
    reason = _expansion_problem(text)
    if reason:
        raise _refuse(where, what, text, reason, verb)


def _check_plain(
    value: object, what: str, where: str, pattern: re.Pattern[str], literal: bool, verb: str
) -> None:
    text = js_string(value)
    if not pattern.fullmatch(text):
        raise _refuse(where, what, text, "is printed unquoted and is not a plain word", verb)
    reason = _expansion_problem(text, raw=literal)
    if reason:
        raise _refuse(where, what, text, reason, verb)


def check_pasteable(blocks: list[Block], where: str, *, literal: bool = False) -> None:
    """:func:`check_publishable` for a command text printed to be pasted (``sync render``):
    the same refusals, so ``render`` never prints what ``generate`` would refuse to publish.
    ``literal`` (the raw form): values are quoted with :func:`quote_literal`, so a ``$``
    in them is passed literally instead of refused."""
    _check_blocks(blocks, where, literal, "print")


def check_publishable(blocks: list[Block], where: str) -> None:
    """Refuse blocks whose pasted text could do what the cookbook never shows.

    Values the quoting rules print bare or in double quotes may only expand described
    placeholders (``$NODE_IP``, ``${ETCD_IP}``): any other ``$`` (``$HOME``, ``$(``, ``$$``)
    is refused. Line breaks and control characters are refused in every value. What is
    printed unquoted must be plain: env keys are names, flags are ``--words``, commands and
    preamble lines hold no ``;``, ``|``, ``&``, backticks, redirections or quotes. ``where``
    names the deployment (e.g. ``cell X point 2 router sglang``); the error adds the block,
    the flag or env key and the value.
    """
    _check_blocks(blocks, where, False, "publish")


def check_publishable_each(shown: Iterable[tuple[str, list[Block]]]) -> None:
    """:func:`check_publishable` of every ``(where, blocks)`` of ``shown`` (a module's cases),
    each block object checked once: these rules look at one block at a time, and a decoder
    shows each distinct block as one object however many cases show it (the etcd of every
    point, a worker at every tier that leaves it alone). A refused block is checked again
    within its whole list, so the error names the case and the block's place in it as
    checking every list would."""
    passed: dict[int, Block] = {}  # id -> the block, kept alive so that its id stays its own
    for where, blocks in shown:
        for block in blocks:
            if id(block) in passed:
                continue
            try:
                content = marshal.dumps(block_data(block), 2)
            except ValueError:  # not JSON data (a str subclass): checked, not remembered
                content = None
            if content is None or not _PUBLISHABLE.recall(content):
                try:
                    _check_blocks([block], where, False, "publish")
                except SyncError:
                    check_publishable(blocks, where)
                    raise
                if content is not None:
                    _PUBLISHABLE.keep(content, True)
            passed[id(block)] = block


# The blocks (by marshal bytes: equal only for equal blocks, same keys in the same order, same
# values and types) that passed ``check_publishable`` in this process. The rules read nothing
# but the block, and a process proves the same blocks again and again: each module it edits or
# encodes again is decoded whole by the proof (an edit of one config shows every kept cell's
# blocks once more), the same modules in the audit, generate and the bot.
_PUBLISHABLE: Recent[bytes, bool] = Recent(50_000)  # about 15 MB of blocks


def _check_blocks(blocks: list[Block], where: str, literal: bool, verb: str) -> None:
    for index, block in enumerate(blocks):
        title = f"{where}, block {index} ({block_title(block)})"
        for line in block.get("preamble") or []:
            if literal:
                # srt-slurm runs a service's preamble through bash itself: the raw form shows
                # that shell line as it ran, refusing only what a terminal would hide, and a
                # line break bash would read as the end of a command.
                shown = shellwords.quoted_line_breaks_hidden(js_string(line))
                _check_printable(line, "preamble line", title, verb, shown=shown)
            else:
                _check_plain(line, "preamble line", title, _PLAIN_LINE, literal, verb)
        for key, value in (block.get("env") or {}).items():
            _check_plain(key, "env key", title, _ENV_KEY, literal, verb)
            _check_value(value, f"env {key}", title, literal, verb)
        args = block.get("args") or []
        if not (block.get("kind") == "nginx" and not args):  # printed as a fixed command
            _check_plain(block.get("cmd"), "command", title, _PLAIN_LINE, literal, verb)
            if not js_string(block.get("cmd")).strip():
                raise _refuse(title, "command", js_string(block.get("cmd")), "is empty", verb)
        for arg in args:
            if not isinstance(arg, list) or not arg:
                raise SyncError(f"{title}: argument {js(arg)} is not a [flag, values...] list")
            _check_plain(arg[0], "flag", title, _FLAG, literal, verb)
            for value in arg[1:]:
                _check_value(value, f"flag {arg[0]}", title, literal, verb)
