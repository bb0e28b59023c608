"""`sync adopt --cookbook CHECKOUT --out FILE` (issue 35): the sync.yaml that reproduces a
cookbook's AgentX modules and pages, whichever generator wrote them, then `sync generate
--check` with it changes nothing. Cookbook checkouts are real git repositories laid out like
SGLang's docs/: the bundled example's own module and page (always), the reference modules and
the DeepSeek-V4.1 page from ../shared/reference when present."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import QUIET_GIT, REFERENCE, ROOT

from syncer.cli import main as cli_main
from syncer.syncconfig import load_sync_config

SNIPPETS = "docs/src/snippets/agentx"
EXAMPLE_PAGE = "docs/cookbook/autoregressive/DeepSeek/DeepSeek-V4_1.mdx"
V41 = "deepseek-ai/deepseek-v4_1"
# The newest published version of each of the five models' modules in ../shared/reference, and
# the page each is shown on in SGLang's repository.
REAL = {
    V41: ("agentx/deepseek-ai/deepseek-v4_1/2b484a51.jsx", EXAMPLE_PAGE),
    "Qwen/qwen3.5": (
        "agentx/Qwen/qwen3.5/652614ed.jsx",
        "docs/cookbook/autoregressive/Qwen/Qwen3.5.mdx",
    ),
    "deepseek-ai/deepseek-v4": (
        "agentx-more/deepseek-ai/deepseek-v4/2b484a51.jsx",
        "docs/cookbook/autoregressive/DeepSeek/DeepSeek-V4.mdx",
    ),
    "zai-org/glm-5.2": (
        "agentx-more/zai-org/glm-5.2/4661ab2b.jsx",
        "docs/cookbook/autoregressive/GLM/GLM-5.2.mdx",
    ),
    "Qwen/qwen3.8-flash-next": (
        "agentx-more/Qwen/qwen3.8-flash-next/654fcf72.jsx",
        "docs/cookbook/autoregressive/Qwen/Qwen3.8-Flash-Next.mdx",
    ),
}


def git(*args: str, cwd: Path) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1", **QUIET_GIT}
    for who in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{who}_NAME"], env[f"GIT_{who}_EMAIL"] = "Maintainer", "m@example.com"
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def page_of(title: str, module: str, heading: str = "Agentic Long-Context Deployment") -> str:
    """A model page of our own that mounts ``module`` under ``heading``."""
    return (
        f"---\ntitle: {title}\n---\n\n## 1. Model Introduction\n\nText.\n\n### {heading}\n\n"
        'import { AgentX } from "/src/snippets/_agentx.jsx";\n'
        f'import {{ agentx }} from "/src/snippets/agentx/{module}.jsx";\n\n'
        "<AgentX data={agentx} />\n"
    )


def cookbook(tmp: Path, files: dict[str, str | Path]) -> tuple[Path, str]:
    """A cookbook checkout (a git repository of its own) holding ``files`` (text or a file to
    copy); returns it and its commit."""
    root = tmp / "sglang"
    for rel, what in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(what, Path):
            shutil.copy(what, target)
        else:
            target.write_text(what, encoding="utf-8")
    git("init", "--quiet", "--initial-branch=main", cwd=root)
    git("add", "-A", cwd=root)
    git("commit", "--quiet", "-m", "cookbook", cwd=root)
    return root, git("rev-parse", "HEAD", cwd=root)


def example_cookbook(tmp: Path, **extra: str | Path) -> tuple[Path, str]:
    return cookbook(
        tmp,
        {
            f"{SNIPPETS}/{V41}.jsx": ROOT / "cookbook_snippets" / f"{V41}.jsx",
            EXAMPLE_PAGE: ROOT / "examples/cookbook" / EXAMPLE_PAGE,
            **extra,
        },
    )


def run(*argv: str) -> int:
    with pytest.raises(SystemExit) as done:
        cli_main(list(argv))
    return int(done.value.code or 0)


def adopt(checkout: Path, out: Path) -> int:
    return run("adopt", "--cookbook", str(checkout), "--out", str(out))


def generate_check(config: Path, checkout: Path, inferencex: Path, model: str) -> int:
    return run(
        "generate", model, "--update", "--check", "--config", str(config),
        "--inferencex", str(inferencex), "--out", str(checkout / SNIPPETS),
        "--pages", str(checkout), "--date", "2026-12-01",
    )  # fmt: skip


def test_adopting_the_example_cookbook_reproduces_it(tmp_path: Path, capsys) -> None:
    checkout, commit = example_cookbook(tmp_path)
    out = tmp_path / "adopted.sync.yaml"
    assert adopt(checkout, out) == 0
    said = capsys.readouterr().out
    assert f"read cookbook checkout: {checkout} at commit {commit}" in said
    assert (
        f'{V41}: {EXAMPLE_PAGE}, section "Agentic Long-Context Deployment", 2 configs, 5 cells'
    ) in said
    config = load_sync_config(out)
    assert f"commit {commit}" in out.read_text(encoding="utf-8")
    [model] = config.models
    assert (model.path, model.model, model.page) == (V41, "DeepSeek-V4.1", EXAMPLE_PAGE)
    assert model.hardware == [{"id": "gb300", "label": "GB300"}]
    assert model.prefixes == ["dsv41flash"]
    assert model.hicache_donor == "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"
    # The pins and overrides the published cells show, as the bundled sync.yaml states them.
    bundled = load_sync_config(ROOT / "sync.yaml").model(V41)
    assert [c.key for c in model.configs] == [c.key for c in bundled.configs]
    for mine, theirs in zip(model.configs, bundled.configs, strict=True):
        assert mine.pin == theirs.pin and mine.source == theirs.source
        assert mine.mooncake_unavailable == theirs.mooncake_unavailable
    assert config.main == load_sync_config(ROOT / "sync.yaml").main
    # ... and `sync generate --check` with it: nothing would change, module or page.
    capsys.readouterr()
    assert generate_check(out, checkout, ROOT / "examples/inferencex", V41) == 0
    said = capsys.readouterr().out
    assert "deepseek-v4_1.jsx: unchanged (5 cells" in said
    assert "AgentX section unchanged" in said


def real_cookbook(reference: Path, tmp: Path) -> tuple[Path, str]:
    files: dict[str, str | Path] = {}
    for module, (source, page) in REAL.items():
        files[f"{SNIPPETS}/{module}.jsx"] = reference / "cookbook" / source
        files[page] = page_of(Path(page).stem, module)
    # The real DeepSeek-V4.1 page, its section under the heading it had at 37da6c0b.
    files[EXAMPLE_PAGE] = reference / "cookbook/pages/DeepSeek-V4_1/37da6c0b.mdx"
    return cookbook(tmp, files)


def test_adopting_the_real_cookbook(reference: Path, tmp_path: Path, capsys) -> None:
    checkout, _ = real_cookbook(reference, tmp_path)
    out = tmp_path / "adopted.sync.yaml"
    assert adopt(checkout, out) == 0
    config = load_sync_config(out)
    assert sorted(m.path for m in config.models) == sorted(REAL)
    v41 = config.model(V41)
    assert v41.section == "3.6 Agentic Long-Context on NVIDIA Platforms"
    assert [h["id"] for h in v41.hardware] == ["gb300", "gb200", "b300", "b200", "h200", "h100"]
    assert v41.prefixes == ["dsv41flash"]
    assert v41.mooncake_donor == "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg"
    assert len(v41.configs) == 9
    gb200 = v41.config("dsv41flash-fp4-gb200-sglang-agentic-dspark")
    assert gb200.image_status == "digest-only"
    assert config.model("Qwen/qwen3.5").config(
        "qwen3.5-fp4-gb200-dynamo-sglang-agentic-mtp"
    ).setup == [
        {
            "kind": "setup",
            "command": "pip install torchao",
            "reason": gb200_reason(reference),
        }
    ]
    assert config.main == "ceb50ba212080174e0563d2be1db9b0d654ab2ef"
    said = capsys.readouterr().out
    # What sync.yaml cannot state is said, never dropped silently.
    assert "note: zai-org/glm-5.2: generated at InferenceX main 8ba71d026e86" in said
    assert (
        "note: deepseek-ai/deepseek-v4: the cells of dsv4-fp4-b300-sglang-agentic-hicache-eagle "
        "borrow HiCache settings from 2 donors"
    ) in said
    # A config borrowing from another donor than the model's names its own.
    qwen = config.model("Qwen/qwen3.5")
    assert qwen.hicache_donor == "qwen3.5-fp4-gb300-dynamo-sglang-agentic-disagg"
    h200 = qwen.config("qwen3.5-fp8-h200-sglang-agentic-mtp")
    assert h200.hicache_donor == "qwen3.5-fp8-h200-sglang-agentic-hicache-mtp"


def gb200_reason(reference: Path) -> str:
    from syncer.cookbook.jsmodule import load_module

    data = load_module(reference / "cookbook" / REAL["Qwen/qwen3.5"][0]).value
    [cell] = [c for c in data["cells"] if c["id"].startswith("qwen3.5-fp4-gb200-")][:1]
    return cell["setup"][0]["reason"]


@pytest.fixture(scope="module")
def adopted_real(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The real cookbook's checkout and the configuration adopted from it, made once for the
    models' checks below (none of which writes: ``--check``)."""
    if not REFERENCE.is_dir():
        pytest.skip(f"reference data not present at {REFERENCE}")
    tmp = tmp_path_factory.mktemp("adopted")
    checkout, _ = real_cookbook(REFERENCE, tmp)
    out = tmp / "adopted.sync.yaml"
    assert adopt(checkout, out) == 0
    return checkout, out


@pytest.mark.parametrize("model", sorted(REAL))
def test_generate_check_with_the_adopted_configuration_changes_nothing(
    reference: Path, adopted_real: tuple[Path, Path], model: str, capsys
) -> None:
    """The acceptance of issue 35: with the adopted configuration, `sync generate --update
    --check` (the edit, not the rebuild) on the checkout it came from exits 0 for every model.
    Nothing is rendered: no config's inputs changed, and the KV donors lend what the module
    already borrowed (the InferenceX snapshot given lacks most of these keys and commits, so
    any render would stop the command)."""
    checkout, out = adopted_real
    capsys.readouterr()
    snapshot = reference / "inferencex-snapshots" / "843c6254"
    assert generate_check(out, checkout, snapshot, model) == 0
    said = capsys.readouterr().out
    module = checkout / SNIPPETS / f"{model}.jsx"
    assert f"{module}: unchanged (" in said
    assert (
        f"{module}: every config's pin is the one the module records, so no config was "
        "rendered and nothing is edited"
    ) in said
    assert "kept as its authors wrote it (it mounts the module)" in said


def test_an_update_of_a_model_with_no_module_yet_says_so_and_writes_nothing(
    tmp_path: Path, capsys
) -> None:
    """`--update` edits what is published: a model whose module the checkout lacks has nothing
    to edit or check (exit 0, said plainly), and nothing is rendered or written for it; its
    first module is a whole generation, `sync generate` without --update."""
    checkout, _ = example_cookbook(tmp_path)
    out = tmp_path / "adopted.sync.yaml"
    assert adopt(checkout, out) == 0
    module = checkout / SNIPPETS / f"{V41}.jsx"
    module.unlink()
    before = git("status", "--porcelain", cwd=checkout)
    capsys.readouterr()
    # An InferenceX folder that holds nothing: a render would stop the command.
    empty = tmp_path / "no-inferencex"
    empty.mkdir()
    for check in (("--check",), ()):
        assert run(
            "generate", V41, "--update", *check, "--config", str(out),
            "--inferencex", str(empty), "--out", str(checkout / SNIPPETS),
            "--pages", str(checkout), "--date", "2026-12-01",
        ) == 0  # fmt: skip
        said = capsys.readouterr().out
        assert (
            f"{module}: no module published yet, so nothing to update or check; "
            f"`sync generate {V41}` without --update writes it"
        ) in said
        assert not module.exists()
    assert git("status", "--porcelain", cwd=checkout) == before  # the page too as it was


def test_a_cell_whose_provenance_is_no_pin_is_named_in_its_module(tmp_path: Path, capsys) -> None:
    text = (ROOT / "cookbook_snippets" / f"{V41}.jsx").read_text(encoding="utf-8")
    bad = text.replace('"run": "41000000001"', '"run": "run-41"')
    checkout, _ = example_cookbook(tmp_path, **{f"{SNIPPETS}/{V41}.jsx": bad})
    out = tmp_path / "adopted.sync.yaml"
    assert adopt(checkout, out) == 2
    cell = bad.splitlines().index('   "id": "dsv41flash-fp4-gb300-sglang-agentic-dspark#0",') + 1
    assert capsys.readouterr().err == (
        f"error: {checkout / SNIPPETS / V41}.jsx:{cell}: config "
        '"dsv41flash-fp4-gb300-sglang-agentic-dspark": its points\' run "run-41" is not a '
        "pin's run\n"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("extra", "where", "message"),
    [
        (
            {f"{SNIPPETS}/Qwen/qwen3.5.jsx": ROOT / "cookbook_snippets" / f"{V41}.jsx"},
            (f"{SNIPPETS}/Qwen/qwen3.5.jsx", 4),
            "no page under docs/cookbook/ mounts this module",
        ),
        (
            {"docs/cookbook/other.mdx": page_of("Other", V41)},
            ("docs/cookbook/other.mdx", 14),
            f'"{V41}" is already mounted by {EXAMPLE_PAGE} (line ',
        ),
        (
            {"docs/cookbook/other.mdx": page_of("Other", "Qwen/qwen3.5")},
            ("docs/cookbook/other.mdx", 12),
            'the page mounts the AgentX data of "Qwen/qwen3.5", which the checkout lacks',
        ),
        (
            {"docs/cookbook/other.mdx": page_of("Other", V41) + "\n<AgentX data={agentx} />\n"},
            ("docs/cookbook/other.mdx", 16),
            "the page mounts the AgentX component 2 times (lines 14, 16)",
        ),
        (
            {"docs/cookbook/other.mdx": "# Other\n\n\xff\n".encode("latin-1").decode("latin-1")},
            None,
            None,
        ),
        (
            {
                f"{SNIPPETS}/zz/copy.jsx": ROOT / "cookbook_snippets" / f"{V41}.jsx",
                "docs/cookbook/copy.mdx": page_of("Copy", "zz/copy"),
            },
            (f"{SNIPPETS}/zz/copy.jsx", 52),
            f'config "dsv41flash-fp4-gb300-sglang-agentic-dspark" has cells in {V41} too',
        ),
        (
            {f"{SNIPPETS}/{V41}.jsx": '// h\nexport const agentx = {\n "model": "X",\n'},
            (f"{SNIPPETS}/{V41}.jsx", 4),
            "malformed JavaScript: Unexpected end of input",
        ),
        (
            {
                f"{SNIPPETS}/{V41}.jsx": (
                    '// h\nexport const agentx = {"model": "X", "generatedOn": "2026-01-01",'
                    ' "source": {}, "cells": [{"id": "a#0"}]};\n'
                )
            },
            (f"{SNIPPETS}/{V41}.jsx", 2),
            "cells[0]: expected a non-empty `points` list",
        ),
    ],
)
def test_bad_cookbooks_are_refused_naming_file_and_line_and_nothing_is_written(
    tmp_path: Path, capsys, extra: dict[str, str | Path], where, message
) -> None:
    checkout, _ = example_cookbook(tmp_path, **extra)
    if where is None:  # a page that is not UTF-8
        (checkout / "docs/cookbook/other.mdx").write_bytes(b"# Other\n\nbad \xff byte\n")
        where, message = ("docs/cookbook/other.mdx", 3), "cookbook page is not UTF-8 (byte 13)"
    out = tmp_path / "adopted.sync.yaml"
    assert adopt(checkout, out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    # file:line, and the column where the reader knows it
    assert re.match(rf"error: {re.escape(f'{checkout / where[0]}:{where[1]}')}(:\d+)?: ", err[0])
    assert message in err[0]
    assert not out.exists()
