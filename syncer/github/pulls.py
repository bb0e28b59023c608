"""Pull requests through the API: read, listed, opened (once, whatever answer is lost), edited."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from github import GithubException

from syncer.github.api import Api, validation_errors
from syncer.github.plan import Plan
from syncer.github.records import PLANNED, Json, Pull, PullState, commit_sha, pull_record
from syncer.github.shapes import each
from syncer.wording import js

# GET /pulls/{n}/commits never lists more than a PR's first 250 commits.
MAX_PR_COMMITS = 250
# How far back from a long PR's head its newer commits are looked for (100 a page).
MAX_WALK_PAGES = 20


class Pulls:
    """A repository's pull requests; writes consult ``plan`` (described only in a dry run)."""

    def __init__(self, api: Api, plan: Plan, dry_ids: Iterator[int]) -> None:
        self.api = api
        self.plan = plan
        self._dry_ids = dry_ids

    def get(self, repo: str, number: int) -> Pull:
        return self.api.json(
            "GET", f"/repos/{repo}/pulls/{number}", parse=lambda data: pull_record(repo, data)
        )

    def commits(self, repo: str, number: int) -> list[str]:
        """The PR's commits, oldest first. GitHub lists at most the first 250 of them; the
        newer ones of a longer PR are walked back from its head (``GET /commits?sha=``, newest
        first) until a listed one is met."""
        listed = self.api.pages(f"/repos/{repo}/pulls/{number}/commits", commit_sha)
        if len(listed) < MAX_PR_COMMITS:
            return listed
        known, newer = set(listed), list[str]()
        head = self.get(repo, number).head_sha
        for page in range(1, MAX_WALK_PAGES + 1):
            params = {"sha": head, "per_page": 100, "page": page}
            shas = self.api.json("GET", f"/repos/{repo}/commits", params=params, parse=_commit_shas)
            for sha in shas:
                if sha in known:
                    return listed + newer[::-1]
                newer.append(sha)
            if len(shas) < 100:
                break
        return listed + newer[::-1]

    def open(self, repo: str) -> list[Pull]:
        """The repository's open pull requests (every page), oldest first."""
        listed = self.api.pages(f"/repos/{repo}/pulls", lambda p, at: pull_record(repo, p, at))
        return sorted(listed, key=lambda p: p.number)

    def recently_closed(self, repo: str) -> list[Pull]:
        """The 100 closed pull requests updated last (one request, whatever is open): where a
        ``closed`` event GitHub dropped since the last scheduled run is found."""
        params = {"state": "closed", "sort": "updated", "direction": "desc", "per_page": 100}
        return self.api.json(
            "GET", f"/repos/{repo}/pulls", params=params, parse=lambda data: _pulls(repo, data)
        )

    def find(self, repo: str, head: str, *, state: str = "all") -> list[Pull]:
        """Pull requests whose head is ``owner:branch``, newest first."""
        listed = self.api.json(
            "GET",
            f"/repos/{repo}/pulls",
            params={"head": head, "state": state, "per_page": 100},
            parse=lambda data: _pulls(repo, data),
        )
        return sorted(listed, key=lambda p: -p.number)

    def create(
        self,
        repo: str,
        *,
        title: str,
        body: str,
        head: str,
        base: str,
        maintainer_can_modify: bool = True,
    ) -> Pull:
        self.plan.note(
            f"POST /repos/{repo}/pulls head={head} base={base} title={js(title, None)} "
            f"({len(body)} chars)\n{body}"
        )
        if self.plan.dry_run:
            return self._planned(repo, title, body, head, base)
        me = self.api.login()

        def find() -> Pull | None:
            # The open PR of this head made by the bot: the one a lost answer created, read
            # whole (a listed pull-request-simple leaves out maintainer_can_modify).
            found = self.api.json(
                "GET",
                f"/repos/{repo}/pulls",
                params={"head": head, "state": str(PullState.OPEN)},
                parse=lambda data: _pulls(repo, data),
            )
            mine = [p for p in found if p.user == me]
            return self.get(repo, mine[0].number) if mine else None

        pull = self.api.post(
            f"/repos/{repo}/pulls",
            {
                "title": title,
                "body": body,
                "head": head,
                "base": base,
                "maintainer_can_modify": maintainer_can_modify,
            },
            find,
            parse=lambda data: pull_record(repo, data),
            exists=_already_exists,
            amend=_without_edits,
        )
        if (pull.title, pull.body) != (title, body):
            # Found rather than made (an earlier run's PR the listing had not shown yet): it
            # gets this run's title and body, as the one PR of this head must.
            pull = self.api.json(
                "PATCH",
                f"/repos/{repo}/pulls/{pull.number}",
                body={"title": title, "body": body},
                parse=lambda data: pull_record(repo, data),
            )
        return pull

    def _planned(self, repo: str, title: str, body: str, head: str, base: str) -> Pull:
        """The PR a dry run would open: no number yet (``PLANNED``)."""
        return Pull(
            repo,
            PLANNED,
            title,
            body,
            PullState.OPEN,
            False,
            self.api.login(),
            head.split(":")[-1],
            "",
            head.split(":")[0],
            base,
            (),
            "",
        )

    def update(
        self,
        repo: str,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: PullState | None = None,
    ) -> None:
        # str(): the plan shows and the API gets a state as GitHub spells it.
        fields = {
            k: str(v)
            for k, v in (("title", title), ("body", body), ("state", state))
            if v is not None
        }
        shown = ", ".join(
            f"{k}" + (f"={js(v, None)}" if k != "body" else f" ({len(v)} chars)")
            for k, v in fields.items()
        )
        self.plan.note(
            f"PATCH /repos/{repo}/pulls/{number} {shown}"
            + (f"\n{body}" if body is not None else "")
        )
        if not self.plan.dry_run:
            self.api.json("PATCH", f"/repos/{repo}/pulls/{number}", body=fields)


def _pulls(repo: str, data: Json) -> list[Pull]:
    return [pull_record(repo, p, at) for at, p in each(data)]


def _commit_shas(data: Json) -> list[str]:
    return [commit_sha(c, at) for at, c in each(data)]


def _already_exists(exc: GithubException) -> bool:
    """GitHub's 422 for a second PR of the same head ("A pull request already exists for
    owner:branch."): the PR is there, made by an earlier attempt whose answer was lost."""
    return exc.status == 422 and any("already exists" in m for _f, _c, m in validation_errors(exc))


def _without_edits(exc: GithubException, sent: dict[str, Any]) -> dict[str, Any] | None:
    # GitHub refuses to let maintainers push to a branch of an organization's fork: the PR is
    # opened without it (the caller sees maintainer_can_modify false).
    if sent.get("maintainer_can_modify") and _fork_collab_refused(exc):
        return {**sent, "maintainer_can_modify": False}
    return None


def _fork_collab_refused(exc: GithubException) -> bool:
    """GitHub's 422 when maintainers may not be let push to the head branch (a fork owned by
    an organization): ``{"field": "fork_collab", "code": "custom"}``."""
    return exc.status == 422 and any(
        field == "fork_collab" or "fork collab" in message.lower()
        for field, _code, message in validation_errors(exc)
    )
