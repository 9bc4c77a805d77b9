"""A person in the role a fact gives them, for the reason beside a rejected fact.

A biography names many people, so a name the page states is no evidence that it fills the
fact's role: "He married Linda Ronstadt." is false on a page that says he toured with Linda
Ronstadt and married Kathryn Walker. A few roles of the topic are plain enough to read
without a model: its **mother**, **father** and **spouses** ("married X", "his wife, X",
"her first husband was the actor X", "X was her mother"). Where the passages give such a
role to another person, and write the fact's person in no sentence that gives that role,
``person_role_conflict`` says which person and which sentence.

This names the role in the reason of a fact the rule rejects (``decision/reasons.py``); it
is no slot of the check and raises no flag. Read against whole dev pages, most of the
conflicts it finds for spouses fell on facts the annotators labeled supported: a second
marriage told in other words ("Valli and Farrell were married"), a name spelled another
way, a mother known by two names. The LM weighs those; this only says what the passages
give the role.

A role counts only where it is the topic's: the words before it in its sentence name no
other relative and no capitalised name but the topic's ("his daughter married ...",
"Smith's wife ..." are someone else's).

Example:
    >>> page = ["Taylor toured with Linda Ronstadt.", "In 1985 Taylor married Kathryn Walker."]
    >>> found = person_role_conflict("He married Linda Ronstadt.", "James Taylor", page)
    >>> found.role, found.name, found.other
    ('spouse', 'Linda Ronstadt', 'Kathryn Walker')
    >>> person_role_conflict("He married Kathryn Walker.", "James Taylor", page) is None
    True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from factscore_local.pipeline.signals.slot_roles import KIN, SENTENCE_END
from factscore_local.pipeline.signals.vocabulary import NATIONALITIES

ROLES = {"mother": "mother", "father": "father", "wife": "spouse", "husband": "spouse",
         "spouse": "spouse", "married": "spouse"}  # fmt: skip
# Words before a role that make it someone else's: a relative ("his daughter married"),
# and besides those of ``slot_roles.KIN``, a possessive ("Smith's wife") or a part played.
_OTHERS = re.compile(
    rf"{KIN.pattern}|\b(?:cousins|nephews|nieces|uncles|aunts|in-laws?|step\w+|friends?|"
    r"partners|widow|widower|character|role|played|portrayed)\b|['’]s\b",
    re.IGNORECASE,
)
_ROLE_WORD = re.compile(r"\b(?:mother|father|wife|husband|spouse|married)\b", re.IGNORECASE)
# The role word, then what may stand before its person: "married X", "married to X", "his
# wife, X", "her mother was X", "husband was the actor X".
_ROLE_THEN_NAME = re.compile(
    r"\b(mother|father|wife|husband|spouse|married)\b(?:\s*,\s*|\s+(?:was|is|to|named|"
    r"the|actor|actress|singer|writer|director|producer)\b)*\s*",
    re.IGNORECASE,
)
# A person, then the role: "X was her mother", "X, his wife", "X was the mother of Y".
_NAME_THEN_ROLE = re.compile(
    r"\s*,?\s+(?:(?:was|is|became)\s+)?(?:his|her|their|the)\s+(?:(?:first|second|third|"
    r"late|future|former)\s+)?(mother|father|wife|husband|spouse)\b(\s+of\b)?",
    re.IGNORECASE,
)
# Lowercase words inside a name: "Ludwig van Beethoven" ("al-Attas" is one word).
_PARTICLES = {"de", "da", "del", "della", "der", "van", "von", "bin", "ibn", "al", "la", "le",
              "du", "di", "dos", "das", "y"}  # fmt: skip
_TOKEN = re.compile(r"[^\W\d_][\w'’.-]*")
# Capitalised words that name no one: pronouns, openers, titles, months.
_NOT_NAMES = {"He", "She", "His", "Her", "They", "Their", "The", "In", "On", "At", "After",
              "Before", "When", "Later", "During", "By", "It", "A", "An", "Sir", "Dame", "Mr",
              "Mrs", "Ms", "Dr", "January", "February", "March", "April", "May", "June",
              "July", "August", "September", "October", "November", "December"}  # fmt: skip
_DEMONYMS = frozenset(NATIONALITIES)


class RoleConflict(NamedTuple):
    """The fact's person in a role, and the passages' other person in it."""

    role: str  # mother, father or spouse
    name: str  # the fact's person
    other: str  # the passages' person in that role
    sentence: str  # the passages' sentence that gives it


def _capitalised(token: str) -> bool:
    core = token.split("-", 1)[1] if re.match(r"[a-z]{1,3}-", token) else token
    return core[:1].isupper()


def _name_word(token: str, words: list[str]) -> bool:
    """Whether a token goes on a name: capitalised, or a particle inside one."""
    named = _capitalised(token) and token not in _NOT_NAMES
    return named or bool(words) and token.lower() in _PARTICLES


def _name_after(text: str) -> str | None:
    """The capitalised name a text begins with (particles inside it kept)."""
    words: list[str] = []
    end = 0
    for match in _TOKEN.finditer(text):
        token = match.group().rstrip(".")
        if text[end : match.start()].strip() or not _name_word(token, words):
            break  # a comma or another mark, or a word of no name, ends it
        words.append(token)
        end = match.end()
    while words and words[-1].lower() in _PARTICLES:
        words.pop()
    return " ".join(words) or None


def _name_before(text: str) -> str | None:
    """The capitalised name a text ends with (nothing but spaces after it)."""
    words: list[str] = []
    end = len(text.rstrip())
    for match in reversed(list(_TOKEN.finditer(text))):
        token = match.group().rstrip(".")
        if text[match.end() : end].strip() or not _name_word(token, words):
            break  # a comma or another mark, or a word of no name, ends it
        words.insert(0, token)
        end = match.start()
    while words and words[0].lower() in _PARTICLES:
        words.pop(0)
    return " ".join(words) or None


def _topic_words(topic: str) -> set[str]:
    return {w.lower() for w in _TOKEN.findall(re.sub(r"\(.*?\)", "", topic))}


def _only_the_topic(before: str, topic_words: set[str]) -> bool:
    """Whether the words before a role in its sentence leave it the topic's: no other
    relative, and no capitalised name but the topic's."""
    if _OTHERS.search(before):
        return False
    tokens = _TOKEN.findall(before)
    return all(not _capitalised(t) or t.lower() in topic_words or t in _NOT_NAMES for t in tokens)


def _a_person(name: str | None, topic_words: set[str]) -> bool:
    """Whether a name is someone's other than the topic's ("Australian" is no one)."""
    return bool(name) and not set(name.lower().split()) <= topic_words and name not in _DEMONYMS


def people_in_roles(sentence: str, topic: str) -> list[tuple[str, str]]:
    """The (role, person) pairs a sentence gives the topic.

    Example:
        >>> people_in_roles("In 1972, Taylor married Carly Simon.", "James Taylor")
        [('spouse', 'Carly Simon')]
        >>> people_in_roles("His daughter married Ben Taylor.", "James Taylor")
        []
        >>> people_in_roles("Maria Jane Dyer was his mother.", "Frederick Taylor")
        [('mother', 'Maria Jane Dyer')]
    """
    return _roles_in(sentence, _topic_words(topic))


def names_a_role(fact: str) -> bool:
    """Whether a fact has a word of the roles read here (a cheap test before its passages
    are read: ``people_in_roles`` finds none without one)."""
    return bool(_ROLE_WORD.search(fact))


def _roles_in(sentence: str, topic_words: set[str]) -> list[tuple[str, str]]:
    found = []
    for match in _ROLE_THEN_NAME.finditer(sentence):
        name = _name_after(sentence[match.end() :])
        mine = _a_person(name, topic_words)
        if mine and _only_the_topic(sentence[: match.start()], topic_words):
            found.append((ROLES[match.group(1).lower()], name))
    for match in _NAME_THEN_ROLE.finditer(sentence):
        name = _name_before(sentence[: match.start()])
        if not _a_person(name, topic_words) or len(name.split()) < 2:
            continue  # "in Paris, his wife ...": one word before the role may be a place
        if match.group(2):  # "X was the mother of Y": Y must be the topic
            whose = _name_after(sentence[match.end() :])
            if not whose or not set(whose.lower().split()) <= topic_words:
                continue
        found.append((ROLES[match.group(1).lower()], name))
    return found


def _written_in(name: str, text: str, topic_words: set[str]) -> bool:
    """Whether ``text`` writes one of the name's own words (a given name or a surname; not
    the topic's, not a particle)."""
    words = {w for w in name.split() if w.lower() not in topic_words | _PARTICLES}
    return any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", text) for w in words)


def person_role_conflict(fact: str, topic: str, passages: Sequence[str]) -> RoleConflict | None:
    """The fact's person in a role of the topic and the passages' other person in it (see
    the module's docstring); None where the fact gives no such role, the passages give it
    no one, or a sentence of theirs that gives the role writes the fact's person."""
    topic_words = _topic_words(topic)
    own = _roles_in(fact, topic_words)
    if not own:
        return None
    sentences = [s.strip() for text in passages for s in SENTENCE_END.split(text) if s.strip()]
    for role, name in own:
        rival = None
        for sentence in sentences:
            given = [other for r, other in _roles_in(sentence, topic_words) if r == role]
            if given and _written_in(name, sentence, topic_words):
                break  # the passages give the fact's person in this role
            if given and rival is None:
                rival = RoleConflict(role, name, given[0], sentence)
        else:
            if rival is not None:
                return rival
    return None
