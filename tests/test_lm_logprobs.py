"""Per-token log-probabilities with KV reuse, and the causal-LM NP stand-in (real small LM)."""

from __future__ import annotations

import numpy as np
import pytest

from factscore_local.lm import load_lm
from factscore_local.model_store import SMALL_LM
from factscore_local.npm.causal_np import CausalNPScorer
from tests.conftest import require_model

pytestmark = pytest.mark.slow

PASSAGE = (
    "Marie Curie was a Polish and naturalised-French physicist and chemist who conducted "
    "pioneering research on radioactivity. She was born in Warsaw in 1867."
)


@pytest.fixture(scope="module")
def small_lm():
    require_model(SMALL_LM)
    return load_lm(SMALL_LM, threads=2, n_ctx=1024)


def fresh_logprobs(lm, context: list[int], continuation: list[int]) -> np.ndarray:
    """The same quantity one token at a time, every prompt evaluated from scratch."""
    out = []
    for j, gold in enumerate(continuation):
        logits = np.asarray(lm._next_token_logits(context + continuation[:j], 0), np.float64)
        out.append(logits[gold] - np.log(np.exp(logits - logits.max()).sum()) - logits.max())
    return np.array(out)


def test_token_logprobs_match_stepwise_and_reuse_prefix(small_lm):
    context = small_lm.prompt_ids(PASSAGE + "\n\nA statement:")
    facts = [small_lm.tokenize(" She was born in Warsaw."), small_lm.tokenize(" She was a chef.")]
    expected = [fresh_logprobs(small_lm, context, f) for f in facts]
    before = small_lm.stats.evaluated_tokens
    got = small_lm.token_logprobs([(context, f) for f in facts])
    for g, e, f in zip(got, expected, facts, strict=True):
        assert g.shape == (len(f),)
        assert np.all(g <= 0)
        np.testing.assert_allclose(g, e, atol=0.15)  # batched vs single-token kernels
    # The shared context was evaluated once: the second fact ran only its own tokens.
    evaluated = small_lm.stats.evaluated_tokens - before
    assert evaluated < len(context) + 2 * max(map(len, facts))


def test_causal_np_prefers_supported_tokens(small_lm):
    scorer = CausalNPScorer(small_lm)
    supported, unsupported, empty = scorer.probabilities(
        [
            ("Marie Curie was born in Warsaw.", [PASSAGE]),
            ("Marie Curie was born in Lisbon.", [PASSAGE]),
            ("the of and.", [PASSAGE]),
        ]
    )
    assert 0 < unsupported < supported <= 1
    assert empty == 0.0  # only stopwords: nothing to check
    # The same value alone as in a batch, exactly: the context is evaluated canonically, so
    # a value does not depend on its neighbours (nor on a resumed run's slices).
    assert scorer.probability("Marie Curie was born in Warsaw.", [PASSAGE]) == supported


def test_true_false_does_not_depend_on_neighbours(small_lm):
    """A prompt's logits are the same alone, in a batch, and in another order: its shared
    prefix is evaluated canonically (a resumed run recomputes slices in other company)."""
    prompts = [
        small_lm.chat(f"Is the statement supported?\n\n{PASSAGE}\n\nStatement: {s}")
        for s in ("She was born in Warsaw.", "She was a chef.", "She won a prize.")
    ]
    cut = [p[: p.rindex("Statement: ")] for p in prompts]
    batch = [r.margin for r in small_lm.true_false(prompts, cut)]
    backwards = [r.margin for r in small_lm.true_false(prompts[::-1], cut[::-1])][::-1]
    alone = []
    for prompt, prefix in zip(prompts, cut, strict=True):
        small_lm.forget()  # as a fresh process would start
        alone.append(small_lm.true_false([prompt], [prefix])[0].margin)
    assert batch == backwards == alone


def test_judging_reads_the_statement_tokens_from_the_same_pass(small_lm):
    """One pass gives the label logits and the statement's own token log-probabilities
    (the lm-joint NP): the statement's ids as the prompt holds them, log-probabilities that
    match a teacher-forced pass, and values that do not depend on the other prompts."""
    from factscore_local.npm.causal_np import content_probability, skip_ids
    from factscore_local.pipeline.cached_models import _statement_span

    statements = ["Marie Curie was born in Warsaw.", "Marie Curie was born in Lisbon."]
    prompts = [
        small_lm.chat(f"Is the statement supported?\n\n{PASSAGE}\n\nStatement: {s} True or False?")
        for s in statements
    ]
    prefixes = [p[: p.rindex("Statement: ")] for p in prompts]
    spans = [_statement_span(p, s) for p, s in zip(prompts, statements, strict=True)]
    batch = small_lm.true_false_with_statement(prompts, prefixes, spans)
    skip = skip_ids(small_lm)
    probability = []
    for (_, ids, logprobs), prompt, statement in zip(batch, prompts, statements, strict=True):
        assert ids == small_lm.tokenize(" " + statement)
        assert logprobs.shape == (len(ids),) and np.all(logprobs <= 0)
        whole = small_lm.prompt_ids(prompt)
        start = next(i for i in range(len(whole)) if whole[i : i + len(ids)] == ids)
        (forced,) = small_lm.token_logprobs([(whole[:start], ids)])
        np.testing.assert_allclose(logprobs, forced, atol=0.15)
        probability.append(content_probability(ids, logprobs, skip))
    assert probability[0] > probability[1]  # Warsaw is in the passage, Lisbon is not
    for i in range(2):
        small_lm.forget()
        ((verdict, _, logprobs),) = small_lm.true_false_with_statement(
            [prompts[i]], [prefixes[i]], [spans[i]]
        )
        assert verdict == batch[i][0]
        np.testing.assert_array_equal(logprobs, batch[i][2])


@pytest.fixture(scope="module")
def hf_lm(hf_small_lm):
    """The small GGUF's weights on the transformers backend (its float32 export), on the CPU."""
    return hf_small_lm


def test_a_dtype_is_the_transformers_backends_alone(small_lm, hf_lm):

    assert str(hf_lm.dtype) == "torch.float32" and hf_lm.backend_identity() == "transformers"
    assert small_lm.backend_identity() == "llama.cpp"
    with pytest.raises(ValueError, match="needs the transformers backend"):
        load_lm(SMALL_LM, backend="llama.cpp", dtype="float32")
    with pytest.raises(ValueError, match="unknown LM dtype"):
        load_lm(SMALL_LM, backend="transformers", dtype="float64")


def test_transformers_backend_judges_like_llama_cpp(small_lm, hf_lm):
    """The same GGUF through transformers (dequantized to float32): the statement is found
    in its tokens and the margin and statement log-probabilities agree with llama.cpp's up
    to quantized arithmetic."""
    from factscore_local.pipeline.cached_models import _statement_span

    hf = hf_lm
    statement = "Marie Curie was born in Warsaw."
    prompt = small_lm.chat(
        f"Is it supported?\n\n{PASSAGE}\n\nStatement: {statement} True or False?"
    )
    prefix = prompt[: prompt.rindex("Statement: ")]
    span = _statement_span(prompt, statement)
    ((ours, ids, logprobs),) = small_lm.true_false_with_statement([prompt], [prefix], [span])
    ((theirs, hf_ids, hf_logprobs),) = hf.true_false_with_statement([prompt], [prefix], [span])
    assert hf_ids == ids
    assert theirs.margin == pytest.approx(ours.margin, abs=0.5)
    np.testing.assert_allclose(hf_logprobs, logprobs, atol=0.5)


def test_batched_tails_judge_as_one_prompt_at_a_time(hf_lm):
    """On a GPU the transformers backend runs the tails after a shared page as padded
    batches: margins and statement log-probabilities are those of one prompt at a time
    (float32 on the CPU here), in groups that do not divide the prompts evenly."""
    from factscore_local.pipeline.cached_models import _statement_span

    cities = ["Warsaw", "Lisbon", "Paris", "the city of Kraków in southern Poland", "Vienna"]
    statements = [f"Marie Curie was born in {c}." for c in cities]
    prompts = [hf_lm.chat(f"Is it supported?\n\n{PASSAGE}\n\nStatement: {s} True or False?")
               for s in statements]  # fmt: skip
    prefixes = [p[: p.rindex("Statement: ")] for p in prompts]
    spans = [_statement_span(p, s) for p, s in zip(prompts, statements, strict=True)]
    judged, forward = {}, hf_lm._forward
    passes: list[int] = []  # the batch size of each forward pass

    def counted(inputs):
        passes.append(inputs["input_ids"].shape[0])
        return forward(inputs)

    hf_lm._forward = counted
    try:
        for batch in (1, 3):
            hf_lm.forget()
            hf_lm.tail_batch = batch
            before, passes[:] = hf_lm.stats.evaluated_tokens, []
            judged[batch] = hf_lm.true_false_with_statement(prompts, prefixes, spans)
            judged[batch, "evaluated"] = hf_lm.stats.evaluated_tokens - before
            judged[batch, "passes"] = list(passes)
    finally:
        hf_lm._forward, hf_lm.tail_batch = forward, 1
    assert judged[1, "passes"] == [1] * 6  # the page, then each tail
    assert judged[3, "passes"] == [1, 3, 2]  # the page, then two batches of tails
    assert judged[1, "evaluated"] == judged[3, "evaluated"]  # the page read once either way
    for (one, ids, logprobs), (together, batch_ids, batch_logprobs) in zip(
        judged[1], judged[3], strict=True
    ):
        assert batch_ids == ids
        assert together.margin == pytest.approx(one.margin, abs=1e-3)
        np.testing.assert_allclose(batch_logprobs, logprobs, atol=1e-3)


def test_prompts_tokenized_from_their_prefix_as_whole(small_lm):
    """A prompt is tokenized as its prefix's ids plus the rest's (the prefix once for many
    prompts), and the statement is found by its tokens' bytes: both give exactly what
    tokenizing every prompt whole, and again cut at the statement's ends, gives; also where
    the prefix ends inside a word (no clean split: tokenized whole) and with non-ASCII text."""
    from factscore_local.pipeline.cached_models import _statement_span

    statements = ["Zoë Saldaña was born in Passaic.", "She was born in Warsaw.", "Curie — née."]
    texts = [f"Is it supported?\n\n{PASSAGE}\n\nStatement: {s} True or False?" for s in statements]
    prompts = [small_lm.chat(t) for t in texts]
    prefixes = [p[: p.rindex("Statement: ")] for p in prompts]
    prefixes[2] = prompts[2][: prompts[2].rindex("Statement: ") + 4]  # "...\n\nStat"
    ids, cuts = small_lm._encode(prompts, prefixes)
    assert ids == [small_lm.prompt_ids(p) for p in prompts]
    assert cuts[:2] == [len(small_lm.prompt_ids(prefixes[0]))] * 2
    for prompt, prompt_ids, statement in zip(prompts, ids, statements, strict=True):
        span = _statement_span(prompt, statement)
        a, b = small_lm._token_span(prompt, prompt_ids, span)
        assert (a, b) == small_lm._token_span_by_prefix(prompt, prompt_ids, span)
        assert b > a and small_lm._text(prompt_ids[a:b]) == " " + statement
    # Spans that end inside a token have no tokens, as before; the others agree too.
    cut_short = [(span[0], span[1] - k) for k in range(1, 8)]
    found = [small_lm._token_span(prompts[2], ids[2], s) for s in cut_short]
    assert found == [small_lm._token_span_by_prefix(prompts[2], ids[2], s) for s in cut_short]
    assert (0, 0) in found and any(b > a for a, b in found)


def test_log_normaliser_matches_float64():
    from factscore_local.lm.base import log_normaliser

    rows = np.random.default_rng(1).normal(0, 8, (5, 151_936))
    top = rows.max(axis=1, keepdims=True)
    exact = top[:, 0] + np.log(np.exp(rows - top).sum(axis=1))
    np.testing.assert_allclose(log_normaliser(rows), exact, rtol=0, atol=1e-6)


def test_prompts_grouped_by_prefix_in_the_order_given():
    """The prefix still in the model's cache from the last slice comes first."""
    from factscore_local.lm.base import prefix_order

    encoded = [[9, 1], [1, 2], [9, 0], [1, 1]]
    assert prefix_order(encoded, ["P", "Q", "P", "Q"]) == [2, 0, 3, 1]
    assert prefix_order(encoded, None) == [3, 1, 2, 0]


def test_a_prefix_is_read_once_across_slices(small_lm):
    """Prompts of two prefixes in more than one stored slice: each prefix is evaluated once
    (the slice that holds both starts with the prefix the previous slice left in the
    model's cache), and the values are those of each prompt judged alone."""
    from factscore_local.pipeline.cached_models import SLICE_TRUE_FALSE, CachedLM
    from factscore_local.runtime.cache import ResultCache

    # "Bob" sorts after "Anna" as text, before it as token ids (checked below).
    texts = {
        name: f"Is it supported?\n\nPassage about {name}: {PASSAGE}\n\n"
        for name in ("Anna Kowalska", "Bob Smith")
    }
    prompts, prefixes, statements = [], [], []
    for prefix_text in texts.values():
        for i in range(SLICE_TRUE_FALSE - 4):  # two slices: the second holds both prefixes
            statement = f"Fact number {i} is stated."
            prompts.append(small_lm.chat(prefix_text + f"Statement: {statement} True or False?"))
            prefixes.append(prompts[-1][: prompts[-1].rindex("Statement: ")])
            statements.append(statement)
    heads = [small_lm.prompt_ids(prefixes[0]), small_lm.prompt_ids(prefixes[-1])]
    assert heads[1] < heads[0]  # the ids order the prefixes the other way round
    small_lm.forget()
    cached = CachedLM(small_lm, ResultCache(None), "small")
    before = small_lm.stats.evaluated_tokens
    rows = cached.judge(prompts, prefixes, statements)
    evaluated = small_lm.stats.evaluated_tokens - before
    tails = sum(len(small_lm.prompt_ids(p)) - len(heads[i >= len(prompts) // 2])
                for i, p in enumerate(prompts))  # fmt: skip
    assert evaluated == sum(map(len, heads)) + tails
    small_lm.forget()
    alone = CachedLM(small_lm, ResultCache(None), "small").judge(
        [prompts[-1]], [prefixes[-1]], [statements[-1]]
    )
    assert alone[0] == rows[-1]


def test_stored_prefix_states_give_the_same_results(small_lm, tmp_path):
    """An evidence prefix evaluated once is stored; a later pass loads it instead of
    reading it (no prefix tokens evaluated) and judges exactly as a fresh evaluation; a
    damaged file is evaluated again and stored anew."""
    from factscore_local.lm.prefix_states import MIN_TOKENS

    passage = " ".join([PASSAGE] * 20)
    prompts = [
        small_lm.chat(f"Is it supported?\n\n{passage}\n\nStatement: {s} True or False?")
        for s in ("She was born in Warsaw.", "She was a chef.")
    ]
    prefixes = [p[: p.rindex("Statement: ")] for p in prompts]
    spans = [(p.rindex("Statement: ") + 10, p.rindex(" True or False?")) for p in prompts]
    assert MIN_TOKENS < len(small_lm.prompt_ids(prefixes[0])) < 1000
    small_lm.forget()
    fresh = small_lm.true_false_with_statement(prompts, prefixes, spans)
    small_lm.keep_prefix_states(tmp_path, "small")
    try:
        for attempt in ("store", "load", "damaged", "load"):
            if attempt == "damaged":
                (stored,) = tmp_path.glob("*.kv")
                stored.write_bytes(stored.read_bytes()[:1000])
            small_lm.forget()
            small_lm._tail_logits(small_lm.prompt_ids("Something else entirely."), 0, 1)
            before = small_lm.stats.evaluated_tokens
            again = small_lm.true_false_with_statement(prompts, prefixes, spans)
            evaluated = small_lm.stats.evaluated_tokens - before
            read_prefix = evaluated > len(small_lm.prompt_ids(prefixes[0]))
            assert read_prefix == (attempt != "load"), attempt
            for (v1, ids1, lp1), (v2, ids2, lp2) in zip(fresh, again, strict=True):
                assert v1 == v2 and ids1 == ids2
                np.testing.assert_array_equal(lp1, lp2)
        assert len(list(tmp_path.glob("*.kv"))) == 1 and not list(tmp_path.glob("*.part"))
    finally:
        small_lm._states = None


def test_logits_asked_for_some_positions_equal_those_of_every_position(small_lm):
    """The LM head runs only at the rows a caller keeps, and those rows are the rows of a
    pass with logits everywhere (up to the kernels' summation order, which can change with
    the number of rows: <= 1e-3 in a margin on real 1.5B prompts,
    docs/benchmarks/verify-pass-model.md)."""
    ids = small_lm.prompt_ids(PASSAGE + "\n\nStatement: She was born in Warsaw in 1867.")
    n = 14
    keep = [2, 3, 4, 5, 9, n - 1]
    small_lm.forget()
    every = small_lm._tail_logits(ids, 0, n)
    small_lm.forget()
    some = small_lm._tail_logits(ids, 0, n, keep)
    assert every.shape[0] == n and some.shape[0] == len(keep)
    np.testing.assert_allclose(some, every[keep], rtol=0, atol=5e-3)


def test_sentences_after_a_shared_page_read_it_once_and_judge_as_alone(small_lm, tmp_path):
    """Two-level prefixes (a page, then a fact's sentence): prompts of several sentences
    and plain prompts of one page, judged together, read the page once and each sentence
    once, and give exactly the values of each prompt judged alone from an empty cache; a
    page stored by a plain prompt is loaded, not read, for the sentences."""
    from factscore_local.pipeline.cached_models import _statement_span
    from factscore_local.pipeline.signals.verify_prompt import retrieve_lm_prompt, sentence_prefix

    passages = [("Marie Curie", " ".join([PASSAGE] * 16))]
    sentences = {
        "She was born in Warsaw in 1867 and moved to Paris.": ["She was born in Warsaw.",
                                                               "She moved to Paris."],
        "She won two Nobel Prizes.": ["She won a Nobel Prize.", "She won two prizes."],
    }  # fmt: skip
    cases = [(s, f) for s, facts in sentences.items() for f in facts] + [("", "She was a chef.")]
    prompts = [small_lm.chat(retrieve_lm_prompt("Marie Curie", f, passages, sentence=s))
               for s, f in cases]  # fmt: skip
    prefixes = [p[: p.rindex("Statement: ")] for p in prompts]
    bases = [sentence_prefix(p) for p in prompts]
    spans = [_statement_span(p, f) for p, (_, f) in zip(prompts, cases, strict=True)]
    page = small_lm.prompt_ids(bases[0])
    assert bases[-1] == "" and bases[0] == bases[2] == prefixes[-1]
    small_lm.forget()
    before = small_lm.stats.evaluated_tokens
    together = small_lm.true_false_with_statement(prompts, prefixes, spans, bases=bases)
    evaluated = small_lm.stats.evaluated_tokens - before
    whole = [small_lm.prompt_ids(p) for p in prompts]
    heads = {x: len(small_lm.prompt_ids(x)) for x in prefixes}
    tails = sum(len(ids) - heads[x] for ids, x in zip(whole, prefixes, strict=True))
    sentence_parts = sum(heads[x] - len(page) for x in set(prefixes[:-1]))
    assert evaluated == len(page) + sentence_parts + tails
    for i in (3, 0, 4):
        small_lm.forget()
        (alone,) = small_lm.true_false_with_statement(
            [prompts[i]], [prefixes[i]], [spans[i]], bases=[bases[i]]
        )
        assert alone[0] == together[i][0] and alone[1] == together[i][1]
        np.testing.assert_array_equal(alone[2], together[i][2])
    small_lm.keep_prefix_states(tmp_path, "small")
    try:
        small_lm.forget()
        small_lm.true_false_with_statement(prompts[-1:], prefixes[-1:], spans[-1:])  # stores
        small_lm.forget()
        small_lm._tail_logits(small_lm.prompt_ids("Something else entirely."), 0, 1)
        before = small_lm.stats.evaluated_tokens
        again = small_lm.true_false_with_statement(
            prompts[:2], prefixes[:2], spans[:2], bases=bases[:2]
        )
        assert small_lm.stats.evaluated_tokens - before < len(page)
        assert [a[0] for a in again] == [t[0] for t in together[:2]]
    finally:
        small_lm._states = None


@pytest.mark.heavy
def test_half_precision_keeps_float32_logits():
    """A GPU runs the transformers backend in bf16; its vocabulary projection stays in
    float32, so margins do not move in bf16's steps of 0.125 (checked here with bf16 on the
    CPU: the same arithmetic, no GPU needed)."""

    full = load_lm(SMALL_LM, backend="transformers", threads=2, device="cpu")
    half = load_lm(SMALL_LM, backend="transformers", threads=2, device="cpu", dtype="bfloat16")
    assert half._head is not None and full._head is None
    # bf16 on the CPU is not the CPU's default: its results are cached apart
    assert (full.backend_identity(), half.backend_identity()) == (
        "transformers",
        "transformers@bfloat16",
    )
    prompts = [
        full.chat(f"Is it supported?\n\n{PASSAGE}\n\nStatement: {s} True or False?")
        for s in ("Marie Curie was born in Warsaw.", "Marie Curie was born in Lisbon.")
    ]
    ours = [v.margin for v in full.true_false(prompts)]
    theirs = [v.margin for v in half.true_false(prompts)]
    assert ours[0] > ours[1] and theirs[0] > theirs[1]
    for a, b in zip(ours, theirs, strict=True):
        assert b == pytest.approx(a, abs=0.35)
        assert b * 8 != round(b * 8)  # not on bf16's grid of 0.125
