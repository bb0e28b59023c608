"""`--point`/`--conc`: one rule (syncer.point_options) and one set of messages in every command."""

from __future__ import annotations

import json

import click
import pytest

from syncer.cli import main
from syncer.errors import SyncError
from syncer.point_options import CONC_HELP, POINT_HELP, only_one, select_points

KEY = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
JOBS = [[1], [4], [16], [16], [32], [64], [128]]


def pick(**kw: object) -> list[int]:
    return select_points(range(len(JOBS)), concs=lambda i: JOBS[i], owner="k", **kw)  # type: ignore[arg-type]


def test_rule() -> None:
    assert pick(point=None, conc=None) == list(range(7))
    assert pick(point=3, conc=None) == [3]
    assert pick(point=None, conc=16) == [2, 3]  # every job measured at C
    with pytest.raises(SyncError, match=r"^give --point or --conc, not both$"):
        pick(point=1, conc=16)
    with pytest.raises(SyncError, match=r"^k: --point 7 out of range \(0\.\.6\)$"):
        pick(point=7, conc=None)
    with pytest.raises(SyncError, match=r"^k: no job at concurrency 3 \(concurrencies: 1, 4, 16,"):
        pick(point=None, conc=3)


def test_only_one_lists_the_candidates() -> None:
    assert only_one([5], conc=64, index=int, describe=str, owner="k") == 5
    with pytest.raises(SyncError) as exc:
        only_one([2, 3], conc=16, index=int, describe=lambda i: f"job {i}", owner="k")
    assert exc.value.message == (
        "k: concurrency 16 matches 2 jobs and one is needed; "
        "choose with --point 2 (job 2); --point 3 (job 3)"
    )


def test_render_and_verify_select_the_same_jobs(capsys: pytest.CaptureFixture[str]) -> None:
    def cli(*args: str) -> tuple[int, str, str]:
        with pytest.raises(SystemExit) as exc:
            main(list(args))
        out, err = capsys.readouterr()
        return int(exc.value.code or 0), out, err

    code, out, err = cli("render", KEY, "--conc", "16", "--format", "json")
    assert code == 0, err
    rendered = [p["override"] for p in json.loads(out)["points"]]
    code, out, err = cli("verify", KEY, "--conc", "16", "--format", "json")
    assert code == 0, err
    verified = [p["override"] for p in json.loads(out)["points"]]
    assert rendered == verified == ["override_tp4_c16", "override_tp2_c16"]
    # Both commands refuse a bad selection with the same words.
    for cmd in ("render", "verify"):
        code, _, err = cli(cmd, KEY, "--conc", "3")
        assert code == 2 and f"error: {KEY}: no job at concurrency 3 (concurrencies: 1, 4," in err
        code, _, err = cli(cmd, KEY, "--point", "9")
        assert code == 2 and f"error: {KEY}: --point 9 out of range (0..6)" in err


def test_help_texts_agree() -> None:
    from syncer.commands.render import render_command
    from syncer.commands.verify import verify_command

    def helps(command: click.Command) -> dict[str, str | None]:
        return {p.name: p.help for p in command.params if p.name in ("point", "conc")}

    assert (
        helps(render_command)
        == helps(verify_command)
        == {
            "point": POINT_HELP,
            "conc": CONC_HELP,
        }
    )
