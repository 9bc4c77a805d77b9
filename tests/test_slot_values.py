"""Values with their extent (``signals/slot_values.py``): times and numbers read as
intervals, and when two of them meet."""

from __future__ import annotations

import pytest

from factscore_local.pipeline.signals.slot_intervals import first_year, last_year
from factscore_local.pipeline.signals.slot_values import numbers, read_values, times


def span(text: str) -> tuple[int, int]:
    """The years of the one time value of ``text``."""
    found = times(text)
    assert len(found) == 1, [v.text for v in found]
    return first_year(found[0]), last_year(found[0])


@pytest.mark.parametrize(
    ("text", "years"),
    [
        ("He was born in 1879.", (1879, 1879)),
        ("She moved to film in the late 1960s.", (1965, 1969)),
        ("in the early 1960s", (1960, 1963)),
        ("in the mid-1990s", (1993, 1996)),
        ("He rose to fame in the 1930s.", (1930, 1939)),
        ("Grease is a 1970s film.", (1970, 1979)),
        ("a hit of the '60s", (1960, 1969)),
        ("music of the sixties", (1960, 1969)),
        ("in the 19th century", (1800, 1900)),
        ("the nineteenth century", (1800, 1900)),
        ("in the early 20th century", (1900, 1940)),
        ("in the late 20th century", (1950, 2000)),
        ("at the turn of the 20th century", (1895, 1905)),
        ("in the 1800s", (1800, 1899)),
        ("in the 2000s", (2000, 2009)),
        ("from 1954 to 1957", (1954, 1957)),
        ("1954–57", (1954, 1957)),
        ("between 1954 and 1957", (1954, 1957)),
        ("in the 1950s-60s", (1950, 1969)),
        ("the 1999–00 season", (1999, 2000)),
        ("about 1950", (1946, 1954)),
        ("around 1950", (1946, 1954)),
        ("(c. 1850)", (1846, 1854)),
        ("circa 1850", (1846, 1854)),
        ("in March 1902", (1902, 1902)),
    ],
)
def test_times_are_read_with_their_extent(text, years):
    assert span(text) == years


@pytest.mark.parametrize(
    "text",
    [
        "born on November 26, 1942",
        "born 26 November 1942",
        "born Nov. 26, 1942",
        "on the 26th of November 1942",
        "November 26th, 1942",
    ],  # fmt: skip
)
def test_a_full_date_is_one_day_and_its_day_no_number(text):
    (value,) = times(text)
    assert value.low == value.high  # one day
    assert numbers(text) == ()  # the 26 is the day, never a number
    (other_day,) = times("born 2 November 1942")
    (same_year,) = times("in 1942")
    assert not value.meets(other_day) and value.meets(same_year)


def test_a_day_and_month_without_a_year_are_no_value():
    assert read_values("On 14 March he sailed with 3 ships.")[0].text == "3"
    assert [v.text for v in read_values("on March 14 he sailed")] == []


def test_life_dates_are_two_days_not_a_range():
    found = times("Albert Einstein (14 March 1879 – 18 April 1955) was a physicist.")
    assert [v.text for v in found] == ["14 March 1879", "18 April 1955"]
    (range_,) = times("(1879–1955)")
    assert (first_year(range_), last_year(range_)) == (1879, 1955)


@pytest.mark.parametrize(
    ("fact", "page", "meet"),
    [
        ("in the late 1960s", "her first film in 1969", True),
        ("in the late 1960s", "her first film in 1962", False),
        ("in the 1930s", "his breakthrough in 1935", True),
        ("in the 19th century", "in 1879", True),
        ("in the 19th century", "in 1921", False),
        ("between 1954 and 1957", "in 1955", True),
        ("between 1954 and 1957", "in 1959", False),
        ("about 1950", "in 1952", True),
        ("about 1950", "in 1960", False),
        ("in 1969", "in the late 1960s", True),
    ],
)
def test_two_times_agree_when_their_intervals_meet(fact, page, meet):
    (a,), (b,) = times(fact), times(page)
    assert a.meets(b) is meet and b.meets(a) is meet


def test_numbers_with_their_scale_unit_and_approximation():
    (sold,) = numbers("It sold 2.5 million copies.")
    assert (sold.low, sold.high) == (2_450_000, 2_550_000)  # rounded as written
    (exact,) = numbers("It sold 2,500,000 copies.")
    assert sold.meets(exact)
    (money,) = numbers("a budget of $5 million")
    assert money.meets(numbers("5,200,000 dollars")[0])
    (over,) = numbers("She appeared in over 60 films.")
    assert over.meets(numbers("63 films")[0]) and not over.meets(numbers("90 films")[0])
    (plain,) = numbers("She appeared in 60 films.")
    assert not plain.meets(numbers("63 films")[0])  # an exact count must be stated
    assert [v.text for v in numbers("three children and 12 grandchildren")] == ["three", "12"]


def test_a_measure_meets_the_same_measure_in_other_units():
    feet, metres = numbers("He is 6 ft 2 in (1.88 m) tall.")
    assert feet.dimension == metres.dimension == "length" and feet.meets(metres)
    (kg,) = numbers("weighing 90 kg")
    assert not kg.meets(metres)  # a mass is no length
    (bare,) = numbers("he is 6 feet")
    assert bare.meets(numbers("1.83 m")[0])


def test_years_numbers_and_percent():
    assert [v.kind for v in read_values("In 1990, he won 3 of 1,985 votes.")] == [
        "time",
        "number",
        "number",
    ]
    assert times("a 1500 percent rise") == ()
    assert times("in his 60s") == ()  # an age, not a decade
