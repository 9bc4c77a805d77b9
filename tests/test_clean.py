"""What is not a claim leaves a generation before the sentence split (pipeline/clean.py)."""

from __future__ import annotations

import pytest

from factscore_local.config import EvalConfig
from factscore_local.pipeline.decomposition.clean import clean_generation
from factscore_local.pipeline.decomposition.sentences import split_sentences
from factscore_local.pipeline.estimator import Estimator
from factscore_local.pipeline.records.inputs import Bio


@pytest.mark.parametrize(
    ("written", "clean", "kind"),
    [
        ("He played Molloy in Hello, Dolly [1][2].", "He played Molloy in Hello, Dolly.",
         "citations"),
        ("It ran between the 1930s and the 1950s[2018].", "It ran between the 1930s and the 1950s.",
         "citations"),
        ("She was born in Egypt[1]. She studied law.", "She was born in Egypt. She studied law.",
         "citations"),
        ("He won [1, 2] two cups [3-5] in Spain.", "He won two cups in Spain.", "citations"),
        ("She lived in Hollywood[citation needed][1].", "She lived in Hollywood.", "citations"),
        ("He was born in 1950^3 in Paris.", "He was born in 1950 in Paris.", "footnotes"),
        ("He was born in Paris¹² in 1950.", "He was born in Paris in 1950.", "footnotes"),
        ("She won the prize.† She retired.", "She won the prize. She retired.", "footnotes"),
        ("He founded a firm (https://example.org/a).", "He founded a firm.", "urls"),
        ("See www.example.com for his works.", "See for his works.", "urls"),
        ("He wrote [a novel](https://example.org/n) in 1990.", "He wrote a novel in 1990.",
         "links"),
        ("## Early life\nHe was born in Ohio.", "He was born in Ohio.", "headings"),
        ("- He was born in Ohio.\n- He studied law.", "He was born in Ohio.\nHe studied law.",
         "list markers"),
        ("1. He was born in Ohio.\n2) He studied law.", "He was born in Ohio.\nHe studied law.",
         "list markers"),
        ("He was **very** popular in *Spain*.", "He was very popular in Spain.", "emphasis"),
    ],
)  # fmt: skip
def test_each_marker_form_is_removed(written, clean, kind):
    cleaned = clean_generation(written)
    assert cleaned.text == clean
    assert kind in cleaned.removed


def test_text_without_markup_is_untouched():
    text = "He was born in 1950 (in Paris). He won 2 cups, [sic] and more.\n\nHe retired."
    cleaned = clean_generation(text)
    assert cleaned.text == text and not cleaned.changed


def test_sentences_keep_the_text_as_written():
    written = "He was born in Egypt[1]. He studied law at Cairo University[2][3].\n- He retired."
    cleaned = clean_generation(written)
    sentences = [s.text for s in split_sentences(cleaned.text)]
    assert sentences == ["He was born in Egypt.", "He studied law at Cairo University.",
                         "He retired."]  # fmt: skip
    at, shown = 0, []
    for sentence in sentences:
        original, at = cleaned.original_span(sentence, at)
        shown.append(original)
    assert shown == ["He was born in Egypt[1].", "He studied law at Cairo University[2][3].",
                     "He retired."]  # fmt: skip


@pytest.mark.parametrize(
    ("output", "kinds"),
    [
        ("[1][2]\n[3]", "citations"),
        ("https://example.org/a\nwww.example.com", "urls"),
        ("- \n- \n1.\n", "list markers"),
        ("## Biography\n---", "headings"),
    ],
)
def test_a_generation_of_markup_alone_is_an_error_row_with_its_reason(db_index, output, kinds):
    """No crash, no empty fact, and no model loaded: the row says what the output held."""
    estimator = Estimator(EvalConfig(index=db_index))
    bios = [Bio(line=1, topic="Doug Sheehan", output=output, source="x.jsonl")]
    (row,) = estimator.run(bios, None, progress=False)
    assert row.error.startswith("no claim to verify: the output holds only")
    assert kinds in row.error
    assert not row.decisions
    assert not estimator.components.lm.loaded
