"""End to end with the real embedded LMs on real labeled dev bios (marker: slow).

CI runs a small slice (FSCORE_E2E_BIOS, default 1 bio); set it higher for a fuller check.
"""

from __future__ import annotations

import json
import os

import pytest

from factscore_local.config import EvalConfig
from factscore_local.model_store import DEFAULT_LM, SMALL_LM
from factscore_local.pipeline.decision.scoring import summarize
from factscore_local.pipeline.estimator import Estimator
from factscore_local.pipeline.records.inputs import read_bios
from tests.conftest import SHARED, judged_prompts, require, require_model

pytestmark = pytest.mark.slow
N_BIOS = int(os.environ.get("FSCORE_E2E_BIOS", "1"))
CHATGPT = SHARED / "factscore" / "labeled-dev" / "ChatGPT.jsonl"


def need(model: str) -> str:
    require_model(model)
    return model


def human_labels(bio) -> dict[str, str]:
    return {
        atom["text"]: atom["label"]
        for sent in bio.annotations or []
        for atom in sent.get("human-atomic-facts") or []
    }


def test_retrieve_lm_agrees_with_humans(db_index, tmp_path):
    """The default LM's True/False decisions on human atomic facts agree with the humans'
    S/NS labels far above chance (IR facts left out)."""
    bios = list(read_bios(require(CHATGPT)))[:N_BIOS]
    estimator = Estimator(
        EvalConfig(index=db_index, lm=need(DEFAULT_LM), cache=tmp_path / "cache.db")
    )
    agree = total = 0
    for bio in bios:
        labels = {t: lab for t, lab in human_labels(bio).items() if lab in ("S", "NS")}
        items = [(bio.topic, bio.topic, atom) for atom in labels]
        decisions = estimator.verify(items)
        for (_, _, atom), d in zip(items, decisions, strict=True):
            assert len(d.evidence) == min(5, len(estimator.ks.get_passages(bio.topic)))
            assert all(e.title == bio.topic for e in d.evidence)
            agree += d.is_supported == (labels[atom] == "S")
            total += 1
    assert total >= 10
    assert agree / total >= 0.7, f"agreement {agree}/{total}"
    # KV-prefix reuse: facts of one page share their passages' tokens.
    stats = estimator.lm().lm.stats
    assert stats.evaluated_tokens < 0.6 * stats.prompt_tokens


def test_eval_pipeline_with_decomposition(db_index, tmp_path):
    """Decomposition by the small LM, then verification, scores and output lines; a second
    run with the same cache recomputes nothing and gives the same result."""
    lines = [json.loads(x) for x in require(CHATGPT).read_text().splitlines()[:N_BIOS]]
    src = tmp_path / "in.jsonl"
    # Two sentences per bio keep the slice small.
    src.write_text(
        "".join(
            json.dumps({"topic": x["topic"], "output": " ".join(x["output"].split(". ")[:2]) + "."})
            + "\n"
            for x in lines
        )
    )
    config = EvalConfig(index=db_index, lm=need(SMALL_LM), cache=tmp_path / "cache.db")
    rows = Estimator(config).run(list(read_bios(src)), tmp_path / "out.jsonl", progress=False)
    summary = summarize(rows)
    assert summary["n_bios"] == N_BIOS and summary["n_errors"] == 0
    assert summary["respond_ratio"] == 1.0
    written = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert written == [r.to_json() for r in rows]
    for row in rows:
        assert row.n_facts >= 2
        for d in row.decisions:
            assert d.atom.endswith((".", "!", "?", '"')) and d.sentence
            assert isinstance(d.is_supported, bool) and d.margin is not None
    again = Estimator(config)
    rows2 = again.run(list(read_bios(src)), tmp_path / "out2.jsonl", progress=False)
    assert summarize(rows2) == summary
    assert again.cache.misses == 0 or not again.components.lm.loaded


def test_default_np_separates_supported_facts(db_index, tmp_path):
    """The default NP scorer (the causal LM's token probabilities in the verification pass) puts
    the humans' supported facts above their not-supported ones on a real bio, and the
    ensemble accepts a fact only where both the margin and NP do."""
    from factscore_local.npm.defaults import DEFAULT_NP_MODEL, STANDIN_NP_THRESHOLDS

    assert DEFAULT_NP_MODEL == "lm-joint"
    bio = next(iter(read_bios(require(CHATGPT))))
    labels = {t: lab for t, lab in human_labels(bio).items() if lab in ("S", "NS")}
    config = EvalConfig(
        index=db_index, lm=need(DEFAULT_LM), verifier="retrieve-lm+np", cache=tmp_path / "c.db"
    )
    estimator = Estimator(config)
    assert config.thresholds.np == STANDIN_NP_THRESHOLDS["lm-joint"]
    items = [(bio.topic, bio.topic, atom) for atom in labels]
    decisions = estimator.verify(items)
    np_by_label: dict[str, list[float]] = {"S": [], "NS": []}
    for (_, _, atom), d in zip(items, decisions, strict=True):
        assert 0.0 <= d.np <= 1.0
        both = d.margin > config.margin and d.np > config.thresholds.np
        assert d.is_supported == both
        np_by_label[labels[atom]].append(d.np)
    assert np_by_label["S"] and np_by_label["NS"]
    mean = {k: sum(v) / len(v) for k, v in np_by_label.items()}
    assert mean["S"] > mean["NS"], mean
    # Resumes from the cache: a second estimator computes nothing.
    again = Estimator(config)
    assert again.verify(items) == decisions
    assert again.cache.misses == 0


def test_small_model_defaults_score_above_zero(db_index, tmp_path):
    """The 0.5B model at its shipped defaults (its own weights of the default rule) gives
    a real dev bio a score above 0 (at margin 0 it called nearly every fact unsupported),
    through the CLI, which says where its thresholds came from."""
    from click.testing import CliRunner

    from factscore_local.cli import main
    from factscore_local.declarations.verifiers import get_verifier
    from factscore_local.fitted_defaults import shipped_rule
    from factscore_local.model_store import SMALL_LM

    src = tmp_path / "in.jsonl"
    src.write_text(require(CHATGPT).read_text().splitlines()[0] + "\n")
    args = ["eval", "--index", str(db_index), "--input", str(src), "--lm", need(SMALL_LM)]
    args += ["--use-atomic-facts", "--no-validate", "--cache", str(tmp_path / "c.db"), "--quiet"]
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["init_score"] > 0.2
    shipped = shipped_rule(SMALL_LM, "default").settings["rule_weights"]
    by_name = get_verifier("default").weights_by_name(shipped)
    assert summary["thresholds"]["rule_weights"] == pytest.approx(by_name)
    assert "fitted defaults" in summary["thresholds"]["from"]
    out = tmp_path / "out.jsonl"
    text = CliRunner().invoke(main, [*args, "--out", str(out)])
    assert "thresholds: " in text.stdout and "fitted defaults" in text.stdout
    # the run says which backend and device its LM ran on, and records them
    assert "(llama.cpp, on cpu)" in text.stdout
    lm = json.loads((tmp_path / "out.jsonl.record.json").read_text())["lm"]
    assert (lm["backend"], lm["device"]) == ("llama.cpp", "cpu")


def test_joint_np_comes_from_the_verification_pass(db_index, tmp_path):
    """--np-model lm-joint: the ensemble's NP is read from the Retrieve→LM pass (one prompt
    per fact, no NP prompts), the np verifier alone gets the same values, and a value is
    the statement probability of the fact's own prompt evaluated alone."""
    from factscore_local.npm.causal_np import content_probability, skip_ids
    from factscore_local.pipeline.cached_models import _statement_span

    bio = next(iter(read_bios(require(CHATGPT))))
    atoms = [f["text"] for s in bio.annotations for f in s.get("model-atomic-facts") or []][:6]
    items = [(bio.topic, bio.topic, a) for a in atoms]
    common = {"index": db_index, "lm": need(SMALL_LM), "np_model": "lm-joint"}
    config = EvalConfig(verifier="retrieve-lm+np", cache=tmp_path / "a.db", **common)
    estimator = Estimator(config)
    raw = estimator.lm().lm
    before = raw.stats.prompts
    with judged_prompts(raw) as captured:
        decisions = estimator.verify(items)
    assert raw.stats.prompts - before == len(atoms)  # one pass per fact, nothing else
    for d in decisions:
        assert 0.0 <= d.np <= 1.0
        assert d.is_supported == (d.margin > config.margin and d.np > config.thresholds.np)
    alone = Estimator(EvalConfig(verifier="np", cache=tmp_path / "b.db", **common))
    assert [d.np for d in alone.verify(items)] == [d.np for d in decisions]
    d = decisions[0]
    (prompt,) = [p for p in captured if f"Statement: {d.atom} True or False?" in p]
    raw.forget()
    ((_, ids, logprobs),) = raw.true_false_with_statement(
        [prompt], [prompt[: prompt.rindex("Statement: ")]], [_statement_span(prompt, d.atom)]
    )
    assert round(content_probability(ids, logprobs, skip_ids(raw)), 4) == d.np


def test_prefix_states_give_a_later_run_the_same_rows(db_index, tmp_path):
    """fscore eval --prefix-states: the first run stores its page prefixes' states, a run
    with an empty result cache loads them, and both write the same rows."""
    from click.testing import CliRunner

    from factscore_local.cli import main

    line = next(x for x in require(CHATGPT).read_text().splitlines() if "Jesse Foppert" in x)
    src = tmp_path / "in.jsonl"
    src.write_text(line + "\n")
    states = tmp_path / "states"
    outputs = []
    for run in ("first", "second"):
        args = ["eval", "--index", str(db_index), "--input", str(src), "--lm", need(SMALL_LM),
                "--use-atomic-facts", "--no-validate", "--evidence", "page", "--quiet",
                "--cache", str(tmp_path / f"{run}.db"), "--prefix-states", str(states),
                "--out", str(tmp_path / f"{run}.jsonl")]  # fmt: skip
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        stored = sorted(states.glob("*.kv"))
        assert stored, "no prefix was stored"
        outputs.append(json.loads((tmp_path / f"{run}.jsonl").read_text()))
    assert outputs[0]["decisions"] == outputs[1]["decisions"]
