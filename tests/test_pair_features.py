"""The stance head's lexical pair features, and a head that reads them after the state
(synthetic states; the real model's states in test_stance_head.py)."""

from __future__ import annotations

import numpy as np
import pytest

from factscore_local.methods.factcheck.data import STANCES, StancePair
from factscore_local.methods.factcheck.pair_features import (
    PAIR_FEATURES,
    feature_matrix,
    pair_features,
)
from factscore_local.methods.factcheck.stance_head import (
    crossfit_head,
    decide,
    head_inputs,
    train_stance_head,
)
from factscore_local.pipeline.signals.state_head import StateHead

CLAIM = "Marie Curie won the Nobel Prize in Physics in 1903."


def features(claim: str, evidence: str) -> dict[str, float]:
    return dict(zip(PAIR_FEATURES, pair_features(claim, evidence), strict=True))


def test_the_features_tell_repeating_contradicting_and_unrelated_evidence_apart():
    support = features(CLAIM, "In 1903 Marie Curie won the Nobel Prize in Physics with Pierre.")
    refute = features(CLAIM, "Marie Curie won the Nobel Prize in Physics in 1911.")
    unrelated = features(CLAIM, "The river floods every spring. Farmers plant rice after it.")
    assert support["coverage"] == 1.0 and support["number_coverage"] == 1.0
    assert support["slot_conflict"] == 0.0 and support["number_missing"] == 0.0
    assert refute["number_missing"] == 1.0 and refute["number_or_year_conflict"] == 1.0
    assert refute["slot_conflict"] == 1.0
    assert unrelated["coverage"] == 0.0 and unrelated["best_sentence_coverage"] == 0.0
    assert unrelated["bigram_coverage"] == 0.0
    # a full stop after a number is not part of it
    assert features("It opened in 2020.", "It opened in 2020.")["number_coverage"] == 1.0


def test_the_matrix_has_a_row_per_pair_in_the_features_order():
    rows = feature_matrix([CLAIM, "No words in common."], ["Curie, 1903.", ""])
    assert rows.shape == (2, len(PAIR_FEATURES)) and rows.dtype == np.float32
    assert rows[0].tolist() == pytest.approx(pair_features(CLAIM, "Curie, 1903."))
    assert feature_matrix([], []).shape == (0, len(PAIR_FEATURES))


def synthetic_pairs(n_claims: int = 16, seed: int = 0):
    """Pairs whose evidence repeats the claim (support), changes its year (refute), or is
    unrelated; the states are noise, so only the pair features can decide."""
    rng = np.random.default_rng(seed)
    pairs = []
    for i in range(n_claims):
        claim = f"Person {i} founded the Harbour Company in {1900 + i}."
        pairs += [
            StancePair(
                len(pairs),
                claim,
                f"In {1900 + i} person {i} founded the Harbour Company.",
                "support",
            ),
            StancePair(
                len(pairs) + 1,
                claim,
                f"Person {i} founded the Harbour Company in {1950 + i}.",
                "refute",
            ),
            StancePair(len(pairs) + 2, claim, "Rain fell on the hills all week.", "irrelevant"),
        ]
    states = rng.normal(size=(len(pairs), 8)).astype(np.float32)
    return pairs, states


def test_a_head_reads_the_pair_features_after_the_state(tmp_path):
    pairs, states = synthetic_pairs()
    assert head_inputs(pairs, states, False) is states
    assert head_inputs(pairs, states, True).shape == (len(pairs), 8 + len(PAIR_FEATURES))
    head = train_stance_head(pairs, states, "logistic", pair_features=True)
    assert head.record["pair_features"] == list(PAIR_FEATURES) and head.width == 8 + 12
    back = StateHead.load(head.save(tmp_path / "stance.npz"))
    decided = decide(pairs, states, back)  # it computes the features itself
    assert [r.predicted for r in decided] == [p.stance for p in pairs]
    blind = crossfit_head(pairs, states, "logistic", pair_features=True)
    assert np.mean([r.predicted == p.stance for r, p in zip(blind, pairs, strict=True)]) > 0.9
    assert set(STANCES) >= {r.predicted for r in blind}


def test_a_head_of_other_pair_features_is_refused(tmp_path):
    pairs, states = synthetic_pairs()
    head = train_stance_head(pairs, states, "logistic", pair_features=True)
    other = StateHead(head.kind, head.mean, head.scale, head.layers,
                      {**head.record, "pair_features": ["coverage"]})  # fmt: skip
    with pytest.raises(ValueError, match="retrain it"):
        decide(pairs, states, other)
