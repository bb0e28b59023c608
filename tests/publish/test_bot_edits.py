"""Issue 35 through `sync bot`: a `/use` on one config's PR edits the published module, it
does not regenerate it. The cookbook's state is a real published module (from
``../shared/reference``, skipped without it) or a fixture of ours in the older format; the bot
runs as the workflow runs it, against real git repositories and the fake GitHub.

What must hold: the module's diff against the published one touches only that config's cells,
its ``source.prs`` entry, the header and ``generatedOn`` (a kept cell whose ``ref`` meant a
block of that config that changed may be written out as the block it meant); every other cell
decodes to exactly the published commands; no cell, chip or checkpoint is removed; a second
`/use` makes a diff as small."""

from __future__ import annotations

import copy
import difflib
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from botworld import (
    BOOK,
    HEAD,
    INFX,
    INFX_BOT,
    KEY,
    MODULE,
    PR,
    RUN,
    RUN_AT,
    SEED_KEY,
    SEED_PR,
    World,
    git,
    plain,
    run_artifacts,
    sync_bot,
)
from conftest import ROOT, TESTS
from infxrepo import MASTER, add_key, load_yaml

from syncer.cookbook.decode import Decoder
from syncer.cookbook.jsmodule import parse_module
from syncer.encoder.emit import dumps, emit_module
from syncer.publish import status as st

LEGACY_FIXTURE = TESTS / "fixtures/edit/legacy-deepseek-v4_1.jsx"
BUNDLED_MODULE = ROOT / "cookbook_snippets/deepseek-ai/deepseek-v4_1.jsx"
MODEL_PATH = "deepseek-ai/deepseek-v4_1"
QWEN_MODULE = "docs/src/snippets/agentx/Qwen/qwen3.5.jsx"


def _config_text(tmp: Path, *, qwen: bool = False) -> Path:
    """The bundled sync.yaml with only the config of the PR the `/use` is on (its other PR's
    config would be another input change); for the qwen3.5 module, that config shown on the
    qwen3.5 page (a config new to that module)."""
    text = (ROOT / "sync.yaml").read_text(encoding="utf-8")
    start = text.index("      # No authorised run yet")
    text = text[:start]
    if qwen:
        text = text.replace("path: deepseek-ai/deepseek-v4_1", "path: Qwen/qwen3.5")
        text = text.replace("model: DeepSeek-V4.1", "model: Qwen3.5")
        text = text.replace("hicache: dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg", "")
    path = tmp / "sync.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _publish(world: World, path: str, text: str) -> None:
    """``text`` published at ``path`` on the cookbook's main, as a maintainer merged it."""
    clone = world.tmp / "maintainer"
    git("clone", "--quiet", str(world.bare), str(clone), cwd=world.tmp)
    (clone / path).parent.mkdir(parents=True, exist_ok=True)
    (clone / path).write_text(text, encoding="utf-8")
    git("add", ".", cwd=clone)
    git("commit", "--quiet", "-m", "published module", cwd=clone)
    git("push", "--quiet", "origin", "HEAD:main", cwd=clone)


def _use(world: World, config: Path, at: str, run: int = RUN) -> str:
    comment = world.comment(f"/use {run}", at=at)
    proc = sync_bot(world, world.comment_event(comment), "--config", str(config))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _config_of(cell: dict[str, Any]) -> str:
    return str(cell.get("configKey") or cell["id"].partition("#")[0])


def _refs_into(cell: dict[str, Any], cells: list[dict[str, Any]], key: str) -> bool:
    return any(
        _config_of(cells[e["ref"][0]]) == key
        for r in cell["routers"].values()
        for e in r["blocks"]
        if isinstance(e.get("ref"), list)
    )


def _rest(value: dict[str, Any], skip: set[str], old: dict[str, Any]) -> str:
    """The module's text without the cells ``skip``, the date, ``source.prs``, and the envs
    and checkpoints past ``old``'s (a config new to the module adds its own): what the edit
    leaves byte for byte."""
    rest = copy.deepcopy(value)
    envs = len(old["envs"])
    rest["checkpoints"] = rest["checkpoints"][: len(old["checkpoints"])]
    rest["cells"] = [c for c in rest["cells"] if c["id"] not in skip]
    rest["generatedOn"] = ""
    rest["source"].pop("prs", None)
    rest["envs"] = rest["envs"][:envs]
    return emit_module([], "agentx", rest)


def _cases(value: dict[str, Any], ids: set[str]) -> dict[tuple[str, int, str, str], Any]:
    decoder = Decoder(value, "m")
    return {
        (c.cell_id, c.point, c.router, c.kv): (c.blocks, c.status)
        for c in decoder.cases()
        if c.cell_id in ids
    }


def _changed_lines(old: str, new: str) -> int:
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
    return sum(1 for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))


def assert_only_the_config_changed(old_text: str, new_text: str, key: str) -> None:
    old, new = parse_module(old_text).value, parse_module(new_text).value
    old_cells, new_cells = old["cells"], new["cells"]
    # Nothing removed: every cell, chip and checkpoint published is still there.
    assert {c["id"] for c in old_cells} <= {c["id"] for c in new_cells}
    assert {h["id"] for h in old["hardware"]} <= {h["id"] for h in new["hardware"]}
    assert old["checkpoints"] == new["checkpoints"][: len(old["checkpoints"])]
    assert new["envs"][: len(old["envs"])] == old["envs"]
    # Every other config's cell: encoded as published, unless its ref meant a changed block.
    others = {c["id"] for c in old_cells if _config_of(c) != key}
    by_id = {c["id"]: c for c in new_cells}
    moved = {
        i
        for i in others
        if by_id[i] != next(c for c in old_cells if c["id"] == i)
        and _refs_into(next(c for c in old_cells if c["id"] == i), old_cells, key)
    }
    skip_new = {c["id"] for c in new_cells if _config_of(c) == key} | moved
    skip_old = {c["id"] for c in old_cells if _config_of(c) == key} | moved
    assert _rest(new, skip_new, old) == _rest(old, skip_old, old)
    # ... and every one of them decodes to exactly the published commands and status.
    assert _cases(new, others) == _cases(old, others)
    # The header's first lines as published; its PR list names the PR of the `/use`, and that
    # is all that changes in it.
    assert new_text.splitlines()[:2] == old_text.splitlines()[:2]
    assert "#3859" in new_text.splitlines()[2]
    old_line, new_line = old_text.splitlines()[2], new_text.splitlines()[2]
    listed = re.compile(r"open PRs ([#\d, ]+)\)")
    old_prs, new_prs = (
        set(re.findall(r"#(\d+)", listed.search(x).group(1))) for x in (old_line, new_line)
    )
    assert new_prs == old_prs | {"3859"}
    assert listed.sub("", new_line) == listed.sub("", old_line)
    assert new_text.index("export const") == len("\n".join(new_text.splitlines()[:3])) + 1
    # source.prs: the `/use`'s PR entry added or changed; every other entry as published.
    before, after = old["source"].get("prs") or {}, new["source"].get("prs") or {}
    assert "3859" in after
    assert {k: v for k, v in after.items() if k != "3859"} == {
        k: v for k, v in before.items() if k != "3859"
    }
    assert {k: v for k, v in new["source"].items() if k != "prs"} == {
        k: v for k, v in old["source"].items() if k != "prs"
    }


CASES = {
    "2b484a51": ("deepseek-ai/deepseek-v4_1/2b484a51.jsx", MODULE, False),
    "37da6c0b": ("deepseek-ai/deepseek-v4_1/37da6c0b.jsx", MODULE, False),
    "qwen3.5-652614ed": ("Qwen/qwen3.5/652614ed.jsx", QWEN_MODULE, True),
}


def _published_text(request, name: str) -> tuple[str, str, bool]:
    if name == "legacy-fixture":
        return LEGACY_FIXTURE.read_text(encoding="utf-8"), MODULE, False
    rel, path, qwen = CASES[name]
    reference = request.getfixturevalue("reference")
    return (reference / "cookbook/agentx" / rel).read_text(encoding="utf-8"), path, qwen


@pytest.mark.parametrize("name", ["legacy-fixture", *CASES])
def test_a_use_edits_only_its_configs_cells_and_a_second_as_little(world, request, name):
    published, path, qwen = _published_text(request, name)
    config = _config_text(world.tmp, qwen=qwen)
    _publish(world, path, published)
    branch = "infx-sync/Qwen/qwen3.5" if qwen else "infx-sync/deepseek-ai/deepseek-v4_1"

    out = _use(world, config, "2026-10-13T09:00:00Z")
    first = world.show(path, branch)
    assert first != published
    assert_only_the_config_changed(published, first, KEY)
    legacy = not any("prov" in c for c in parse_module(published).value["cells"])
    for cell in parse_module(first).value["cells"]:
        assert ("prov" in cell) != legacy  # edited in its own format, not upgraded
    [pull] = world.book_pulls()
    # The reviewer diff of the PR: no chip leaves, every other cell is unchanged.
    assert re.search(r"^\| hardware \| \d+ \| [1-9]", pull["body"], re.M) is None
    assert (
        "the published module is edited, not regenerated: only the cells of "
        f"{KEY} differ from the default branch's; every other cell is as published"
    ) in plain(pull["body"])
    changed = re.search(r"in (\d+) of \d+ cells present in both", pull["body"])
    mine = [c for c in parse_module(first).value["cells"] if _config_of(c) == KEY]
    assert changed is None or int(changed.group(1)) <= len(mine)
    assert "would" not in out

    # A second run of the same head, pinned by a second `/use`.
    world.gh.add_run(
        INFX, RUN + 1, head_sha=HEAD, head_branch="dsv41flash-gb300", created_at=RUN_AT,
        artifacts=run_artifacts(),
    )  # fmt: skip
    _use(world, config, "2026-10-13T10:00:00Z", RUN + 1)
    second = world.show(path, branch)
    assert f"/actions/runs/{RUN + 1}" in second or f'"run": "{RUN + 1}"' in second
    assert_only_the_config_changed(first, second, KEY)
    # As small as the first: within that config's cells, its PR entry, header and date.
    assert _changed_lines(first, second) <= _budget(first, second)
    assert _changed_lines(published, first) <= _budget(published, first)
    assert all(p["number"] == pull["number"] for p in world.book_pulls())


def _budget(old: str, new: str) -> int:
    """The most lines an edit of the `/use`'s config may change: its cells before and after,
    the pool entries and checkpoint chips it adds, its PR's entry, the header and the date."""
    old_value, new_value = parse_module(old).value, parse_module(new).value
    added = [
        *new_value["envs"][len(old_value["envs"]) :],
        *new_value["checkpoints"][len(old_value["checkpoints"]) :],
    ]
    return _config_lines(old) + _config_lines(new) + len(dumps(added).splitlines()) + 12


def _config_lines(text: str) -> int:
    """The lines the cells of the `/use`'s config take in the module ``text``."""
    cells = [c for c in parse_module(text).value["cells"] if _config_of(c) == KEY]
    return len(dumps(cells).splitlines())


def test_a_config_that_cannot_be_rendered_keeps_its_published_cells(world):
    """A push to the PR whose recipe the bot cannot find: the published cells stay as they are,
    and the status comment and the PR body say which config and why."""
    published = LEGACY_FIXTURE.read_text(encoding="utf-8")
    _publish(world, MODULE, published)
    config = _config_text(world.tmp)
    world.inferencex = world.tmp / "inferencex"
    shutil.copytree(ROOT / "examples/inferencex", world.inferencex)
    recipe = "benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang/gb300-fp4-mtp"
    (world.inferencex / "inferencex-e2e" / recipe / "agentic.yaml").unlink()
    proc = sync_bot(
        world, world.pr_event("synchronize"), "--config", str(config), event="pull_request"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The module stays as published (the PR carries the page's section only), and both the
    # PR body and the InferenceX PR's status comment say which config and why.
    assert world.show(MODULE, "infx-sync/deepseek-ai/deepseek-v4_1") == published
    [pull] = world.book_pulls()
    body = plain(pull["body"])
    assert f"{KEY}: its published cells are kept; it could not be rendered: " in body
    assert 'recipe "agentic.yaml" of row 0 is absent from the tree' in body
    seen = plain(world.status()["body"])
    assert "This config could not be rendered for the cookbook (" in seen
    assert "so the cookbook keeps the cells it already publishes for it, as they are" in seen
    assert "stopped before publishing anything" not in seen


def test_a_pr_closed_unmerged_takes_its_published_cells_out_in_a_pr_that_says_why(world):
    """The one way a published cell leaves: its InferenceX PR closed without merging (its
    config never reaches main). The bot opens a PR removing exactly those cells, saying which
    PR and why; every other cell stays as published."""
    published = BUNDLED_MODULE.read_text(encoding="utf-8")
    _publish(world, MODULE, published)
    # The bot's status comment from when the PR was open (a closed PR's is only edited).
    world.gh.add_comment(
        INFX, PR, f"{st.STATUS_MARKER}\n{st.section_marker(MODEL_PATH)}\nearlier", user=INFX_BOT
    )
    world.pull["state"], world.pull["merged"] = "closed", False
    proc = sync_bot(world, world.pr_event("closed"), event="pull_request")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [pull] = world.book_pulls()
    after = world.show(MODULE, "infx-sync/deepseek-ai/deepseek-v4_1")
    old, new = parse_module(published).value, parse_module(after).value
    gone = [c["id"] for c in old["cells"] if _config_of(c) == KEY]
    assert gone and not [c for c in new["cells"] if _config_of(c) == KEY]
    others = {c["id"] for c in old["cells"]} - set(gone)
    assert {c["id"] for c in new["cells"]} == others
    assert _cases(new, others) == _cases(old, others)
    assert [h["id"] for h in new["hardware"]] == ["gb300"]  # still used by the other config
    assert "3859" not in new["source"]["prs"] and "#3859" not in after.splitlines()[2]
    body = plain(pull["body"])
    for cell in gone:
        assert f"{cell} left the module: its InferenceX PR #3859 was closed without merging" in body
    seen = plain(world.status()["body"])
    assert "This PR was closed without merging" in seen
    assert f"The cells the page already showed for it are removed in {BOOK}#1." in seen


def test_a_config_removed_from_main_leaves_with_its_reason(replay):
    """Discovery: InferenceX main's master config no longer has a config the page shows as on
    main (verified). The next event on the model removes its cells, and the PR body says
    which and why; the other configs' cells stay as published."""
    # Both configs shown at a commit this InferenceX has, its main: the other config (the KV
    # donor) is rendered for its settings there, and that main's master config listing KEY is
    # the evidence that KEY was removed from main since (a commit that cannot be read is no
    # evidence: test_takeover_removal.py).
    published = (
        BUNDLED_MODULE.read_text(encoding="utf-8")
        .replace('"status": "verified-pr"', '"status": "verified"')
        .replace("9c3e5a1b7d2f4e6081a3c5e7f9b1d3f5a7c9e1b3", replay.infx.main)
        .replace("6b07b8e6930edcb8309cb59ca758fce5a3ef3f6b", replay.infx.main)
    )
    old = parse_module(published).value
    assert {c["prov"]["status"] for c in old["cells"] if _config_of(c) == KEY} == {"verified"}
    clone = replay.tmp / "maintainer"
    git("clone", "--quiet", str(replay.bare), str(clone), cwd=replay.tmp)
    (clone / MODULE).parent.mkdir(parents=True, exist_ok=True)
    (clone / MODULE).write_text(published, encoding="utf-8")
    git("add", ".", cwd=clone)
    git("commit", "--quiet", "-m", "published module", cwd=clone)
    git("push", "--quiet", "origin", "HEAD:main", cwd=clone)

    _drop_key_from_main_and_open_a_pr(replay)

    [book] = replay.book_pulls()
    new = replay.module()
    assert not [c for c in new["cells"] if _config_of(c) == KEY]
    assert {_config_of(c) for c in new["cells"]} >= {SEED_KEY}
    others = {c["id"] for c in old["cells"] if _config_of(c) != KEY}
    assert others <= {c["id"] for c in new["cells"]}
    assert _cases(new, others) == _cases(old, others)
    body = plain(book["body"])
    for cell in (c["id"] for c in old["cells"] if _config_of(c) == KEY):
        assert (
            f"{cell} left the module: its config was removed from InferenceX main's master config"
        ) in body


def _drop_key_from_main_and_open_a_pr(replay) -> None:
    """The config KEY dropped from InferenceX main, then a PR opened that adds the seed's key
    (and not KEY) to the master config."""
    infx = replay.infx
    with_seed = load_yaml(add_key(infx.read(MASTER), SEED_KEY))
    without = load_yaml(infx.read(MASTER))
    del without[KEY], with_seed[KEY]
    infx.write(MASTER, yaml.safe_dump(without, sort_keys=False))
    infx.merge_to_main(infx.commit(f"drop {KEY}"))
    infx.write(MASTER, yaml.safe_dump(with_seed, sort_keys=False))
    pull = replay.open_pr(SEED_PR, "gb300-dsv41", infx.commit("a new arm"))
    replay.send("pull_request", replay.pr_payload(pull, "opened"))
