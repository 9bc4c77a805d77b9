"""A slot check without the LM: are a fact's times, numbers, nationalities and occupations
given by its passages in the fact's own role, or do the passages give that role another
value?

The lexical coverage signal counts a fact's words found in its passages, wherever they are;
it cannot tell that "Canadian" comes from the Canadian Open while the player is American.
This check reads each value of a fact with its extent (``slot_values.py``: "the late 1960s"
is 1965 to 1969, "November 26, 1942" one day whose 26 is no number, "about 1950" a few
years either side) and in its role: the passage clauses that share the fact's own terms
(its content words beyond the topic's name and its values). A value is

- *confirmed* where a clause with the fact's terms gives a value that meets it;
- in *conflict* where the passages give it nowhere, while they give other values of its
  type, none in a clause with the fact's terms (or one with all of them: the fact's own
  statement with another value, a season's count aside for a fact of no period), and
  against the roles the page gives its values
  (``slot_roles.py``: the topic's life dates and age, a titled work's years, the lead's
  nationality), which decide first;
- in *weak conflict* (``WEAK``) where a clause with some of the fact's terms gives another
  value while the passages give the fact's nowhere or only away from them: on the dev facts
  the annotators labeled, that is often another event of the same kind (another season's
  count, another album's year) while the fact's own is missing from its passages, so the
  rules weigh it (the ``other`` flag) and do not veto on it.

A demonym directly before a capitalised word is part of a name ("the Canadian Open", "the
British Army"), not a nationality, in a fact as in its passages. ``slot_flags`` turns the
verdicts into the flags a fitted rule weighs and vetoes with (``declarations/verifiers.py``);
``scripts.bench_counterfactual`` and ``scripts.bench_true_forms`` measure it.

Example:
    >>> slot_check("He was born in 1885.", ["Einstein was born in Ulm in 1879."])
    'conflict'
    >>> slot_check("He was born in the 1870s.", ["Einstein was born in Ulm in 1879."])
    'confirmed'
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from factscore_local.declarations.features import SLOT_CODES
from factscore_local.pipeline.signals.lexical import content_words, stem
from factscore_local.pipeline.signals.place_frames import (
    SentenceFrames,
    place_frame_verdict,
    sentence_frames,
)
from factscore_local.pipeline.signals.slot_intervals import Value, stated_in
from factscore_local.pipeline.signals.slot_numbers import PERIOD_WORDS, a_total_of
from factscore_local.pipeline.signals.slot_roles import (
    SENTENCE_END,
    UNDATED,
    role_verdict,
)
from factscore_local.pipeline.signals.slot_values import read_values
from factscore_local.pipeline.signals.vocabulary import NATIONALITIES, OCCUPATIONS

# A conflict with the role the page gives a value (the topic's life dates, a work's years,
# the lead's nationality): a verdict of its own, stronger than a value found elsewhere.
CONTRADICTED = "contradicted"
# Another value in the value's role, where the passages may lack the fact's own event: a
# conflict the rules weigh (the ``other`` flag), not one they veto on.
WEAK = "weak conflict"
_OCCUPATION_WORDS = [w for group in OCCUPATIONS for w in group]
CONTEXT_WORDS = 2  # content words a sentence shares with the fact to judge its values
# A sentence confirms a value when it shares at most this many words fewer with the fact
# than the sentence sharing the most (that states values of the slot's type).
CONTEXT_SLACK = 2
# Where a sentence's clauses part: a semicolon, a dash between spaces, or a comma before a
# word that opens another clause ("..., and in 2001 he moved", "..., becoming a citizen").
_CLAUSE_END = re.compile(
    r"\s*;\s+|\s+[–—]\s+|,\s+(?=(?:and|but|while|whereas|where|when|which|who|whom|after|"
    r"before|although|though|then|until|later|becoming|including|making|earning|winning)\b)"
)
CLAUSE_WORDS = 2  # a clause with fewer content words of its own joins the next one


def _listed(values: Sequence[str], text: str, case: bool, in_names: bool = True) -> set[str]:
    """The listed values found in ``text``; ``in_names=False`` skips an occurrence directly
    followed by a capitalised word (part of a name)."""
    flags = 0 if case else re.IGNORECASE
    after = "" if in_names else r"(?!\s+[A-Z])"
    low = text.lower()  # most values are absent: a substring test skips their regex
    return {v.lower() for v in values if v.lower() in low
            and re.search(rf"(?<![\w-]){re.escape(v)}(?![\w-]){after}", text, flags)}  # fmt: skip


def slots(text: str) -> dict[str, frozenset]:
    """The slot values of a text by type: times (``"year"``: years, decades, centuries,
    ranges, dates, as ``slot_intervals.Value`` intervals), numbers (not years, not the days
    of dates; digits or words up to twelve, with their scale and unit), nationalities and
    occupations (lowercased, from the counterfactual probe's lists).

    Example:
        >>> found = slots("An actor born on 3 May 1950, with three children and 2,500 acres.")
        >>> sorted(v.text for v in found["year"]), sorted(v.text for v in found["number"])
        (['3 May 1950'], ['2,500 acres', 'three'])
    """
    values = read_values(text)
    return {
        "year": frozenset(v for v in values if v.kind == "time"),
        "number": frozenset(v for v in values if v.kind == "number"),
        "nationality": frozenset(_listed(NATIONALITIES, text, case=True, in_names=False)),
        "occupation": frozenset(_listed(_OCCUPATION_WORDS, text, case=False)),
    }


def value_text(value: Value | str) -> str:
    """A slot value as written."""
    return value.text if isinstance(value, Value) else value


def stated(value: Value | str, found: frozenset) -> bool:
    """Whether ``found`` (values of the slot's type) states ``value``: an interval that
    meets it (a span by its two ends: ``slot_intervals.stated_in``), or the same word."""
    return stated_in(value, found) if isinstance(value, Value) else value in found


@dataclass(frozen=True)
class Sentence:
    """A passage sentence as the slot check reads it: its text, its content words (a
    plural as its singular) and its slot values."""

    text: str
    words: frozenset[str]
    values: dict[str, frozenset]
    # the clause's whole sentence puts its values in a period of their own (a year, a
    # season): "In 1981, when he threw for 3,195 yards", "Through the 2016 season, ..."
    scoped: bool = False


@dataclass(frozen=True)
class PassageSlots:
    """A fact's passages as the slot check reads them (once, for every fact that shares
    them): the slot values of all of them, and sentence by sentence."""

    found: dict[str, frozenset]
    sentences: tuple[Sentence, ...] = ()
    texts: tuple[str, ...] = ()  # the passages as read, for the roles of their values

    @functools.cached_property
    def frames(self) -> SentenceFrames:
        """Their sentences' place frames, read at the first fact that has one."""
        return sentence_frames(self.texts)


def clauses(sentence: str) -> list[str]:
    """The clauses of a sentence, where a value is read with the terms beside it ("He won
    the award in 1995, and in 2001 he moved to Paris": 2001 is no year of the award). A
    clause of fewer than ``CLAUSE_WORDS`` content words beside its values ("In 1990, after
    ...") joins the next.

    Example:
        >>> clauses("He won the award in 1995, and in 2001 he moved to Paris.")
        ['He won the award in 1995', 'and in 2001 he moved to Paris.']
    """
    parts, held = [], ""
    for part in _split_outside_parentheses(sentence):
        part = f"{held} {part}".strip() if held else part
        values = " ".join(value_text(v) for v in read_values(part))
        if len(content_words(part) - content_words(values)) < CLAUSE_WORDS:
            held = part
            continue
        parts.append(part)
        held = ""
    if held:
        parts.append(held) if not parts else parts.append(parts.pop() + " " + held)
    return parts


def _split_outside_parentheses(sentence: str) -> list[str]:
    """The sentence cut at its clause ends, none inside a parenthesis ("(1879 – 1955)")."""
    out, start = [], 0
    for m in _CLAUSE_END.finditer(sentence):
        if sentence.count("(", 0, m.start()) > sentence.count(")", 0, m.start()):
            continue
        out.append(sentence[start : m.start()])
        start = m.end()
    return [*out, sentence[start:]]


def read_passages(texts: Sequence[str]) -> PassageSlots:
    """The slots of passage texts, clause by clause (``clauses``) and (their union)
    together."""
    sentences: list[Sentence] = []
    for part in (p for text in texts for p in SENTENCE_END.split(text) if p.strip()):
        read = [(clause, slots(clause)) for clause in clauses(part)]
        # the sentence gives its counts for a period: a time in any clause, or a season
        periodic = bool(PERIOD_WORDS.search(part)) or any(v["year"] for _, v in read)
        sentences += [Sentence(clause, frozenset(_stems(content_words(clause))), values, periodic)
                      for clause, values in read]  # fmt: skip
    sentences = tuple(sentences)
    found = {kind: frozenset().union(*(s.values[kind] for s in sentences)) for kind in slots("")}
    return PassageSlots(found, sentences, tuple(texts))


def _stems(words: set[str]) -> set[str]:
    """Words without a plural "s", so that "titles" and "title" are one context word."""
    return {stem(w) for w in words}


def fact_terms(fact: str, topic: str = "") -> set[str]:
    """The fact's own terms: its content words beyond the topic's name and its slot
    values (a plural as its singular), which place a value in a sentence."""
    own = slots(fact)
    slot_words = set().union(*(content_words(value_text(v)) for vs in own.values() for v in vs))
    words = content_words(fact) - content_words(topic) - slot_words
    return _stems({w for w in words if not w.isdigit() and len(w) > 1})  # not "U.S."'s letters


@dataclass(frozen=True)
class Placed:
    """Where the passages place a value of the fact: ``verdict`` ("confirmed": a sentence
    with the fact's terms gives it; "conflict": the sentences with most of its terms give
    only other values of its type; None: neither), and the sentence sharing the most terms
    among those that give values of its type (``role``, None when none shares one)."""

    verdict: str | None
    role: Sentence | None = None
    shared: frozenset[str] = frozenset()


def place(value: Value | str, kind: str, terms: set[str], read: PassageSlots) -> Placed:
    """Whether a sentence that shares the fact's terms gives ``value`` (``Placed``)."""
    scored = [(len(terms & s.words), s) for s in read.sentences if s.values[kind]]
    scored = [(n, s) for n, s in scored if n]
    if not scored:
        return Placed(None)
    best = max(n for n, _ in scored)
    role = next(s for n, s in scored if n == best)
    shared = frozenset(terms & role.words)
    if any(stated(value, s.values[kind]) for n, s in scored if n >= best - CONTEXT_SLACK):
        return Placed("confirmed", role, shared)
    if best < min(CONTEXT_WORDS, len(terms)):
        return Placed(None, role, shared)  # one shared word ("born", "film") is no role
    return Placed("conflict", role, shared)


def value_verdict(
    value: Value | str, kind: str, terms: set[str], read: PassageSlots, periodless: str = ""
) -> str:
    """How one value of a fact fares in its passages (``periodless``: the fact's text,
    where it gives no year, for its counts to be weighed as totals):

    - ``"conflict"``: they state it nowhere, while they state other values of its type,
      and no clause with the fact's terms gives one (or one gives them all: the fact's
      own statement with another value, unless that is a count of one period well below
      the fact's, which gives no period: a season's count is no career's);
    - ``WEAK``: another value stands in its role, a clause that shares some of the fact's
      terms, and the passages state the fact's value nowhere or only away from it; or a
      measure or a zero they do not state (heights and weights are rarely in the text);
    - ``"confirmed"``: a clause with the fact's terms gives it (or the passages anywhere,
      for a fact with no terms of its own);
    - ``"unknown"``: none of these (the passages give no value of its type, or give the
      fact's value only where none of its terms stand).

    On the dev facts the annotators labeled, the first is rarely a supported fact; the
    second often is (another event of the same kind, while the fact's own is not among its
    passages), so the rules veto on the first and weigh the second."""
    found = read.found[kind]
    placed = place(value, kind, terms, read) if terms else Placed(None)
    if not stated(value, found):
        if not found:
            return "unknown"
        if isinstance(value, Value) and (value.dimension or value.high == 0):
            return WEAK
        if placed.role is None:
            return "conflict"
        own_statement = len(terms) >= CONTEXT_WORDS and placed.shared == terms
        role = placed.role
        total = (periodless and kind == "number" and role.scoped and isinstance(value, Value)
                 and a_total_of(value, periodless, role.values[kind], role.text))  # fmt: skip
        if own_statement and not total:
            return "conflict"
        return WEAK
    if not terms:
        return "confirmed"
    return {"conflict": WEAK}.get(placed.verdict, placed.verdict) or "unknown"


def slot_conflicts(
    fact: str, passages: Sequence[str] | PassageSlots, topic: str = ""
) -> dict[str, str]:
    """Each slot type of the fact and how it fares: ``"conflict"`` (a value of it does:
    ``value_verdict``), ``CONTRADICTED`` (against the role the page gives values of its
    type: ``slot_roles.py``), ``"confirmed"`` (each of its values) or ``"unknown"``. A
    time or a number is an interval (``slot_values.py``): a decade, a range, a date or an
    approximation is stated by a value it meets. A place is judged only where the passages
    put another place in the fact's frame (``place_frames.py``): ``"conflict"`` under
    ``"place"``. ``topic``: its name's words are not the fact's terms (every sentence has
    them)."""
    read = passages if isinstance(passages, PassageSlots) else read_passages(passages)
    terms = fact_terms(fact, topic)
    verdicts = {}
    values_of = slots(fact)
    periodless = "" if values_of["year"] else fact
    for kind, values in values_of.items():
        if not values:
            continue
        each = {value_verdict(v, kind, terms, read, periodless) for v in values}
        verdict = next(v for v in ("conflict", WEAK, "unknown", "confirmed") if v in each)
        role = role_verdict(fact, kind, values, read.texts, topic)
        if role == UNDATED:  # the page's other years are no evidence against it
            role = "unknown" if verdict == "conflict" else None
        verdicts[kind] = {"conflict": CONTRADICTED}.get(role, role) or verdict
    if place_frame_verdict(fact, lambda: read.frames) == "conflict":
        verdicts["place"] = "conflict"
    return verdicts


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
    if CONTRADICTED in verdicts.values() or WEAK in verdicts.values():
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
    named = {"number": verdicts.get("number") in ("conflict", CONTRADICTED),
             "year": verdicts.get("year") in ("conflict", CONTRADICTED),
             "nationality": verdicts.get("nationality") == CONTRADICTED,
             "place": verdicts.get("place") == "conflict"}  # fmt: skip
    other = (
        any(verdict == "conflict" for kind, verdict in verdicts.items() if kind not in named)
        or verdicts.get("nationality") == "conflict"
        or WEAK in verdicts.values()
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
