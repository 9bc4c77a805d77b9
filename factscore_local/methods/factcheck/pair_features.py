"""Lexical features of a (claim, evidence) pair, read beside the LM's state by the stance
head. No model: how much of the claim the evidence repeats (an irrelevant passage
repeats little), whether the claim's numbers are in it, and whether the slot check
finds a value the claim contradicts (what a refuting passage often holds).

On the dev half of Factcheck-Bench's stance pairs these twelve numbers alone, in a
logistic regression cross-fitted by claim, reach a 4-label macro-F1 of about 0.36 (the
label words' logits: 0.31 with a fitted bias); beside the state they add to the head
(docs/benchmarks/stance-head.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from factscore_local.pipeline.signals.lexical import STOPWORDS, WORD, content_words
from factscore_local.pipeline.signals.slots import NUMBER_CONFLICT, YEAR_CONFLICT, slot_signal

NUMBER = re.compile(r"\d(?:[\d,.]*\d)?")  # "2,500", "3.5"; not a full stop after it
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# Words by which a passage often says a claim is wrong or only partly right.
HEDGES = re.compile(
    r"\b(not|no|never|false|incorrect|myth|however|but|contrary|denied|only)\b", re.I
)

# The version a head records: a head fitted on these features reads them in this order.
PAIR_FEATURES = (
    "coverage",  # share of the claim's content words found in the evidence
    "best_sentence_coverage",  # ... in the evidence sentence that holds most of them
    "bigram_coverage",  # share of the claim's word pairs found in the evidence
    "number_coverage",  # share of the claim's numbers found (1 when it has none)
    "claim_has_number",
    "number_missing",  # a claim's number absent while the evidence gives others
    "slot_conflict",  # the slot check finds a value the claim contradicts
    "slot_confirmed",  # ... confirms every slot
    "number_or_year_conflict",
    "hedges_per_100_words",
    "log_evidence_words",
    "log_claim_words",
)


def _share(wanted: set, found: set) -> float:
    return sum(w in found for w in wanted) / len(wanted) if wanted else 1.0


def _bigrams(text: str) -> set[tuple[str, str]]:
    words = WORD.findall(text.lower())
    pairs = zip(words, words[1:], strict=False)
    return {(a, b) for a, b in pairs if not (a in STOPWORDS and b in STOPWORDS)}


def pair_features(claim: str, evidence: str) -> list[float]:
    """The features of one pair, in ``PAIR_FEATURES`` order.

    Example:
        >>> f = dict(zip(PAIR_FEATURES, pair_features("He won 12 titles.", "He won 8 titles.")))
        >>> f["number_missing"], f["number_or_year_conflict"]
        (1.0, 1.0)
    """
    claim_words = content_words(claim)
    evidence_words = content_words(evidence)
    best = max(
        (_share(claim_words, content_words(s)) for s in SENTENCE_END.split(evidence)),
        default=0.0,
    )
    claim_numbers = set(NUMBER.findall(claim))
    evidence_numbers = set(NUMBER.findall(evidence))
    slot = slot_signal(claim, [evidence])
    evidence_length = len(evidence.split())
    return [
        _share(claim_words, evidence_words),
        best,
        _share(_bigrams(claim), _bigrams(evidence)),
        _share(claim_numbers, evidence_numbers),
        float(bool(claim_numbers)),
        float(bool(evidence_numbers) and bool(claim_numbers - evidence_numbers)),
        float(slot < 0),
        float(slot == 1),
        float(slot in (NUMBER_CONFLICT, YEAR_CONFLICT)),
        100 * len(HEDGES.findall(evidence)) / max(1, evidence_length),
        math.log1p(evidence_length),
        math.log1p(len(claim_words)),
    ]


def feature_matrix(claims: Sequence[str], evidence: Sequence[str]) -> np.ndarray:
    """(n, len(PAIR_FEATURES)) float32, one row per pair."""
    rows = [pair_features(c, e) for c, e in zip(claims, evidence, strict=True)]
    return np.asarray(rows, dtype=np.float32).reshape(len(rows), len(PAIR_FEATURES))
