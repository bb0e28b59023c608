"""Compiled templates kept on disk: the same text as compiling, never a stale one."""

from __future__ import annotations

import sys
from pathlib import Path

import jinja2
import pytest

from syncer import templating


def _fresh(folder: Path, cache: Path, **settings: object) -> jinja2.Environment:
    """An environment like ``templating.environment(folder)`` whose compiled templates are
    kept in ``cache`` (a new one each call: nothing survives in memory)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(folder), **settings)  # type: ignore[arg-type]
    env.bytecode_cache = templating.compiled_templates(cache, env)
    return env


@pytest.fixture
def writable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def test_a_kept_template_renders_what_compiling_it_renders(tmp_path: Path, writable) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.j2").write_text("{% for x in xs %}{{ x }},{% endfor %}\n")
    cache = tmp_path / "cache"
    first = _fresh(tmp_path / "t", cache).get_template("a.j2").render(xs=[1, 2])
    assert len(list(cache.iterdir())) == 1
    kept = _fresh(tmp_path / "t", cache)
    kept.compile = None  # type: ignore[assignment,method-assign]  # read from disk, or fails
    assert first == kept.get_template("a.j2").render(xs=[1, 2]) == "1,2,"


def test_a_changed_template_or_setting_is_compiled_again(tmp_path: Path, writable) -> None:
    folder, cache = tmp_path / "t", tmp_path / "cache"
    folder.mkdir()
    (folder / "a.j2").write_text("  {% if x %}\nyes\n  {% endif %}\n")
    assert _fresh(folder, cache).get_template("a.j2").render(x=1) == "  \nyes\n  "
    trimmed = _fresh(folder, cache, trim_blocks=True, lstrip_blocks=True)
    assert trimmed.get_template("a.j2").render(x=1) == "yes\n"
    (folder / "a.j2").write_text("{{ x }} changed\n")
    assert _fresh(folder, cache).get_template("a.j2").render(x=1) == "1 changed"


def test_a_damaged_entry_is_compiled_again(tmp_path: Path, writable) -> None:
    folder, cache = tmp_path / "t", tmp_path / "cache"
    folder.mkdir()
    (folder / "a.j2").write_text("{{ x }}!")
    _fresh(folder, cache).get_template("a.j2")
    for entry in cache.iterdir():
        entry.write_bytes(entry.read_bytes()[:20])  # the header survives, the rest does not
    assert _fresh(folder, cache).get_template("a.j2").render(x=2) == "2!"


def test_a_cache_that_cannot_be_written_only_costs_the_compile(tmp_path: Path, writable) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "a.j2").write_text("{{ x }}?")
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    assert _fresh(folder, blocked / "cache").get_template("a.j2").render(x=3) == "3?"


def test_nothing_is_written_when_python_writes_no_bytecode(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    folder, cache = tmp_path / "t", tmp_path / "cache"
    folder.mkdir()
    (folder / "a.j2").write_text("{{ x }}")
    assert _fresh(folder, cache).get_template("a.j2").render(x=4) == "4"
    assert not cache.exists()


K = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
MODULE = "cookbook_snippets/deepseek-ai/deepseek-v4_1.jsx"


@pytest.mark.parametrize(
    ("args", "renders"),
    [
        (["verify", K, "--format", "json"], False),
        (["render", K, "--format", "json"], False),
        (["diff", MODULE, MODULE, "--format", "json"], False),
        (["verify", K, "--format", "markdown"], True),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else str(v),
)
def test_jinja2_is_imported_only_when_a_template_is_rendered(
    args: list[str], renders: bool
) -> None:
    """A command whose output is no template (every ``--format json``) imports no jinja2,
    which costs about as much as starting Python; every output that is one still renders
    through it."""
    import subprocess

    from conftest import ROOT

    probe = (
        "import sys\n"
        "from syncer.cli import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit as exc:\n"
        "    assert exc.code in (0, 1, None), exc.code\n"
        "print('jinja2' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stderr.strip().splitlines()[-1] == str(renders)
