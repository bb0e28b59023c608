"""The one way untrusted values (recipes, logs, modules, comments) reach markdown or a terminal.

Everything an InferenceX PR author can write ends up in PR bodies, comments and reports, so no
template prints such a value raw: it goes through ``md_code`` (a value shown as code: flags,
env values, commands), ``md_text`` (a value in prose), ``md_link`` (a link, only to hosts we
know) or ``term_text`` (terminal output). Templates get them as the ``code``, ``text``,
``link`` and ``term`` filters (see ``syncer.templating``).
"""

from __future__ import annotations

import re
import string
from urllib.parse import unquote, urlsplit

from syncer import jsonenc, links
from syncer.secrets import mask

MAX_VALUE_CHARS = 300
# Links are allowed only to these hosts, and on github.com only into these repositories.
ALLOWED_GITHUB_REPOS = (links.INFERENCEX_REPO, links.COOKBOOK_REPO, links.SRT_SLURM_REPO)
ALLOWED_HOSTS = (urlsplit(links.DOCS_URL).hostname, "inferencex.semianalysis.com")

# Terminal escape sequences: CSI (colours, cursor), OSC (titles, hyperlinks) and two-byte ESC x.
ANSI_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
# What a report shows escaped (``\\x1b``, ``\\u200b``) instead of dropping or replacing it:
# the controls above (ESC included, so an escape sequence is shown, not obeyed or silently
# removed), bidi marks and the invisible characters (zero-width space and joiners, word
# joiner, BOM, soft hyphen) that make two values look the same, and a lone surrogate (a JS
# string or a JSON escape may hold one; no UTF-8 text can, so it is shown as its escape).
_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u2069\ud800-\udfff\ufeff]"
)
_ZWSP = "\u200b"


def _escape(match: re.Match[str]) -> str:
    return _escape_char(match.group())


def _escape_char(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control and invisible character written as its escape."""
    return _HIDDEN.sub(_escape, text)


def hidden_characters(text: str) -> list[str]:
    """The control and invisible characters in ``text``, each once, as the escapes
    :func:`visible` writes for them (``\\x1b``, ``\\u200b``), in code-point order."""
    return [_escape_char(char) for char in sorted(set(_HIDDEN.findall(text)))]


# A backslash escape in a JavaScript or JSON text that writes no character :data:`_HIDDEN`
# holds: a quote, a backslash, a slash, a line feed, a tab. Any other (``\u200b``, ``\x1b``,
# ``\r``, ``\0``, a line continuation) may.
_ESCAPE_OF_HIDDEN = re.compile(r"""\\[^"'\\/nt]""")


def may_hide(source: str) -> bool:
    """Whether a string parsed from the JavaScript or JSON text ``source`` may hold a character
    :func:`visible` escapes: one in the text itself, or an escape that could write one. When
    not, no string made of its strings and plain text holds one (a module's commands)."""
    return _HIDDEN.search(source) is not None or _ESCAPE_OF_HIDDEN.search(source) is not None


def json_escaped(text: str) -> str:
    """JSON text with the characters :func:`visible` escapes and ``json.dumps`` leaves raw (C1
    controls such as the 8-bit CSI, DEL, line separators, bidi marks, zero-width characters)
    written as ``\\u`` escapes: the parsed value is unchanged (they can only occur inside
    strings, where the escape means the same character), and nothing is hidden on screen."""
    return _HIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def clip(value: object, limit: int = MAX_VALUE_CHARS) -> str:
    """``str(value)`` cut to ``limit`` characters, saying how much was left out."""
    text = "" if value is None else str(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def _inert(text: str) -> str:
    """Tokens masked, CR and CRLF made LF, controls and invisible characters (escape
    sequences' ESC included) shown as escapes."""
    text = mask(text).replace("\r\n", "\n").replace("\r", "\n")
    return visible(text)


def _one_line(text: str) -> str:
    return _inert(text).replace("\n", "⏎")


def md_code(value: object, *, table: bool = False, limit: int = MAX_VALUE_CHARS) -> str:
    """A value as an inline code span: nothing inside is markup, a mention, a ref or a link.

    The fence is one backtick longer than the longest backtick run inside; ``table=True`` also
    escapes ``|`` so the value cannot end a GitHub table cell. Code spans are literal only in
    markdown context: templates keep a blank line after every ``<summary>`` line so a span is
    never inside an HTML block (the template tests check this).
    """
    text = _one_line(clip(value, limit))
    if text == "":
        return "` `" if not table else "`''`"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else ""
    if table:
        text = text.replace("|", "\\|")
    return f"{fence}{pad}{text}{pad}{fence}"


# Escaped wherever they are: what starts emphasis, code, a link or a table cell. The rest of
# markdown's punctuation means something only at the start of a line (a heading, a list, a
# quote), so only a leading one is escaped: reasons read "(srt-slurm 2.x ...)", not
# "\\(srt\\-slurm 2\\.x ...\\)" (mentions, refs and links are defused with a zero-width space).
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_MD_LEADING = re.compile(r"^(\s*)(?:([#+\-=>])|(\d+)([.)]))")


def md_text(value: object, *, limit: int = MAX_VALUE_CHARS) -> str:
    """A value in prose: markdown and HTML inert, mentions, refs and autolinks neutralised
    (``_defuse``). A ``Prose`` keeps its own words as written and escapes only its values."""
    if isinstance(value, Prose):
        return value.markdown(limit)
    text = _defuse(_html_escaped(_one_line(clip(value, limit))))
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return _MD_LEADING.sub(_escape_leading, text, count=1)


def md_html(value: object, *, limit: int = MAX_VALUE_CHARS) -> str:
    """A value inside an HTML block (a ``<details><summary>`` line), where GitHub reads no
    markdown, so a backslash would be shown: HTML escaped and defused, nothing backslashed."""
    return _defuse(_html_escaped(_one_line(clip(value, limit))))


def _html_escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _defuse(text: str) -> str:
    """A zero-width space after ``@`` (mentions, team mentions, e-mail autolinks), inside
    ``#123``, ``GH-123`` and ``owner/repo#123`` refs, after ``www`` and after URL schemes, so
    GitHub neither pings, nor cross-references, nor links. Idempotent: a ``Prose`` defuses its
    whole sentence again, so a ref its words and a value make together (``PR #`` and ``12``)
    is caught too."""
    text = re.sub("@(?!" + _ZWSP + ")", "@" + _ZWSP, text)
    text = re.sub(r"#(?=[0-9])", "#" + _ZWSP, text)
    text = re.sub(r"(?i)\b(GH)-(?=[0-9])", r"\1" + _ZWSP + "-", text)
    text = re.sub(r"(?i)\b(www)\.", r"\1" + _ZWSP + ".", text)
    return re.sub(r"(?i)\b([a-z][a-z0-9+.-]*):(?=/)", r"\1" + _ZWSP + ":", text)


class Prose(str):
    """A sentence of our own words with values in it (``Prose("run {run} is gone", run=r)``).

    As a string it is the plain sentence (JSON, the terminal, logs); in markdown
    (``md_text``, the ``text`` filter) only the values are escaped, so the words read as
    written (``set GITHUB_TOKEN``, never ``GITHUB\\_TOKEN``) while a value stays inert."""

    template: str
    values: dict[str, object]

    def __new__(cls, template: str, /, **values: object) -> Prose:
        self = super().__new__(cls, template.format(**values))
        self.template = template
        self.values = values
        return self

    def markdown(self, limit: int = MAX_VALUE_CHARS) -> str:
        parts = []
        for words, name, _, _ in string.Formatter().parse(self.template):
            parts.append(words)
            if name is not None:
                parts.append(md_text(self.values[name], limit=limit))
        return _defuse("".join(parts))


def _escape_leading(match: re.Match[str]) -> str:
    space, mark, number, dot = match.groups()
    return f"{space}\\{mark}" if mark else f"{space}{number}\\{dot}"


_LINK_BAD_CHARS = re.compile(r"[\s<>\"'`()\[\]\\{}|^\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e]")


def is_allowed_link(url: str) -> bool:
    """Only ``https`` links to the known hosts (on github.com: into the known repositories)."""
    if not url or _LINK_BAD_CHARS.search(url) or len(url) > 2000:
        return False
    parts = urlsplit(url)
    if parts.scheme != "https" or parts.username or parts.password or parts.port:
        return False
    segments = unquote(parts.path).split("/")
    # Browsers resolve dot segments, so /sgl-project/sglang/../../evil would leave the repo.
    if any(seg in (".", "..") for seg in segments) or "%" in unquote(parts.path):
        return False
    if parts.hostname == "github.com":
        repo = "/".join(segments[1:3])
        return parts.netloc == "github.com" and repo in ALLOWED_GITHUB_REPOS
    return parts.netloc in ALLOWED_HOSTS


def md_link(url: object, label: object) -> str:
    """A markdown link when ``url`` points at a known place; otherwise the label as text
    (defused: it may be anything).

    Inside a link GitHub makes no mention, reference or autolink, so a label there is only
    made inert as markdown and HTML: no zero-width space, which would be copied with it
    (``#3859``, a run id). A link whose label is its own URL is an autolink (``<URL>``, which
    no emphasis or escape inside can change): shown as the plain URL, and what a reader copies
    is the URL."""
    href = "" if url is None else str(url)
    if not is_allowed_link(href):
        return md_text(label)
    if isinstance(label, str) and label == href:
        return f"<{href}>"
    text = _MD_SPECIAL.sub(r"\\\1", _html_escaped(_one_line(clip(label, MAX_VALUE_CHARS))))
    return f"[{text}]({href})"


def md_block(value: object, lang: str = "") -> str:
    """A multi-line value as a fenced code block that nothing inside can close.

    The fence is at least three backticks and one longer than the longest backtick run inside;
    escape sequences and control characters (except newline and tab) are removed.
    """
    text = _inert("" if value is None else str(value))
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    info = re.sub(r"[^a-z0-9_-]", "", lang.lower())
    return f"{fence}{info}\n{text}\n{fence}"


def term_text(value: object, *, limit: int | None = None) -> str:
    """A value for a terminal: tokens masked, control and invisible characters (the ESC of
    an escape sequence included) shown as escapes, so nothing acts on the terminal and
    nothing is hidden from the reader."""
    text = clip(value, limit) if limit else ("" if value is None else str(value))
    return visible(mask(text).replace("\r\n", "\n"))


def term_line(value: object) -> str:
    """:func:`term_text` kept on one line, a line break shown as ``⏎``: a line of a log. A
    GitHub Actions log reads a line that begins with ``::`` as a workflow command, so no text
    a run quotes (a key, a message) may start a line of its own."""
    return term_text(value).replace("\n", "⏎")


def json_text(value: object, *, indent: int | None = None) -> str:
    """``value`` as JSON for a terminal or a file: UTF-8 kept readable, the characters a
    terminal acts on or hides written as ``\\u`` escapes (:func:`json_escaped`), tokens
    masked."""
    return mask(json_escaped(jsonenc.indented(value, indent)))
