"""The candidate features of the fitted decision rule and its cross-fitting folds, shared by
``scripts.notebook.bench_rule_features`` and ``scripts.notebook.bench_count_adjust`` (no
model run)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from factscore_local.declarations.features import register_feature
from factscore_local.declarations.verifiers import (
    COVERAGE_RULE_FEATURES,
    FITTED,
    Verifier,
    fitted_rule,
)
from factscore_local.labels.calibration import SubjectFacts, collect
from factscore_local.labels.validation import subject_name, topic_half
from factscore_local.pipeline.records.rows import BioRow, FactResult
from factscore_local.report.data import read_rows
from scripts.common import SUBJECTS

CANDIDATES = ("position", "top score", "words", "other names")
RESPONSE_CANDIDATES = ("response np", "response coverage", "response margin", "response facts")
NAME = re.compile(r"\b[A-Z][a-z]+")


# Margins of the same facts under other prompts: name -> (source, topic, atom) -> margin.
OTHER_MARGINS: dict[str, dict[tuple[str, str, str], float]] = {}


def other_margins(folder: Path) -> dict[tuple[str, str, str], float]:
    """Each fact's margin in another run's rows (model and human facts alike)."""
    out = {}
    for subject in SUBJECTS:
        for row in read_rows(folder / f"{subject}.jsonl"):
            facts = row.decisions + (row.human.facts if row.human else ())
            for fact in facts:
                if fact.margin is not None:
                    out[(row.source, row.topic, fact.atom)] = fact.margin
    return out


# Each fact's MiniLM similarity to its evidence: (topic, atom) -> value (--similarity).
SIMILARITY: dict[tuple[str, str], float] = {}


def evidence_similarity(rows: list[BioRow], index: Path) -> dict[tuple[str, str], float]:
    """The highest cosine similarity (all-MiniLM-L6-v2, normalised) between each fact and a
    sentence (pysbd, 3 words or more) of its top-k passages, model and human facts alike."""
    import pysbd

    from factscore_local.index.chunking import strip_markers
    from factscore_local.index.models import load_sentence_transformer
    from factscore_local.index.reader import KnowledgeSource

    source, segmenter = KnowledgeSource(index), pysbd.Segmenter(language="en", clean=False)
    passages: dict[int, list[str]] = {}
    wanted: dict[tuple[str, str], list[int]] = {}
    for row in rows:
        for fact in row.decisions + row.human.facts:
            ids = [e.passage_id for e in fact.evidence or ()]
            wanted[(row.topic, fact.atom)] = ids
            for pid in ids:
                if pid not in passages:
                    text = strip_markers(source.passage(pid).text)
                    passages[pid] = [x.strip() for x in segmenter.segment(text)
                                     if len(x.split()) >= 3]  # fmt: skip
    sentences = sorted({x for found in passages.values() for x in found})
    atoms = sorted({atom for _, atom in wanted})
    encoder = load_sentence_transformer("minilm")
    vectors = encoder.encode(sentences + atoms, batch_size=64, normalize_embeddings=True)
    row_of = {text: i for i, text in enumerate(sentences + atoms)}
    out = {}
    for (topic, atom), ids in wanted.items():
        rows_of = [row_of[x] for pid in ids for x in passages[pid]]
        out[(topic, atom)] = (
            float((vectors[rows_of] @ vectors[row_of[atom]]).max()) if rows_of else 0.0
        )
    return out


def candidate_signals(row: BioRow, facts: tuple[FactResult, ...]) -> dict[str, list[float]]:
    """The candidate features of each fact of a row (``calibration.collect``'s extra)."""
    topic_words = set(row.topic.split())
    last = max(1, len(facts) - 1)
    others = {
        f"margin ({name})": [margins[(row.source, row.topic, f.atom)] for f in facts]
        for name, margins in OTHER_MARGINS.items()
    }
    decided = row.decisions  # the response's own facts, whichever facts are being decided

    def mean(signal: str) -> float:
        return float(np.mean([getattr(f, signal) or 0.0 for f in decided])) if decided else 0.0

    response = {f"response {signal}": [mean(signal)] * len(facts)
                for signal in ("np", "coverage", "margin")}  # fmt: skip
    response["response facts"] = [math.log1p(len(decided))] * len(facts)
    if SIMILARITY:
        others["similarity"] = [SIMILARITY[(row.topic, f.atom)] for f in facts]
    return {
        **response,
        **others,
        "position": [i / last for i in range(len(facts))],
        "top score": [
            math.log1p(max(f.evidence[0].score, 0.0)) if f.evidence else 0.0 for f in facts
        ],  # fmt: skip
        "words": [len(f.atom.split()) for f in facts],
        "other names": [sum(w not in topic_words for w in NAME.findall(f.atom)) for f in facts],
    }


for _name in CANDIDATES + RESPONSE_CANDIDATES:  # what a rule may weigh, for this script only
    register_feature(_name)


def rule_with(extra: tuple[str, ...]) -> Verifier:
    """The default coverage rule with more features, fitted like it."""
    features = (*COVERAGE_RULE_FEATURES, *extra)
    return Verifier("coverage rule + " + ", ".join(extra), ("margin", "np", "coverage"),
                    fitted_rule(features), (FITTED,), features=features)  # fmt: skip


# (topic half, the facts a rule is fitted on, the held-out facts it decides, by subject)
Fold = tuple[int, dict[str, SubjectFacts], dict[str, SubjectFacts]]


def folds(rows: list[BioRow], leave_subject_out: bool = False) -> list[Fold]:
    """Each topic half held out and decided by a rule fitted on the other half (with
    ``leave_subject_out``, one fold per subject, fitted on the other half's other subjects).
    The signals, every candidate's included, are collected once for all settings."""
    out = []
    for half in (0, 1):
        test = collect([r for r in rows if topic_half(r.topic) == half], candidate_signals)
        groups = [(s,) for s in test] if leave_subject_out else [tuple(test)]
        for subjects in groups:
            left_out = set(subjects) if leave_subject_out else set()
            train = [r for r in rows if topic_half(r.topic) != half
                     and subject_name(r.source) not in left_out]  # fmt: skip
            out.append((half, collect(train, candidate_signals), {s: test[s] for s in subjects}))
    return out
