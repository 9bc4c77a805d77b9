"""Validation against human labels: the paper's human FActScore, ER, micro-F1, calibration.

LM-free: human scores come from the labeled dev files, and the estimator side uses the
trivial verifiers, whose ER and F1 are known in closed form.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from factscore_local.cli import main
from factscore_local.declarations.verifiers import Thresholds, get_verifier
from factscore_local.labels.calibration import (
    SubjectFacts,
    apply_thresholds,
    collect,
    estimated_score,
    fit,
    read_settings,
    settings_thresholds,
)
from factscore_local.labels.validation import (
    BioResult,
    f1_not_supported,
    half_means,
    mark,
    ranking_kept,
    report,
    topic_half,
    validate_rows,
    wins_on_both_halves,
)
from factscore_local.pipeline.records.labeled import human_bio_score, human_facts
from factscore_local.pipeline.records.rows import BioRow
from tests.conftest import SHARED, require, require_model

DEV = SHARED / "factscore" / "labeled-dev"
SUBJECTS = ("ChatGPT", "InstructGPT", "PerplexityAI")
# The paper's definition on the dev files (data README): score, responding bios, facts.
EXPECTED = {
    "ChatGPT": (59.7, 98, 3412),
    "InstructGPT": (50.5, 97, 2626),
    "PerplexityAI": (74.8, 93, 3978),
}


def load(subject: str) -> list[dict]:
    path = require(DEV / f"{subject}.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("subject", SUBJECTS)
def test_human_factscore_matches_the_paper_definition(subject):
    scores = [human_bio_score(r["annotations"]) for r in load(subject)]
    responding = [s for s in scores if s is not None]
    score, n_bios, n_facts = EXPECTED[subject]
    assert len(responding) == n_bios
    assert sum(n for _, n in responding) == n_facts
    assert round(100 * np.mean([s for s, _ in responding]), 1) == score


def test_irrelevant_sentences_count_their_model_facts_as_not_supported():
    annotations = [
        {"text": "A.", "human-atomic-facts": [{"text": "a", "label": "S"}]},
        {"text": "B.", "human-atomic-facts": None, "model-atomic-facts": [{"text": "b"}] * 3},
        {"text": "C.", "human-atomic-facts": [{"text": "c", "label": "IR"}]},
    ]
    assert human_bio_score(annotations) == (0.2, 5)
    assert [f.label for f in human_facts(annotations)] == ["S", "IR"]
    assert human_bio_score(None) is None


def test_f1_conventions():
    pairs = [("S", True), ("S", False), ("NS", False), ("NS", True), ("IR", False)]
    with_ir = f1_not_supported(pairs, ir_as_ns=True)
    assert (with_ir.precision, with_ir.recall) == (2 / 3, 2 / 3)
    without = f1_not_supported(pairs, ir_as_ns=False)
    assert (without.precision, without.recall, without.n_facts) == (0.5, 0.5, 4)
    assert f1_not_supported([("S", True)]).f1 == 0.0


def test_marks_ranking_and_split():
    assert (mark(70, 60), mark(50, 60), mark(63, 60)) == ("+", "-", "")
    assert ranking_kept({"a": 1, "b": 2}, {"a": 10, "b": 20})
    assert not ranking_kept({"a": 1, "b": 2}, {"a": 30, "b": 20})
    assert not ranking_kept({"a": 1, "b": 2}, {"a": 0, "b": 0})
    halves = [topic_half(r["topic"]) for r in load("ChatGPT")]
    assert 30 < sum(halves) < 68  # both halves well filled


def test_report_bootstrap_interval_contains_the_point_estimate():
    rng = np.random.default_rng(0)
    bios = [
        BioResult(f"t{i}", h, min(1.0, h + 0.1), [("S", True), ("NS", bool(i % 2))])
        for i, h in enumerate(rng.uniform(0.2, 0.8, 40))
    ]
    r = report(bios, bootstrap=300)
    assert r["error_rate"] == pytest.approx(r["estimated_score"] - r["human_score"], abs=0.01)
    lo, hi = r["error_rate_ci95"]
    assert lo <= r["error_rate"] <= hi
    assert r["bio_mae"] == pytest.approx(10.0, abs=0.5)


def test_cli_validates_three_subjects_with_trivial_verifiers(db_index, tmp_path):
    args = ["eval", "--index", str(db_index), "--quiet", "--use-atomic-facts"]
    for subject in SUBJECTS:
        args += ["--input", str(require(DEV / f"{subject}.jsonl"))]
    args += ["--cache", str(tmp_path / "cache.db")]
    result = CliRunner().invoke(main, [*args, "--json", "--verifier", "always-not-supported"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    for subject, (score, n_bios, _) in EXPECTED.items():
        got = out["subjects"][subject]
        assert got["human_score"] == pytest.approx(score, abs=0.05)
        assert got["n_human_responding"] == n_bios
        assert got["estimated_score"] == 0.0 and got["error_rate"] == got["er_human_score"]
        assert got["mark"] == "-" and got["recall"] == 100.0
        # Always "not supported": precision = share of G; F1 = 2p / (1 + p).
        p = got["precision"] / 100
        assert got["f1_micro"] == pytest.approx(100 * 2 * p / (1 + p), abs=0.01)
        assert got["f1_micro_ir_excluded"] < got["f1_micro"]  # IR moves facts into G
    assert out["ranking_kept"] is False  # every subject estimated 0: ties are not a ranking

    text = CliRunner().invoke(main, [*args, "--verifier", "always-supported"])
    assert text.exit_code == 0, text.output
    assert "ranking" in text.stdout and "PerplexityAI" in text.stdout


def make_subject(human: float, margins: list[list[float]]) -> SubjectFacts:
    flat = [m for bio in margins for m in bio]
    bio_index = [i for i, bio in enumerate(margins) for _ in bio]
    signals = {"margin": np.array(flat), "np": np.zeros(len(flat)), "draw": np.zeros(len(flat))}
    return SubjectFacts(
        human_score=human,
        signals=signals,
        bio=np.array(bio_index),
        n_bios=len(margins),
        h_label=np.array([m <= 0.5 for m in flat]),
        h_signals=dict(signals),
    )


def test_calibration_finds_the_threshold_that_matches_the_humans():
    # Half of each bio's facts have margins above 0.5; the humans say 50% supported, so
    # the default margin 0 (everything supported) is 50 points off and ~0.5 is right.
    subject = make_subject(0.5, [[0.05, 0.2, 0.8, 1.5], [0.1, 0.3, 0.9, 2.0]])
    assert estimated_score(subject, "retrieve-lm", Thresholds(0.0, 0.3)) == 1.0
    settings = fit({"s": subject}, "retrieve-lm", "er")
    assert settings["defaults"]["error_rate"] == 50.0
    assert settings["fit"]["error_rate"] == 0.0
    assert 0.3 <= settings["margin"] < 0.8
    assert fit({"s": subject}, "retrieve-lm", "f1")["fit"]["f1_micro"] == 100.0
    with pytest.raises(ValueError, match="no threshold"):
        fit({"s": subject}, "always-supported")


def test_settings_file_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not a JSON"):
        read_settings(bad)
    bad.write_text("{}")
    with pytest.raises(ValueError, match="lacks"):
        read_settings(bad)
    with pytest.raises(ValueError, match="not found"):
        read_settings(tmp_path / "none.json")


def test_apply_thresholds_redecides_and_rescores():
    row = {
        "line": 1,
        "topic": "t",
        "source": "s.jsonl",
        "responded": True,
        "n_facts": 2,
        "init_score": 1.0,
        "score": 1.0,
        "decisions": [
            {"atom": "a", "margin": 0.5, "np": 0.9, "is_supported": True},
            {"atom": "b", "margin": -0.5, "np": 0.9, "is_supported": True},
        ],
        "human": {
            "score": 0.5,
            "n_facts": 1,
            "facts": [{"atom": "c", "label": "NS", "margin": 2, "np": 0.1, "is_supported": True}],
        },
    }
    row = BioRow.from_json(row)
    (lm,) = apply_thresholds([row], "retrieve-lm", Thresholds(0.0, 0.3), gamma=0)
    assert lm.init_score == 0.5 and lm.human.facts[0].is_supported
    (both,) = apply_thresholds([row], "retrieve-lm+np", Thresholds(-1.0, 0.3), gamma=0)
    assert both.init_score == 1.0 and not both.human.facts[0].is_supported
    assert row.init_score == 1.0  # the input is left as it was


def test_calibrate_then_eval_with_its_settings(db_index, tmp_path):
    """fscore calibrate fits the NP threshold on two labeled bios; fscore eval --settings
    then applies it and reproduces the fitted error rate on the same bios."""
    args = [
        "--index",
        str(db_index),
        "--input",
        str(require(DEV / "ChatGPT.jsonl")),
        "--n-samples",
        "2",
        "--use-atomic-facts",
        "--verifier",
        "np",
        "--np-model",  # the cheap encoder stand-in keeps this test fast
        "minilm",
        "--cache",
        str(tmp_path / "cache.db"),
        "--quiet",
    ]
    settings_path = tmp_path / "settings.json"
    fitted = CliRunner().invoke(main, ["calibrate", *args, "--out", str(settings_path)])
    assert fitted.exit_code == 0, fitted.output
    settings = read_settings(settings_path)
    assert settings["verifier"] == "np" and settings["np_model"] == "minilm"
    assert settings["fit"]["error_rate"] <= settings["defaults"]["error_rate"]

    def error_rate(extra: list[str]) -> float:
        result = CliRunner().invoke(main, ["eval", *args, "--gamma", "0", "--json", *extra])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["error_rate"]

    assert error_rate(["--settings", str(settings_path)]) == pytest.approx(
        settings["fit"]["error_rate"], abs=0.01
    )
    assert error_rate([]) == pytest.approx(settings["defaults"]["error_rate"], abs=0.01)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("verifier", "n_weights"),
    [
        # the same path with one weight fewer: heavy, the coverage rule's run covers it in CI
        pytest.param("retrieve-lm+np-fitted", 4, marks=pytest.mark.heavy),
        ("retrieve-lm+np+coverage-fitted", 5),
    ],
)
def test_calibrate_a_fitted_rule_then_eval_with_it(db_index, tmp_path, verifier, n_weights):
    """A fitted rule through the CLI with the small LM: calibrate writes its weights,
    eval --settings applies them and reproduces the fitted error rate; the coverage rule's
    lines record every fact's lexical coverage."""
    from factscore_local.model_store import SMALL_LM

    require_model(SMALL_LM)
    args = ["--index", str(db_index), "--input", str(require(DEV / "InstructGPT.jsonl")),
            "--n-samples", "2", "--use-atomic-facts", "--lm", SMALL_LM,
            "--verifier", verifier, "--cache", str(tmp_path / "c.db"),
            "--quiet"]  # fmt: skip
    settings_path = tmp_path / "settings.json"
    fitted = CliRunner().invoke(main, ["calibrate", *args, "--out", str(settings_path)])
    assert fitted.exit_code == 0, fitted.output
    settings = read_settings(settings_path)
    assert settings["verifier"] == get_verifier(verifier).name
    assert len(settings["rule_weights"]) == n_weights
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(
        main,
        ["eval", *args, "--gamma", "0", "--json", "--settings", str(settings_path),
         "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["error_rate"] == pytest.approx(settings["fit"]["error_rate"], abs=0.01)
    assert summary["thresholds"]["rule_weights"] == settings["rule_weights"]
    facts = [f for line in out.read_text("utf-8").splitlines()
             for f in json.loads(line)["decisions"]]  # fmt: skip
    has_coverage = [0.0 <= f.get("coverage", -1) <= 1.0 for f in facts]
    assert facts and all(has_coverage) == (verifier == "retrieve-lm+np+coverage-fitted")


def labeled_row(line: int, topic: str, human: float | None, facts: list[tuple]) -> BioRow:
    """A row whose model facts and human facts are the same (margin, np, human label)."""
    decisions = [
        {"atom": f"f{i}", "margin": m, "np": p, "is_supported": True}
        for i, (m, p, _) in enumerate(facts)
    ]
    human_facts = [{**d, "label": label} for d, (_, _, label) in zip(decisions, facts, strict=True)]
    return BioRow.from_json(
        {
            "line": line,
            "topic": topic,
            "source": "s.jsonl",
            "title": topic,
            "responded": bool(facts),
            "n_facts": len(facts),
            "init_score": 1.0 if facts else None,
            "score": 1.0 if facts else None,
            "decisions": decisions,
            "human": {"score": human, "n_facts": len(facts), "facts": human_facts},
        }
    )


def test_stored_settings_reproduce_the_fitted_error_rate():
    """NP of every fact is 0.0, so the best ensemble switches NP off (a threshold below
    every value). Applying the stored settings must give the ER the fit reported: a
    threshold rounded to -0.0 would reject every fact instead."""
    rows = [
        labeled_row(1, "a", 0.5, [(1.0, 0.0, "S"), (-1.0, 0.0, "NS")]),
        labeled_row(2, "b", 0.5, [(2.0, 0.0, "S"), (-2.0, 0.0, "NS")]),
    ]
    settings = fit(collect(rows), "retrieve-lm+np", "er")
    assert settings["fit"]["error_rate"] == 0.0
    assert settings["np_threshold"] < 0.0  # NP off, stored exactly
    applied = apply_thresholds(rows, "retrieve-lm+np", settings_thresholds(settings), gamma=0)
    figures = validate_rows(applied, bootstrap=0)["subjects"]["s"]
    assert figures["error_rate"] == settings["fit"]["error_rate"]
    assert figures["f1_micro"] == settings["fit"]["f1_micro"] == 100.0


def test_error_rate_compares_the_same_bios():
    """A bio the humans score but the estimate does not (no facts) is left out of ER, and
    counted; each side's own score still covers its own responding bios."""
    bios = [
        BioResult("a", human=0.8, estimate=0.8, facts=[]),
        BioResult("b", human=0.2, estimate=None, facts=[]),
    ]
    r = report(bios, bootstrap=0)
    assert r["human_score"] == 50.0 and r["estimated_score"] == 80.0
    assert r["error_rate"] == 0.0 and r["n_er_bios"] == 1 and r["n_er_dropped"] == 1
    rows = [labeled_row(1, "a", 1.0, [(1.0, 0.5, "S")]), labeled_row(2, "b", 0.0, [])]
    assert collect(rows)["s"].human_score == 1.0  # calibration pairs the same way


def test_fitted_rule_learns_what_the_and_rule_cannot_and_round_trips(tmp_path):
    """Humans here call a fact supported when its margin OR its NP is high. The paper's AND
    rule cannot express that; the logistic rule fitted by calibration can, and its settings
    file, read back into a config, decides exactly as the fit reported."""
    from factscore_local.config import build_config
    from factscore_local.labels.calibration import read_settings, write_settings

    rng = np.random.default_rng(0)
    rows = []
    for line in range(20):
        facts = []
        for _ in range(10):
            m, p = float(rng.normal()), float(rng.uniform())
            facts.append((m, p, "S" if m > 0.5 or p > 0.7 else "NS"))
        human = sum(label == "S" for *_, label in facts) / len(facts)
        rows.append(labeled_row(line, f"t{line}", human, facts))
    subjects = collect(rows)
    fitted = fit(subjects, "retrieve-lm+np-fitted", "f1")
    anded = fit(subjects, "retrieve-lm+np", "f1")
    assert len(fitted["rule_weights"]) == 4  # bias, margin, np, margin*np
    assert fitted["fit"]["f1_micro"] > anded["fit"]["f1_micro"] + 5
    assert fitted["fit"]["f1_micro"] >= 90

    path = tmp_path / "settings.json"
    write_settings(path, fitted)
    config = build_config(
        {"index": tmp_path, "verifier": "retrieve-lm+np-fitted"}, read_settings(path), set()
    )
    assert config.rule_weights == tuple(fitted["rule_weights"].values())
    applied = apply_thresholds(rows, config.verifier, config.thresholds, gamma=0)
    figures = validate_rows(applied, bootstrap=0)["subjects"]["s"]
    assert figures["f1_micro"] == fitted["fit"]["f1_micro"]
    assert figures["error_rate"] == fitted["fit"]["error_rate"]


def test_fitted_rule_before_fitting_and_bad_weights(tmp_path):
    """Without weights the fitted rule decides as the paper's ensemble; weights of the
    wrong length are refused."""
    from factscore_local.config import EvalConfig
    from factscore_local.declarations.verifiers import get_verifier

    signals = {"margin": np.array([1.0, 1.0, -1.0]), "np": np.array([0.9, 0.1, 0.9])}
    fitted, anded = get_verifier("retrieve-lm+np-fitted"), get_verifier("retrieve-lm+np")
    t = Thresholds(0.0, 0.3)
    assert list(fitted.decide(signals, t, 3)) == list(anded.decide(signals, t, 3))
    assert list(fitted.decide(signals, Thresholds(weights=(0, 0, 1, 0)), 3)) == [1, 1, 1]
    with pytest.raises(ValueError, match="hold 4 numbers"):
        EvalConfig(index=tmp_path, verifier="retrieve-lm+np-fitted", rule_weights=(1.0, 2.0))


def test_collect_adds_extra_signals_in_fact_order():
    """Extra per-fact signals (what the rule-features experiment tried as features) land beside the
    recorded ones, for the estimate's facts and the human facts alike; a column of the wrong
    length is an error, not a silent misalignment."""
    rows = [
        labeled_row(1, "a", 0.5, [(1.0, 0.2, "S"), (-1.0, 0.1, "NS")]),
        labeled_row(2, "b", 1.0, [(2.0, 0.3, "S")]),
    ]

    def position(row, facts):
        return {"position": [10 * row.line + i for i in range(len(facts))]}

    s = collect(rows, position)["s"]
    assert s.signals["position"].tolist() == [10, 11, 20]
    assert s.h_signals["position"].tolist() == [10, 11, 20]
    assert s.signals["margin"].tolist() == [1.0, -1.0, 2.0]
    with pytest.raises(ValueError, match="extra signal 'short'"):
        collect(rows, lambda row, facts: {"short": [0.0]})


def decided_row(topic: str, facts: list[tuple[str, bool]]) -> BioRow:
    """A row whose model facts are the human facts: (human label, decided supported)."""
    decisions = [
        {"atom": f"f{i}", "label": label, "margin": 0.0, "np": 0.0, "is_supported": ok}
        for i, (label, ok) in enumerate(facts)
    ]
    share = sum(ok for _, ok in facts) / len(facts)
    return BioRow.from_json(
        {"line": 1, "topic": topic, "source": "s.jsonl", "title": topic, "responded": True,
         "n_facts": len(facts), "init_score": share, "score": share, "decisions": decisions,
         "human": {"score": sum(label == "S" for label, _ in facts) / len(facts),
                   "n_facts": len(facts), "facts": decisions}}
    )  # fmt: skip


def test_a_change_wins_only_when_it_wins_on_both_topic_halves():
    names = [f"topic {i}" for i in range(40)]
    topics = [next(t for t in names if topic_half(t) == h) for h in (0, 1)]
    labels = ["S", "S", "NS", "S", "NS"]

    def rows(perfect_on: set[int]) -> list[BioRow]:
        return [decided_row(t, [(lab, lab == "S" if h in perfect_on else True) for lab in labels])
                for h, t in enumerate(topics)]  # fmt: skip

    perfect, always, mixed = (
        half_means(rows({0, 1})),
        half_means(rows(set())),
        half_means(rows({0})),
    )
    assert perfect == {0: (0.0, 100.0), 1: (0.0, 100.0)}
    assert always[0] == always[1] == (40.0, 0.0)  # says supported to 2 NS of 5 facts
    assert wins_on_both_halves(perfect, always)
    assert not wins_on_both_halves(always, perfect)
    assert not wins_on_both_halves(mixed, always)  # no better on half 1
    assert not wins_on_both_halves(perfect, perfect)  # a tie is no win
    assert not wins_on_both_halves({0: (0.0, 100.0)}, always)  # a half without labels
