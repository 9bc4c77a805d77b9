"""The probe's pairs under other cuts of a fitted rule's score: the score agrees with the
rule's decisions at its own cut, and each figure reads the cut it names."""

from __future__ import annotations

import numpy as np

from factscore_local.declarations.verifiers import RIVALS_RULE, Thresholds, get_verifier
from factscore_local.pipeline.signals.slots import YEAR_CONFLICT
from scripts.counterfactual_cuts import allowance_cut, cut_for, cuts, scores


def test_the_score_decides_as_the_rule_at_its_own_cut_and_a_veto_scores_lowest():
    rng = np.random.default_rng(0)
    n = 200
    signals = {"margin": rng.normal(size=n), "np": rng.uniform(size=n),
               "coverage": rng.uniform(size=n), "rivals": rng.exponential(size=n),
               "slots": rng.choice([0.0, 1.0, -1.0, YEAR_CONFLICT], size=n)}  # fmt: skip
    thresholds = Thresholds(weights=(-0.5, 1.0, 0.5, 0.2, 1.0, -0.3, 0.4, -0.2))
    score = scores(signals, RIVALS_RULE, thresholds)
    decided = get_verifier(RIVALS_RULE).decide(signals, thresholds, n)
    assert ((score > 0) == decided).all()
    assert (score[signals["slots"] == YEAR_CONFLICT] == -np.inf).all()  # the year veto
    assert np.isfinite(score[signals["slots"] != YEAR_CONFLICT]).all()


def test_each_figure_reads_its_cut():
    original = np.array([2.0, 1.0, 0.5, -1.0, -np.inf])  # the last one vetoed
    changed = np.array([0.2, -np.inf, 1.5, -2.0, -3.0])
    # 4 of 5 originals must stay accepted: the cut goes below -1.0, the lowest finite one.
    assert allowance_cut(original, 78.0) == -1.5
    assert allowance_cut(original, 59.0) == -0.25  # 3 of 5: halfway from 0.5 to -1.0
    assert cut_for(changed, 90.0) == 1.5  # every counterfactual at or below it
    assert cut_for(changed, 60.0) == -2.0
    out = cuts(["year", "year", "place", "place", "year"], original, changed, 80.0,
               order=("place", "year"))  # fmt: skip
    assert list(out) == ["allowance", "place", "year", "all"]
    assert out["allowance"] == {"cut": -1.5, "originals_accepted": 80.0}
    assert out["place"] == {"pairs": 2, "score_ordered": 50.0, "recall_in_allowance": 50.0,
                            "cut_for_90": 1.5, "originals_at_90": 20.0}  # fmt: skip
    # years: (0.2 < 2), (vetoed < 1) ordered; (-3 > vetoed) not; at -1.5, 2 of 3 rejected.
    assert out["year"]["score_ordered"] == 66.7
    assert out["year"]["recall_in_allowance"] == 66.7
    assert out["year"]["cut_for_90"] == 0.2


def test_no_cut_where_the_vetoes_alone_reach_the_goal():
    original = np.array([1.0, 1.0, 1.0])
    changed = np.array([-np.inf, -np.inf, -np.inf])
    out = cuts(["year"] * 3, original, changed, 100.0)
    assert out["year"]["cut_for_90"] is None
    assert out["year"]["originals_at_90"] == 100.0
