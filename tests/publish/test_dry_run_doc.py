"""The dry runs docs/bot.md shows, run exactly as written (issue 35, point 5): the command lines
are read from the document, only its `path/to/...` placeholders and `event.json` replaced by
real files, so the document stays true. A dry run names the PR's real head (the checkout's own
commit, or the refs/pull/<n>/head of the clone's remote), never this tool's commit, and the
workflow's own mode (`--inferencex-clone`) needs no other checkout and no network."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import forkserver
import pytest
from botworld import MODULE, PAGE, PR, RUN, git
from conftest import REFERENCE, ROOT
from infxrepo import DSPARK_RECIPE, InferenceXRepo

DOC = ROOT / "docs" / "bot.md"


def documented(after: str) -> list[str]:
    """The words of the first ```bash block of docs/bot.md after the line ``after``."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(after)
    block = re.search(r"```bash\n(.*?)```", text[start:], re.S)
    assert block is not None, f"no command after {after!r} in {DOC}"
    return shlex.split(block.group(1).replace("\\\n", " "))


def cookbook(tmp: Path, module: Path | None, page: Path) -> Path:
    """A cookbook checkout (its origin a bare repository) whose main holds ``module`` (when
    given) and ``page`` at their places in SGLang's docs/."""
    bare, work = tmp / "sglang.git", tmp / "sglang"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(bare), cwd=tmp)
    git("clone", "--quiet", str(bare), str(work), cwd=tmp)
    for source, rel in ((module, MODULE), (page, PAGE)):
        if source is None:
            continue
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, work / rel)
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", "cookbook", cwd=work)
    git("push", "--quiet", "origin", "HEAD:main", cwd=work)
    return work


STATES: dict[str, tuple[Path | None, Path]] = {
    # The bundled example's page, no module published yet (always at hand).
    "example": (None, ROOT / "examples/cookbook" / PAGE),
    # The real published module and page the issue names (../shared/reference).
    "reference": (
        REFERENCE / "cookbook/agentx/deepseek-ai/deepseek-v4_1/37da6c0b.jsx",
        REFERENCE / "cookbook/pages/DeepSeek-V4_1/37da6c0b.mdx",
    ),
}


def run_documented(words: list[str], swaps: dict[str, str], tmp: Path):
    assert words[0] == "sync"
    argv = [swaps.get(w, w) for w in words[1:]]
    unswapped = [w for w in argv if w.startswith("path/to/") or w == "event.json"]
    assert unswapped == [], f"docs/bot.md names {unswapped}, which this test does not provide"
    (tmp / "tmp").mkdir(exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GITHUB_TOKEN", "INFX_TOKEN", "COOKBOOK_TOKEN")
    }
    env.update({"HOME": str(tmp), "TMPDIR": str(tmp / "tmp"), "SYNC_API_PAUSE": "0"})
    # From the project's root, as a maintainer trying it there would: its sync.yaml is read.
    # ``python -m syncer`` as its own process, forked from one that has imported the tool
    # (tests/forkserver.py; the real thing where it cannot be made equal).
    return subprocess.run(
        [*forkserver.command(), *argv],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def tool_head() -> str:
    return git("rev-parse", "HEAD", cwd=ROOT).strip()


def setup(world, state: str) -> tuple[dict[str, str], InferenceXRepo, str]:
    module, page = STATES[state]
    if not page.is_file():
        pytest.skip(f"reference data not present at {REFERENCE}")
    infx = InferenceXRepo(world.tmp / "infx")
    # The PR changes the recipe of the config the /use pins (a file the config reads).
    infx.write(DSPARK_RECIPE, infx.read(DSPARK_RECIPE) + "# tuned in this PR\n")
    head = infx.commit("PR head")
    infx.publish_pr(PR, head)
    comment = world.comment(f"/use {RUN}")
    event = world.tmp / "event.json"
    event.write_text(json.dumps(world.comment_event(comment)))
    swaps = {
        "event.json": str(event),
        "path/to/sglang": str(cookbook(world.tmp, module, page)),
        "path/to/downloaded-runs": str(ROOT / "examples/runs"),
    }
    return swaps, infx, head


def names_the_real_head(out: str, head: str) -> None:
    assert f"SemiAnalysisAI/InferenceX#{PR} @ {head[:12]}, run {RUN}" in out
    mine = tool_head()
    assert mine[:9] not in out, "the dry run named this tool's own commit"


@pytest.mark.parametrize("state", sorted(STATES))
def test_the_documented_dry_run_names_the_pr_head(world, state: str) -> None:
    swaps, infx, head = setup(world, state)
    infx.checkout(head)  # the InferenceX PR checkout the document asks for
    swaps["path/to/inferencex-pr-checkout"] = str(infx.work)
    proc = run_documented(documented("A dry run needs no token and no API:"), swaps, world.tmp)
    assert proc.returncode == 0, proc.stderr
    names_the_real_head(proc.stdout, head)
    plans_no_removal(proc.stdout)


@pytest.mark.parametrize("state", sorted(STATES))
def test_the_workflow_mode_dry_run_needs_no_checkout_and_no_network(world, state: str) -> None:
    """`--inferencex-clone` of a local mirror: the head is the mirror's refs/pull/<n>/head.
    (Before: `its cells are shown at InferenceX commit ""`, or GitHub was asked.) Against the
    real published module it plans no removal: only the `/use`'s config is rendered (its KV
    donor lends what the module already borrowed), and the configs this InferenceX's main
    does not list, at commits it does not have, keep their cells, said in the PR body."""
    swaps, infx, head = setup(world, state)
    clone = world.tmp / "inferencex-clone.git"
    git("clone", "--quiet", "--bare", str(infx.remote), str(clone), cwd=world.tmp)
    swaps["path/to/inferencex-clone.git"] = str(clone)
    words = documented("The workflow's own mode runs offline too")
    assert "--inferencex" not in words  # no other checkout
    proc = run_documented(words, swaps, world.tmp)
    assert proc.returncode == 0, proc.stderr
    names_the_real_head(proc.stdout, head)
    plans_no_removal(proc.stdout)
    if state == "reference":
        assert "not rendered for provenance" not in proc.stdout
        assert (
            "dsv41flash-fp4-h200-sglang-agentic-dspark: its published cells are kept, though "
            "InferenceX main's master config does not list it: commit 8f0557a3602d, where its "
            "cells are shown, cannot be read, so whether it was removed from main cannot be told"
        ) in proc.stdout


def plans_no_removal(out: str) -> None:
    """The planned cookbook PR's body: no cell leaves, no chip, no checkpoint."""
    body = out[out.index("would: POST /repos/sgl-project/sglang/pulls") :]
    assert "left the module" not in body
    assert "Hardware removed" not in body and "#### Removed cells" not in body
    summary = re.search(r"\*\*Commands changed\*\*[^\n]*", body)
    assert summary is None or re.search(r"[1-9]\d* removed", summary.group(0)) is None
    assert re.search(r"^\| (hardware|cells) \| \d+ \| [1-9]", body, re.M) is None


def test_a_dry_run_without_a_head_says_what_to_give(world) -> None:
    """The bundled example's folder is inside this tool's checkout: its HEAD is the tool's."""
    swaps, _, _ = setup(world, "example")
    swaps["path/to/inferencex-pr-checkout"] = str(ROOT / "examples/inferencex")
    proc = run_documented(documented("A dry run needs no token and no API:"), swaps, world.tmp)
    assert proc.returncode == 2
    assert (
        f"error: PR #{PR}: the event does not name its head and without a token GitHub is not "
        f"read; {ROOT / 'examples/inferencex'} is not a git repository of its own"
    ) in proc.stderr
    assert tool_head()[:9] not in proc.stdout + proc.stderr
