"""Where a vetoed fact's conflicting value stands in its passage, for the report to mark.

A slot veto's reason (``pipeline/signals/slot_details.py``) names the passage that gives
another value and quotes its sentence, e.g. ``vetoed: its place conflicts with its passages
('lawyer in Ohio', where "Abraham Lincoln" #209 gives 'lawyer in Illinois': "... he became
a lawyer in Illinois, ...")``. This finds that sentence and that value in the passage's
text, as character spans the page's script wraps in ``<mark>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# where "Title" #id gives VALUE: "quoted sentence"   (VALUE may carry ' for "terms"')
_CITED = re.compile(r'where "(?P<title>[^"]*)" #(?P<pid>[^\s:,)]+) gives (?P<said>.+?)'
                    r'(?:: "(?P<quote>.*)")?\)?$')  # fmt: skip
# "the birth as 14 March 1879", "its lead's nationality as American": the value is after "as"
_ROLE = re.compile(r"^(?:the|its) [\w' ]+? as ")
_TERMS = re.compile(r' for "[^"]*"$')


@dataclass(frozen=True)
class Conflict:
    """The passage a veto cites, the values it gives instead, and the sentence quoted."""

    passage_id: str
    values: tuple[str, ...]
    quote: str


def cited_conflict(reason: str | None) -> Conflict | None:
    """The passage, values and quote a veto's reason cites; None for any other reason.

    Example:
        >>> cited_conflict('vetoed: its number conflicts with its passages (12, where '
        ...                '"Ann" #7 gives 8 for "won, titles": "She won 8 titles.")')
        Conflict(passage_id='7', values=('8',), quote='She won 8 titles.')
    """
    if not reason or not reason.startswith("vetoed:"):
        return None
    found = _CITED.search(reason)
    if found is None:
        return None
    said = _TERMS.sub("", _ROLE.sub("", found["said"].strip()))
    values = tuple(v.strip().strip("'") for v in said.split(", ") if v.strip().strip("'"))
    return Conflict(found["pid"], values, (found["quote"] or "").strip("…").strip())


def _words(text: str) -> re.Pattern:
    """``text`` as a pattern that matches across any run of whitespace."""
    return re.compile(r"\s+".join(re.escape(w) for w in text.split()), re.IGNORECASE)


def _value_span(value: str, text: str, start: int, end: int) -> tuple[int, int] | None:
    """The value in text[start:end] (else in the whole text); a place's frame ('lawyer in
    Illinois') that is not there verbatim is looked for by its place alone."""
    tries = [value]
    parts = value.split(" ", 2)
    if len(parts) == 3:
        tries.append(parts[2])
    for candidate in tries:
        pattern = _words(candidate)
        for lo, hi in ((start, end), (0, len(text))):
            hit = pattern.search(text, lo, hi)
            if hit:
                return hit.span()
    return None


def conflict_marks(conflict: Conflict, text: str) -> list[tuple[int, int, str]]:
    """Spans of the passage's text to mark: the quoted sentence (``sentence``) and, in it,
    the conflicting values (``value``); flat and in order, so the sentence is cut around
    each value.

    Args:
        conflict: from ``cited_conflict``.
        text: the cited passage's text (as the index gives it).

    Returns:
        (start, end, kind) spans, e.g. ``[(10, 40, "sentence"), (40, 48, "value"), ...]``;
        empty when neither is found.
    """
    quote = _words(conflict.quote).search(text) if conflict.quote else None
    start, end = quote.span() if quote else (0, len(text))
    values: list[tuple[int, int]] = []
    for lo, hi in sorted({s for v in conflict.values if (s := _value_span(v, text, start, end))}):
        if not values or lo >= values[-1][1]:  # of overlapping values, the first stands
            values.append((lo, hi))
    marks = [(lo, hi, "value") for lo, hi in values]
    if quote:  # the sentence, around the values in it
        at = start
        for lo, hi in values:
            if hi <= at or lo >= end:
                continue
            if lo > at:
                marks.append((at, lo, "sentence"))
            at = hi
        if at < end:
            marks.append((at, end, "sentence"))
    return sorted(marks)
