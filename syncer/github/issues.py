"""Issues through the API (the audit's dashboard): listed, opened once, edited in place."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from syncer.github.api import Api
from syncer.github.plan import Plan
from syncer.github.records import Issue, Json, is_pull, issue_record
from syncer.github.shapes import each


class Issues:
    """A repository's issues (pull requests, which GitHub lists among them, left out); writes
    consult ``plan`` (described only in a dry run)."""

    def __init__(self, api: Api, plan: Plan, dry_ids: Iterator[int]) -> None:
        self.api = api
        self.plan = plan
        self._dry_ids = dry_ids

    def labelled(self, repo: str, *, label: str, creator: str) -> list[Issue]:
        """Every issue (open or closed) of ``creator`` carrying ``label``, oldest first."""
        found: list[Issue] = []
        page = 1
        while True:
            params = {"labels": label, "creator": creator, "state": "all", "per_page": 100}
            listed, chunk = self.api.json(
                "GET",
                f"/repos/{repo}/issues",
                params={**params, "page": page},
                parse=lambda data: _issues(repo, data),
            )
            found.extend(listed)
            if chunk < 100:
                return sorted(found, key=lambda i: i.number)
            page += 1

    def create(self, repo: str, title: str, body: str, *, labels: list[str], marker: str) -> Issue:
        """Open an issue. When the answer is lost, the bot's own issue carrying ``marker`` is
        looked up before posting again: one issue, never two."""
        self.plan.note(f"POST /repos/{repo}/issues {title!r} ({len(body)} chars)\n{body}")
        if self.plan.dry_run:
            return Issue(repo, next(self._dry_ids), title, body, "open", self.api.login(), (), "")
        me = self.api.login()

        def find() -> Issue | None:
            listed, _ = self.api.json(
                "GET",
                f"/repos/{repo}/issues",
                params={"creator": me, "state": "all", "per_page": 100},
                parse=lambda data: _issues(repo, data),
            )
            mine = [i for i in listed if marker in i.body]
            return mine[0] if mine else None

        return self.api.post(
            f"/repos/{repo}/issues",
            {"title": title, "body": body, "labels": labels},
            find,
            parse=lambda data: issue_record(repo, data),
        )

    def update(
        self,
        repo: str,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: str | None = None,
    ) -> None:
        """Edit an issue in place: its title, body, and state (``open`` / ``closed``)."""
        change: dict[str, Any] = {
            k: v for k, v in (("title", title), ("body", body), ("state", state)) if v is not None
        }
        if state == "closed":
            change["state_reason"] = "completed"
        size = f" ({len(body)} chars)" if body is not None else ""
        what = ", ".join(k for k in change if k != "body") or "body"
        self.plan.note(f"PATCH /repos/{repo}/issues/{number} {what}{size}\n{body or ''}")
        if not self.plan.dry_run:
            self.api.json("PATCH", f"/repos/{repo}/issues/{number}", body=change)


def _issues(repo: str, data: Json) -> tuple[list[Issue], int]:
    """The issues of a page of ``GET /issues`` (its pull requests left out), and how many
    entries the page held (a page of 100 is followed by another)."""
    listed = each(data)
    return [issue_record(repo, i, at) for at, i in listed if not is_pull(i, at)], len(listed)
