"""Abstention rules: each branch, and agreement with the human labels of the dev data."""

from __future__ import annotations

import json

import pytest

from factscore_local.pipeline.decomposition.abstain import (
    ABSTAIN_RULES,
    is_abstained,
    remove_citation,
)
from tests.conftest import SHARED

LABELED = SHARED / "factscore" / "labeled-dev"


def test_rule_names() -> None:
    assert set(ABSTAIN_RULES) == {"none", "generic", "perplexity_ai"}


@pytest.mark.parametrize("rule", [None, "none"])
def test_none_never_abstains(rule: str | None) -> None:
    assert not is_abstained("I'm sorry, I could not find any information.", rule)
    assert not is_abstained("", rule)


def test_unknown_rule_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown abstention rule"):
        is_abstained("text", "chatgpt")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm sorry, but I don't know who that is.", True),
        ("Could you provide more context about this person?", True),
        (" I'm sorry, no.", False),  # must be at the very start
        ("He said I'm sorry to the court.", False),
        ("I am sorry, I cannot help.", False),  # only the exact "I'm sorry" opening
        ("John Smith is a British actor.", False),
    ],
)
def test_generic(text: str, expected: bool) -> None:
    assert is_abstained(text, "generic") is expected


def test_remove_citation() -> None:
    # Whitespace around a marker goes with it, even across a paragraph break.
    assert remove_citation("He won the cup [1] in 1990[2][3].") == "He won the cupin 1990."
    assert remove_citation("A.[1]\n\nB.") == "A.B."
    assert remove_citation("According to , he was born in 1950.") == (
        "According to the search results, he was born in 1950."
    )
    assert remove_citation("He said: According to , x") == "He said: According to , x"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I could not find any information about John Doe.", True),
        ("i could NOT find any information on him.", True),  # case-insensitive
        ("No sources found.", True),
        ("John Doe is a chef[1]. There is no information about his birth.", True),
        ("\n\nJohn Doe is a chef.", True),  # empty first paragraph
        ("John Doe is a chef[1].\n\nThere is no information about his family.", False),
        ("[1]\n\nJohn Doe is a chef.", False),  # the citation removal joins paragraphs
        ("John Doe is a chef who works in Paris [1][2].", False),
        ("I'm sorry, who?", False),  # the generic phrase is not a Perplexity phrase
    ],
)
def test_perplexity_ai(text: str, expected: bool) -> None:
    assert is_abstained(text, "perplexity_ai") is expected


def _agreement(model: str, rule: str) -> float:
    path = LABELED / f"{model}.jsonl"
    if not path.exists():
        pytest.skip(f"missing {path}")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    same = sum(is_abstained(r["output"], rule) == (r["annotations"] is None) for r in rows)
    return same / len(rows)


@pytest.mark.parametrize(
    ("model", "rule"),
    [("ChatGPT", "generic"), ("InstructGPT", "generic"), ("PerplexityAI", "perplexity_ai")],
)
def test_agreement_with_human_abstentions(model: str, rule: str) -> None:
    # annotations == null marks an abstained (or unannotated) generation. Measured:
    # ChatGPT 98/98, InstructGPT 97/98 (an empty output), PerplexityAI 97/98 (a full bio
    # that was left unannotated).
    rate = _agreement(model, rule)
    print(f"{model}/{rule}: agreement {rate:.3f}")
    assert rate >= 0.95
