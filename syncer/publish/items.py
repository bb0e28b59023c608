"""What the bot's comments say of each config: a ``StatusItem`` built from its pin and its
cookbook PRs, the one way both bot modes (milestone comments, the one status comment) get it."""

from __future__ import annotations

from collections.abc import Callable

from syncer import links
from syncer.model import PointStatus
from syncer.publish import status as st
from syncer.publish.settings import Settings
from syncer.syncconfig import ModelSpec, Pin


class Items:
    """``StatusItem``s of one event; ``cookbook_login`` names the bot's cookbook account (whose
    merged PRs say since when a config is live)."""

    def __init__(self, settings: Settings, cookbook_login: Callable[[], str]) -> None:
        self.settings = settings
        self.cookbook_login = cookbook_login

    def item(
        self,
        model: ModelSpec,
        key: str,
        head_sha: str,
        *,
        pin: Pin | None = None,
        result: st.PublishResult | None = None,
        refusal: str | None = None,
        error: str | None = None,
        source_closed: bool = False,
        open_pr: int | None = None,
        merged_pr: int | None = None,
        closed_pr: int | None = None,
        kept_for: list[int] | None = None,
    ) -> st.StatusItem:
        """The status of config ``key``: where it goes, its pin (none: in progress) and, given
        ``result``, the bot's cookbook PRs for it (else ``open_pr``/``merged_pr``/``closed_pr``)."""
        item = st.StatusItem(
            key=key,
            model=model.model,
            model_path=model.path,
            section=model.section,
            page_url=links.page_url(self.settings.docs_url, model.page, model.section),
            head_sha=head_sha,
            status=pin.status if pin else PointStatus.IN_PROGRESS,
            refusal=refusal,
            error=error,
            source_closed=source_closed,
            open_pr=open_pr,
            merged_pr=merged_pr,
            closed_pr=closed_pr,
            kept_for=kept_for or [],
        )
        item.shown_sha = pin.sha if pin is not None and pin.sha else head_sha
        if pin is not None and pin.run:
            item.run, item.run_url = pin.run, links.run_url(self.settings.inferencex_repo, pin.run)
        if result is not None:
            merged_with = result.merged_with(key, self.cookbook_login(), model.path)
            item.open_pr = result.open_pr.number if result.open_pr else None
            item.merged_pr = merged_with[0] if merged_with else None
            item.closed_pr = result.closed.number if result.closed else None
            item.kept_published = result.unrendered.get(key)
            item.kept_cells = list(result.kept_cells.get(key, []))
            if item.open_pr is None and item.merged_pr is not None:
                # The milestone is that merge's own, told from the pin it published (as the
                # schedule tells it): a later push that changed none of the config's files
                # must not rewrite it with the new head, nor the schedule rewrite it back.
                item.head_sha = item.shown_sha
        return item
