"""Wording of what the commands print: help for every option, plurals, values as their format
spells them, long values cut."""

from __future__ import annotations

import importlib
from pathlib import Path

import click
import pytest

from syncer.commands.group import COMMANDS
from syncer.wording import count, cut_long_words, js

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_has_help(name: str) -> None:
    command = getattr(importlib.import_module(COMMANDS[name][0]), f"{name}_command")
    bare = [p.opts[0] for p in command.params if isinstance(p, click.Option) and not p.help]
    assert bare == [], f"sync {name}: options without help"


def test_count() -> None:
    assert count(1, "point") == "1 point"
    assert count(0, "point") == "0 points"
    assert count(7, "point") == "7 points"
    assert count(1, "entry", "entries") == "1 entry" and count(2, "entry", "entries") == "2 entries"


def test_js_spells_values_as_json_and_cuts_them() -> None:
    assert (
        js(True) == "true"
        and js(None) == "null"
        and js("x") == '"x"'
        and js([1, "a"]) == '[1, "a"]'
    )
    long = js("9" * 1000)
    assert long.startswith('"999') and long.endswith("… (922 more characters)")
    assert js("9" * 1000, None) == f'"{"9" * 1000}"'  # whole: a text shown as it is posted


def test_cut_long_words() -> None:
    text = "process index " + "1" * 5000 + " is not a number"
    cut = cut_long_words(text)
    assert cut.startswith("process index 111") and cut.endswith(
        "… (4800 more characters) is not a number"
    )
    assert cut_long_words("short words stay") == "short words stay"


def test_a_path_in_an_error_is_never_cut() -> None:
    # An error names its file: a deep checkout or temporary directory must not cut it away.
    path = "/tmp/" + "deep-directory/" * 30 + "agentic.yaml"
    line = cut_long_words(f"{path}:12: YAML nesting deeper than 200 levels")
    assert line == f"{path}:12: YAML nesting deeper than 200 levels"
    # A quoted value with a slash is a value, not a path: cut as any long word.
    value = '"' + "a/" * 300 + '"'
    assert "more characters" in cut_long_words(f"flag value {value} is not a number")
    # Beyond the longest path the system can name, it is cut too.
    assert "more characters" in cut_long_words("/" + "x" * 5000)


def test_cli_errors_cut_long_values(capsys: pytest.CaptureFixture[str]) -> None:
    from syncer.cli import main

    master = ROOT / "examples" / "inferencex" / "inferencex-e2e" / "configs" / "nvidia-master.yaml"
    # The message cuts the key it quotes (JSON spelling: double quotes)...
    with pytest.raises(SystemExit) as done:
        main(["render", "k" * 3000])
    assert done.value.code == 2
    assert capsys.readouterr().err == (
        f'error: {master}: unknown config key "{"k" * 79}… (2922 more characters)\n'
    )
    # ... and the CLI cuts a value the message did not cut itself.
    key = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
    with pytest.raises(SystemExit) as done:
        main(["render", key, "--point", "1" * 3000])
    assert done.value.code == 2
    assert capsys.readouterr().err == (
        f"error: {key}: --point {'1' * 200}… (2800 more characters) out of range (0..6)\n"
    )


@pytest.mark.parametrize(("logs", "said"), [(1, "the sweep log"), (2, "the 2 sweep logs")])
def test_empty_sweep_logs_counted(tmp_path, logs: int, said: str) -> None:
    from syncer.errors import SyncError
    from syncer.runs.collect import read_run

    for i in range(logs):
        (tmp_path / f"sweep_{i}.log").write_text("nothing launched here\n", encoding="utf-8")
    with pytest.raises(SyncError, match=f"no srt-slurm worker launch in {said} \\(expected"):
        read_run(tmp_path)
