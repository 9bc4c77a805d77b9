"""``fscore calibrate``: fit the decision thresholds of a verifier on human-labeled bios.

A verifier's raw outputs are recorded per fact by ``fscore eval`` (``margin`` = logit(True)
- logit(False), ``np`` = NP probability). Calibration searches thresholds over the quantiles
of the observed values and keeps the pair with the best objective on the fitting bios:

- ``er``: the mean, over subject files, of |estimated - human FActScore| (ties: higher F1);
- ``f1``: micro-F1 on not-supported human atomic facts (IR counted as not supported).

The settings file it writes is read by ``fscore eval --settings``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factscore_local.validation import subject_name

USES_MARGIN = {"retrieve-lm", "no-context-lm", "retrieve-lm+np"}
USES_NP = {"np", "retrieve-lm+np"}
OBJECTIVES = ("er", "f1")


@dataclass
class SubjectFacts:
    """Raw verifier outputs of one subject file, as arrays."""

    human_score: float  # mean over the humans' responding bios, in [0, 1]
    margin: np.ndarray  # estimate facts
    np_value: np.ndarray
    bio: np.ndarray  # estimate fact -> index of its bio
    n_bios: int
    h_label: np.ndarray  # human facts: True where the humans did not say S (IR included)
    h_margin: np.ndarray
    h_np: np.ndarray


def collect(rows: list[dict]) -> dict[str, SubjectFacts]:
    """Arrays per subject from ``fscore eval`` rows of labeled bios."""
    grouped: dict[str, list[dict]] = {}
    for row in rows:
        if "error" not in row and "human" in row:
            grouped.setdefault(subject_name(row.get("source", "")), []).append(row)
    out = {}
    for name, subject_rows in grouped.items():
        margins, nps, bios = [], [], []
        human_scores, h_label, h_margin, h_np = [], [], [], []
        n_bios = 0
        for row in subject_rows:
            if row["human"]["score"] is not None:
                human_scores.append(row["human"]["score"])
            for fact in row["human"]["facts"]:
                h_label.append(fact["label"] != "S")
                h_margin.append(fact.get("margin", 0.0))
                h_np.append(fact.get("np", 0.0))
            if row["responded"] and row["decisions"]:
                for d in row["decisions"]:
                    margins.append(d.get("margin", 0.0))
                    nps.append(d.get("np", 0.0))
                    bios.append(n_bios)
                n_bios += 1
        out[name] = SubjectFacts(
            human_score=float(np.mean(human_scores)) if human_scores else float("nan"),
            margin=np.asarray(margins, float),
            np_value=np.asarray(nps, float),
            bio=np.asarray(bios, int),
            n_bios=n_bios,
            h_label=np.asarray(h_label, bool),
            h_margin=np.asarray(h_margin, float),
            h_np=np.asarray(h_np, float),
        )
    return out


def _decide(margin, np_value, verifier: str, m: float, t: float) -> np.ndarray:
    supported = np.ones(len(margin), bool)
    if verifier in USES_MARGIN:
        supported &= margin > m
    if verifier in USES_NP:
        supported &= np_value > t
    return supported


def estimated_score(s: SubjectFacts, verifier: str, m: float, t: float) -> float:
    """Estimated FActScore (no length penalty), in [0, 1]."""
    if s.n_bios == 0:
        return float("nan")
    supported = _decide(s.margin, s.np_value, verifier, m, t)
    per_bio = np.bincount(s.bio, weights=supported, minlength=s.n_bios) / np.bincount(
        s.bio, minlength=s.n_bios
    )
    return float(per_bio.mean())


def f1_score(subjects: list[SubjectFacts], verifier: str, m: float, t: float) -> float:
    tp = fp = fn = 0
    for s in subjects:
        predicted = ~_decide(s.h_margin, s.h_np, verifier, m, t)
        tp += int(np.sum(predicted & s.h_label))
        fp += int(np.sum(predicted & ~s.h_label))
        fn += int(np.sum(~predicted & s.h_label))
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def _candidates(values: np.ndarray, default: float) -> np.ndarray:
    """Thresholds between observed values (quantiles), the default, and below everything."""
    if len(values) == 0:
        return np.array([default])
    qs = np.quantile(values, np.linspace(0, 1, 101))
    return np.unique(np.concatenate([qs, [default, values.min() - 1e-6]]))


def fit(
    subjects: dict[str, SubjectFacts],
    verifier: str,
    objective: str = "er",
    default_margin: float = 0.0,
    default_np: float = 0.3,
) -> dict:
    """The thresholds that optimise the objective on these subjects, with their figures."""
    if verifier not in USES_MARGIN | USES_NP:
        raise ValueError(f"{verifier!r} has no threshold to calibrate")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}")
    if not subjects:
        raise ValueError("no labeled bios to calibrate on (lines need 'annotations')")
    items = list(subjects.values())
    all_margins = np.concatenate([np.concatenate([s.margin, s.h_margin]) for s in items])
    all_nps = np.concatenate([np.concatenate([s.np_value, s.h_np]) for s in items])
    margins = _candidates(all_margins, default_margin) if verifier in USES_MARGIN else [0.0]
    thresholds = _candidates(all_nps, default_np) if verifier in USES_NP else [default_np]

    def figures(m: float, t: float) -> tuple[float, float]:
        ers = [abs(estimated_score(s, verifier, m, t) - s.human_score) for s in items]
        return 100 * float(np.nanmean(ers)), 100 * f1_score(items, verifier, m, t)

    best = None
    for m in margins:
        for t in thresholds:
            er, f1 = figures(float(m), float(t))
            key = (er, -f1) if objective == "er" else (-f1, er)
            if best is None or key < best[0]:
                best = (key, float(m), float(t), er, f1)
    _, m, t, er, f1 = best
    default_er, default_f1 = figures(default_margin, default_np)
    return {
        "verifier": verifier,
        "objective": objective,
        "margin": round(m, 4),
        "np_threshold": round(t, 4),
        "fit": {"error_rate": round(er, 2), "f1_micro": round(f1, 2)},
        "defaults": {"error_rate": round(default_er, 2), "f1_micro": round(default_f1, 2)},
        "n_bios": sum(s.n_bios for s in items),
        "n_human_facts": sum(len(s.h_label) for s in items),
    }


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
    rows: list[dict], verifier: str, margin: float, np_threshold: float, gamma: float = 10.0
) -> list[dict]:
    """Rows re-decided with other thresholds from their recorded margins and NP values, and
    re-scored (what ``fscore eval --settings`` would give, without running a model)."""
    from factscore_local.scoring import score_bio

    def decide(fact: dict) -> bool:
        supported = True
        if verifier in USES_MARGIN:
            supported &= fact["margin"] > margin
        if verifier in USES_NP:
            supported &= fact["np"] > np_threshold
        return bool(supported)

    out = []
    for row in rows:
        if "error" in row:
            out.append(row)
            continue
        row = {**row, "decisions": [{**d, "is_supported": decide(d)} for d in row["decisions"]]}
        if "human" in row:
            facts = [{**f, "is_supported": decide(f)} for f in row["human"]["facts"]]
            row["human"] = {**row["human"], "facts": facts}
        scored = score_bio([d["is_supported"] for d in row["decisions"]] or None, gamma)
        row.update(init_score=scored.init_score, score=scored.score)
        out.append(row)
    return out
