"""Counterfactual facts: supported facts with one slot changed to a value their page does not
state, each paired with its original.

The human labels of FActScore mix "not mentioned" with "contradicted", so a verifier can
score well on them and still accept a fact whose year or nationality is wrong. This probe
takes facts the annotators labeled supported (S) and changes one slot of each: a year
(moved by 4-7), another number, a place, a nationality, an occupation, a named person or a
work. spaCy's entities find the slots; the replacement is of the same type and does not
occur anywhere in the fact's page (a year, a nationality, a name absent from the page text),
so that the page cannot support the changed fact. Everything is seeded: the same facts,
pages and seed give the same pairs.

Example:
    >>> from factscore_local.pipeline.decomposition.decompose import load_spacy  # doctest: +SKIP
    >>> pages = {"Ann Lee": "Ann Lee (born 1950) is an English singer from Leeds."}
    >>> facts = [SourceFact("Ann Lee", "Ann Lee was born in 1950.")]
    >>> pairs = make_counterfactuals(facts, pages, load_spacy(), Pools())  # doctest: +SKIP
    >>> pairs[0].kind, pairs[0].changed  # doctest: +SKIP
    ('year', 'Ann Lee was born in 1945.')
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from factscore_local.labels.replacements import (  # re-exported: part of this API
    COUNTRIES,
    NATIONALITIES,
    NUMBER_WORDS,
    OCCUPATIONS,
    Pools,
    _choose,
    _clean_entity,
    _new_number,
    _new_year,
    build_pools,
    occurs,
)

__all__ = [
    "COUNTRIES",
    "KINDS",
    "NATIONALITIES",
    "NUMBER_WORDS",
    "OCCUPATIONS",
    "Counterfactual",
    "Pools",
    "SourceFact",
    "build_pools",
    "make_counterfactuals",
    "occurs",
    "page_texts",
    "sample",
    "supported_facts",
]

KINDS = ("year", "number", "place", "nationality", "occupation", "person", "work")

_NUMERIC_LABELS = {"CARDINAL", "QUANTITY", "MONEY", "PERCENT"}
_YEAR = re.compile(r"(?<![\d.,])(1[0-9]{3}|20[0-2][0-9])(?![\d,])")
_NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\d,])|(?<![\w.,])\d+(?![\w,]|\.\d)")
_WORD = re.compile(r"[A-Za-z][A-Za-z.'-]*")


@dataclass(frozen=True)
class SourceFact:
    """A supported fact and where it comes from.

    Attributes:
        topic: the bio's topic (its page in the index).
        text: the fact.
        subject: the LM whose bio it was taken from.
        line: the bio's line in its file (1-based).
        sentence: the bio's sentence the fact was taken from.
    """

    topic: str
    text: str
    subject: str = ""
    line: int = 0
    sentence: str = ""


@dataclass(frozen=True)
class Counterfactual:
    """An original fact and its counterfactual: ``changed`` is ``original`` with
    ``original[start:end]`` (``old``) replaced by ``new``."""

    fact: SourceFact
    kind: str
    start: int
    end: int
    old: str
    new: str

    @property
    def original(self) -> str:
        return self.fact.text

    @property
    def changed(self) -> str:
        text = self.fact.text
        return text[: self.start] + self.new + text[self.end :]

    def to_json(self) -> dict[str, Any]:
        """The pair as a JSON object (the fact's fields, the slot, both texts)."""
        return {**asdict(self.fact), "kind": self.kind, "start": self.start, "end": self.end,
                "old": self.old, "new": self.new, "changed": self.changed}  # fmt: skip


def _person_tokens(topic: str) -> set[str]:
    return {w.lower() for w in re.sub(r"\(.*?\)", "", topic).split()}


def _year_slots(fact: str, doc: Any) -> list[tuple[int, int]]:
    dates = [(e.start_char, e.end_char) for e in doc.ents if e.label_ == "DATE"]
    return [
        m.span()
        for m in _YEAR.finditer(fact)
        if any(s <= m.start() < e for s, e in dates)
        or re.search(r"\b(in|since|from|until|by|of|on|and|to)\s+$", fact[: m.start()])
    ]


def _number_slots(fact: str, doc: Any) -> list[tuple[int, int]]:
    slots = []
    for ent in doc.ents:
        if ent.label_ not in _NUMERIC_LABELS:
            continue
        span = fact[ent.start_char : ent.end_char]
        for m in _NUMBER.finditer(span):
            if not _YEAR.fullmatch(m.group()):
                slots.append((ent.start_char + m.start(), ent.start_char + m.end()))
        for m in re.finditer(rf"\b({'|'.join(NUMBER_WORDS[2:])})\b", span, re.IGNORECASE):
            slots.append((ent.start_char + m.start(), ent.start_char + m.end()))
    return slots


def _entity_slots(fact: str, doc: Any, labels: set[str], topic: str) -> list[tuple[int, int]]:
    own = _person_tokens(topic)
    slots = []
    for ent in doc.ents:
        if ent.label_ not in labels:
            continue
        value = _clean_entity(ent.text)
        start = fact.find(value, ent.start_char)
        if not value or start < 0 or value in NATIONALITIES:
            continue
        if {w.lower() for w in value.split()} & own:
            continue  # the topic's own name, or a relative sharing it
        slots.append((start, start + len(value)))
    return slots


def _word_slots(fact: str, words: Iterable[str], case: bool) -> list[tuple[int, int]]:
    flags = 0 if case else re.IGNORECASE
    slots = []
    for word in words:
        for m in re.finditer(rf"(?<![\w-]){re.escape(word)}(?![\w-])", fact, flags):
            slots.append(m.span())
    return slots


def _article(start: int, fact: str) -> int:
    """Where the slot starts when its article goes with it ("an actor" -> "a singer")."""
    m = re.search(r"(?:^|\s)(an?|An?)\s+$", fact[:start])
    return m.start(1) if m else start


def _with_article(old: str, new: str) -> str:
    if not re.match(r"an?\s", old, re.IGNORECASE):
        return new
    article = "an" if new[:1].lower() in "aeiou" else "a"
    return (article.capitalize() if old[:1].isupper() else article) + " " + new


def _counterfactual(
    fact: SourceFact,
    kind: str,
    doc: Any,
    page: str,
    pools: Pools,
    rng: random.Random,
    stated: Any = None,
) -> Counterfactual | None:
    """One counterfactual of this kind for a fact, or None when it has no such slot or no
    value the page does not state (with ``stated``, the page's ``PageValues``: no value
    the page states in another role)."""
    text = fact.text
    replace: Callable[[str], str | None]
    if kind == "year":
        slots = _year_slots(text, doc)

        def replace(old: str) -> str | None:
            return _new_year(rng, old, page, text)
    elif kind == "number":
        slots = _number_slots(text, doc)

        def replace(old: str) -> str | None:
            return _new_number(rng, old, page, text)
    elif kind == "nationality":
        slots = _word_slots(text, NATIONALITIES, case=True)

        def replace(old: str) -> str | None:
            return _choose(rng, NATIONALITIES, page, text)
    elif kind == "occupation":
        slots = [s for s in _word_slots(text, [w for g in OCCUPATIONS for w in g], case=False)
                 if re.search(r"\b(an?|as)\s+(\S+\s+){0,2}$", text[: s[0]], re.IGNORECASE)
                 and not re.match(r"('s|’s|\s+of\b)", text[s[1] :])]  # fmt: skip

        def replace(old: str) -> str | None:
            groups = [g for g in OCCUPATIONS if old.lower() not in g]
            rng.shuffle(groups)
            for group in groups:
                if not any(occurs(w, page) or occurs(w, text) for w in group):
                    return group[0]
            return None
    elif kind == "place":
        known = set(COUNTRIES) | set(pools.places)  # a known place, not a tagging slip
        slots = [s for s in _entity_slots(text, doc, {"GPE"}, fact.topic)
                 if text[s[0] : s[1]] in known]  # fmt: skip

        def replace(old: str) -> str | None:
            countries = [c for c in COUNTRIES if c != "United States"]
            return _choose(rng, countries if old in COUNTRIES else pools.places, page, text)
    elif kind == "person":
        slots = [s for s in _entity_slots(text, doc, {"PERSON"}, fact.topic)
                 if len(text[s[0] : s[1]].split()) >= 2]  # fmt: skip
        own = _person_tokens(fact.topic)

        def replace(old: str) -> str | None:
            def unrelated(name: str) -> bool:  # not a relative, no surname of the page
                return not {w.lower() for w in name.split()} & own and not occurs(
                    name.split()[-1], page
                )

            return _choose(rng, pools.people, page, text, unrelated)
    elif kind == "work":
        slots = _entity_slots(text, doc, {"WORK_OF_ART"}, fact.topic)

        def replace(old: str) -> str | None:
            return _choose(rng, pools.works, page, text)
    else:
        raise ValueError(f"unknown counterfactual kind {kind!r}; known: {', '.join(KINDS)}")
    slots = sorted(set(slots))
    if not slots:
        return None
    start, end = rng.choice(slots)
    old = text[start:end]
    if stated is not None:  # deferred: stated reads the slot check, which imports this
        from factscore_local.labels.stated import stated_replacement

        new = stated_replacement(kind, old, stated, text, _person_tokens(fact.topic), rng)
    else:
        new = replace(old)
    if new is None or new.lower() == old.lower():
        return None
    if kind in ("occupation", "nationality"):
        start = _article(start, text)
        slot = text[start:end]
        if slot[:1].isupper() and not re.match(r"an?\s", slot, re.IGNORECASE):
            new = new[:1].upper() + new[1:]
        new = _with_article(slot, new)
    return Counterfactual(fact, kind, start, end, text[start:end], new)


def make_counterfactuals(
    facts: Iterable[SourceFact],
    pages: Mapping[str, str],
    nlp: Any,
    pools: Pools,
    seed: int = 0,
    kinds: Sequence[str] = KINDS,
    stated: Mapping[str, Any] | None = None,
) -> list[Counterfactual]:
    """At most one counterfactual per fact and kind.

    Args:
        facts: supported facts; a fact whose topic has no page in ``pages`` is skipped.
        pages: {topic: the page's text}: a replacement must not occur in it.
        nlp: a spaCy pipeline with NER
            (``factscore_local.pipeline.decomposition.decompose.load_spacy``).
        pools: replacement places, people and works (``build_pools`` of the pages).
        seed: the draw; each fact and kind draws from its own generator seeded with it, so
            a pair does not depend on which other facts are given.
        kinds: which kinds to make (``KINDS``).
        stated: {topic: ``labels.stated.PageValues``}: replacements are then values the
            page states in another role (the harder probe), not values it lacks.

    Returns:
        The pairs, in the order of the facts, then of ``kinds``.

    Raises:
        ValueError: an unknown kind.
    """
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown counterfactual kind {unknown[0]!r}; known: {', '.join(KINDS)}")
    facts = [f for f in facts if f.topic in pages]
    out = []
    for fact, doc in zip(facts, nlp.pipe([f.text for f in facts], batch_size=64), strict=True):
        for kind in kinds:
            rng = random.Random(f"{seed}|{fact.topic}|{fact.text}|{kind}")
            values = None if stated is None else stated[fact.topic]
            pair = _counterfactual(fact, kind, doc, pages[fact.topic], pools, rng, values)
            if pair is not None:
                out.append(pair)
    return out


def supported_facts(bios: Iterable[Any], subject: str = "") -> list[SourceFact]:
    """The human atomic facts labeled S of labeled bios (``pipeline.inputs.Bio``)."""
    from factscore_local.pipeline.records.labeled import human_facts

    return [SourceFact(bio.topic, f.text, subject or bio.source, bio.line, f.sentence)
            for bio in bios for f in human_facts(bio.annotations) if f.label == "S"]  # fmt: skip


def page_texts(knowledge: Any, topics: Iterable[str]) -> dict[str, str]:
    """{topic: its page's text} from an index (``index.reader.KnowledgeSource``); topics
    without a page are left out."""
    from factscore_local.index.reader import UnknownTitleError

    out = {}
    for topic in dict.fromkeys(topics):
        try:
            out[topic] = "\n".join(p.clean_text for p in knowledge.get_page(topic).passages)
        except UnknownTitleError:
            continue
    return out


def sample(pairs: Sequence[Counterfactual], n: int, seed: int) -> list[Counterfactual]:
    """A seeded draw of ``n`` pairs (all of them when fewer), in their given order."""
    chosen = sorted(random.Random(seed).sample(range(len(pairs)), min(n, len(pairs))))
    return [pairs[i] for i in chosen]
