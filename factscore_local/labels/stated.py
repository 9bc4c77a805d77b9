"""Replacement values the page itself states: the harder counterfactuals.

The default probe puts into a fact's slot a value its page does not state anywhere, which
the lexical coverage already catches for most kinds. A contradiction in real text is more
often a value the page does state in another role: the year of another event, the number
of other titles, a country the person only toured, a co-star's name, "Canadian" of "the
Canadian Open". :func:`stated_values` gathers such values from a page and
:func:`stated_replacement` picks one for a slot (of the same type, not the slot's own value,
not anywhere in the fact). Such a value may, now and then, be true of the fact as well; a
hand check of a sample says how often. Occupations are left out: another job the page
names is most often the person's as well (an actress "and singer").
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from factscore_local.labels.replacements import (
    COUNTRIES,
    NATIONALITIES,
    NUMBER_WORDS,
    _clean_entity,
    occurs,
)
from factscore_local.pipeline.slots import slots


@dataclass
class PageValues:
    """The values of each slot type a page states (sorted, for a seeded pick)."""

    years: list[str] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    nationalities: list[str] = field(default_factory=list)
    countries: list[str] = field(default_factory=list)
    places: list[str] = field(default_factory=list)
    people: list[str] = field(default_factory=list)
    works: list[str] = field(default_factory=list)


def _names(doc: Any, label: str, min_words: int = 1) -> list[str]:
    values = {_clean_entity(e.text) for e in doc.ents if e.label_ == label}
    return sorted(v for v in values if len(v.split()) >= min_words and len(v) <= 40
                  and all(w[:1].isupper() for w in v.split())
                  and not any(c.isdigit() for c in v))  # fmt: skip


def stated_values(page: str, doc: Any, known_places: Collection[str] | None = None) -> PageValues:
    """The years, numbers, demonyms (inside names too: "the Canadian Open"), countries,
    places, people and works a page states.

    Args:
        page: the page's text.
        doc: spaCy's parse of ``page`` (with NER).
        known_places: keep only these places (``Pools.places``, named on several pages: a
            place tagged on one page only is often a tagging slip).
    """
    found = slots(page)
    numbers = sorted({int(float(n)) for n in found["number"] if float(n).is_integer()})
    demonyms = sorted(d for d in NATIONALITIES if occurs(d, page))
    gpe = _names(doc, "GPE")
    country_like = set(COUNTRIES) | set(NATIONALITIES)
    return PageValues(
        years=sorted(found["year"]),
        numbers=numbers,
        nationalities=demonyms,
        countries=[p for p in gpe if p in COUNTRIES],
        places=[
            p for p in gpe if p not in country_like and (known_places is None or p in known_places)
        ],  # fmt: skip
        people=_names(doc, "PERSON", 2),
        works=_names(doc, "WORK_OF_ART"),
    )


def _number_options(old: str, numbers: list[int]) -> list[str]:
    """Numbers of the page that could stand in the slot: a clearly different amount of the
    same size, written as the slot writes its own (a word, digits, thousands commas)."""
    word = old.lower() in NUMBER_WORDS
    value = NUMBER_WORDS.index(old.lower()) if word else int(old.replace(",", ""))
    if value <= 12:
        picked = [n for n in numbers if 2 <= n <= 12 and n != value]
    else:
        picked = [
            n for n in numbers if value / 3 <= n <= 3 * value and abs(n - value) >= 0.1 * value
        ]
    out = []
    for n in picked:
        text = NUMBER_WORDS[n] if word and n < len(NUMBER_WORDS) else str(n)
        text = f"{n:,}" if "," in old else text
        out.append(text.capitalize() if word and old[:1].isupper() else text)
    return out


def stated_replacement(
    kind: str, old: str, values: PageValues, fact: str, topic_tokens: set[str], rng: random.Random
) -> str | None:
    """A value of ``kind`` the page states, for the slot holding ``old``: not ``old``, not
    anywhere in the fact (nor, for a person, sharing a word with the topic's name); None
    when the page states no such value."""
    if kind == "year":
        options = list(values.years)
    elif kind == "number":
        options = _number_options(old, values.numbers)
    elif kind == "nationality":
        options = list(values.nationalities)
    elif kind == "occupation":
        return None  # another job the page names is mostly the person's too ("and singer")
    elif kind == "place":
        options = list(values.countries if old in COUNTRIES else values.places)
    elif kind == "person":
        options = [p for p in values.people if not {w.lower() for w in p.split()} & topic_tokens
                   and not occurs(p.split()[-1], fact)]  # fmt: skip
    elif kind == "work":
        options = list(values.works)
    else:
        raise ValueError(f"unknown counterfactual kind {kind!r}")
    options = [o for o in options
               if o.lower() != old.lower() and not occurs(o, fact)
               and not re.search(re.escape(o), old, re.IGNORECASE)]  # fmt: skip
    return rng.choice(options) if options else None
