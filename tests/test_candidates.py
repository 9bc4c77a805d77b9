"""Candidates for a fact's slots (``pipeline/signals/candidates.py``, issue 74 item 2): the
fact with a year, a number or a nationality replaced by another value of its kind that the
page states near the fact's terms, and the places, people and works of the rivals."""

from __future__ import annotations

import pytest

from factscore_local.declarations.verifiers import get_verifier
from factscore_local.lm.protocol import NEXT_TOKEN
from factscore_local.pipeline.plan import PASS_CAPABILITY
from factscore_local.pipeline.signals.candidates import (
    candidate_facts,
    value_candidates,
    value_slots,
)
from factscore_local.pipeline.signals.context import NEEDS
from factscore_local.pipeline.signals.providers import PROVIDERS

PAGE = [
    "Ann Lee (born March 3, 1941) is an American actress. Lee moved to film in 1969, and "
    "her breakthrough came in 1972 with Long Road. She married the Canadian director Tom "
    "Bell in 1975; they had 3 children. She is 1.70 m tall.",
]


def replaced(fact: str, passages=PAGE) -> list[str]:
    return [r.replacement for r in value_candidates(fact, "Ann Lee", passages)]


def test_a_swapped_year_meets_the_year_the_page_gives_its_terms():
    # the film debut swapped for the breakthrough's year: the debut's own year is a
    # candidate, and the fact's own sentence comes first
    assert replaced("Lee moved to film in 1972.")[0] == "1969"
    # a true year meets the page's other years as candidates
    assert "1972" in replaced("Lee moved to film in 1969.")


def test_values_that_meet_the_facts_own_are_no_candidates():
    # the late 1960s holds 1969; the full birth date holds its year
    assert "1969" not in replaced("Lee moved to film in the late 1960s.")
    assert "1941" not in replaced("She was born in 1941.")
    # a bare year is replaced by a year: the birth date gives its year, not its day
    assert replaced("She was born in 1950.") == ["1941"]


def test_numbers_by_their_dimension_and_nationalities_by_their_word():
    assert replaced("She and Tom Bell had 4 children.") == ["3"]  # not the 1.70 m
    # a value is in the fact only as a whole word: 13 does not hold the page's 3
    assert replaced("She and Tom Bell had 13 children.") == ["3"]
    assert replaced("Ann Lee is a Canadian actress.") == ["American"]
    assert [s.kind for s in value_slots("An American born in 1942 with 3 sons.")] == [
        "nationality", "time", "number",
    ]  # fmt: skip


@pytest.mark.e2e  # spaCy's entities find the names
def test_the_candidates_of_a_fact_add_its_named_rivals():
    facts = [r.fact for r in candidate_facts("Ann Lee married the director Tom Bell in 1969.",
                                             "Ann Lee", PAGE)]  # fmt: skip
    assert "Ann Lee married the director Tom Bell in 1975." in facts


def test_the_candidates_rule_is_planned_as_a_pass_of_margins():
    rule = get_verifier("default+candidates")
    assert "candidate_lead" in rule.features and "candidates" in rule.signals
    assert "candidates" in NEEDS and PASS_CAPABILITY["candidates"] == NEXT_TOKEN
    (provider,) = PROVIDERS["candidates"]
    assert provider.needs == {"judged_margins", "candidates"}


def test_the_tables_with_candidates_read_every_signal_their_rules_weigh():
    """``reproduce_tables --candidates``: one run of the reading rule gives every signal
    that the cross-fitted rules weigh, the candidates' rules among them."""
    from factscore_local.declarations.verifiers import ALL_SIGNALS_RULE, CANDIDATE_RULES
    from scripts.tables.main_tables import FITTED_RULES

    reader = set(get_verifier(ALL_SIGNALS_RULE).signals)
    assert "candidates" in reader and "rivals" in reader
    for rule in (*FITTED_RULES, *CANDIDATE_RULES):
        assert set(get_verifier(rule).signals) <= reader, rule
