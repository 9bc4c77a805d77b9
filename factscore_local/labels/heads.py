"""Training state heads (``pipeline/state_head.py``) on human labels, with scikit-learn.

A head learns "supported" (the humans' S) against the rest (NS, IR) from the verdict's
hidden state of each human atomic fact. Its regularisation is chosen by cross-validation
grouped by topic, so that the facts of one bio (which share a page and a style) never
sit on both sides of a split. ``out_of_fold_scores`` gives every fact the score of a head
that never saw its topic: the input a fitted rule weighs the head by, so that the rule
does not learn the head's confidence on its own training facts.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from factscore_local.extras import require
from factscore_local.pipeline.signals.state_head import HEAD_KINDS, StateHead

# The regularisation searched: logistic regression's C (inverse strength), the MLP's
# alpha (L2 strength). Hidden-state probes need strong regularisation: a few thousand
# facts, 900-1,500 numbers each.
LOGISTIC_C = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1)
MLP_ALPHA = (1e-1, 1.0, 10.0)
MLP_HIDDEN = 64
INNER_FOLDS = 3


def _fit(kind: str, strength: float, seed: int, x: np.ndarray, y: np.ndarray):
    """A fitted model; the iteration cap is part of the regularisation, so reaching it is
    not reported. A head over labels weighs each label's rows by the inverse of its
    frequency: it is judged by macro-F1, and unweighted a rare label (a refuting passage)
    is never predicted."""
    exceptions = require("sklearn.exceptions", "stats", "training a state head")
    weights = None
    if y.dtype != bool:
        utils = require("sklearn.utils.class_weight", "stats", "training a state head")
        weights = utils.compute_sample_weight("balanced", y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", exceptions.ConvergenceWarning)
        return _model(kind, strength, seed).fit(x, y, sample_weight=weights)


def _model(kind: str, strength: float, seed: int):
    if kind == "logistic":
        lm = require("sklearn.linear_model", "stats", "training a state head")
        return lm.LogisticRegression(C=strength, max_iter=3000)
    nn = require("sklearn.neural_network", "stats", "training a state head")
    # L-BFGS: deterministic for a seed, and no validation split taken from a few
    # thousand facts (the alpha grid regularises).
    return nn.MLPClassifier(
        hidden_layer_sizes=(MLP_HIDDEN,), alpha=strength, solver="lbfgs", max_iter=500,
        random_state=seed,
    )  # fmt: skip


def _standardise(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = states.mean(axis=0)
    scale = states.std(axis=0) + 1e-4  # a dimension that never moves stays finite
    return mean.astype(np.float32), scale.astype(np.float32)


def _choose_strength(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray | None, kind: str, seed: int
) -> float:
    """The regularisation with the best grouped cross-validated log-loss."""
    grid = LOGISTIC_C if kind == "logistic" else MLP_ALPHA
    if groups is None or len(set(groups)) < 2 * INNER_FOLDS:
        return grid[len(grid) // 2]
    ms = require("sklearn.model_selection", "stats", "training a state head")
    metrics = require("sklearn.metrics", "stats", "training a state head")
    classes = np.unique(y)
    best = None
    for strength in grid:
        losses = []
        for train, test in ms.GroupKFold(n_splits=INNER_FOLDS).split(x, y, groups):
            if len(set(y[train].tolist())) < 2:
                continue
            model = _fit(kind, strength, seed, x[train], y[train])
            # A label the fold never saw (a rare stance) gets probability 0, clipped.
            proba = np.zeros((len(test), len(classes)))
            proba[:, np.searchsorted(classes, model.classes_)] = model.predict_proba(x[test])
            proba = np.clip(proba, 1e-6, 1)
            losses.append(metrics.log_loss(y[test], proba / proba.sum(1, keepdims=True),
                                           labels=classes))  # fmt: skip
        loss = float(np.mean(losses)) if losses else np.inf
        if best is None or loss < best[0]:
            best = (loss, strength)
    return best[1]


def fit_head(
    states: np.ndarray,
    targets: np.ndarray,
    groups: Sequence[str] | None = None,
    kind: str = "logistic",
    seed: int = 0,
    record: dict | None = None,
) -> StateHead:
    """A head fitted on these states (rows) and targets: booleans (True: supported) give a
    head of one score, the log-odds; labels (strings) give one logit per label, in sorted
    order (``record["labels"]``). ``groups`` (each fact's topic, or claim) group the inner
    cross-validation that picks the regularisation."""
    if kind not in HEAD_KINDS:
        raise ValueError(f"a head is one of {HEAD_KINDS}; got {kind!r}")
    states = np.asarray(states, dtype=np.float32)
    y = np.asarray(targets)
    binary = y.dtype == bool
    if len(states) != len(y):
        raise ValueError(f"{len(states)} states for {len(y)} labels")
    if len(set(y.tolist())) < 2:
        raise ValueError("training a head needs facts of both kinds (supported and not)")
    mean, scale = _standardise(states)
    x = (states - mean) / scale
    g = None if groups is None else np.asarray(groups)
    strength = _choose_strength(x, y, g, kind, seed)
    model = _fit(kind, strength, seed, x, y)
    if kind == "logistic":
        layers = ((model.coef_.T.astype(np.float32), model.intercept_.astype(np.float32)),)
    else:
        layers = tuple(
            (w.astype(np.float32), b.astype(np.float32))
            for w, b in zip(model.coefs_, model.intercepts_, strict=True)
        )
    if not binary and layers[-1][0].shape[1] == 1:  # scikit-learn keeps one logit for two
        w, b = layers[-1]
        layers = (*layers[:-1], (np.hstack([-w / 2, w / 2]), np.hstack([-b / 2, b / 2])))
    info = {
        **(record or {}),
        **(
            {}
            if binary
            else {"labels": [str(c) for c in model.classes_], "label_weights": "balanced"}
        ),  # fmt: skip
        "regularisation": {"C" if kind == "logistic" else "alpha": strength},
        "n_facts": int(len(y)),
        **({"n_supported": int(y.sum())} if binary else {}),
        "seed": seed,
    }
    if g is not None:
        info["n_topics"] = len(set(g))
    return StateHead(kind, mean, scale, layers, info)


def fold_heads(
    states: np.ndarray,
    supported: np.ndarray,
    groups: Sequence[str],
    kind: str = "logistic",
    seed: int = 0,
    folds: int = 2,
) -> list[tuple[set[str], StateHead]]:
    """One head per fold of topics, fitted on the other folds: (its held-out topics, head)."""
    ms = require("sklearn.model_selection", "stats", "training a state head")
    states = np.asarray(states, dtype=np.float32)
    y = np.asarray(supported, dtype=bool)
    g = np.asarray(groups)
    if len(set(g)) < folds:
        raise ValueError(f"out-of-fold scores need at least {folds} topics; got {len(set(g))}")
    return [
        (set(g[test]), _fit_or_prior(states[train], y[train], g[train], kind, seed))
        for train, test in ms.GroupKFold(n_splits=folds).split(states, y, g)
    ]


def _fit_or_prior(states, y, groups, kind: str, seed: int) -> StateHead:
    """A head, or, for a fold whose facts are all of one kind (a few bios), the prior's
    log-odds (smoothed) for every state."""
    if len(set(y.tolist())) > 1:
        return fit_head(states, y, groups, kind, seed)
    rate = (y.sum() + 1) / (len(y) + 2)
    width = states.shape[1]
    layer = (np.zeros((width, 1), np.float32), np.asarray([np.log(rate / (1 - rate))], np.float32))
    return StateHead("logistic", np.zeros(width, np.float32), np.ones(width, np.float32),
                     (layer,), {"prior": True, "n_facts": int(len(y))})  # fmt: skip


def held_out_scores(
    heads: list[tuple[set[str], StateHead]], states: np.ndarray, groups: Sequence[str]
) -> np.ndarray:
    """Each state's score by the fold head that held its topic out (a topic no fold held
    out, one the heads never saw, is scored by their mean)."""
    states = np.asarray(states, dtype=np.float32)
    scores = np.full(len(states), np.nan)
    g = np.asarray(groups)
    for held_out, head in heads:
        rows = np.isin(g, list(held_out))
        if rows.any():
            scores[rows] = head.score(states[rows])
    unseen = np.isnan(scores)
    if unseen.any():
        scores[unseen] = np.mean([h.score(states[unseen]) for _, h in heads], axis=0)
    return scores


def out_of_fold_scores(
    states: np.ndarray,
    supported: np.ndarray,
    groups: Sequence[str],
    kind: str = "logistic",
    seed: int = 0,
    folds: int = 2,
) -> np.ndarray:
    """Each fact's head score from a head fitted on the folds that do not hold its topic."""
    heads = fold_heads(states, supported, groups, kind, seed, folds)
    return held_out_scores(heads, states, groups)
