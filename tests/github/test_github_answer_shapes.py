"""Issue 36.10: a GitHub answer of the wrong shape exited 3 (``KeyError`` / ``ValueError`` in
``comment_record``) or was taken silently (an id ``"1008"`` read as 1008).

The bot runs as the workflow runs it against the fake GitHub, whose answers are checked against
GitHub's OpenAPI description; ``mangle_next`` then changes one field of one answer to a shape
GitHub never sends. Each must be one ``error:`` line naming the request and the field, exit 2.
"""

from __future__ import annotations

from typing import Any

import pytest
from botworld import BOOK, INFX, PR, RUN, sync_bot

from syncer.errors import SyncError
from syncer.github.records import comment_record, pull_record
from syncer.github.shapes import ShapeError


def _set(*path: Any, value: Any) -> Any:
    def change(body: Any) -> Any:
        node = body
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value
        return body

    return change


def _drop(key: str) -> Any:
    def change(body: Any) -> Any:
        del body[key]
        return body

    return change


COMMENT = r"/issues/comments/\d+$"
COMMENTS = rf"/repos/{INFX}/issues/{PR}/comments$"
PULL = rf"/repos/{INFX}/pulls/{PR}$"
# (request, its path pattern, the change, the field's words in the error)
CASES = {
    "comment id a string": (
        "GET", COMMENT, lambda b: {**b, "id": str(b["id"])},
        'id is "{id}" (a string), expected a whole number of 1 to 20 digits',
    ),
    "comment id missing": (
        "GET", COMMENT, _drop("id"),
        "id is missing or null, expected a whole number of 1 to 20 digits",
    ),
    "comment user a string": (
        "GET", COMMENT, _set("user", value="maintainer"),
        'user is "maintainer" (a string), expected an object',
    ),
    "comment body a number": (
        "GET", COMMENT, _set("body", value=7), "body is 7 (a number), expected a string",
    ),
    "comment id a boolean": (
        "GET", COMMENT, _set("id", value=True),
        "id is true (a boolean), expected a whole number of 1 to 20 digits",
    ),
    "comments page a string": (
        "GET", COMMENTS, lambda b: "<html>proxy error</html>",
        'the answer is "<html>proxy error</html>" (a string), expected an array',
    ),
    "comments page entry a number": (
        "GET", COMMENTS, lambda b: [*b, 5], "[{n}] is 5 (a number), expected an object",
    ),
    "pull head an array": (
        "GET", PULL, _set("head", value=[]), "head is [] (an array), expected an object",
    ),
    "pull labels a string": (
        "GET", PULL, _set("labels", value="full-sweep"),
        'labels is "full-sweep" (a string), expected an array',
    ),
    "pull merged a string": (
        "GET", PULL, _set("merged", value="no"),
        'merged is "no" (a string), expected true or false',
    ),
    "pull head sha an object": (
        "GET", PULL, _set("head", "sha", value={"x": 1}),
        'head.sha is {"x": 1} (an object), expected a string',
    ),
    "commit sha a number": (
        "GET", rf"/pulls/{PR}/commits$", _set(0, "sha", value=7),
        "[0].sha is 7 (a number), expected a string",
    ),
    "run conclusion a number": (
        "GET", rf"/actions/runs/{RUN}$", _set("conclusion", value=1),
        "conclusion is 1 (a number), expected a string",
    ),
    "artifact size a string": (
        "GET", rf"/actions/runs/{RUN}/artifacts$",
        _set("artifacts", 0, "size_in_bytes", value="big"),
        'artifacts[0].size_in_bytes is "big" (a string), expected a whole number of 1 to 20 digits',
    ),
    "artifacts not an array": (
        "GET", rf"/actions/runs/{RUN}/artifacts$", _set("artifacts", value=None),
        None,  # null is an empty list: no artifacts (the run's logs then missing, said so)
    ),
    "login missing": (
        "GET", r"^/user$", _set("login", value=None), "login is missing or null, expected a string",
    ),
    "cookbook pulls page entry a string": (
        "GET", rf"/repos/{BOOK}/pulls$", lambda b: ["pr"],
        '[0] is "pr" (a string), expected an object',
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", [c for c in CASES if CASES[c][3] is not None])
def test_an_answer_of_the_wrong_shape_is_one_error_naming_request_and_field(world, case):
    method, pattern, change, words = CASES[case]
    comment = world.comment(f"/use {RUN}")
    world.gh.mangle_next(method, pattern, change)
    proc = sync_bot(world, world.comment_event(comment))
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    [served] = [r for r in world.gh.log if r.method == method and _matches(pattern, r.path)][:1]
    n = len(world.gh.comments_on(INFX, PR))
    expected = words.replace("{id}", str(comment["id"])).replace("{n}", str(n))
    assert line == (
        f"error: GitHub's answer to {method} {served.path} is not of GitHub's shape: {expected}"
    ), proc.stderr[-2000:]
    if pattern in (COMMENT, PULL):  # read before anything is written: nothing is
        assert world.gh.writes() == []


def test_a_null_list_reads_as_empty_not_as_an_error(world):
    method, pattern, change, _ = CASES["artifacts not an array"]
    comment = world.comment(f"/use {RUN}")
    world.gh.mangle_next(method, pattern, change)
    proc = sync_bot(world, world.comment_event(comment))
    assert proc.returncode in (0, 1, 2), proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr


def test_an_answer_that_is_not_json_is_one_error_naming_the_request(world):
    # Found by the fuzz campaign (bench/fuzz.py, a cut api/user.json): JSONDecodeError, exit 3.
    comment = world.comment(f"/use {RUN}")
    world.gh.mangle_next("GET", COMMENT, lambda body: b'{"id": 1, "bo')
    proc = sync_bot(world, world.comment_event(comment))
    assert proc.returncode == 2, proc.stderr[-3000:]
    line = proc.stderr.strip().splitlines()[-1]
    assert line == (
        f"error: GitHub's answer to GET /repos/{INFX}/issues/comments/{comment['id']} is not "
        "JSON (Unterminated string starting at, byte 10)"
    ), proc.stderr[-2000:]
    assert world.gh.writes() == []


def _matches(pattern: str, path: str) -> bool:
    import re

    return re.search(pattern, path) is not None


def test_the_parsers_name_the_field_and_stay_sync_errors():
    # An event file read offline goes through the same parsers: bad input, never a crash.
    with pytest.raises(ShapeError) as info:
        comment_record({"id": 5, "user": {"login": ["x"]}})
    assert isinstance(info.value, SyncError)
    assert str(info.value) == 'user.login is ["x"] (an array), expected a string'
    with pytest.raises(ShapeError, match=r"^\[2\]\.number is 2\.5 \(a number\)"):
        pull_record("o/r", {"number": 2.5}, "[2]")
    big = {"number": 10**20}
    with pytest.raises(ShapeError, match="expected a whole number of 1 to 20 digits"):
        pull_record("o/r", big)
    # what GitHub may leave null stays a default
    pull = pull_record("o/r", {"number": 3, "user": None, "head": None, "labels": None})
    assert (pull.user, pull.head_sha, pull.labels) == ("", "", ())
