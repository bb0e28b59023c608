"""What one bot run is given (``Settings``) and what it reports (``Outcome``); the writes it makes
or plans are ``github.plan.Plan``.

Shared by the event routing, the GitHub client, the cookbook PR and the status comment, which
each read the settings and add lines to the one outcome.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from syncer import links
from syncer.syncconfig import SyncConfig


@dataclass
class Settings:
    config: SyncConfig
    inferencex: Path  # checkout of the InferenceX PR head: data, never executed
    cookbook: str  # cookbook checkout path or clone URL
    cache_dir: Path
    inferencex_repo: str = links.INFERENCEX_REPO
    cookbook_repo: str = links.COOKBOOK_REPO
    push_repo: str | None = None  # a fork to push the branch to (PR opened from it)
    push_url: str | None = None  # git URL of that fork
    snippets_dir: str = "docs/src/snippets/agentx"
    docs_url: str = links.DOCS_URL
    today: str | None = None
    # The one cookbook model this run handles (the workflow runs one job per model, each in its
    # model's concurrency group); None: every model the event touches.
    model: str | None = None
    # Downloaded runs (<run_id>/...) a dry run without a token reads instead of the artifacts.
    local_runs: Path | None = None
    # The bot's InferenceX clone (git objects only; PR heads and main are fetched into it):
    # configs are found from each PR's commits and read at their own commit. None: the
    # configs and pins sync.yaml lists, read from the ``inferencex`` checkout.
    inferencex_clone: Path | None = None
    inferencex_remote: str | None = None  # where they are fetched from (default: GitHub's)
    # The bot's srt-slurm clone (git objects only): a branch a runner cloned is rendered as it
    # was at the config's commit date. Discovery fetches its branches and tags once per event
    # from the URL InferenceX main's .gitmodules gives srt-slurm; None: such a branch is
    # judged at its head, and the PR body says so.
    srt_slurm_clone: Path | None = None
    # What the last scheduled runs found settled (``ledger.py``), kept between runs by the
    # workflow's cache; None: every open PR is read.
    ledger_dir: Path | None = None
    # The open PRs and their configs as the workflow's gate found them for this event
    # (``handoff.py``); None: each job lists and discovers them itself.
    handoff: Path | None = None

    @property
    def head_repo(self) -> str:
        """The repository the bot branch is pushed to (the fork, else the cookbook)."""
        return self.push_repo or self.cookbook_repo


@dataclass
class Outcome:
    """What one event did; ``lines`` are shown to the user (masked by the command)."""

    lines: list[str] = field(default_factory=list)
    dry_run: bool = False

    def say(self, text: str) -> None:
        self.lines.append(text)

    def did(self, done: str, would: str) -> None:
        """Report a write: as made, or in a dry run as what would be made (nothing was)."""
        self.say(f"{would} (dry run)" if self.dry_run else done)
