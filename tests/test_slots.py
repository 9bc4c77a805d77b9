"""The slot check as a signal: what it reads in passages, and the fitted rule that weighs it."""

from __future__ import annotations

import re

import numpy as np
import pytest

from factscore_local.config import EvalConfig, build_config
from factscore_local.declarations.verifiers import (
    NUMBER_VETO_RULE,
    NUMBER_YEAR_VETO_RULE,
    SLOTS_RULE_FEATURES,
    Thresholds,
    get_verifier,
)
from factscore_local.pipeline.estimator import Estimator
from factscore_local.pipeline.records.inputs import read_bios
from factscore_local.pipeline.signals.slots import (
    WEAK,
    slot_check,
    slot_conflicts,
    slot_flags,
    slot_signal,
)
from tests.conftest import ROOT, SHARED, require, require_model

CHATGPT = SHARED / "factscore" / "labeled-dev" / "ChatGPT.jsonl"
SLOTS_RULE = "retrieve-lm+np+coverage+slots-fitted"
AGASSI = ["Andre Kirk Agassi is an American former world No. 1 tennis player.",
          "He won the Canadian Open three times."]  # fmt: skip


def test_a_demonym_inside_a_name_is_not_a_nationality():
    assert slot_check("Andre Agassi is a Canadian professional tennis player.", AGASSI) == (
        "conflict"
    )
    assert slot_check("Andre Agassi is an American tennis player.", AGASSI) == "confirmed"
    # In the fact too: "the Canadian Open" names a tournament, not his nationality.
    assert slot_check("Agassi won the Canadian Open.", AGASSI) == "unknown"


def test_the_signal_values():
    page = ["Mitzi Gaynor (born September 4, 1931) is an American actress."]
    assert slot_signal("She was born in 1931.", page) == 1.0
    assert slot_signal("She was born in 1925.", page, "Mitzi Gaynor") == -3.0  # her birth
    # Not known to be hers without the topic: another year in the birth's clause, weighed.
    assert slot_signal("She was born in 1925.", page) == -1.0
    assert slot_signal("She is an American singer.", page) == -1.0  # another slot
    # Another nationality than the lead's, given the topic: its own value.
    assert slot_signal("Mitzi Gaynor is a Canadian actress.", page, "Mitzi Gaynor") == -4.0
    assert slot_signal("She acted in Canadian films.", page, "Mitzi Gaynor") == -1.0
    assert slot_signal("She starred in films.", page) == 0.0


def test_years_before_a_comma_and_numbers_with_groups():
    page = ["In 1990, he moved to Paris, where he sold 27,000 copies of 3.5 million printed."]
    assert slot_check("He moved to Paris in 1990.", page) == "confirmed"
    assert slot_check("In 1990, he moved to Paris.", page) == "confirmed"  # not a number
    assert slot_check("He sold 27,000 copies.", page) == "confirmed"
    assert slot_check("He moved to Paris in 1994.", page) == "conflict"


def test_a_contradicted_number_has_its_own_value():
    page = ["She appeared in 63 films and won 2 awards between 1950 and 1970."]
    assert slot_signal("She appeared in 63 films.", page) == 1.0
    assert slot_signal("She appeared in 40 films.", page) == -2.0
    assert slot_signal("She appeared in films from 1975.", page) == -3.0  # a year, not -2
    # "between 1950 and 1970" is a range: a year within it meets it.
    assert slot_signal("She appeared in films from 1955.", page) == 1.0
    # An approximation holds for a value within a quarter of it, not for one far off.
    assert slot_signal("She appeared in over 60 films.", page) == 1.0
    assert slot_signal("She appeared in over 90 films.", page) == -2.0
    assert slot_signal("She appeared in 60 films.", page) == -2.0  # exact: must be stated


def test_a_value_the_page_states_in_another_role_conflicts():
    """The sentences most like the fact decide: a year the page gives another event is no
    confirmation of a birth year."""
    page = ["Alberto Malesani (born 5 June 1954) is an Italian football manager.",
            "In 2009 he joined Bologna. He won the UEFA Cup in 1999 with 11 players."]  # fmt: skip
    topic = "Alberto Malesani"
    assert slot_signal("He was born on June 5, 2009.", page, topic) == -3.0
    assert slot_signal("He was born on June 5, 1954.", page, topic) == 1.0
    assert slot_signal("He joined Bologna in 2009.", page, topic) == 1.0
    # 2009 is on the page, for another event: a conflict the rules weigh (another UEFA
    # Cup may have been won in 2009), not one they veto on.
    assert slot_signal("He won the UEFA Cup in 2009.", page, topic) == -1.0
    assert slot_conflicts("He won the UEFA Cup in 2009.", page, topic) == {"year": WEAK}
    # A year the page gives nowhere, while it gives the cup's: vetoed.
    assert slot_signal("He won the UEFA Cup in 2003.", page, topic) == -3.0
    assert slot_signal("He is a French football manager.", page, topic) == -4.0
    # No sentence like the fact: the values of the passages as a whole decide.
    assert slot_signal("His brother was born in 1954.", page, topic) == 1.0


def test_only_sentences_nearly_as_close_as_the_closest_confirm():
    """A value stated in a sentence that shares one word with the fact ("played") is no
    confirmation when a sentence sharing all of them gives another value."""
    page = ["He played for the San Francisco Giants from 2001 until 2005.",
            "He played golf in 2012."]  # fmt: skip
    fact = "He played for the San Francisco Giants until {}."
    assert slot_signal(fact.format(2005), page) == 1.0
    assert slot_signal(fact.format(2012), page) == -1.0  # 2012 is golf's: weighed
    assert slot_signal(fact.format(2014), page) == -3.0  # nowhere, and all its terms: vetoed


def test_the_roles_a_page_gives_its_years_and_nationality():
    """Life dates, a work's years and the lead's nationality decide a value the page states
    in another role."""
    page = ["Kim Casali (9 September 1941 – 15 June 1997) was a New Zealand cartoonist.",
            'Her husband Roberto died in March 1976. She drew for "Love Is..." (1970) '
            "and, in 1975, for a newspaper."]  # fmt: skip
    topic = "Kim Casali"
    assert slot_signal("Casali died in 1997.", page, topic) == 1.0
    assert slot_signal("Casali died in 1976.", page, topic) == -3.0  # her husband's year
    assert slot_signal("Her husband died in 1976.", page, topic) == 1.0  # not her death
    assert slot_signal("She was born in 1975.", page, topic) == -3.0
    # A year the page gives only as a life date dates nothing else.
    assert slot_signal("Casali moved to London in 1941.", page, topic) == -3.0
    # A titled work's year is the one written beside it.
    assert slot_signal('"Love Is..." was first drawn in 1970.', page, topic) == 1.0
    assert slot_signal('"Love Is..." was first drawn in 1975.', page, topic) == -3.0
    # The lead spells out the full name; initials do not end its sentence.
    shue = ["Andrew Shue Andrew Eppley Shue (born February 20, 1967) is an American actor. "
            "His sister Elisabeth Shue was born in 1963."]  # fmt: skip
    assert slot_signal("Andrew Eppley Shue was born in 1938.", shue, "Andrew Shue") == -3.0
    assert slot_signal("Elisabeth Shue was born in 1963.", shue, "Andrew Shue") == 1.0
    taylor = ["Frederick Howard Taylor F. Howard Taylor (25 November 1862 – 15 August 1946), "
              "was a British missionary. He studied medicine in 1888."]  # fmt: skip
    assert slot_signal("He died in 1946.", taylor, "Frederick Howard Taylor") == 1.0
    assert slot_signal("He died in 1888.", taylor, "Frederick Howard Taylor") == -3.0
    lead = ["Teresa Palmer (born 26 February 1986) is an Australian actress. "
            "She starred in an American film and a Canadian series."]  # fmt: skip
    assert slot_signal("Teresa Palmer is an Australian actress.", lead, "Teresa Palmer") == 1.0
    assert slot_signal("Teresa Palmer is an American.", lead, "Teresa Palmer") == -4.0
    assert slot_signal("Palmer is Canadian.", lead, "Teresa Palmer") == -4.0
    # Not about her, and "Canadian" stands only beside none of the fact's terms (a series):
    # neither a conflict nor a confirmation.
    assert slot_signal("Her father is Canadian.", lead, "Teresa Palmer") == 0.0


def test_the_number_veto_rejects_whatever_the_score():
    rule = get_verifier(NUMBER_VETO_RULE)
    assert rule.features == SLOTS_RULE_FEATURES and "slots" in rule.signals
    weights = (0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0)  # the margin alone decides...
    signals = {"margin": np.full(4, 2.0), "np": np.zeros(4), "coverage": np.ones(4),
               "slots": np.array([-2.0, -1.0, 0.0, 1.0])}  # fmt: skip
    # ... but a contradicted number is out, fitted or not (unfitted: the ensemble, NP 0).
    assert rule.decide(signals, Thresholds(weights=weights), 4).tolist() == [
        False, True, True, True,
    ]  # fmt: skip
    unfitted = rule.decide({**signals, "np": np.ones(4)}, Thresholds(), 4)
    assert unfitted.tolist() == [False, True, True, True]
    # The default also vetoes a contradicted year (-3), not another slot (-1).
    years = {**signals, "slots": np.array([-3.0, -2.0, -1.0, 1.0])}
    default = get_verifier(NUMBER_YEAR_VETO_RULE)
    assert default.decide(years, Thresholds(weights=weights), 4).tolist() == [
        False, False, True, True,
    ]  # fmt: skip


def test_the_slots_rule_weighs_a_conflict():
    rule = get_verifier(SLOTS_RULE)
    assert rule.features == SLOTS_RULE_FEATURES and "slots" in rule.signals and rule.needs_evidence
    # bias 0, margin 1, the rest 0 but the conflict's weight -5: a conflict vetoes margin 2.
    weights = (0.0, 1.0, 0.0, 0.0, 0.0, -5.0, 0.0)
    signals = {"margin": np.array([2.0, 2.0, 2.0]), "np": np.zeros(3),
               "coverage": np.zeros(3), "slots": np.array([-1.0, 0.0, 1.0])}  # fmt: skip
    assert rule.decide(signals, Thresholds(weights=weights), 3).tolist() == [False, True, True]
    with pytest.raises(ValueError, match="hold 7 numbers"):
        build_config({"index": "idx", "verifier": SLOTS_RULE, "rule_weights": [0.0] * 5})


def test_the_slots_rule_records_the_check_of_each_facts_passages(db_index, tmp_path):
    """On a real bio with the small LM: each fact's recorded slot value is the slot check of
    its own recorded evidence, and a fact with its year moved conflicts where the original
    was confirmed."""
    from factscore_local.index.reader import KnowledgeSource
    from factscore_local.model_store import SMALL_LM

    require_model(SMALL_LM)
    bio = next(iter(read_bios(require(CHATGPT))))
    atoms = [f["text"] for s in bio.annotations for f in s.get("model-atomic-facts") or []]
    dated = [a for a in atoms if re.search(r"\b(19|20)\d\d\b", a)][:3]
    assert dated, "the first ChatGPT bio states years"
    moved = [re.sub(r"\b((?:19|20)\d\d)\b", lambda m: str(int(m.group()) - 6), a) for a in dated]
    config = EvalConfig(index=db_index, lm=SMALL_LM, verifier=SLOTS_RULE,
                        rule_weights=(0.0, 1.0, 0.0, 0.0, 0.0, -5.0, 0.0),
                        cache=tmp_path / "c.db")  # fmt: skip
    results = Estimator(config).verify([(bio.topic, bio.topic, a) for a in atoms[:6] + moved])
    ks = KnowledgeSource(db_index)
    for d in results:
        texts = [ks.passage(e.passage_id).clean_text for e in d.evidence]
        flags = slot_flags(d.atom, texts, bio.topic)
        assert d.slot_flags == tuple(kind for kind, on in flags.items() if on)
        conflict = any(on for kind, on in flags.items() if kind != "confirmed")
        assert d.is_supported == (d.margin - 5.0 * conflict > 0)
    by_atom = {d.atom: d for d in results}
    pairs = [(by_atom[a], by_atom[m]) for a, m in zip(dated, moved, strict=True)]
    assert any(o.slot_flags == ("confirmed",) and "year" in c.slot_flags and not c.is_supported
               for o, c in pairs)  # fmt: skip


@pytest.mark.slow
def test_the_default_rejects_a_false_nationality_and_place(xml_index, tmp_path):
    """A "Canadian" Andre Agassi and the demo's Lincoln, "a lawyer in Ohio", on the
    real dump excerpt's pages with the embedded 1.5B model and its shipped default rule:
    the slot check finds the conflict with Agassi's lead sentence ("an American ...",
    while "Canadian" occurs there only in "the Canadian Open"), and with the frame of
    Lincoln's lead ("a lawyer in Illinois"); the rule rejects both, while the true
    statements are not in conflict and are accepted. The model results are replayed from a
    recorded run of this test (``scripts/cache/slots-1.5b.jsonl.gz``, made with ``fscore
    cache export``); a prompt that changed since is computed afresh."""
    from factscore_local.api import load_config
    from factscore_local.model_store import DEFAULT_LM
    from factscore_local.runtime.cache import ResultCache

    require_model(DEFAULT_LM)
    ResultCache(tmp_path / "c.db").import_file(ROOT / "scripts" / "cache" / "slots-1.5b.jsonl.gz")
    config = load_config(xml_index, cache=tmp_path / "c.db")
    assert config.verifier == "default" and len(config.rule_weights) == 7
    agassi = [("Andre Agassi", "Andre Agassi", f"Andre Agassi is {a} professional tennis player.")
              for a in ("a Canadian", "an American")]  # fmt: skip
    lincoln = [("Abraham Lincoln", "Abraham Lincoln", f"He worked as a lawyer in {state}.")
               for state in ("Ohio", "Illinois")]  # fmt: skip
    planted, true, planted_place, true_place = Estimator(config).verify(agassi + lincoln)
    assert "nationality" in planted.slot_flags and not planted.is_supported
    assert true.slot_flags == ("confirmed",) and true.is_supported
    assert "place" in planted_place.slot_flags and not planted_place.is_supported
    assert not set(true_place.slot_flags) - {"confirmed"} and true_place.is_supported
    assert planted.reason and "nationality" in planted.reason
    assert (
        planted_place.reason and "place" in planted_place.reason and "Ohio" in planted_place.reason
    )


def test_a_contradicted_nationality_does_not_hide_a_conflicting_place():
    """The slot check's outcomes are independent flags: a fact whose nationality its lead
    contradicts and whose place the passages replace raises both, and the default vetoes
    it for the place (one summed-up code kept only the nationality, which the default
    does not veto, and the fact got through)."""
    fact = "Jane Roe is a Canadian lawyer in Ohio."
    passages = ["Jane Roe (born 1950) is an American lawyer in Illinois, where she practised."]
    flags = slot_flags(fact, passages, "Jane Roe")
    assert flags["nationality"] == 1.0 and flags["place"] == 1.0
    values = {"margin": np.array([3.0]), "np": np.array([0.9]), "coverage": np.array([1.0]),
              **{f"slot_{k}": np.array([v]) for k, v in flags.items()}}  # fmt: skip
    default = get_verifier("default")
    weights = Thresholds(weights=(0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0))  # the margin says yes
    assert default.decide(values, weights, 1).tolist() == [False]
    # What one code of an earlier release recorded: the nationality alone (-4): not vetoed.
    legacy = {k: v for k, v in values.items() if not k.startswith("slot_")}
    assert default.decide({**legacy, "slots": np.array([-4.0])}, weights, 1).tolist() == [True]
