"""The verifier registry: a new verifier is one ``register`` call, and the estimator,
re-deciding (``--settings``), calibration and validation all use its rule."""

from __future__ import annotations

import json

import numpy as np
import pytest

from factscore_local.config import EvalConfig
from factscore_local.declarations.verifiers import (
    Thresholds,
    Verifier,
    get_verifier,
    register,
    unregister,
    verifier_names,
)
from factscore_local.labels.calibration import SubjectFacts, apply_thresholds, collect, fit
from factscore_local.labels.validation import validate_rows
from factscore_local.pipeline.estimator import Estimator
from factscore_local.pipeline.records.inputs import read_bios
from factscore_local.pipeline.records.rows import BioRow
from tests.conftest import SHARED, require, require_model

CHATGPT = SHARED / "factscore" / "labeled-dev" / "ChatGPT.jsonl"


@pytest.fixture
def toy_verifiers():
    """Two toy verifiers, registered for one test."""
    coin = register(Verifier("coin-20", ("draw",), lambda s, t: s["draw"] < 0.2))
    either = register(
        Verifier(
            "margin-or-np",
            ("margin", "np"),
            lambda s, t: (s["margin"] > t.margin) | (s["np"] > t.np),
            ("margin", "np"),
        )
    )
    yield coin, either
    unregister(coin.name)
    unregister(either.name)


def test_the_paper_verifiers_are_registered():
    assert set(verifier_names()) >= {
        "retrieve-lm",
        "no-context-lm",
        "np",
        "retrieve-lm+np",
        "always-supported",
        "always-not-supported",
        "random",
    }
    ensemble = get_verifier("retrieve-lm+np")
    assert {"margin", "np"} <= set(ensemble.signals) and ensemble.needs_evidence
    assert not get_verifier("no-context-lm").needs_evidence
    signals = {"margin": np.array([1.0, 1.0, -1.0]), "np": np.array([0.5, 0.1, 0.9])}
    decided = ensemble.decide(signals, Thresholds(0.0, 0.3), 3)
    assert decided.tolist() == [True, False, False]
    assert get_verifier("always-supported").decide({}, Thresholds(), 2).tolist() == [True, True]


def test_unknown_names_are_errors(db_index):
    with pytest.raises(ValueError, match="unknown verifier 'nope'"):
        EvalConfig(index=db_index, verifier="nope")
    with pytest.raises(ValueError, match="unknown signal"):
        Verifier("bad", ("vibes",), lambda s, t: True)
    with pytest.raises(ValueError, match="already registered"):
        register(Verifier("np", ("np",), lambda s, t: True))


def test_a_registered_toy_verifier_runs_end_to_end(db_index, toy_verifiers, tmp_path):
    """One entry is enough for the estimator to compute its signal, decide with its rule,
    write it out, re-decide it, and validate it against the humans (no LM needed)."""
    coin, _ = toy_verifiers
    bios = list(read_bios(require(CHATGPT)))[:5]
    config = EvalConfig(
        index=db_index, verifier="coin-20", use_atomic_facts=True, cache=tmp_path / "c.db"
    )
    out = tmp_path / "out.jsonl"
    rows = Estimator(config).run(bios, out, progress=False)
    facts = [d for r in rows for d in r.decisions]
    assert len(facts) > 50
    assert all(d.is_supported == (d.draw < 0.2) for d in facts)
    share = sum(d.is_supported for d in facts) / len(facts)
    assert 0.08 < share < 0.35
    # Written and read back as the same records; re-deciding changes nothing.
    written = [BioRow.from_json(json.loads(x)) for x in out.read_text().splitlines()]
    assert written == rows
    assert apply_thresholds(rows, coin, Thresholds(), config.gamma) == rows
    validation = validate_rows(rows, bootstrap=0)
    assert validation["subjects"]["ChatGPT"]["n_bios"] == 5
    with pytest.raises(ValueError, match="no threshold"):
        fit(collect(rows), coin)


def test_calibration_fits_a_toy_rule():
    """The 'either' rule calibrated on facts where a fact is supported when its margin or its
    NP is high: the fit reaches the humans exactly, which neither signal alone does."""
    margin = np.array([2.0, -2.0, -2.0, -2.0])
    np_value = np.array([0.1, 0.9, 0.1, 0.1])
    label_not_s = np.array([False, False, True, True])
    signals = {"margin": margin, "np": np_value, "draw": np.zeros(4)}
    subject = SubjectFacts(0.5, signals, np.array([0, 0, 0, 0]), 1, label_not_s, dict(signals))
    either = Verifier(
        "either (unregistered)",
        ("margin", "np"),
        lambda s, t: (s["margin"] > t.margin) | (s["np"] > t.np),
        ("margin", "np"),
    )
    settings = fit({"s": subject}, either, "f1")
    assert settings["fit"]["f1_micro"] == 100.0 and settings["fit"]["error_rate"] == 0.0
    assert fit({"s": subject}, "retrieve-lm", "f1")["fit"]["f1_micro"] < 100.0
    assert fit({"s": subject}, "np", "f1")["fit"]["f1_micro"] < 100.0


@pytest.mark.slow
def test_a_toy_rule_over_model_signals(db_index, toy_verifiers, tmp_path):
    """The toy 'either' verifier with real signals (the small LM's margin, MiniLM's NP) on a
    real bio: both signals are computed and recorded, and its rule decides."""
    from factscore_local.model_store import SMALL_LM

    require_model(SMALL_LM)
    bio = next(iter(read_bios(require(CHATGPT))))
    config = EvalConfig(
        index=db_index,
        lm=SMALL_LM,
        verifier="margin-or-np",
        np_model="minilm",
        margin=-1.0,
        cache=tmp_path / "c.db",
    )
    atoms = [f["text"] for s in bio.annotations for f in s.get("model-atomic-facts") or []][:6]
    results = Estimator(config).verify([(bio.topic, bio.topic, a) for a in atoms])
    for d in results:
        assert d.margin is not None and d.np is not None and d.evidence
        assert d.is_supported == (d.margin > -1.0 or d.np > config.thresholds.np)
