"""The real cookbook's configuration (issue 35): configs/sglang-cookbook.sync.yaml describes the
five models the SGLang cookbook shows, the workflow reads it, and it is what `sync adopt` derives
from the newest published modules; the bundled example keeps its own sync.yaml (the README's
first command)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from syncer.syncconfig import load_sync_config
from syncer.usecases.adopt import adopt

REAL = ROOT / "configs" / "sglang-cookbook.sync.yaml"
PAGES = {
    "deepseek-ai/deepseek-v4_1": "docs/cookbook/autoregressive/DeepSeek/DeepSeek-V4_1.mdx",
    "deepseek-ai/deepseek-v4": "docs/cookbook/autoregressive/DeepSeek/DeepSeek-V4.mdx",
    "zai-org/glm-5.2": "docs/cookbook/autoregressive/GLM/GLM-5.2.mdx",
    "Qwen/qwen3.5": "docs/cookbook/autoregressive/Qwen/Qwen3.5.mdx",
    "Qwen/qwen3.8-flash-next": "docs/cookbook/autoregressive/Qwen/Qwen3.8-Flash-Next.mdx",
}
NEWEST = {
    "deepseek-ai/deepseek-v4_1": "agentx/deepseek-ai/deepseek-v4_1/2b484a51.jsx",
    "deepseek-ai/deepseek-v4": "agentx-more/deepseek-ai/deepseek-v4/2b484a51.jsx",
    "zai-org/glm-5.2": "agentx-more/zai-org/glm-5.2/4661ab2b.jsx",
    "Qwen/qwen3.5": "agentx/Qwen/qwen3.5/652614ed.jsx",
    "Qwen/qwen3.8-flash-next": "agentx-more/Qwen/qwen3.8-flash-next/654fcf72.jsx",
}


def test_the_real_configuration_lists_the_five_models_and_their_pages() -> None:
    config = load_sync_config(REAL)
    assert {m.path: m.page for m in config.models} == PAGES
    assert {m.model for m in config.models} == {
        "DeepSeek-V4.1", "DeepSeek-V4", "GLM-5.2", "Qwen3.5", "Qwen3.8-Flash-Next",
    }  # fmt: skip
    v41 = config.model("DeepSeek-V4.1")
    assert [h["id"] for h in v41.hardware] == ["gb300", "gb200", "b300", "b200", "h200", "h100"]
    assert v41.prefixes == ["dsv41flash"]
    # Keys of a new PR find their page by the match rules alone.
    model, why = config.model_for("dsv41flash-fp4-b300-sglang-agentic-new", "dsv41flash", "b300")
    assert why is None and model is not None and model.path == "deepseek-ai/deepseek-v4_1"
    # Apart from the bundled example's.
    example = load_sync_config(ROOT / "sync.yaml")
    assert [m.path for m in example.models] == ["deepseek-ai/deepseek-v4_1"]
    assert example.main != config.main


def test_the_workflow_reads_the_real_configuration() -> None:
    doc = yaml.safe_load((ROOT / ".github/workflows/cookbook-sync.yml").read_text())
    runs = [
        step["run"]
        for job in doc["jobs"].values()
        for step in job.get("steps", [])
        if "sync bot" in step.get("run", "")
    ]
    assert len(runs) == 2  # the gate's --models-only and the publish
    for run in runs:
        assert "--config tool/configs/sglang-cookbook.sync.yaml" in " ".join(run.split())


def test_the_readme_first_command_still_runs_on_the_bundled_example() -> None:
    readme = (ROOT / "README.md").read_text()
    first = readme.split("```\n", 2)[1].splitlines()[0]
    command = first.split("&& ")[-1]
    assert command == ".venv/bin/cookbook-sync verify dsv41flash-fp4-gb300-sglang-agentic-dspark"
    done = subprocess.run(
        [sys.executable, "-m", "syncer", *command.split()[1:]],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "read sync.yaml: sync.yaml (the bundled example)" in done.stdout


def test_the_real_configuration_is_what_adopt_derives(reference: Path, tmp_path: Path) -> None:
    """The shipped file is `sync adopt`'s on the newest published modules (the pages as the
    bot links them: the DeepSeek-V4.1 section under "Agentic Long-Context Deployment")."""
    checkout = tmp_path / "sglang"
    for module, source in NEWEST.items():
        target = checkout / "docs/src/snippets/agentx" / f"{module}.jsx"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(reference / "cookbook" / source, target)
        page = checkout / PAGES[module]
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(
            "## Agentic Long-Context Deployment\n\n"
            f'import {{ agentx }} from "/src/snippets/agentx/{module}.jsx";\n\n'
            "<AgentX data={agentx} />\n",
            encoding="utf-8",
        )
    adopted = adopt(checkout).config
    shipped = load_sync_config(REAL)
    assert (adopted.repo, adopted.main) == (shipped.repo, shipped.main)
    for mine, theirs in zip(adopted.models, shipped.models, strict=True):
        mine.line = theirs.line = None
        for a, b in zip(mine.configs, theirs.configs, strict=True):
            a.line = b.line = None
        assert mine == theirs


@pytest.mark.parametrize("model", sorted(PAGES))
def test_every_real_model_has_pins_for_its_configs(model: str) -> None:
    spec = load_sync_config(REAL).model(model)
    assert spec.configs and all(c.pin.sha for c in spec.configs)
