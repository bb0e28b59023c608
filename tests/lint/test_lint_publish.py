"""The lint where modules are published: the bot's cookbook PR body (its cookbook clone is the
SGLang checkout) and `sync generate`. A finding is shown, never a reason not to publish."""

from __future__ import annotations

from pathlib import Path

import pytest
from botworld import MODULE, RUN, World
from conftest import ROOT
from ghserver import GitHubServer
from lintrepo import ROUTER_ARGS, commit_files, git, make_sglang_repo

from syncer.cli import main
from syncer.cookbook.decode import load_decoder
from syncer.lint.lint import component_of

MISSING = "--mem-fraction-static"


def bundled_flags() -> set[str]:
    decoder = load_decoder(ROOT / "cookbook_snippets" / "deepseek-ai" / "deepseek-v4_1.jsx")
    return {
        arg[0]
        for case in decoder.cases()
        for block in case.blocks
        if component_of(block) == "worker"
        for arg in block["args"]
    }


@pytest.fixture
def world(tmp_path: Path):
    server = GitHubServer()
    with server:
        yield World(tmp_path, server)


def seed_sglang(world: World) -> str:
    """Put an SGLang server_args.py (every flag of the example module but one) and the
    router's arguments into the cookbook repository; return that commit."""
    seed = world.tmp / "seed"
    calls = "".join(
        f"    parser.add_argument({f!r})\n" for f in sorted(bundled_flags() - {MISSING})
    )
    commit = commit_files(
        seed,
        {
            "python/sglang/srt/server_args.py": f"def add_cli_args(parser):\n{calls}",
            "sgl-model-gateway/bindings/python/src/sglang_router/router_args.py": ROUTER_ARGS,
        },
        "sglang sources",
    )
    git(seed, "push", "-q", "origin", "HEAD:main")
    return commit


def test_pr_body_shows_the_findings_and_the_pr_is_still_opened(world: World) -> None:
    commit = seed_sglang(world)
    for model in world.config.models:
        for cfg in model.configs:
            cfg.image_commit = commit[:8]
    comment = world.comment(f"/use {RUN}")
    world.send("issue_comment", world.comment_event(comment))
    [pull] = world.book_pulls()
    body = pull["body"]
    assert "SGLang flag check (`sync lint`)" in body
    assert f"| `{MISSING}` | worker | undeclared |" in body
    assert f"`{commit[:8]}`" in body
    assert len(body) <= 65536
    # The module was published all the same.
    assert MODULE in body and world.tip() is not None


def test_pr_body_without_sglang_sources_has_no_section(world: World) -> None:
    comment = world.comment(f"/use {RUN}")
    outcome, _ = world.send("issue_comment", world.comment_event(comment))
    [pull] = world.book_pulls()
    assert "SGLang flag check" not in pull["body"]
    assert any("SGLang flag check skipped" in line for line in outcome.lines)


def test_pr_body_says_when_the_check_could_not_run(world: World) -> None:
    commit = seed_sglang(world)
    seed = world.tmp / "seed"
    commit = commit_files(seed, {"python/sglang/srt/server_args.py": "def f(:\n"}, "broken")
    git(seed, "push", "-q", "origin", "HEAD:main")
    for model in world.config.models:
        for cfg in model.configs:
            cfg.image_commit = commit[:8]
    world.send("issue_comment", world.comment_event(world.comment(f"/use {RUN}")))
    [pull] = world.book_pulls()
    assert "The check could not run:" in pull["body"]
    assert "server\\_args.py" in pull["body"]


def test_generate_reports_and_never_gates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(ROOT)
    sglang = tmp_path / "sglang"
    make_sglang_repo(sglang)
    with pytest.raises(SystemExit) as done:
        main(["generate", "--all", "--check", "--sglang", str(sglang)])
    out = capsys.readouterr()
    assert done.value.code == 0  # nothing would change: findings do not make it 1
    assert "version unresolved" in out.out and "cases decoded back identical" in out.out
    with pytest.raises(SystemExit) as done:
        main(["generate", "--all", "--check"])
    assert done.value.code == 0
    assert "SGLang flag check skipped" in capsys.readouterr().err
    with pytest.raises(SystemExit) as done:
        main(["generate", "--all", "--check", "--sglang", str(tmp_path)])
    assert done.value.code == 2
    assert "not an SGLang git checkout" in capsys.readouterr().err
