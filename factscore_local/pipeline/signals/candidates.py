"""Candidates for a fact's slots: the fact with one of its values replaced by another value
of the same kind that the page states near the fact's own terms (issue 74, item 2).

The slot check reads values by their surface and their clause; where the page states the
fact's value in one role and another value in the role the fact names, only reading can
tell which one the fact's terms go with. The LM does that reading: each candidate is
judged as a fact of its own, on the fact's evidence, and the ``candidates`` signal is how
far the best candidate's margin exceeds the fact's (0 when none does). A fact whose year
was swapped for another year of the page meets its true year among its candidates, and the
LM usually believes that one more; a true fact meets the page's other years, which it
usually beats.

The kinds: times (a year is replaced by a year, any other time by the other value as
written), numbers (of the same dimension), nationalities, and the places, people and works
of ``rivals.py`` (spaCy's entities). Values that meet the fact's own (``slot_intervals``)
are no candidates: "1969" is no rival of "the late 1960s".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from factscore_local.pipeline.signals.lexical import content_words
from factscore_local.pipeline.signals.rivals import (
    Rival,
    closest_sentences,
    rival_facts,
    sentences_of,
)
from factscore_local.pipeline.signals.slot_intervals import Value, first_year, last_year
from factscore_local.pipeline.signals.slot_roles import DEMONYM_WORD
from factscore_local.pipeline.signals.slot_values import read_values

VALUE_LIMIT = 3  # candidates of times, numbers and nationalities per fact, at most
NAME_LIMIT = 3  # of places, people and works (``rivals.py``)
_BARE_YEAR = re.compile(r"\d{4}")


class Slot(NamedTuple):
    """A value of a fact: its kind (time, number, nationality), where it stands, its text
    and, for a time or number, its interval."""

    kind: str
    start: int
    end: int
    text: str
    value: Value | None


def value_slots(text: str) -> list[Slot]:
    """The times, numbers and nationalities of ``text``, in the order they stand.

    Example:
        >>> [(s.kind, s.text) for s in value_slots("An American actor born in 1942, with 3 sons.")]
        [('nationality', 'American'), ('time', '1942'), ('number', '3')]
    """
    slots = [Slot(v.kind, v.start, v.end, v.text, v) for v in read_values(text)]
    slots += [Slot("nationality", m.start(), m.end(), m.group(), None)
              for m in DEMONYM_WORD.finditer(text)]  # fmt: skip
    return sorted(slots, key=lambda s: s.start)


def _same(slot: Slot, other: Slot) -> bool:
    """Whether ``other`` can be the slot's own value (no candidate then)."""
    if slot.value is None or other.value is None:
        return slot.text.lower() == other.text.lower()
    return slot.value.meets(other.value) or other.value.meets(slot.value)


def _written(slot: Slot, other: Slot) -> str | None:
    """How ``other`` replaces ``slot`` in the fact: a bare year by a year (a date or month
    of one year gives its year; a longer time none), anything else as written."""
    if slot.kind == "time" and _BARE_YEAR.fullmatch(slot.text):
        first = first_year(other.value)
        return str(first) if first == last_year(other.value) else None
    if slot.kind == "number" and slot.value.dimension != other.value.dimension:
        return None  # "6 ft" is no candidate for "3 children"
    return other.text


def _stands_in(value: str, text: str) -> bool:
    """Whether ``value`` stands in ``text`` as a whole word ("3" does not stand in "13")."""
    return re.search(rf"(?<![\w.,]){re.escape(value)}(?![\w]|[.,]\d)", text, re.I) is not None


def value_candidates(fact: str, topic: str, passages: Sequence[str],
                     limit: int = VALUE_LIMIT) -> list[Rival]:  # fmt: skip
    """The fact with one of its times, numbers or nationalities replaced by another value of
    its kind from the passages' sentences closest to the fact, closest first; values inside
    the topic's name, values that meet the fact's own and values already in the fact are
    left out.

    Example:
        >>> page = ["Lee moved to film in 1969. She retired in 1984 and died in 2001."]
        >>> [r.fact for r in value_candidates("She retired in 1969.", "Ann Lee", page)]
        ['She retired in 1984.', 'She retired in 2001.']
        >>> value_candidates("She moved to film in the late 1960s.", "Ann Lee", page[:1])
        []
    """
    name = content_words(topic)
    sentences, words = sentences_of(tuple(passages)), content_words(fact) - name
    out: list[Rival] = []
    seen: set[str] = set()
    for slot in value_slots(fact):
        if content_words(slot.text) & name:
            continue
        for sentence in closest_sentences(words - content_words(slot.text), sentences):
            for other in value_slots(sentence):
                if other.kind != slot.kind or _same(slot, other):
                    continue
                written = _written(slot, other)
                if not written or written.lower() in seen or _stands_in(written, fact):
                    continue
                seen.add(written.lower())
                replaced = fact[: slot.start] + written + fact[slot.end :]
                out.append(Rival(slot.kind, slot.text, written, replaced))
                if len(out) >= limit:
                    return out
    return out


def candidate_facts(fact: str, topic: str, passages: Sequence[str]) -> list[Rival]:
    """The candidates of every slot of the fact: its times, numbers and nationalities
    (``value_candidates``), then its places, people and works (``rivals.rival_facts``)."""
    return value_candidates(fact, topic, passages) + rival_facts(fact, topic, passages, NAME_LIMIT)
