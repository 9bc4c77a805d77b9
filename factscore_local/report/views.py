"""What the report shows of each bio and fact, as plain values for the template: the
score in words ("5 of 8 supported", the length penalty), the signals with their hover
text, the passages numbered by their id (as the reasons name them), and the conflicting
value of a vetoed fact marked in its passage.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from factscore_local.pipeline.records.rows import BioRow, FactResult
from factscore_local.report.conflicts import cited_conflict, conflict_marks

# The signals a fact may carry: key, column head, hover text. A column is shown when some
# fact of the report has the value.
SIGNALS = (
    ("margin", "margin", "The verifier LM's logit(True) − logit(False) when asked whether "
     "the fact is true given its passages: above 0 it leans supported, and the further "
     "from 0 the surer."),
    ("np", "NP", "FActScore's nonparametric probability: how well a masked LM recovers "
     "the fact's words from its passages (0 to 1; FActScore's cut is 0.3)."),
    ("coverage", "coverage", "The share of the fact's content words that its passages "
     "contain (0 to 1)."),
    ("slots", "slot check", "The fact's numbers, years, nationalities and places read "
     "against its passages: 'conflict' when a passage gives that role another value (a "
     "veto rejects the fact), 'confirmed' when the passages state every one, '–' neither."),
    ("rivals", "rival lead", "How far the margin of the fact's best rival (a place, person "
     "or work swapped in) exceeds the fact's own; above 0 a rival is more believed."),
    ("head", "head", "A probe on the LM's hidden state: its log-odds that the fact is "
     "supported (trained on human labels)."),
    ("draw", "draw", "The random baseline's coin, seeded by the fact: supported below 0.5."),
    ("candidates", "candidate lead", "How far the margin of the best candidate for one of the "
     "fact's values (another year, number, nationality, place, person or work the page "
     "states near its terms, swapped in) exceeds the fact's own; above 0 the LM believes "
     "the candidate more."),
)  # fmt: skip
HINTS = {key: hint for key, _, hint in SIGNALS}


def _pct(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.1f}"


def signals_shown(facts: list[FactResult]) -> list[tuple[str, str, str]]:
    """The signal columns (key, head, hover text) some of ``facts`` carry, in order."""
    keys = {k for f in facts for k in f.values}
    have = {key for key, _, _ in SIGNALS if key in keys}
    if any(k.startswith("slot_") for k in keys):
        have.add("slots")
    return [s for s in SIGNALS if s[0] in have]


def _cell(fact: FactResult, key: str) -> tuple[str, str]:
    """A signal's cell text and its own hover text."""
    if key == "slots":
        if not any(k.startswith("slot_") for k in fact.values):
            return "", ""
        flags = fact.slot_flags
        conflicts = [f for f in flags if f != "confirmed"]
        if conflicts:
            return f"{', '.join(conflicts)} conflict", f"a passage gives another {conflicts[0]}"
        if flags:
            return "confirmed", "the passages state every number, year, nationality and place"
        return "–", "nothing to check, or neither confirmed nor contradicted"
    value = fact.values.get(key)
    if value is None:
        return "", ""
    text = f"{value:+.2f}" if key in ("margin", "rivals", "head", "candidates") else f"{value:.2f}"
    return text, f"{key} {text}"


def penalty_of(row: BioRow, gamma: float | None) -> float | None:
    """The length penalty a responding bio's score carries: score / share supported, or
    min(1, exp(1 - gamma / n)) where the share is 0."""
    if not (row.ok and row.responded):
        return None
    if row.init_score:
        return (row.score or 0.0) / row.init_score
    if gamma is None:
        return None
    return 1.0 if not gamma or row.n_facts >= gamma else math.exp(1 - gamma / row.n_facts)


def score_words(row: BioRow, gamma: float | None) -> tuple[str, str]:
    """The bio's score in words: ("5 of 8 supported", "62.5% × length penalty 0.78 (8
    facts, fewer than γ = 10: exp(1 − 10/8)) = FActScore 48.7")."""
    if not row.responded:
        return ("did not respond", "no facts: FActScore leaves the bio out of its mean and "
                "counts it in the respond ratio")  # fmt: skip
    k = sum(d.is_supported for d in row.decisions)
    n = len(row.decisions) or row.n_facts
    kn = f"{k} of {n} supported"
    penalty = penalty_of(row, gamma)
    share = f"{_pct(row.init_score)}%"
    g = "γ" if gamma is None else f"γ = {gamma:g}"
    if penalty is None or penalty >= 1 - 1e-9:
        why = f"{n} facts, not fewer than {g}" if gamma != 0 else "the run set γ = 0"
        return kn, f"{share}; no length penalty ({why}): FActScore {_pct(row.score)}"
    formula = f"exp(1 − {'γ' if gamma is None else f'{gamma:g}'}/{n})"
    return kn, (f"{share} × length penalty {penalty:.2f} ({n} facts, fewer than {g}: "
                f"{formula}) = FActScore {_pct(row.score)}")  # fmt: skip


def fact_view(fact: FactResult, signals, texts: Mapping[str, tuple[str, str]], labeled: bool):
    """One fact's row: its decision, reason, signal cells and evidence buttons (the cited
    passage of a veto marked, with the spans of its conflicting value)."""
    conflict = cited_conflict(fact.reason)
    evidence = []
    k = len(fact.evidence or ())
    for e in fact.evidence or ():
        pid = str(e.passage_id)
        cited = conflict is not None and conflict.passage_id == pid
        marks = conflict_marks(conflict, texts[pid][1]) if cited and pid in texts else []
        hint = f"passage #{pid}: rank {e.rank + 1} of the {k} retrieved for this fact"
        if cited:
            hint += f"; it gives {', '.join(conflict.values) or 'another value'} instead"
        spans = ";".join(f"{a},{b},{kind}" for a, b, kind in marks)  # for the page's script
        evidence.append({"pid": pid, "label": f"{e.title} #{pid}", "hint": hint,
                         "cited": cited, "marks": spans})  # fmt: skip
    return {
        "atom": fact.atom,
        "sentence": fact.sentence,
        "supported": fact.is_supported,
        "reason": fact.reason,
        "label": fact.label,
        "disagree": labeled and fact.label is not None and fact.is_supported != (fact.label == "S"),
        "cells": [_cell(fact, key) for key, _, _ in signals],
        "evidence": evidence,
        "block": len(fact.block) if fact.block else 0,
    }


def bio_view(subject, row: BioRow, signals, texts: Mapping[str, tuple[str, str]]) -> dict:
    """What the page shows of one bio: its line (topic, subject, class, "k of n
    supported", FActScore), the score in words, its generation and its facts."""
    view = {"subject": subject.name, "topic": row.topic, "error": None}
    if not row.ok:
        return view | {"error": row.error or ""}
    kn, score = score_words(row, subject.gamma)
    parts = [row.topic, subject.name] + ([row.category] if row.category else []) + [kn]
    if row.responded:
        parts.append(f"FActScore {_pct(row.score)}")
    human = row.human
    if human is not None and human.score is not None:
        parts.append(f"human {100 * human.score:.1f}")
    human_facts = human.facts if human is not None else ()
    if human_facts:
        disagreements = sum(f.is_supported != (f.label == "S") for f in human_facts)
        parts.append(f"{disagreements} disagreements on {len(human_facts)} human facts")
    if row.set_aside:
        parts.append(f"set aside: {len(row.set_aside)}")
    return view | {
        "parts": parts,
        "kn": kn,
        "score": score,
        "generation": subject.generation(row),
        "decisions": [fact_view(f, signals, texts, False) for f in row.decisions],
        "human_facts": [fact_view(f, signals, texts, True) for f in human_facts],
        "set_aside": row.set_aside,
    }
