"""The one way untrusted values (recipes, logs, modules, comments) reach markdown or a terminal.

Everything an InferenceX PR author can write ends up in PR bodies, comments and reports, so no
template prints such a value raw: it goes through ``md_code`` (a value shown as code: flags,
env values, commands), ``md_text`` (a value in prose), ``md_link`` (a link, only to hosts we
know) or ``term_text`` (terminal output). Templates get them as the ``code``, ``text``,
``link`` and ``term`` filters (see ``syncer.templating``).
"""

from __future__ import annotations

import re

MAX_VALUE_CHARS = 300
ALLOWED_LINK_PREFIXES = (
    "https://github.com/SemiAnalysisAI/InferenceX/",
    "https://github.com/SemiAnalysisAI/InferenceX",
    "https://github.com/sgl-project/sglang/",
    "https://github.com/NVIDIA/srt-slurm/",
    "https://docs.sglang.io/",
    "https://inferencex.semianalysis.com/",
)

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_ZWSP = "\u200b"


def clip(value: object, limit: int = MAX_VALUE_CHARS) -> str:
    """``str(value)`` cut to ``limit`` characters, saying how much was left out."""
    text = "" if value is None else str(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def _one_line(text: str) -> str:
    text = _ANSI.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "⏎")
    return _CONTROL.sub("\ufffd", text)


def md_code(value: object, *, table: bool = False, limit: int = MAX_VALUE_CHARS) -> str:
    """A value as an inline code span: nothing inside is markup, a mention, a ref or a link.

    The fence is one backtick longer than the longest backtick run inside; ``table=True`` also
    escapes ``|`` so the value cannot end a GitHub table cell.
    """
    text = _one_line(clip(value, limit))
    if text == "":
        return "` `" if not table else "`''`"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or text.startswith(" ") else ""
    if table:
        text = text.replace("|", "\\|")
    return f"{fence}{pad}{text}{pad}{fence}"


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


def md_text(value: object, *, limit: int = MAX_VALUE_CHARS) -> str:
    """A value in prose: markdown and HTML inert, ``@mentions`` and ``#refs`` neutralised."""
    text = _one_line(clip(value, limit))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    # A zero-width space after @ and before a ref number keeps GitHub from pinging or linking.
    text = text.replace("@", "@" + _ZWSP)
    text = re.sub(r"(#)(?=\d)", "#" + _ZWSP, text)
    return re.sub(r"(?i)\b(https?|ftp)(:)", r"\1" + _ZWSP + r"\2", text)


def is_allowed_link(url: str) -> bool:
    return any(url == p or url.startswith(p) for p in ALLOWED_LINK_PREFIXES) and not re.search(
        r"[\s<>\"'`()\[\]]", url
    )


def md_link(url: object, label: object) -> str:
    """A markdown link when ``url`` points at a known host; otherwise the label as text."""
    text = md_text(label)
    href = "" if url is None else str(url)
    return f"[{text}]({href})" if is_allowed_link(href) else text


_MULTILINE_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def md_block(value: object, lang: str = "") -> str:
    """A multi-line value as a fenced code block that nothing inside can close.

    The fence is at least three backticks and one longer than the longest backtick run inside;
    escape sequences and control characters (except newline and tab) are removed.
    """
    text = "" if value is None else str(value)
    text = _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    text = _MULTILINE_CONTROL.sub("\ufffd", text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    info = re.sub(r"[^a-z0-9_-]", "", lang.lower())
    return f"{fence}{info}\n{text}\n{fence}"


def term_text(value: object, *, limit: int | None = None) -> str:
    """A value for a terminal: escape sequences and control characters removed."""
    text = clip(value, limit) if limit else ("" if value is None else str(value))
    text = _ANSI.sub("", text)
    return _CONTROL.sub("\ufffd", text.replace("\r", ""))
