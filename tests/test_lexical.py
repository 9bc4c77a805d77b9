"""Lexical coverage: the share of a fact's content words, beyond the topic's name, that
its passages contain."""

from __future__ import annotations

import pytest

from factscore_local.config import build_config
from factscore_local.pipeline.signals.lexical import content_words, coverage, words_of

PAGE = [
    (
        "Doug Sheehan",
        "Doug Sheehan (born April 27, 1949) is an American actor, known for his roles "
        "on General Hospital and Knots Landing.",
    )
]


def test_content_words_leave_out_stopwords_and_keep_numbers():
    assert content_words("He was born in 1949, in Santa Monica.") == {
        "born",
        "1949",
        "santa",
        "monica",
    }


def test_coverage_counts_the_words_beyond_the_topic():
    words = words_of(PAGE)
    assert coverage("Doug Sheehan was born in 1949.", "Doug Sheehan", words) == 1.0
    assert coverage("Doug Sheehan was born in Santa Monica.", "Doug Sheehan", words) == 1 / 3
    # Nothing beyond the name (or only stopwords) to look for: nothing is missing.
    assert coverage("Doug Sheehan is.", "Doug Sheehan", words) == 1.0
    assert coverage("He acted on Dallas.", "Doug Sheehan", words) == 0.0
    assert coverage("The 1949 actor", "", words) == 1.0  # no topic: every content word counts


def test_a_coverage_rule_takes_its_own_number_of_weights():
    base = {"index": "idx", "verifier": "retrieve-lm+np+coverage-fitted"}
    config = build_config({**base, "rule_weights": [0.5, 1.0, 2.0, 0.0, 3.0]})
    assert config.rule_weights == (0.5, 1.0, 2.0, 0.0, 3.0)
    with pytest.raises(ValueError, match="hold 5 numbers"):
        build_config({**base, "rule_weights": [0.5, 1.0, 2.0, 0.0]})
