"""What a conflicting slot is: the fact's value and the value its passage gives instead,
with that passage's sentence, for the reason beside a vetoed fact (``decision/reasons.py``).

The slot check (``slots.py``) only says *that* a kind of value conflicts; this reads the
passages again, for the few facts a veto rejects, to say *which* values.
"""

from __future__ import annotations

from collections.abc import Sequence

from factscore_local.pipeline.signals.place_frames import frame_stem, frames, sentence_frames
from factscore_local.pipeline.signals.slot_roles import SENTENCE_END
from factscore_local.pipeline.signals.slots import slots

SNIPPET = 160  # characters of the passage's sentence shown


def _snippet(sentence: str) -> str:
    sentence = " ".join(sentence.split())
    return sentence if len(sentence) <= SNIPPET else sentence[: SNIPPET - 1].rstrip() + "…"


def _listed(values: set[str]) -> str:
    return ", ".join(sorted(values))


def conflict_detail(fact: str, kind: str, passages: Sequence[tuple[str, str]]) -> str:
    """The fact's value of ``kind`` and the passage's other one, quoted.

    Args:
        fact: the fact.
        kind: ``number``, ``year``, ``nationality`` or ``place``.
        passages: (label, text) of its passages, e.g. ("Abraham Lincoln #3", text).

    Returns:
        e.g. ``'Ohio', where "Abraham Lincoln #3" gives 'Illinois': "... a lawyer in
        Illinois ..."``; just the fact's value when no passage sentence shows another.

    Example:
        >>> conflict_detail("He won 12 titles.", "number", [("p1", "He won 8 titles.")])
        '12, where p1 gives 8: "He won 8 titles."'
    """
    if kind == "place":
        return _place_detail(fact, passages)
    own = slots(fact).get(kind, set())
    for label, text in passages:
        for sentence in SENTENCE_END.split(text):
            others = slots(sentence).get(kind, set()) - own
            if others:
                return (
                    f'{_listed(own)}, where {label} gives {_listed(others)}: "{_snippet(sentence)}"'
                )
    return _listed(own) or kind


def _place_detail(fact: str, passages: Sequence[tuple[str, str]]) -> str:
    own = frames(fact)
    for label, text in passages:
        for sentence, found in sentence_frames([text]):
            for word, preposition, place in own:
                for w, p, other in found:
                    if frame_stem(w) == frame_stem(word) and p == preposition and other != place:
                        return (f"'{word} {preposition} {place}', where {label} gives "
                                f"'{w} {p} {other}': \"{_snippet(sentence)}\"")  # fmt: skip
    return ", ".join(f"'{w} {p} {x}'" for w, p, x in own) or "its place"
