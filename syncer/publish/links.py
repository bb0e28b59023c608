"""Repository slugs and the GitHub URLs the bot writes, built in one place.

Everything the bot links to (a run, an InferenceX PR, a ``/use`` comment, the cookbook page)
and every ``owner/name`` it splits (the owner a PR head is pushed from) comes from here, so the
status comment, the PR body and the commit message cannot disagree about a link's shape.

A pinned run is ``<id>`` or ``<id>/attempts/<n>``: both name the same run, and the link keeps
the attempt, which GitHub shows as that attempt of the run.
"""

from __future__ import annotations

GITHUB = "https://github.com"
INFERENCEX_REPO = "SemiAnalysisAI/InferenceX"
COOKBOOK_REPO = "sgl-project/sglang"
COOKBOOK_CLONE_URL = f"{GITHUB}/{COOKBOOK_REPO}.git"
DOCS_URL = "https://docs.sglang.io"


def owner(repo: str) -> str:
    """The owner of ``owner/name``."""
    return repo.split("/")[0]


def head_ref(repo: str, branch: str) -> str:
    """A PR head as the pulls API takes it: ``owner:branch``, the owner being the pushed repo's."""
    return f"{owner(repo)}:{branch}"


def repo_url(repo: str) -> str:
    return f"{GITHUB}/{repo}"


def run_url(repo: str, run: str) -> str:
    """The Actions run ``run`` (``<id>`` or ``<id>/attempts/<n>``) of ``repo``."""
    return f"{repo_url(repo)}/actions/runs/{run}"


def pr_url(repo: str, pr: str | int) -> str:
    return f"{repo_url(repo)}/pull/{pr}"


def comment_url(repo: str, pr: str | int, comment: str | int) -> str:
    """An issue comment on PR ``pr``, as GitHub's own "copy link" gives it."""
    return f"{pr_url(repo, pr)}#issuecomment-{comment}"


def page_url(docs_url: str, page: str, section: str) -> str:
    """Where the cookbook site shows ``section`` of the page whose source is ``page``
    (``docs/…/X.mdx`` is served as ``<docs_url>/…/X``)."""
    path = page.removeprefix("docs/").rsplit(".", 1)[0]
    return f"{docs_url}/{path}#{heading_slug(section)}"


def heading_slug(heading: str) -> str:
    """The anchor the docs site gives a heading: lower case, spaces and dashes to single dashes,
    everything else dropped."""
    out = "".join(ch.lower() if ch.isalnum() else "-" if ch in " -" else "" for ch in heading)
    return "-".join(part for part in out.split("-") if part)
