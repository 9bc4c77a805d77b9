"""Reading the times of a text into day intervals, for ``slot_values.py``: a year, a decade,
a century, a range of years or decades, a month or a full date, each in its written forms
(``_time_patterns``), and the words that make a time approximate.
"""

from __future__ import annotations

import calendar
import math
import re
from collections.abc import Callable
from datetime import date

from factscore_local.pipeline.signals.slot_intervals import years

YEAR = r"(?:1[0-9]{3}|20[0-2][0-9])"
# A year on its own: not part of a longer number ("1,985", "1985.5"), nor an amount
# ("$1500", "1500 people" stays a year: the text alone cannot tell).
_YEAR_ALONE = rf"(?<![\d.,$£€#])(?P<year>{YEAR})(?!\d|[.,]\d|\s*(?:%|percent\b))"
APPROXIMATE_YEARS = 3  # "about 1950", "c. 1950": this many years either side
# A decade's or century's part: its share of the span (overlapping: speech is loose).
PARTS = {"early": (0.0, 0.4), "mid": (0.3, 0.7), "late": (0.5, 1.0)}

MONTHS = {
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
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_PART = r"(?:(?P<part>early|mid|late)[\s-]+)?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_DECADE_WORDS = {w: 10 * i for i, w in enumerate(
    ["", "", "twenties", "thirties", "forties", "fifties", "sixties", "seventies",
     "eighties", "nineties"]) if w}  # fmt: skip
_ORDINALS = {w: i for i, w in enumerate(
    ["", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
     "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth",
     "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth"]) if w}  # fmt: skip
# Words before a time that make it approximate (``APPROXIMATE_YEARS`` either side).
APPROXIMATE = re.compile(
    r"(?:\b(?:about|around|circa|approximately|roughly|approx\.|ca\.)|(?<![\w.])c\.)\s*$",
    re.IGNORECASE,
)


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
        return _day(int(m["year"]), MONTHS[m["month"]], int(m["day"]))

    def my(m):
        return _month(int(m["year"]), MONTHS[m["month"]])

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


def time_spans(text: str) -> list[tuple[int, int, tuple[int, ...]]]:
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
