"""State heads: training, the file they are kept in, and cross-fitting that never trains
on the topics it scores (synthetic states; the real model's states in
test_head_calibration.py)."""

from __future__ import annotations

import numpy as np
import pytest

from factscore_local.labels.heads import fit_head, fold_heads, held_out_scores, out_of_fold_scores
from factscore_local.pipeline.signals.state_head import StateHead


def synthetic(n_topics: int = 12, per_topic: int = 20, width: int = 32, seed: int = 0):
    """States whose first dimension leans with the label, topics with their own offset."""
    rng = np.random.default_rng(seed)
    topics = np.repeat([f"t{i}" for i in range(n_topics)], per_topic)
    supported = rng.random(len(topics)) < 0.6
    states = rng.normal(size=(len(topics), width)).astype(np.float32)
    states[:, 0] += np.where(supported, 1.5, -1.5)
    states += np.repeat(rng.normal(size=(n_topics, width)), per_topic, axis=0) * 0.3
    return states, supported, topics


@pytest.mark.parametrize("kind", ["logistic", "mlp"])
def test_a_head_separates_and_round_trips_through_its_file(kind, tmp_path):
    states, supported, topics = synthetic()
    head = fit_head(states, supported, topics, kind, seed=0, record={"model": "synthetic"})
    scores = head.score(states)
    assert scores.shape == (len(states),)
    accuracy = np.mean((scores > 0) == supported)
    assert accuracy > 0.85
    back = StateHead.load(head.save(tmp_path / "head.npz"))
    np.testing.assert_allclose(back.score(states), scores, rtol=1e-5, atol=1e-5)
    assert back.kind == kind and back.record["model"] == "synthetic"
    assert back.record["n_facts"] == len(states) and back.record["n_topics"] == 12


def test_a_logistic_head_scores_as_scikit_learn_does():
    """The numpy forward pass gives sklearn's own log-odds."""
    from sklearn.linear_model import LogisticRegression

    states, supported, topics = synthetic()
    head = fit_head(states, supported, topics, "logistic")
    x = (states - head.mean) / head.scale
    c = head.record["regularisation"]["C"]
    ours = LogisticRegression(C=c, max_iter=3000).fit(x, supported).decision_function(x)
    np.testing.assert_allclose(head.score(states), ours, rtol=1e-3, atol=1e-3)


def test_bad_heads_and_inputs_are_refused(tmp_path):
    states, supported, topics = synthetic(n_topics=4)
    with pytest.raises(ValueError, match="both kinds"):
        fit_head(states, np.ones(len(states), bool), topics)
    with pytest.raises(ValueError, match="one of"):
        fit_head(states, supported, topics, kind="forest")
    head = fit_head(states, supported, topics)
    with pytest.raises(ValueError, match="32 numbers"):
        head.score(np.zeros((2, 8)))
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a head")
    with pytest.raises(ValueError, match="not a state head"):
        StateHead.load(junk)
    with pytest.raises(ValueError, match="not found"):
        StateHead.load(tmp_path / "missing.npz")


def test_cross_fitting_never_trains_on_the_topics_it_scores():
    """Flipping every label of one topic moves no out-of-fold score of that topic: the
    heads that score it never saw its labels."""
    states, supported, topics = synthetic()
    before = out_of_fold_scores(states, supported, topics)
    flipped = supported.copy()
    flipped[topics == "t3"] ^= True
    after = out_of_fold_scores(states, flipped, topics)
    mine = topics == "t3"
    np.testing.assert_array_equal(before[mine], after[mine])
    assert not np.allclose(before[~mine], after[~mine])  # the other fold's head did see it
    for held_out, head in fold_heads(states, supported, topics):
        assert head.record["n_facts"] == int(np.sum(~np.isin(topics, list(held_out))))


def test_an_unseen_topic_is_scored_by_every_fold_head():
    states, supported, topics = synthetic()
    heads = fold_heads(states, supported, topics)
    new = states[:3]
    expected = np.mean([h.score(new) for _, h in heads], axis=0)
    np.testing.assert_allclose(held_out_scores(heads, new, ["elsewhere"] * 3), expected)


@pytest.mark.parametrize("kind", ["logistic", "mlp"])
def test_a_head_over_labels_gives_a_logit_per_label(kind, tmp_path):
    """The stance head's shape: string targets, one logit per label in sorted order."""
    rng = np.random.default_rng(1)
    labels = np.asarray(["refute", "support", "irrelevant"])[rng.integers(0, 3, 300)]
    states = rng.normal(size=(300, 16)).astype(np.float32)
    for i, label in enumerate(("irrelevant", "refute", "support")):
        states[labels == label, i] += 3.0
    topics = np.asarray([f"c{i % 10}" for i in range(300)])
    head = fit_head(states, labels, topics, kind)
    assert head.record["labels"] == ["irrelevant", "refute", "support"]
    back = StateHead.load(head.save(tmp_path / "stance.npz"))
    logits = back.logits(states)
    assert logits.shape == (300, 3)
    predicted = np.asarray(back.record["labels"])[logits.argmax(axis=1)]
    assert np.mean(predicted == labels) > 0.9
    with pytest.raises(ValueError, match="3 label logits"):
        back.score(states)


# The final hidden state's width of each embedded model (its hidden size).
STATE_WIDTH = {
    "qwen2.5-coder-0.5b-instruct-q4_k_m": 896,
    "qwen2.5-coder-1.5b-instruct-q4_k_m": 1536,
}


def test_every_shipped_head_fits_its_model_and_says_what_it_was_fitted_on():
    """The heads in data/heads/: both embedded models have a fact head; each file names
    its model (whose state width it reads), its commit and seed, and what it was fitted on;
    a stance head gives a logit per stance it was trained on."""
    from factscore_local.methods.factcheck.data import STANCES
    from factscore_local.pipeline.signals.state_head import HEADS_DIR, shipped_head_path

    for model in STATE_WIDTH:
        assert shipped_head_path(model).is_file(), f"no head shipped for {model}"
    files = sorted(HEADS_DIR.glob("*.npz"))
    for path in files:
        head = StateHead.load(path)
        model = head.record["model"]
        assert path.stem in (model, f"{model}-stance")
        lexical = len(head.record.get("pair_features") or [])  # read after the state
        assert head.width == STATE_WIDTH[model] + lexical
        assert head.record["commit"] and "seed" in head.record and head.record["fitted_on"]
        states = np.zeros((2, head.width), np.float32)
        if path.stem.endswith("-stance"):
            assert set(head.record["labels"]) <= set(STANCES)
            assert head.logits(states).shape == (2, len(head.record["labels"]))
        else:
            assert np.isfinite(head.score(states)).all()


def test_a_stance_head_knows_the_file_it_was_trained_on(tmp_path):
    """fscore factcheck warns that a shipped stance head scored on its own training file
    gives in-sample figures: the file is matched by name, wherever it lies."""
    from factscore_local.methods.factcheck.stance_head import trained_on

    head = StateHead("logistic", np.zeros(2, np.float32), np.ones(2, np.float32),
                     ((np.zeros((2, 2), np.float32), np.zeros(2, np.float32)),),
                     {"fitted_on": {"file": "factcheck-bench/stance-dev.jsonl"}})  # fmt: skip
    assert trained_on(head, tmp_path / "elsewhere" / "stance-dev.jsonl")
    assert not trained_on(head, tmp_path / "stance-test.jsonl")
    unrecorded = StateHead("logistic", head.mean, head.scale, head.layers)
    assert not trained_on(unrecorded, tmp_path / "stance-dev.jsonl")
