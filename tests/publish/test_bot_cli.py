"""`sync bot` as the workflow runs it: a separate process, tokens only in its environment.

The end-to-end secret test of issue 8: the whole bot runs with fake tokens (real, dry-run and
failing), and neither token appears in anything it prints, posts, commits or pushes.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess

import forkserver
import pytest
from botworld import (
    BOOK,
    BOOK_TOKEN,
    BRANCH,
    INFX,
    INFX_TOKEN,
    KEY,
    PR,
    RUN,
    TOKENS,
    World,
    bot_argv,
    sync_bot,
)
from conftest import ROOT
from ghschema import check_event
from infxrepo import InferenceXRepo


def everything_written(world: World) -> str:
    """Comments, PR bodies, request bodies and the whole cookbook history."""
    parts = [json.dumps(r.body) for r in world.gh.log if r.body is not None]
    for repo in world.gh.repos.values():
        parts += [c["body"] for c in repo.comments.values()]
        parts += [p["body"] + p["title"] for p in repo.pulls.values()]
    parts.append(
        subprocess.run(
            ["git", "log", "--all", "-p", "--format=%H %an %ae%n%B"],
            cwd=world.bare,
            capture_output=True,
            text=True,
        ).stdout
    )
    return "\n".join(parts)


def assert_no_token(*texts: str) -> None:
    for text in texts:
        for token in TOKENS:
            assert token not in text
            assert token[4:] not in text  # not even without its prefix


def test_whole_bot_never_shows_its_tokens(world):
    comment = world.comment(f"/use {RUN}")
    proc = sync_bot(world, world.comment_event(comment))
    assert proc.returncode == 0, proc.stderr
    assert f"opened {BOOK}#1" in proc.stdout
    assert [r["content"] for r in comment["reactions"]] == ["+1"]
    # The tokens were used (each on its own API) and went nowhere else.
    used = {r.auth.split(" ", 1)[1] for r in world.gh.log if r.auth}
    assert used == {INFX_TOKEN, BOOK_TOKEN}
    assert_no_token(proc.stdout, proc.stderr, everything_written(world))


def test_dry_run_prints_every_write_and_makes_none(world):
    comment = world.comment(f"/use {RUN}")
    proc = sync_bot(world, world.comment_event(comment), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert world.gh.writes() == []
    assert (
        subprocess.run(
            ["git", "branch", "--list", BRANCH], cwd=world.bare, capture_output=True, text=True
        ).stdout
        == ""
    )
    assert not (world.tmp / "cache").exists()  # the scratch clone is gone, the cache untouched
    out = proc.stdout
    assert "dry run: " in out
    for expected in (
        f"would: POST /repos/{INFX}/issues/comments/{comment['id']}/reactions +1",
        "would: git: write docs/src/snippets/agentx/deepseek-ai/deepseek-v4_1.jsx",
        f"would: git: push 000000000000 to origin refs/heads/{BRANCH}",
        f"would: POST /repos/{BOOK}/pulls head=sgl-project:{BRANCH} base=main",
        f"would: POST /repos/{INFX}/issues/{PR}/comments",
    ):
        assert expected in out
    # It says what it would do, never that it did it.
    assert f"deepseek-ai/deepseek-v4_1: would open a PR in {BOOK} (dry run)" in out
    assert f"PR #{PR}: would post the status comment (dry run)" in out
    # The PR it would open has no number yet: the comment names it as the new PR it is.
    assert (
        f"The SGLang cookbook integration of this PR's AgentX config ({KEY}) will happen in a "
        f"new PR in {BOOK}, in the Agentic Long-Context Deployment section"
    ) in out
    assert f"{BOOK}#0" not in out and "no cookbook PR yet" not in out
    said = out.split("dry run: ")[0]  # the outcome lines, before the planned writes
    assert "opened" not in said and "posted" not in said and "committed" not in said
    assert_no_token(out, proc.stderr)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_dry_run_needs_no_token_and_no_api(world):
    """The event file, the InferenceX checkout, a cookbook path and (for the logs) a local copy
    of the run: everything the real run would write is shown, nothing is written or asked."""
    comment = world.comment(f"/use {RUN}")
    # The PR's head is the commit checked out in the InferenceX checkout (the event names
    # none): a repository of its own. (Issue 35: the bundled example's folder, inside this
    # tool's checkout, gave this tool's own HEAD as the PR head.)
    infx = InferenceXRepo(world.tmp / "infx")
    world.inferencex = infx.work
    nowhere = f"http://127.0.0.1:{free_port()}"  # nothing listens: any request would fail
    proc = sync_bot(
        world,
        world.comment_event(comment),
        "--dry-run",
        "--runs",
        str(ROOT / "examples/runs"),
        tokens=False,
        api_url=nowhere,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert world.gh.log == []  # not even the local server was asked
    assert world.tip() is None and not (world.tmp / "cache").exists()
    lines = proc.stdout.splitlines()
    said = lines[: lines.index("dry run: 7 writes not made") + 1]
    # (Other lines, such as the SGLang flag check's, may come in between.)
    assert [line for line in said if "SGLang flag check" not in line] == [
        "dry run without a token for InferenceX and the cookbook: GitHub is not read there; "
        "the event file stands in for it",
        f"PR #{PR}: run {RUN} read from {ROOT / 'examples/runs' / str(RUN)}, not checked against "
        "GitHub (no token)",
        f"{BRANCH}: would commit and push (dry run)",
        f"deepseek-ai/deepseek-v4_1: would open a PR in {BOOK} (dry run)",
        f"PR #{PR}: would post the status comment (dry run)",
        "dry run: 7 writes not made",
    ]
    out = proc.stdout
    assert f"{KEY}: SemiAnalysisAI/InferenceX#{PR} @ {infx.main[:12]}, run {RUN}" in out
    # Exactly what would be written and posted: the files, the PR title and body, the comment.
    assert "would: git: write docs/src/snippets/agentx/deepseek-ai/deepseek-v4_1.jsx" in out
    assert (
        f"would: POST /repos/{BOOK}/pulls head=sgl-project:{BRANCH} base=main "
        'title="[AgentX] DeepSeek-V4.1: sync launch commands from InferenceX"'
    ) in out
    assert "<!-- infx-cookbook-sync:pr model=deepseek-ai/deepseek-v4_1 -->" in out
    assert f"would: POST /repos/{INFX}/issues/{PR}/comments" in out
    assert f'<!-- infx-cookbook-sync:evidence "{KEY}" -->' in out  # the evidence record
    assert f"{KEY}: SemiAnalysisAI/InferenceX#{PR}" in out and f"run {RUN}, verified-pr" in out

    # Without a local copy of the run, the pin cannot be checked: said, and shown in progress.
    proc = sync_bot(world, world.comment_event(comment), "--dry-run", tokens=False, api_url=nowhere)
    assert proc.returncode == 0, proc.stderr
    assert (
        f"PR #{PR}: run {RUN} not checked (no token: GitHub not read); its configs are shown in "
        "progress"
    ) in proc.stdout
    assert world.gh.log == []


def test_without_dry_run_a_token_is_required(world):
    comment = world.comment(f"/use {RUN}")
    proc = sync_bot(world, world.comment_event(comment), tokens=False)
    assert proc.returncode == 2
    assert (
        proc.stderr
        == "error: no GitHub token: set one of INFX_TOKEN, GITHUB_TOKEN in the environment\n"
    )
    assert world.gh.log == []


def test_errors_are_one_masked_line(world):
    # The API echoes the token back in an error (as a misbehaving proxy might).
    world.gh.fail_next(
        "GET", r"/issues/comments/\d+$", 403, message=f"Resource not accessible {INFX_TOKEN}"
    )
    comment = world.comment(f"/use {RUN}")
    proc = sync_bot(world, world.comment_event(comment))
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: GitHub API 403 on GET"), proc.stderr
    assert last.endswith("Resource not accessible ***")
    assert_no_token(proc.stdout, proc.stderr)
    assert world.gh.writes() == []


def test_bad_event_file(world):
    proc = sync_bot(world, None, raw='{"action": "created",\n  "issue": }')
    assert proc.returncode == 2
    assert (
        proc.stderr.strip() == f"error: {world.tmp / 'event.json'}:2:12: not JSON: Expecting value"
    )
    proc = sync_bot(
        world,
        {
            "action": "created",
            "repository": {"full_name": INFX},
            "issue": {"number": "3859; rm", "pull_request": {"url": "x"}},
            "comment": {},
        },
        malformed=True,
    )
    assert proc.returncode == 2
    # The event's value as JSON spells it, cut: not Python's repr.
    assert 'issue.number must be a positive integer, got "3859; rm"' in proc.stderr
    proc = sync_bot(
        world,
        {
            "action": "created",
            "repository": {"full_name": INFX},
            "issue": {"number": True, "pull_request": {"url": "x"}},
        },
        malformed=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.endswith("issue.number must be a positive integer, got true\n")
    # A payload of the wrong shape: one line naming the event file, no traceback.
    proc = sync_bot(
        world,
        {"action": "created", "repository": {"full_name": INFX}, "issue": []},
        malformed=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"error: {world.tmp / 'event.json'}: event: issue must be an object, got an array"
    )


def test_events_from_elsewhere_are_ignored(world):
    comment = world.comment(f"/use {RUN}")
    payload = world.comment_event(comment)
    payload["repository"]["full_name"] = "mallory/InferenceX"
    proc = sync_bot(world, payload)
    assert proc.returncode == 0
    assert "ignored: comment event from mallory/InferenceX" in proc.stdout
    assert world.gh.writes() == []


def test_models_only_needs_no_token_and_no_api(world):
    comment = world.comment(f"/use {RUN}")
    path = world.tmp / "event.json"
    path.write_text(json.dumps(world.comment_event(comment)))
    proc = subprocess.run(
        bot_argv(path, "--event-name", "issue_comment", "--models-only"),
        cwd=world.tmp,
        env={**forkserver.machine_env(), "PATH": os.environ.get("PATH", "")},
        capture_output=True,
        text=True,
    )
    assert (proc.returncode, proc.stdout) == (0, "deepseek-ai/deepseek-v4_1\n"), proc.stderr
    assert world.gh.log == []


def test_event_models(world):
    from syncer.publish.routing import event_models
    from syncer.syncconfig import load_sync_config

    config = load_sync_config(ROOT / "sync.yaml")
    assert event_models(config, "pull_request", world.pr_event("synchronize", 3871)) == [
        "deepseek-ai/deepseek-v4_1"
    ]
    world.gh.add_pull(INFX, head="unrelated", number=1)
    assert event_models(config, "pull_request", world.pr_event("opened", 1)) == []
    # A comment on an issue, not a PR: GitHub's issue has no pull_request key.
    on_issue = world.comment_event(world.comment("/use 1"))
    del on_issue["issue"]["pull_request"]
    assert event_models(config, "issue_comment", check_event("issue_comment", on_issue)) == []
    world.gh.add_pull(BOOK, head=BRANCH, number=5)
    cookbook = world.pr_event("closed", 5, repo=BOOK)
    assert event_models(config, "pull_request", cookbook) == ["deepseek-ai/deepseek-v4_1"]
    cookbook["pull_request"]["head"]["ref"] = "infx-sync/evil/../x"
    assert event_models(config, "pull_request", check_event("pull_request", cookbook)) == []


@pytest.mark.parametrize("command", ["/use", "/reuse-sweep-run"])
def test_run_id_of_thousands_of_digits_is_refused_after_authorisation(world, command):
    # Issue 12.2: int() of 5,000 digits raised ValueError inside the publishing job, before
    # the commenter's authorisation was looked at; anyone could make it fail.
    for association in ("NONE", "MEMBER"):
        comment = world.comment(f"{command} {'9' * 5000}", association=association)
        proc = sync_bot(world, world.comment_event(comment))
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == ""
        assert f"comment {comment['id']}: refused (" in proc.stdout
        assert [r["content"] for r in comment["reactions"]] == ["-1"]
    assert world.book_pulls() == []


def test_event_numbers_are_bounded(world):
    # Issue 12.2: a number of thousands of digits anywhere in the event file (json.loads turns
    # it into int and raised ValueError: exit 3).
    big = "9" * 5000
    issue = '{"number": ' + big + ', "pull_request": {"url": "x"}}'
    raw = json.dumps({"action": "created", "repository": {"full_name": INFX}, "comment": {}})
    raw = raw[:-1] + ', "issue": ' + issue + "}"
    for extra in ((), ("--models-only",)):
        proc = sync_bot(world, None, *extra, raw=raw)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip() == (
            f"error: {world.tmp / 'event.json'}: event: a number of 5000 digits "
            "(GitHub's ids have at most 20)"
        )
    proc = sync_bot(
        world,
        world.gh.workflow_dispatch_event(
            INFX, {"cookbook_pr": big}, sender="maintainer", workflow=".github/workflows/x.yml"
        ),
        event="workflow_dispatch",
    )
    assert proc.returncode == 2, proc.stderr
    assert "event: inputs.cookbook_pr must be a positive integer" in proc.stderr
    assert world.gh.writes() == []


def test_event_file_not_utf8_or_nested_too_deep_is_bad_input(world):
    # Issue 12.4: UnicodeDecodeError and RecursionError were internal errors (exit 3).
    path = world.tmp / "event.json"
    cases = [
        (b'{"action": "created",\n "x": "caf\xe9"}', ":2: the event is not UTF-8 (byte 32)"),
        (b"[" * 100_000 + b"]" * 100_000, ": the event nests too deeply"),
    ]
    for raw, expected in cases:
        for extra in ((), ("--models-only",)):
            path.write_bytes(raw)
            proc = _run_raw(world, *extra)
            assert proc.returncode == 2, proc.stderr
            assert proc.stderr.startswith(f"error: {path}{expected}"), proc.stderr
            assert len(proc.stderr.strip().splitlines()) == 1
    assert world.gh.log == []


def test_event_file_over_the_size_cap_is_refused_unread(world):
    path = world.tmp / "event.json"
    with path.open("wb") as out:
        out.truncate(26 * 1024 * 1024)  # sparse: 26 MiB that cost nothing to make
    proc = _run_raw(world, "--models-only")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"error: {path}: the event is 27262976 bytes, over the 26214400-byte limit "
        "(not a file this tool reads)"
    )


def _run_raw(world: World, *extra: str) -> subprocess.CompletedProcess[str]:
    """``sync bot`` on the event file already written at ``<tmp>/event.json``."""
    return subprocess.run(
        bot_argv(
            world.tmp / "event.json",
            "--event-name",
            "issue_comment",
            "--inferencex",
            str(world.inferencex),
            "--api-url",
            world.server.base_url,
            *extra,
        ),
        cwd=world.tmp,
        env={
            **forkserver.machine_env(),
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(world.tmp),
            "GITHUB_TOKEN": INFX_TOKEN,
            "COOKBOOK_TOKEN": BOOK_TOKEN,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_models_only_json_is_the_workflows_matrix_and_model_must_be_known(world):
    comment = world.comment(f"/use {RUN}")
    (world.tmp / "event.json").write_text(json.dumps(world.comment_event(comment)))
    proc = _run_raw(world, "--models-only", "--json")
    assert (proc.returncode, proc.stdout) == (0, '["deepseek-ai/deepseek-v4_1"]\n'), proc.stderr
    proc = sync_bot(world, world.comment_event(comment), "--model", "acme/nope")
    assert proc.returncode == 2
    assert "acme/nope" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert world.gh.writes() == []
    proc = sync_bot(world, world.comment_event(comment), "--model", "deepseek-ai/deepseek-v4_1")
    assert proc.returncode == 0, proc.stderr
    assert f"opened {BOOK}#1" in proc.stdout


# Each replaces one part of a good `/use` event with a value of the wrong type. A dry run
# without tokens reads the event before the router checks it, so both must hold: bad input,
# exit 2 and one line, or (for a part the bot never needs) the event handled; never exit 3.
_WRONG_SHAPES = {
    "repository": ("repository", "x"),
    "repository.full_name": ("repository", {"full_name": 7}),
    "issue.user": ("issue", {"number": PR, "pull_request": {"url": "x"}, "user": "x"}),
    "issue.labels": ("issue", {"number": PR, "pull_request": {"url": "x"}, "labels": "ab"}),
    "issue.title": ("issue", {"number": PR, "pull_request": {"url": "x"}, "title": ["x"]}),
    "issue.state": ("issue", {"number": PR, "pull_request": {"url": "x"}, "state": 3}),
    "issue.pull_request": ("issue", {"number": PR, "pull_request": "x"}),
    "comment.user": ("comment", {"id": 5, "body": "/use 1", "user": "x"}),
    "comment.body": ("comment", {"id": 5, "body": ["/use 1"]}),
}


@pytest.mark.parametrize("part", sorted(_WRONG_SHAPES))
def test_dry_run_without_tokens_reads_an_event_of_the_wrong_shape_as_bad_input(world, part):
    key, value = _WRONG_SHAPES[part]
    event = world.comment_event(world.comment(f"/use {RUN}"))
    event[key] = value
    nowhere = f"http://127.0.0.1:{free_port()}"
    proc = sync_bot(world, event, "--dry-run", tokens=False, api_url=nowhere, malformed=True)
    assert "Traceback" not in proc.stderr
    assert proc.returncode in (0, 2), proc.stderr
    if proc.returncode == 2:
        (line,) = proc.stderr.splitlines()
        assert line.startswith(f"error: {world.tmp / 'event.json'}: ")
    assert world.gh.log == []
