"""Distance of an estimate from the human labels: human FActScore, error rate, micro-F1.

Definitions (FActScore paper, §3.3, §4.2 and App. B.2):

- Human FActScore of a bio: see ``labeled.human_bio_score``. The file's score is the mean
  over responding bios (``annotations`` not null, at least one fact).
- ER = |estimated - human| in points, both averaged over the bios where both respond (a
  bio that responds on one side only is left out, and counted); over- or under-estimation
  beyond 5 points is marked.
- micro-F1 on not-supported facts, pooled over all human atomic facts of a file: G = facts
  the humans did not label S (NS, and IR in the ``ir_as_ns`` convention), P = facts the
  estimator called not supported.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from factscore_local.pipeline.records.rows import BioRow

MARK_BEYOND = 5.0  # points; the paper marks over-/under-estimation beyond this


@dataclass(frozen=True)
class F1:
    precision: float
    recall: float
    f1: float
    n_facts: int
    n_gold: int  # facts in G
    n_predicted: int  # facts in P


def f1_not_supported(pairs: Sequence[tuple[str, bool]], ir_as_ns: bool = True) -> F1:
    """pairs: (human label, estimator says supported). IR facts are in G when ir_as_ns,
    left out of everything otherwise."""
    tp = fp = fn = n = 0
    for label, supported in pairs:
        if label == "IR" and not ir_as_ns:
            continue
        n += 1
        gold = label != "S"
        predicted = not supported
        tp += gold and predicted
        fp += predicted and not gold
        fn += gold and not predicted
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return F1(precision, recall, f1, n, tp + fn, tp + fp)


def mark(estimate: float, human: float) -> str:
    """'+' over-estimates, '-' under-estimates by more than 5 points, '' otherwise."""
    if estimate - human > MARK_BEYOND:
        return "+"
    if human - estimate > MARK_BEYOND:
        return "-"
    return ""


def bootstrap_interval(
    units: Sequence, statistic: Callable[[Sequence], float], n: int = 1000, seed: int = 0
) -> tuple[float, float]:
    """95% percentile interval of ``statistic`` over bios resampled with replacement."""
    if not units:
        return (math.nan, math.nan)
    rng = random.Random(seed)
    values = sorted(statistic([rng.choice(units) for _ in units]) for _ in range(n))
    return values[int(0.025 * (n - 1))], values[int(0.975 * (n - 1))]


def topic_half(topic: str) -> int:
    """0 or 1: a fixed split of topics for fitting on one half and measuring on the other."""
    return hashlib.sha256(topic.encode("utf-8")).digest()[0] & 1


def ranking_kept(human: dict[str, float], estimated: dict[str, float]) -> bool:
    """Whether the estimate orders the subjects strictly as the humans do (a tie in the
    estimate where the humans differ is not a kept ranking)."""
    names = sorted(human, key=lambda s: human[s])
    pairs = zip(names, names[1:], strict=False)
    return all(
        (estimated[a] < estimated[b]) if human[a] < human[b] else estimated[a] == estimated[b]
        for a, b in pairs
    )


@dataclass
class BioResult:
    """What validation needs of one evaluated bio."""

    topic: str
    human: float | None  # None: the humans' bio does not respond
    estimate: float | None  # init_score (no length penalty); None: not responding
    facts: list[tuple[str, bool]]  # (human label, estimator says supported) per human fact


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _human(bios: Sequence[BioResult]) -> float:
    return 100 * _mean([b.human for b in bios if b.human is not None])


def _estimate(bios: Sequence[BioResult]) -> float:
    return 100 * _mean([b.estimate for b in bios if b.estimate is not None])


def _paired(bios: Sequence[BioResult]) -> list[BioResult]:
    """The bios where both the humans and the estimate respond: ER compares these only."""
    return [b for b in bios if b.human is not None and b.estimate is not None]


def _error(bios: Sequence[BioResult]) -> float:
    paired = _paired(bios)
    return abs(_estimate(paired) - _human(paired))


def _f1(bios: Sequence[BioResult], ir_as_ns: bool = True) -> F1:
    return f1_not_supported([p for b in bios for p in b.facts], ir_as_ns)


def report(bios: Sequence[BioResult], bootstrap: int = 1000, seed: int = 0) -> dict:
    """The validation figures of one subject file (scores in points, F1 in percent)."""
    f1, f1_ex = _f1(bios, True), _f1(bios, False)
    both = _paired(bios)
    paired_human, paired_estimate = _human(both), _estimate(both)
    out = {
        # Each side over its own responding bios (what each would report alone)...
        "human_score": round(_human(bios), 2),
        "estimated_score": round(_estimate(bios), 2),
        # ...and ER over the bios where both respond, so it compares the same bios.
        "error_rate": round(abs(paired_estimate - paired_human), 2),
        "mark": mark(paired_estimate, paired_human),
        "er_human_score": round(paired_human, 2),
        "er_estimated_score": round(paired_estimate, 2),
        "n_er_bios": len(both),
        # Bios that respond on one side only: left out of ER.
        "n_er_dropped": sum((b.human is None) != (b.estimate is None) for b in bios),
        "f1_micro": round(100 * f1.f1, 2),
        "precision": round(100 * f1.precision, 2),
        "recall": round(100 * f1.recall, 2),
        "f1_micro_ir_excluded": round(100 * f1_ex.f1, 2),
        "precision_ir_excluded": round(100 * f1_ex.precision, 2),
        "recall_ir_excluded": round(100 * f1_ex.recall, 2),
        "bio_mae": round(100 * _mean([abs(b.estimate - b.human) for b in both]), 2),
        "n_bios": len(bios),
        "n_human_responding": sum(b.human is not None for b in bios),
        "n_estimate_responding": sum(b.estimate is not None for b in bios),
        "n_human_facts": f1.n_facts,
    }
    if bootstrap:
        lo, hi = bootstrap_interval(bios, _error, bootstrap, seed)
        out["error_rate_ci95"] = [round(lo, 2), round(hi, 2)]
        lo, hi = bootstrap_interval(bios, lambda s: 100 * _f1(s).f1, bootstrap, seed)
        out["f1_micro_ci95"] = [round(lo, 2), round(hi, 2)]
    return out


def subject_name(source: str) -> str:
    """A subject LM's name from its input file: ``.../ChatGPT.jsonl`` -> ``ChatGPT``."""
    name = source.replace("\\", "/").rsplit("/", 1)[-1]
    return name[: -len(".jsonl")] if name.endswith(".jsonl") else name


def bio_result(row: BioRow) -> BioResult | None:
    """A validation record of one output row of ``fscore eval``; None without labels."""
    if not row.ok or row.human is None:
        return None
    return BioResult(
        topic=row.topic,
        human=row.human.score,
        estimate=row.init_score if row.responded else None,
        facts=[(f.label or "", f.is_supported) for f in row.human.facts],
    )


def half_means(rows: Sequence[BioRow]) -> dict[int, tuple[float, float]]:
    """(mean ER, mean micro-F1) over the subjects, on each topic half that has labels."""
    out = {}
    for half in (0, 1):
        v = validate_rows([r for r in rows if topic_half(r.topic) == half], bootstrap=0)
        if v is not None:
            subjects = v["subjects"].values()
            out[half] = (
                round(_mean([s["error_rate"] for s in subjects]), 2),
                round(_mean([s["f1_micro"] for s in subjects]), 2),
            )
    return out


def wins_on_both_halves(
    candidate: dict[int, tuple[float, float]], base: dict[int, tuple[float, float]]
) -> bool:
    """Whether a candidate (``half_means`` of its decisions) beats the base on each topic
    half: a lower mean ER and a higher mean micro-F1. A change becomes a default only so."""
    return all(
        half in candidate and half in base
        and candidate[half][0] < base[half][0] and candidate[half][1] > base[half][1]
        for half in (0, 1)
    )  # fmt: skip


def validate_rows(rows: Sequence[BioRow], bootstrap: int = 1000, seed: int = 0) -> dict | None:
    """Validation figures per subject file and pooled; None when no row carries labels."""
    by_subject: dict[str, list[BioResult]] = {}
    for row in rows:
        result = bio_result(row)
        if result is not None:
            by_subject.setdefault(subject_name(row.source), []).append(result)
    if not by_subject:
        return None
    subjects = {name: report(bios, bootstrap, seed) for name, bios in by_subject.items()}
    pooled = report([b for bios in by_subject.values() for b in bios], bootstrap, seed)
    out = {"pooled": pooled, "subjects": subjects, "ranking_kept": None}
    if len(subjects) > 1:
        out["ranking_kept"] = ranking_kept(
            {n: s["human_score"] for n, s in subjects.items()},
            {n: s["estimated_score"] for n, s in subjects.items()},
        )
    return out
