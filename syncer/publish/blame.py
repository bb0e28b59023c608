"""Who can fix an error that stopped a sync, and its text without the runner's paths.

An error comment on an InferenceX PR is read by the PR's author, who can fix only what the
PR brings. The cookbook module a sync writes holds every config of the model, each read at its
own commit (another open PR's, main's), and the sync also needs the cookbook clone and the
tool's own set-up; an error in any of those is not the author's to fix. The error's own words
tell which: a config key it names (the config failing to render or publish), else a file of a
commit's tree it names, else nothing of InferenceX (the clone, the API, the set-up).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

# Who is asked to fix it (status_comment.md.j2 words each).
AUTHOR = "author"  # this PR's files
OTHER_PR = "other-pr"  # another InferenceX PR's config, shown on the same page
MAINTAINERS = "maintainers"  # InferenceX main's config
OPERATORS = "operators"  # the tool's set-up, the cookbook clone, GitHub: not InferenceX's

# A tree written from a commit's objects (syncer.inferencex.commits.tree_at).
_TREE = re.compile(r"infx-tree-([0-9a-f]{7,40})-")
_KEY_CHARS = "A-Za-z0-9._-"


@dataclass(frozen=True)
class Fixer:
    who: str
    pr: int | None = None  # OTHER_PR: which


def fixer(
    text: str,
    number: int,
    owners: Mapping[str, str | None],
    commits: Mapping[str, str | None],
    checkout: Path | None = None,
) -> Fixer:
    """Who can fix the error ``text`` that stopped InferenceX PR ``number``'s sync.

    ``owners``: each config key of the model -> the PR it is shown from (None: main);
    ``commits``: each commit a config is read at -> its PR; ``checkout``: the one InferenceX
    checkout of a run without the bot's clone (the PR's head)."""
    named = [pr for key, pr in owners.items() if _names(text, key)]
    if not named:
        named = [pr for sha, pr in commits.items() if any(sha.startswith(t) for t in _trees(text))]
    if not named and checkout is not None and str(checkout.resolve()) in text:
        named = [str(number)]
    return _fixer(named, number)


def _fixer(named: Iterable[str | None], number: int) -> Fixer:
    prs = list(named)
    if not prs:
        return Fixer(OPERATORS)
    if str(number) in prs:
        return Fixer(AUTHOR)
    other = next((pr for pr in prs if pr), None)
    return Fixer(OTHER_PR, int(other)) if other else Fixer(MAINTAINERS)


def _names(text: str, key: str) -> bool:
    return re.search(f"(?<![{_KEY_CHARS}]){re.escape(key)}(?![{_KEY_CHARS}])", text) is not None


def _trees(text: str) -> list[str]:
    return _TREE.findall(text)


_Cut = Callable[[re.Match[str]], str]


def without_runner_paths(
    text: str, scratch: Iterable[Path | None], checkout: Path | None = None
) -> str:
    """``text`` with every path on the runner cut to what a reader can place: under a scratch
    place (the temporary directory, the bot's clones and cache) the path inside the tree or
    repository written there, under ``checkout`` the path inside it."""
    for place, strip in _places(scratch, checkout):
        text = re.sub(re.escape(place) + r"/([^\s:'\"]*)", strip, text)
    return text


def _places(scratch: Iterable[Path | None], checkout: Path | None) -> list[tuple[str, _Cut]]:
    found: dict[str, _Cut] = {}
    for root in [Path(tempfile.gettempdir()), *scratch]:
        if root is not None:
            for spelling in (str(root), str(root.resolve())):
                found[spelling.rstrip("/")] = _inside_scratch
    if checkout is not None:
        for spelling in (str(checkout), str(checkout.resolve())):
            found[spelling.rstrip("/")] = _inside_checkout
    # Longest first: a clone inside the temporary directory is cut as the clone.
    return sorted(found.items(), key=lambda kv: len(kv[0]), reverse=True)


def _inside_scratch(match: re.Match[str]) -> str:
    # The first part is the scratch directory itself (infx-bot-…, infx-tree-<sha>-…, a clone).
    rest = match.group(1).split("/", 1)[1] if "/" in match.group(1) else ""
    if "snippets/" in rest:
        return "the generated module " + rest.split("snippets/", 1)[1]
    return rest or "(a scratch directory)"


def _inside_checkout(match: re.Match[str]) -> str:
    return match.group(1)
