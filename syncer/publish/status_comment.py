"""The bot's comments on an InferenceX PR: one per model and milestone (discovery), or the one
status comment with a section per model, posted, edited, and settled with the other models'
jobs of the same event.

The text (one per model and milestone, the markers, the state in the cookbook PR body) is
``status.py``'s; this module finds the bot's comments through the API and writes them, in the
one way a comment of the bot is written (:meth:`StatusComments._post_or_edit`).
"""

from __future__ import annotations

from syncer.github.client import GitHubClient
from syncer.github.plan import Plan
from syncer.github.records import Comment
from syncer.publish import status as st
from syncer.publish.bodies import fit_comment
from syncer.publish.settings import Outcome, Settings


class StatusComments:
    """The bot's status comments on InferenceX PRs, written through ``gh``."""

    def __init__(self, settings: Settings, *, gh: GitHubClient, plan: Plan, out: Outcome) -> None:
        self.settings = settings
        self.gh = gh
        self.plan = plan
        self.out = out

    def _order(self) -> list[str]:
        return [m.path for m in self.settings.config.models]

    def report(self, number: int, items: list[st.StatusItem], *, create: bool = True) -> None:
        """The bot's word on ``items``' configs, one text per model (``status.render_model``),
        placed as the run's mode wants it: with the bot's InferenceX clone (discovery) one
        comment per model and milestone, else a section of the PR's one status comment.
        ``create=False`` (a closed PR): a milestone is posted only where the bot already
        commented for the model, and the status comment is only edited."""
        comments = self.gh.comments.on(self.settings.inferencex_repo, number)
        if self.settings.inferencex_clone is None:
            self._status_comment(number, comments, items, create=create)
            return
        me = self.gh.login()
        for path, group in st.by_model(items).items():
            marker, body = st.render_milestone(group, self.settings.cookbook_repo)
            prefix = f"{st.MILESTONE_PREFIX}{path} "
            commented = any(c.user == me and c.body.startswith(prefix) for c in comments)
            self._write(number, comments, marker, fit_comment(body), create=create or commented)

    def reported(self, comments: list[Comment], model_path: str) -> bool:
        """Whether ``comments`` hold the bot's word on the model: a milestone comment
        (discovery), else its section of the one status comment."""
        me = self.gh.login()
        if self.settings.inferencex_clone is not None:
            prefix = f"{st.MILESTONE_PREFIX}{model_path} "
            return any(c.user == me and c.body.startswith(prefix) for c in comments)
        status = st.find_marked(comments, me, st.STATUS_MARKER)
        return status is not None and model_path in st.read_sections(status.body)

    def _status_comment(
        self, number: int, comments: list[Comment], items: list[st.StatusItem], *, create: bool
    ) -> None:
        """Post or edit the PR's one status comment, each model a section of it: this run's
        models' sections rewritten, the others' (other models' jobs) kept."""
        existing = st.find_marked(comments, self.gh.login(), st.STATUS_MARKER)
        keep: dict[str, str] = {}
        if existing is not None and self.settings.model is not None:
            keep = {
                path: text
                for path, text in st.read_sections(existing.body).items()
                if path != self.settings.model
            }
        body = fit_comment(
            st.render_status(items, self.settings.cookbook_repo, keep=keep, order=self._order())
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
        if self.settings.model is not None and not self.plan.dry_run and (existing or create):
            self._settle(number, st.read_sections(body).get(self.settings.model))

    def unmapped(self, number: int, reasons: list[str], poster: str | None) -> None:
        """The PR's AgentX configs that no cookbook page takes, named (never silently dropped);
        written by one job of the event, ``poster``'s (or a run for every model)."""
        if self.settings.model not in (None, poster):
            return
        comments = self.gh.comments.on(self.settings.inferencex_repo, number)
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
        repo = self.settings.inferencex_repo
        if existing is None:
            self.gh.comments.create(repo, number, body, marker=marker)
            self.out.did(f"PR #{number}: {posted[0]}", f"PR #{number}: {posted[1]}")
        elif existing.body != body:
            self.gh.comments.edit(repo, existing.id, body)
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
        repo, me = self.settings.inferencex_repo, self.gh.login()
        for _ in range(3):
            found = [
                c
                for c in self.gh.comments.on(repo, number)
                if c.user == me and c.body.startswith(st.STATUS_MARKER)
            ]
            if not found:
                return
            found.sort(key=lambda c: (c.created_at, c.id))
            sections: dict[str, str] = {}
            for comment in sorted(found, key=lambda c: (c.updated_at, c.id)):
                sections.update(st.read_sections(comment.body))
            if mine is not None:
                sections[self.settings.model or ""] = mine
            keeper, extras = found[0], found[1:]
            body = st.render_status(
                [], self.settings.cookbook_repo, keep=sections, order=self._order()
            )
            if keeper.body == body and not extras:
                return
            if keeper.body != body:
                self.gh.comments.edit(repo, keeper.id, fit_comment(body))
            for extra in extras:
                self.gh.comments.delete(repo, extra.id)
            self.out.say(f"PR #{number}: status comment {keeper.id} merged with another job's")
