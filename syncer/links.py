"""Repository slugs and every GitHub URL the project builds or parses, in one place.

Everything linked to (a run, an InferenceX PR, a ``/use`` comment, a recipe at a commit, the
cookbook page) and every ``owner/name`` split (the owner a PR head is pushed from) comes from
here, so the data module, the status comment, the PR body and the commit message cannot
disagree about a link's shape. A foundation module: every layer may import it.

Functions taking ``repo`` take the ``owner/name`` slug; those taking ``base`` take the
repository's URL (``https://github.com/owner/name``, as ``sync.yaml``'s ``inferencex.repo``).

The attempts rule: a run reference is ``<id>`` or ``<id>/attempts/<n>``. Both name the same
run (one run id, ``run_id``). A link to a run as pinned (a point's ``run`` / ``runUrl``, the
bot's run link) keeps the attempt, which GitHub shows as that attempt of the run, so the
numbers link to the attempt that measured them; a link to a PR's run as a whole (the module's
``source.prs.<pr>.run``) names the run without an attempt (``attempt=False``). The published
cookbook modules show exactly this: point runs such as ``35690159495/attempts/2``, the source
block's ``…/actions/runs/37260940238`` for a run its points pin as ``37260940238/attempts/1``.
"""

from __future__ import annotations

import re

GITHUB = "https://github.com"
API_URL = "https://api.github.com"  # the REST API (GitHub.com; GITHUB_API_URL elsewhere)
INFERENCEX_REPO = "SemiAnalysisAI/InferenceX"
COOKBOOK_REPO = "sgl-project/sglang"
SRT_SLURM_REPO = "NVIDIA/srt-slurm"
COOKBOOK_CLONE_URL = f"{GITHUB}/{COOKBOOK_REPO}.git"
DOCS_URL = "https://docs.sglang.io"
DYNAMO_REPO = "ai-dynamo/dynamo"
# The package index NVIDIA publishes Dynamo's wheels on (srt-slurm's `dynamo.install` pip line).
NVIDIA_PYPI_URL = "https://pypi.nvidia.com"


def owner(repo: str) -> str:
    """The owner of ``owner/name``."""
    return repo.split("/")[0]


def head_ref(repo: str, branch: str) -> str:
    """A PR head as the pulls API takes it: ``owner:branch``, the owner being the pushed repo's."""
    return f"{owner(repo)}:{branch}"


def repo_url(repo: str) -> str:
    return f"{GITHUB}/{repo}"


# The paths under a repository's URL.
RUNS = "/actions/runs/"
PULL = "/pull/"
BLOB = "/blob/"
COMMENT = "#issuecomment-"

# GitHub's ids (PRs, comments, runs) fit in 20 digits: an id is never read longer, since int()
# of thousands of digits raises. ASCII digits only: \d would accept other scripts' digits,
# which int() then quietly converts.
GITHUB_ID_DIGITS = 20
GITHUB_ID = f"[0-9]{{1,{GITHUB_ID_DIGITS}}}"
# A run reference, matched whole (fullmatch).
RUN_REF = re.compile(rf"({GITHUB_ID})(?:/attempts/([0-9]{{1,4}}))?")


def parse_run(run: str) -> tuple[str, str | None]:
    """``<id>`` or ``<id>/attempts/<n>`` -> (run id, attempt or None); ValueError otherwise."""
    m = RUN_REF.fullmatch(run)
    if not m:
        raise ValueError(f"not a run reference: {run!r}")
    return m.group(1), m.group(2)


def run_id(run: str) -> str:
    """The run a reference names (its attempt dropped)."""
    return parse_run(run)[0]


def run_link(base: str, run: str, *, attempt: bool = True) -> str:
    """The Actions run ``run`` under the repository URL ``base``; ``attempt=False`` names the
    run as a whole (see the module's attempts rule)."""
    return f"{base}{RUNS}{run if attempt else run_id(run)}"


def job_link(base: str, job: str) -> str:
    """A job, referenced as ``<run id>/job/<job id>``."""
    return f"{base}{RUNS}{job}"


def pr_link(base: str, pr: str | int) -> str:
    return f"{base}{PULL}{pr}"


def comment_link(base: str, pr: str | int, comment: str | int) -> str:
    """An issue comment on PR ``pr``, as GitHub's own "copy link" gives it."""
    return f"{pr_link(base, pr)}{COMMENT}{comment}"


def blob_link(base: str, sha: str, path: str) -> str:
    """The file ``path`` at commit ``sha``."""
    return f"{base}{BLOB}{sha}/{path}"


def commit_url(repo: str, sha: str) -> str:
    """A commit of a GitHub repository (``owner/name``)."""
    return f"{repo_url(repo)}/commit/{sha}"


def run_url(repo: str, run: str) -> str:
    """The Actions run ``run`` (``<id>`` or ``<id>/attempts/<n>``, kept) of ``repo``."""
    return run_link(repo_url(repo), run)


def pr_url(repo: str, pr: str | int) -> str:
    return pr_link(repo_url(repo), pr)


def comment_url(repo: str, pr: str | int, comment: str | int) -> str:
    """An issue comment on PR ``pr``, as GitHub's own "copy link" gives it."""
    return comment_link(repo_url(repo), pr, comment)


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
