"""A YAML text is parsed once per process (issue 39): a second load of the same recipe gives
the same values, fresh ones, with the same warnings, without parsing again."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
import yaml

from syncer.errors import SyncError
from syncer.inferencex import yamlsafe

ALIASED = (
    "base: &b {tp: 4, args: [--a, --b]}\nprefill: *b\ndecode:\n  <<: *b\n  tp: 8\nbig: 10**9\n"
)


def _no_parse(*_args: object, **_kwargs: object) -> object:
    raise AssertionError("parsed again")


def test_the_second_load_of_a_text_is_not_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "recipe.yaml"
    f.write_text(ALIASED)
    expected = yaml.safe_load(ALIASED)
    assert yamlsafe.load(f) == expected
    monkeypatch.setattr(yaml, "load", _no_parse)
    assert yamlsafe.load(f) == expected


def test_each_load_gives_values_of_its_own_with_aliases_still_shared(tmp_path: Path) -> None:
    f = tmp_path / "recipe.yaml"
    f.write_text(ALIASED)
    first = yamlsafe.load(f)
    first["base"]["args"].append("--mutated")
    first["decode"]["tp"] = 1
    second = yamlsafe.load(f)
    assert second == yaml.safe_load(ALIASED)
    # as PyYAML builds it: an alias is the anchored object itself
    assert second["prefill"] is second["base"]
    assert second["decode"]["args"] is second["base"]["args"]


def test_a_changed_file_is_parsed_again(tmp_path: Path) -> None:
    f = tmp_path / "recipe.yaml"
    f.write_text("a: 1\n")
    assert yamlsafe.load(f) == {"a": 1}
    f.write_text("a: 2\n")
    assert yamlsafe.load(f) == {"a": 2}


def test_duplicate_warnings_are_given_on_every_load(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "a: 1\nb: 2\na: 3\n"
    first: list[str] = []
    assert yamlsafe.loads(text, "r.yaml", duplicates=first) == {"a": 3, "b": 2}
    monkeypatch.setattr(yaml, "load", _no_parse)
    again: list[str] = []
    assert yamlsafe.loads(text, "r.yaml", duplicates=again) == {"a": 3, "b": 2}
    assert again == first and len(first) == 1 and first[0].startswith("r.yaml:3: ")
    # read strictly, the same text is still refused: warned and strict reads are kept apart
    monkeypatch.undo()
    with pytest.raises(SyncError, match="duplicate key"):
        yamlsafe.loads(text, "r.yaml")


def test_a_refused_text_is_refused_again_with_the_warnings_before_it() -> None:
    text = "a: 1\na: 2\nb: [\n"
    for _ in range(2):
        warned: list[str] = []
        with pytest.raises(SyncError, match="YAML syntax error"):
            yamlsafe.loads(text, "bad.yaml", duplicates=warned)


def test_dates_are_built_each_time() -> None:
    text = "day: 2026-01-02\n"
    first = yamlsafe.loads(text, "d.yaml")
    assert first == {"day": datetime.date(2026, 1, 2)}
    assert yamlsafe.loads(text, "d.yaml") == first


def test_a_copy_at_another_path_is_not_parsed_again_unless_it_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.yaml").write_text(ALIASED)
    (tmp_path / "b.yaml").write_text(ALIASED)
    expected = yamlsafe.load(tmp_path / "a.yaml")
    with monkeypatch.context() as patched:
        patched.setattr(yaml, "load", _no_parse)
        assert yamlsafe.load(tmp_path / "b.yaml") == expected
    # a warning names the file it is about: a copy elsewhere is read for its own
    text = "a: 1\na: 2\n"
    for name in ("a.yaml", "b.yaml"):
        warned: list[str] = []
        yamlsafe.loads(text, name, duplicates=warned)
        assert len(warned) == 1 and warned[0].startswith(f"{name}:2: ")
