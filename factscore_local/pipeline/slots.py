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

_YEAR = re.compile(r"(?<![\d.,])(?:1[0-9]{3}|20[0-2][0-9])(?![\d,])")
_NUMBER = re.compile(r"(?<![\w.,])\d[\d,]*(?![\w,])")
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
        >>> slots("An American actor born in 1950 with three children.")["number"]
        {'3'}
    """
    years = _words(_YEAR.pattern, text)
    numbers = {n.replace(",", "") for n in _words(_NUMBER.pattern, text)} - years
    number_words = _words(rf"\b(?:{'|'.join(NUMBER_WORDS[2:])})\b", text, re.IGNORECASE)
    numbers |= {str(NUMBER_WORDS.index(w)) for w in number_words}
    return {
        "year": years,
        "number": numbers,
        "nationality": _listed(NATIONALITIES, text, case=True, in_names=False),
        "occupation": _listed(_OCCUPATION_WORDS, text, case=False),
    }


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
    own = slots(fact)
    found = passages if isinstance(passages, dict) else slots(" ".join(passages))
    verdict = "confirmed" if any(own.values()) else "unknown"
    for kind, values in own.items():
        missing = values - found[kind]
        if missing and found[kind]:
            return "conflict"
        if missing:
            verdict = "unknown"
    return verdict


SLOT_VALUES = {"conflict": -1.0, "unknown": 0.0, "confirmed": 1.0}


def slot_signal(fact: str, passages: Sequence[str] | dict[str, set[str]]) -> float:
    """The ``slots`` signal: -1 for a conflicting slot, 1 when every slot is confirmed, 0
    otherwise (see ``slot_check``).

    Example:
        >>> slot_signal("Andre Agassi is a Canadian tennis player.",
        ...             ["Agassi, an American tennis player, won the Canadian Open."])
        -1.0
    """
    return SLOT_VALUES[slot_check(fact, passages)]
