"""Issue and PR comments and their reactions through the API: read, posted (once, whatever
answer is lost), edited, deleted."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from syncer.github.api import Api, NotFound
from syncer.github.plan import Plan
from syncer.github.records import (
    Comment,
    Reaction,
    comment_record,
    reaction_record,
)


class Comments:
    """Comments of a repository's issues and PRs; writes consult ``plan`` (described only in a
    dry run)."""

    def __init__(self, api: Api, plan: Plan, dry_ids: Iterator[int]) -> None:
        self.api = api
        self.plan = plan
        self._dry_ids = dry_ids

    def on(self, repo: str, number: int) -> list[Comment]:
        return self.api.pages(f"/repos/{repo}/issues/{number}/comments", comment_record)

    def get(self, repo: str, comment_id: int) -> Comment:
        path = f"/repos/{repo}/issues/comments/{comment_id}"
        return self.api.json("GET", path, parse=comment_record)

    def reactions(self, repo: str, comment_id: int) -> list[Reaction]:
        path = f"/repos/{repo}/issues/comments/{comment_id}/reactions"
        return self.api.pages(path, reaction_record)

    def create(self, repo: str, number: int, body: str, *, marker: str | None = None) -> Comment:
        """Post a comment. When the answer is lost, the bot's own comment carrying ``marker``
        (or this very body) is looked up before posting again: one comment, never two."""
        self.plan.note(f"POST /repos/{repo}/issues/{number}/comments ({len(body)} chars)\n{body}")
        if self.plan.dry_run:
            return Comment(next(self._dry_ids), body, self.api.login(), "NONE", "", "")
        me = self.api.login()

        def find() -> Comment | None:
            mine = [
                c
                for c in self.on(repo, number)
                if c.user == me and (c.body == body or (marker is not None and marker in c.body))
            ]
            return mine[-1] if mine else None

        path = f"/repos/{repo}/issues/{number}/comments"
        return self.api.post(path, {"body": body}, find, parse=comment_record)

    def edit(self, repo: str, comment_id: int, body: str) -> None:
        self.plan.note(
            f"PATCH /repos/{repo}/issues/comments/{comment_id} ({len(body)} chars)\n{body}"
        )
        if not self.plan.dry_run:
            path = f"/repos/{repo}/issues/comments/{comment_id}"
            self.api.json("PATCH", path, body={"body": body})

    def delete(self, repo: str, comment_id: int) -> None:
        """Delete a comment; one already gone is not an error (another job deleted it)."""
        self.plan.note(f"DELETE /repos/{repo}/issues/comments/{comment_id}")
        if not self.plan.dry_run:
            with contextlib.suppress(NotFound):
                self.api.json("DELETE", f"/repos/{repo}/issues/comments/{comment_id}")

    def react(self, repo: str, comment_id: int, content: str) -> None:
        self.plan.note(f"POST /repos/{repo}/issues/comments/{comment_id}/reactions {content}")
        if not self.plan.dry_run:
            # GitHub answers an existing reaction with 200: posting it again is harmless.
            path = f"/repos/{repo}/issues/comments/{comment_id}/reactions"
            self.api.post(path, {"content": content}, None, parse=reaction_record)

    def unreact(self, repo: str, comment_id: int, reaction_id: int) -> None:
        path = f"/repos/{repo}/issues/comments/{comment_id}/reactions/{reaction_id}"
        self.plan.note(f"DELETE {path}")
        if not self.plan.dry_run:
            self.api.json("DELETE", path)
