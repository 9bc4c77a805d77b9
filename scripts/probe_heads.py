"""The counterfactual probes decided with a state head (issue 48; ``bench_counterfactual
--head``).

The probe's pairs come from the labeled dev bios, so a head or a rule fitted on all of
them has seen every original. Here each topic half's pairs are decided by what was fitted
on the other half only:

- ``default, cross-fitted``: the model's default rule, its weights fitted on the other
  half's labeled bios;
- ``head rule, cross-fitted``: a logistic head trained on the other half's human facts,
  and ``HEAD_RULE`` fitted on the other half (its facts scored by heads of two folds of
  topics, each blind to the fact's topic, as ``scripts.bench_heads`` does);
- ``head rule, head also trained on pairs``: the same, but the head is also trained on the
  other half's probe pairs (originals as supported, counterfactuals as not), which the
  issue allows; the rule's weights are the head rule's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from factscore_local.declarations.verifiers import (
    HEAD_RULE,
    VALUE_KEYS,
    Thresholds,
    get_verifier,
)
from factscore_local.labels.calibration import collect, fit, settings_thresholds
from factscore_local.labels.head_calibration import human_states, with_held_out_head
from factscore_local.labels.heads import fit_head
from factscore_local.labels.validation import topic_half
from factscore_local.pipeline.signals.state_head import StateHead

KIND = "logistic"


@dataclass(frozen=True)
class HalfFit:
    """What one topic half is decided by: fitted on the other half."""

    default: Thresholds
    head_rule: Thresholds
    head: StateHead
    head_with_pairs: StateHead


def fit_halves(rows: list, pairs: list, originals: list, changed: list, default: str,
               seed: int = 0) -> dict[int, HalfFit]:  # fmt: skip
    """Per topic half, the thresholds and heads fitted on the other half's labeled rows
    (which carry their states) and, for the second head, its probe pairs."""
    out = {}
    for half in (0, 1):
        train = [r for r in rows if topic_half(r.topic) != half]
        states, supported, topics = human_states(train)
        scored = with_held_out_head(train, states, supported, topics, KIND, seed)
        head = fit_head(states, supported, topics, KIND, seed)
        other = [i for i, p in enumerate(pairs) if topic_half(p.fact.topic) != half]
        with_pairs = head  # a slice of one half has no pairs in the other
        if other:
            pair_states = [originals[i].state for i in other] + [changed[i].state for i in other]
            with_pairs = fit_head(
                np.concatenate([states, np.stack(pair_states)]),
                np.concatenate([supported, [True] * len(other) + [False] * len(other)]),
                np.concatenate([topics, [pairs[i].fact.topic for i in other] * 2]), KIND, seed,
            )  # fmt: skip
        out[half] = HalfFit(
            default=settings_thresholds(fit(collect(train), default, "er")),
            head_rule=settings_thresholds(fit(collect(scored), HEAD_RULE, "er")),
            head=head,
            head_with_pairs=with_pairs,
        )
    return out


def _arrays(facts: list) -> dict[str, np.ndarray]:
    return {name: np.asarray([f.signals().get(name, 0.0) for f in facts], float)
            for name in VALUE_KEYS}  # fmt: skip


def crossfit_verdicts(pairs: list, originals: list, changed: list, fits: dict[int, HalfFit],
                      default: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """Per rule, (counterfactual accepted, original accepted) of every pair, each pair
    decided by what was fitted on the other topic half."""
    rules = {
        "default, cross-fitted": lambda f: (default, f.default, None),
        "head rule, cross-fitted": lambda f: (HEAD_RULE, f.head_rule, f.head),
        "head rule, head also trained on pairs": lambda f: (HEAD_RULE, f.head_rule,
                                                            f.head_with_pairs),
    }  # fmt: skip
    halves = np.asarray([topic_half(p.fact.topic) for p in pairs])
    out = {name: (np.zeros(len(pairs), bool), np.zeros(len(pairs), bool)) for name in rules}
    for half, fitted in fits.items():
        idx = np.flatnonzero(halves == half)
        if not len(idx):
            continue
        for j, facts in enumerate((changed, originals)):
            chosen = [facts[i] for i in idx]
            arrays, states = _arrays(chosen), np.stack([f.state for f in chosen])
            for name, choose in rules.items():
                verifier, thresholds, head = choose(fitted)
                if head is not None:
                    arrays = {**arrays, "head": np.round(head.score(states), 4)}
                decide = get_verifier(verifier).decide
                out[name][j][idx] = decide(arrays, thresholds, len(idx))
    return out


def head_verdicts(args, pairs: list, originals: list, changed: list, default: str) -> dict:
    """``crossfit_verdicts`` of the probe's pairs (``bench_counterfactual --head``), the
    labeled dev bios' states read from the cache (the tables' pass with states)."""
    from factscore_local.config import build_config
    from factscore_local.labels.head_calibration import rows_with_states
    from scripts.common import data_root
    from scripts.tables.runner import Runner

    bios = Runner(args.index, args.cache, data_root(args.data), args.lm, None, "page").bios(98)
    config = build_config({"index": args.index, "lm": args.lm, "cache": args.cache,
                           "gamma": 0, "use_atomic_facts": True, "validate": True,
                           "evidence": "page", "chunk_bios": 3, "verifier": HEAD_RULE})  # fmt: skip
    rows = rows_with_states(config, bios)
    fits = fit_halves(rows, pairs, originals, changed, default, args.seed)
    return crossfit_verdicts(pairs, originals, changed, fits, default)
