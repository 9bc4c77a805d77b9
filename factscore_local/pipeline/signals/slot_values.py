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

The interval and its comparisons are ``slot_intervals.py``'s, the reading of times
``slot_times.py``'s and of numbers ``slot_numbers.py``'s; this module puts them together.

Example:
    >>> from factscore_local.pipeline.signals.slot_intervals import first_year, last_year
    >>> late = read_values("She moved to film in the late 1960s.")[0]
    >>> late.kind, late.text, first_year(late), last_year(late)
    ('time', 'the late 1960s', 1965, 1969)
    >>> [v.text for v in read_values("He was born on November 26, 1942, the 3rd of 5.")]
    ['November 26, 1942', '5']
"""

from __future__ import annotations

import functools

from factscore_local.pipeline.signals.slot_intervals import Value
from factscore_local.pipeline.signals.slot_numbers import (
    NUMBERS,
    in_name,
    number_value,
    score_spans,
)
from factscore_local.pipeline.signals.slot_times import (
    APPROXIMATE,
    APPROXIMATE_YEARS,
    MASK,
    time_spans,
)


@functools.lru_cache(maxsize=65536)
def read_values(text: str) -> tuple[Value, ...]:
    """The times and numbers of a text, in the order they stand.

    Example:
        >>> [(v.kind, v.text) for v in read_values("From 1954 to 1957 he sold 2.5 million.")]
        [('time', '1954 to 1957'), ('number', '2.5 million')]
    """
    out = []
    taken = []
    for start, end, days in time_spans(text):
        taken.append((start, end))
        if days == MASK:
            continue
        low, high, *ends = days
        written = text[start:end]
        if APPROXIMATE.search(text[max(0, start - 20) : start]):
            low -= 366 * APPROXIMATE_YEARS
            high += 366 * APPROXIMATE_YEARS
            ends = []  # "around 1954 to 1957": a loose range, not two dates
        span = (ends[0], ends[1]) if ends else None
        out.append(Value("time", low, high, written, start, end, ends=span))
    taken += score_spans(text)  # a score counts nothing
    for m in NUMBERS.finditer(text):
        if in_name(text, m):
            continue  # "Seven Samurai", "Channel 4": part of a name, not an amount
        if any(s < m.end() and m.start() < e for s, e in taken):
            continue  # a date's day, a range's end: part of a time
        out.append(number_value(m, text))
    return tuple(sorted(out, key=lambda v: v.start))


def times(text: str) -> tuple[Value, ...]:
    """The time values of a text."""
    return tuple(v for v in read_values(text) if v.kind == "time")


def numbers(text: str) -> tuple[Value, ...]:
    """The number values of a text (not the days of dates, nor years)."""
    return tuple(v for v in read_values(text) if v.kind == "number")
