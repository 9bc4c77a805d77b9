"""Do more features help the fitted rule? (issue 10, lever 3; no model run)

    python -m scripts.notebook.bench_rule_features \
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
from pathlib import Path

import numpy as np

from factscore_local.declarations.features import register_feature
from factscore_local.declarations.verifiers import COVERAGE_RULE_FEATURES, Verifier
from factscore_local.labels.calibration import (
    collect,
    estimated_score,
    f1_from_counts,
    fit,
    not_supported_counts,
    settings_thresholds,
)
from factscore_local.labels.validation import subject_name, wins_on_both_halves
from factscore_local.pipeline.records.rows import BioRow
from factscore_local.report.data import read_rows
from scripts.common import SUBJECTS
from scripts.common import auc as auc_of
from scripts.notebook.rules import (
    CANDIDATES,
    OTHER_MARGINS,
    RESPONSE_CANDIDATES,
    SIMILARITY,
    Fold,
    candidate_signals,
    evidence_similarity,
    folds,
    other_margins,
    rule_with,
)


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
    facts = collect(rows, candidate_signals).values()
    supported = ~np.concatenate([f.h_label for f in facts])
    aucs = []
    for name in signals:
        values = np.concatenate([f.h_signals[name] for f in facts])
        aucs.append(f"{name} {auc_of(values, supported):.3f}")
    return "AUC on the human facts (S against the rest): " + ", ".join(aucs)


def main() -> None:
    """Prints the coverage by label and each candidate feature's cross-fitted figures."""
    ap = argparse.ArgumentParser(
        prog="python -m scripts.notebook.bench_rule_features",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
        register_feature(feature)
    rows = [r for s in SUBJECTS for r in read_rows(args.rows / f"{s}.jsonl")
            if r.ok and r.human is not None]  # fmt: skip
    topics = len({r.topic for r in rows})
    if args.similarity:
        SIMILARITY.update(evidence_similarity(rows, args.similarity))
        register_feature("similarity")
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
