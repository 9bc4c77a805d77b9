"""Replacement values for counterfactual facts, and the seeded pick of one the page lacks.

Its one job: supply the value that goes into a fact's slot. Fixed vocabularies (countries
and their demonyms, occupations, number words), pools of places, people and works gathered
from the pages (:func:`build_pools`), and seeded choices of a value that occurs neither in
the fact nor in its page (:func:`occurs`). Finding the slots and building the pairs is
:mod:`factscore_local.labels.counterfactual`, which re-exports the public names here.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from factscore_local.pipeline.signals.vocabulary import (
    COUNTRIES,
    NATIONALITIES,
    NUMBER_WORDS,
    OCCUPATIONS,
)

__all__ = [
    "COUNTRIES",
    "NATIONALITIES",
    "NUMBER_WORDS",
    "OCCUPATIONS",
    "Pools",
    "build_pools",
    "occurs",
]


@dataclass
class Pools:
    """Replacement values of the entity kinds that have no fixed list, gathered from pages.

    Attributes:
        places: cities, regions and other places that are not a listed country.
        people: full names (two or more capitalised words).
        works: titles of works (films, books, songs, albums).
    """

    places: list[str] = field(default_factory=list)
    people: list[str] = field(default_factory=list)
    works: list[str] = field(default_factory=list)


def occurs(value: str, text: str) -> bool:
    """Whether ``value`` occurs in ``text`` as a whole word or phrase, ignoring case.

    Example:
        >>> occurs("Canadian", "He won the Canadian Open."), occurs("Can", "Canadian")
        (True, False)
    """
    if value.lower() not in _lower(text):  # most values are absent: skip the regex
        return False
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE) is not None


@functools.lru_cache(maxsize=256)
def _lower(text: str) -> str:
    return text.lower()


def _clean_entity(text: str) -> str:
    text = re.sub(r"^(the|The)\s+", "", text.strip(" \"'“”‘’.,;:()"))
    return re.sub(r"'s$|’s$", "", text).strip()


def build_pools(texts: Iterable[str], nlp: Any) -> Pools:
    """Places, people and works named in some texts (the dev pages), sorted and unique.

    Args:
        texts: page texts.
        nlp: a spaCy pipeline with NER (``load_spacy()``).

    Returns:
        The pools; a value must look like a name (capitalised words, no digits).
    """
    found: dict[str, set[str]] = {"GPE": set(), "LOC": set(), "PERSON": set(), "WORK_OF_ART": set()}
    pages: dict[str, int] = {}  # a place named on several pages is rarely a tagging slip
    for doc in nlp.pipe(list(texts), batch_size=32):
        seen = set()
        for ent in doc.ents:
            if ent.label_ in found:
                found[ent.label_].add(_clean_entity(ent.text))
                seen.add(_clean_entity(ent.text))
        for value in seen:
            pages[value] = pages.get(value, 0) + 1

    def names(values: set[str], min_words: int = 1) -> list[str]:
        ok = (v for v in values if len(v.split()) >= min_words and len(v) <= 40)
        return sorted(v for v in ok if all(w[:1].isupper() for w in v.split())
                      and not any(c.isdigit() or c in "<>/" for c in v))  # fmt: skip

    country_like = set(COUNTRIES) | set(NATIONALITIES)
    places = [p for p in names(found["GPE"]) if p not in country_like and pages[p] >= 2]
    return Pools(places, names(found["PERSON"], 2), names(found["WORK_OF_ART"]))


def _choose(
    rng: random.Random,
    values: Sequence[str],
    page: str,
    fact: str,
    ok: Callable[[str], bool] = lambda v: True,
) -> str | None:
    """A value from ``values`` that occurs neither in the page nor in the fact (and that
    ``ok`` accepts)."""
    order = list(range(len(values)))
    rng.shuffle(order)
    for i in order[:400]:  # the pools are large: a few hundred tries suffice
        value = values[i]
        if ok(value) and not occurs(value, fact) and not occurs(value, page):
            return value
    return None


def _new_year(rng: random.Random, old: str, page: str, fact: str) -> str | None:
    shifts = [s * d for d in range(4, 8) for s in (1, -1)]
    rng.shuffle(shifts)
    for shift in shifts:
        year = str(int(old) + shift)
        if int(year) <= 2023 and not occurs(year, page) and not occurs(year, fact):
            return year
    return None


def _new_number(rng: random.Random, old: str, page: str, fact: str) -> str | None:
    word = old.lower() in NUMBER_WORDS
    value = NUMBER_WORDS.index(old.lower()) if word else int(old.replace(",", ""))
    if value <= 12:
        options = [n for n in range(2, 13) if n != value and abs(n - value) >= 2]
    else:  # a clearly different amount of the same size
        factors = (0.5, 0.6, 0.7, 1.4, 1.5, 1.8, 2.0)
        zeros = len(str(value)) - len(str(value).rstrip("0"))
        step = 10 ** min(zeros, len(str(value)) - 1)
        options = sorted({max(1, round(value * f / step)) * step for f in factors} - {value})
    rng.shuffle(options)
    for n in options:
        text = NUMBER_WORDS[n] if word and n < len(NUMBER_WORDS) else str(n)
        if "," in old:
            text = f"{n:,}"
        if word and old[:1].isupper():
            text = text.capitalize()
        forms = {str(n), f"{n:,}"} | ({NUMBER_WORDS[n]} if n < len(NUMBER_WORDS) else set())
        if not any(occurs(f, page) or occurs(f, fact) for f in forms):
            return text
    return None
