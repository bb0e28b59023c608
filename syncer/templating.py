"""Every generated text (module header, page section, PR body, comments, reports) is rendered
here, from ``syncer/templates/``, with the untrusted-value filters registered. The benchmarks,
which are not installed, render theirs the same way from their own folder.

Compiled templates are kept on disk (:func:`compiled_templates`), as Python keeps ``.pyc``
files: compiling one costs more than rendering it, in every process that renders.

jinja2 is imported when the first template is rendered, not when this module is: a command
whose output is no template (every ``--format json``) never pays for it (about as much as
starting Python).
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from syncer import untrusted, wording
from syncer.locations import user_cache_dir

if TYPE_CHECKING:
    import jinja2

# The settings the compiled code depends on (its syntax and whitespace handling).
_COMPILE_SETTINGS = (
    "block_start_string",
    "block_end_string",
    "variable_start_string",
    "variable_end_string",
    "comment_start_string",
    "comment_end_string",
    "line_statement_prefix",
    "line_comment_prefix",
    "trim_blocks",
    "lstrip_blocks",
    "newline_sequence",
    "keep_trailing_newline",
    "autoescape",
    "optimized",
    "is_async",
)


def compiled_templates(directory: Path, environment: jinja2.Environment) -> jinja2.BytecodeCache:
    """Compiled templates in ``directory``, each used only for the source it was compiled
    from: jinja2 checks an entry against the template's checksum (and its own and Python's
    version), and the key names the template's file, the jinja2 release and the settings the
    code depends on. An entry that cannot be read is compiled again; one that cannot be
    written is not kept (and none is written under ``PYTHONDONTWRITEBYTECODE``)."""
    return _compiled_templates_class()(directory, environment)


@cache
def _compiled_templates_class() -> Callable[[Path, jinja2.Environment], jinja2.BytecodeCache]:
    # Made on first use: the class derives from jinja2's, and jinja2 is imported only then.
    import jinja2
    from jinja2.bccache import Bucket

    class CompiledTemplates(jinja2.FileSystemBytecodeCache):
        def __init__(self, directory: Path, environment: jinja2.Environment) -> None:
            super().__init__(str(directory), "%s.jinja2c")
            settings = [
                jinja2.__version__,
                *(repr(getattr(environment, s)) for s in _COMPILE_SETTINGS),
            ]
            settings += sorted(environment.extensions)
            self._settings = "|".join(settings)

        def get_cache_key(self, name: str, filename: str | None = None) -> str:
            text = f"{name}|{filename}|{self._settings}"
            return hashlib.sha256(text.encode("utf-8")).hexdigest()

        def load_bytecode(self, bucket: Bucket) -> None:
            try:
                super().load_bytecode(bucket)
            except Exception:  # a truncated or foreign file: compiled again
                bucket.reset()

        def dump_bytecode(self, bucket: Bucket) -> None:
            if sys.dont_write_bytecode:
                return
            try:
                os.makedirs(self.directory, mode=0o700, exist_ok=True)
                super().dump_bytecode(bucket)
            except OSError:
                pass  # a read-only or full disk: the next process compiles again

    return CompiledTemplates


def environment(folder: Path | None = None) -> jinja2.Environment:
    """The environment of ``syncer/templates/``, or of ``folder`` when given: one per folder
    and user cache, so that a process that has rendered before keeps its loaded templates
    while its compiled ones still go where its environment now says (``HOME``,
    ``XDG_CACHE_HOME``)."""
    try:
        compiled: Path | None = user_cache_dir() / "templates"
    except RuntimeError:  # no home directory: compiled in every process
        compiled = None
    return _environment(folder, compiled)


@cache
def _environment(folder: Path | None, compiled: Path | None) -> jinja2.Environment:
    import jinja2

    loader = (
        jinja2.FileSystemLoader(folder) if folder else jinja2.PackageLoader("syncer", "templates")
    )
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # markdown and JS, not HTML: untrusted values go through the filters
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["code"] = untrusted.md_code
    env.filters["text"] = untrusted.md_text
    env.filters["html"] = untrusted.md_html
    env.filters["link"] = untrusted.md_link
    env.filters["term"] = untrusted.term_text
    env.filters["block"] = untrusted.md_block
    env.filters["count"] = wording.count  # {{ n|count("point") }}: "1 point", "2 points"
    if compiled is not None:
        env.bytecode_cache = compiled_templates(compiled, env)
    return env


def render(template: str, /, *, folder: Path | None = None, **context: object) -> str:
    """Render ``syncer/templates/<template>`` (or ``<folder>/<template>``) with ``context``."""
    return environment(folder).get_template(template).render(**context)
