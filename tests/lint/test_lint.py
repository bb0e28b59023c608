"""`sync lint` end to end on a real git repository built here: two versions of an SGLang-style
``server_args.py`` (a flag renamed, one removed, one added), the router's arguments moving
between them, and module cells pinned by tag, by short commit, to a pruned tag and to nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lintrepo import (
    SERVER_ARGS_V2,
    commit_files,
    fixture_module,
    git,
    make_sglang_repo,
    module_text,
)

from syncer.cli import main
from syncer.errors import SyncError
from syncer.lint.lint import (
    ABBREVIATION,
    DEPRECATED,
    POSSIBLY,
    UNDECLARED,
    UNRESOLVED,
    lint_texts,
)
from syncer.lint.report import lint_report
from syncer.lint.source import SGLangSource, image_pin
from syncer.model import Selection


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("sglang")
    return root, make_sglang_repo(root)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(argv)
    out = capsys.readouterr()
    return int(done.value.code or 0), out.out, out.err


def by_flag(result: Any) -> dict[tuple[str, str | None], Any]:
    return {(f.cell_id, f.flag): f for f in result.findings}


def test_findings_per_version(repo: tuple[Path, dict[str, str]]) -> None:
    root, commits = repo
    source = SGLangSource(root)
    result = lint_texts([("m.jsx", fixture_module(commits))], source)
    found = by_flag(result)
    # v1 (tag v0.5.1): the flag v2 added is not declared yet; everything else is.
    assert {k for k in found if k[0] == "c-v1#0"} == {("c-v1#0", "--enable-two-batch-overlap")}
    # v2 (short commit): the removed flag and the renamed one, with the new name closest.
    assert {k for k in found if k[0] == "c-v2#0"} == {
        ("c-v2#0", "--enable-torch-compile"),
        ("c-v2#0", "--max-running-requests"),
        ("c-v2#0", "--enable-ep-moe"),
        ("c-v2#0", "--mem-fraction"),
    }
    # Declared, but only as deprecated: a retired flag stops the server; an alias names its
    # replacement.
    retired = found[("c-v2#0", "--enable-ep-moe")]
    assert retired.status == DEPRECATED and retired.reason.startswith("retired (DeprecatedAction)")
    alias = found[("c-v2#0", "--mem-fraction")]
    assert alias.status == DEPRECATED and alias.nearest == ["--mem-fraction-static"]
    assert alias.reason == (
        "deprecated (DeprecatedAliasStoreAction): accepted with a warning; "
        "use --mem-fraction-static"
    )
    renamed = found[("c-v2#0", "--max-running-requests")]
    assert renamed.status == UNDECLARED and renamed.nearest[0] == "--max-running-reqs"
    # The renamed flag is only in point 1's patch of the sglang router, in both KV tiers.
    in_point_1 = [Selection(1, 1, "sglang", "none"), Selection(1, 1, "sglang", "hicache")]
    assert renamed.cases == in_point_1
    removed = found[("c-v2#0", "--enable-torch-compile")]
    assert len(removed.cases) == 8  # 2 points x 2 routers x 2 tiers
    assert removed.cmds == ["python3 -m dynamo.sglang", "python3 -m sglang.launch_server"]
    # Unresolvable versions: a tag that is not in the checkout, and no pin at all.
    assert found[("c-pruned#0", None)].status == UNRESOLVED
    assert "v0.4.9" in found[("c-pruned#0", None)].reason
    assert "no imageCommit" in found[("c-none#0", None)].reason
    assert result.counts() == {
        UNDECLARED: 3,
        POSSIBLY: 0,
        DEPRECATED: 2,
        ABBREVIATION: 0,
        UNRESOLVED: 2,
    }
    # Dynamo's own flags (--request-plane, --dyn-*) are never SGLang findings in dynamo.sglang.
    assert not any(f.flag in ("--request-plane", "--dyn-tool-call-parser") for f in result.findings)
    # Router flags were read from both locations and all declared.
    v1, v2 = (result.versions[commits[k]] for k in ("v1", "v2"))
    assert v1.router_path.startswith("sgl-router/py_src/")
    assert v2.router_path.startswith("sgl-model-gateway/")
    assert not any(f.component == "router" for f in result.findings)


def test_each_file_version_is_parsed_once(repo: tuple[Path, dict[str, str]]) -> None:
    root, commits = repo
    source = SGLangSource(root)
    text = fixture_module(commits)
    lint_texts([("a.jsx", text), ("b.jsx", text)], source)
    # Two server_args.py blobs; the router file is the same blob at both paths.
    assert source.parses == 3
    lint_texts([("c.jsx", text)], source)
    assert source.parses == 3


def test_dynamo_flags_are_checked_outside_dynamo(repo: tuple[Path, dict[str, str]]) -> None:
    root, commits = repo
    data = json.loads(fixture_module(commits).split("= ", 1)[1].rstrip(";\n"))
    cell = data["cells"][1]
    worker = cell["routers"]["sglang"]["blocks"][0]
    worker["args"].append(["--request-plane", "nats"])
    router = cell["routers"]["sglang"]["blocks"][1]
    router["args"].append(["--router-policy", "cache_aware"])
    result = lint_texts([("m.jsx", module_text([cell]))], SGLangSource(root))
    found = by_flag(result)
    assert found[("c-v2#0", "--request-plane")].cmds == ["python3 -m sglang.launch_server"]
    # The router declares --{prefix}policy with the prefix empty unless asked for.
    assert found[("c-v2#0", "--router-policy")].component == "router"
    assert found[("c-v2#0", "--router-policy")].nearest[0] == "--policy"


def test_possibly_undeclared_when_the_file_declares_dynamically(tmp_path: Path) -> None:
    root = tmp_path / "sglang"
    commits = make_sglang_repo(root)
    dynamic = SERVER_ARGS_V2 + (
        "\n\ndef more(parser):\n"
        "    for name in plugin_flags():\n"
        "        parser.add_argument(name)\n"
    )
    v3 = commit_files(root, {"python/sglang/srt/server_args.py": dynamic}, "v3")
    text = fixture_module({**commits, "v2": v3})
    result = lint_texts([("m.jsx", text)], SGLangSource(root))
    found = by_flag(result)
    assert found[("c-v2#0", "--enable-torch-compile")].status == POSSIBLY
    line = dynamic.splitlines().index("        parser.add_argument(name)") + 1
    assert result.versions[v3].worker.dynamic == [
        f"line {line}: an option string the file does not pin down"
    ]
    md = lint_report(result).markdown()
    assert "possibly undeclared" in md and "not resolved statically (worker)" in md


def test_unknown_and_malformed_commits(repo: tuple[Path, dict[str, str]]) -> None:
    root, commits = repo
    data = json.loads(fixture_module(commits).split("= ", 1)[1].rstrip(";\n"))
    unknown, bad = data["cells"][1], json.loads(json.dumps(data["cells"][1]))
    unknown["id"], unknown["imageCommit"] = "unknown#0", "deadbeef"
    bad["id"], bad["imageCommit"] = "bad#0", "HEAD~1"
    result = lint_texts([("m.jsx", module_text([unknown, bad]))], SGLangSource(root))
    found = by_flag(result)
    assert "deadbeef is not in the SGLang checkout" in found[("unknown#0", None)].reason
    assert found[("bad#0", None)].reason == "imageCommit is neither a commit id nor a tag"


@pytest.mark.parametrize(
    ("image", "commit", "rev"),
    [
        ("lmsysorg/sglang:v0.5.16-cu130", None, "refs/tags/v0.5.16"),
        ("lmsysorg/sglang:v0.5.19-cu130@sha256:" + "a" * 64, None, "refs/tags/v0.5.19"),
        ("registry:5000/sglang:0.5.3.post1", None, "refs/tags/v0.5.3.post1"),
        ("lmsysorg/sglang:nightly-dev-cu13-20260913-fa663e72", "fa663e72", "fa663e72"),
        ("lmsysorg/sglang:dev-cu13-nightly-0924", None, None),
        ("lmsysorg/sglang:latest", None, None),
        ("lmsysorg/sglang:latest", "v0.5.17", "refs/tags/v0.5.17"),
        ("lmsysorg/sglang:latest", "FA663E72", "fa663e72"),
    ],
)
def test_image_pins(image: str, commit: str | None, rev: str | None) -> None:
    assert image_pin(image, commit).rev == rev


def test_cli_text_markdown_json_and_exit_codes(
    repo: tuple[Path, dict[str, str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # the finding table keeps each flag on one line
    root, commits = repo
    module = tmp_path / "m.jsx"
    module.write_text(fixture_module(commits), encoding="utf-8")
    code, out, _ = run(["lint", str(module), "--sglang", str(root)], capsys)
    assert code == 1
    assert "✗ 7 findings (16 cases checked" in out and "--max-running-reqs" in out
    code, out, _ = run(["lint", str(module), "--sglang", str(root), "--format", "json"], capsys)
    report = json.loads(out)
    assert code == 1 and report["schema"] == 1 and report["exit_code"] == 1
    assert report["counts"] == {
        "undeclared": 3,
        "possibly-undeclared": 0,
        "deprecated": 2,
        "abbreviation": 0,
        "unresolved": 2,
    }
    assert {v["commit"] for v in report["versions"]} == set(commits.values())
    code, out, _ = run(["lint", str(module), "--sglang", str(root), "--format", "markdown"], capsys)
    assert code == 1 and "| `c-v2#0` |" in out and "<details>" in out
    # A clean module: only the v1 cell without the flag v1 lacks.
    data = json.loads(fixture_module(commits).split("= ", 1)[1].rstrip(";\n"))
    cell = data["cells"][0]
    for router in cell["routers"].values():
        worker = router["blocks"][0]
        worker["args"] = [a for a in worker["args"] if a[0] != "--enable-two-batch-overlap"]
    module.write_text(module_text([cell]), encoding="utf-8")
    code, out, _ = run(["lint", str(module), "--sglang", str(root)], capsys)
    lines = out.splitlines()
    assert code == 0 and lines[2] == f"read cookbook module: {module}"
    assert lines[3].startswith(f"read SGLang checkout: {root} at commit ")
    assert lines[4].startswith("✓ every worker and router flag")


def test_default_checkout_is_the_modules_repository(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    root = tmp_path / "sglang"
    commits = make_sglang_repo(root)
    rel = "docs/src/snippets/agentx/org/model.jsx"
    commit_files(root, {rel: fixture_module(commits)}, "module")
    code, out, _ = run(["lint", str(root / rel)], capsys)
    assert code == 1 and "--max-running-reqs" in out
    code, out, _ = run(["lint", "--all", "--cookbook", str(root / "docs/src/snippets")], capsys)
    assert code == 1
    # --all names the folder it read, and the checkout the modules' repository is (its commit)
    assert f"read cookbook modules: {root / 'docs/src/snippets'}\n" in out
    assert f"read SGLang checkout: {root} at commit {git(root, 'rev-parse', 'HEAD')}\n" in out
    # Outside an SGLang checkout without --sglang: bad input, not findings.
    elsewhere = tmp_path / "plain"
    elsewhere.mkdir()
    (elsewhere / "m.jsx").write_text(fixture_module(commits), encoding="utf-8")
    code, _, err = run(["lint", str(elsewhere / "m.jsx")], capsys)
    assert code == 2 and "give --sglang" in err
    git(elsewhere, "init", "-q")
    code, _, err = run(["lint", str(elsewhere / "m.jsx")], capsys)
    assert code == 2 and "not an SGLang checkout" in err


def test_bad_input_exits_2_with_the_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "sglang"
    commits = make_sglang_repo(root)
    broken = commit_files(root, {"python/sglang/srt/server_args.py": "def add(parser:\n"}, "broken")
    module = tmp_path / "m.jsx"
    module.write_text(fixture_module({**commits, "v2": broken}), encoding="utf-8")
    code, _, err = run(["lint", str(module), "--sglang", str(root)], capsys)
    assert code == 2
    assert f"{broken[:12]}:python/sglang/srt/server_args.py:1:" in err
    code, _, err = run(["lint", str(module), "--sglang", str(tmp_path / "nope")], capsys)
    assert code == 2 and "no such directory" in err
    code, _, err = run(["lint", "--sglang", str(root)], capsys)
    assert code == 2 and "give a MODULE or --all" in err
    module.write_text("export const agentx = {cells: 3};\n", encoding="utf-8")
    with pytest.raises(SyncError):
        lint_texts([(str(module), module.read_text())], SGLangSource(root))


def test_markdown_fits_its_budget(repo: tuple[Path, dict[str, str]]) -> None:
    root, commits = repo
    data = json.loads(fixture_module(commits).split("= ", 1)[1].rstrip(";\n"))
    cell = data["cells"][1]
    for router in cell["routers"].values():
        router["blocks"][0]["args"] += [[f"--bogus-flag-{i}", "1"] for i in range(200)]
    result = lint_texts([("m.jsx", module_text([cell]))], SGLangSource(root))
    assert len(result.findings) == 204
    md = lint_report(result).markdown(budget=8000)
    assert len(md) <= 8000 and "more findings left out" in md


def cell_with(commits: dict[str, str], index: int, extra: list[list[str]]) -> dict[str, Any]:
    data = json.loads(fixture_module(commits).split("= ", 1)[1].rstrip(";\n"))
    cell = data["cells"][index]
    cell["routers"]["sglang"]["blocks"][0]["args"] += extra
    return cell


def test_abbreviations_argparse_would_take(tmp_path: Path) -> None:
    root = tmp_path / "sglang"
    commits = make_sglang_repo(root)
    extra = [["--enable-two-batch"], ["--enable"]]
    result = lint_texts(
        [("m.jsx", module_text([cell_with(commits, 1, extra)]))], SGLangSource(root)
    )
    found = by_flag(result)
    short = found[("c-v2#0", "--enable-two-batch")]
    assert short.status == ABBREVIATION and short.nearest == ["--enable-two-batch-overlap"]
    # A prefix of several flags is ambiguous to argparse: the command does not start.
    assert found[("c-v2#0", "--enable")].status == UNDECLARED
    # A parser built with allow_abbrev=False takes no prefixes at all.
    strict = SERVER_ARGS_V2.replace(
        "def add_cli_args(parser: argparse.ArgumentParser):",
        "def add_cli_args(parser: argparse.ArgumentParser):\n"
        "        argparse.ArgumentParser(allow_abbrev=False)",
    )
    v3 = commit_files(root, {"python/sglang/srt/server_args.py": strict}, "strict")
    cell = cell_with({**commits, "v2": v3}, 1, extra)
    result = lint_texts([("m.jsx", module_text([cell]))], SGLangSource(root))
    assert by_flag(result)[("c-v2#0", "--enable-two-batch")].status == UNDECLARED


def test_image_commit_may_be_a_release_tag(tmp_path: Path) -> None:
    root = tmp_path / "sglang"
    commits = make_sglang_repo(root)
    git(root, "tag", "0.5.2", commits["v2"])  # a checkout whose tag lacks the `v`
    first = cell_with(commits, 1, [])
    first["id"], first["imageCommit"] = "tag#0", "v0.5.1"
    second = cell_with(commits, 1, [])
    second["id"], second["imageCommit"] = "bare#0", "v0.5.2"
    result = lint_texts([("m.jsx", module_text([first, second]))], SGLangSource(root))
    resolved = {c.cell_id: c.commit for c in result.modules[0].cells}
    assert resolved == {"tag#0": commits["v1"], "bare#0": commits["v2"]}


def test_fields_from_other_modules_of_the_same_commit(tmp_path: Path) -> None:
    """server_args.py unchanged between two commits while the module its dataclass inherits
    from changes: the flags follow the module, and server_args.py is reused when nothing it
    read changed."""
    root = tmp_path / "sglang"
    make_sglang_repo(root)
    server_args = (
        "from sglang.srt.arg_groups.fields import Parallel\n"
        "from sglang.srt.arg_groups.arg_utils import A, add_cli_args_from_dataclass\n"
        "class ServerArgs(Parallel):\n"
        "    port: A[int, 'port'] = 1\n"
        "def add_cli_args(parser):\n"
        "    add_cli_args_from_dataclass(parser, ServerArgs)\n"
    )
    fields = "python/sglang/srt/arg_groups/fields/__init__.py"
    first = commit_files(
        root,
        {
            "python/sglang/srt/server_args.py": server_args,
            fields: "class Parallel:\n    dp_size: A[int, 'dp'] = 1\n",
        },
        "fields v1",
    )
    second = commit_files(root, {fields: "class Parallel:\n    dp: A[int, 'dp'] = 1\n"}, "rename")
    third = commit_files(root, {"README.md": "unrelated\n"}, "docs")
    source = SGLangSource(root)
    flags = {c: source.version(c).worker for c in (first, second, third)}
    assert "--dp-size" in flags[first].flags and "--dp" not in flags[first].flags
    assert "--dp" in flags[second].flags and "--dp-size" not in flags[second].flags
    assert flags[first].extra_sources == ["sglang.srt.arg_groups.fields"]
    assert flags[third] is flags[second]  # nothing it read changed: parsed once
    # server_args.py and fields/__init__.py twice each, the unchanged router file once.
    assert source.parses == 5


def test_a_namespace_merge_is_proven_by_the_helper_at_the_same_commit(tmp_path: Path) -> None:
    """The fields package holds both the namespace classes and the helper that merges them:
    while the helper loops over each class's fields, the version is complete and a flag
    missing from it is undeclared; a commit that changes only the helper makes it possibly
    undeclared (the cached flags of the unchanged server_args.py are not reused)."""
    root = tmp_path / "sglang"
    make_sglang_repo(root)
    server_args = (
        "import msgspec\n"
        "from sglang.srt.arg_groups.fields import Parallel, gather\n"
        "class ServerArgs:\n"
        "    port: A[int, 'port'] = 1\n"
        "    def add_cli_args(parser):\n"
        "        add_cli_args_from_dataclass(parser, ServerArgs)\n"
        "SPACES = [Parallel]\n"
        "_ann, _defaults = gather(SPACES)\n"
        "ServerArgs.__annotations__ = {**_ann, **ServerArgs.__annotations__}\n"
        "ServerArgs = msgspec.defstruct('ServerArgs', list(ServerArgs.__annotations__.items()))\n"
    )
    helper = (
        "def gather(sources):\n"
        "    out = {}\n"
        "    for source in sources:\n"
        "        for f in fields(source):\n"
        "            out[f.name] = f.type\n"
        "    return out, {}\n"
        "class Parallel:\n"
        "    dp_size: A[int, 'dp'] = 1\n"
    )
    fields = "python/sglang/srt/arg_groups/fields/__init__.py"
    first = commit_files(
        root, {"python/sglang/srt/server_args.py": server_args, fields: helper}, "merge"
    )
    opaque = helper.replace("for f in fields(source):", "for f in registry(source):")
    second = commit_files(root, {fields: opaque}, "helper changed")
    source = SGLangSource(root)
    proven, unproven = source.version(first).worker, source.version(second).worker
    assert proven.flags == unproven.flags == {"--port", "--dp-size"}
    assert proven.complete and proven.extra_sources == ["sglang.srt.arg_groups.fields"]
    assert [n.split(": ", 1)[1] for n in unproven.dynamic] == [
        "ServerArgs's fields are rebuilt at run time; fields of Parallel read"
    ]
    for commit, status in ((first, UNDECLARED), (second, POSSIBLY)):
        text = fixture_module({"v2": commit})
        found = by_flag(lint_texts([("m.jsx", text)], source))
        assert found[("c-v2#0", "--mem-fraction-static")].status == status


def test_a_source_file_over_the_read_cap_is_refused_by_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The size is read before the content (one ``cat-file --batch`` per file)."""
    from syncer.lint import source

    root = tmp_path / "sglang"
    commits = make_sglang_repo(root)
    commit = next(iter(commits.values()))
    size = int(git(root, "cat-file", "-s", f"{commit}:python/sglang/srt/server_args.py"))
    monkeypatch.setattr(source, "MAX_SOURCE_BYTES", size - 1)
    with pytest.raises(SyncError, match=rf"{size} bytes, over the {size - 1} read"):
        SGLangSource(root).version(commit)
    monkeypatch.setattr(source, "MAX_SOURCE_BYTES", size)
    assert "--tp-size" in SGLangSource(root).version(commit).worker.flags


def test_markdown_notes_escape_only_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A version without router arguments is a note in our own words: the markdown shows
    ``sglang_router`` as written, through the real command."""
    root = tmp_path / "sglang"
    commits = make_sglang_repo(root)
    gateway = "sgl-model-gateway/bindings/python/src/sglang_router/router_args.py"
    v3 = commit_files(root, {gateway: None}, "v3: no router arguments")
    data = json.loads(fixture_module(commits).split("= ", 1)[1].rstrip(";\n"))
    cell = data["cells"][1]
    cell["imageCommit"], cell["image"] = v3[:8], f"lmsysorg/sglang:nightly-dev-{v3[:8]}"
    module = tmp_path / "m.jsx"
    module.write_text(module_text([cell]), encoding="utf-8")
    code, out, err = run(
        ["lint", str(module), "--sglang", str(root), "--format", "markdown"], capsys
    )
    assert code in (0, 1), err
    assert (
        f"- c-v2#\u200b0: router flags not checked (no sglang_router argument file at {v3[:8]})"
        in out
    )


def test_a_named_repository_that_is_not_sglang_is_refused_as_the_default_one_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 37.7: --sglang naming another repository gave exit 1, "5 version unresolved".
    commits = make_sglang_repo(tmp_path / "sglang")
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    commit_files(other, {"README.md": "not SGLang\n"}, "init")
    module = tmp_path / "m.jsx"
    module.write_text(fixture_module(commits), encoding="utf-8")
    code, out, err = run(["lint", str(module), "--sglang", str(other)], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"error: {other}: this git repository has no python/sglang/srt/server_args.py at HEAD "
        "(not an SGLang checkout); give --sglang GIT_DIR of an SGLang checkout\n"
    )
