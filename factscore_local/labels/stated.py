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

Names are where spaCy's tags slip most (a film tagged as a person, a club as a place), so
a place, person or work is swapped only where it stands alone in the fact (no capitalised
word right before or after it: not a piece of a longer name or title), and the page tags
both the slot's value and its replacement with the slot's label and never another; a
work's two titles must both stand in quotes on the page; and a place is not swapped for
one the page writes next to it ("Vancouver, British Columbia": the one is in the other),
nor a country for itself under another name ("the US", "the U.S.").
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from factscore_local.labels.replacements import (
    NATIONALITIES,
    NUMBER_WORDS,
    _clean_entity,
    occurs,
)
from factscore_local.pipeline.signals.rivals import country_key, is_country
from factscore_local.pipeline.signals.slot_roles import YEAR

# The page's numbers in digits as the probe has always read them (the recorded pairs and
# their model results depend on it): thousands groups and a decimal part ("27,000", "3.5").
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)?(?!\w|[.,]\d)")
_NUMBER_WORD = re.compile(rf"\b(?:{'|'.join(NUMBER_WORDS[2:])})\b", re.IGNORECASE)


def _surface_values(page: str) -> tuple[set[str], set[float]]:
    """The page's years as written and its other numbers (digits, or words up to
    twelve), read from their surface: the replacement values the probe draws from, kept
    as they were when its pairs were recorded (a date's day among the numbers)."""
    years = set(YEAR.findall(page))
    numbers = {float(n.replace(",", "")) for n in _NUMBER.findall(page)} - {float(y) for y in years}
    numbers |= {float(NUMBER_WORDS.index(w.lower())) for w in _NUMBER_WORD.findall(page)}
    return years, numbers


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
    labels: dict[str, set[str]] = field(default_factory=dict)  # each name's NER labels
    text: str = ""  # the page


# The label a name must carry on the page, alone, to be swapped, by kind.
NAME_LABELS = {"place": "GPE", "person": "PERSON", "work": "WORK_OF_ART"}


def _names(doc: Any, label: str, min_words: int = 1) -> list[str]:
    values = {_clean_entity(e.text) for e in doc.ents if e.label_ == label}
    return sorted(v for v in values if len(v.split()) >= min_words and len(v) <= 40
                  and all(w[:1].isupper() for w in v.split())
                  and not any(c.isdigit() for c in v))  # fmt: skip


def _labels(doc: Any) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for ent in doc.ents:
        out.setdefault(_clean_entity(ent.text), set()).add(ent.label_)
    return out


def _quoted(title: str, page: str) -> bool:
    return re.search(rf"[\"“]{re.escape(title)}[\"”]", page) is not None


def _whole_name(value: str, fact: str) -> bool:
    """Whether ``value`` stands in the fact with no capitalised word right before it (but
    the fact's first) or right after it."""
    for found in re.finditer(re.escape(value), fact):
        before = fact[: found.start()].split()
        after = fact[found.end() :].split()
        if len(before) > 1 and before[-1][:1].isupper():
            continue
        if after and after[0][:1].isupper():
            continue
        return True
    return False


def _beside(a: str, b: str, page: str) -> bool:
    """Whether the page writes one place right after the other, with a comma between."""
    return any(re.search(rf"\b{re.escape(x)},\s*(the\s+)?{re.escape(y)}\b", page)
               for x, y in ((a, b), (b, a)))  # fmt: skip


def stated_values(page: str, doc: Any, known_places: Collection[str] | None = None) -> PageValues:
    """The years, numbers, demonyms (inside names too: "the Canadian Open"), countries,
    places, people and works a page states.

    Args:
        page: the page's text.
        doc: spaCy's parse of ``page`` (with NER).
        known_places: keep only these places (``Pools.places``, named on several pages: a
            place tagged on one page only is often a tagging slip).
    """
    years, found = _surface_values(page)
    numbers = sorted({int(n) for n in found if n.is_integer()})
    demonyms = sorted(d for d in NATIONALITIES if occurs(d, page))
    gpe = _names(doc, "GPE")
    return PageValues(
        years=sorted(years),
        numbers=numbers,
        nationalities=demonyms,
        countries=[p for p in gpe if is_country(p)],
        places=[
            p
            for p in gpe
            if p not in NATIONALITIES
            and not is_country(p)
            and (known_places is None or p in known_places)
        ],  # fmt: skip
        people=_names(doc, "PERSON", 2),
        works=[w for w in _names(doc, "WORK_OF_ART") if _quoted(w, page)],
        labels=_labels(doc),
        text=page,
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
    anywhere in the fact (nor, for a person, sharing a word with the topic's name; for a
    name, tagged on the page with another label than the slot's; see the module's
    docstring); None when the page states no such value."""
    label = NAME_LABELS.get(kind)
    if label and (values.labels.get(old) != {label} or not _whole_name(old, fact)):
        return None  # a piece of a longer name, or not tagged as the slot's kind
    if kind == "work" and not _quoted(old, values.text):
        return None
    if kind == "year":
        options = list(values.years)
    elif kind == "number":
        options = _number_options(old, values.numbers)
    elif kind == "nationality":
        options = list(values.nationalities)
    elif kind == "occupation":
        return None  # another job the page names is mostly the person's too ("and singer")
    elif kind == "place":
        options = [p for p in (values.countries if is_country(old) else values.places)
                   if not _beside(old, p, values.text)
                   and country_key(p) != country_key(old)]  # fmt: skip
    elif kind == "person":
        options = [p for p in values.people if not {w.lower() for w in p.split()} & topic_tokens
                   and not occurs(p.split()[-1], fact)]  # fmt: skip
    elif kind == "work":
        options = list(values.works)
    else:
        raise ValueError(f"unknown counterfactual kind {kind!r}")
    options = [o for o in options
               if o.lower() != old.lower() and not occurs(o, fact)
               and not re.search(re.escape(o), old, re.IGNORECASE)
               and (not label or values.labels.get(o) == {label})]  # fmt: skip
    return rng.choice(options) if options else None
