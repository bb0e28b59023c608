"""The dashboard issue `sync audit --dashboard` keeps in the InferenceX repository: one issue,
found by its hidden marker among the bot's own issues with the dashboard label; created when
the audit has findings, edited in place (reopened when it was closed), closed when the audit
is clean, and left alone when nothing changed. Never a new issue per run."""

from __future__ import annotations

from syncer import fitting
from syncer.github.client import GitHubClient
from syncer.github.records import Issue
from syncer.templating import render
from syncer.usecases.audit_report import audit_report
from syncer.usecases.audit_result import AuditResult

MARKER = "<!-- infx-cookbook-sync:audit-dashboard -->"
LABEL = "cookbook-audit"


def dashboard_title(result: AuditResult) -> str:
    counts = result.counts()
    if not counts["findings"]:
        return "Cookbook audit: clean"
    return (
        f"Cookbook audit: {counts['findings']} finding{'s' if counts['findings'] != 1 else ''} "
        f"in {counts['cellsWithFindings']} of {counts['cells']} cells"
    )


def body(result: AuditResult) -> str:
    """The issue body within GitHub's limit: the report gets the room the frame leaves."""
    frame = render("audit_dashboard.md.j2", marker=MARKER, report="")
    report = audit_report(result).markdown(fitting.GITHUB_TEXT_LIMIT - len(frame))
    text = render("audit_dashboard.md.j2", marker=MARKER, report=report)
    return fitting.within(text, "the dashboard issue body")


def find(gh: GitHubClient, repo: str) -> Issue | None:
    """The bot's dashboard issue: the oldest of its issues with the label and the marker."""
    mine = [
        i for i in gh.issues.labelled(repo, label=LABEL, creator=gh.login()) if MARKER in i.body
    ]
    return mine[0] if mine else None


def keep_dashboard(gh: GitHubClient, repo: str, result: AuditResult) -> str:
    """Bring the dashboard issue in line with ``result``; returns what was done (one line)."""
    issue = find(gh, repo)
    dirty = result.exit_code != 0
    if issue is None:
        if not dirty:
            return "dashboard: clean, no issue to keep"
        made = gh.issues.create(
            repo, dashboard_title(result), body(result), labels=[LABEL], marker=MARKER
        )
        return f"dashboard: opened issue #{made.number}"
    new_title, new_body = dashboard_title(result), body(result)
    state = "open" if dirty else "closed"
    if (issue.title, issue.body, issue.state) == (new_title, new_body, state):
        return f"dashboard: issue #{issue.number} unchanged"
    if not dirty and issue.state == "closed":
        return f"dashboard: clean, issue #{issue.number} already closed"
    gh.issues.update(
        repo,
        issue.number,
        title=new_title if new_title != issue.title else None,
        body=new_body if new_body != issue.body else None,
        state=state if state != issue.state else None,
    )
    if state != issue.state:
        return f"dashboard: {'reopened' if dirty else 'closed'} issue #{issue.number}"
    return f"dashboard: edited issue #{issue.number}"
