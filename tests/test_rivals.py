"""Rival facts: a named slot swapped for another value its closest sentences name, and the
signal that says how far the LM prefers a rival to the fact."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from factscore_local.config import EvalConfig
from factscore_local.declarations.verifiers import (
    RIVALS_RULE,
    RIVALS_RULE_FEATURES,
    Thresholds,
    get_verifier,
)
from factscore_local.pipeline.estimator import Estimator
from factscore_local.pipeline.records.inputs import read_bios
from factscore_local.pipeline.signals.rivals import rival_facts, rival_lead
from tests.conftest import SHARED, require, require_model

CHATGPT = SHARED / "factscore" / "labeled-dev" / "ChatGPT.jsonl"
PAGE = [
    "Ra Jong-yil is a former South Korean diplomat. He studied at the University of Cambridge.",
    "Ra served as the ambassador to the United Kingdom from 2001 and as the ambassador to "
    "Japan from 2003. He lives in Seoul.",
]


def test_a_place_gets_the_other_places_of_the_closest_sentence():
    rivals = rival_facts("Ra Jong-yil served as the ambassador to Japan.", "Ra Jong-yil", PAGE)
    assert [(r.kind, r.value, r.replacement) for r in rivals] == [
        ("place", "Japan", "the United Kingdom")
    ]  # Seoul is in a sentence that shares no word with the fact; Japan is the fact's own
    assert rivals[0].fact == "Ra Jong-yil served as the ambassador to the United Kingdom."


def test_no_rival_for_the_topics_name_nor_without_a_close_sentence():
    assert rival_facts("Ra Jong-yil is a diplomat.", "Ra Jong-yil", PAGE) == []
    assert rival_facts("He was born in Busan.", "Ra Jong-yil", PAGE) == []  # nothing shared
    assert rival_facts("He was the ambassador to Japan.", "", []) == []


def test_a_town_is_no_rival_of_its_country():
    page = ["Abdou Diallo was born in Tours, France, and grew up in Paris."]
    assert [r.replacement for r in rival_facts("He was born in Tours.", "Abdou Diallo", page)] == [
        "Paris"
    ]
    assert rival_facts("He was born in France.", "Abdou Diallo", page) == []


def test_at_most_the_limit_of_rivals_closest_first():
    page = ["He toured France. He toured Spain, Italy, Germany and Portugal in 1990."]
    rivals = rival_facts("He toured Spain in 1990.", "Bob Marley", page, limit=2)
    assert [r.replacement for r in rivals] == ["Italy", "Germany"]


def test_the_lead_is_how_far_the_best_rival_beats_the_fact():
    lead = rival_lead([1.0, 2.0, 0.5], [3.0, 0.0, 1.5, 0.0], [0, 0, 1, 1])
    assert lead == [2.0, 0.0, 0.0]  # fact 2 has no rival; fact 1 beats its rivals


def test_the_rivals_rule_weighs_the_lead():
    rule = get_verifier(RIVALS_RULE)
    assert "rivals" in rule.signals and rule.features == RIVALS_RULE_FEATURES
    # bias 0, margin 1, the rival lead -1, the rest 0: a lead above the margin rejects.
    weights = (0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0)
    signals = {"margin": np.array([1.0, 1.0, 1.0]), "np": np.zeros(3),
               "coverage": np.zeros(3), "slots": np.array([0.0, 0.0, -3.0]),
               "rivals": np.array([2.0, 0.5, 0.0])}  # fmt: skip
    assert rule.decide(signals, Thresholds(weights=weights), 3).tolist() == [False, True, False]


def test_the_rivals_signal_is_the_lead_of_the_rivals_judged_as_facts(db_index, tmp_path):
    """On a real bio with the small LM: each fact's recorded rival lead is what its rivals,
    verified as facts of their own, give against its margin, and so is its candidates'
    lead (``candidates.py``: its values swapped too), both read in one pass with the facts;
    a swapped place meets its original as a rival."""
    from factscore_local.declarations.verifiers import ALL_SIGNALS_RULE
    from factscore_local.index.reader import KnowledgeSource
    from factscore_local.model_store import SMALL_LM
    from factscore_local.pipeline.signals.candidates import candidate_facts

    require_model(SMALL_LM)
    assert {"rivals", "candidates"} <= set(get_verifier(ALL_SIGNALS_RULE).signals)
    assert set(get_verifier(RIVALS_RULE).signals) <= set(get_verifier(ALL_SIGNALS_RULE).signals)
    config = EvalConfig(index=db_index, lm=SMALL_LM, verifier=ALL_SIGNALS_RULE, evidence="page",
                        cache=tmp_path / "c.db")  # fmt: skip
    ks = KnowledgeSource(db_index)

    def own_texts(topic: str, atom: str) -> list[str]:
        hits = ks.search_page(ks.resolve_title(topic).title, f"{topic} {atom}", k=config.k)
        return [h.passage.clean_text for h in hits]

    for bio in read_bios(require(CHATGPT)):  # the first bio with rivals (the third, Taral Hicks)
        atoms = [f["text"] for s in bio.annotations for f in s.get("model-atomic-facts") or []]
        rivalled = [a for a in atoms if rival_facts(a, bio.topic, own_texts(bio.topic, a))]
        if rivalled:
            break
    estimator = Estimator(config)
    # the rivals and candidates judged as facts need their margins alone (same prompts,
    # same cache), not rivals and candidates of their own
    judge = Estimator(replace(config, verifier="retrieve-lm"))
    plain = [a for a in atoms if a not in rivalled][:2]
    results = estimator.verify([(bio.topic, bio.topic, a) for a in rivalled + plain])
    for d in results:
        texts = [ks.passage(e.passage_id).clean_text for e in d.evidence]
        assert texts == own_texts(bio.topic, d.atom)
        rivals = rival_facts(d.atom, bio.topic, texts)
        assert bool(rivals) == (d.atom in rivalled)
        if not rivals:
            assert d.rivals == 0.0
            continue
        judged = judge.verify([(bio.topic, bio.topic, r.fact) for r in rivals])
        best = max(r.margin for r in judged)
        assert d.rivals == pytest.approx(max(0.0, best - d.margin), abs=2e-4)
    candidates = 0
    for d in results:
        texts = [ks.passage(e.passage_id).clean_text for e in d.evidence]
        facts = [c.fact for c in candidate_facts(d.atom, bio.topic, texts)]
        candidates += len(facts)
        judged = judge.verify([(bio.topic, bio.topic, f) for f in facts])
        best = max((r.margin for r in judged), default=float("-inf"))
        assert d.values["candidates"] == pytest.approx(max(0.0, best - d.margin), abs=2e-4)
    assert candidates > len(rivalled)  # values beside the names
