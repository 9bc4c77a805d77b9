"""Sentence splitting: pysbd plus the reference's repair rules."""

from __future__ import annotations

import json

import pytest

from factscore_local.pipeline.decomposition.sentences import (
    Sentence,
    detect_initials,
    repair_sentences,
    split_paragraphs,
    split_sentences,
)
from tests.conftest import SHARED


def texts(generation: str) -> list[str]:
    return [s.text for s in split_sentences(generation)]


def test_initials_stay_in_one_sentence() -> None:
    assert texts("J. K. Rowling is a British author. She wrote Harry Potter.") == [
        "J. K. Rowling is a British author.",
        "She wrote Harry Potter.",
    ]


def test_initials_repair_merges_a_bad_split() -> None:
    assert detect_initials("The author J. K. Rowling and T.S. Eliot") == ["J. K.", "T.S."]
    pieces = ["The book is by J.", "K. Rowling, who lives in Scotland.", "It sold well."]
    assert repair_sentences(pieces, ["J. K."]) == [
        "The book is by J. K. Rowling, who lives in Scotland.",
        "It sold well.",
    ]
    # An initials pair already inside one sentence changes nothing.
    assert repair_sentences(["By J. K. Rowling now.", "Next one here."], ["J. K."]) == [
        "By J. K. Rowling now.",
        "Next one here.",
    ]


def test_abbreviations() -> None:
    assert texts("Dr. Smith moved to the U.S. in 1990. He was 30 years old.") == [
        "Dr. Smith moved to the U.S. in 1990.",
        "He was 30 years old.",
    ]


def test_lowercase_fragment_joins_previous() -> None:
    assert repair_sentences(["He lived in St.", "louis for years.", "He left."], []) == [
        "He lived in St. louis for years.",
        "He left.",
    ]
    assert texts("He lived in the U.S. for years. he then moved to Canada.") == [
        "He lived in the U.S. for years. he then moved to Canada."
    ]


def test_one_word_fragments() -> None:
    # Later one-word piece: appended to the previous sentence.
    assert repair_sentences(["He won the race.", "Twice.", "Then he retired."], []) == [
        "He won the race. Twice.",
        "Then he retired.",
    ]
    # One-word piece at index 0: the next sentence is glued onto it.
    assert repair_sentences(["Yes.", "He won the race.", "Then he retired."], []) == [
        "Yes. He won the race.",
        "Then he retired.",
    ]
    # The reference's typo: a second one-word piece does not clear the glue flag.
    assert repair_sentences(["Yes.", "Indeed.", "He left town.", "She stayed."], []) == [
        "Yes. Indeed. He left town.",
        "She stayed.",
    ]
    # A lowercase first sentence stays as it is.
    assert repair_sentences(["iPhone maker Apple grew.", "It is big."], []) == [
        "iPhone maker Apple grew.",
        "It is big.",
    ]


def test_paragraphs() -> None:
    gen = "  Alice Smith is a chef. She lives in Rome.\n\n   \nShe has two sons. Both cook.\n"
    assert split_paragraphs(gen) == [
        "Alice Smith is a chef. She lives in Rome.",
        "She has two sons. Both cook.",
    ]
    assert split_sentences(gen) == [
        Sentence("Alice Smith is a chef.", 0, True),
        Sentence("She lives in Rome.", 0, False),
        Sentence("She has two sons.", 1, True),
        Sentence("Both cook.", 1, False),
    ]
    assert split_sentences("") == []
    assert split_sentences("\n \n") == []


def test_sentence_counts_match_human_split() -> None:
    path = SHARED / "factscore" / "labeled-dev" / "ChatGPT.jsonl"
    if not path.exists():
        pytest.skip(f"missing {path}")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    rows = [r for r in rows if r["annotations"]][:20]
    close = sum(abs(len(split_sentences(r["output"])) - len(r["annotations"])) <= 1 for r in rows)
    rate = close / len(rows)
    print(f"sentence count within +-1 of the human split: {rate:.2f} ({close}/{len(rows)})")
    assert rate >= 0.8


def test_an_ellipsis_stays_as_written() -> None:
    """pysbd cuts "..." into pieces; the sentence keeps the text as written (not "is.. .")."""
    texts = [s.text for s in split_sentences("Love is... a feeling. She sang it.")]
    assert texts == ["Love is... a feeling.", "She sang it."]
    assert [s.text for s in split_sentences('He wrote "Love is..." in 1990.')] == [
        'He wrote "Love is..." in 1990.'
    ]
