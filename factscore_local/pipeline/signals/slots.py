"""A slot check without the LM: are a fact's years, numbers, nationalities, occupations and
names found in its passages, or do the passages give another value of the same type?

The lexical coverage signal counts a fact's words found in its passages, wherever they are;
it cannot tell that "Canadian" comes from the Canadian Open while the player is American.
This check looks at the slots of a fact one by one: a slot whose value its passages state is
confirmed; a slot whose value they do not state, while they state other values of its type
(other years, other nationalities), conflicts. So does a value the passages state only
outside the sentences most like the fact, while those sentences state another (a birth
year against a year the page gives another event). A demonym directly before a capitalised
word is part of a name ("the Canadian Open", "the British Army"), not a nationality, in a
fact as in its passages. ``slot_signal`` turns the verdict into the ``slots`` signal a
fitted rule weighs and vetoes with (``verifiers.py``); ``scripts.bench_counterfactual``
measures it.

Example:
    >>> slot_check("He was born in 1885.", ["Einstein was born on 14 March 1879 in Ulm."])
    'conflict'
    >>> slot_check("He was born in 1879.", ["Einstein was born on 14 March 1879 in Ulm."])
    'confirmed'
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from factscore_local.pipeline.decision.features import SLOT_CODES
from factscore_local.pipeline.signals.lexical import content_words
from factscore_local.pipeline.signals.place_frames import (
    SentenceFrames,
    place_frame_verdict,
    sentence_frames,
)
from factscore_local.pipeline.signals.slot_roles import (
    SENTENCE_END,
    YEAR,
    life_date_verdict,
    nationality_verdict,
    page_roles,
    work_year_verdict,
)
from factscore_local.pipeline.signals.vocabulary import NATIONALITIES, NUMBER_WORDS, OCCUPATIONS

# A number in digits, with thousands groups and a decimal part ("27,000", "3.5").
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)?(?!\w|[.,]\d)")
# Words that make a number an approximation: "over 60 films" is true of 63 of them.
_ROUGHLY = re.compile(
    r"\b(?:over|more than|nearly|almost|about|around|approximately|roughly|some|at least|"
    r"up to|close to|upwards of|in excess of|estimated)\s+$",
    re.IGNORECASE,
)
# A conflict with the role the page gives a value (the topic's life dates, a work's years,
# the lead's nationality): a verdict of its own, stronger than a value found elsewhere.
CONTRADICTED = "contradicted"
ROUGH_TOLERANCE = 0.25  # an approximate number matches a value this close (relative)
_OCCUPATION_WORDS = [w for group in OCCUPATIONS for w in group]
CONTEXT_WORDS = 2  # content words a sentence shares with the fact to judge its values
# A sentence confirms a value when it shares at most this many words fewer with the fact
# than the sentence sharing the most (that states values of the slot's type).
CONTEXT_SLACK = 2


def _words(pattern: str, text: str, flags: int = 0) -> set[str]:
    return {m.group().lower() for m in re.finditer(pattern, text, flags)}


def _listed(values: Sequence[str], text: str, case: bool, in_names: bool = True) -> set[str]:
    """The listed values found in ``text``; ``in_names=False`` skips an occurrence directly
    followed by a capitalised word (part of a name)."""
    flags = 0 if case else re.IGNORECASE
    after = "" if in_names else r"(?!\s+[A-Z])"
    low = text.lower()  # most values are absent: a substring test skips their regex
    return {v.lower() for v in values if v.lower() in low
            and re.search(rf"(?<![\w-]){re.escape(v)}(?![\w-]){after}", text, flags)}  # fmt: skip


def slots(text: str) -> dict[str, set[str]]:
    """The slot values of a text by type: years, numbers (not years; digits or words up to
    twelve), nationalities and occupations (from the counterfactual probe's lists).

    Example:
        >>> sorted(slots("An actor born in 1950, with three children and 2,500 acres.")["number"])
        ['2500', '3']
    """
    years = _words(YEAR.pattern, text)
    numbers = {_plain(n) for n in _words(_NUMBER.pattern, text)} - years
    number_words = _words(rf"\b(?:{'|'.join(NUMBER_WORDS[2:])})\b", text, re.IGNORECASE)
    numbers |= {str(NUMBER_WORDS.index(w)) for w in number_words}
    return {
        "year": years,
        "number": numbers,
        "nationality": _listed(NATIONALITIES, text, case=True, in_names=False),
        "occupation": _listed(_OCCUPATION_WORDS, text, case=False),
    }


def _plain(number: str) -> str:
    """A number without thousands commas or a trailing ".0" ("27,000" -> "27000")."""
    plain = number.replace(",", "")
    return plain[: -len(".0")] if plain.endswith(".0") else plain


def _approximate(fact: str) -> set[str]:
    """The fact's numbers that it gives as approximations ("over 60", "nearly 4,000")."""
    return {_plain(m.group()) for m in _NUMBER.finditer(fact) if _ROUGHLY.search(fact[: m.start()])}


def _near(value: str, found: set[str]) -> bool:
    target = float(value)
    return any(abs(float(v) - target) <= ROUGH_TOLERANCE * target for v in found)


@dataclass(frozen=True)
class PassageSlots:
    """A fact's passages as the slot check reads them (once, for every fact that shares
    them): the slot values of all of them, and sentence by sentence with the sentence's
    content words."""

    found: dict[str, set[str]]
    sentences: tuple[tuple[frozenset[str], dict[str, set[str]]], ...] = ()
    texts: tuple[str, ...] = ()  # the passages as read, for the roles of their values

    @functools.cached_property
    def frames(self) -> SentenceFrames:
        """Their sentences' place frames, read at the first fact that has one."""
        return sentence_frames(self.texts)


def read_passages(texts: Sequence[str]) -> PassageSlots:
    """The slots of passage texts, sentence by sentence and (their union) together."""
    parts = [part for text in texts for part in SENTENCE_END.split(text) if part.strip()]
    sentences = tuple((frozenset(_stems(content_words(part))), slots(part)) for part in parts)
    found = {kind: set() for kind in slots("")}
    for _, values in sentences:
        for kind, found_here in values.items():
            found[kind] |= found_here
    return PassageSlots(found, sentences, tuple(texts))


def _stems(words: set[str]) -> set[str]:
    """Words without a plural "s", so that "titles" and "title" are one context word."""
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words}


def _states(values: set[str], found: set[str], kind: str, rough: set[str]) -> bool:
    if kind == "number":
        return all(v in found or (v in rough and _near(v, found)) for v in values)
    return values <= found


def _in_context(fact_words: set[str], kind: str, values: set[str], rough: set[str],
                sentences) -> str | None:  # fmt: skip
    """The verdict of the sentences that share content words with the fact: "confirmed"
    when one of them that shares nearly as many as the closest states the slot's values;
    "conflict" when the closest state other values of its type ("born 5 June 1954"
    against "born in 2009", though the page names 2009 elsewhere); else None."""
    related = [(len(fact_words & words), found[kind]) for words, found in sentences
               if fact_words & words]  # fmt: skip
    if not related:
        return None
    best = max((n for n, found in related if found), default=0)
    close = (found for n, found in related if n >= best - CONTEXT_SLACK)
    if any(_states(values, found, kind, rough) for found in close):
        return "confirmed"
    if best < min(CONTEXT_WORDS, len(fact_words)):
        return None  # one shared word ("born", "film") is no context to judge a value by
    return "conflict" if any(found for n, found in related if n == best) else None


def slot_conflicts(
    fact: str, passages: Sequence[str] | PassageSlots, topic: str = ""
) -> dict[str, str]:
    """Each slot type of the fact and how it fares: ``"conflict"`` (a value the passages do
    not state while they state others of its type, or state only in sentences unlike the
    fact's while the sentences most like it state another), ``CONTRADICTED`` (against the
    role the page gives values of its type: ``slot_roles.py``), ``"confirmed"`` or
    ``"unknown"``. An approximate number ("over 60 films") is confirmed by a value within a
    quarter of it. A place is judged only where the passages put another place in the
    fact's frame (``place_frames.py``): ``"conflict"`` under ``"place"``.
    ``topic``: its name's words are not context (every sentence has them)."""
    read = passages if isinstance(passages, PassageSlots) else read_passages(passages)
    own = slots(fact)
    rough = _approximate(fact)
    slot_words = {w for values in own.values() for v in values for w in v.split()}
    fact_words = content_words(fact) - content_words(topic) - slot_words
    fact_words = _stems({w for w in fact_words if not w.isdigit()})
    verdicts = {}
    for kind, values in own.items():
        if not values:
            continue
        found = read.found[kind]
        if _states(values, found, kind, rough):
            verdict = "confirmed"
        else:
            verdict = "conflict" if found else "unknown"
        context = verdict != "conflict" and read.sentences and fact_words
        if context and _in_context(fact_words, kind, values, rough, read.sentences) == "conflict":
            verdict = "conflict"
        verdicts[kind] = _role_verdict(fact, kind, values, read.texts, topic) or verdict
    if place_frame_verdict(fact, lambda: read.frames) == "conflict":
        verdicts["place"] = "conflict"
    return verdicts


def _role_verdict(fact: str, kind: str, values: set[str], texts, topic: str) -> str | None:
    """How a value fares against the role the passages give values of its kind:
    ``CONTRADICTED`` (by any role), "confirmed", or None where they show none
    (``slot_roles.py``)."""
    if kind == "year":
        roles = page_roles(texts, topic)
        verdicts = (life_date_verdict(fact, values, roles), work_year_verdict(fact, values, roles))
    elif kind == "nationality":
        verdicts = (nationality_verdict(fact, page_roles(texts, topic)),)
    else:
        return None
    if "conflict" in verdicts:
        return CONTRADICTED
    return "confirmed" if "confirmed" in verdicts else None


def slot_check(fact: str, passages: Sequence[str] | PassageSlots, topic: str = "") -> str:
    """How a fact's slots fare in its passages.

    Args:
        fact: the fact.
        passages: the texts of its evidence, or ``read_passages`` of them (read once for
            the facts that share them).
        topic: the bio's topic (its name's words are no context).

    Returns:
        ``"conflict"`` when a slot's value is not in the passages while they hold another
        value of its type; else ``"confirmed"`` when every slot is found; else
        ``"unknown"`` (no slots, or a slot whose type the passages do not mention).
    """
    return _overall(slot_conflicts(fact, passages, topic))


def _overall(verdicts: dict[str, str]) -> str:
    if CONTRADICTED in verdicts.values():
        return "conflict"
    for verdict in ("conflict", "unknown", "confirmed"):
        if verdict in verdicts.values():
            return verdict
    return "unknown"


SLOT_VALUES = {"conflict": -1.0, "unknown": 0.0, "confirmed": 1.0}
# The one-number summary of the slot check that earlier releases recorded as ``slots`` (and
# that Factcheck-Bench's pair features still read): the first conflict in this order.
NUMBER_CONFLICT = SLOT_CODES["number"]  # a number its passages contradict
YEAR_CONFLICT = SLOT_CODES["year"]  # ... a year (and no number)
NATIONALITY_CONFLICT = SLOT_CODES["nationality"]  # ... the topic's against its lead's
PLACE_CONFLICT = SLOT_CODES["place"]  # ... a place replaced in its frame (and none above)
SLOT_FLAGS = tuple(SLOT_CODES)  # the flags, in features.SLOT_KEYS order


def slot_flags(
    fact: str, passages: Sequence[str] | PassageSlots, topic: str = ""
) -> dict[str, float]:
    """The slot check as independent flags (1 or 0): ``number``, ``year``, ``nationality``
    (the topic's, against the lead sentence), ``place`` (replaced in the fact's frame),
    ``other`` (any other conflicting slot) and ``confirmed`` (every slot stated). A fact can
    raise several: a contradicted nationality does not hide a conflicting place.

    Example:
        >>> flags = slot_flags("He won 12 titles in 1990.", ["He won 8 titles in 1985."])
        >>> [kind for kind, on in flags.items() if on]
        ['number', 'year']
    """
    verdicts = slot_conflicts(fact, passages, topic)
    named = {"number": verdicts.get("number") == "conflict",
             "year": verdicts.get("year") in ("conflict", CONTRADICTED),
             "nationality": verdicts.get("nationality") == CONTRADICTED,
             "place": verdicts.get("place") == "conflict"}  # fmt: skip
    other = (
        any(verdict == "conflict" for kind, verdict in verdicts.items() if kind not in named)
        or verdicts.get("nationality") == "conflict"
    )
    confirmed = _overall(verdicts) == "confirmed"
    return {kind: float(on) for kind, on in (*named.items(), ("other", other),
                                              ("confirmed", confirmed))}  # fmt: skip


def slot_code(flags: dict[str, float]) -> float:
    """The one-number summary of ``slot_flags``: the first flag raised of number (-2),
    year (-3), nationality (-4), place (-5), another conflict (-1), confirmed (1); else 0."""
    return next((code for kind, code in SLOT_CODES.items() if flags.get(kind, 0) >= 1), 0.0)


def slot_signal(fact: str, passages: Sequence[str] | PassageSlots, topic: str = "") -> float:
    """The slot check summed up in one number (``slot_code`` of ``slot_flags``): -2 when a
    number (an amount or a count, not a year) conflicts, else -3 when a year does, else -4
    when the nationality the fact gives the topic is not its lead sentence's, else -5 when
    the passages put another place in the fact's frame, -1 for another conflicting slot, 1
    when every slot is confirmed, 0 otherwise. Rules read the flags themselves; this
    summary is what Factcheck-Bench's pair features read.

    Example:
        >>> slot_signal("Andre Agassi is a Canadian tennis player.",
        ...             ["Agassi, an American tennis player, won the Canadian Open."])
        -1.0
        >>> slot_signal("He won 12 titles.", ["He won 8 titles in 3 years."])
        -2.0
    """
    return slot_code(slot_flags(fact, passages, topic))
