"""Factcheck-Bench offline: label mapping (4 -> 3), the scores against hand-computed cases,
bad lines reported per line, the stance prompt and label words, and a small real run with
the small embedded LM against an index (marker: slow)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from factscore_local.cli import main
from factscore_local.methods.factcheck.data import (
    TO_THREE,
    StancePair,
    classification_scores,
    edit_similarity,
    read_claims,
    read_stance_pairs,
)
from factscore_local.methods.factcheck.pipeline import (
    CLAIM_MARK,
    STANCE_DEMOS,
    STANCE_WORDS,
    StanceResult,
    stance_prompt,
)
from tests.conftest import SHARED, require, require_model

BENCH = SHARED / "factcheck-bench"


def test_the_real_files_read_with_every_label_mapped():
    pairs = read_stance_pairs(require(BENCH / "subtask3_claim_evidence_stance-dev.jsonl"))
    assert len(pairs) == 2205 and not any(p.error for p in pairs)
    counts = {s: sum(p.stance == s for p in pairs) for s in TO_THREE}
    assert counts == {"support": 483, "partial support": 261, "refute": 110, "irrelevant": 1351}
    claims = read_claims(require(BENCH / "subtask4_claim_factuality-dev.jsonl"))
    assert len(claims) == 441 and not any(c.error for c in claims)
    assert sum(c.label == "false" for c in claims) == 99


def test_four_labels_merge_into_three():
    assert {TO_THREE[s] for s in ("support", "partial support")} == {"support"}
    probs = {"support": 0.3, "partial support": 0.3, "refute": 0.4, "irrelevant": 0.0}
    result = StanceResult(StancePair(1, "c", "e", "refute"), probs)
    assert result.predicted == "refute"  # four labels: refute is the single largest
    assert result.predicted_three == "support"  # merged: 0.6 > 0.4


def test_macro_f1_against_a_hand_computed_case():
    gold = ["support", "support", "refute", "irrelevant", "irrelevant", "irrelevant"]
    pred = ["support", "refute", "refute", "irrelevant", "irrelevant", "support"]
    s = classification_scores(gold, pred, ("support", "refute", "irrelevant"))
    # support: P 1/2, R 1/2, F1 1/2; refute: P 1/2, R 1, F1 2/3; irrelevant: P 1, R 2/3,
    # F1 4/5. Macro F1 = (1/2 + 2/3 + 4/5) / 3 = 0.6556; accuracy 4/6.
    assert s["per_label"]["refute"] == {"precision": 0.5, "recall": 1.0, "f1": 0.6667,
                                        "support": 1}  # fmt: skip
    assert s["macro_f1"] == pytest.approx(0.6556, abs=1e-4)
    assert s["accuracy"] == pytest.approx(0.6667, abs=1e-4)
    never = classification_scores(["a", "b"], ["a", "a"], ("a", "b", "c"))
    assert never["per_label"]["b"]["precision"] == 0.0  # never predicted: 0, no warning


def test_bad_lines_are_reported_per_line(tmp_path):
    stance = tmp_path / "s.jsonl"
    stance.write_text("\n".join([
        json.dumps({"claim": "A is B.", "evidence": "A is B.", "stance": "completely-support"}),
        json.dumps({"claim": "A is B.", "evidence": "x", "stance": "maybe"}),
        json.dumps({"claim": "  ", "evidence": "x", "stance": "refute"}),
        "{not json",
        "",
        json.dumps(["a list"]),
    ]) + "\n", "utf-8")  # fmt: skip
    pairs = read_stance_pairs(stance)
    assert [p.line for p in pairs] == [1, 2, 3, 4, 6]
    assert pairs[0].stance == "support" and not pairs[0].error
    assert "unknown stance 'maybe'" in pairs[1].error
    assert "empty or missing 'claim'" in pairs[2].error
    assert "invalid JSON" in pairs[3].error and "not a JSON object" in pairs[4].error
    claims = tmp_path / "c.jsonl"
    claims.write_text(json.dumps({"claim": "", "label": "true"}) + "\n"
                      + json.dumps({"claim": "X.", "label": "maybe"}) + "\n", "utf-8")  # fmt: skip
    errors = [c.error for c in read_claims(claims)]
    assert "empty or missing 'claim'" in errors[0] and "unknown label 'maybe'" in errors[1]


def test_stance_prompt_shares_everything_before_the_claim():
    a, b = stance_prompt("X was born in 1900.", "E1"), stance_prompt("Y died.", "E2")
    cut = a.rindex(CLAIM_MARK)
    assert a[:cut] == b[: b.rindex(CLAIM_MARK)]
    assert all(demo[0] in a[:cut] for demo in STANCE_DEMOS)
    assert a.endswith("Claim: X was born in 1900.\nEvidence: E1\nAnswer:")
    assert {d[2] for d in STANCE_DEMOS} == {words[0] for words in STANCE_WORDS}


def test_correction_measure():
    human = "Paris is the capital of France."
    assert edit_similarity(human, human) == 1.0
    assert edit_similarity("Lyon is the capital of France.", human) > edit_similarity(
        "France has many cities.", human
    )


@pytest.mark.slow
def test_factcheck_runs_end_to_end_with_a_real_lm(xml_index, tmp_path):
    """Three stance pairs and three claims with the small LM, evidence retrieved from an
    index of real Wikipedia text; the outputs and summary are complete, and a second run
    is served from the cache."""

    from factscore_local.model_store import SMALL_LM

    require_model(SMALL_LM)
    index = xml_index  # the real dump excerpt, built once for the session
    claims = tmp_path / "claims.jsonl"
    claims.write_text("\n".join(json.dumps(c) for c in [
        {"claim": "Abraham Lincoln was the 16th president of the United States.",
         "label": "true", "revised_claim": ""},
        {"claim": "Alfred Nobel was born in Norway.", "label": "false",
         "revised_claim": "Alfred Nobel was born in Sweden."},
        {"claim": "", "label": "true"},
    ]) + "\n", "utf-8")  # fmt: skip
    args = ["factcheck", "--index", str(index), "--lm", SMALL_LM, "--n-samples", "3",
            "--stance", str(require(BENCH / "subtask3_claim_evidence_stance-dev.jsonl")),
            "--claims", str(claims), "--out", str(tmp_path / "out"), "--quiet",
            "--cache", str(tmp_path / "c.db"), "--margin", "-0.99"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "stance, 3 labels (3 pairs)" in result.output
    assert "claims, system (2 true/false claims)" in result.output
    stance = [json.loads(x) for x in (tmp_path / "out/stance.jsonl").read_text().splitlines()]
    assert len(stance) == 3
    assert all(sum(s["probabilities"].values()) == pytest.approx(1, abs=1e-3) for s in stance)
    rows = [json.loads(x) for x in (tmp_path / "out/claims.jsonl").read_text().splitlines()]
    assert rows[2] == {"line": 3, "error": "empty or missing 'claim'"}
    assert rows[0]["evidence"][0]["title"] == "Abraham Lincoln"
    assert all(len(r["evidence"]) == 5 for r in rows[:2])
    assert all((r["predicted"] == "false") == ("revision" in r) for r in rows[:2])
    summary = json.loads((tmp_path / "out/summary.json").read_text())
    assert summary["claims"]["errors"] == 1
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0 and again.output == result.output


def test_label_bias_recovers_a_label_the_model_never_says():
    """Log-probabilities where the gold label 2 is always second best: no pair is decided
    2 until the fitted bias lifts it; pairs of labels 0 and 1 stay right."""
    import numpy as np

    from factscore_local.methods.factcheck.pipeline import fit_label_bias

    gold = np.asarray([0, 0, 1, 1, 2, 2, 2])
    log_probs = np.log(np.asarray([
        [0.7, 0.2, 0.1], [0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.3, 0.6, 0.1],
        [0.6, 0.1, 0.3], [0.5, 0.2, 0.3], [0.2, 0.55, 0.25],
    ]))  # fmt: skip
    assert not (np.argmax(log_probs, axis=1) == 2).any()
    bias = fit_label_bias(log_probs, gold)
    assert bias[0] == 0.0
    assert (np.argmax(log_probs + bias, axis=1) == gold).all()


def test_stance_scores_are_cross_fitted_over_claim_halves():
    from factscore_local.labels.validation import topic_half
    from factscore_local.methods.factcheck.pipeline import stance_scores

    claims = [f"Claim {i}." for i in range(12)]
    assert {topic_half(c) for c in claims} == {0, 1}
    results = [
        StanceResult(StancePair(i, c, "e", "irrelevant" if i % 2 else "support"),
                     {"support": 0.5, "partial support": 0.1, "refute": 0.1,
                      "irrelevant": 0.3 if i % 2 else 0.2})
        for i, c in enumerate(claims)
    ]  # fmt: skip
    out = stance_scores(results)
    assert out["four_labels"]["per_label"]["irrelevant"]["f1"] == 0.0  # never said raw
    fitted = out["label_bias_crossfitted"]
    assert fitted["four_labels"]["n"] == 12 and len(fitted["biases"]) == 2
    assert fitted["four_labels"]["accuracy"] == 1.0  # the bias fitted on one half transfers


def test_claim_margin_is_fitted_and_cross_fitted_over_claim_halves():
    """True claims all score above -2 and false ones below it, but margin 0 calls most
    true claims false: the fitted threshold separates them, on each half from the other."""
    import numpy as np

    from factscore_local.labels.validation import topic_half
    from factscore_local.methods.factcheck.data import Claim
    from factscore_local.methods.factcheck.pipeline import (
        ClaimResult,
        claim_scores,
        fit_claim_margin,
    )

    margins = np.asarray([-1.5, -1.0, 0.5, -3.0, -2.5])
    is_true = np.asarray([True, True, True, False, False])
    cut = fit_claim_margin(margins, is_true)
    assert -2.5 <= cut < -1.5
    texts = [f"Claim number {i}." for i in range(16)]
    assert {topic_half(t) for t in texts} == {0, 1}
    results = [
        ClaimResult(Claim(i, t, "true" if i % 2 else "false"),
                    -1.0 if i % 2 else -3.0, "false")
        for i, t in enumerate(texts)
    ]  # fmt: skip
    out = claim_scores(results)
    assert out["system"]["per_label"]["true"]["recall"] == 0.0
    fitted = out["margin_crossfitted"]
    assert fitted["accuracy"] == 1.0 and len(fitted["margins"]) == 2
    assert all(-3.0 < m < -1.0 for m in fitted["margins"])
