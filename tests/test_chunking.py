"""Passages: FActScore's chunking, reproduced with the packaged RoBERTa BPE."""

from __future__ import annotations

import sqlite3

import pytest

from factscore_local.index.chunking import chunk_page, strip_markers
from factscore_local.index.sources import SEPARATOR
from factscore_local.index.tokenizer import clean_up_tokenization, load_tokenizer
from tests.conftest import DEV_DB, require


@pytest.fixture(scope="module")
def roberta():
    return load_tokenizer("roberta")


def factscore_chunks(sections, tok, max_length=256):
    """FActScore's greedy packing, written out as its build_db does it (ids 0 and 2 are the
    section markers; the packaged tokenizer uses the same ids for them)."""
    passages = [[]]
    for sent in sections:
        tokens = [0] + tok.encode([sent])[0].ids + [2]
        room = max_length - len(passages[-1])
        if len(tokens) <= room:
            passages[-1].extend(tokens)
        else:
            passages[-1].extend(tokens[:room])
            offset = room
            while offset < len(tokens):
                passages.append(tokens[offset : offset + max_length])
                offset += max_length
    decoded = []
    for ids in passages:
        if not any(t not in (0, 2) for t in ids):
            continue
        decoded.append(
            clean_up_tokenization(tok.hf.decode(ids, clean_up_tokenization_spaces=False))
        )
    return decoded


def test_packaged_roberta_tokenizer(roberta):
    assert roberta.byte_level
    assert roberta.hf.convert_ids_to_tokens([0, 2]) == ["<s>", "</s>"]
    ids = roberta.encode(["Hello world, it's 1865."])[0].ids
    assert roberta.hf.convert_ids_to_tokens(ids) == [
        "Hello",
        "Ġworld",
        ",",
        "Ġit",
        "'s",
        "Ġ1865",
        ".",
    ]


@pytest.mark.parametrize("max_tokens", [256, 40])
def test_matches_factscore_greedy_packing(roberta, max_tokens):
    sections = [
        "Ada Lovelace Augusta Ada King, Countess of Lovelace (10 December 1815 – 27 November 1852) "
        "was an English mathematician and writer, chiefly known for her work on Charles Babbage's "
        "proposed mechanical general-purpose computer, the Analytical Engine. " * 6,
        "Biography.",
        'Biography.:Childhood. Lord Byron expected his child to be a "glorious boy" and was '
        "disappointed when Lady Byron gave birth to a girl. She wasn't told .",
        "References.",
    ]
    assert chunk_page(sections, roberta, max_tokens) == factscore_chunks(
        sections, roberta, max_tokens
    )


def test_real_dev_passages_reencode_to_full_windows(roberta):
    """FActScore's passages are 256-token windows: re-encoding them gives (about) 256
    tokens, except a page's last window; this is what our tokenizer must count."""
    conn = sqlite3.connect(require(DEV_DB))
    counts = []
    for (text,) in conn.execute("SELECT text FROM documents"):
        for passage in text.split(SEPARATOR):
            body = strip_markers(passage)
            n_markers = passage.count("<s>") + passage.count("</s>")
            counts.append(n_markers + roberta.count(body))
    assert max(counts) <= 258
    full = sum(1 for n in counts if 254 <= n <= 258)
    assert full / len(counts) > 0.8, f"only {full}/{len(counts)} windows are ~256 tokens"


def test_offset_tokenizer_keeps_original_text():
    minilm = load_tokenizer("minilm")
    assert not minilm.byte_level
    text = "Marie Curie (1867–1934) was a Polish-born physicist. " * 40
    passages = chunk_page([text.strip(), "Awards."], minilm, max_tokens=64)
    assert len(passages) > 5
    assert all("Marie Curie" in p or "physicist" in p for p in passages[:-1])
    # Original casing survives (WordPiece decoding would lower-case it).
    assert "Marie" in passages[0] and "Polish" in passages[0]
    assert passages[-1].endswith("<s>Awards.</s>")


def test_marker_only_windows_dropped(roberta):
    # A window holding only markers is not a passage.
    assert chunk_page(["x"], roberta, max_tokens=3) == ["<s>x</s>"]


def test_fast_bpe_equals_tokenizers_bpe(roberta, xml_index):
    """The tiktoken fast path gives the same ids and text as the `tokenizers` BPE."""
    from factscore_local.index.reader import KnowledgeSource
    from factscore_local.index.tokenizer import PassageTokenizer

    assert roberta.fast_bpe is not None
    slow = PassageTokenizer(roberta.hf, "slow", fast_bpe=None)
    texts = [p.clean_text for p in KnowledgeSource(xml_index).get_passages("Aristotle")]
    texts.append("Ünïcödé — “quotes” 東京 😀 and\ttabs\n\nnewlines  double  spaces")
    fast_ids = [e.ids for e in roberta.encode(texts)]
    assert fast_ids == [e.ids for e in slow.encode(texts)]
    assert roberta.decode_many(fast_ids) == slow.decode_many(fast_ids) == texts
