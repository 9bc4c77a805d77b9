"""Own facts that do not stand alone are set aside before verification (pipeline/standalone.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from factscore_local.config import EvalConfig
from factscore_local.model_store import SMALL_LM
from factscore_local.pipeline.decomposition.sentences import Sentence
from factscore_local.pipeline.decomposition.standalone import set_aside, standalone_reasons
from factscore_local.pipeline.estimator import Estimator
from factscore_local.pipeline.records.inputs import Bio
from factscore_local.pipeline.records.rows import BioRow
from tests.conftest import require_model


@pytest.mark.parametrize(
    ("fact", "reason"),
    [
        ("About the District is a reference to a specific location or area.", "meta"),
        ("Lina can refer to many people with that name.", "meta"),
        ("The text mentions his early career.", "meta"),
        ("It sold over 13 million copies worldwide.", "dangling"),
        ("This system was widely adopted.", "dangling"),
        ("These films were shot in Spain.", "dangling"),
        ("The comic strip was syndicated around the world.", "dangling"),
        ("The race is held annually.", "dangling"),
        ("The band's lineup has changed several times over the years.", "dangling"),
        ("He was born in Santa Monica, California.", None),
        ("She married actor Kevin Bacon in 1988.", None),
        ("His father was a doctor.", None),
        ("Doug Sheehan is an American actor.", None),
        ("The University of Chicago awarded him a degree.", None),
        ("The Beatles released Abbey Road in 1969.", None),
        ("In 2014, the couple married in Melbourne.", None),
    ],
)  # fmt: skip
def test_each_reason(fact, reason):
    # "They" is left out here: it is decided per bio (see below).
    assert standalone_reasons(["He is a singer.", fact])[1] == reason


def test_they_dangles_only_where_the_bio_says_he_or_she():
    facts = ["They married in 2014.", "They have two daughters."]
    assert standalone_reasons(["She is a swimmer.", *facts])[1:] == ["dangling", "dangling"]
    # A bio that never says "he" or "she" may use "they" for its subject.
    assert standalone_reasons(["Sam Smith is a singer.", *facts])[1:] == [None, None]


def test_set_aside_keeps_sentences_order_and_the_reasons():
    s1, s2 = Sentence("Casali drew Love Is.", 0, True), Sentence("It was syndicated.", 0, False)
    pairs = [(s1, ["Kim Casali drew Love Is.", "The strip ran daily."]),
             (s2, ["It was syndicated.", "She drew it in 1970."])]  # fmt: skip
    kept, aside = set_aside(pairs)
    assert kept == [(s1, ["Kim Casali drew Love Is."]), (s2, ["She drew it in 1970."])]
    assert aside == [("The strip ran daily.", "dangling"), ("It was syndicated.", "dangling")]
    assert set_aside([]) == ([], [])


@pytest.mark.slow
def test_an_eval_sets_aside_a_dangling_fact_and_lists_it(db_index, tmp_path):
    """With the real 0.5B model: the fact decomposed from a dangling sentence is not
    verified by default, the row says why, and --no-standalone verifies it."""
    require_model(SMALL_LM)
    output = "Doug Sheehan starred in Knots Landing. The series ran for fourteen seasons."
    bios = [Bio(line=1, topic="Doug Sheehan", output=output, source="x.jsonl")]
    common = {"index": db_index, "lm": SMALL_LM, "cache": tmp_path / "c.db"}
    (row,) = Estimator(EvalConfig(**common)).run(bios, None, progress=False)
    assert row.ok and row.responded
    aside = dict(row.set_aside)
    assert any(atom.startswith("The series") for atom in aside), row.set_aside
    assert set(aside.values()) == {"dangling"}
    assert not set(aside) & {d.atom for d in row.decisions}
    assert BioRow.from_json(row.to_json()).set_aside == row.set_aside
    (every,) = Estimator(EvalConfig(**common, standalone=False)).run(bios, None, progress=False)
    assert not every.set_aside
    assert set(aside) <= {d.atom for d in every.decisions}


def test_the_eval_summary_says_how_many_facts_were_set_aside(capsys):
    from factscore_local.cli.output import print_result
    from factscore_local.pipeline.decision.scoring import summarize
    from factscore_local.results import EvalResult

    aside = (("It ran for years.", "dangling"), ("The text says so.", "meta"))
    row = BioRow(1, "Doug Sheehan", "x.jsonl", title="Doug Sheehan", set_aside=aside)
    result = EvalResult(summarize([row]), [row], None, EvalConfig(index=Path("idx")))
    print_result(result, as_json=False)
    assert "2 own fact(s) set aside as not standing alone" in capsys.readouterr().out
