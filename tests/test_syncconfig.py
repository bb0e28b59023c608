"""sync.yaml: the repository's own file, and errors that name the line."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import forkserver
import pytest

from syncer.errors import SyncError
from syncer.syncconfig import Pin, load_sync_config, parse_sync_config

ROOT = Path(__file__).resolve().parent.parent

GOOD = """\
inferencex:
  main: 0123456789abcdef0123456789abcdef01234567
models:
  - path: acme/m1
    model: M1
    page: docs/m1.mdx
    section: AgentX
    hardware: [{id: gb300, label: GB300}, {id: h100, label: H100}]
    kv_donors: {hicache: m1-fp4-gb300-dynamo-disagg}
    configs:
      - key: m1-fp4-gb300-dynamo-disagg
        source: main
        pin: {status: verified, run: "100/attempts/2", pr: 12, date: "2026-10-01",
              sha: 89abcdef0123456789abcdef0123456789abcdef}
      - key: m1-fp4-h100-sglang
        source: {pr: 3859, sha: 6b07b8e6930edcb8309cb59ca758fce5a3ef3f6b}
        pin: {status: verified-pr, run: "41000000001", comment: "77"}
      - key: m1-fp4-gb300-sglang-new
        source: {pr: 3901, sha: 1111111111111111111111111111111111111111}
        pin: {status: in-progress}
"""


def test_repository_sync_yaml() -> None:
    config = load_sync_config(ROOT / "sync.yaml")
    model = config.model("deepseek-ai/deepseek-v4_1")
    assert config.model("DeepSeek-V4.1") is model
    assert model.module_relpath == "deepseek-ai/deepseek-v4_1.jsx"
    pins = config.pins()
    dspark = pins["dsv41flash-fp4-gb300-sglang-agentic-dspark"]
    assert (dspark.run, dspark.status, dspark.pr) == ("41000000001", "verified-pr", "3859")
    assert dspark.comment
    disagg = pins["dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"]
    assert (disagg.run, disagg.status) == (None, "in-progress")
    assert model.hicache_donor == "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"


def test_parse_pins_and_provenance() -> None:
    config = parse_sync_config(GOOD)
    pins = config.pins()
    main = pins["m1-fp4-gb300-dynamo-disagg"]
    assert main == Pin(
        config="m1-fp4-gb300-dynamo-disagg",
        pr="12",
        sha="89abcdef0123456789abcdef0123456789abcdef",
        run="100/attempts/2",
        comment=None,
        status="verified",
        date="2026-10-01",
    )
    assert list(main.prov()) == ["sha", "run", "pr", "status", "date"]
    assert pins["m1-fp4-gb300-sglang-new"].prov() == {
        "sha": "1" * 40,
        "pr": "3901",
        "status": "in-progress",
    }
    # Only PR-sourced configs are "open PRs" of the sync run, in listing order.
    assert list(config.pr_sources()) == ["3859", "3901"]
    assert config.model_of("m1-fp4-h100-sglang").path == "acme/m1"


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        ("status: in-progress}", "status: in-progres}", 20, "expected one of"),
        ("status: in-progress}", "status: in-progress, run: '5'}", 20, "in-progress config has no"),
        (
            'run: "41000000001", comment: "77"',
            'comment: "77"',
            17,
            "needs a PR source and a pinned",
        ),
        ("section: AgentX", "section: AgentX\n    colour: red", 8, 'unknown key "colour"'),
        ("sha: 6b07b8e", "sha: 6B07B8E", 16, "40 lowercase hex"),
        ('run: "100/attempts/2"', 'run: "100/attempt/2"', 13, "run id"),
        ('date: "2026-10-01"', 'date: "2026-02-30"', 13, "not a calendar date"),
        ("page: docs/m1.mdx", "page: ../m1.mdx", 6, "relative path"),
        # Matched whole: not a commit with a trailing newline, not a PR in Arabic-Indic digits.
        (
            "sha: 6b07b8e6930edcb8309cb59ca758fce5a3ef3f6b",
            'sha: "6b07b8e6930edcb8309cb59ca758fce5a3ef3f6b\\n"',
            16,
            "40 lowercase hex",
        ),
        ("pr: 3859", "pr: \u0663\u0668\u0665\u0669", 16, "a PR number"),
    ],
)
def test_errors_name_the_line(old: str, new: str, line: int, message: str) -> None:
    text = GOOD.replace(old, new, 1)
    assert text != GOOD
    with pytest.raises(SyncError) as err:
        parse_sync_config(text, "sync.yaml")
    assert err.value.path == "sync.yaml"
    assert err.value.line == line, err.value
    assert message in err.value.message


def test_a_list_where_a_string_belongs_is_named_not_printed() -> None:
    """An aliased list expands to 9**8 strings when printed: the error names its kind, at once."""
    bomb = (
        "[&a0 [x, x, x, x, x, x, x, x, x]"
        + "".join(f", &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9))
        + "]"
    )
    for old, new, message in [
        (
            "main: 0123456789abcdef0123456789abcdef01234567",
            f"main: {bomb}",
            "inferencex.main: expected a string, got a list",
        ),
        ("models:\n", f"models:\n  - ? {bomb}\n    : x\n", "keys must be strings, got a list"),
    ]:
        with pytest.raises(SyncError) as err:
            parse_sync_config(GOOD.replace(old, new, 1))
        assert err.value.message.endswith(message), err.value.message[:200]


def test_duplicate_config_across_models() -> None:
    second = GOOD.split("models:\n", 1)[1].replace("acme/m1", "acme/m2")
    text = GOOD + second.replace("docs/m1.mdx", "docs/m2.mdx")
    with pytest.raises(SyncError, match="listed by both"):
        parse_sync_config(text)


def test_two_models_on_one_page_are_refused() -> None:
    """`sync generate --all` writes every page after all models succeeded, and a page imports
    a single `agentx` module: two models cannot share a page."""
    second = GOOD.split("models:\n", 1)[1].replace("acme/m1", "acme/m2")
    keys = re.findall(r"key: (\S+)", second)
    for key in keys:
        second = second.replace(f"key: {key}", f"key: {key}-other")
    with pytest.raises(SyncError, match='already the page of "acme/m1"'):
        parse_sync_config(GOOD + second)


def test_unknown_model_lists_known() -> None:
    with pytest.raises(SyncError, match="acme/m1"):
        parse_sync_config(GOOD).model("nope")


def test_missing_and_broken_files(tmp_path: Path) -> None:
    with pytest.raises(SyncError, match="not found"):
        load_sync_config(tmp_path / "sync.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("models: [\n", encoding="utf-8")
    with pytest.raises(SyncError) as err:
        load_sync_config(bad)
    assert err.value.line is not None


@pytest.mark.parametrize(
    ("tagged", "message"),
    [
        ("!evil 0123456789abcdef0123456789abcdef01234567", "could not determine a constructor"),
        ("!!python/name:os.system", "could not determine a constructor"),
        ("!!python/object/apply:os.system id", "could not determine a constructor"),
        ("9" * 5000, "a number too long"),
    ],
)
def test_tags_and_huge_numbers_are_bad_input_with_exit_2(
    tmp_path: Path, tagged: str, message: str
) -> None:
    # Issue 12.4: the safe loader's ConstructorError (and int() on thousands of digits) went
    # out of `sync generate` as an internal error, exit 3 with a traceback.
    text = GOOD.replace("main: 0123456789abcdef0123456789abcdef01234567", f"main: {tagged}", 1)
    path = tmp_path / "sync.yaml"
    path.write_text(text, encoding="utf-8")
    proc = subprocess.run(
        [*forkserver.command(), "generate", "--all", "--config", str(path), "--check"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"error: {path}:2:9: not a plain YAML value") or line.startswith(
        f"error: {path}:2:9: a number too long"
    ), line
    assert message in line


def test_tag_in_a_key_or_nested_value_names_its_line() -> None:
    for old, new, line in [
        ("section: AgentX", "!evil section: AgentX", 7),
        ("pin: {status: in-progress}", "pin: {status: !!python/name:os.system in-progress}", 20),
    ]:
        with pytest.raises(SyncError) as err:
            parse_sync_config(GOOD.replace(old, new, 1), "sync.yaml")
        assert err.value.line == line, err.value


def test_sync_yaml_over_the_size_cap_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sync.yaml"
    with path.open("wb") as out:
        out.truncate(5 * 1024 * 1024)
    with pytest.raises(SyncError, match="over the 4194304-byte limit"):
        load_sync_config(path)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        # YAML 1.1 reads yes as a boolean and an unquoted date as a date: the error shows the
        # text as written and what YAML made of it, not Python's True or datetime.date(...).
        (
            "main: 0123456789abcdef0123456789abcdef01234567",
            "main: yes",
            "inferencex.main: expected a string, got yes (a boolean)",
        ),
        (
            "main: 0123456789abcdef0123456789abcdef01234567",
            "main: 2026-10-13",
            "inferencex.main: expected a string, got 2026-10-13 (a date)",
        ),
        ("models:\n", "models:\n  - on: x\n", "keys must be strings, got on (a boolean)"),
    ],
)
def test_yaml_scalars_are_shown_as_written(old: str, new: str, message: str) -> None:
    text = GOOD.replace(old, new, 1)
    assert text != GOOD
    with pytest.raises(SyncError) as err:
        parse_sync_config(text)
    assert err.value.message.endswith(message), err.value.message
