"""A place in the frame the fact gives it, for the slot check (``slots.py``).

Places are not slots of the check: a page names many, in many roles ("moved across the Ohio
River", "won the Ohio primary"), so a place it does not name beside a fact's words says
little. One case is plain enough to read without a model: the passages put *another*
place of the same kind in the fact's own frame, the word and preposition before it. "He
worked as a lawyer in Ohio" against "he became a lawyer in Illinois": the frame
"lawyer in" holds a US state in both, and the passages never write Ohio there.

A place is a country of the vocabulary or a US state (each kind stands only for its own:
"born in Tours" and "born in France" are both true). Left out: Washington and Georgia
(each also a city or a country), and a place directly followed by a capitalised word (part
of a name: "Ohio State University", "New York City"). The passages' frame must not have the
fact's place in its sentence ("a lawyer in Illinois and Ohio").

Example:
    >>> place_frame_verdict("He worked as a lawyer in Ohio.",
    ...                     ["Largely self-educated, he became a lawyer in Illinois."])
    'conflict'
    >>> place_frame_verdict("He worked as a lawyer in Illinois.",
    ...                     ["Largely self-educated, he became a lawyer in Illinois."]) is None
    True
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from factscore_local.pipeline.signals.lexical import content_words
from factscore_local.pipeline.signals.slot_roles import SENTENCE_END
from factscore_local.pipeline.signals.vocabulary import COUNTRIES, US_STATES

_AMBIGUOUS = {"Washington", "Georgia"}  # a city or a country as well as a state
KIND_OF = {
    **{place: "country" for place in COUNTRIES if place not in _AMBIGUOUS},
    **{place: "us state" for place in US_STATES if place not in _AMBIGUOUS},
}
_PLACE = "|".join(sorted(map(re.escape, KIND_OF), key=len, reverse=True))
# "<word> <preposition> [the] <place>", the place not the start of a longer name.
FRAME = re.compile(rf"\b([a-z]+) (in|at|from|of) (?:the )?({_PLACE})(?![\w-])(?!,? [A-Z][a-z])")


def frames(text: str) -> list[tuple[str, str, str]]:
    """The (word, preposition, place) frames of a text whose word is a content word.

    Example:
        >>> frames("He was born in Ohio and grew up in Indiana.")
        [('born', 'in', 'Ohio')]
    """
    return [
        (m.group(1), m.group(2), m.group(3))
        for m in FRAME.finditer(text)
        if content_words(m.group(1))
    ]


def frame_stem(word: str) -> str:
    """A frame's word without a plural -s ("lawyers in" is "lawyer in")."""
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


# Each sentence of a set of passages with its frames (read once for the facts sharing them).
SentenceFrames = tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...]


def sentence_frames(passages: Sequence[str]) -> SentenceFrames:
    """The sentences of passage texts that hold a frame, each with its frames."""
    sentences = (s for text in passages for s in SENTENCE_END.split(text) if s.strip())
    return tuple((s, found) for s in sentences if (found := tuple(frames(s))))


def place_frame_verdict(fact: str, passages: Sequence[str] | Callable[[], SentenceFrames]
                        ) -> str | None:  # fmt: skip
    """``"conflict"`` when the passages put another place of the same kind in one of the
    fact's frames, and write the fact's place in no sentence that holds that frame nor in
    the frame itself; else None. ``passages``: their texts, or a function that gives their
    ``sentence_frames`` (called only when the fact has a frame)."""
    own = frames(fact)
    if not own:
        return None
    read = passages() if callable(passages) else sentence_frames(passages)
    for word, preposition, place in own:
        rivals = False
        for sentence, found in read:
            for w, p, other in found:
                if frame_stem(w) != frame_stem(word) or p != preposition:
                    continue
                if other == place or place in sentence:
                    return None  # the passages give the fact's place in its frame
                rivals = rivals or KIND_OF[other] == KIND_OF[place]
        if rivals:
            return "conflict"
    return None
