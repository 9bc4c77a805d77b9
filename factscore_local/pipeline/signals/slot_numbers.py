"""Reading the numbers of a text into intervals, for ``slot_values.py``: digits and number
words, with a scale word ("5 million"), a currency, a unit of length, mass or area (in base
units), and the side an approximation puts them on ("over 60", "nearly 3,000"); a number
that is part of a name is none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from factscore_local.pipeline.signals.lexical import stem
from factscore_local.pipeline.signals.slot_intervals import Value
from factscore_local.pipeline.signals.slot_times import MONTHS

ROUGH_SHARE = 0.25  # "over 60 films", "about 4,000": a quarter either side
# Words that make a number an approximation, by the side of it the amount lies on.
_ROUGH = re.compile(
    r"\b(?:(?P<above>over|more than|at least|upwards of|in excess of)|"
    r"(?P<below>nearly|almost|up to|close to|just under|fewer than|less than)|"
    r"about|around|approximately|roughly|some|estimated|an estimated|approx\.)\s+$",
    re.IGNORECASE,
)
_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "m": 1e6,
           "bn": 1e9}  # fmt: skip
# Unit -> (dimension, its size in the dimension's base unit: metres, kilograms, m²).
_UNITS = {
    **dict.fromkeys(("km", "kilometres", "kilometers", "kilometre", "kilometer"), ("length", 1e3)),
    **dict.fromkeys(("m", "metres", "meters", "metre", "meter"), ("length", 1.0)),
    **dict.fromkeys(
        ("cm", "centimetres", "centimeters", "centimetre", "centimeter"), ("length", 0.01)
    ),  # fmt: skip
    **dict.fromkeys(("mi", "miles", "mile"), ("length", 1609.344)),
    **dict.fromkeys(("ft", "feet", "foot"), ("length", 0.3048)),
    **dict.fromkeys(("inches", "inch"), ("length", 0.0254)),
    **dict.fromkeys(("kg", "kilograms", "kilogram", "kilos"), ("mass", 1.0)),
    **dict.fromkeys(("lb", "lbs", "pounds"), ("mass", 0.45359237)),  # "£" marks money
    **dict.fromkeys(("acres", "acre"), ("area", 4046.8564)),
    **dict.fromkeys(("hectares", "hectare", "ha"), ("area", 1e4)),
    **dict.fromkeys(("km2", "km²"), ("area", 1e6)),
    **dict.fromkeys(("sq mi", "square miles", "square mile"), ("area", 2_589_988.1)),
}
_UNIT = "|".join(sorted(map(re.escape, _UNITS), key=len, reverse=True))
_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
          "eleven", "twelve"]  # fmt: skip
_DIGITS = r"\d+(?:,\d{3})*(?:\.\d+)?"
_SCALE = r"thousand|million|billion|trillion"
NUMBERS = re.compile(
    rf"(?P<height>(?<![\w.,])(?P<ft>\d)\s*(?:ft|feet|foot|['′])\s*(?P<inch>\d{{1,2}}(?:\.\d+)?)"
    r"\s*(?:in\b|inches\b|inch\b|[\"″])?)"
    rf"|(?<![\w.,])(?P<currency>[$£€])\s?(?P<cn>{_DIGITS})(?:\s*(?P<cs>{_SCALE}|m|bn)\b)?"
    rf"|(?<![\w.,])(?P<n>{_DIGITS})(?!\w|[.,]\d)(?:\s*(?P<scale>{_SCALE})\b)?"
    rf"(?:\s?(?P<unit>{_UNIT})(?![\w²]))?"
    rf"|\b(?P<word>{'|'.join(_WORDS[2:])})\b(?:\s+(?P<wscale>{_SCALE})\b)?",
    re.IGNORECASE,
)


def _rounding(digits: str) -> float:
    """Half a unit of the last written digit: "5" -> 0.5, "5.25" -> 0.005."""
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    return 0.5 * 10.0**-decimals


def number_value(m: re.Match, text: str) -> Value:
    """The value of a number match: its interval, in base units when it has a unit."""
    dimension, size = "", 1.0
    if m["height"]:
        amount = int(m["ft"]) * 12 + float(m["inch"])
        half = _rounding(m["inch"])
        dimension, size = "length", 0.0254
    elif m["currency"]:
        digits = m["cn"]
        scale = _SCALES.get((m["cs"] or "").lower(), 1.0)
        amount = float(digits.replace(",", "")) * scale
        half = _rounding(digits) * scale if m["cs"] else 0.0
    elif m["n"]:
        digits = m["n"]
        scale = _SCALES.get((m["scale"] or "").lower(), 1.0)
        amount = float(digits.replace(",", "")) * scale
        half = _rounding(digits) * scale if m["scale"] else 0.0
        if m["unit"]:
            dimension, size = _UNITS[m["unit"].lower()]
            half = _rounding(digits) * scale  # a measure is rounded as written
    else:
        scale = _SCALES.get((m["wscale"] or "").lower(), 1.0)
        amount = _WORDS.index(m["word"].lower()) * scale
        half = 0.5 * scale if m["wscale"] else 0.0
    written = (amount - half, amount + half)
    rough = _ROUGH.search(text[max(0, m.start() - 30) : m.start()])
    if rough:  # a quarter on the side the words put it: "over 60" is 60 to 75, not 60
        share = ROUGH_SHARE * amount
        low = amount if rough["above"] else amount - max(half, share)
        high = amount if rough["below"] else amount + max(half, share)
        written = (low, high)
    return Value("number", written[0] * size, written[1] * size, m.group(), m.start(), m.end(),
                 dimension, written)  # fmt: skip


# A game's score ("a 2–1 victory", "won 3-1"): numbers joined by dashes, with a word of
# games just after or a result just before. A season's record ("a record of 8-9") counts
# wins and losses, and stays numbers.
_JOINED = re.compile(r"(?<![\w.,])\d{1,3}(?:\s?[–-]\s?\d{1,3})+(?![\w]|[.,]\d)")
_GAME_AFTER = re.compile(
    r"(?:\s+\S+){0,2}?\s+(?:victory|win|loss|defeat|draw|tie|lead|game|match|final)\b",
    re.IGNORECASE
)  # fmt: skip
_RESULT_BEFORE = re.compile(r"\b(?:won|lost|beat|defeated|drew|score)\b\W+(?:\w+\W+){0,2}$",
                            re.IGNORECASE)  # fmt: skip


def score_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` gives a game's score, which counts nothing.

    Example:
        >>> t = "It won 3-1, a 2–1 game victory; a record of 8-9, 3–4 children."
        >>> [t[s:e] for s, e in score_spans(t)]
        ['3-1', '2–1']
    """
    return [m.span() for m in _JOINED.finditer(text)
            if _GAME_AFTER.match(text, m.end())
            or _RESULT_BEFORE.search(text, 0, m.start())]  # fmt: skip


# A count this many times one period's count of the same thing may be a total of several
# ("over 27,000 yards" against a season's 3,195); a count nearer it is that period's own.
TOTAL_OVER_PERIOD = 2
# a sentence that gives its counts for a period without a year in it
PERIOD_WORDS = re.compile(r"\bseasons?\b|\bthat year\b", re.IGNORECASE)


def a_total_of(count: Value, fact: str, period_counts: Iterable[Value], text: str) -> bool:
    """Whether ``count``, a number of ``fact`` (which gives no period), can be the total of
    the counts ``text`` gives for one period (a year, a season): ``text`` counts the same
    thing (the word after the number: "21 touchdowns"), and the fact's count is more than
    ``TOTAL_OVER_PERIOD`` times each of those.

    Example:
        >>> from factscore_local.pipeline.signals.slot_values import read_values
        >>> text = "In 1981 he threw for 3,195 yards."
        >>> fact = "He threw for over 27,000 yards."
        >>> a_total_of(read_values(fact)[0], fact, read_values(text), text)
        True
    """
    thing = _counted(fact, count.end)
    same = [c for c in period_counts if c.kind == "number" and _counted(text, c.end) == thing]
    return bool(same) and all(count.high > TOTAL_OVER_PERIOD * c.high for c in same)


def _counted(text: str, end: int) -> str:
    """The stem of the word right after a number ("touchdown" in "21 touchdowns")."""
    m = re.match(r"\W*([A-Za-z]+)", text[end:])
    return stem(m.group(1).lower()) if m else ""


_CAPITALISED = re.compile(r"[A-Z][\w'-]*")
_FIRST_WORDS = {"In", "On", "By", "At", "Of", "From", "Since", "About", "Over", "The"}


def in_name(text: str, m: re.Match) -> bool:
    """Whether a number is part of a name: a capitalised number word inside a sentence
    ("Hori appeared in Seven Samurai"), or digits right after a capitalised word that does
    not open the sentence ("Channel 4 News", "The Loyal 47 Ronin")."""
    before = text[: m.start()].rstrip()
    words = before.split()
    if m["word"]:
        return m["word"][0].isupper() and bool(words) and not before.endswith((".", "!", "?"))
    if not words or m["currency"] or not _CAPITALISED.fullmatch(words[-1]):
        return False
    opens = len(words) == 1 or words[-2].endswith((".", "!", "?"))
    return not opens and words[-1] not in _FIRST_WORDS and words[-1] not in MONTHS
