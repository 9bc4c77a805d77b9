"""The place frames of the slot check: another place of the same kind in the fact's frame."""

from __future__ import annotations

import numpy as np

from factscore_local.declarations.verifiers import (
    NUMBER_YEAR_VETO_RULE,
    PLACE_VETO_RULE,
    SLOTS_RULE_FEATURES,
    Thresholds,
    get_verifier,
)
from factscore_local.pipeline.signals.place_frames import frames, place_frame_verdict
from factscore_local.pipeline.signals.slots import PLACE_CONFLICT, slot_signal

LEAD = [
    "Largely self-educated, he became a lawyer in Illinois, a Whig Party leader, and a "
    "member of the Illinois House of Representatives. In 1816 the family moved north "
    "across the Ohio River to Indiana."
]


def test_another_state_in_the_facts_frame_conflicts():
    assert place_frame_verdict("He worked as a lawyer in Ohio.", LEAD) == "conflict"
    # "lawyers in" is the same frame; the page's "Ohio River" is part of a name.
    assert place_frame_verdict("He was one of the lawyers in Ohio.", LEAD) == "conflict"
    assert slot_signal("He worked as a lawyer in Ohio.", LEAD) == PLACE_CONFLICT


def test_what_is_no_conflict():
    # the fact's own place in the frame, or in the sentence of the other frame
    assert place_frame_verdict("He worked as a lawyer in Illinois.", LEAD) is None
    both = ["She was a teacher in Ohio and, later, a teacher in Iowa."]
    assert place_frame_verdict("She was a teacher in Ohio.", both) is None
    # another frame word, another preposition, another kind of place (a state and a country)
    assert place_frame_verdict("He was a farmer in Ohio.", LEAD) is None
    assert place_frame_verdict("He was a lawyer from Ohio.", LEAD) is None
    assert place_frame_verdict("He was a lawyer in Canada.", LEAD) is None
    # a place that starts a longer name, in the fact or in the passages
    assert place_frame_verdict("He studied law at Ohio State University.", LEAD) is None
    assert frames("a professor at Ohio State and a coach in New York City") == []
    # Washington and Georgia are also a city and a country: never a frame's place
    assert frames("He was born in Washington.") == []
    # a frame needs a content word before its preposition
    assert frames("He grew up in Indiana.") == []


def test_the_place_veto_rule_rejects_a_place_conflict_whatever_its_score():
    rule = get_verifier(PLACE_VETO_RULE)
    assert rule.features == SLOTS_RULE_FEATURES and "slots" in rule.signals
    weights = (0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0)  # the margin alone decides...
    slots = np.array([PLACE_CONFLICT, -3.0, -2.0, -1.0, 1.0])
    signals = {"margin": np.full(5, 2.0), "np": np.zeros(5), "coverage": np.ones(5),
               "slots": slots}  # fmt: skip
    decided = rule.decide(signals, Thresholds(weights=weights), 5).tolist()
    assert decided == [False, False, False, True, True]
    # the number-and-year veto rule weighs a place conflict as any other conflict
    before = get_verifier(NUMBER_YEAR_VETO_RULE).decide(signals, Thresholds(weights=weights), 5)
    assert before.tolist() == [True, False, False, True, True]
