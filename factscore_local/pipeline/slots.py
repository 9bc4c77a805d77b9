"""A slot check without the LM: are a fact's years, numbers, nationalities, occupations and
names found in its passages, or do the passages give another value of the same type?

The lexical coverage signal counts a fact's words found in its passages, wherever they are;
it cannot tell that "Canadian" comes from the Canadian Open while the player is American.
This check looks at the slots of a fact one by one: a slot whose value its passages state is
confirmed; a slot whose value they do not state, while they state other values of its type
(other years, other nationalities), conflicts. A demonym directly before a capitalised
word is part of a name ("the Canadian Open", "the British Army"), not a nationality, in a
fact as in its passages. ``slot_signal`` turns the verdict into the ``slots`` signal a
fitted rule weighs (``verifiers.py``); ``scripts.bench_counterfactual`` measures it.

Example:
    >>> slot_check("He was born in 1885.", ["Einstein was born on 14 March 1879 in Ulm."])
    'conflict'
    >>> slot_check("He was born in 1879.", ["Einstein was born on 14 March 1879 in Ulm."])
    'confirmed'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from factscore_local.labels.counterfactual import NATIONALITIES, NUMBER_WORDS, OCCUPATIONS

# A year: four digits, not part of a longer number ("1,985" or "1985.5"); a comma after it
# ends a clause ("In 1990, he ..."), it does not continue the number.
_YEAR = re.compile(r"(?<![\d.,])(?:1[0-9]{3}|20[0-2][0-9])(?!\d|[.,]\d)")
# A number in digits, with thousands groups and a decimal part ("27,000", "3.5").
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)?(?!\w|[.,]\d)")
# Words that make a number an approximation: "over 60 films" is true of 63 of them.
_ROUGHLY = re.compile(
    r"\b(?:over|more than|nearly|almost|about|around|approximately|roughly|some|at least|"
    r"up to|close to|upwards of|in excess of|estimated)\s+$",
    re.IGNORECASE,
)
ROUGH_TOLERANCE = 0.25  # an approximate number matches a value this close (relative)
_OCCUPATION_WORDS = [w for group in OCCUPATIONS for w in group]


def _words(pattern: str, text: str, flags: int = 0) -> set[str]:
    return {m.group().lower() for m in re.finditer(pattern, text, flags)}


def _listed(values: Sequence[str], text: str, case: bool, in_names: bool = True) -> set[str]:
    """The listed values found in ``text``; ``in_names=False`` skips an occurrence directly
    followed by a capitalised word (part of a name)."""
    flags = 0 if case else re.IGNORECASE
    after = "" if in_names else r"(?!\s+[A-Z])"
    return {v.lower() for v in values
            if re.search(rf"(?<![\w-]){re.escape(v)}(?![\w-]){after}", text, flags)}  # fmt: skip


def slots(text: str) -> dict[str, set[str]]:
    """The slot values of a text by type: years, numbers (not years; digits or words up to
    twelve), nationalities and occupations (from the counterfactual probe's lists).

    Example:
        >>> sorted(slots("An actor born in 1950, with three children and 2,500 acres.")["number"])
        ['2500', '3']
    """
    years = _words(_YEAR.pattern, text)
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


def slot_conflicts(fact: str, passages: Sequence[str] | dict[str, set[str]]) -> dict[str, str]:
    """Each slot type of the fact and how it fares: ``"conflict"`` (a value the passages do
    not state while they state others of its type), ``"confirmed"`` or ``"unknown"``. An
    approximate number ("over 60 films") is confirmed by a value within a quarter of it."""
    own = slots(fact)
    found = passages if isinstance(passages, dict) else slots(" ".join(passages))
    rough = _approximate(fact)
    verdicts = {}
    for kind, values in own.items():
        if not values:
            continue
        missing = values - found[kind]
        if kind == "number":
            missing = {v for v in missing if not (v in rough and _near(v, found[kind]))}
        if not missing:
            verdicts[kind] = "confirmed"
        else:
            verdicts[kind] = "conflict" if found[kind] else "unknown"
    return verdicts


def slot_check(fact: str, passages: Sequence[str] | dict[str, set[str]]) -> str:
    """How a fact's slots fare in its passages.

    Args:
        fact: the fact.
        passages: the texts of its evidence, or their ``slots`` (read once for the facts
            that share them).

    Returns:
        ``"conflict"`` when a slot's value is not in the passages while they hold another
        value of its type; else ``"confirmed"`` when every slot is found; else
        ``"unknown"`` (no slots, or a slot whose type the passages do not mention).
    """
    return _overall(slot_conflicts(fact, passages))


def _overall(verdicts: dict[str, str]) -> str:
    for verdict in ("conflict", "unknown", "confirmed"):
        if verdict in verdicts.values():
            return verdict
    return "unknown"


SLOT_VALUES = {"conflict": -1.0, "unknown": 0.0, "confirmed": 1.0}
NUMBER_CONFLICT = -2.0  # the slots signal of a fact whose number its passages contradict


def slot_signal(fact: str, passages: Sequence[str] | dict[str, set[str]]) -> float:
    """The ``slots`` signal: -2 when a number (an amount or a count, not a year) conflicts,
    -1 for another conflicting slot, 1 when every slot is confirmed, 0 otherwise (see
    ``slot_conflicts``). Changed amounts are the contradictions the LM misses most often
    (the counterfactual probe), so a rule can weigh them apart.

    Example:
        >>> slot_signal("Andre Agassi is a Canadian tennis player.",
        ...             ["Agassi, an American tennis player, won the Canadian Open."])
        -1.0
        >>> slot_signal("He won 12 titles.", ["He won 8 titles in 3 years."])
        -2.0
    """
    verdicts = slot_conflicts(fact, passages)
    if verdicts.get("number") == "conflict":
        return NUMBER_CONFLICT
    return SLOT_VALUES[_overall(verdicts)]
