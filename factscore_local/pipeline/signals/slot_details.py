"""What a conflicting slot is: the fact's value, the role it plays, and the passage that
gives that role another value, for the reason beside a vetoed fact
(``decision/reasons.py``).

The slot check (``slots.py``) only says *that* a kind of value conflicts; this reads the
passages again, for the few facts a veto rejects, to say *which* values, in the order the
check decides: the topic's birth or death in its lead's life dates, a titled work's years,
the lead's nationality (``slot_roles.py``), then the sentence that shares the most of the
fact's terms among those giving values of its type. Where no passage gives the role a
value, the reason says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from factscore_local.pipeline.signals.person_roles import person_role_conflict
from factscore_local.pipeline.signals.place_frames import frame_stem, frames, sentence_frames
from factscore_local.pipeline.signals.slot_intervals import stated_in
from factscore_local.pipeline.signals.slot_roles import (
    BIRTH,
    DEATH,
    SENTENCE_END,
    about_topic,
    age_verdict,
    page_roles,
    works_named,
)
from factscore_local.pipeline.signals.slots import (
    WEAK,
    fact_terms,
    place,
    read_passages,
    slot_conflicts,
    slots,
    stated,
    value_text,
)

SNIPPET = 160  # characters of the passage's sentence shown
_LABEL_TITLE = re.compile(r'^"(.+)" #')  # '"Albert Einstein" #1995': the page's title


def _snippet(sentence: str, around: str = "") -> str:
    """The sentence, cut to ``SNIPPET`` characters around ``around`` when it is longer."""
    sentence = " ".join(sentence.split())
    if len(sentence) <= SNIPPET:
        return sentence
    at = sentence.find(around) if around else -1
    start = max(0, min(at - SNIPPET // 3, len(sentence) - SNIPPET)) if at > 0 else 0
    cut = sentence[start : start + SNIPPET - 2].strip()
    return ("…" if start else "") + cut + "…"


def _labels_topic(passages: Sequence[tuple[str, str]]) -> str:
    """The title of the first label of the form '"Title" #id' ("" for other labels)."""
    title = _LABEL_TITLE.match(passages[0][0]) if passages else None
    return title.group(1) if title else ""


def _listed(values) -> str:
    return ", ".join(sorted({value_text(v) for v in values}))


def _label_of(sentence: str, passages: Sequence[tuple[str, str]]) -> str:
    return next((label for label, text in passages if sentence in text), passages[0][0])


def conflict_detail(
    fact: str, kind: str, passages: Sequence[tuple[str, str]], topic: str = ""
) -> str:
    """The fact's value of ``kind``, the role it plays and the passage's other value for
    that role, quoted; or that no passage gives one.

    Args:
        fact: the fact.
        kind: ``number``, ``year``, ``nationality``, ``place`` or ``other`` (the first
            kind that conflicts without a flag of its own: an occupation, or a value
            weighed rather than vetoed); or ``person``: a person of the fact in a role of
            the topic that its passages give another (``person_roles.py``), "" where none.
        passages: (label, text) of its passages, e.g. ('"Abraham Lincoln" #3', text).
        topic: the bio's topic; by default the title of the first label of the form
            '"Title" #id' (the page the passages come from).

    Returns:
        e.g. ``1885, where "Albert Einstein" #1997 gives the birth as 14 March 1879:
        "Albert Einstein was born in Ulm, ... on 14 March 1879."``

    Example:
        >>> conflict_detail("He won 12 titles.", "number", [("p1", "He won 8 titles.")])
        '12, where p1 gives 8 for "won, titles": "He won 8 titles."'
    """
    if kind == "place":
        return _place_detail(fact, passages)
    if kind == "person":
        return _person_detail(fact, passages, topic)
    if not passages:
        return _listed(slots(fact).get(kind, ())) or kind
    topic = topic or _labels_topic(passages)
    if kind == "other":  # the first kind whose value conflicts without a veto of its own
        verdicts = slot_conflicts(fact, [text for _, text in passages], topic)
        kind = next((k for k, v in verdicts.items() if v in ("conflict", WEAK)), "")
        if not kind:
            return ""
    own = slots(fact).get(kind, frozenset())
    said = _listed(own) or kind
    texts = tuple(text for _, text in passages)
    roles = page_roles(texts, topic)
    if kind == "year":
        life = _life_detail(fact, own, roles, passages)
        if life:
            return f"{said}, {life}"
        for work in works_named(fact, roles):
            if not all(stated_in(v, [work.span]) for v in own):
                label = next((lb for lb, t in passages if work.pattern.search(t.lower())), "")
                return f"{said}, where {label} gives the years of that work as {work.span.text}"
    if kind == "number" and age_verdict(fact, roles) == "conflict":
        life = roles.life
        label = _label_of(life.parenthesis or life.sentence, passages)
        return (f"{said}, where {label} gives the life dates as {life.birth.text} – "
                f"{life.death.text}: \"{_snippet(life.sentence, life.birth.text)}\"")  # fmt: skip
    if kind == "nationality" and roles.nationalities and not (own & roles.nationalities):
        lead = next(((lb, t) for lb, t in passages if t.lower().startswith(topic.lower())), None)
        if lead:
            sentence = SENTENCE_END.split(lead[1])[0]
            return (f"{said}, where {lead[0]} gives its lead's nationality as "
                    f"{_listed(roles.nationalities)}: \"{_snippet(sentence)}\"")  # fmt: skip
    return f"{said}, {_context_detail(fact, kind, own, topic, passages)}"


def _life_detail(fact: str, own, roles, passages) -> str | None:
    """The topic's birth or death the fact gives at another time, against the lead."""
    life = roles.life
    cue = BIRTH.search(fact) or DEATH.search(fact)
    if life is None or not cue or not about_topic(fact[: cue.start()], roles):
        return None
    said = [("birth", life.birth)] if BIRTH.search(fact) else []
    said += [("death", life.death)] if life.death and DEATH.search(fact) else []
    for role, value in said:
        if value is not None and not any(value.meets(v) for v in own):
            label = _label_of(life.parenthesis or life.sentence, passages)
            return (f"where {label} gives the {role} as {value.text}: "
                    f"\"{_snippet(life.sentence, value.text)}\"")  # fmt: skip
    return None


def _context_detail(fact: str, kind: str, own, topic: str, passages) -> str:
    """The sentence with the most of the fact's terms that gives other values of its
    type, or that no sentence does."""
    read = read_passages([text for _, text in passages])
    terms = fact_terms(fact, topic)
    for value in sorted(own, key=value_text):
        placed = place(value, kind, terms, read)
        if placed.role is not None and not stated(value, placed.role.values[kind]):
            others = placed.role.values[kind]
            label = _label_of(placed.role.text, passages)
            first = sorted(others, key=lambda v: getattr(v, "start", 0))[0]
            return (f"where {label} gives {_listed(others)} for \"{_terms(fact, placed.shared)}\": "
                    f"\"{_snippet(placed.role.text, value_text(first))}\"")  # fmt: skip
    elsewhere = _listed(read.found[kind])
    terms_said = f" with its terms ({_terms(fact, terms)})" if terms else ""
    return (f"and no passage sentence gives a {kind}{terms_said}; they give "
            f"{_shorten(elsewhere)} elsewhere")  # fmt: skip


def _terms(fact: str, stems) -> str:
    """The fact's words whose stems are ``stems``, as the fact writes them, in its order."""
    words = dict.fromkeys(w.lower() for w in re.findall(r"[A-Za-z0-9]+", fact))
    said = [w for w in words if w in stems or (w.endswith("s") and w[:-1] in stems)]
    return ", ".join(said) or ", ".join(sorted(stems))


def _shorten(listed: str, most: int = 6) -> str:
    items = listed.split(", ")
    return listed if len(items) <= most else ", ".join(items[:most]) + ", …"


def _place_detail(fact: str, passages: Sequence[tuple[str, str]]) -> str:
    own = frames(fact)
    for label, text in passages:
        for sentence, found in sentence_frames([text]):
            for word, preposition, place_ in own:
                for w, p, other in found:
                    if frame_stem(w) == frame_stem(word) and p == preposition and other != place_:
                        return (f"'{word} {preposition} {place_}', where {label} gives "
                                f"'{w} {p} {other}': \"{_snippet(sentence, other)}\"")  # fmt: skip
    return ", ".join(f"'{w} {p} {x}'" for w, p, x in own) or "its place"


def _person_detail(fact: str, passages: Sequence[tuple[str, str]], topic: str) -> str:
    found = person_role_conflict(fact, topic or _labels_topic(passages), [t for _, t in passages])
    if found is None:
        return ""
    label = _label_of(found.sentence, passages)
    return (f"{found.role} {found.name}, where {label} gives the {found.role} as "
            f"{found.other}: \"{_snippet(found.sentence, found.other)}\"")  # fmt: skip
