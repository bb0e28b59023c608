"""The verdicts of `sync verify`: what the comparison says about one key of one block
(``Verdict``, ``compare/diff.py: Entry.status``), about one point (``PointVerdict``,
``compare/results.py: PointResult.verdict``) and about a published point against its recipe
(``RecipeVerdict``, `sync audit`).

String-valued, so JSON reports and templates print the same words as plain strings would; a
module of its own so every comparison (the verify use cases, the diff, the reports, the bot's
evidence record) can share them without importing each other.
"""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    MATCH = "match"
    DIFFERS = "differs"
    ONLY_COOKBOOK = "only-cookbook"
    ONLY_RECIPE = "only-recipe"
    ONLY_LOG = "only-log"
    EXCLUDED = "excluded"  # an InferenceX-only setting, by the policy entry it names
    NOT_LOGGED = "not-logged"  # the run does not log it: neither agreeing nor differing
    AMBIGUOUS = "ambiguous"

    @classmethod
    def only_in(cls, side: str) -> Verdict:
        """The key appears on ``side`` (cookbook, recipe or log) alone."""
        return cls(f"only-{side}")


# The verdicts that make a comparison disagree.
FAILING = frozenset(
    {
        Verdict.DIFFERS,
        Verdict.ONLY_COOKBOOK,
        Verdict.ONLY_RECIPE,
        Verdict.ONLY_LOG,
        Verdict.AMBIGUOUS,
    }
)


class PointVerdict(StrEnum):
    """A verified point's verdict, declared in the order the reports count them."""

    AGREE = "agree"
    DIFFER = "differ"  # a log, or the cookbook, disagrees with the recipe
    AMBIGUOUS = "ambiguous"  # the log's env could not be split between its processes
    NO_LOG = "no-log"  # no log of the run belongs to the point
    NO_COOKBOOK = "no-cookbook"  # the cookbook module lacks the point


class RecipeVerdict(StrEnum):
    """A published point against its recipe at the pinned commit (`sync audit`), declared in
    the order the reports count them."""

    AGREES = "agrees"
    DIFFERS = "differs"
    MISSING = "missing"  # the recipe renders no such point
    NOT_CHECKED = "not-checked"


# A cell's recipe verdict is the worst of its points'.
RECIPE_WORST_FIRST = (RecipeVerdict.DIFFERS, RecipeVerdict.MISSING, RecipeVerdict.NOT_CHECKED)
