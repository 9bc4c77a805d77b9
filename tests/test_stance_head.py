"""The stance head with the real 0.5B model: the state where the stance label is read,
cached beside the label logits (the same from a cache and from a fresh pass), a head
trained on a few dev pairs, and ``fscore factcheck --stance-head`` deciding with it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from factscore_local.cli import main
from factscore_local.config import EvalConfig
from factscore_local.labels.heads import fit_head
from factscore_local.methods.factcheck.data import read_stance_pairs
from factscore_local.methods.factcheck.pipeline import run_stance
from factscore_local.methods.factcheck.stance_head import (
    crossfit_head,
    stance_states,
    train_stance_head,
)
from factscore_local.pipeline.components import build_components
from tests.conftest import SHARED, require, require_model

# heavy (a minute): the stance head is a research benchmark's (scripts/bench_stance_head.py);
# Factcheck-Bench's own path runs in tests/test_factcheck.py
pytestmark = pytest.mark.heavy
STANCE = SHARED / "factcheck-bench" / "subtask3_claim_evidence_stance-dev.jsonl"
N_PAIRS = 20  # 4 claims, every stance


def test_a_stance_head_decides_from_the_state(db_index, tmp_path):
    from factscore_local.model_store import SMALL_LM

    require_model(SMALL_LM)
    pairs = read_stance_pairs(require(STANCE))[:N_PAIRS]
    parts = build_components(EvalConfig(index=db_index, lm=SMALL_LM, cache=tmp_path / "c.db"))
    lm = parts.lm.get()
    states = stance_states(pairs, lm)
    assert states.shape == (N_PAIRS, 896) and parts.cache.misses
    logits_then = [r.probabilities for r in run_stance(pairs, lm)]  # cached by the state pass
    fresh = build_components(
        EvalConfig(index=db_index, lm=SMALL_LM, cache=tmp_path / "fresh.db"), lm=lm.lm
    ).lm.get()
    few = pairs[:6]  # a fresh pass over a few pairs: the same states and logits
    np.testing.assert_array_equal(stance_states(few, fresh), states[:6])
    assert [r.probabilities for r in run_stance(few, fresh)] == logits_then[:6]

    head = train_stance_head(pairs, states, "logistic", record={"model": SMALL_LM})
    assert sorted(head.record["labels"]) == sorted({p.stance for p in pairs})
    decided = crossfit_head(pairs, states)
    assert len(decided) == N_PAIRS and all(r.predicted for r in decided)

    path = tmp_path / "stance.npz"
    head.save(path)
    args = ["factcheck", "--index", str(db_index), "--lm", SMALL_LM, "--n-samples", str(N_PAIRS),
            "--stance", str(STANCE), "--out", str(tmp_path / "out"), "--quiet",
            "--cache", str(tmp_path / "c.db")]  # fmt: skip
    result = CliRunner().invoke(main, [*args, "--stance-head", str(path)])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stance_head"]["model"] == SMALL_LM
    rows = [json.loads(x) for x in (tmp_path / "out" / "stance.jsonl").read_text().splitlines()]
    expected = [r.predicted for r in run_stance_head_here(pairs, states, path)]
    assert [r["predicted"] for r in rows] == expected

    # a head reading the pair features after the state: the CLI computes them itself
    lexical = train_stance_head(pairs, states, "logistic", pair_features=True)
    lexical_path = lexical.save(tmp_path / "lexical.npz")
    again = CliRunner().invoke(main, [*args, "--stance-head", str(lexical_path)])
    assert again.exit_code == 0, again.output
    rows = [json.loads(x) for x in (tmp_path / "out" / "stance.jsonl").read_text().splitlines()]
    expected = [r.predicted for r in run_stance_head_here(pairs, states, lexical_path)]
    assert [r["predicted"] for r in rows] == expected

    # a head of one score (a fact's head) is refused with one clear line
    fit_head_path = tmp_path / "fact.npz"
    fit_head(states, np.arange(N_PAIRS) % 2 == 0).save(fit_head_path)
    refused = CliRunner().invoke(main, [*args, "--stance-head", str(fit_head_path)])
    assert refused.exit_code != 0 and "not a stance head" in refused.output


def run_stance_head_here(pairs, states, path):
    from factscore_local.methods.factcheck.stance_head import decide
    from factscore_local.pipeline.signals.state_head import StateHead

    return decide(pairs, states, StateHead.load(path))
