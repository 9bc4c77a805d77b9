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

from factscore_local.pipeline.signals.lexical import content_words
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
_KIN = re.compile(
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
_DEMONYM_WORD = re.compile(rf"(?<!\w)(?:{_DEMONYM})(?!\w)")
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


@dataclass(frozen=True)
class PageRoles:
    """What a fact's passages say of its topic's values, read once for the facts that share
    them."""

    name_words: frozenset[str]  # the topic's name and the full name its lead spells out
    life: tuple[str, str | None, str] | None  # birth year, death year, their parenthesis
    years_elsewhere: frozenset[str]  # the years the passages give outside that parenthesis
    works: tuple[Work, ...]  # titles with years beside them, the topic's own name aside
    nationalities: frozenset[str] | None  # the demonyms of the lead sentence


@functools.lru_cache(maxsize=1024)
def page_roles(texts: tuple[str, ...], topic: str) -> PageRoles:
    """The roles the passages ``texts`` give the values of ``topic``'s page."""
    leads = [lead for lead in (_lead(text, topic) for text in texts) if lead]
    topic_words = content_words(topic)
    life = _life_dates(leads)
    elsewhere = " ".join(texts).replace(life[2], " ") if life else ""
    works = tuple(
        Work(re.compile(rf"(?<!\w){re.escape(title)}(?!\w)"), min(years), max(years))
        for title, years in _work_years(texts).items()
        if not content_words(title) <= topic_words
    )
    return PageRoles(
        name_words=frozenset(topic_words | (content_words(leads[0][0]) if leads else set())),
        life=life,
        years_elsewhere=frozenset(YEAR.findall(elsewhere)),
        works=works,
        nationalities=_lead_nationalities(leads),
    )


def about_topic(head: str, roles: PageRoles) -> bool:
    """Whether the start of a fact (before its verb) is the topic itself: no kin word, and
    no capitalised word beyond a pronoun and the topic's name, as the title gives it or as
    the lead spells it out ("Andrew Eppley Shue"; his sister Elisabeth Shue is not him)."""
    if _KIN.search(head):
        return False
    names = {w.lower() for w in re.findall(r"\b[A-Z][\w'-]+", head)}
    return names <= roles.name_words | _NOT_NAMES


def _lead(text: str, topic: str) -> tuple[str, str] | None:
    """The name and the first sentence of a passage that opens the topic's page (it starts
    with the topic's name, its disambiguation aside), else None. A parenthesis right after
    the name (life dates) belongs to the sentence, whatever full stops its initials have
    ("F. Howard Taylor")."""
    name = re.sub(r"\s*\(.*\)$", "", topic).strip().lower()
    if not name or not text.lower().startswith(name):
        return None
    parenthesis = _PARENTHESIS.search(text)
    if parenthesis and len(text[: parenthesis.start()].split()) <= _NAME_WORDS:
        end = SENTENCE_END.search(text, parenthesis.end())
        return text[: parenthesis.start()], text[: end.start()] if end else text
    end = SENTENCE_END.search(text)
    sentence = text[: end.start()] if end else text
    verb = re.search(r"\b(?:is|was)\b", sentence)
    return text[: verb.start() if verb else 0], sentence


def _life_dates(leads: list[tuple[str, str]]) -> tuple[str, str | None, str] | None:
    """The topic's birth year, death year (``None`` while alive) and the parenthesis that
    gives them: the first parenthesis of the page's lead, right after the name."""
    for _, sentence in leads:
        match = _PARENTHESIS.search(sentence)
        if not match or len(sentence[: match.start()].split()) > _NAME_WORDS:
            continue
        inside = match.group(1)
        if re.search(r"\bborn\b", inside) and len(YEAR.findall(inside)) == 1:
            return YEAR.findall(inside)[0], None, match.group()
        sides = re.split(r"\s[–-]\s|–", inside)
        if len(sides) == 2 and YEAR.search(sides[0]) and YEAR.search(sides[1]):
            return YEAR.findall(sides[0])[-1], YEAR.findall(sides[1])[-1], match.group()
    return None


def life_date_verdict(fact: str, years: set[str], roles: PageRoles) -> str | None:
    """``"conflict"`` when the fact's years contradict the topic's life dates: a birth or death
    of the topic in another year, or another event in a year the passages give only as a
    life date; ``"confirmed"`` for the topic's birth or death in its year; else None."""
    if roles.life is None:
        return None
    birth, death, _ = roles.life
    cue = BIRTH.search(fact) or DEATH.search(fact)
    if cue:
        if not about_topic(fact[: cue.start()], roles):
            return None
        said = [birth] if BIRTH.search(fact) else []
        said += [death] if death and DEATH.search(fact) else []
        if not said:
            return None
        return "confirmed" if set(said) <= years else "conflict"
    only_life_dates = years <= {birth, death} and not years <= roles.years_elsewhere
    return "conflict" if only_life_dates else None


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


def work_year_verdict(fact: str, years: set[str], roles: PageRoles) -> str | None:
    """``"conflict"`` when the fact names a work whose years the passages give, and one of
    the fact's years is outside their span ("(2009–2010)"); ``"confirmed"`` when all are
    within it; else None."""
    low = fact.lower()
    verdict = None
    for work in roles.works:
        if work.pattern.search(low):
            if not all(work.first <= year <= work.last for year in years):
                return "conflict"
            verdict = "confirmed"
    return verdict


def _lead_nationalities(leads: list[tuple[str, str]]) -> frozenset[str] | None:
    """The demonyms of the topic's lead sentence ("X (born ...) is an American actress"),
    lowercased: those within a few words after its first "is" or "was"."""
    for name, sentence in leads:
        verb = re.search(r"\b(?:is|was)\b", sentence[len(name) :])
        if not verb:
            continue
        predicate = " ".join(sentence[len(name) + verb.end() :].split()[:_LEAD_WORDS])
        found = frozenset(d.lower() for d in _DEMONYM_WORD.findall(predicate))
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
