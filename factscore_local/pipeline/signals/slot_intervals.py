"""The interval a slot value stands for (``Value``) and when two of them agree.

A time is an interval of day numbers (``date.toordinal``), a number one of amounts (in
base units when it has a unit); the reading of texts into values is ``slot_values.py``'s.
Two intervals meet when they share more than an end, or one is a point within the other:
"nearly 3,000" and "nearly 4,000" only touch, while 40 is "over 40".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


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
            >>> from factscore_local.pipeline.signals.slot_values import read_values
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


def meets_any(value: Value, others) -> bool:
    """Whether ``value`` meets one of ``others``."""
    return any(value.meets(o) for o in others)


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
