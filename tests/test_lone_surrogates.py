"""Issue 36 point 6: a lone surrogate never exits 3, through the real commands.

A JavaScript string may hold a lone surrogate (a module's ``"au\\ud800to"``, as JSON escapes
it), but no UTF-8 text can. So a module's surrogate is shown as its escape wherever a report,
a command text or JSON shows it (as control characters are), and written as its escape in a
module's text (``reencode``, ``generate``), which holds the same string. ``sync.yaml`` is our
own input, which becomes page headings and commit messages: a surrogate there is refused with
its line, exit 2. Each test failed before (exit 3).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from botworld import RUN, sync_bot
from conftest import ROOT
from test_hardening import MODULE, copy_project, edit, error_line, sync

from syncer.cookbook.jsmodule import load_module

VALUE = "au\ud800to"
ESCAPED = "au\\ud800to"  # as the module's text, a JSON string and every report write it
KEPT = "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"  # not the edited cell's config


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The project with the surrogate in the first cell's worker flag (its JSON escape)."""
    project = copy_project(tmp_path / "project")
    edit(project / MODULE, '["--reasoning-parser", "auto"]', f'["--reasoning-parser", "{ESCAPED}"]')
    return project


def _ok(proc, code: int = 0) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stderr[-2000:])
    return proc.stdout


def test_decode_shows_a_lone_surrogate_escaped(project: Path) -> None:
    proc = sync(project, "decode", MODULE)
    assert f"  --reasoning-parser '{ESCAPED}' \\" in _ok(proc).splitlines()
    assert "(\\ud800)" in proc.stderr  # the warning names it
    case = json.loads(_ok(sync(project, "decode", MODULE, "--format", "json")))
    assert any(VALUE in text for text in case["text"])  # the JSON escape: the value itself
    assert ESCAPED in _ok(sync(project, "decode", MODULE, "--all"))
    every = json.loads(_ok(sync(project, "decode", MODULE, "--all", "--format", "json")))
    assert VALUE in json.dumps(every, ensure_ascii=False)


def test_reencode_writes_a_lone_surrogate_as_its_escape(project: Path) -> None:
    text = _ok(sync(project, "reencode", MODULE))
    assert f'"{ESCAPED}"' in text
    _ok(sync(project, "reencode", MODULE, "--out", "again.jsx"))
    again = load_module(project / "again.jsx").value
    assert VALUE in json.dumps(again, ensure_ascii=False)


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_diff_shows_a_lone_surrogate_escaped(project: Path, fmt: str) -> None:
    before = ROOT / MODULE
    out = _ok(sync(project, "diff", str(before), MODULE, "--format", fmt), 1)
    assert ESCAPED in out
    if fmt == "json":
        json.loads(out)


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_audit_shows_a_lone_surrogate_escaped(project: Path, fmt: str) -> None:
    out = _ok(sync(project, "audit", "--format", fmt), 1)
    assert ESCAPED in out


def test_generate_keeps_a_decoded_cell_with_its_surrogate(project: Path) -> None:
    assert ESCAPED in _ok(sync(project, "generate", "--all", "--check"), 1)
    _ok(sync(project, "generate", "--all", "--only", KEPT))
    text = (project / MODULE).read_text(encoding="utf-8")
    assert f'"{ESCAPED}"' in text  # the other cells as decoded, the escape written back


SECTION = ("section: Agentic Long-Context Deployment", 'section: "Agentic\\ud800"')
MODEL = ("    model: DeepSeek-V4.1", '    model: "DeepSeek\\ud800"')


def _config_line(text: str, new: str) -> int:
    return text[: text.index(new)].count("\n") + 1


@pytest.mark.parametrize(("old", "new"), [SECTION, MODEL])
def test_generate_refuses_a_lone_surrogate_in_sync_yaml_by_line(
    tmp_path: Path, old: str, new: str
) -> None:
    project = copy_project(tmp_path)
    edit(project / "sync.yaml", old, new)
    line = error_line(sync(project, "generate", "--all"))
    number = _config_line((project / "sync.yaml").read_text(), new)
    assert line.startswith(f"error: sync.yaml:{number}:")
    assert "lone surrogate (\\ud800)" in line


@pytest.mark.parametrize(("old", "new"), [SECTION, MODEL])
def test_the_bot_refuses_a_lone_surrogate_in_sync_yaml_by_line(world, old: str, new: str) -> None:
    config = world.tmp / "sync.yaml"
    config.write_text((ROOT / "sync.yaml").read_text().replace(old, new))
    comment = world.comment(f"/use {RUN}")
    for extra in ((), ("--dry-run",), ("--models-only",)):
        proc = sync_bot(world, world.comment_event(comment), *extra, "--config", str(config))
        assert proc.returncode == 2, (extra, proc.stderr[-2000:])
        assert f"{config}:{_config_line(config.read_text(), new)}:" in proc.stderr
    assert world.gh.writes() == []


@pytest.mark.parametrize("where", ["action", "repository", "comment"])
def test_the_bot_takes_a_lone_surrogate_in_an_event(world, where: str) -> None:
    # An event GitHub would not send (`action`, the repository's name) is malformed for the
    # schema: given anyway, it is ignored or refused, shown escaped; never exit 3 (it was).
    name = "pull_request"
    event = world.pr_event("synchronize")
    if where == "action":
        event["action"] += "\ud800"
    elif where == "repository":
        event["repository"]["full_name"] += "\ud800"
    else:
        event = world.comment_event(world.comment(f"Pinning \ud800 the run.\n/use {RUN}"))
        name = "issue_comment"
    for extra in ((), ("--dry-run",), ("--models-only",)):
        proc = sync_bot(world, event, *extra, event=name, malformed=True)
        assert proc.returncode == 0, (extra, proc.stderr[-2000:])
        assert "\ud800" not in proc.stdout + proc.stderr
