"""Values with their extent, for the slot check (``slots.py``).

A value is not its surface: "the late 1960s" is the years 1965 to 1969, "November 26,
1942" is one day (its 26 is no number), "about 1950" is a few years either side, "5
million" is a rounded amount and "6 ft 2 in" a length. This module reads such
expressions into intervals, and two values agree when their intervals meet:

- **times** (as day numbers, ``date.toordinal``): a year; a decade ("the 1960s", "the
  late 1960s", "'60s", "the sixties"); a century ("the 19th century", "early 20th
  century", "the 1800s"); a range of years or decades ("1954 to 1957", "1954–57",
  "between 1954 and 1957", "1950s-60s"); a month ("March 1902"); a full date ("November
  26, 1942", "26 November 1942"); each widened by ``APPROXIMATE_YEARS`` after "about",
  "around", "circa", "c." and the like. A day and month without a year ("on 14 March")
  is read as no value, so that its day is no number either.
- **numbers**: digits (with thousands groups and decimals) and number words up to twelve,
  with a scale word ("5 million": the written digits' rounding, 4.5 to 5.5 million), a
  unit of length, mass or area (in base units, rounded as written: "1.88 m" meets "6 ft 2
  in"), and a quarter on the side its words put it: "over 60" is 60 to 75, "nearly
  3,000" 2,250 to 3,000, "about 60" 45 to 75. A number inside a time (a date's day, a
  range's "57") is not a number.
- **spans**: "from 1954 to 1957" (or "1954–57") says when something began and ended:
  another span gives it only with both ends (``agrees``); a year within it meets it.

Two intervals meet when they share more than an end, or one is a point within the other:
"nearly 3,000" and "nearly 4,000" only touch, while 40 is "over 40".

Regular expressions do the reading: the date parsers at hand read one point in time (a
datetime, missing parts filled with defaults) and know no decades, centuries, ranges or
approximations, which are the forms that matter here.

Example:
    >>> late = read_values("She moved to film in the late 1960s.")[0]
    >>> late.kind, late.text, first_year(late), last_year(late)
    ('time', 'the late 1960s', 1965, 1969)
    >>> [v.text for v in read_values("He was born on November 26, 1942, the 3rd of 5.")]
    ['November 26, 1942', '5']
"""

from __future__ import annotations

import calendar
import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

YEAR = r"(?:1[0-9]{3}|20[0-2][0-9])"
# A year on its own: not part of a longer number ("1,985", "1985.5"), nor an amount
# ("$1500", "1500 people" stays a year: the text alone cannot tell).
_YEAR_ALONE = rf"(?<![\d.,$£€#])(?P<year>{YEAR})(?!\d|[.,]\d|\s*(?:%|percent\b))"
APPROXIMATE_YEARS = 3  # "about 1950", "c. 1950": this many years either side
ROUGH_SHARE = 0.25  # "over 60 films", "about 4,000": a quarter either side
# A decade's or century's part: its share of the span (overlapping: speech is loose).
PARTS = {"early": (0.0, 0.4), "mid": (0.3, 0.7), "late": (0.5, 1.0)}

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("January", "Jan"),
            ("February", "Feb"),
            ("March", "Mar"),
            ("April", "Apr"),
            ("May",),
            ("June", "Jun"),
            ("July", "Jul"),
            ("August", "Aug"),
            ("September", "Sept", "Sep"),
            ("October", "Oct"),
            ("November", "Nov"),
            ("December", "Dec"),
        ],  # fmt: skip
        start=1,
    )
    for name in names
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_PART = r"(?:(?P<part>early|mid|late)[\s-]+)?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_DECADE_WORDS = {w: 10 * i for i, w in enumerate(
    ["", "", "twenties", "thirties", "forties", "fifties", "sixties", "seventies",
     "eighties", "nineties"]) if w}  # fmt: skip
_ORDINALS = {w: i for i, w in enumerate(
    ["", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
     "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth",
     "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth"]) if w}  # fmt: skip
_APPROXIMATE = re.compile(
    r"(?:\b(?:about|around|circa|approximately|roughly|approx\.|ca\.)|(?<![\w.])c\.)\s*$",
    re.IGNORECASE,
)
# Words that make a number an approximation, by the side of it the amount lies on.
_ROUGH = re.compile(
    r"\b(?:(?P<above>over|more than|at least|upwards of|in excess of)|"
    r"(?P<below>nearly|almost|up to|close to|just under|fewer than|less than)|"
    r"about|around|approximately|roughly|some|estimated|an estimated|approx\.)\s+$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Value:
    """A value read from a text: its kind (``"time"`` or ``"number"``), its interval
    (``low`` to ``high``: day numbers for a time; for a number, in base units when it has a
    ``dimension``), the interval as written (``written``: a number in its own unit), the
    text and where it stands."""

    kind: str
    low: float
    high: float
    text: str
    start: int = 0
    end: int = 0
    dimension: str = ""  # a number's: "length", "mass", "area"; "" for a count or amount
    written: tuple[float, float] | None = None
    # A span's two ends ("from 1954 to 1957": when it began and when it ended), each
    # (low, high); None for a point in time, a loose range ("between ... and ...") or a number.
    ends: tuple[tuple[float, float], tuple[float, float]] | None = None

    def meets(self, other: Value) -> bool:
        """Whether the two values can be the same: of one kind, their intervals meet (a
        number with a unit meets one of the same dimension, or a bare number as written).

        Example:
            >>> decade, year = read_values("the 1960s"), read_values("in 1969")
            >>> decade[0].meets(year[0])
            True
        """
        if self.kind != other.kind:
            return False
        a, b = (self.low, self.high), (other.low, other.high)
        if self.kind == "number" and self.dimension != other.dimension:
            if self.dimension and other.dimension:
                return False
            a, b = self.written or a, other.written or b
        return _overlap(a, b)


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether two closed intervals share more than an end, or one is a point in the
    other ("nearly 3,000" and "nearly 4,000" only touch at 3,000; 40 is "over 40")."""
    low, high = max(a[0], b[0]), min(a[1], b[1])
    return high > low or (high == low and (a[0] == a[1] or b[0] == b[1]))


def _end(value: Value, i: int) -> Value:
    low, high = value.ends[i]
    return Value("time", low, high, value.text, value.start, value.end)


def agrees(value: Value, other: Value) -> bool:
    """Whether ``other`` gives ``value``: a span by a span with both ends meeting ("1933 to
    1938" is not "1929 to 1938"), anything else by an interval that meets it."""
    if value.ends and other.ends:
        return all(_end(value, i).meets(_end(other, i)) for i in (0, 1))
    return value.meets(other)


def stated_in(value: Value, found) -> bool:
    """Whether one of the values ``found`` gives ``value`` (``agrees``)."""
    return any(agrees(value, o) for o in found)


def first_year(value: Value) -> int:
    """The first year of a time value."""
    return date.fromordinal(int(value.low)).year


def last_year(value: Value) -> int:
    """The last year of a time value."""
    return date.fromordinal(int(value.high)).year


def years(first: int, last: int) -> tuple[int, int]:
    """The days of the years ``first`` to ``last``, as (low, high) day numbers."""
    first, last = max(1, min(first, 9999)), max(1, min(last, 9999))
    return date(first, 1, 1).toordinal(), date(last, 12, 31).toordinal()


def _month(year: int, month: int) -> tuple[int, int]:
    days = calendar.monthrange(year, month)[1]
    return date(year, month, 1).toordinal(), date(year, month, days).toordinal()


def _day(year: int, month: int, day: int) -> tuple[int, int]:
    if not 1 <= day <= calendar.monthrange(year, month)[1]:
        return _month(year, month)  # "31 February": the month, not a guess at the day
    return date(year, month, day).toordinal(), date(year, month, day).toordinal()


def _part(first: int, span: int, part: str | None) -> tuple[int, int]:
    """The years of a span of ``span`` years from ``first``, or of its early, mid or late
    part."""
    lo, hi = PARTS.get((part or "").lower(), (0.0, 1.0))
    return first + math.floor(lo * span), first + math.ceil(hi * span) - 1


def _decade_start(text: str) -> int:
    """The first year of a decade as written: "1960s", "'60s", "60s", "sixties"."""
    text = text.lower().lstrip("'’").removeprefix("nineteen").strip(" -")
    if text in _DECADE_WORDS:
        return 1900 + _DECADE_WORDS[text]
    digits = text.rstrip("s")
    if len(digits) == 2:  # "'60s": of the 1900s ("'00s" and "'10s" of the 2000s)
        return (2000 if digits in ("00", "10") else 1900) + int(digits)
    return int(digits)


def _decade_span(text: str, part: str | None) -> tuple[int, int]:
    start = _decade_start(text)
    # "the 1800s" is a century (and "the 1900s" taken as one: the wider reading)
    span = 100 if len(text.rstrip("s")) == 4 and start % 100 == 0 and start < 2000 else 10
    return _part(start, span, part)


_DECADE = r"(?:(?:1[0-9]|20)[0-9]0s|['’]\d0s)"
_BC = re.compile(r"\s*(?:BC|BCE|B\.C\.)(?!\w)")  # a year before the common era: no value here
MASK: tuple[int, ...] = ()  # a time's text that gives no value: read as neither time nor number
_DECADE_WORD = rf"(?:nineteen[\s-]?)?(?:{'|'.join(_DECADE_WORDS)})"


def _time_patterns() -> list[tuple[re.Pattern, Callable[[re.Match], tuple[int, ...] | None]]]:
    """(pattern, reader) for each written form of a time, the reader giving its days,
    ``MASK`` for a form that holds no value (a day and month without a year), or None
    where the match is no time after all (a "range" of more than a century)."""

    def mdy(m):
        return _day(int(m["year"]), _MONTHS[m["month"]], int(m["day"]))

    def my(m):
        return _month(int(m["year"]), _MONTHS[m["month"]])

    def year_range(m, span=True):
        first, last = int(m["a"]), m["b"]
        end = int(last) if len(last) == 4 else first // 100 * 100 + int(last)
        end += 100 if end < first else 0  # "1999–00"
        if end - first > 100:
            return None
        days = years(first, end)
        return (*days, years(first, first), years(end, end)) if span else days

    def decade(m):
        return years(*_decade_span(m["decade"], m["part"]))

    def decade_range(m):
        first = _decade_span(m["a"], m["pa"])[0]
        return years(first, _decade_span(m["b"], m["pb"])[1])

    def century(m):
        n = int(m["n"]) if m["n"] else _ORDINALS[m["word"].lower()]
        if m["turn"]:
            return years(100 * (n - 1) - 5, 100 * (n - 1) + 5)
        return years(*_part(100 * (n - 1), 101, m["part"]))  # 1800 to 1900: either count

    def year(m):
        return years(int(m["year"]), int(m["year"]))

    ordinal = "|".join(_ORDINALS)
    after_month = r"\.?,?\s+(?:of\s+)?"
    forms = [
        (rf"\b(?P<month>{_MONTH})\.?\s+{_DAY}\b,?\s+(?P<year>{YEAR})(?!\d)", mdy),
        (rf"\b{_DAY}\s+(?:of\s+)?(?P<month>{_MONTH})\b{after_month}(?P<year>{YEAR})(?!\d)", mdy),
        (
            rf"\b(?:(?:early|mid|late)[\s-]+)?(?P<month>{_MONTH})\b{after_month}(?P<year>{YEAR})"
            r"(?!\d)",
            my,
        ),  # fmt: skip
        (rf"\b(?P<month>{_MONTH})\.?\s+{_DAY}\b(?!\s*[-–]\s*\d)", lambda m: MASK),
        (rf"\b{_DAY}\s+(?:of\s+)?(?P<month>{_MONTH})\b", lambda m: MASK),
        (
            rf"\b[Bb]etween\s+(?P<a>{YEAR})\s+and\s+(?P<b>{YEAR})(?!\d)",
            lambda m: year_range(m, span=False),
        ),  # fmt: skip
        (
            rf"(?<![\d.,$£€#])(?P<a>{YEAR})\s*(?:–|—|-|/|\s(?:to|until|till|through|thru)\s)\s*"
            rf"(?P<b>{YEAR}|\d{{2}})(?![\d%]|\s*(?:st|nd|rd|th)?\s+(?:{_MONTH})\b)",
            year_range,
        ),
        (
            rf"(?:\bthe\s+)?(?:(?P<pa>early|mid|late)[\s-]+)?(?P<a>{_DECADE})\s*"
            rf"(?:–|—|-|/|\s(?:to|and|or|through)\s)\s*(?:the\s+)?"
            rf"(?:(?P<pb>early|mid|late)[\s-]+)?(?P<b>{_DECADE}|\d0s)\b",
            decade_range,
        ),
        (
            rf"(?:\bthe\s+)?(?:(?P<turn>turn\s+of\s+the)\s+|{_PART})(?:(?P<n>\d{{1,2}})"
            rf"(?:st|nd|rd|th)|(?P<word>{ordinal}))[\s-]+century\b(?!\s*(?:BC|BCE|B\.C\.))",
            century,
        ),  # fmt: skip
        (rf"(?:\bthe\s+)?{_PART}(?P<decade>{_DECADE})(?!\w)", decade),
        (rf"\bthe\s+{_PART}(?P<decade>\d0s|{_DECADE_WORD})\b", decade),
        (rf"(?:\b(?:early|mid|late)[\s-]+)?{_YEAR_ALONE}", year),
    ]
    return [(re.compile(p, re.IGNORECASE if i == 10 else 0), r) for i, (p, r) in enumerate(forms)]


_TIMES = _time_patterns()
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
_NUMBERS = re.compile(
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


def _number(m: re.Match, text: str) -> Value:
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


def _times(text: str) -> list[tuple[int, int, tuple[int, ...]]]:
    """(start, end, days or ``MASK``) of the times of a text: at each place the longest
    form, left to right, none overlapping."""
    found = []
    for pattern, reader in _TIMES:
        for m in pattern.finditer(text):
            days = reader(m)
            if days is not None:
                found.append((m.start(), m.end(), days))
    found = [(s, e, MASK if _BC.match(text, e) else days) for s, e, days in found]
    found.sort(key=lambda f: (f[0], -f[1]))
    out: list[tuple[int, int, tuple[int, ...]]] = []
    for start, end, days in found:
        if out and start < out[-1][1]:
            continue
        out.append((start, end, days))
    return out


_CAPITALISED = re.compile(r"[A-Z][\w'-]*")
_FIRST_WORDS = {"In", "On", "By", "At", "Of", "From", "Since", "About", "Over", "The"}


def _in_name(text: str, m: re.Match) -> bool:
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
    return not opens and words[-1] not in _FIRST_WORDS and words[-1] not in _MONTHS


@functools.lru_cache(maxsize=65536)
def read_values(text: str) -> tuple[Value, ...]:
    """The times and numbers of a text, in the order they stand.

    Example:
        >>> [(v.kind, v.text) for v in read_values("From 1954 to 1957 he sold 2.5 million.")]
        [('time', '1954 to 1957'), ('number', '2.5 million')]
    """
    out = []
    taken = []
    for start, end, days in _times(text):
        taken.append((start, end))
        if days == MASK:
            continue
        low, high, *ends = days
        written = text[start:end]
        if _APPROXIMATE.search(text[max(0, start - 20) : start]):
            low -= 366 * APPROXIMATE_YEARS
            high += 366 * APPROXIMATE_YEARS
            ends = []  # "around 1954 to 1957": a loose range, not two dates
        span = (ends[0], ends[1]) if ends else None
        out.append(Value("time", low, high, written, start, end, ends=span))
    for m in _NUMBERS.finditer(text):
        if _in_name(text, m):
            continue  # "Seven Samurai", "Channel 4": part of a name, not an amount
        if any(s < m.end() and m.start() < e for s, e in taken):
            continue  # a date's day, a range's end: part of a time
        out.append(_number(m, text))
    return tuple(sorted(out, key=lambda v: v.start))


def times(text: str) -> tuple[Value, ...]:
    """The time values of a text."""
    return tuple(v for v in read_values(text) if v.kind == "time")


def numbers(text: str) -> tuple[Value, ...]:
    """The number values of a text (not the days of dates, nor years)."""
    return tuple(v for v in read_values(text) if v.kind == "number")


def meets_any(value: Value, others) -> bool:
    """Whether ``value`` meets one of ``others``."""
    return any(value.meets(o) for o in others)
