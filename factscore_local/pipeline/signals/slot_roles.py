"""Roles a biography gives its values, for the slot check (``slots.py``).

A page names many years and nationalities; a value it states is not therefore the value
of the fact's slot. Three roles are plain enough to read without a model:

- the topic's **life dates**, in the parenthesis after its name ("Kim Casali (9 September
  1941 – 15 June 1997)"): a fact about the topic's birth or death gives that year, and a
  year the page states only there is no date of anything else;
- the **years of a titled work**, written beside its quoted title ('"The Recruit" (2003)',
  '2002's "City of God"', '2002 - "City of God"'): a fact that names the work gives one
  of them;
- the topic's **nationality**, the demonyms of its lead sentence ("... is an American
  actress"): a fact that the topic is of a nationality gives one of them.

``page_roles`` reads them once per set of passages and topic (the facts of a page share
them); each verdict is ``"confirmed"`` or ``"conflict"`` where the passages show the role
and the fact takes it up, and ``None`` otherwise; the slot check then decides by its
sentences. A role's verdict comes first: it is more specific than words shared with a
sentence.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from factscore_local.pipeline.signals.lexical import WORD, content_words
from factscore_local.pipeline.signals.slot_intervals import Value, meets_any, stated_in, years
from factscore_local.pipeline.signals.slot_values import times
from factscore_local.pipeline.signals.vocabulary import NATIONALITIES

# A year: four digits, not part of a longer number ("1,985" or "1985.5"); a comma after it
# ends a clause ("In 1990, he ..."), it does not continue the number.
YEAR = re.compile(r"(?<![\d.,])(?:1[0-9]{3}|20[0-2][0-9])(?!\d|[.,]\d)")
_PARENTHESIS = re.compile(r"\(([^()]{0,80})\)")
_NAME_WORDS = 12  # a lead gives the life dates after the title and the full name
# The topic's birth, not a title ("Born on the Fourth of July") or a child ("gave birth").
BIRTH = re.compile(r"\bborn\b|(?<!gave )\bbirth\b(?! to)")
DEATH = re.compile(
    r"\b(?:died|dies|death|passed away|executed|killed|murdered|assassinated)\b", re.IGNORECASE
)
# Words that make a fact about someone else's birth or death ("His father died in 1980").
KIN = re.compile(
    r"\b(?:father|mother|parents?|wife|husband|sons?|daughters?|brothers?|sisters?|"
    r"child|children|spouse|partner|grand\w+|uncle|aunt|cousin|niece|nephew)\b",
    re.IGNORECASE,
)
# Capitalised words at the start of a fact that name no one.
_NOT_NAMES = {"he", "she", "his", "her", "they", "their", "the", "in", "on", "at"}
_QUOTED = re.compile(r'"([^"]{2,80})"')
_YEAR_AFTER = re.compile(r"\s*\(([^()]{0,25})\)")  # "Title" (2003) or (2006–2007)
_YEAR_BEFORE = re.compile(rf"({YEAR.pattern})(?:'s|\s*[-–])\s*$")  # 2002's "Title", 2002 - "Title"
_DEMONYM = "|".join(sorted(map(re.escape, NATIONALITIES), key=len, reverse=True))
DEMONYM_WORD = re.compile(rf"(?<!\w)(?:{_DEMONYM})(?!\w)")
# "X is a German actress", "He was an Irish ...": the nationality a fact gives its subject.
_SAID_NATIONALITY = re.compile(rf"\b(?:is|was)\s+(?:an?\s+)?(?:former\s+)?({_DEMONYM})(?!\w)")
_LEAD_WORDS = 6  # words after the lead's "is"/"was" that hold the nationality
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
# Facts about where someone comes from rather than what they are.
_ANCESTRY = re.compile(
    r"\b(?:descent|origin|ancestry|heritage|roots|parents?|father|mother)\b", re.IGNORECASE
)


@dataclass(frozen=True)
class Work:
    """A quoted title and the span of the years written beside it."""

    pattern: re.Pattern  # the title, lowercased, as a whole phrase
    first: str
    last: str

    @property
    def span(self) -> Value:
        """Its years as a time value."""
        first, last = int(self.first), int(self.last)
        low, high = years(first, last)
        if first == last:
            return Value("time", low, high, self.first)
        ends = (years(first, first), years(last, last))
        return Value("time", low, high, f"{self.first}–{self.last}", ends=ends)


@dataclass(frozen=True)
class Life:
    """The topic's life dates, as its lead's parenthesis gives them (or, without one among
    the passages, a sentence that says the topic was born or died): the birth, the death
    (None while alive, or not stated), the parenthesis ("" for a sentence's dates), and the
    sentence they stand in."""

    birth: Value | None
    death: Value | None
    parenthesis: str
    sentence: str


@dataclass(frozen=True)
class PageRoles:
    """What a fact's passages say of its topic's values, read once for the facts that share
    them."""

    name_words: frozenset[str]  # the topic's name and the full name its lead spells out
    life: Life | None  # the topic's life dates
    times_elsewhere: tuple[Value, ...]  # the times the passages give outside them
    works: tuple[Work, ...]  # titles with years beside them, the topic's own name aside
    nationalities: frozenset[str] | None  # the demonyms of the lead sentence


@functools.lru_cache(maxsize=1024)
def page_roles(texts: tuple[str, ...], topic: str) -> PageRoles:
    """The roles the passages ``texts`` give the values of ``topic``'s page."""
    leads = [lead for lead in (_lead(text, topic) for text in texts) if lead]
    topic_words = content_words(topic)
    name_words = frozenset(topic_words | (content_words(leads[0][0]) if leads else set()))
    life = _life_dates(leads) or _stated_life(texts, name_words)
    elsewhere = " ".join(texts).replace(life.parenthesis, " ") if life and life.parenthesis else ""
    works = tuple(
        Work(re.compile(rf"(?<!\w){re.escape(title)}(?!\w)"), min(years), max(years))
        for title, years in _work_years(texts).items()
        if not content_words(title) <= topic_words
    )
    return PageRoles(
        name_words=name_words,
        life=life,
        times_elsewhere=times(elsewhere),
        works=works,
        nationalities=_lead_nationalities(leads),
    )


def about_topic(head: str, roles: PageRoles) -> bool:
    """Whether the start of a fact (before its verb) is the topic itself: no kin word, and
    no capitalised word beyond a pronoun and the topic's name, as the title gives it or as
    the lead spells it out ("Andrew Eppley Shue"; his sister Elisabeth Shue is not him)."""
    return _is_topic(head, roles.name_words)


def _is_topic(head: str, name_words: frozenset[str]) -> bool:
    if KIN.search(head):
        return False
    # a name's pieces as the name words hold them: "Heyward-Bey" is "heyward" and "bey"
    names = {
        piece for w in re.findall(r"\b[A-Z][\w'-]+", head) for piece in WORD.findall(w.lower())
    }
    return names <= name_words | _NOT_NAMES


_SUBJECT_WORDS = 8  # words before "born" or "died" that may name the topic


def _stated_life(texts: Sequence[str], name_words: frozenset[str]) -> Life | None:
    """The topic's birth (and death) as a passage sentence states them ("Albert Einstein
    was born in Ulm ... on 14 March 1879"): the first time after the cue, in a sentence
    whose subject is the topic; None where no passage states its birth or death."""
    found: dict[str, tuple[Value, str]] = {}
    for text in texts:
        for sentence in SENTENCE_END.split(text):
            for role, cue in (("birth", BIRTH), ("death", DEATH)):
                m = cue.search(sentence)
                if role in found or not m:
                    continue
                head = sentence[: m.start()]
                after = times(sentence[m.end() :])
                if after and len(head.split()) <= _SUBJECT_WORDS and _names_topic(head, name_words):
                    found[role] = (after[0], sentence)
    if not found:
        return None
    birth, death = found.get("birth"), found.get("death")
    sentence = (birth or death)[1]
    return Life(birth and birth[0], death and death[0], "", sentence)


def _names_topic(head: str, name_words: frozenset[str]) -> bool:
    """Whether a sentence's words before its verb name the topic: a word of its name and no
    one else's ("Einstein was born"), or a bare pronoun ("He was born"); not "The boy was
    born" on his father's page."""
    if not _is_topic(head, name_words):
        return False
    words = {w.lower() for w in re.findall(r"[\w'-]+", head)}
    return bool(content_words(head) & name_words) or words in ({"he"}, {"she"})


def _lead(text: str, topic: str) -> tuple[str, str] | None:
    """The name and the first sentence of a passage that opens the topic's page (it starts
    with the topic's name, its disambiguation aside), else None. A parenthesis right after
    the name (life dates) belongs to the sentence, whatever full stops its initials have
    ("F. Howard Taylor")."""
    name = re.sub(r"\s*\(.*\)$", "", topic).strip().lower()
    if not name or not text.lower().startswith(name):
        return None
    titled = topic.strip().lower()
    if titled != name and text.lower().startswith(titled):  # the title's "(singer)" is no
        text = text[len(titled) :].lstrip()  # parenthesis of the lead: read past it
    parenthesis = _PARENTHESIS.search(text)
    if parenthesis and len(text[: parenthesis.start()].split()) <= _NAME_WORDS:
        end = SENTENCE_END.search(text, parenthesis.end())
        return text[: parenthesis.start()], text[: end.start()] if end else text
    end = SENTENCE_END.search(text)
    sentence = text[: end.start()] if end else text
    verb = re.search(r"\b(?:is|was)\b", sentence)
    return text[: verb.start() if verb else 0], sentence


def _life_dates(leads: list[tuple[str, str]]) -> Life | None:
    """The topic's life dates: the first parenthesis of the page's lead, right after the
    name, that gives a birth ("born 5 June 1954") or a birth and a death ("9 September
    1941 – 15 June 1997", "1879–1955")."""
    for _, sentence in leads:
        match = _PARENTHESIS.search(sentence)
        if not match or len(sentence[: match.start()].split()) > _NAME_WORDS:
            continue
        inside = match.group(1)
        if re.search(r"\bborn\b", inside) and len(found := times(inside)) == 1:
            return Life(found[0], None, match.group(), sentence)
        sides = re.split(r"\s[–-]\s|–", inside)
        if len(sides) == 2 and YEAR.search(sides[0]) and YEAR.search(sides[1]):
            birth, death = _last_time(sides[0]), _last_time(sides[1])
            if birth and death:
                return Life(birth, death, match.group(), sentence)
    return None


def _last_time(text: str) -> Value | None:
    """The last time a side of a life-dates parenthesis gives ("c. 1850", "14 March 1879")."""
    found = times(text)
    return found[-1] if found else None


def _point(value: Value) -> str | None:
    """The year of a time that is one year (or a day or month of one), else None."""
    low, high = date.fromordinal(int(value.low)), date.fromordinal(int(value.high))
    return str(low.year) if low.year == high.year else None


# A death of the topic that its passages give no date: the page's other years are
# no evidence against the fact's (Wikipedia's top passages often miss a death).
UNDATED = "undated"


def life_date_verdict(fact: str, values: frozenset, roles: PageRoles) -> str | None:
    """``"conflict"`` when the fact's times contradict the topic's life dates: a birth or
    death of the topic at a time that does not meet the page's, or (against the lead's
    parenthesis) another event in a year the passages give only as a life date;
    ``"confirmed"`` for the topic's birth or death at a time that meets it; ``UNDATED`` for a
    death the passages do not date; else None."""
    life = roles.life
    birth, death = BIRTH.search(fact), DEATH.search(fact)
    cue = birth or death
    if cue:
        if not about_topic(fact[: cue.start()], roles):
            return None
        said = [life.birth] if life and life.birth and birth else []
        said += [life.death] if life and life.death and death else []
        if not said:  # a death the passages miss; a birth they miss is mostly invented
            return None if birth else UNDATED
        return "confirmed" if all(meets_any(s, values) for s in said) else "conflict"
    if life is None or not life.parenthesis or life.birth is None:
        return None
    points = {_point(v) for v in values}
    life_years = {_point(life.birth), _point(life.death) if life.death else None}
    elsewhere = {_point(v) for v in roles.times_elsewhere}
    only_life_dates = None not in points and points <= life_years and not points <= elsewhere
    return "conflict" if only_life_dates else None


def life_event(fact: str, roles: PageRoles) -> Value | None:
    """The page's date of the topic's birth or of its death, where the fact speaks of
    that one (and of the topic, not its kin), else None."""
    birth, death = BIRTH.search(fact), DEATH.search(fact)
    life = roles.life
    if life is None or bool(birth) == bool(death):
        return None
    if not about_topic(fact[: (birth or death).start()], roles):
        return None
    return life.birth if birth else life.death


# The age a fact gives at its subject's death: "at the age of 81", "aged 81", "81 years old".
_AGE = re.compile(
    r"\b(?:at the age of|aged|age of|at age)\s+(\d{1,3})\b|\b(\d{1,3})\s+years?\s+old\b"
)
_YEAR_DAYS = 365.2425


def age_verdict(fact: str, roles: PageRoles) -> str | None:
    """``"conflict"`` when the fact gives the topic's age at death ("He died at the age of
    84") that its life dates do not allow, ``"confirmed"`` when they do; else None (no
    death of the topic, no age, or no life dates with a death)."""
    life = roles.life
    age = _AGE.search(fact)
    cue = DEATH.search(fact)
    if not (life and life.birth and life.death and age and cue):
        return None
    if not about_topic(fact[: cue.start()], roles):
        return None
    if not about_topic(fact[: min(cue.start(), age.start())], roles):
        return None
    said = int(age.group(1) or age.group(2))
    youngest = int((life.death.low - life.birth.high) // _YEAR_DAYS)
    oldest = int((life.death.high - life.birth.low) // _YEAR_DAYS)
    return "confirmed" if youngest <= said <= oldest else "conflict"


def _work_years(texts: Sequence[str]) -> dict[str, set[str]]:
    """Lowercased quoted titles and the years written beside them."""
    titled: dict[str, set[str]] = {}
    for text in texts:
        for match in _QUOTED.finditer(text):
            title = re.sub(r"\s*\(.*\)\s*$", "", match.group(1)).strip(" ,.")
            years = set()
            after = _YEAR_AFTER.match(text, match.end())
            if after:
                years |= set(YEAR.findall(after.group(1)))
            before = _YEAR_BEFORE.search(text[max(0, match.start() - 12) : match.start()])
            if before:
                years.add(before.group(1))
            if len(title) >= 3 and years:
                titled.setdefault(title.lower(), set()).update(years)
    return titled


def work_year_verdict(fact: str, values: frozenset, roles: PageRoles) -> str | None:
    """``"conflict"`` when the fact names a work whose years the passages give, and one of
    the fact's times does not meet their span ("(2009–2010)"); ``"confirmed"`` when all
    do; else None."""
    low = fact.lower()
    verdict = None
    for work in roles.works:
        if work.pattern.search(low):
            if not all(stated_in(v, [work.span]) for v in values):
                return "conflict"
            verdict = "confirmed"
    return verdict


def works_named(fact: str, roles: PageRoles) -> list[Work]:
    """The works with years on the page that the fact names."""
    low = fact.lower()
    return [work for work in roles.works if work.pattern.search(low)]


def _lead_nationalities(leads: list[tuple[str, str]]) -> frozenset[str] | None:
    """The demonyms of the topic's lead sentence ("X (born ...) is an American actress"),
    lowercased: those within a few words after its first "is" or "was"."""
    for name, sentence in leads:
        verb = re.search(r"\b(?:is|was)\b", sentence[len(name) :])
        if not verb:
            continue
        predicate = " ".join(sentence[len(name) + verb.end() :].split()[:_LEAD_WORDS])
        found = frozenset(d.lower() for d in DEMONYM_WORD.findall(predicate))
        if found:
            return found
    return None


def nationality_verdict(fact: str, roles: PageRoles) -> str | None:
    """``"conflict"`` when the fact says the topic is of a nationality ("X is a German
    actress") that the lead sentence does not give, ``"confirmed"`` when it gives it; else
    None."""
    if _ANCESTRY.search(fact) or not roles.nationalities:
        return None
    said = _SAID_NATIONALITY.search(fact)
    if not said or not about_topic(fact[: said.start()], roles):
        return None
    return "confirmed" if said.group(1).lower() in roles.nationalities else "conflict"


def role_verdict(fact: str, kind: str, values: frozenset, texts, topic: str) -> str | None:
    """How a fact's values of one kind fare against the roles the passages give values of
    that kind: ``"conflict"`` (with any role), ``"confirmed"``, ``UNDATED`` (the topic's
    birth or death, which they do not date) or None where they show none.

    Example:
        >>> lead = ("Kim Casali (9 September 1941 – 15 June 1997) was a New Zealand "
        ...         "cartoonist.")
        >>> fact = "Kim Casali was born in 1944."
        >>> role_verdict(fact, "year", frozenset(times(fact)), (lead,), "Kim Casali")
        'conflict'
    """
    if kind not in ("year", "number", "nationality"):
        return None
    roles = page_roles(tuple(texts), topic)
    if kind == "year":
        verdicts = (life_date_verdict(fact, values, roles), work_year_verdict(fact, values, roles))
    elif kind == "number":
        verdicts = (age_verdict(fact, roles),)
    else:
        verdicts = (nationality_verdict(fact, roles),)
    for verdict in ("conflict", "confirmed", UNDATED):
        if verdict in verdicts:
            return verdict
    return None
