"""Greedy generation as parallel sequences of one llama.cpp context (real small LM)."""

from __future__ import annotations

import pytest

from factscore_local.lm import load_lm
from factscore_local.lm.base import cut_at_stop, loop_end
from factscore_local.lm.llama_parallel import ParallelGenerator, lookup_draft
from factscore_local.model_store import SMALL_LM
from tests.conftest import require_model

pytestmark = pytest.mark.slow

# Prompts whose greedy continuation is not in doubt (large logit gaps), so batching's
# small numeric differences cannot change them; a shared lead, as demonstrations give.
LEAD = "Answer with the capital city only.\nQ: Capital of Italy?\nA: Rome\n"
COUNTRIES = ("France", "Japan", "Germany", "Spain", "Egypt", "Canada")
CAPITALS = ("Paris", "Tokyo", "Berlin", "Madrid", "Cairo", "Ottawa")


@pytest.fixture(scope="module")
def small_lm():
    require_model(SMALL_LM)
    return load_lm(SMALL_LM, threads=2, n_ctx=2048)


def prompts() -> list[str]:
    return [f"{LEAD}Q: Capital of {c}?\nA:" for c in COUNTRIES]


def test_outputs_in_prompt_order_with_refilled_slots_and_same_as_one_at_a_time(small_lm):
    one = ParallelGenerator(small_lm.llm, 1, 2048)
    four = ParallelGenerator(small_lm.llm, 4, 2048)  # 6 prompts: two slots are refilled
    try:
        ids = [small_lm.prompt_ids(p) for p in prompts()]
        a = [small_lm._text(x) for x in one.run(ids, 8, ["\n"], small_lm._text)]
        b = [small_lm._text(x) for x in four.run(ids, 8, ["\n"], small_lm._text)]
        # The shared lead is held once in sequence 0; a second call reuses it.
        assert four.prefix == ids[0][: len(four.prefix)] and len(four.prefix) > 10
        again = [small_lm._text(x) for x in four.run(ids[::-1], 8, ["\n"], small_lm._text)]
    finally:
        one.close()
        four.close()
    assert a == b == again[::-1]
    for text, capital in zip(a, CAPITALS, strict=True):
        assert text.strip().startswith(capital), (text, capital)


def test_generate_stops_at_stop_strings_and_token_limit(small_lm):
    out = small_lm.generate(prompts()[:3], 8, ["\n"])
    assert [o.strip() for o in out] == list(CAPITALS[:3])  # cut before the newline
    assert all("\n" not in o for o in out)
    before = small_lm.stats.generated_tokens
    short = small_lm.generate([f"{LEAD}Count from one to twenty in words:"], 3, [])
    assert small_lm.stats.generated_tokens - before <= 3
    assert len(small_lm.tokenize(short[0])) <= 3
    assert small_lm.generate([], 8, ["\n"]) == []


def test_generation_leaves_the_verification_cache_alone(small_lm):
    # Verification keeps its evidence in the main context; generating in between must
    # not disturb it (generation has a context of its own).
    prompt = small_lm.chat("Is Paris in France? Answer True or False.")
    first = small_lm.true_false([prompt])[0]
    small_lm.generate(prompts()[:2], 4, ["\n"])
    assert small_lm.true_false([prompt])[0] == first


def test_generation_stops_at_a_loop_with_the_output_a_full_run_cuts_to(small_lm):
    prompt = "Write the line below again and again, one per line.\nThe sky is blue.\n"
    before = small_lm.stats.generated_tokens
    out = small_lm.generate([prompt], 96, [])[0]
    spent = small_lm.stats.generated_tokens - before
    # The unstopped greedy run (llama.cpp's own completion) cut the same way.
    full = small_lm.llm.create_completion(prompt, max_tokens=96, temperature=0.0, top_k=1)
    full_text = full["choices"][0]["text"]
    assert loop_end(full_text) is not None, full_text  # the prompt does make it loop
    assert out == cut_at_stop(full_text, [])
    assert spent < len(small_lm.tokenize(full_text))  # it stopped early


@pytest.mark.heavy
def test_without_the_loop_stop_the_generator_runs_on_as_llama_cpp_does(small_lm):
    prompt = "Write the line below again and again, one per line.\nThe sky is blue.\n"
    full = small_lm.llm.create_completion(prompt, max_tokens=96, temperature=0.0, top_k=1)
    gen = ParallelGenerator(small_lm.llm, 2, small_lm.n_ctx)
    try:
        ids = [small_lm.prompt_ids(prompt)]
        stopped = gen.run(ids, 96, [], small_lm._text)[0]
        unstopped = gen.run(ids, 96, [], small_lm._text, stop_loops=False)[0]
    finally:
        gen.close()
    assert len(stopped) < len(unstopped)
    assert small_lm._text(unstopped) == full["choices"][0]["text"]


@pytest.mark.heavy  # the GPU path's generation (minutes on a CPU; a GPU run checks it)
def test_transformers_generates_in_left_padded_batches_as_one_at_a_time():
    """On a GPU the transformers backend decodes several prompts at once (left-padded,
    each stopping on its own); in float32 the outputs are those of one at a time, in
    prompt order, for prompts of different lengths."""
    pytest.importorskip("transformers")
    require_model(SMALL_LM)
    hf = load_lm(SMALL_LM, backend="transformers", threads=2, device="cpu")
    asked = prompts()[:3] + [f"{LEAD}Q: Capital of the country whose capital is Lima?\nA:"]
    hf.generation_batch = 1
    one = hf.generate(asked, 8, ["\n"])
    hf.generation_batch = 3  # 4 prompts: a batch of 3 and one alone
    batched = hf.generate(asked, 8, ["\n"])
    assert batched == one
    for text, capital in zip(batched, CAPITALS[:3], strict=False):
        assert text.strip().startswith(capital)


def test_lookup_draft_takes_what_followed_the_latest_earlier_match():
    assert lookup_draft([1, 2, 3, 4, 5, 9, 2, 3], 3) == [4, 5, 9]  # "2 3" seen before
    assert lookup_draft([1, 2, 3, 4, 2, 3, 7, 2, 3], 2) == [7, 2]  # the latest match wins
    assert lookup_draft([1, 2, 1], 4) == [2, 1]  # a one-token match, cut at the end
    assert lookup_draft([5, 6, 7], 3) == []  # the last token occurs nowhere before
    assert lookup_draft([5], 3) == []


def test_prompt_lookup_drafts_give_plain_greedy_outputs_in_fewer_steps(small_lm):
    # Copying prompts (their drafts are mostly right) beside the capitals (mostly wrong).
    copy = "Write the sentence again, word for word.\nSentence: {}\nAgain:"
    lines = (
        "Marie Curie was a Polish and naturalised-French physicist and chemist.",
        "The Danube flows through ten countries before it reaches the Black Sea.",
    )
    texts = [copy.format(line) for line in lines] + prompts()[:3]
    ids = [small_lm.prompt_ids(p) for p in texts]
    runs = {}
    for width, draft in ((1, 0), (1, 6), (3, 4)):
        gen = ParallelGenerator(small_lm.llm, width, 2048, draft=draft)
        try:
            # 24 tokens copy the sentence; past it the model repeats itself, where a near-tie
            # can fall either way between batch sizes on some CPUs (seen at token 30)
            out = gen.run(ids, 24, ["\n"], small_lm._text)
        finally:
            gen.close()
        runs[width, draft] = ([small_lm._text(x) for x in out], gen.steps)
    plain, plain_steps = runs[1, 0]
    assert runs[1, 6][0] == plain and runs[3, 4][0] == plain
    assert lines[0] in plain[0]  # the model did copy
    assert runs[1, 6][1] < plain_steps / 2  # most copied tokens came from accepted drafts
