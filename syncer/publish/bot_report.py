"""`sync bot`'s report (``bot_report``): what one run said it did, the sides a dry run without a
token could not read, and in a dry run the writes it did not make; shown by
:mod:`syncer.reporting`.

Every line is a log line of the workflow's job: each is made safe for a terminal here
(``term_line`` for the run's own lines, ``term_text`` for a write, whose body keeps its line
breaks) and written exactly, so a tab or a blank line of a planned body reaches the log as the
body has it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from syncer.reporting import Report
from syncer.untrusted import term_line, term_text
from syncer.wording import count

_CUT_NOTE = "\n(report cut to fit)\n"


@dataclass(frozen=True)
class BotRun:
    """One ``sync bot`` run: ``unread``, the sides a dry run had no token for (the event file
    stood in for GitHub there); ``lines``, what the run did (None: stopped by an error before
    it said); ``writes``, a dry run's writes not made (None: no dry run, or one stopped by
    something other than bad input, which shows none)."""

    unread: list[str] = field(default_factory=list)
    lines: list[str] | None = None
    writes: list[str] | None = None

    @property
    def stopped(self) -> bool:
        return self.lines is None

    def json(self) -> dict[str, Any]:
        return {
            "unread": list(self.unread),
            "stopped": self.stopped,
            "lines": list(self.lines or []),
            "writes_not_made": self.writes,
        }


def bot_report(run: BotRun) -> Report:
    """The report of ``run``: its text, printed as it is, and the same as JSON."""
    text = _text(run)
    return Report(
        exit_code=0,
        document=run.json,
        renderings=lambda _budget: iter([text]),
        plain=lambda: text,
        cut_note=_CUT_NOTE,
        default_budget=None,
    )


def _text(run: BotRun) -> str:
    lines = []
    if run.unread:
        lines.append(
            f"dry run without a token for {' and '.join(run.unread)}: GitHub is not read there; "
            "the event file stands in for it"
        )
    lines += [term_line(line) for line in run.lines or []]
    if run.writes is not None:
        why = " (stopped by the error below)" if run.stopped else ""
        lines.append(f"dry run: {count(len(run.writes), 'write')} not made{why}")
        lines += ["would: " + term_text(write) for write in run.writes]
    return "".join(f"{line}\n" for line in lines)
