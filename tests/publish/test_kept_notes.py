"""A published cell kept though its config's new rendering lacks its deployment is said where
it is new (issue 35's leftover): the status comment names it on the update that first keeps
it, and not on later updates of the same cookbook PR, whose body already names it (its
recorded state says so, whichever run reads it); the PR body, which describes the whole PR
to its reviewer, lists every kept cell on every update.

Through `sync bot`, real git repositories and the fake GitHub, with the real published module
2b484a51 as the cookbook's state (its dspark cell "Agg TP4·EP4" is not in the example
InferenceX's search space)."""

from __future__ import annotations

from botworld import BOOK_BOT, HEAD, INFX, MODULE, RUN, RUN_AT, plain, run_artifacts
from test_bot_edits import _config_text, _publish, _use
from test_takeover_removal import BRANCH, GONE_LABEL, _mine

from syncer.github.records import Pull
from syncer.publish import status as st

MODEL_PATH = "deepseek-ai/deepseek-v4_1"
STATUS_SAYS = "The cookbook keeps 1 published cell of this config"


def _kept_recorded(pull: dict) -> set[str]:
    record = Pull(
        repo="", number=pull["number"], title="", body=pull["body"], state="open",
        merged=False, user=pull["user"], head_ref="", head_sha="", head_repo="", base_ref="",
        labels=(), html_url="",
    )  # fmt: skip
    return st.read_kept(record, BOOK_BOT, MODEL_PATH)


def test_a_kept_cell_is_said_once_in_the_status_and_always_in_the_pr_body(world, reference):
    published = (reference / "cookbook/agentx/deepseek-ai/deepseek-v4_1/2b484a51.jsx").read_text(
        encoding="utf-8"
    )
    config = _config_text(world.tmp)
    _publish(world, MODULE, published)
    [kept_id] = [i for i, c in _mine(published).items() if c["label"] == GONE_LABEL]
    body_says = f"{kept_id} ({GONE_LABEL}) is kept as published, with its own provenance"

    # The first update keeps the cell: the PR body and the status comment name it.
    _use(world, config, "2026-10-13T09:00:00Z")
    [pull] = world.book_pulls()
    assert body_says in plain(pull["body"])
    assert _kept_recorded(pull) == {kept_id}
    status = plain(world.status()["body"])
    assert f"{STATUS_SAYS} that its rendering here no longer produces ({kept_id})" in status
    first, first_body = world.show(MODULE, BRANCH), pull["body"]

    # The second update of the same PR (another run pinned): the cell is still kept, and the
    # PR body still lists it; the status comment, rewritten for the new run, says nothing
    # more of the cell the PR already names.
    world.gh.add_run(
        INFX, RUN + 1, head_sha=HEAD, head_branch="dsv41flash-gb300", created_at=RUN_AT,
        artifacts=run_artifacts(),
    )  # fmt: skip
    _use(world, config, "2026-10-13T10:00:00Z", RUN + 1)
    second = world.show(MODULE, BRANCH)
    assert second != first and kept_id in _mine(second)
    [again] = world.book_pulls()
    assert again["number"] == pull["number"] and again["body"] != first_body
    assert body_says in plain(again["body"])
    assert _kept_recorded(again) == {kept_id}
    status = plain(world.status()["body"])
    assert f"run {RUN + 1}" in status.replace("[", "").replace("]", "")
    assert STATUS_SAYS not in status and kept_id not in status


def test_the_recorded_kept_cells_round_trip_and_only_the_bots_own_body_counts() -> None:
    marker = st.state_marker(MODEL_PATH, {}, ["m#2", "m#1", "m#2"])
    assert '"kept":["m#1","m#2"]' in marker
    body = f"{st.pr_marker(MODEL_PATH)}\n{marker}\n"

    def pull(user: str, text: str) -> Pull:
        return Pull(
            repo="", number=1, title="", body=text, state="open", merged=False, user=user,
            head_ref="", head_sha="", head_repo="", base_ref="", labels=(), html_url="",
        )  # fmt: skip

    assert st.read_kept(pull(BOOK_BOT, body), BOOK_BOT, MODEL_PATH) == {"m#1", "m#2"}
    assert st.read_kept(pull("someone", body), BOOK_BOT, MODEL_PATH) == set()
    assert (
        st.read_kept(pull(BOOK_BOT, body.replace('["m#1","m#2"]', '"m#1"')), BOOK_BOT, MODEL_PATH)
        == set()
    )
    # No kept cell: the state is written as before.
    assert '"kept"' not in st.state_marker(MODEL_PATH, {})
