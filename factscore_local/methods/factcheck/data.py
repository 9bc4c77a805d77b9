"""Factcheck-Bench's data and measures (Wang et al., 2024): reading the stance (subtask 3)
and claim-factuality (subtask 4) files line by line, mapping labels, and scoring.

A line that cannot be used (not JSON, an empty claim, a label outside the benchmark's) is
kept as an item with ``error`` set, reported in the output, and left out of the scores.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from factscore_local.extras import require
from factscore_local.pipeline.records.inputs import json_objects

# The four stance labels, in the order the LM is asked for them.
STANCES = ("support", "partial support", "refute", "irrelevant")
STANCE_OF = {
    "completely-support": "support",
    "support": "support",
    "partially-support": "partial support",
    "partial support": "partial support",
    "refute": "refute",
    "irrelevant": "irrelevant",
}
# The 3-label variant: the two supports merged.
THREE_LABELS = ("support", "refute", "irrelevant")
TO_THREE = {"support": "support", "partial support": "support", "refute": "refute",
            "irrelevant": "irrelevant"}  # fmt: skip
CLAIM_LABELS = ("true", "false", "not_enough_evidence")


@dataclass(frozen=True)
class StancePair:
    line: int
    claim: str = ""
    evidence: str = ""
    stance: str = ""  # one of STANCES
    error: str = ""


@dataclass(frozen=True)
class Claim:
    line: int
    claim: str = ""
    label: str = ""  # one of CLAIM_LABELS
    revised: str = ""  # the human revision ("" when none)
    error: str = ""


def _text(obj: dict, key: str) -> str | None:
    value = obj.get(key)
    return value.strip() if isinstance(value, str) and value.strip() else None


def read_stance_pairs(path: Path) -> list[StancePair]:
    out = []
    for number, obj in json_objects(path):
        if isinstance(obj, str):
            out.append(StancePair(number, error=obj))
            continue
        claim, evidence = _text(obj, "claim"), _text(obj, "evidence")
        stance = STANCE_OF.get(str(obj.get("stance", "")).strip().lower())
        if claim is None or evidence is None:
            out.append(StancePair(number, error="empty or missing 'claim' or 'evidence'"))
        elif stance is None:
            known = ", ".join(sorted(STANCE_OF))
            message = f"unknown stance {obj.get('stance')!r} (known: {known})"
            out.append(StancePair(number, claim, evidence, error=message))
        else:
            out.append(StancePair(number, claim, evidence, stance))
    return out


def read_claims(path: Path) -> list[Claim]:
    out = []
    for number, obj in json_objects(path):
        if isinstance(obj, str):
            out.append(Claim(number, error=obj))
            continue
        claim = _text(obj, "claim")
        label = str(obj.get("label", "")).strip().lower()
        if claim is None:
            out.append(Claim(number, error="empty or missing 'claim'"))
        elif label not in CLAIM_LABELS:
            out.append(Claim(number, claim,
                             error=f"unknown label {obj.get('label')!r} (known: "
                                   f"{', '.join(CLAIM_LABELS)})"))  # fmt: skip
        else:
            out.append(Claim(number, claim, label, _text(obj, "revised_claim") or ""))
    return out


def classification_scores(gold: list[str], predicted: list[str], labels: tuple[str, ...]) -> dict:
    """Accuracy, macro precision / recall / F1 over ``labels``, and per-label P / R / F1
    (scikit-learn; a label never predicted has precision 0)."""
    metrics = require("sklearn.metrics", "stats", "Factcheck-Bench's scores")
    accuracy_score = metrics.accuracy_score
    precision_recall_fscore_support = metrics.precision_recall_fscore_support

    if not gold:
        return {"n": 0}
    p, r, f, support = precision_recall_fscore_support(
        gold, predicted, labels=list(labels), zero_division=0
    )
    macro = precision_recall_fscore_support(
        gold, predicted, labels=list(labels), average="macro", zero_division=0
    )
    return {
        "n": len(gold),
        "accuracy": round(float(accuracy_score(gold, predicted)), 4),
        "macro_precision": round(float(macro[0]), 4),
        "macro_recall": round(float(macro[1]), 4),
        "macro_f1": round(float(macro[2]), 4),
        "per_label": {
            label: {
                "precision": round(float(p[i]), 4),
                "recall": round(float(r[i]), 4),
                "f1": round(float(f[i]), 4),
                "support": int(support[i]),
            }  # fmt: skip
            for i, label in enumerate(labels)
        },
    }


def _words(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text.lower())


def edit_similarity(a: str, b: str) -> float:
    """Word-level similarity in [0, 1] (difflib's ratio over lowercased word and punctuation
    tokens): a correction is usually a small edit (a date, a name), and this rewards the
    right edit while an unrelated rewrite scores low."""
    return difflib.SequenceMatcher(a=_words(a), b=_words(b), autojunk=False).ratio()
