"""``fscore calibrate``: fit the decision thresholds of a verifier on human-labeled bios.

A verifier's raw outputs are recorded per fact by ``fscore eval`` (``margin`` = logit(True)
- logit(False), ``np`` = NP probability). Calibration searches thresholds over the quantiles
of the observed values and keeps the pair with the best objective on the fitting bios:

- ``er``: the mean, over subject files, of |estimated - human FActScore| (ties: higher F1);
- ``f1``: micro-F1 on not-supported human atomic facts (IR counted as not supported).

A fitted rule (``retrieve-lm+np-fitted``) is calibrated as a whole: a logistic regression
of the human labels (S against the rest) on the rule's features of the fitting bios' human
facts gives its weights; its cutoff on the log-odds is then searched like a threshold, for
the objective, and folded into the bias.

The settings file it writes is read by ``fscore eval --settings``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factscore_local.declarations.features import feature_values
from factscore_local.declarations.verifiers import (
    FITTED,
    THRESHOLD_SIGNAL,
    VALUE_KEYS,
    Thresholds,
    Verifier,
    get_verifier,
    rule_score,
)
from factscore_local.extras import require
from factscore_local.labels.validation import subject_name
from factscore_local.pipeline.decision.reasons import reasons
from factscore_local.pipeline.records.rows import BioRow, FactResult

OBJECTIVES = ("er", "f1")


@dataclass
class SubjectFacts:
    """Recorded signals of one subject file, as arrays. Estimate facts and the human score
    cover the bios where both the humans and the estimate respond."""

    human_score: float  # mean over those bios, in [0, 1]
    signals: dict[str, np.ndarray]  # estimate facts: signal name -> values
    bio: np.ndarray  # estimate fact -> index of its bio
    n_bios: int
    h_label: np.ndarray  # human facts: True where the humans did not say S (IR included)
    h_signals: dict[str, np.ndarray]


def _as_verifier(verifier: str | Verifier) -> Verifier:
    return verifier if isinstance(verifier, Verifier) else get_verifier(verifier)


# Per-fact values beyond the recorded signals, for features a rule is tried with:
# (row, its facts) -> name -> one value per fact.
ExtraSignals = Callable[[BioRow, tuple[FactResult, ...]], Mapping[str, Sequence[float]]]


def collect(rows: list[BioRow], extra: ExtraSignals | None = None) -> dict[str, SubjectFacts]:
    """Arrays per subject from ``fscore eval`` rows of labeled bios (a signal a fact did not
    record counts as 0). ``extra`` adds signals computed from the rows."""
    grouped: dict[str, list[BioRow]] = {}
    for row in rows:
        if row.ok and row.human is not None:
            grouped.setdefault(subject_name(row.source), []).append(row)
    out = {}
    for name, subject_rows in grouped.items():
        values: dict[str, list[float]] = {}
        h_values: dict[str, list[float]] = {}
        bios, human_scores, h_label = [], [], []
        n_bios = 0
        for row in subject_rows:
            h_label += [fact.label != "S" for fact in row.human.facts]
            _gather(h_values, row, row.human.facts, extra)
            # ER compares the bios where both the humans and the estimate respond.
            if row.responded and row.decisions and row.human.score is not None:
                human_scores.append(row.human.score)
                _gather(values, row, row.decisions, extra)
                bios += [n_bios] * len(row.decisions)
                n_bios += 1
        out[name] = SubjectFacts(
            human_score=float(np.mean(human_scores)) if human_scores else float("nan"),
            signals={s: np.asarray(v, float) for s, v in values.items()},
            bio=np.asarray(bios, int),
            n_bios=n_bios,
            h_label=np.asarray(h_label, bool),
            h_signals={s: np.asarray(v, float) for s, v in h_values.items()},
        )
    return out


def _gather(
    into: dict[str, list[float]],
    row: BioRow,
    facts: tuple[FactResult, ...],
    extra: ExtraSignals | None,
) -> None:
    """Append the facts' recorded signals (and the extra ones) to ``into``."""
    recorded = [f.signals() for f in facts]
    for s in VALUE_KEYS:
        into.setdefault(s, []).extend(r.get(s, 0.0) for r in recorded)
    for name, column in (extra(row, facts) if extra else {}).items():
        if len(column) != len(facts):
            raise ValueError(f"extra signal {name!r}: {len(column)} values for {len(facts)} facts")
        into.setdefault(name, []).extend(map(float, column))


def estimated_score(s: SubjectFacts, verifier: str | Verifier, thresholds: Thresholds) -> float:
    """Estimated FActScore (no length penalty), in [0, 1]."""
    if s.n_bios == 0:
        return float("nan")
    supported = _as_verifier(verifier).decide(s.signals, thresholds, len(s.bio))
    return float(per_bio_means(s, supported).mean())


def per_bio_means(s: SubjectFacts, values: np.ndarray) -> np.ndarray:
    """The mean of a per-fact value (of the estimate's facts) over each bio's facts."""
    return np.bincount(s.bio, weights=values, minlength=s.n_bios) / np.bincount(
        s.bio, minlength=s.n_bios
    )


def not_supported_counts(
    subjects: list[SubjectFacts], verifier: str | Verifier, thresholds: Thresholds
) -> tuple[int, int, int]:
    """(tp, fp, fn) of "not supported" on the human facts (IR counted as not supported)."""
    verifier = _as_verifier(verifier)
    tp = fp = fn = 0
    for s in subjects:
        predicted = ~verifier.decide(s.h_signals, thresholds, len(s.h_label))
        tp += int(np.sum(predicted & s.h_label))
        fp += int(np.sum(predicted & ~s.h_label))
        fn += int(np.sum(~predicted & s.h_label))
    return tp, fp, fn


def f1_from_counts(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def f1_score(
    subjects: list[SubjectFacts], verifier: str | Verifier, thresholds: Thresholds
) -> float:
    return f1_from_counts(*not_supported_counts(subjects, verifier, thresholds))


def _candidates(values: np.ndarray, default: float) -> np.ndarray:
    """Thresholds between observed values (quantiles), the default, and below everything."""
    if len(values) == 0:
        return np.array([default])
    qs = np.quantile(values, np.linspace(0, 1, 101))
    return np.unique(np.concatenate([qs, [default, values.min() - 1e-6]]))


def fit(
    subjects: dict[str, SubjectFacts],
    verifier: str | Verifier,
    objective: str = "er",
    defaults: Thresholds | None = None,
) -> dict:
    """The thresholds that optimise the objective on these subjects, with their figures."""
    verifier = _as_verifier(verifier)
    defaults = defaults or Thresholds()
    if not verifier.thresholds:
        raise ValueError(f"{verifier.name!r} has no threshold to calibrate")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}")
    if not subjects:
        raise ValueError("no labeled bios to calibrate on (lines need 'annotations')")
    items = list(subjects.values())
    if FITTED in verifier.thresholds:
        return _fit_rule(items, verifier, objective, defaults)
    grids = []
    for name in ("margin", "np"):  # a threshold the rule does not read stays at its default
        if name not in verifier.thresholds:
            grids.append([getattr(defaults, name)])
            continue
        signal = THRESHOLD_SIGNAL[name]
        observed = np.concatenate(
            [np.concatenate([s.signals[signal], s.h_signals[signal]]) for s in items]
        )
        grids.append(_candidates(observed, getattr(defaults, name)))

    candidates = [Thresholds(float(m), float(t)) for m, t in itertools.product(*grids)]
    return _best(items, verifier, objective, defaults, candidates)


def _figures(items: list[SubjectFacts], verifier: Verifier, t: Thresholds) -> tuple[float, float]:
    """(mean ER over subjects, micro-F1), in points."""
    ers = [abs(estimated_score(s, verifier, t) - s.human_score) for s in items]
    return 100 * float(np.nanmean(ers)), 100 * f1_score(items, verifier, t)


def _best(
    items: list[SubjectFacts],
    verifier: Verifier,
    objective: str,
    defaults: Thresholds,
    candidates: list[Thresholds],
) -> dict:
    """The candidate with the best objective (ties: the other figure), as settings."""
    best = None
    for thresholds in candidates:
        er, f1 = _figures(items, verifier, thresholds)
        key = (er, -f1) if objective == "er" else (-f1, er)
        if best is None or key < best[0]:
            best = (key, thresholds, er, f1)
    _, chosen, er, f1 = best
    default_er, default_f1 = _figures(items, verifier, defaults)
    return {
        "verifier": verifier.name,
        "objective": objective,
        # Exact: a rounded threshold can fall on the other side of a recorded value (the
        # "below everything" candidate rounded to 0 would reject facts with NP 0.0).
        "margin": chosen.margin,
        "np_threshold": chosen.np,
        **({"rule_weights": verifier.weights_by_name(chosen.weights)} if chosen.weights else {}),
        "fit": {"error_rate": round(er, 2), "f1_micro": round(f1, 2)},
        "defaults": {"error_rate": round(default_er, 2), "f1_micro": round(default_f1, 2)},
        "n_bios": sum(s.n_bios for s in items),
        "n_human_facts": sum(len(s.h_label) for s in items),
    }


def rule_features(signals: dict[str, np.ndarray], verifier: Verifier) -> np.ndarray:
    """A fitted rule's feature matrix (one row per fact) from recorded signals."""
    return np.column_stack([feature_values(f, signals) for f in verifier.features])


def fit_logistic(items: list[SubjectFacts], verifier: Verifier):
    """The logistic regression a fitted rule starts from: the human labels (S against the
    rest) on the rule's features of the human facts."""
    LogisticRegression = require(  # noqa: N806 - the class, under its own name
        "sklearn.linear_model", "stats", "fitting a rule"
    ).LogisticRegression

    x = np.concatenate([rule_features(s.h_signals, verifier) for s in items])
    supported = ~np.concatenate([s.h_label for s in items])
    if len(set(supported)) < 2:
        raise ValueError("fitting a rule needs human facts of both kinds (S and not S)")
    return LogisticRegression(C=1.0, max_iter=1000).fit(x, supported)


def _fit_rule(
    items: list[SubjectFacts], verifier: Verifier, objective: str, defaults: Thresholds
) -> dict:
    """A fitted rule's weights (logistic regression on the human facts), then its cutoff."""
    model = fit_logistic(items, verifier)
    weights = np.concatenate([model.intercept_, model.coef_[0]])
    # Cutoffs on the log-odds: quantiles of every fact's score, 0 (probability 0.5) and
    # below everything; each folded into the bias.
    scores = np.concatenate(
        [rule_score(s.signals, tuple(weights), verifier.features) for s in items if len(s.bio)]
        + [rule_score(s.h_signals, tuple(weights), verifier.features) for s in items]
    )
    cutoffs = _candidates(scores, 0.0)
    candidates = [
        Thresholds(defaults.margin, defaults.np, (float(weights[0] - c), *map(float, weights[1:])))
        for c in cutoffs
    ]
    return _best(items, verifier, objective, defaults, candidates)


def settings_thresholds(settings: dict) -> Thresholds:
    """The thresholds of a settings file (a fitted rule's weights checked by name)."""
    weights = settings.get("rule_weights")
    if weights and "verifier" in settings:
        weights = get_verifier(settings["verifier"]).weights_from(weights)
    elif isinstance(weights, dict):  # a fit's own output, in the rule's order
        weights = tuple(weights.values())
    return Thresholds(settings["margin"], settings["np_threshold"], tuple(weights or ()))


def write_settings(path: Path, settings: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")


def read_settings(path: Path) -> dict:
    """A settings file of ``fscore calibrate``, checked."""
    try:
        settings = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ValueError(f"settings file not found: {path}") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not a JSON settings file: {exc.msg}") from exc
    if not isinstance(settings, dict) or not {"margin", "np_threshold"} <= settings.keys():
        raise ValueError(f"{path} lacks 'margin' and 'np_threshold' (write it with calibrate)")
    return settings


def apply_thresholds(
    rows: list[BioRow], verifier: str | Verifier, thresholds: Thresholds, gamma: float = 10.0
) -> list[BioRow]:
    """Rows re-decided with other thresholds from their recorded signals, and re-scored
    (what ``fscore eval --settings`` would give, without running a model)."""
    from dataclasses import replace

    from factscore_local.pipeline.decision.scoring import score_bio

    verifier = _as_verifier(verifier)

    def redecide(facts) -> tuple:
        recorded = [f.signals() for f in facts]
        arrays = {s: np.asarray([r[s] for r in recorded], float) for s in verifier.value_keys}
        decided = verifier.decide(arrays, thresholds, len(facts))
        why = reasons(verifier, arrays, thresholds, decided)  # (no passages: no quoted values)
        return tuple(
            replace(f, is_supported=bool(d), reason=r)
            for f, d, r in zip(facts, decided, why, strict=True)
        )

    out = []
    for row in rows:
        if not row.ok:
            out.append(row)
            continue
        decisions = redecide(row.decisions)
        human = row.human
        if human is not None:
            human = replace(human, facts=redecide(human.facts))
        scored = score_bio([d.is_supported for d in decisions] or None, gamma)
        out.append(
            replace(
                row,
                decisions=decisions,
                human=human,
                init_score=scored.init_score,
                score=scored.score,
            )
        )
    return out
