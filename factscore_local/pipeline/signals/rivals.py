"""Rival facts: the fact with one named slot (a place, a person, a work) holding another
value of its type that the sentences most like the fact name.

A contradiction that swaps a name for one the page states in another role ("ambassador to
South Korea", where the page has him South Korea's ambassador to Japan) passes the coverage
and the slot check: every word of it is on the page. The LM's margin orders such a pair
well (the original above the swapped fact in most pairs of the counterfactual probe) but
its cut lets many through. Asking the LM about the rivals turns that ordering into a
signal: a fact that one of its rivals beats clearly is likely the swapped one, while a true
fact usually beats its rivals, or ties with those that are true as well.

The ``rivals`` signal (``signals.py``) is how far the best rival's margin exceeds the fact's
(0 when none does, or the fact has no rival). spaCy's entities find the slots and the
values; no more than ``LIMIT`` rivals are asked per fact, from the closest sentences first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from factscore_local.pipeline.decomposition.fact_postprocess import load_spacy
from factscore_local.pipeline.signals.lexical import content_words
from factscore_local.pipeline.signals.slot_roles import SENTENCE_END
from factscore_local.pipeline.signals.vocabulary import COUNTRIES

# spaCy's entity labels whose values can stand in for each other, by kind.
KINDS = {
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "PERSON": "person",
    "WORK_OF_ART": "work",
}
LIMIT = 3  # rivals asked per fact at most (each is a short tail after the shared evidence)
SLACK = 1  # sentences sharing at most this many content words fewer than the closest count
_STRIP = " \"'.,;:()"
# Countries under other names than COUNTRIES gives them.
_COUNTRY_NAMES = {c.lower() for c in COUNTRIES} | {
    "us", "u.s", "usa", "u.s.a", "america", "uk", "u.k", "united kingdom", "britain",
    "great britain", "soviet union", "ussr",
}  # fmt: skip


# Other names of a country, to its name in COUNTRIES.
_SAME_COUNTRY = {
    **dict.fromkeys(("us", "u.s", "usa", "u.s.a", "america"), "united states"),
    **dict.fromkeys(("uk", "u.k", "britain", "great britain"), "united kingdom"),
    "ussr": "soviet union",
}


def is_country(place: str) -> bool:
    return country_key(place) in _COUNTRY_NAMES


def country_key(place: str) -> str:
    """One name per country ("the U.S." and "United States" give the same)."""
    key = place.lower().removeprefix("the ").rstrip(".")
    return _SAME_COUNTRY.get(key, key)


@dataclass(frozen=True)
class Rival:
    kind: str  # place, person or work
    value: str  # the fact's value
    replacement: str  # the other value, from the passages
    fact: str  # the fact with the replacement in the value's place


@lru_cache(maxsize=65536)
def named_values(text: str) -> tuple[tuple[str, str, int, int], ...]:
    """(value, kind, start, end) of each place, person and work spaCy finds in ``text``."""
    out = []
    for ent in load_spacy()(text).ents:
        kind = KINDS.get(ent.label_)
        value = ent.text.strip(_STRIP)
        if kind and value:
            start = ent.start_char + ent.text.index(value)
            out.append((value, kind, start, start + len(value)))
    return tuple(out)


@lru_cache(maxsize=4096)
def sentences_of(passages: tuple[str, ...]) -> tuple[tuple[str, frozenset[str]], ...]:
    parts = (s.strip() for text in passages for s in SENTENCE_END.split(text))
    return tuple((s, frozenset(content_words(s))) for s in parts if s)


def closest_sentences(
    context: set[str], sentences: tuple[tuple[str, frozenset[str]], ...]
) -> list[str]:
    """The sentences (``sentences_of``) that share the most of the ``context`` words, and
    those within ``SLACK`` of them, closest first; none when no sentence shares a word."""
    shared = [(len(context & words), s) for s, words in sentences]
    best = max((n for n, _ in shared), default=0)
    if best == 0:
        return []
    return [s for n, s in sorted(shared, key=lambda x: -x[0]) if n >= max(1, best - SLACK)]


def rival_facts(fact: str, topic: str, passages: Sequence[str], limit: int = LIMIT) -> list[Rival]:
    """The fact's rivals: each named slot (not part of the topic's name) with another value
    of its kind from the passages' sentences that share the most content words with the
    fact (within ``SLACK`` of the closest), closest first; values already in the fact, or
    sharing a word with the topic's name, are not rivals, and a place's rivals are
    countries for a country and places other than countries for the others.

    Example:
        >>> [r.fact for r in rival_facts("He was the ambassador to Japan.", "Ra Jong-yil",
        ...     ["Ra was the ambassador to the United Kingdom and the ambassador to Japan."])]
        ['He was the ambassador to the United Kingdom.']
    """
    name = content_words(topic)
    slots = [s for s in named_values(fact) if not content_words(s[0]) & name]
    if not slots:
        return []
    sentences = sentences_of(tuple(passages))
    words = content_words(fact) - name
    rivals: list[Rival] = []
    seen: set[str] = set()
    for value, kind, start, end in slots:
        for sentence in closest_sentences(words - content_words(value), sentences):
            for other, other_kind, *_ in named_values(sentence):
                key = other.lower()
                if (other_kind != kind or key in seen or key in fact.lower()
                        or value.lower() in key or content_words(other) & name):  # fmt: skip
                    continue
                if kind == "place" and is_country(other) != is_country(value):
                    continue  # a town and its country are both true of a birth
                seen.add(key)
                rivals.append(Rival(kind, value, other, fact[:start] + other + fact[end:]))
                if len(rivals) >= limit:
                    return rivals
    return rivals


def rival_lead(margins: Sequence[float], rival_margins: Sequence[float],
               owners: Sequence[int]) -> list[float]:  # fmt: skip
    """Per fact, how far its best rival's margin exceeds its own (0 when none does or it
    has no rival); ``owners[j]`` is the fact that rival ``j`` is a rival of."""
    best = [float("-inf")] * len(margins)
    for owner, margin in zip(owners, rival_margins, strict=True):
        best[owner] = max(best[owner], float(margin))
    return [max(0.0, b - float(m)) for m, b in zip(margins, best, strict=True)]
