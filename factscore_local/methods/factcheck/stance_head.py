"""The stance head: a model over the LM's hidden state where the stance prompt's label is
read (``pipeline/state_head.py``), trained on Factcheck-Bench's dev stance pairs. The four
label logits read off the next token cannot tell a refuting passage from an irrelevant one;
the state the model reads them from can be probed for it.

The head is trained with the pairs grouped by claim (the pairs of one claim never sit on
both sides of a split) and each stance weighed by the inverse of its frequency (it is
judged by macro-F1); ``crossfit_head`` decides each claim half with a head trained on
the other, as ``crossfit_stance`` does for the label bias. A head may also read a dozen
lexical features of the pair after the state (``pair_features.py``: how much of the claim
the evidence repeats, its numbers, the slot check), which the label logits and the state
of a small model give poorly. The embedded model's head ships
in ``data/heads/<model>-stance.npz``; ``fscore factcheck`` uses it when it exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from factscore_local.methods.factcheck.data import STANCES, StancePair
from factscore_local.methods.factcheck.pair_features import PAIR_FEATURES, feature_matrix
from factscore_local.methods.factcheck.pipeline import (
    CLAIM_MARK,
    STANCE_WORDS,
    StanceResult,
    _softmax,
    stance_prompt,
)
from factscore_local.pipeline.signals.state_head import HEADS_DIR, StateHead, load_head


def stance_head_path(model: str) -> Path:
    """Where the stance head of an embedded model ships (it may not exist)."""
    return HEADS_DIR / f"{model}-stance.npz"


def shipped_stance_head(model: str) -> StateHead | None:
    path = stance_head_path(model)
    return load_head(str(path)) if path.is_file() else None


def trained_on(head: StateHead, path: Path) -> bool:
    """Whether the head was trained on the pairs of a file of this name (its record's
    ``fitted_on.file``): scored on them, its figures are in-sample."""
    fitted = (head.record.get("fitted_on") or {}).get("file")
    return bool(fitted) and Path(fitted).name == Path(path).name


def stance_states(pairs: Sequence[StancePair], lm) -> np.ndarray:
    """The state where the stance label is read, per pair without an error (``lm``: a
    ``CachedLM``; cached beside the label logits)."""
    ok = [p for p in pairs if not p.error]
    if not ok:
        return np.zeros((0, 0), np.float32)
    prompts = [lm.chat(stance_prompt(p.claim, p.evidence)) for p in ok]
    prefixes = [p[: p.rindex(CLAIM_MARK)] for p in prompts]
    return np.stack(lm.choice_states(prompts, STANCE_WORDS, prefixes))


def head_inputs(pairs: Sequence[StancePair], states: np.ndarray, pair_features: bool) -> np.ndarray:
    """What a head reads per pair without an error: the state, and with ``pair_features``
    the pair's lexical features (``pair_features.py``) after it."""
    if not pair_features:
        return states
    ok = [p for p in pairs if not p.error]
    lexical = feature_matrix([p.claim for p in ok], [p.evidence for p in ok])
    return np.hstack([np.asarray(states, np.float32), lexical])


def reads_pair_features(head: StateHead) -> bool:
    """Whether the head was fitted with the pair features after the state (their names
    are in its record; a head of another version of them is refused)."""
    names = head.record.get("pair_features")
    if names and list(names) != list(PAIR_FEATURES):
        raise ValueError(f"this stance head reads pair features {names}, not this version's "
                         f"{list(PAIR_FEATURES)}: retrain it")  # fmt: skip
    return bool(names)


def stance_logits(head: StateHead, states: np.ndarray) -> np.ndarray:
    """(n, 4) logits in STANCES' order; a stance the head was not trained on (too few pairs
    of it) gets -inf, so probability 0."""
    labels = head.record.get("labels") or []
    if len(labels) < 2 or set(labels) - set(STANCES):
        raise ValueError(f"not a stance head: its labels are {labels or 'none'}, not among "
                         f"{list(STANCES)}")  # fmt: skip
    logits = head.logits(states)
    out = np.full((len(logits), len(STANCES)), -np.inf)
    for j, stance in enumerate(STANCES):
        if stance in labels:
            out[:, j] = logits[:, labels.index(stance)]
    return out


def decide(pairs: Sequence[StancePair], states: np.ndarray, head: StateHead) -> list[StanceResult]:
    """Stance probabilities of the pairs (an error pair gets none) from their states."""
    inputs = head_inputs(pairs, states, reads_pair_features(head)) if len(states) else states
    probabilities = iter(_softmax(stance_logits(head, inputs)) if len(states) else [])
    out = []
    for pair in pairs:
        if pair.error:
            out.append(StanceResult(pair, None))
            continue
        row = zip(STANCES, next(probabilities), strict=True)
        out.append(StanceResult(pair, {s: round(float(v), 4) for s, v in row}))
    return out


def run_stance_head(pairs: Sequence[StancePair], lm, head: StateHead) -> list[StanceResult]:
    """``run_stance`` with the head deciding: one pass per pair reads its state."""
    return decide(pairs, stance_states(pairs, lm), head)


def train_stance_head(
    pairs: Sequence[StancePair], states: np.ndarray, kind: str = "logistic", seed: int = 0,
    record: dict | None = None, pair_features: bool = False,
) -> StateHead:  # fmt: skip
    """A head over the four stances, its regularisation chosen by claim-grouped CV; with
    ``pair_features`` it reads the pairs' lexical features after the state."""
    from factscore_local.labels.heads import fit_head

    ok = [p for p in pairs if not p.error]
    targets = np.asarray([p.stance for p in ok])
    inputs = head_inputs(ok, states, pair_features)
    if pair_features:
        record = {**(record or {}), "pair_features": list(PAIR_FEATURES)}
    return fit_head(inputs, targets, [p.claim for p in ok], kind, seed, record)


def crossfit_head(
    pairs: Sequence[StancePair], states: np.ndarray, kind: str = "logistic", seed: int = 0,
    pair_features: bool = False,
) -> list[StanceResult]:  # fmt: skip
    """Each claim half decided by a head trained on the other half's pairs."""
    from factscore_local.labels.validation import topic_half

    ok = [p for p in pairs if not p.error]
    halves = np.asarray([topic_half(p.claim) for p in ok])
    decided: dict[int, StanceResult] = {}
    for half in (0, 1):
        train, test = np.flatnonzero(halves != half), np.flatnonzero(halves == half)
        if not len(train) or not len(test):
            continue
        head = train_stance_head([ok[i] for i in train], states[train], kind, seed,
                                 pair_features=pair_features)  # fmt: skip
        for i, result in zip(test, decide([ok[i] for i in test], states[test], head), strict=True):
            decided[int(i)] = result
    return [decided[i] for i in sorted(decided)]
