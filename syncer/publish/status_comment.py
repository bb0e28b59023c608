"""The one status comment on an InferenceX PR: posted, edited, and settled with the other
models' jobs of the same event.

The text (sections, markers, the state in the cookbook PR body) is ``status.py``'s; this module
finds the bot's comment through the API and writes it.
"""

from __future__ import annotations

from syncer.publish import status as st
from syncer.publish.bodies import fit_comment
from syncer.publish.github import Comment, GitHubClient, Plan
from syncer.publish.settings import Outcome, Settings


class StatusComments:
    """The bot's status comments on InferenceX PRs, written through ``gh``."""

    def __init__(self, settings: Settings, *, gh: GitHubClient, plan: Plan, out: Outcome) -> None:
        self.s = settings
        self.gh = gh
        self.plan = plan
        self.out = out

    def _order(self) -> list[str]:
        return [m.path for m in self.s.config.models]

    def upsert(self, number: int, items: list[st.StatusItem], *, create: bool = True) -> None:
        """Post or edit the PR's one status comment; ``create=False`` only edits an existing one."""
        repo = self.s.inferencex_repo
        existing = st.find_status_comment(self.gh.comments(repo, number), self.gh.login())
        keep: dict[str, str] = {}
        if existing is not None and self.s.model is not None:
            # This run writes its own model's section; the other models' jobs write theirs.
            keep = {
                path: text
                for path, text in st.read_sections(existing.body).items()
                if path != self.s.model
            }
        body = fit_comment(
            st.render_status(items, self.s.cookbook_repo, keep=keep, order=self._order())
        )
        if existing is None and not create:
            self.out.say(f"PR #{number}: no status comment to update")
        else:
            self._post_or_edit(
                number,
                existing,
                body,
                st.STATUS_MARKER,
                posted=("status comment posted", "would post the status comment"),
                edited=("status comment {id} edited", "would edit status comment {id}"),
                current="status comment already current",
            )
        if self.s.model is not None and not self.plan.dry_run and (existing or create):
            self._settle(number, st.read_sections(body).get(self.s.model))

    def milestones(self, number: int, items: list[st.StatusItem], *, create: bool = True) -> None:
        """One comment per model and milestone (cookbook PR will happen in #N, has been merged,
        the update with a pin): a new milestone is a NEW comment, because GitHub notifies the
        PR's participants of new comments and not of edits; the comment of a milestone already
        posted (found by its hidden marker) is edited when its text changes, so a replayed
        event never posts it twice. ``create=False`` (a closed PR): a new milestone is posted
        only where the bot already commented for the model."""
        repo, me = self.s.inferencex_repo, self.gh.login()
        comments = self.gh.comments(repo, number)
        groups: dict[str, list[st.StatusItem]] = {}
        for item in items:
            groups.setdefault(item.model_path, []).append(item)
        for path, group in groups.items():
            marker, body = st.render_milestone(group, self.s.cookbook_repo)
            model_prefix = f"{st.MILESTONE_PREFIX}{path} "
            self._write(number, comments, marker, fit_comment(body), create=create or any(
                c.user == me and c.body.startswith(model_prefix) for c in comments
            ))  # fmt: skip

    def unmapped(self, number: int, reasons: list[str], poster: str | None) -> None:
        """The PR's AgentX configs that no cookbook page takes, named (never silently dropped);
        written by one job of the event, ``poster``'s (or a run for every model)."""
        if self.s.model not in (None, poster):
            return
        comments = self.gh.comments(self.s.inferencex_repo, number)
        body = fit_comment(st.render_unmapped(reasons))
        self._write(number, comments, st.UNMAPPED_MARKER, body, create=True)

    def _write(
        self, number: int, comments: list[Comment], marker: str, body: str, *, create: bool
    ) -> None:
        existing = st.find_marked(comments, self.gh.login(), marker)
        what = marker.removeprefix(st.MILESTONE_PREFIX).removesuffix(" -->")
        if existing is None and not create:
            self.out.say(f"PR #{number}: no comment of the bot for this model; {what} not posted")
        else:
            self._post_or_edit(
                number,
                existing,
                body,
                marker,
                posted=(f"comment posted ({what})", f"would post a comment ({what})"),
                edited=(f"comment {{id}} edited ({what})", f"would edit comment {{id}} ({what})"),
                current=f"comment {{id}} already current ({what})",
            )

    def _post_or_edit(
        self,
        number: int,
        existing: Comment | None,
        body: str,
        marker: str,
        *,
        posted: tuple[str, str],
        edited: tuple[str, str],
        current: str,
    ) -> None:
        """The one way a comment of the bot is written: posted when absent, edited when its text
        changed, left alone when current. The wordings (done, would do) name the comment;
        ``{id}`` in them is the existing comment's id."""
        repo = self.s.inferencex_repo
        if existing is None:
            self.gh.create_comment(repo, number, body, marker=marker)
            self.out.did(f"PR #{number}: {posted[0]}", f"PR #{number}: {posted[1]}")
        elif existing.body != body:
            self.gh.edit_comment(repo, existing.id, body)
            done, would = (text.format(id=existing.id) for text in edited)
            self.out.did(f"PR #{number}: {done}", f"PR #{number}: {would}")
        else:
            self.out.say(f"PR #{number}: {current.format(id=existing.id)}")

    def _settle(self, number: int, mine: str | None) -> None:
        """Make the one status comment hold this run's section, after the other models' jobs
        of the same event wrote theirs at the same time (each job is in its own model's
        concurrency group, so nothing serialises their edits of the PR's one comment).

        Read back what is there: a comment whose copy of this section is stale (another job
        wrote over it with what it had read before) is edited again; a second status comment
        (two jobs that both found none and posted) is merged into the oldest and deleted. Every
        other section is taken from the newest comment that has it."""
        repo, me = self.s.inferencex_repo, self.gh.login()
        for _ in range(3):
            found = [
                c
                for c in self.gh.comments(repo, number)
                if c.user == me and c.body.startswith(st.STATUS_MARKER)
            ]
            if not found:
                return
            found.sort(key=lambda c: (c.created_at, c.id))
            sections: dict[str, str] = {}
            for comment in sorted(found, key=lambda c: (c.updated_at, c.id)):
                sections.update(st.read_sections(comment.body))
            if mine is not None:
                sections[self.s.model or ""] = mine
            keeper, extras = found[0], found[1:]
            body = st.render_status([], self.s.cookbook_repo, keep=sections, order=self._order())
            if keeper.body == body and not extras:
                return
            if keeper.body != body:
                self.gh.edit_comment(repo, keeper.id, fit_comment(body))
            for extra in extras:
                self.gh.delete_comment(repo, extra.id)
            self.out.say(f"PR #{number}: status comment {keeper.id} merged with another job's")
