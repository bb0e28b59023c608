"""The verdict vocabularies are declared once (``compare/verdicts.py``) and every report speaks
them: each verdict has its words in the reports, and JSON spells them as plain strings."""

from __future__ import annotations

import json

from syncer.compare.report import STATUS_TEXT, VERDICT_TEXT
from syncer.compare.verdicts import RECIPE_WORST_FIRST, PointVerdict, RecipeVerdict, Verdict
from syncer.untrusted import json_text


def test_every_verdict_has_its_report_words() -> None:
    assert set(VERDICT_TEXT) == set(PointVerdict)
    assert set(STATUS_TEXT) == set(Verdict)


def test_json_spells_point_verdicts_as_plain_strings() -> None:
    counts = {PointVerdict.AGREE: 6, PointVerdict.NO_LOG: 1}
    assert json_text({"verdict": PointVerdict.DIFFER, "verdicts": counts}) == json.dumps(
        {"verdict": "differ", "verdicts": {"agree": 6, "no-log": 1}}
    )
    assert [v.value for v in PointVerdict] == [
        "agree",
        "differ",
        "ambiguous",
        "no-log",
        "no-cookbook",
    ]


def test_the_recipe_verdicts_rank_every_one_but_agreement() -> None:
    assert set(RECIPE_WORST_FIRST) == set(RecipeVerdict) - {RecipeVerdict.AGREES}
    assert [v.value for v in RecipeVerdict] == ["agrees", "differs", "missing", "not-checked"]
