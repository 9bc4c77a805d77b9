"""NP (FActScore's npm.py maths) on a tiny randomly initialised RoBERTa, checked against an
independent, unbatched re-statement of the reference formula."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from factscore_local.index.tokenizer import load_tokenizer  # noqa: E402
from factscore_local.npm import (  # noqa: E402
    DEFAULT_NP_THRESHOLD,
    NPScorer,
    derive_stopword_ids,
    load_stopword_ids,
    retrieval_probabilities,
)

PASSAGES = [
    "<s>Paris</s><s>Paris is the capital and largest city of France. It was founded in the "
    "3rd century BC by the Parisii.</s>",
    "The city hosted the Summer Olympics in 1900 and 1924, and he's said it will again.",
    "<s>Lyon</s><s>Lyon is the third-largest city of France.",
]
ATOMS = [
    "Paris is the capital of France.",
    "The Parisii founded Paris in the 3rd century BC.",
    "He's hosted the Olympics in the 1900s.",
    "Zebras eat grass quickly.",
]


def roberta_like_tokenizer():
    """The packaged GPT-2 BPE with RoBERTa's post-processor, so it adds <s> ... </s> like
    roberta-large (the reference asserts those and cuts them off)."""
    from tokenizers import processors

    tok = load_tokenizer("roberta").hf
    tok.backend_tokenizer.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    assert tok("x")["input_ids"][0] == 0 and tok("x")["input_ids"][-1] == 2
    return tok


def tiny_roberta(vocab_size: int):
    from transformers import RobertaConfig, RobertaForMaskedLM

    torch.manual_seed(0)
    config = RobertaConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=300,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
    )
    return RobertaForMaskedLM(config).eval()


@pytest.fixture(scope="module")
def tok():
    return roberta_like_tokenizer()


@pytest.fixture(scope="module")
def model(tok):
    return tiny_roberta(len(tok))


@pytest.fixture()
def scorer(model, tok) -> NPScorer:
    return NPScorer(model=model, tokenizer=tok)


def reference_np(model, tok, atom: str, passages: list[str], stopwords: set[int]) -> float:
    """FActScore npm.py as its text reads, one sequence per forward pass, plain numpy exp."""
    bos, eos, mask = 0, 2, tok.mask_token_id
    colon = tok.convert_tokens_to_ids(":")  # RoBERTa's id 35, the end of the "Fact:" prefix

    def last_layer(ids: list[int]) -> np.ndarray:
        with torch.no_grad():
            out = model(torch.tensor([ids]), output_hidden_states=True, return_dict=True)
        return out.hidden_states[-1][0].numpy().astype(np.float64)

    store_ids: list[int] = []
    store_vecs: list[np.ndarray] = []
    for text in passages:
        ids = tok(text.strip())["input_ids"]
        assert ids[0] == bos and ids[-1] == eos
        ids = ids[1:-1]
        states = last_layer(ids)
        for j, tid in enumerate(ids):
            if tid not in (bos, eos):
                store_ids.append(tid)
                store_vecs.append(states[j])
    vectors = np.stack(store_vecs)

    q_ids = tok("Fact: " + atom)["input_ids"]
    if eos in q_ids:
        q_ids = q_ids[: q_ids.index(eos)]
    q_ids = q_ids[1:]
    probs = []
    in_prefix = True
    for i, tid in enumerate(q_ids):
        if in_prefix:
            in_prefix = tid != colon
            continue
        if tid in (bos, eos) or tid in stopwords:
            continue
        text = tok.decode(q_ids[:i] + [mask] + q_ids[i + 1 :])
        masked = tok(text)["input_ids"]
        q = last_layer(masked)[masked.index(mask)]
        scores = np.exp(vectors @ q / np.sqrt(vectors.shape[-1]))
        if tid not in store_ids:
            probs.append(0.0)
        else:
            hit = np.array(store_ids) == tid
            probs.append(scores[hit].sum() / scores.sum())
    return float(np.mean(probs))


# 1. exact maths --------------------------------------------------------------------------


def test_matches_unbatched_reference(scorer, model, tok):
    for atom in ATOMS:
        expected = reference_np(model, tok, atom, PASSAGES, scorer.stopword_ids)
        assert scorer.probability(atom, PASSAGES) == pytest.approx(expected, abs=1e-6), atom
    assert scorer.stats.requery_fallbacks == 0


def test_prefix_is_two_tokens_and_skipped(scorer):
    d = scorer.details("Paris is big.", PASSAGES)
    assert d.n_prefix_tokens == 2
    assert [s[2] for s in d.skipped[:2]] == ["prefix", "prefix"]
    assert all(t.position >= 2 for t in d.tokens)


def test_log_sum_exp_equals_plain_exp_and_survives_overflow():
    rng = np.random.default_rng(0)
    q, h = rng.normal(size=(3, 8)), rng.normal(size=(20, 8))
    ids = rng.integers(0, 5, size=20)
    gold = [int(ids[0]), int(ids[3]), 99]
    got = retrieval_probabilities(q, gold, ids, h)
    plain = np.exp(q @ h.T / math.sqrt(8))
    want = [plain[k][ids == g].sum() / plain[k].sum() for k, g in enumerate(gold[:2])]
    assert got[:2] == pytest.approx(want, abs=1e-12)
    assert got[2] == 0.0
    big = retrieval_probabilities(q * 1e3, gold, ids, h * 1e3)  # plain exp would be inf/inf
    assert all(np.isfinite(big)) and all(0.0 <= p <= 1.0 for p in big)


# 2. absent tokens ------------------------------------------------------------------------


def test_absent_gold_gives_zero_and_present_fact_scores_higher(scorer):
    supported = scorer.details("Paris is the capital of France.", [PASSAGES[0]])
    unrelated = scorer.details("Zebras eat grass quickly.", [PASSAGES[0]])
    assert unrelated.probability == 0.0
    assert all(t.probability == 0.0 and t.occurrences == 0 for t in unrelated.tokens)
    present = [t for t in supported.tokens if t.occurrences]
    assert present and all(t.probability > 0.0 for t in present)
    assert all(t.probability == 0.0 for t in supported.tokens if not t.occurrences)
    assert supported.probability > unrelated.probability
    assert DEFAULT_NP_THRESHOLD == 0.3


# 3. section markers ----------------------------------------------------------------------


def test_markers_are_special_ids_fed_to_the_encoder_then_dropped(scorer, tok):
    ids = tok("<s>a</s>", add_special_tokens=False)["input_ids"]
    assert len(ids) == 3 and ids[0] == 0 and ids[2] == 2
    marked, _ = scorer.encode_passages(["<s>Paris is big.</s><s>It has rivers.</s>"])
    plain_ids = (
        tok("Paris is big.", add_special_tokens=False)["input_ids"]
        + tok("It has rivers.", add_special_tokens=False)["input_ids"]
    )
    assert marked.tolist() == plain_ids
    assert not {0, 1, 2} & set(marked.tolist())
    ids, vecs = scorer.encode_passages(["<s></s>", "  "])
    assert len(ids) == 0 and vecs.shape[0] == 0
    assert scorer.probability("Paris is big.", ["<s></s>"]) == 0.0
    assert scorer.stats.no_passage_token_facts == 1


def test_markers_become_cls_sep_for_a_wordpiece_tokenizer():
    try:
        bert_tok = load_tokenizer("minilm").hf
    except Exception as exc:  # the embedded MiniLM package is optional here
        pytest.skip(f"MiniLM tokenizer unavailable: {exc}")
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(bert_tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=300,
    )
    s = NPScorer(model=BertForMaskedLM(config).eval(), tokenizer=bert_tok)
    marked = "<s>Paris</s><s>Paris is the capital of France.</s>"
    spelled = "[CLS] Paris [SEP] [CLS] Paris is the capital of France. [SEP]"
    ids, _ = s.encode_passages([marked])
    assert not {"<", ">", "/"} & set(bert_tok.convert_ids_to_tokens(ids.tolist()))
    assert s.probability("Paris is the capital of France.", [marked]) == pytest.approx(
        s.probability("Paris is the capital of France.", [spelled]), abs=1e-9
    )
    assert bert_tok.convert_tokens_to_ids("the") in s.stopword_ids
    assert s.details("Paris is big.", [marked]).n_prefix_tokens == 2


# 4. stopwords ----------------------------------------------------------------------------


def test_stopword_ids_for_the_packaged_tokenizer(tok):
    ids = derive_stopword_ids(tok)
    for form in ["the", " the", ",", ".", " of", " and", " is", ":", " (", "'s"]:
        (tid,) = tok(form, add_special_tokens=False)["input_ids"]
        assert tid in ids, form
    for form in [" Paris", " capital", " born"]:
        (tid,) = tok(form, add_special_tokens=False)["input_ids"]
        assert tid not in ids, form
    assert not set(tok.all_special_ids) & ids


def test_fact_of_only_stopwords_returns_defined_value(model, tok):
    s = NPScorer(model=model, tokenizer=tok)
    d = s.details("it is in the.", PASSAGES)
    assert d.no_content and d.probability == 0.0 and d.tokens == []
    assert s.stats.no_content_facts == 1
    half = NPScorer(model=model, tokenizer=tok, no_content_value=0.5)
    assert half.probability("it is in the.", PASSAGES) == 0.5


def test_stopword_override_and_loader(model, tok, tmp_path):
    capital = tok(" capital", add_special_tokens=False)["input_ids"][0]
    path = tmp_path / "stop.txt"
    path.write_text(f"{capital}\n\n4\n", encoding="utf-8")
    assert load_stopword_ids(path) == {capital, 4}
    s = NPScorer(model=model, tokenizer=tok, stopword_ids=load_stopword_ids(path))
    d = s.details("Paris is the capital of France.", PASSAGES)
    assert capital not in [t.token_id for t in d.tokens]
    assert tok(" the", add_special_tokens=False)["input_ids"][0] in [t.token_id for t in d.tokens]
    bad = tmp_path / "bad.txt"
    bad.write_text("12\nthe\n", encoding="utf-8")
    with pytest.raises(ValueError, match="bad.txt:2"):
        load_stopword_ids(bad)


# 5. batching and caching -----------------------------------------------------------------


def test_batch_size_does_not_change_results(model, tok):
    one = NPScorer(model=model, tokenizer=tok, batch_size=1)
    many = NPScorer(model=model, tokenizer=tok, batch_size=16)
    for atom in ATOMS[:3]:
        a, b = one.details(atom, PASSAGES), many.details(atom, PASSAGES)
        assert a.probability == pytest.approx(b.probability, abs=1e-6)
        assert [t.token_id for t in a.tokens] == [t.token_id for t in b.tokens]
    n_masks = sum(len(many.details(a, PASSAGES).tokens) for a in ATOMS[:3])
    assert n_masks > 3
    # batch 16: one passage pass (3 passages) + one query pass per fact
    assert many.stats.forward_passes == 1 + 6
    assert one.stats.forward_passes == len(PASSAGES) + n_masks


def test_passage_cache_hit_is_identical(model, tok):
    s = NPScorer(model=model, tokenizer=tok, cache_size=1)
    first = s.probability(ATOMS[0], PASSAGES)
    passes = s.stats.forward_passes
    again = s.probability(ATOMS[0], PASSAGES)
    assert again == first
    assert s.stats.passage_cache_hits == 1 and s.stats.forward_passes == passes + 1
    s.probability(ATOMS[0], PASSAGES[:1])  # evicts the 3-passage entry (cache_size=1)
    assert s.probability(ATOMS[0], PASSAGES) == pytest.approx(first, abs=1e-12)
    assert s.stats.passage_cache_misses == 3


def test_long_passage_is_windowed(model, tok):
    s = NPScorer(model=model, tokenizer=tok, max_length=8)
    text = "Paris is the capital and largest city of France and of its region."
    ids, vecs = s.encode_passages([text])
    assert ids.tolist() == tok(text, add_special_tokens=False)["input_ids"]
    assert vecs.shape == (len(ids), 32) and s.stats.passage_windows_split == 1


# 6. loading from a directory -------------------------------------------------------------


def test_load_from_local_directory(model, tok, tmp_path: Path):
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    loaded = NPScorer(model_dir=tmp_path)
    direct = NPScorer(model=model, tokenizer=tok)
    assert loaded.stopword_ids == direct.stopword_ids
    for atom in ATOMS[:2]:
        assert loaded.probability(atom, PASSAGES) == pytest.approx(
            direct.probability(atom, PASSAGES), abs=1e-6
        )


def test_missing_or_wrong_directory_fails_clearly(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        NPScorer(model_dir=tmp_path / "nope")
    with pytest.raises(ValueError, match="not a Hugging Face model directory"):
        NPScorer(model_dir=tmp_path)
    from transformers import GPT2Config

    GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=10).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="not a masked LM"):
        NPScorer(model_dir=tmp_path)
    with pytest.raises(ValueError, match="model_dir, or both"):
        NPScorer()
