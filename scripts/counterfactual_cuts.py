"""Where a fitted rule's cut could go: the counterfactual probe's pairs under every cut of
the rule's score, not just the fitted one.

A fitted rule decides "supported" when its linear score is above 0 and no veto applies.
Moving that cut trades the originals' acceptance for contradiction recall; how much each
cut buys depends only on how well the score orders the pairs. ``cuts`` answers, per kind
of counterfactual:

- ``score_ordered``: the share of pairs whose counterfactual scores below its original
  (a vetoed fact scores lowest; ties count half). No cut rejects a counterfactual and
  keeps its original unless the score orders the pair right;
- ``recall_in_allowance``: the recall at the highest cut that keeps the originals (all
  kinds together) within ``ALLOWANCE`` points of a baseline rule's acceptance (the
  issue's goal allows 2 points);
- ``cut_for_90`` and ``originals_at_90``: the lowest cut at which the kind's recall
  reaches 90%, and the originals' acceptance (all kinds) that cut leaves (no cut, None,
  where the vetoes alone reject 90%).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from factscore_local.declarations.verifiers import FittedRule, Thresholds, get_verifier

ALLOWANCE = 2.0  # points of the originals' acceptance the goal lets a rule give up
GOAL = 90.0  # the contradiction recall (%) the goal asks of each kind


def scores(signals: dict[str, np.ndarray], verifier: str, thresholds: Thresholds) -> np.ndarray:
    """The fitted rule's score per fact, -inf where its veto applies (decided: score > 0)."""
    rule = get_verifier(verifier).rule
    if not isinstance(rule, FittedRule):
        raise ValueError(f"{verifier!r} is not a fitted rule: it has no score to cut")
    return rule.score(signals, thresholds.weights)


def _cut(value: float) -> float | None:
    return round(value, 2) if math.isfinite(value) else None


def _ordered(changed: np.ndarray, original: np.ndarray) -> float:
    below = (changed < original).mean()
    tied = (changed == original).mean()  # both vetoed included
    return float(round(100 * (below + 0.5 * tied), 1))


def allowance_cut(original: np.ndarray, floor: float) -> float:
    """The highest cut at which at least ``floor`` % of the originals score above it."""
    ranked = np.sort(original[np.isfinite(original)])[::-1]
    need = math.ceil(floor / 100 * len(original) - 1e-9)
    if need <= 0:
        return float(ranked[0]) if len(ranked) else 0.0
    if need > len(ranked):
        return -math.inf
    below = ranked[need] if need < len(ranked) else ranked[-1] - 1.0
    return float((ranked[need - 1] + below) / 2)


def cut_for(changed: np.ndarray, recall: float) -> float:
    """The lowest cut at which at least ``recall`` % of the counterfactuals score at or
    below it (a fact is rejected when its score is not above the cut)."""
    ranked = np.sort(changed)
    need = math.ceil(recall / 100 * len(changed) - 1e-9)
    return float(ranked[need - 1]) if need else -math.inf


def cuts(
    kinds: Sequence[str],
    original: np.ndarray,
    changed: np.ndarray,
    baseline_accepted: float,
    order: Sequence[str] = (),
) -> dict:
    """Per kind (in ``order``, then "all"): score ordering, recall within the allowance,
    the cut that reaches the goal and the originals it keeps; ``kinds`` is each pair's
    kind, ``original`` and ``changed`` the rule's scores of its two facts,
    ``baseline_accepted`` the baseline rule's acceptance of the originals (%, all kinds)."""
    kinds_ = np.asarray(kinds)
    present = [k for k in order if k in set(kinds)] or list(dict.fromkeys(kinds))
    allowed = allowance_cut(original, baseline_accepted - ALLOWANCE)
    out: dict = {
        "allowance": {
            "cut": _cut(allowed),
            "originals_accepted": float(round(100 * (original > allowed).mean(), 1)),
        }
    }
    for kind in (*present, "all"):
        mine = np.ones(len(kinds_), bool) if kind == "all" else kinds_ == kind
        goal_cut = cut_for(changed[mine], GOAL)
        out[kind] = {
            "pairs": int(mine.sum()),
            "score_ordered": _ordered(changed[mine], original[mine]),
            "recall_in_allowance": float(round(100 * (changed[mine] <= allowed).mean(), 1)),
            "cut_for_90": _cut(goal_cut),
            "originals_at_90": float(round(100 * (original > goal_cut).mean(), 1)),
        }
    return out
