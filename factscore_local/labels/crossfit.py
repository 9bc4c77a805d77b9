"""Cross-fitting: a rule's thresholds fitted on the labeled bios of one half of the topics
and applied to the other half's, so that no figure is measured on the bios it was fitted on.

``crossfit`` uses the fixed halves of ``validation.topic_half``: the records' figures, the
same split on every machine and every commit. One split is a noisy measure of a fitted
rule, though: its cutoff is chosen by the fitting half's mean ER, and two cutoffs whose
fitting ERs differ by a thousandth can leave the other half's subjects a point apart, so a
handful of facts decided anew can move a subject's cross-fitted ER by half a point.
``repeated_crossfit`` measures the same rule over many random halvings of the topics and
gives each subject's mean and spread: a figure for comparing two versions of the signals,
where the fixed split's difference is often the split's own noise.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Iterable, Sequence

from factscore_local.declarations.verifiers import Verifier
from factscore_local.labels.calibration import apply_thresholds, collect, fit, settings_thresholds
from factscore_local.labels.validation import topic_half, validate_rows
from factscore_local.pipeline.records.rows import BioRow


def crossfit(
    fit_rows: Sequence[BioRow],
    apply_rows: Sequence[BioRow],
    verifier: str | Verifier,
    objective: str = "er",
    half_of: Callable[[str], int] = topic_half,
) -> tuple[list[BioRow], list[dict]]:
    """Each topic half of ``apply_rows`` decided with the thresholds fitted on the other
    half of ``fit_rows`` (``half_of``: topic -> 0 or 1), and the settings of each fit
    (half 0's first; a half without rows to decide is skipped)."""
    decided, fitted = [], []
    for half in (0, 1):
        test = [r for r in apply_rows if half_of(r.topic) == half]
        if not test:
            continue
        settings = fit(collect([r for r in fit_rows if half_of(r.topic) != half]), verifier,
                       objective)  # fmt: skip
        kept = {k: settings[k] for k in ("margin", "np_threshold", "rule_weights") if k in settings}
        if "rule_weights" in kept:  # fit names them; records keep them in the rule's order
            kept["rule_weights"] = list(kept["rule_weights"].values())
        fitted.append(kept)
        decided += apply_thresholds(test, verifier, settings_thresholds(settings), 0)
    return decided, fitted


def random_halves(topics: Iterable[str], seed: int) -> dict[str, int]:
    """Topic -> 0 or 1: the topics (sorted, then shuffled by ``seed``) split in two halves
    as equal as their count allows."""
    order = sorted(set(topics))
    random.Random(seed).shuffle(order)
    return {topic: i % 2 for i, topic in enumerate(order)}


def repeated_crossfit(
    fit_rows: Sequence[BioRow],
    apply_rows: Sequence[BioRow],
    verifier: str | Verifier,
    objective: str = "er",
    splits: int = 20,
    seed: int = 0,
) -> dict[str, dict[str, float]]:
    """``crossfit`` over ``splits`` random halvings of the topics (seeds ``seed`` on): per
    subject, the mean and standard deviation of its ER and micro-F1 (where the rows hold
    decided human facts) over the splits and the mean of its estimate minus the humans'
    score (``bias_mean``: above 0, the estimate is too high), all in points, and the
    number of splits.

    Example:
        >>> spread = repeated_crossfit(rows, rows, "retrieve-lm", splits=20)  # doctest: +SKIP
        >>> spread["InstructGPT"]["er_mean"], spread["InstructGPT"]["er_sd"]  # doctest: +SKIP
        (3.2, 0.27)
    """
    if splits < 2:
        raise ValueError("repeated cross-fitting needs 2 splits or more (for a spread)")
    topics = {r.topic for r in (*fit_rows, *apply_rows)}
    runs: dict[str, list[tuple[float, float, float]]] = {}
    judged: dict[str, int] = {}  # human facts decided, per subject (none: no F1 to report)
    for k in range(seed, seed + splits):
        halves = random_halves(topics, k)
        decided, _ = crossfit(fit_rows, apply_rows, verifier, objective, halves.__getitem__)
        figures = validate_rows(decided, bootstrap=0)
        for subject, x in (figures or {"subjects": {}})["subjects"].items():
            bias = x["er_estimated_score"] - x["er_human_score"]  # the bios ER compares
            runs.setdefault(subject, []).append((x["error_rate"], x["f1_micro"], bias))
            judged[subject] = judged.get(subject, 0) + x["n_human_facts"]
    out = {}
    for subject, values in runs.items():
        er, f1, bias = zip(*values, strict=True)
        out[subject] = {
            "er_mean": round(statistics.fmean(er), 2),
            "er_sd": round(statistics.stdev(er), 2) if len(er) > 1 else 0.0,
            "f1_mean": round(statistics.fmean(f1), 2),
            "f1_sd": round(statistics.stdev(f1), 2) if len(f1) > 1 else 0.0,
            "bias_mean": round(statistics.fmean(bias), 2),
            "splits": len(values),
        }
        if not judged[subject]:  # rows decided without their human facts (raw text)
            del out[subject]["f1_mean"], out[subject]["f1_sd"]
    return out


def spread_figures(spread: dict[str, dict[str, float]], prefix: str) -> dict[str, float]:
    """``repeated_crossfit``'s output as flat figures, ``<prefix>/<subject>/<key>``."""
    return {f"{prefix}/{subject}/{k}": v for subject, x in spread.items() for k, v in x.items()}
