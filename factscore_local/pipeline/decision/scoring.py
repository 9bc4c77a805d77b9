"""FActScore from per-fact decisions: per-bio precision, length penalty, aggregates."""

from __future__ import annotations

import math
from dataclasses import dataclass


def length_penalty(n_facts: int, gamma: float) -> float:
    """min(1, exp(1 - gamma / n)): FActScore's penalty for bios with few facts; 0 disables."""
    if not gamma or n_facts <= 0:
        return 1.0
    return 1.0 if n_facts > gamma else math.exp(1 - gamma / n_facts)


@dataclass
class BioScore:
    responded: bool
    n_facts: int
    init_score: float | None  # precision of the bio's facts, None when it did not respond
    score: float | None  # with the length penalty


def score_bio(decisions: list[bool] | None, gamma: float) -> BioScore:
    if not decisions:  # abstained, or no atomic fact: FActScore counts it as not responding
        return BioScore(False, 0, None, None)
    init = sum(decisions) / len(decisions)
    return BioScore(True, len(decisions), init, init * length_penalty(len(decisions), gamma))


def aggregate(bios: list[BioScore]) -> dict:
    """FActScore's summary: means over responding bios; respond ratio over all bios."""
    responding = [b for b in bios if b.responded]
    n = len(responding)
    return {
        "score": sum(b.score for b in responding) / n if n else None,
        "init_score": sum(b.init_score for b in responding) / n if n else None,
        "respond_ratio": n / len(bios) if bios else None,
        "num_facts_per_response": sum(b.n_facts for b in responding) / n if n else None,
        "n_bios": len(bios),
        "n_responding": n,
        "n_facts": sum(b.n_facts for b in responding),
    }


def summarize(rows) -> dict:
    """The summary of ``fscore eval`` rows (``records.BioRow``): FActScore's aggregates over
    the bios that could be evaluated, and how many could not."""
    scored = [BioScore(r.responded, r.n_facts, r.init_score, r.score) for r in rows if r.ok]
    summary = aggregate(scored)
    summary["n_errors"] = sum(1 for r in rows if not r.ok)
    return summary
