"""The SGLang flag check in the bot (issue 40.4): the cookbook clone is SGLang's repository, so
the bot checks each cell's flags against the SGLang its image pins, with no option of its
own; a clone that is not SGLang's is named as such, never with advice to pass an option
`sync bot` does not have. Through `sync bot` as the workflow runs it, against the fake."""

from __future__ import annotations

import yaml
from botworkflow import Workflow
from botworld import BOOK, SEED_KEY, SEED_PR, Replay, git
from infxrepo import MASTER, add_key
from lintrepo import SERVER_ARGS_V1

SERVER_ARGS = "python/sglang/srt/server_args.py"


def _open_seed_pr(replay: Replay) -> dict:
    infx = replay.infx
    infx.write(MASTER, add_key(infx.read(MASTER), SEED_KEY))
    head = infx.commit("[AgentX] GB300 DSV4.1 Flash SGLang: a new arm")
    return replay.open_pr(SEED_PR, "gb300-dsv41", head)


def _make_cookbook_sglang(replay: Replay) -> None:
    """The cookbook's main as in sgl-project/sglang: SGLang's sources beside the docs, its
    release v0.5.1 tagged (a server_args.py of that era, which lacks the speculative flags)."""
    work = replay.tmp / "sglang-maintainer"
    git("clone", "--quiet", str(replay.bare), str(work), cwd=replay.tmp)
    (work / SERVER_ARGS).parent.mkdir(parents=True)
    (work / SERVER_ARGS).write_text(SERVER_ARGS_V1)
    git("add", ".", cwd=work)
    git("commit", "--quiet", "-m", "SGLang sources", cwd=work)
    git("tag", "v0.5.1", cwd=work)
    git("push", "--quiet", "origin", "HEAD:main", "v0.5.1", cwd=work)


def test_the_bot_checks_flags_against_the_cookbook_clone(replay):
    """The PR's config runs the v0.5.1 release image: each of its flags is looked up in that
    release's server_args.py in the cookbook clone, and one it does not declare is shown."""
    _make_cookbook_sglang(replay)
    infx = replay.infx
    doc = yaml.safe_load(add_key(infx.read(MASTER), SEED_KEY))
    doc[SEED_KEY]["image"] = "lmsysorg/sglang:v0.5.1-cu129"
    infx.write(MASTER, yaml.safe_dump(doc, sort_keys=False, width=200))
    head = infx.commit("[AgentX] GB300 DSV4.1 Flash SGLang: a new arm on the v0.5.1 release")
    out = Workflow(replay).pushed(replay.open_pr(SEED_PR, "gb300-dsv41", head))
    assert "SGLang flag check skipped" not in out
    [pull] = replay.book_pulls()
    body = pull["body"]
    assert "SGLang flag check (`sync lint`)" in body
    assert (
        f"| `{SEED_KEY}#0` | `v0.5.1` | `--speculative-algorithm` | worker | undeclared |"
    ) in body


def test_a_cookbook_that_is_not_sglangs_is_named_without_a_missing_option(replay):
    flow = Workflow(replay)
    out = flow.pushed(_open_seed_pr(replay))
    [line] = [x for x in out.splitlines() if "SGLang flag check" in x]
    assert line == (
        "deepseek-ai/deepseek-v4_1: SGLang flag check skipped: the cookbook repository has no "
        f"{SERVER_ARGS}, so it is not SGLang's repository (sgl-project/sglang), whose history "
        "the check reads each flag from"
    )
    assert "--sglang" not in out
    assert f"{BOOK}#1" in out
