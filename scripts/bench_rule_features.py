"""Do more features help the fitted rule? (issue 10, lever 3; no model run)

    python scripts/bench_rule_features.py \
        --rows "bench-out/rows-98/retrieve-lm+np+coverage-fitted cross-fitted" \
        --other-prompt "demos=bench-out/rows-98/lever verification demos" \
        --leave-subject-out --similarity dev-index

Reads the rows of a ``reproduce_tables.py --rows`` run that recorded margin, NP and
coverage, and cross-fits (over the fixed topic halves, all subjects pooled, as the
shipped rule is fitted) a logistic rule over the default rule's features plus each
candidate. Of the fact: its position in its response, its top retrieval score, its length
in words, and how many capitalised names it holds beyond the topic's. Of its response (the
same value for every fact of a bio, from the estimate's facts): the mean NP, coverage and
margin of its facts, and its number of facts (log). With ``--other-prompt NAME=DIR``, the
margin the same fact got under another prompt (a prompt lever's rows: two passes of the
LM, an ensemble of prompts); with ``--similarity INDEX``, the fact's highest MiniLM cosine
similarity to a sentence of its top-k passages (read from INDEX; a semantic cousin of the
lexical coverage, ~6 min on 2 cores).

Prints, first, the human facts' mean coverage per subject and label (is any subject's
evidence thinner in the dev DB?), then ER and micro-F1 per subject (ER over the bios
where both the humans and the estimate respond) and the mean ER and F1 on each topic
half (a default changes only if it wins both). ``--leave-subject-out`` also holds the
subject out of the fit (each subject's half decided by a rule fitted on the other half's
other two subjects): how a rule carries over to a subject LM it was not fitted on.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from factscore_local.labels.calibration import (  # noqa: E402
    SubjectFacts,
    collect,
    estimated_score,
    f1_from_counts,
    fit,
    not_supported_counts,
    settings_thresholds,
)
from factscore_local.labels.validation import (  # noqa: E402
    subject_name,
    topic_half,
    wins_on_both_halves,
)
from factscore_local.pipeline.records import BioRow, FactResult  # noqa: E402
from factscore_local.pipeline.verifiers import (  # noqa: E402
    COVERAGE_RULE_FEATURES,
    FEATURES,
    FITTED,
    Verifier,
    fitted_rule,
)
from factscore_local.report.data import read_rows  # noqa: E402

SUBJECTS = ("InstructGPT", "ChatGPT", "PerplexityAI")
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
    FEATURES.setdefault(_name, lambda s, name=_name: s[name])


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


def crossfit(
    folds: list[Fold], verifier: Verifier
) -> tuple[dict[str, tuple[float, float]], dict[int, tuple[float, float]]]:
    """Per subject (ER, F1) in points, each fold's held-out facts decided by
    ``calibration.fit`` on its fitting facts, as reproduce_tables.py cross-fits the shipped
    rule; and per topic half, the mean over subjects of ER and F1."""
    est = {s: 0.0 for s in SUBJECTS}
    human = {s: 0.0 for s in SUBJECTS}
    n = {s: 0 for s in SUBJECTS}
    counts = {s: np.zeros(3, int) for s in SUBJECTS}  # tp, fp, fn on not-supported facts
    per_half: dict[int, list[tuple[float, float]]] = {0: [], 1: []}
    for half, train, test in folds:
        thresholds = settings_thresholds(fit(train, verifier, "er"))
        for subject, facts in test.items():
            c = not_supported_counts([facts], verifier, thresholds)
            counts[subject] += c
            er = float("nan")
            if facts.n_bios:
                score = estimated_score(facts, verifier, thresholds)
                est[subject] += score * facts.n_bios
                human[subject] += facts.human_score * facts.n_bios
                n[subject] += facts.n_bios
                er = abs(score - facts.human_score)
            per_half[half].append((100 * er, 100 * f1_from_counts(*map(int, c))))
    by_subject = {
        s: (round(100 * abs(est[s] - human[s]) / n[s], 1),
            round(100 * f1_from_counts(*map(int, c)), 1))
        for s, c in counts.items()
    }  # fmt: skip
    halves = {h: (round(float(np.nanmean([v[0] for v in vals])), 2),
                  round(float(np.mean([v[1] for v in vals])), 2))
              for h, vals in per_half.items()}  # fmt: skip
    return by_subject, halves


def length_within_subjects(rows: list[BioRow]) -> str:
    """Whether a response's number of facts tells, within one subject LM, how far the
    default rule's estimate is from the humans: Spearman's rho of the two over its bios."""
    from scipy.stats import spearmanr

    lines = []
    for subject in SUBJECTS:
        bios = [r for r in rows if subject_name(r.source) == subject and r.decisions
                and r.human.score is not None and r.init_score is not None]  # fmt: skip
        n_facts = [len(r.decisions) for r in bios]
        residual = [r.human.score - r.init_score for r in bios]
        rho = spearmanr(n_facts, residual)[0]
        lines.append(f"{subject} {rho:+.2f} ({len(bios)} bios)")
    return ("Within each subject, Spearman's rho of a response's number of facts with "
            "(human - estimated) FActScore: " + ", ".join(lines))  # fmt: skip


def coverage_by_label(rows: list[BioRow]) -> str:
    """Mean lexical coverage of the human facts by their top-k, per subject and label: does
    the dev DB (built from the passages retrieved for ChatGPT's facts) hold less evidence
    for the other subjects' supported facts?"""
    parts = []
    for subject in SUBJECTS:
        by_label: dict[str, list[float]] = {}
        for row in rows:
            if subject_name(row.source) == subject:
                for fact in row.human.facts:
                    by_label.setdefault(fact.label, []).append(fact.coverage or 0.0)
        cells = [f"{label} {np.mean(by_label[label]):.3f} ({len(by_label[label])})"
                 for label in ("S", "NS", "IR") if label in by_label]  # fmt: skip
        parts.append(f"{subject} " + ", ".join(cells))
    return "Mean coverage of the human facts by label (facts): " + "; ".join(parts)


def human_fact_aucs(rows: list[BioRow], signals: tuple[str, ...]) -> str:
    """AUC of each signal for telling the human facts labeled S from the others."""
    from sklearn.metrics import roc_auc_score

    facts = collect(rows, candidate_signals).values()
    supported = ~np.concatenate([f.h_label for f in facts])
    aucs = []
    for name in signals:
        values = np.concatenate([f.h_signals[name] for f in facts])
        aucs.append(f"{name} {roc_auc_score(supported, values):.3f}")
    return "AUC on the human facts (S against the rest): " + ", ".join(aucs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=Path, required=True, help="a folder of <subject>.jsonl rows")
    ap.add_argument(
        "--other-prompt",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="rows of the same facts under another prompt (a --levers run)",
    )
    ap.add_argument("--similarity", type=Path, metavar="INDEX",
                    help="also each fact's MiniLM similarity to its top-k passages")  # fmt: skip
    ap.add_argument("--leave-subject-out", action="store_true",
                    help="also cross-fit with the subject held out of each fit")  # fmt: skip
    args = ap.parse_args()
    for spec in args.other_prompt:
        name, _, folder = spec.partition("=")
        OTHER_MARGINS[name] = other_margins(Path(folder))
        feature = f"margin ({name})"
        FEATURES.setdefault(feature, lambda s, f=feature: s[f])
    rows = [r for s in SUBJECTS for r in read_rows(args.rows / f"{s}.jsonl")
            if r.ok and r.human is not None]  # fmt: skip
    topics = len({r.topic for r in rows})
    if args.similarity:
        SIMILARITY.update(evidence_similarity(rows, args.similarity))
        FEATURES.setdefault("similarity", lambda s: s["similarity"])
    print(f"{len(rows)} bios of {topics} topics\n")
    print(length_within_subjects(rows) + "\n")
    print(coverage_by_label(rows) + "\n")
    settings = [("the default rule's (" + ", ".join(COVERAGE_RULE_FEATURES) + ")", ())]
    settings += [(f"+ {c}", (c,)) for c in CANDIDATES]
    settings += [("+ all four", CANDIDATES)]
    settings += [(f"+ {c}", (c,)) for c in RESPONSE_CANDIDATES]
    settings += [("+ the response's mean NP, coverage, margin", RESPONSE_CANDIDATES[:3])]
    settings += [("+ all four of the response", RESPONSE_CANDIDATES)]
    for name in OTHER_MARGINS:
        feature = f"margin ({name})"
        settings += [(f"+ {feature}", (feature,)),
                     (f"+ {feature} and all four", (feature, *CANDIDATES))]  # fmt: skip
    if SIMILARITY:
        settings += [("+ MiniLM similarity to the top-k passages", ("similarity",))]
        print(human_fact_aucs(rows, ("margin", "coverage", "similarity")) + "\n")
    protocols = [False, True] if args.leave_subject_out else [False]
    for leave_subject_out in protocols:
        what = "topic halves x subjects left out" if leave_subject_out else "topic halves"
        print(f"Cross-fitted over the {what}:\n")
        print("| features | " + " | ".join(f"{s} ER / F1" for s in SUBJECTS)
              + " | half 0: ER · F1 | half 1: ER · F1 | wins on both halves |")  # fmt: skip
        print("|---|" + "---|" * (len(SUBJECTS) + 3))
        base, split = None, folds(rows, leave_subject_out)
        for name, extra in settings:
            figures, halves = crossfit(split, rule_with(extra))
            base = base or halves
            won = "yes" if wins_on_both_halves(halves, base) else "no"
            cells = [f"{figures[s][0]} / {figures[s][1]}" for s in SUBJECTS]
            cells += [f"{halves[h][0]:.1f} · {halves[h][1]:.1f}" for h in (0, 1)]
            print(f"| {name} | " + " | ".join(cells) + f" | {won if extra else ''} |")
        print()


if __name__ == "__main__":
    main()
