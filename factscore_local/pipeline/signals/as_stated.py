"""A fact's loose values read as the page states them, for the LM and the lexical reads.

"Frederick Taylor died in the 1940s." is true when the page says he died in 1946, yet a
small LM judges the decade far less surely than the year, and the decade's words are not
on the page for the coverage and NP to find: on the true-forms probe (``true-forms-98``
beside ``true-forms-98-as-written``) the default rejected many such restatements of facts
it accepts as first written. The slot check already reads
the decade as the years 1940 to 1949 and finds 1946 in a clause with the fact's terms
("died"); a fact that says "some time in the 1940s" is true exactly when one such time
is, so the page's own value is a witness of it, and the fact can be judged in that form.

``as_stated`` writes each loose value of a fact (a single decade or century, a range
given as "between ... and ...", a time or number after "about", "around", "over" and
the like) as the page's value that lies within it, where a clause sharing the most of the
fact's terms and one of its event words ("released", "joined") gives one (the slot check's
role, ``slots.place``), or the topic's life date for its birth or death, or the year of a
work the fact names; the fact as written otherwise, and where those clauses give a decade,
century or range two or more years (the page does not say which the fact means). A loose
time of a year or more is written as its witness's year ("between 2009 and 2013" as 2011,
not as the page's 2 May 2011): the fact claims no day. A span ("from 1954 to 1957") states
a period, not a time within it, and is kept; so are points (a year, a date, a count),
which the page either gives or not.
Only the LM's verdict, NP and the coverage read this form, on the passages it retrieves
(``SignalContext.read_hits``); the slot check reads the fact as written, and the rows
keep it. A loose value left without a witness is no word a page writes ("the early
2010s"): the coverage counts it as one word, found where its passages state a value that
meets it (``loose_values_stated``), as a year's word is found wherever its passages write
it; whether that value is the fact's is the slot check's question, not the coverage's.

Example:
    >>> page = ["Taylor retired in 1938. He died in 1946 in Sydney."]
    >>> as_stated("Frederick Taylor died in the 1940s.", "Frederick Taylor", page)
    'Frederick Taylor died in 1946.'
    >>> as_stated("He died between 1944 and 1948.", "Frederick Taylor", page)
    'He died in 1946.'
    >>> as_stated("He died in the 1950s.", "Frederick Taylor", page)
    'He died in the 1950s.'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from factscore_local.pipeline.signals.slot_intervals import Value, first_year, last_year, stated_in
from factscore_local.pipeline.signals.slot_roles import life_event, page_roles, works_named
from factscore_local.pipeline.signals.slot_values import read_values
from factscore_local.pipeline.signals.slots import (
    CONTEXT_WORDS,
    PassageSlots,
    fact_terms,
    read_passages,
)

# Words that loosen the value after them: "around 2011", "over 60 goals", "c. 1922".
_LOOSE = re.compile(
    r"(?:\b(?:about|around|circa|approximately|roughly|nearly|almost|some|over|under|"
    r"(?:more|less|fewer) than|at least|up to|upwards of|(?:well|just) (?:over|under)|"
    r"ca\.|approx\.)|(?<![\w.])c\.)\s*$",
    re.IGNORECASE,
)
# ... of which these also open a phrase of their own before a number word: "over two seasons".
_PREPOSITION_LIKE = re.compile(r"(?:well |just )?(?:over|under|some)\b", re.I)
_DECADE_OR_CENTURY = re.compile(r"\d0s\b|['’]\d0s\b|\bcentury\b|\bthe\s+\w+ies\b", re.I)
# Two times joined ("1950s-60s", "the 1960s to the 1980s"), not a part ("mid-1960s").
_SPAN_WORDS = re.compile(r"[\ds]\s*[–—/-]\s*\S|\b(?:to|and|or|through)\b", re.I)
_BETWEEN = re.compile(r"^between\b", re.I)
# ... and a time the fact covers whole ("throughout the 1960s"): no time within it holds it.
_THROUGHOUT = re.compile(r"\b(?:throughout|all through)\s*$", re.I)
# Words after which a time needs no preposition of its own ("died in 1946", "by 1950").
_BEFORE_TIME = re.compile(
    r"\b(?:in|on|at|by|from|since|until|till|before|after|during|of|circa|c\.)\s*$", re.I
)
# ... of which these name a centre: "around 2011" is nearest 2011, "over 60" has none.
_CENTRED = re.compile(r"about|around|circa|approx|roughly|ca?\.", re.I)
_KINDS = {"time": "year", "number": "number"}  # a value's kind -> the slot check's slot


def _loose_start(fact: str, value: Value) -> int | None:
    """Where a loose value's text begins (before its loosening word), or None for a value
    that is no loose one."""
    before = _LOOSE.search(fact[: value.start])
    if before and (value.text[:1].isdigit() or not _PREPOSITION_LIKE.match(before.group())):
        return before.start()
    if value.kind != "time" or value.ends:
        return None
    if _BETWEEN.match(value.text):
        return value.start
    if _DECADE_OR_CENTURY.search(value.text) and not _SPAN_WORDS.search(value.text):
        return value.start
    return None


def _within(inner: Value, outer: Value) -> bool:
    """Whether ``inner`` is a narrower value that lies wholly within ``outer``."""
    if inner.kind != outer.kind or inner.dimension != outer.dimension or inner.ends:
        return False
    narrower = inner.high - inner.low < outer.high - outer.low
    return narrower and outer.low <= inner.low and inner.high <= outer.high


def _whole_years(value: Value) -> bool:
    """Whether a time spans a year or more (a year, a decade, "around 1999", "between 1944
    and 1948"), not a month or a day."""
    return value.high - value.low >= 364


def _witness(
    fact: str, value: Value, terms: set[str], events: set[str], read: PassageSlots, topic: str
) -> Value | None:
    """The page's value within ``value`` in its role: the topic's birth or death date for
    a fact of one (``slot_roles.life_event``), the year of a work the fact names, else in
    the clauses that share the most of the fact's terms (at least ``CONTEXT_WORDS``, or
    all of them) and one of its ``events`` words; None where none is, or where those clauses
    give a decade, century or range more than one year (the page does not say which)."""
    if value.kind == "time":
        roles = page_roles(read.texts, topic)
        life = life_event(fact, roles)
        if life is not None:
            return life if _within(life, value) else None
        works = works_named(fact, roles)  # "City of God was released in the 2000s"
        if works:
            inside = [w.span for w in works if _within(w.span, value)]
            return inside[0] if len(inside) == 1 else None
    kind = _KINDS[value.kind]
    scored = [(len(terms & s.words), s) for s in read.sentences
              if s.values[kind] and (not events or events & s.words)]  # fmt: skip
    best = max((n for n, _ in scored), default=0)
    if best < min(CONTEXT_WORDS, len(terms)) or best == 0:
        return None
    inside = [v for n, s in scored if n == best for v in s.values[kind] if _within(v, value)]
    loosening = _LOOSE.search(fact[: value.start])
    centred = loosening is not None and _CENTRED.match(loosening.group()) is not None
    if value.kind == "time" and not centred and len({first_year(v) for v in inside}) > 1:
        return None  # "called up in the 2010s": in 2010 and in 2016 alike
    middle = (value.low + value.high) / 2  # "around 2011": the page's 2011 before its 2009
    return min(inside, key=lambda v: (abs((v.low + v.high) / 2 - middle), v.text), default=None)


def _event_words(fact: str, terms: set[str]) -> set[str]:
    """The fact's terms written in lower case, its event ("released", "joined"), not the
    names ("City of God") that many clauses of a page share."""
    return terms & fact_terms(" ".join(w for w in fact.split() if w[:1].islower()))


def as_stated(fact: str, topic: str, passages: Sequence[str] | PassageSlots) -> str:
    """The fact with each loose value written as the page's value that lies within it, in
    the clause of the fact's role (see the module's docstring); the fact itself where it
    has none.

    Args:
        fact: the fact as written.
        topic: the bio's topic (its name's words are not the fact's terms).
        passages: the fact's passages, or ``slots.read_passages`` of them.
    """
    values = read_values(fact)
    if all(_loose_start(fact, v) is None for v in values):
        return fact  # most facts: no slot reading, no terms
    read = passages if isinstance(passages, PassageSlots) else read_passages(passages)
    terms, written = fact_terms(without_loose_values(fact, values)[0], topic), fact  # not "circa"
    events = _event_words(fact, terms)
    end = len(fact)
    for value in reversed(values):  # right to left: the offsets before each stay valid
        start = _loose_start(written, value)
        if start is None or value.end > end or _THROUGHOUT.search(fact[:start]):
            continue
        witness = _witness(written, value, terms, events, read, topic)
        if witness is None:
            continue
        text, before = witness.text, fact[:start]
        if value.kind == "time":
            if first_year(witness) == last_year(witness) and _whole_years(value):
                text = str(first_year(witness))  # "between 2009 and 2013": 2011, not 2 May 2011
            day = witness.low == witness.high and text == witness.text
            if not _BEFORE_TIME.search(before):
                text = ("on " if day else "in ") + text
                text = text if before.strip() else text[0].upper() + text[1:]  # "In 2008, ..."
            elif day and re.search(r"\bin\s*$", before):  # "in May 1946" -> "on 3 May 1946"
                before = re.sub(r"\bin(\s*)$", r"on\1", before)
        fact = before + text + fact[value.end :]
        end = start
    return fact


def without_loose_values(
    fact: str, values: Sequence[Value] | None = None
) -> tuple[str, list[Value]]:
    """The fact without its loose values (and their loosening words), and those values
    (``values``: ``read_values`` of the fact, when already read).

    Example:
        >>> text, loose = without_loose_values("She won the award in the early 2010s.")
        >>> text, [v.text for v in loose]
        ('She won the award in .', ['the early 2010s'])
    """
    loose = []
    for value in reversed(read_values(fact) if values is None else values):
        start = _loose_start(fact, value)
        if start is not None:
            fact = fact[:start] + fact[value.end :]
            loose.append(value)
    return fact, loose[::-1]


def loose_values_stated(fact: str, read: PassageSlots) -> tuple[str, tuple[int, int]]:
    """The fact without its loose values, and how many of them its passages state (a value
    there meets it) and how many not: the coverage's (found, not found) words for them.

    Example:
        >>> read = read_passages(["She won the award in 2012. She moved to Rome in 1995."])
        >>> loose_values_stated("She won the award in the early 2010s.", read)
        ('She won the award in .', (1, 0))
        >>> loose_values_stated("She won the award in the 1980s.", read)
        ('She won the award in .', (0, 1))
    """
    text, loose = without_loose_values(fact)
    found = sum(stated_in(value, read.found[_KINDS[value.kind]]) for value in loose)
    return text, (found, len(loose) - found)
