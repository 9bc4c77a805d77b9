"""Cross-fitting over the fixed topic halves and over random halvings (labels/crossfit.py)."""

from __future__ import annotations

import random

import pytest

from factscore_local.labels.crossfit import (
    crossfit,
    random_halves,
    repeated_crossfit,
    spread_figures,
)
from factscore_local.labels.validation import topic_half
from factscore_local.pipeline.records.rows import BioRow


def row(topic: str, facts: list[tuple[float, str]], source: str = "s.jsonl") -> BioRow:
    """A labeled bio whose model facts are its human facts: (margin, label) each."""
    decisions = [{"atom": f"{topic} {i}", "margin": m, "np": 0.5, "is_supported": True}
                 for i, (m, _) in enumerate(facts)]  # fmt: skip
    human = [{**d, "label": label} for d, (_, label) in zip(decisions, facts, strict=True)]
    score = sum(label == "S" for _, label in facts) / len(facts)
    return BioRow.from_json({
        "line": 1, "topic": topic, "source": source, "title": topic, "responded": True,
        "n_facts": len(facts), "init_score": 1.0, "score": 1.0, "decisions": decisions,
        "human": {"score": score, "n_facts": len(facts), "facts": human},
    })  # fmt: skip


def noisy_rows(n_topics: int, seed: int) -> list[BioRow]:
    """Topics whose supported facts score higher on average, with an overlap that leaves
    no cutoff right for every topic."""
    rng = random.Random(seed)
    rows = []
    for t in range(n_topics):
        facts = [(rng.gauss(1.0 if s else -1.0, 1.2), "S" if s else "NS")
                 for s in (rng.random() < 0.6 for _ in range(12))]  # fmt: skip
        rows.append(row(f"topic {t}", facts))
    return rows


def test_random_halves_split_the_topics_evenly_and_by_seed():
    topics = [f"t{i}" for i in range(11)]
    halves = random_halves(reversed(topics), 3)
    assert halves == random_halves(topics, 3)  # the order given does not matter
    assert sorted(halves) == sorted(topics)
    assert abs(sum(halves.values()) - len(topics) / 2) <= 0.5
    assert halves != random_halves(topics, 4)


def test_crossfit_decides_each_half_by_the_other_halfs_fit():
    """Half 0's topics separate at margin 0, half 1's at margin 2: each half is decided by
    the other's cutoff, so each gets the other's mistakes, never its own fit."""
    names = [f"topic {i}" for i in range(12)]
    rows = [row(t, [(0.5, "NS"), (3.0, "S"), (-1.0, "NS")] if topic_half(t) else
                   [(0.5, "S"), (3.0, "S"), (-1.0, "NS")]) for t in names]  # fmt: skip
    decided, fitted = crossfit(rows, rows, "retrieve-lm")
    assert len(fitted) == 2 and sorted(r.topic for r in decided) == sorted(names)
    by_topic = {r.topic: [d.is_supported for d in r.decisions] for r in decided}
    for t in names:  # the fact at 0.5 is decided as the other half labels it
        assert by_topic[t][0] is bool(topic_half(t))
    # A fixed split given as a function is the same thing.
    same, _ = crossfit(rows, rows, "retrieve-lm", half_of=topic_half)
    assert [r.to_json() for r in same] == [r.to_json() for r in decided]


def test_repeated_crossfit_reports_each_subjects_mean_and_spread():
    rows = noisy_rows(16, 0)
    spread = repeated_crossfit(rows, rows, "retrieve-lm", splits=6)
    figures = spread["s"]
    assert set(figures) == {"er_mean", "er_sd", "f1_mean", "f1_sd", "bias_mean", "splits"}
    assert figures["splits"] == 6
    assert figures["er_sd"] > 0  # the halvings disagree: that is the point of repeating
    assert figures["er_mean"] >= abs(figures["bias_mean"])  # a mean of |x| >= |mean of x|
    assert repeated_crossfit(rows, rows, "retrieve-lm", splits=6) == spread  # seeded
    assert repeated_crossfit(rows, rows, "retrieve-lm", splits=6, seed=6) != spread
    flat = spread_figures(spread, "rule/repeated")
    assert flat["rule/repeated/s/er_mean"] == figures["er_mean"] and len(flat) == 6


def test_a_rule_that_separates_every_topic_has_no_spread():
    rows = [row(f"topic {i}", [(2.0, "S"), (1.0, "S"), (-1.0, "NS")]) for i in range(8)]
    figures = repeated_crossfit(rows, rows, "retrieve-lm", splits=4)["s"]
    assert figures == {"er_mean": 0.0, "er_sd": 0.0, "f1_mean": 100.0, "f1_sd": 0.0,
                       "bias_mean": 0.0, "splits": 4}  # fmt: skip


def test_one_split_is_no_spread():
    with pytest.raises(ValueError, match="2 splits"):
        repeated_crossfit([], [], "retrieve-lm", splits=1)


def test_rows_decided_without_their_human_facts_report_no_f1():
    """Raw text's rows carry the humans' score but not their facts: ER, and no F1 of 0."""
    rows = noisy_rows(8, 1)
    bare = [BioRow.from_json({**r.to_json(), "human": {**r.to_json()["human"], "facts": []}})
            for r in rows]  # fmt: skip
    figures = repeated_crossfit(rows, bare, "retrieve-lm", splits=3)["s"]
    assert "f1_mean" not in figures and "f1_sd" not in figures and figures["splits"] == 3
    assert figures["er_mean"] >= 0
