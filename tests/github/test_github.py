from __future__ import annotations

import io
import zipfile

import pytest
from ghserver import GitHubServer, serving

from syncer import progress
from syncer.errors import SyncError
from syncer.github.client import GitHubClient
from syncer.github.plan import Plan

TOKEN = "ghp_" + "T" * 36  # a PAT: GitHub answers it GET /user
INFX = "SemiAnalysisAI/InferenceX"


@pytest.fixture
def server():
    with serving(TOKEN, "cookbook-sync-bot", INFX) as srv:
        yield srv


def client(server: GitHubServer, **kw) -> GitHubClient:
    kw.setdefault("pause", 0)
    kw.setdefault("backoff", 0.01)
    return GitHubClient(TOKEN, base_url=server.base_url, **kw)


def _zip(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return buf.getvalue()


def test_reads_pull_commits_comments_and_login(server):
    model = server.model
    pr = model.add_pull(INFX, head="feature", commits=["a" * 40, "b" * 40], labels=["x"])
    model.add_comment(INFX, pr["number"], "/use 1", association="OWNER")
    gh = client(server)
    pull = gh.pulls.get(INFX, pr["number"])
    assert (pull.head_sha, pull.head_ref, pull.labels, pull.merged) == (
        "b" * 40,
        "feature",
        ("x",),
        False,
    )
    assert gh.pulls.commits(INFX, pr["number"]) == ["a" * 40, "b" * 40]
    [comment] = gh.comments.on(INFX, pr["number"])
    assert (comment.body, comment.association, comment.user) == ("/use 1", "OWNER", "maintainer")
    assert gh.comments.get(INFX, comment.id) == comment
    assert gh.login() == "cookbook-sync-bot"


def test_pagination_reads_every_page(server):
    model = server.model
    pr = model.add_pull(INFX, head="f", commits=[f"{i:040x}" for i in range(250)])
    assert len(client(server).pulls.commits(INFX, pr["number"])) == 250


def test_writes_and_reactions(server):
    model = server.model
    pr = model.add_pull(INFX, head="f")
    gh = client(server)
    made = gh.comments.create(INFX, pr["number"], "hello")
    gh.comments.edit(INFX, made.id, "edited")
    gh.comments.react(INFX, made.id, "+1")
    [reaction] = gh.comments.reactions(INFX, made.id)
    assert (reaction.content, reaction.user) == ("+1", "cookbook-sync-bot")
    gh.comments.unreact(INFX, made.id, reaction.id)
    assert gh.comments.reactions(INFX, made.id) == []
    assert [c["body"] for c in model.comments_on(INFX, pr["number"])] == ["edited"]


def test_pull_create_find_update(server):
    model = server.model
    model.repo("sgl-project/sglang")
    gh = client(server)
    made = gh.pulls.create(
        "sgl-project/sglang", title="t", body="b", head="sgl-project:infx-sync/a/b", base="main"
    )
    found = gh.pulls.find("sgl-project/sglang", "sgl-project:infx-sync/a/b")
    assert [p.number for p in found] == [made.number]
    gh.pulls.update("sgl-project/sglang", made.number, body="new", title="t2")
    again = gh.pulls.get("sgl-project/sglang", made.number)
    assert (again.title, again.body) == ("t2", "new")
    # Issue 12.8: GitHub's 422 "already exists" for the bot's own open PR means "found it";
    # the PR gets the title and body of this call.
    again = gh.pulls.create(
        "sgl-project/sglang", title="t", body="b", head="sgl-project:infx-sync/a/b", base="main"
    )
    assert (again.number, again.title, again.body) == (made.number, "t", "b")
    assert len(model.repo("sgl-project/sglang").pulls) == 1


def test_rate_limit_403_retry_after_is_honoured(server):
    model = server.model
    pr = model.add_pull(INFX, head="f")
    model.fail_next(
        "GET",
        r"/pulls/\d+$",
        403,
        headers={"Retry-After": "1"},
        message="You have exceeded a secondary rate limit",
    )
    pull = client(server).pulls.get(INFX, pr["number"])
    assert pull.number == pr["number"]
    hits = [r for r in model.log if r.path.endswith(f"/pulls/{pr['number']}")]
    assert len(hits) == 2
    assert hits[1].at - hits[0].at >= 0.9  # waited as Retry-After asked


def test_429_and_5xx_are_retried_and_patch_too(server):
    model = server.model
    pr = model.add_pull(INFX, head="f")
    comment = model.add_comment(INFX, pr["number"], "x")
    model.fail_next("GET", r"/comments$", 429, headers={"Retry-After": "0"})
    model.fail_next("PATCH", r"/issues/comments/\d+$", 502, times=2)
    gh = client(server)
    assert len(gh.comments.on(INFX, pr["number"])) == 1
    gh.comments.edit(INFX, comment["id"], "y")
    assert comment["body"] == "y"


def test_errors_are_sync_errors_without_the_token(server):
    model = server.model
    model.fail_next("GET", r"/pulls/7$", 500, times=50, message=f"boom {TOKEN}")
    gh = client(server, retries=1)
    with pytest.raises(
        SyncError, match=r"gave up after 1 retries \(too many 500 error responses\)"
    ):
        gh.pulls.get(INFX, 7)
    with pytest.raises(SyncError, match="404"):
        client(server).pulls.get(INFX, 999)


def test_bad_token_is_a_clear_error(server):
    gh = GitHubClient("ghp_" + "x" * 36, base_url=server.base_url, pause=0)
    with pytest.raises(SyncError, match="401") as info:
        gh.pulls.get(INFX, 1)
    assert "ghp_" not in str(info.value)


def test_artifacts_listing_and_streamed_download(server, tmp_path):
    model = server.model
    data = _zip({"server.log": "Command: python3 -m sglang.launch_server\n"})
    model.add_run(
        INFX,
        41000000001,
        head_sha="a" * 40,
        artifacts={"server_logs_x": data, "results_bmk": b"zz"},
        expired=("results_bmk",),
    )
    gh = client(server)
    arts = gh.actions.artifacts(INFX, 41000000001)
    assert [(a.name, a.expired) for a in arts] == [("server_logs_x", False), ("results_bmk", True)]
    model.fail_next("GET", r"/_blob/", 503, headers={"Retry-After": "0"})
    path = gh.actions.download(arts[0], tmp_path / "a.zip")
    assert path.read_bytes() == data
    blob_requests = [r for r in model.log if r.path.startswith("/_blob/")]
    assert blob_requests and all(r.auth is None for r in blob_requests)  # token stays with the API
    with pytest.raises(SyncError, match="410"):
        gh.actions.download(arts[1], tmp_path / "b.zip")
    assert not (tmp_path / "b.zip").exists()


def test_download_size_cap(server, tmp_path):
    model = server.model
    model.add_run(INFX, 5, head_sha="a" * 40, artifacts={"big": b"0" * 5000})
    gh = client(server)
    [art] = gh.actions.artifacts(INFX, 5)
    with pytest.raises(SyncError, match="over 100"):
        gh.actions.download(art, tmp_path / "big.zip", max_bytes=100)
    object.__setattr__(art, "size", 10)  # a lying size is caught while streaming
    with pytest.raises(SyncError, match="more than 100 bytes"):
        gh.actions.download(art, tmp_path / "big.zip", max_bytes=100)
    assert list(tmp_path.iterdir()) == []


def test_dry_run_plans_writes_and_sends_none(server):
    model = server.model
    pr = model.add_pull(INFX, head="f")
    plan = Plan(dry_run=True)
    gh = client(server, plan=plan)
    gh.comments.create(INFX, pr["number"], "hi")
    gh.pulls.update(INFX, pr["number"], body="b")
    assert model.writes() == []
    assert plan.writes[0].startswith(f"POST /repos/{INFX}/issues/{pr['number']}/comments")
    assert plan.writes[1].startswith(f"PATCH /repos/{INFX}/pulls/{pr['number']} body (1 chars)")


def test_primary_rate_limit_waits_for_the_reset(server):
    import time

    model = server.model
    pr = model.add_pull(INFX, head="f")
    reset = int(time.time()) + 1  # the next second: waited for, and one more (1-2 s in all)
    model.fail_next(
        "GET",
        r"/pulls/\d+$",
        403,
        headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)},
        message="API rate limit exceeded for installation ID 1.",
    )
    assert client(server).pulls.get(INFX, pr["number"]).number == pr["number"]
    hits = [r for r in model.log if r.path.endswith(f"/pulls/{pr['number']}")]
    assert len(hits) == 2 and hits[1].at - hits[0].at >= 0.9


def test_rate_limit_wait_over_the_cap_is_an_error(server):
    model = server.model
    pr = model.add_pull(INFX, head="f")
    model.fail_next("GET", r"/pulls/\d+$", 429, headers={"Retry-After": "3600"}, times=10)
    with pytest.raises(SyncError, match="retry in 3600s, over the 5s cap"):
        client(server, max_wait=5).pulls.get(INFX, pr["number"])
    assert len([r for r in model.log if r.path.endswith("/pulls/1")]) == 1


def test_download_follows_a_relative_redirect(server, tmp_path):
    model = server.model
    model.relative_redirects = True
    model.add_run(INFX, 6, head_sha="a" * 40, artifacts={"logs": b"PK-data"})
    gh = client(server)
    [art] = gh.actions.artifacts(INFX, 6)
    assert gh.actions.download(art, tmp_path / "x.zip").read_bytes() == b"PK-data"


# ---- lost responses (issue 12.8): the write was made, the answer is a 502 ---------------------


def test_status_comment_posted_once_when_the_answer_is_lost(server):
    model = server.model
    pr = model.add_pull(INFX, head="f")
    model.fail_next("POST", r"/issues/\d+/comments$", 502, apply=True)
    made = client(server).comments.create(
        INFX, pr["number"], "<!-- m -->\nstatus", marker="<!-- m -->"
    )
    [comment] = model.comments_on(INFX, pr["number"])
    assert made.id == comment["id"] and comment["body"] == "<!-- m -->\nstatus"
    posts = [r for r in model.log if r.method == "POST"]
    assert len(posts) == 1  # looked up, found, not posted again


def test_a_comment_that_was_not_made_is_posted_again(server):
    model = server.model
    pr = model.add_pull(INFX, head="f")
    model.fail_next("POST", r"/issues/\d+/comments$", 502)  # refused, nothing made
    client(server).comments.create(INFX, pr["number"], "hello")
    assert [c["body"] for c in model.comments_on(INFX, pr["number"])] == ["hello"]
    assert len([r for r in model.log if r.method == "POST"]) == 2


def test_pull_request_created_once_when_the_answer_is_lost(server):
    model = server.model
    model.fail_next("POST", r"/pulls$", 502, apply=True)
    gh = client(server)
    pull = gh.pulls.create(
        INFX, title="t", body="b", head="SemiAnalysisAI:infx-sync/x", base="main"
    )
    [made] = model.repo(INFX).pulls.values()
    assert (pull.number, pull.head_ref, made["user"]) == (
        made["number"],
        "infx-sync/x",
        "cookbook-sync-bot",
    )
    assert len([r for r in model.log if r.method == "POST"]) == 1


def test_422_already_exists_means_found_it(server):
    # The first POST made the PR and its answer was lost in a way the client could not see
    # (a proxy timeout): the next POST gets 422 "already exists", which means "there it is".
    model = server.model
    model.fail_next("POST", r"/pulls$", 422, apply=True, message="Validation Failed")
    taken = "A pull request already exists for SemiAnalysisAI:infx-sync/x."
    model.faults[-1].body = model.validation_failed("PullRequest", "custom", None, taken)
    pull = client(server).pulls.create(
        INFX, title="t", body="b", head="SemiAnalysisAI:infx-sync/x", base="main"
    )
    assert [p["number"] for p in model.repo(INFX).pulls.values()] == [pull.number]
    # Someone else's PR on that head is not the bot's: the 422 stays an error.
    other = model.add_pull(INFX, head="infx-sync/y", user="mallory")
    with pytest.raises(SyncError, match="422"):
        client(server).pulls.create(
            INFX, title="t", body="b", head="SemiAnalysisAI:infx-sync/y", base="main"
        )
    assert other["user"] == "mallory"


def test_a_large_download_shows_its_bytes_on_a_terminal(server, tmp_path, monkeypatch, stderr_as):
    server.model.add_run(INFX, 7, head_sha="a" * 40, artifacts={"server_logs_big": b"0" * 3000})
    gh = client(server)
    [art] = gh.actions.artifacts(INFX, 7)
    monkeypatch.setattr(progress, "MIN_BYTES", 1000)  # "large": over the threshold
    buf = stderr_as(True)
    gh.actions.download(art, tmp_path / "big.zip")
    assert "downloading server_logs_big" in buf.getvalue()
    assert "/3.0 kB" in buf.getvalue()  # the artifact size GitHub gave
    # Below the threshold, or when stderr is not a terminal, nothing is shown.
    monkeypatch.setattr(progress, "MIN_BYTES", 4000)
    buf = stderr_as(True)
    gh.actions.download(art, tmp_path / "small.zip")
    assert buf.getvalue() == ""


def test_a_listed_pr_is_merged_by_its_merged_at(server):
    # GET /pulls answers pull-request-simple objects: no "merged", only "merged_at". Reading
    # "merged" there called every merged PR "closed without merging".
    model = server.model
    merged = model.add_pull(INFX, head="infx-sync/m")
    merged["state"], merged["merged"] = "closed", True
    closed = model.add_pull(INFX, head="infx-sync/m")
    closed["state"] = "closed"
    gh = client(server)
    listed = gh.pulls.find(INFX, "SemiAnalysisAI:infx-sync/m")
    assert [(p.number, p.state, p.merged) for p in listed] == [
        (closed["number"], "closed", False),
        (merged["number"], "closed", True),
    ]
    assert gh.pulls.get(INFX, merged["number"]).merged is True
    [answer] = [r for r in model.log if r.path == f"/repos/{INFX}/pulls"]
    assert answer.method == "GET"


SECONDARY = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)


def _bare_with_branch(tmp_path, branch: str, *, ahead: bool) -> str:
    """A bare repository whose ``branch`` is ``main`` plus one commit (``ahead``) or ``main``."""
    from botworld import git

    work, bare = tmp_path / "work", tmp_path / "repo.git"
    git("init", "--quiet", "--initial-branch=main", str(work), cwd=tmp_path)
    (work / "f").write_text("1")
    git("add", "f", cwd=work)
    git("commit", "--quiet", "-m", "one", cwd=work)
    git("checkout", "--quiet", "-b", branch, cwd=work)
    if ahead:
        (work / "f").write_text("2")
        git("commit", "--quiet", "-am", "two", cwd=work)
    git("clone", "--quiet", "--bare", str(work), str(bare), cwd=tmp_path)
    return str(bare)


def test_pr_refusals_read_as_github_words_them(server, tmp_path):
    # 422 bodies carry errors[{resource, code, field, message}]: the message when GitHub
    # wrote one, else resource.field and the code. Never a Python repr of the list.
    from pathlib import Path

    model = server.model
    model.git_dirs[INFX] = Path(_bare_with_branch(tmp_path, "infx-sync/same", ahead=False))
    gh = client(server)
    with pytest.raises(SyncError) as empty:
        gh.pulls.create(
            INFX, title="t", body="b", head="SemiAnalysisAI:infx-sync/same", base="main"
        )
    assert str(empty.value) == (
        f"GitHub API 422 on POST /repos/{INFX}/pulls: Validation Failed: "
        "No commits between main and SemiAnalysisAI:infx-sync/same"
    )
    with pytest.raises(SyncError) as invalid:
        gh.pulls.create(
            INFX, title="t", body="b", head="SemiAnalysisAI:infx-sync/gone", base="main"
        )
    assert str(invalid.value).endswith("Validation Failed: PullRequest.head invalid")
    assert model.repo(INFX).pulls == {}


def test_maintainer_edits_refused_for_an_organizations_fork_are_dropped(server, tmp_path):
    from pathlib import Path

    model = server.model
    model.orgs.add("infx-org")
    model.repo("infx-org/InferenceX").fork = True
    model.git_dirs["infx-org/InferenceX"] = Path(_bare_with_branch(tmp_path, "b", ahead=True))
    pull = client(server).pulls.create(INFX, title="t", body="b", head="infx-org:b", base="main")
    posts = [r.body for r in model.log if r.method == "POST"]
    assert [p["maintainer_can_modify"] for p in posts] == [True, False]
    assert (pull.head_repo, pull.maintainer_can_modify) == ("infx-org/InferenceX", False)
    # A user's fork keeps it.
    model.repo("someone/InferenceX").fork = True
    model.git_dirs["someone/InferenceX"] = model.git_dirs["infx-org/InferenceX"]
    kept = client(server).pulls.create(INFX, title="t", body="b", head="someone:b", base="main")
    assert kept.maintainer_can_modify is True


def test_secondary_rate_limit_without_retry_after_waits_then_looks_before_posting(server):
    # GitHub's guidance: no Retry-After and requests left: wait at least a minute (here
    # secondary_wait), longer on each refusal; a POST is sent again only after the lookup.
    model = server.model
    pr = model.add_pull(INFX, head="f")
    model.fail_next("POST", r"/issues/\d+/comments$", 403, message=SECONDARY, times=2)
    model.fail_next("GET", r"/pulls/\d+$", 403, message=SECONDARY)
    gh = client(server, secondary_wait=0.01)
    assert gh.pulls.get(INFX, pr["number"]).number == pr["number"]
    made = gh.comments.create(INFX, pr["number"], "hello", marker="hello")
    trail = [(r.method, r.path.rsplit("/", 1)[-1]) for r in model.log if "/issues/" in r.path]
    assert trail == [("POST", "comments"), ("GET", "comments")] * 2 + [("POST", "comments")]
    assert [c["id"] for c in model.comments_on(INFX, pr["number"])] == [made.id]


def test_secondary_rate_limit_waits_grow_and_stop_at_the_cap(server):
    from github import GithubException

    gh = client(server, secondary_wait=60, max_wait=200)
    refused = GithubException(403, {"message": SECONDARY}, {"x-ratelimit-remaining": "4999"})
    assert [gh.api.post_wait(refused, n) for n in (0, 1)] == [60, 120]
    with pytest.raises(Exception, match="over the 200s cap"):
        gh.api.post_wait(refused, 2)
    other = GithubException(403, {"message": "Resource not accessible by integration"}, {})
    assert gh.api.post_wait(other, 0) is None  # a refusal, not a limit: final


def test_a_dropped_connection_after_the_write_posts_once(server):
    from ghserver import DROP

    model = server.model
    pr = model.add_pull(INFX, head="f")
    model.fail_next("POST", r"/issues/\d+/comments$", DROP, apply=True)
    made = client(server).comments.create(INFX, pr["number"], "body <!-- m -->", marker="<!-- m")
    [comment] = model.comments_on(INFX, pr["number"])
    assert made.id == comment["id"]
    assert len([r for r in model.log if r.method == "POST"]) == 1


def test_updated_at_moves_on_every_write(server):
    model = server.model
    pr = model.add_pull(INFX, head="f")
    gh = client(server)
    made = gh.comments.create(INFX, pr["number"], "one")
    gh.comments.edit(INFX, made.id, "two")
    edited = gh.comments.get(INFX, made.id)
    gh.comments.edit(INFX, made.id, "three")
    again = gh.comments.get(INFX, made.id)
    assert made.created_at == made.updated_at < edited.updated_at < again.updated_at
    assert again.created_at == made.created_at


def test_a_pr_of_more_than_250_commits_is_read_whole(server):
    model = server.model
    shas = [f"{i:040x}" for i in range(1, 321)]
    pr = model.add_pull(INFX, head="long", commits=shas)
    assert client(server).pulls.commits(INFX, pr["number"]) == shas
    listed = [r for r in model.log if r.path.endswith("/commits") and "/pulls/" in r.path]
    assert len(listed) == 3  # 100 + 100 + 50: GitHub stops there however many are asked


def test_an_app_token_is_refused_get_user_and_its_login_must_be_given(server):
    app = "ghs_" + "A" * 36
    server.model.add_token(app, "infx-sync[bot]")
    with pytest.raises(SyncError, match=r"<app-slug>\[bot\], in SYNC_INFX_LOGIN"):
        GitHubClient(app, base_url=server.base_url, pause=0, backoff=0.01).login()
    given = GitHubClient(app, base_url=server.base_url, pause=0, login="infx-sync[bot]")
    assert given.login() == "infx-sync[bot]"
    assert [r.path for r in server.model.log] == ["/user"]  # asked once, by the first only


def test_a_download_refused_by_a_secondary_rate_limit_is_retried(server, tmp_path):
    model = server.model
    data = _zip({"server.log": "x"})
    model.add_run(INFX, 9, head_sha="a" * 40, artifacts={"server_logs_x": data})
    [art] = client(server).actions.artifacts(INFX, 9)
    model.fail_next("GET", r"/actions/artifacts/\d+/zip$", 403, message=SECONDARY)
    path = client(server, secondary_wait=0.01).actions.download(art, tmp_path / "a.zip")
    assert path.read_bytes() == data
    model.fail_next("GET", r"/actions/artifacts/\d+/zip$", 403, message=SECONDARY)
    with pytest.raises(SyncError, match="over the 30s cap"):
        client(server, secondary_wait=60, max_wait=30).actions.download(art, tmp_path / "b.zip")
    assert not (tmp_path / "b.zip").exists()
