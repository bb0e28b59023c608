"""Issue 35, "nothing published is lost": when a cell of the published module may leave it,
through `sync bot` and real git repositories.

- A `/use` whose new rendering of its config no longer produces a published deployment keeps
  that cell exactly as published (its own provenance), names it in the PR body and in the
  status comment, and never gives its id to another deployment (real modules 2b484a51 and
  37da6c0b: their dspark cell "Agg TP4·EP4" is not in the example InferenceX's search space).
- A config InferenceX main does not list leaves only with evidence that it was removed from
  main: the master config of the commit its cells are shown at lists it. A commit InferenceX
  does not have is no evidence: the cells stay, and the PR body says why.
"""

from __future__ import annotations

import yaml
from botworld import KEY, MODULE, git, plain
from conftest import ROOT
from infxrepo import MASTER
from test_bot_edits import (
    _cases,
    _config_of,
    _config_text,
    _drop_key_from_main_and_open_a_pr,
    _publish,
    _use,
)

from syncer.cookbook.jsmodule import parse_module

BUNDLED_MODULE = ROOT / "cookbook_snippets/deepseek-ai/deepseek-v4_1.jsx"
BRANCH = "infx-sync/deepseek-ai/deepseek-v4_1"
# The deployment of the /use's config that the published modules show and the example
# InferenceX's search space no longer has.
GONE_LABEL = "Agg TP4·EP4"


def _cells(text: str) -> list[dict]:
    return parse_module(text).value["cells"]


def _mine(text: str) -> dict[str, dict]:
    return {c["id"]: c for c in _cells(text) if _config_of(c) == KEY}


def _a_deployment_the_rendering_lacks_is_kept(world, reference, version: str) -> None:
    published = (reference / f"cookbook/agentx/deepseek-ai/deepseek-v4_1/{version}.jsx").read_text(
        encoding="utf-8"
    )
    config = _config_text(world.tmp)
    _publish(world, MODULE, published)
    before = _mine(published)
    [(kept_id, kept)] = [(i, c) for i, c in before.items() if c["label"] == GONE_LABEL]

    out = _use(world, config, "2026-10-13T09:00:00Z")
    assert "does not verify" not in out  # the kept cell never stands in for a new one
    first = world.show(MODULE, BRANCH)
    after = _mine(first)
    # The cell is there as published: provenance, place in the module, and commands (its
    # `ref`s into a rewritten cell are written out as the blocks they meant: same cases).
    assert {k: v for k, v in after[kept_id].items() if k != "routers"} == {
        k: v for k, v in kept.items() if k != "routers"
    }
    assert [c["id"] for c in _cells(first)].index(kept_id) == list(
        c["id"] for c in _cells(published)
    ).index(kept_id)
    # Every other published deployment of the config keeps its id (no renumbering); the one
    # deployment the module lacked gets an id of its own.
    for cell_id, cell in before.items():
        assert after[cell_id]["label"] == cell["label"]
    [(new_id, new)] = [(i, c) for i, c in after.items() if i not in before]
    assert new["label"] not in {c["label"] for c in before.values()}
    # The config's first cell records the new pin, so the next event does not write it again.
    first_cell = next(c for c in _cells(first) if _config_of(c) == KEY)
    assert first_cell["id"] != kept_id
    assert _cases(parse_module(first).value, {kept_id}) == _cases(
        parse_module(published).value, {kept_id}
    )

    [pull] = world.book_pulls()
    body = plain(pull["body"])
    assert (
        f"{kept_id} ({GONE_LABEL}) is kept as published, with its own provenance: {KEY} was "
        "rendered again and no longer produces that deployment."
    ) in body
    assert "left the module" not in body and "Removed cells" not in body
    seen = plain(world.status()["body"])
    assert (
        "The cookbook keeps 1 published cell of this config that its rendering here no longer "
        f"produces ({kept_id}), as published and with their own provenance"
    ) in seen

    # A second event with nothing new for the config writes nothing (the module already shows
    # its pin), and the kept cell is still named: the notes are read from the two texts.
    _use(world, config, "2026-10-13T09:30:00Z")
    assert world.show(MODULE, BRANCH) == first
    [pull] = world.book_pulls()
    assert f"{kept_id} ({GONE_LABEL}) is kept as published" in plain(pull["body"])
    assert new_id in _mine(world.show(MODULE, BRANCH))


def test_a_deployment_the_new_rendering_lacks_is_kept_and_named_2b484a51(world, reference):
    _a_deployment_the_rendering_lacks_is_kept(world, reference, "2b484a51")


def test_a_deployment_the_new_rendering_lacks_is_kept_and_named_37da6c0b(world, reference):
    # The older format: per-point provenance URLs, no cell `prov`.
    _a_deployment_the_rendering_lacks_is_kept(world, reference, "37da6c0b")


def _published_on_main(replay, commit: str) -> dict:
    """The bundled module as the cookbook's state, both configs shown as on main, the /use's
    config at ``commit``."""
    published = (
        BUNDLED_MODULE.read_text(encoding="utf-8")
        .replace('"status": "verified-pr"', '"status": "verified"')
        .replace("9c3e5a1b7d2f4e6081a3c5e7f9b1d3f5a7c9e1b3", replay.infx.main)
        .replace("6b07b8e6930edcb8309cb59ca758fce5a3ef3f6b", commit)
    )
    clone = replay.tmp / "maintainer"
    git("clone", "--quiet", str(replay.bare), str(clone), cwd=replay.tmp)
    (clone / MODULE).parent.mkdir(parents=True, exist_ok=True)
    (clone / MODULE).write_text(published, encoding="utf-8")
    git("add", ".", cwd=clone)
    git("commit", "--quiet", "-m", "published module", cwd=clone)
    git("push", "--quiet", "origin", "HEAD:main", cwd=clone)
    return parse_module(published).value


def test_a_config_main_lacks_keeps_its_cells_when_its_commit_cannot_be_read(replay):
    """Main's master config does not list the config, but the commit its cells are shown at
    is not in InferenceX (a rewritten history, another repository): whether it was removed
    from main cannot be told, so nothing leaves and the PR body says why."""
    unknown = "0123456789abcdef0123456789abcdef01234567"
    old = _published_on_main(replay, unknown)
    _drop_key_from_main_and_open_a_pr(replay)
    [book] = replay.book_pulls()
    new = replay.module()
    ids = {c["id"] for c in old["cells"] if _config_of(c) == KEY}
    assert ids and ids <= {c["id"] for c in new["cells"]}
    assert _cases(new, ids) == _cases(old, ids)
    body = plain(book["body"])
    assert "left the module" not in body
    assert (
        f"{KEY}: its published cells are kept, though InferenceX main's master config does not "
        f"list it: commit {unknown[:12]}, where its cells are shown, cannot be read, so whether "
        "it was removed from main cannot be told"
    ) in body


def test_a_config_its_own_commit_never_listed_is_not_taken_for_removed(replay):
    """The commit the cells are shown at is there, and its master config does not list the
    config either: it was never on that main, so it was not removed from it."""
    infx = replay.infx
    without = yaml.safe_load(infx.read(MASTER))
    del without[KEY]
    infx.write(MASTER, yaml.safe_dump(without, sort_keys=False))
    elsewhere = infx.commit("a branch without the key")
    infx.publish_pr(3859, elsewhere)  # the PR the published cells name: InferenceX has it
    infx.checkout(infx.main)
    old = _published_on_main(replay, elsewhere)
    _drop_key_from_main_and_open_a_pr(replay)
    [book] = replay.book_pulls()
    new = replay.module()
    ids = {c["id"] for c in old["cells"] if _config_of(c) == KEY}
    assert ids <= {c["id"] for c in new["cells"]}
    assert (
        f"the master config of commit {elsewhere[:12]}, where its cells are shown, does not list "
        "it either, so it was not removed from main"
    ) in plain(book["body"])
