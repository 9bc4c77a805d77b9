"""Can the score be corrected for the rule's known errors? (issue 10, lever 3; no model run)

    python -m scripts.notebook.bench_count_adjust \
        --rows "bench-out/rows-98/retrieve-lm+np+coverage-fitted cross-fitted" --leave-subject-out

A bio's FActScore estimate counts the facts the rule accepts ("classify and count"). With
a verifier that accepts a share ``tpr`` of supported facts and ``fpr`` of the others, the
count is biased by the bio's own share of supported facts: it overrates precise-poor
responses and underrates precise ones (PerplexityAI's). Two corrections from the
quantification literature are measured here against the count, each cross-fitted over the
topic halves like the shipped rule (and, with ``--leave-subject-out``, with the subject
also held out of the fit):

- adjusted count: ``(count - fpr) / (tpr - fpr)`` per bio, clipped to [0, 1], with tpr and
  fpr measured on the fitting half's human facts at the fitted cutoff;
- probability average: the mean, over a bio's facts, of the logistic model's probability
  of "supported" (the rule's weights before the cutoff is folded in).

The decisions, and so micro-F1, are the same in all three; only the score changes. Prints
ER per subject, the mean ER on each topic half, and each half's signed error per subject
(a correction is adopted only if it wins on both halves).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factscore_local.declarations.verifiers import Thresholds, Verifier
from factscore_local.labels.calibration import (
    SubjectFacts,
    fit,
    fit_logistic,
    per_bio_means,
    rule_features,
    settings_thresholds,
)
from factscore_local.report.data import read_rows
from scripts.common import SUBJECTS
from scripts.notebook.rules import folds, rule_with

METHODS = ("count (shipped)", "adjusted count", "probability average")


def error_rates(
    train: dict[str, SubjectFacts], rule: Verifier, t: Thresholds
) -> tuple[float, float]:
    """(tpr, fpr): the shares of supported and of other human facts the rule accepts."""
    supported = ~np.concatenate([s.h_label for s in train.values()])
    accepted = np.concatenate([rule.decide(s.h_signals, t, len(s.h_label)) for s in train.values()])
    return float(accepted[supported].mean()), float(accepted[~supported].mean())


@dataclass
class Fitted:
    """What one fold's fitting facts give: the rule's thresholds, its error rates there, and
    the logistic model behind it."""

    thresholds: Thresholds
    tpr: float
    fpr: float
    model: object


def fitted(train: dict[str, SubjectFacts], rule: Verifier) -> Fitted:
    t = settings_thresholds(fit(train, rule, "er"))
    return Fitted(t, *error_rates(train, rule, t), fit_logistic(list(train.values()), rule))


def estimates(f: Fitted, test: SubjectFacts, rule: Verifier) -> dict[str, np.ndarray]:
    """Each method's per-bio scores of the held-out facts."""
    count = per_bio_means(
        test, rule.decide(test.signals, f.thresholds, len(test.bio)).astype(float)
    )
    return {
        METHODS[0]: count,
        METHODS[1]: np.clip((count - f.fpr) / (f.tpr - f.fpr), 0.0, 1.0),
        METHODS[2]: per_bio_means(
            test, f.model.predict_proba(rule_features(test.signals, rule))[:, 1]
        ),
    }


def report(rows: list, leave_subject_out: bool) -> None:
    rule = rule_with(())
    signed: dict[str, dict[tuple[int, str], tuple[float, int]]] = {m: {} for m in METHODS}
    for half, train, test in folds(rows, leave_subject_out):
        fold = fitted(train, rule)
        for subject, facts in test.items():
            if not facts.n_bios:
                continue
            for method, scores in estimates(fold, facts, rule).items():
                signed[method][(half, subject)] = (
                    100 * (float(scores.mean()) - facts.human_score),
                    facts.n_bios,
                )
    what = "topic halves x subjects left out" if leave_subject_out else "topic halves"
    print(f"Cross-fitted over the {what} (ER in points; F1 is the same for all three):\n")
    print("| score | " + " | ".join(f"{s} ER" for s in SUBJECTS)
          + " | half 0: mean ER | half 1: mean ER | signed error, half 0 / half 1 "
          + "(" + ", ".join(SUBJECTS) + ") | wins on both halves |")  # fmt: skip
    print("|---|" + "---|" * (len(SUBJECTS) + 4))
    base = None
    for method, errors in signed.items():
        pooled = []
        for subject in SUBJECTS:
            parts = [errors[(h, subject)] for h in (0, 1) if (h, subject) in errors]
            n = sum(k for _, k in parts)
            pooled.append(abs(sum(e * k for e, k in parts) / n))
        halves = [
            float(np.mean([abs(e) for (h, _), (e, _) in errors.items() if h == half]))
            for half in (0, 1)
        ]
        base = base or halves
        won = all(a < b for a, b in zip(halves, base, strict=True))
        split = " / ".join(", ".join(f"{errors[(h, s)][0]:+.1f}" for s in SUBJECTS) for h in (0, 1))
        cells = [f"{e:.1f}" for e in pooled] + [f"{h:.2f}" for h in halves] + [split]
        verdict = "" if method == METHODS[0] else ("yes" if won else "no")
        print(f"| {method} | " + " | ".join(cells) + f" | {verdict} |")
    print()


def main() -> None:
    ap = argparse.ArgumentParser(
        prog="python -m scripts.notebook.bench_count_adjust", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--rows", type=Path, required=True, help="a folder of <subject>.jsonl rows")
    ap.add_argument("--leave-subject-out", action="store_true",
                    help="also cross-fit with the subject held out of each fit")  # fmt: skip
    args = ap.parse_args()
    rows = [r for s in SUBJECTS for r in read_rows(args.rows / f"{s}.jsonl")
            if r.ok and r.human is not None]  # fmt: skip
    print(f"{len(rows)} bios of {len({r.topic for r in rows})} topics\n")
    for leave_subject_out in [False, True] if args.leave_subject_out else [False]:
        report(rows, leave_subject_out)


if __name__ == "__main__":
    main()
