"""Own facts that do not stand on their own, set aside before verification.

A reader (and the verifier, which sees the topic and the fact, never the sentence) can only
check a fact that says what it is about. Decomposing answers with citations, a small LM
sometimes writes facts that do not:

- **meta**: a statement about the text rather than the world ("About the District is a
  reference to a specific location.", "Lina can refer to many people with that name.");
- **dangling**: the fact's subject points back into the answer and names nothing: a
  pronoun other than the bio subject's ("It sold over 13 million copies.", "This system was
  widely adopted.") or a definite description with no name in it ("The comic strip was
  syndicated around the world.", "The race is held annually."). "They" counts only in a
  bio that calls its subject "he" or "she" (otherwise it may be the subject's own pronoun).

The check reads words and spaCy's part-of-speech tags, no LM. It assumes FActScore's
setting, a bio of a person: there "he", "she", "his" and "her" are the subject and a fact
may start with them. Facts given to the run (``--use-atomic-facts``) are never checked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from factscore_local.pipeline.decomposition.fragments import VERB_TAGS, load_tagger

__all__ = ["set_aside", "standalone_reasons"]

_META = re.compile(
    r"\b(?:the|this|that) (?:text|passage|article|sentence|response|answer|paragraph|"
    r"source|statement|context|document|question|prompt|information provided)\b"
    r"|\b(?:is|are|was|were) (?:a |an )?references? to\b"
    r"|\b(?:can |may )?refers? to\b"
    r"|\b(?:is|are|was|were) (?:not )?mentioned\b",
    re.IGNORECASE,
)
# Subject pronouns that never mean a person's bio subject ("they" is decided per bio).
_POINTING = frozenset({"it", "this", "that", "these", "those"})
_DETERMINERS = frozenset({"the", "this", "that", "these", "those"})
_PERSON = frozenset({"he", "she"})


def _subject(doc) -> list:
    """The tokens before the fact's first verb or auxiliary (its subject, roughly)."""
    for i, token in enumerate(doc):
        if token.pos_ in VERB_TAGS:
            return list(doc[:i])
    return list(doc)


def _reason(doc, they_dangles: bool) -> str | None:
    if _META.search(doc.text):
        return "meta"
    subject = _subject(doc)
    if not subject:
        return None
    first = subject[0].text.lower()
    if len(subject) == 1 and (first in _POINTING or (first == "they" and they_dangles)):
        return "dangling"
    named = any(t.pos_ == "PROPN" or t.text[:1].isupper() for t in subject[1:])
    if first in _DETERMINERS and len(subject) > 1 and not named and not subject[1].like_num:
        return "dangling"
    return None


def standalone_reasons(facts: Sequence[str], tagger: Any = None) -> list[str | None]:
    """For each fact of one bio: "meta", "dangling" or None (it stands alone)."""
    if not facts:
        return []
    tagger = tagger or load_tagger()
    docs = list(tagger.pipe(facts))
    person = any(doc[0].text.lower() in _PERSON for doc in docs if len(doc))
    return [_reason(doc, they_dangles=person) for doc in docs]


def set_aside(
    pairs: Sequence[tuple[Any, list[str]]], tagger: Any = None
) -> tuple[list[tuple[Any, list[str]]], list[tuple[str, str]]]:
    """One bio's ``[(Sentence, facts)]`` without the facts that do not stand alone, and
    those facts with their reasons, in order."""
    flat = [fact for _, facts in pairs for fact in facts]
    reasons = iter(standalone_reasons(flat, tagger))
    kept, aside = [], []
    for sentence, facts in pairs:
        keep = []
        for fact in facts:
            reason = next(reasons)
            if reason is None:
                keep.append(fact)
            else:
                aside.append((fact, reason))
        kept.append((sentence, keep))
    return kept, aside
