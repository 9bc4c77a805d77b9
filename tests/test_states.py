"""The verdict's hidden state, read in the verification pass by both backends and cached
beside the logits (real 0.5B model)."""

from __future__ import annotations

import numpy as np
import pytest

from factscore_local.lm import load_lm
from factscore_local.model_store import SMALL_LM
from factscore_local.pipeline.cached_models import CachedLM, _statement_span
from factscore_local.runtime.cache import ResultCache
from factscore_local.runtime.states import decode_state, encode_state, rounded
from tests.conftest import require_model

pytestmark = pytest.mark.slow

PASSAGE = (
    "Marie Curie was a Polish and naturalised-French physicist and chemist who conducted "
    "pioneering research on radioactivity. She was born in Warsaw in 1867."
)
STATEMENTS = ["Marie Curie was born in Warsaw.", "Marie Curie was a chef.",
              "Marie Curie was born in Lisbon."]  # fmt: skip


@pytest.fixture(scope="module")
def small_lm():
    require_model(SMALL_LM)
    return load_lm(SMALL_LM, threads=2, n_ctx=1024)


def _prompts(lm):
    prompts = [lm.chat(f"Is it supported?\n\n{PASSAGE}\n\nStatement: {s} True or False?")
               for s in STATEMENTS]  # fmt: skip
    prefixes = [p[: p.rindex("Statement: ")] for p in prompts]
    spans = [_statement_span(p, s) for p, s in zip(prompts, STATEMENTS, strict=True)]
    return prompts, prefixes, spans


def _judged(lm, states: bool):
    lm.forget()
    lm.read_states = states
    try:
        rows = lm.true_false_with_statement(*_prompts(lm))
        return rows, list(lm.last_states)
    finally:
        lm.read_states = False


def test_encoding_round_trips_in_float16():
    state = np.random.default_rng(0).normal(size=896).astype(np.float32) * 7
    back = decode_state(encode_state(state))
    assert back.dtype == np.float32 and back.shape == state.shape
    np.testing.assert_allclose(back, state, rtol=1e-3, atol=1e-3)
    np.testing.assert_array_equal(rounded(back), back)  # rounding again changes nothing
    with pytest.raises(ValueError, match="float16"):
        encode_state(np.full(4, 1e6))


def test_llama_cpp_reads_a_state_per_verdict_without_moving_the_verdicts(small_lm):
    plain, none = _judged(small_lm, False)
    judged, states = _judged(small_lm, True)
    assert none == [None] * len(STATEMENTS)
    assert all(s.shape == (small_lm.llm.n_embd(),) for s in states)
    # different statements, different states; the same statement again, the same state
    assert not np.allclose(states[0], states[1])
    np.testing.assert_array_equal(_judged(small_lm, True)[1][0], states[0])
    for (a, ids_a, lp_a), (b, ids_b, lp_b) in zip(plain, judged, strict=True):
        # every tail token is output with the states on: summation order only
        assert b.margin == pytest.approx(a.margin, abs=1e-2)
        assert ids_a == ids_b
        np.testing.assert_allclose(lp_b, lp_a, atol=1e-2)


def test_both_backends_read_the_same_state(small_lm, hf_small_lm):
    """transformers (the GGUF dequantized, float32) and llama.cpp (quantized arithmetic)
    read the state after the final norm at the same position."""
    hf = hf_small_lm
    _, ours = _judged(small_lm, True)
    _, theirs = _judged(hf, True)
    for a, b in zip(ours, theirs, strict=True):
        cosine = float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
        assert cosine > 0.99  # 0.9999 seen with the 0.5B model
    # and each backend tells the statements apart the same way
    ours_gram = np.corrcoef(np.stack(ours))
    theirs_gram = np.corrcoef(np.stack(theirs))
    np.testing.assert_allclose(ours_gram, theirs_gram, atol=0.05)


def test_cached_state_equals_a_fresh_pass(small_lm, tmp_path):
    prompts, prefixes, _ = _prompts(small_lm)
    cache = ResultCache(tmp_path / "c.db")
    lm = CachedLM(small_lm, cache, "small|test")
    judged_first = lm.judge(prompts, prefixes, STATEMENTS)  # cached without states
    small_lm.forget()
    fresh = lm.judge_states(prompts, prefixes, STATEMENTS)
    assert cache.misses and all(s.dtype == np.float32 for s in fresh)
    # the verdicts cached first stay as they were
    assert lm.judge(prompts, prefixes, STATEMENTS) == judged_first
    again = CachedLM(small_lm, ResultCache(tmp_path / "c.db"), "small|test")
    cached = again.judge_states(prompts, prefixes, STATEMENTS)
    assert again.cache.misses == 0
    for a, b in zip(fresh, cached, strict=True):
        np.testing.assert_array_equal(a, b)
    # a state read fresh, rounded as the cache keeps it, is the cached one
    _, direct = _judged(small_lm, True)
    np.testing.assert_allclose(rounded(direct[0]), cached[0], atol=2e-3)
