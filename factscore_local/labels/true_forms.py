"""True facts in other forms: supported facts with a value restated so that it still holds.

The counterfactual probes (``counterfactual.py``, ``stated.py``) ask whether a verifier
rejects a fact whose slot was changed to a false value. This one asks the converse: does it
still accept a supported fact whose value is written in another, looser or fuller form,
the forms a modern LM writes? From a fact the annotators labeled supported (S), one value
is restated from the page's own value:

- ``decade``: "in 1969" -> "in the late 1960s" (or "in the 1960s");
- ``century``: "in 1969" -> "in the 20th century" (or its early or late part);
- ``range``: "in 1969" -> "between 1968 and 1970";
- ``approximation``: "in 1969" -> "around 1969";
- ``full date``: "in 1969" -> "on November 26, 1969", the day the page gives in that
  year in a clause with all of the fact's terms (``slots.read_passages``), written the
  other way round from the page ("26 November 1969" on the page);
- ``rounded number``: "63 films" -> "more than 60 films".

Every choice is seeded by (seed, topic, fact, form): the same facts and pages give the same
pairs. A restated full date is the page's, but it may belong to another event of that year
in the same sentence: a hand check of a sample says how often.

Example:
    >>> fact = SourceFact("Ann Lee", "Ann Lee moved to film in 1969.")
    >>> [p.changed for p in make_true_forms([fact], {"Ann Lee": ""}, forms=("decade",))]
    ['Ann Lee moved to film in the late 1960s.']
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import date

from factscore_local.labels.counterfactual import Counterfactual, SourceFact
from factscore_local.pipeline.signals.slot_values import numbers, times
from factscore_local.pipeline.signals.slots import PassageSlots, fact_terms, read_passages

FORMS = ("decade", "century", "range", "approximation", "full date", "rounded number")
_IN_YEAR = re.compile(r"\b([Ii]n) ((?:1[5-9]|20)[0-9]{2})(?![\d,.]\d|\d|s\b|['’]s)")
# A count of things: digits before a plural noun ("183 touchdowns", "32 Premier League
# goals"), not a span of time, an age, a share, nor a piece of a name ("29 Productions").
_COUNT = re.compile(
    r"(?<!age of )(?<!aged )(?<!number )(?<![\w.,$£€'’/])(\d{2,3})"
    r"(?=\s+(?:[A-Z][\w'-]*\s+){0,3}(?!(?:days|weeks|months|years|hours|minutes)\b)[a-z]+s\b)"
)
_ORDINAL = {1: "st", 2: "nd", 3: "rd"}
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
                "September", "October", "November", "December")  # fmt: skip


def _century(year: int) -> str:
    n = year // 100 + 1
    suffix = "th" if 10 <= n % 100 <= 20 else _ORDINAL.get(n % 10, "th")
    return f"{n}{suffix} century"


def _decade(year: int, rng: random.Random) -> str:
    """The decade, with its part when the year falls clearly in one ("late" for 7 to 9)."""
    decade = f"{year // 10 * 10}s"
    digit = year % 10
    part = "early " if digit <= 2 else "late " if digit >= 7 else "mid-" if digit in (4, 5) else ""
    return f"the {part if rng.random() < 0.5 else ''}{decade}"


def _century_form(year: int, rng: random.Random) -> str:
    into = year % 100
    part = "early " if into <= 30 else "late " if into >= 70 else ""
    return f"the {part if rng.random() < 0.5 else ''}{_century(year)}"


def _full_date(year: int, fact: str, topic: str, page: str) -> str | None:
    """The page's day in ``year`` in a sentence or clause with all of the fact's terms
    (one with only some of them is often another event of that year), written in the other
    order ("26 November 1942" -> "November 26, 1942"), or None."""
    terms = fact_terms(fact, topic)
    if not terms:
        return None
    for sentence in _read(page).sentences:
        if not terms <= sentence.words:
            continue
        for value in sentence.values["year"]:
            when = date.fromordinal(int(value.low))
            if value.low == value.high and when.year == year:
                month = _MONTH_NAMES[when.month - 1]
                if value.text[:1].isdigit():
                    return f"{month} {when.day}, {when.year}"
                return f"{when.day} {month} {when.year}"
    return None


@functools.lru_cache(maxsize=16)
def _read(page: str) -> PassageSlots:
    return read_passages([page])


def _year_form(form: str, year: int, rng: random.Random, fact: SourceFact, page: str) -> str | None:
    """What "in YEAR" becomes in ``form`` (None where the page gives no such value)."""
    if form == "decade":
        return f"in {_decade(year, rng)}"
    if form == "century":
        return f"in {_century_form(year, rng)}"
    if form == "range":
        before, after = rng.choice(((1, 1), (1, 2), (2, 1), (2, 2)))
        return f"between {year - before} and {year + after}"
    if form == "approximation":
        return rng.choice(("around", "circa", "in about")) + f" {year}"
    if form == "full date":
        day = _full_date(year, fact.text, fact.topic, page)
        return f"on {day}" if day else None
    raise ValueError(f"unknown form {form!r}")


def _true_form(fact: SourceFact, form: str, page: str, rng: random.Random) -> Counterfactual | None:
    text = fact.text
    if form == "rounded number":  # a plain count of 20 or more, not already round
        plain = {v.start for v in numbers(text) if v.low == v.high and v.text.isdigit()}
        counts = [m for m in _COUNT.finditer(text) if m.start() in plain and m.start() > 0
                  and int(m.group(1)) >= 20 and int(m.group(1)) % 10]  # fmt: skip
        if not counts:
            return None
        m = rng.choice(counts)
        return Counterfactual(fact, form, m.start(), m.end(), m.group(),
                              f"more than {int(m.group()) // 10 * 10}")  # fmt: skip
    slots = [m for m in _IN_YEAR.finditer(text)
             if any(v.text == m.group(2) for v in times(text))]  # fmt: skip
    if not slots:
        return None
    m = rng.choice(slots)
    new = _year_form(form, int(m.group(2)), rng, fact, page)
    if new is None:
        return None
    if m.group(1) == "In":
        new = new[:1].upper() + new[1:]
    return Counterfactual(fact, form, m.start(), m.end(), m.group(), new)


def make_true_forms(
    facts: Iterable[SourceFact],
    pages: Mapping[str, str],
    seed: int = 0,
    forms: Sequence[str] = FORMS,
) -> list[Counterfactual]:
    """At most one restated form per fact and form.

    Args:
        facts: supported facts; a fact whose topic has no page in ``pages`` is skipped.
        pages: {topic: the page's text}: where a full date is read from.
        seed: the draw (each fact and form from its own generator seeded with it).
        forms: which forms to make (``FORMS``).

    Returns:
        The pairs as ``Counterfactual`` records (``kind`` is the form), in the order of the
        facts, then of ``forms``.

    Raises:
        ValueError: an unknown form.
    """
    unknown = [f for f in forms if f not in FORMS]
    if unknown:
        raise ValueError(f"unknown true form {unknown[0]!r}; known: {', '.join(FORMS)}")
    out = []
    for fact in facts:
        if fact.topic not in pages:
            continue
        for form in forms:
            rng = random.Random(f"{seed}|{fact.topic}|{fact.text}|{form}")
            pair = _true_form(fact, form, pages[fact.topic], rng)
            if pair is not None:
                out.append(pair)
    return out
