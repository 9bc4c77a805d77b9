"""Abstention detection: does a generation decline to answer instead of giving a bio?

Re-implements the reference's three modes:

* ``None`` / ``"none"``: never abstain (the reference CLI default).
* ``"generic"``: starts with "I'm sorry" or contains "provide more" anywhere.
* ``"perplexity_ai"``: for search-engine style answers. Citation markers are removed
  first; the answer abstains when it opens with one of the "no information" phrases, or
  when its first paragraph (split on blank lines) is empty or mentions one of them.
"""

from __future__ import annotations

import re

from factscore_local.declarations.decomposition import ABSTAIN_RULES

__all__ = ["ABSTAIN_RULES", "PERPLEXITY_NO_INFO_PHRASES", "is_abstained", "remove_citation"]

# Phrases with which Perplexity.ai says it found nothing; compared case-insensitively.
PERPLEXITY_NO_INFO_PHRASES: tuple[str, ...] = (
    "I could not find any information",
    "The search results do not provide",
    "There is no information",
    "There are no search results",
    "there are no provided search results",
    "not provided in the search results",
    "is not mentioned in the provided search results",
    "There seems to be a mistake in the question",
    "Not sources found",
    "No sources found",
    "Try a more general question",
)
_PHRASES_LOWER = tuple(p.lower() for p in PERPLEXITY_NO_INFO_PHRASES)

# A citation like "[3]" together with the whitespace around it (so "a [1] b" -> "ab",
# exactly as the reference does; it can also join paragraphs, which we keep for parity).
_CITATION_RE = re.compile(r"\s*\[\d+\]\s*")
_EMPTY_SOURCE = "According to , "


def remove_citation(text: str) -> str:
    """Drop "[n]" markers and patch the "According to , " left by a removed source name."""
    text = _CITATION_RE.sub("", text)
    if text.startswith(_EMPTY_SOURCE):
        text = text.replace(_EMPTY_SOURCE, "According to the search results, ")
    return text


def _generic(generation: str) -> bool:
    return generation.startswith("I'm sorry") or "provide more" in generation


def _perplexity(generation: str) -> bool:
    text = remove_citation(generation)
    lowered = text.lower()
    if any(lowered.startswith(p) for p in _PHRASES_LOWER):
        return True
    # The reference keeps paragraphs up to the first "invalid" one and abstains when none
    # is kept, which depends only on the first paragraph.
    first = text.split("\n\n")[0]
    return not first.strip() or any(p in first.lower() for p in _PHRASES_LOWER)


def is_abstained(generation: str, rule: str | None) -> bool:
    """True when ``generation`` is an abstention under ``rule`` (see the module docstring)."""
    if rule is None or rule == "none":
        return False
    if rule == "generic":
        return _generic(generation)
    if rule == "perplexity_ai":
        return _perplexity(generation)
    raise ValueError(f"unknown abstention rule {rule!r}; expected one of {ABSTAIN_RULES}")
