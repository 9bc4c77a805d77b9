"""FActScore arithmetic: the length penalty, per-bio scores and the summary."""

from __future__ import annotations

import math

import pytest

from factscore_local.pipeline.decision.scoring import BioScore, aggregate, length_penalty, score_bio


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (1, math.exp(-9)),
        (5, 0.36788),
        (9, 0.89484),
        (10, 1.0),
        (11, 1.0),
        (50, 1.0),
    ],
)
def test_length_penalty_default_gamma(n, expected):
    assert length_penalty(n, 10) == pytest.approx(expected, rel=1e-4)


def test_length_penalty_values_rounded():
    assert round(length_penalty(5, 10), 4) == 0.3679
    assert length_penalty(1, 10) == pytest.approx(1.2341e-4, rel=1e-3)
    assert round(length_penalty(9, 10), 4) == 0.8948


def test_length_penalty_disabled_and_degenerate():
    for n in (1, 5, 9, 10, 100):
        assert length_penalty(n, 0) == 1.0
    assert length_penalty(0, 10) == 1.0  # no facts: nothing to penalize
    assert all(length_penalty(n, 10) <= 1.0 for n in range(1, 60))
    # Monotone in the number of facts.
    values = [length_penalty(n, 10) for n in range(1, 12)]
    assert values == sorted(values)


def test_score_bio_not_responding():
    for decisions in (None, []):
        s = score_bio(decisions, 10)
        assert s == BioScore(False, 0, None, None)


def test_score_bio_precision_and_penalty():
    s = score_bio([True, False, True, True, False], 10)  # 3 of 5, penalty exp(-1)
    assert s.responded and s.n_facts == 5
    assert s.init_score == pytest.approx(0.6)
    assert s.score == pytest.approx(0.6 * math.exp(-1))
    s = score_bio([True] * 3 + [False] * 9, 10)  # 12 facts: no penalty
    assert s.init_score == pytest.approx(0.25) and s.score == pytest.approx(0.25)
    s = score_bio([True, False], 0)
    assert s.init_score == s.score == pytest.approx(0.5)


def test_aggregate_means_over_responding_only():
    bios = [
        score_bio([True] * 12, 10),  # 1.0, 12 facts
        score_bio([True, False] * 10, 10),  # 0.5, 20 facts
        score_bio(None, 10),  # abstained
        score_bio([], 10),  # no atomic fact
    ]
    summary = aggregate(bios)
    assert summary["score"] == pytest.approx(0.75)
    assert summary["init_score"] == pytest.approx(0.75)
    assert summary["respond_ratio"] == pytest.approx(0.5)
    assert summary["num_facts_per_response"] == pytest.approx(16)
    assert summary["n_bios"] == 4
    assert summary["n_responding"] == 2
    assert summary["n_facts"] == 32


def test_aggregate_with_penalty_differs_from_init():
    bios = [score_bio([True] * 5, 10), score_bio([True] * 10, 10)]
    summary = aggregate(bios)
    assert summary["init_score"] == pytest.approx(1.0)
    assert summary["score"] == pytest.approx((math.exp(-1) + 1.0) / 2)


def test_aggregate_empty_and_all_abstained():
    summary = aggregate([])
    assert summary["score"] is None and summary["respond_ratio"] is None
    assert summary["n_bios"] == 0 and summary["n_facts"] == 0
    summary = aggregate([score_bio(None, 10), score_bio([], 10)])
    assert summary["score"] is None and summary["init_score"] is None
    assert summary["num_facts_per_response"] is None
    assert summary["respond_ratio"] == 0.0 and summary["n_bios"] == 2
