"""Running the estimator on the dev bios, and the figures of its rows: cross-fitting over
the topic halves, per-subject figures, AUC, the split by page length."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import numpy as np

from factscore_local.config import build_config
from factscore_local.declarations.verifiers import FITTED, Thresholds, get_verifier
from factscore_local.labels.calibration import apply_thresholds
from factscore_local.labels.crossfit import crossfit, repeated_crossfit
from factscore_local.labels.validation import half_means, subject_name, topic_half, validate_rows
from factscore_local.npm.defaults import default_np_threshold
from factscore_local.pipeline.records.inputs import Bio
from factscore_local.pipeline.records.rows import BioRow
from factscore_local.studies import run_on_bios
from scripts.common import SUBJECTS, labeled_bios
from scripts.common import auc as auc_of
from scripts.common import log as _log


def log(message: str) -> None:
    _log("tables", message)


class Runner:
    """The estimator on the dev bios: every run through one cache, its timings kept."""

    def __init__(
        self,
        index: Path,
        cache: Path,
        data: Path,
        lm: str | None,
        max_passages: int | None,
        evidence: str,
        rows_dir: Path | None = None,
        prefix_states: Path | None = None,
    ) -> None:
        from factscore_local.index.reader import KnowledgeSource

        self.index, self.cache, self.data, self.lm = index, cache, data, lm  # data: the root
        self.rows_dir = rows_dir  # where each run's rows go, a file per subject
        self.evidence = evidence
        self.prefix_states = prefix_states  # evaluated evidence kept across passes
        chatgpt = labeled_bios(data, ("ChatGPT",))["ChatGPT"]
        ks = KnowledgeSource(index)
        sizes = {b.topic: len(ks.get_passages(b.topic)) for b in chatgpt}
        self.page_size = sizes
        max_passages = max_passages or max(sizes.values())
        self.skipped = [t for t, n in sizes.items() if n > max_passages]
        # The dev file is sorted from very rare to very frequent people: "the first N
        # topics" takes them round-robin over the five frequency classes, so that every
        # slice spreads over all of them.
        classes: dict[str, list[str]] = {}
        for b in chatgpt:
            if sizes[b.topic] <= max_passages:
                classes.setdefault(b.record["cat"][0], []).append(b.topic)
        self.topic_order = [
            t for group in itertools.zip_longest(*classes.values()) for t in group if t
        ]
        self.topic_class = {t: c for c, ts in classes.items() for t in ts}
        self.timings: dict[str, dict] = {}

    def bios(self, n_topics: int, subjects=SUBJECTS, both_halves: bool = False) -> list[Bio]:
        """Bios of the first n_topics topics; with both_halves, the first n_topics // 2 of
        each topic half (cross-fitting within these bios needs both)."""
        topics = self.topic_order[:n_topics]
        if both_halves:
            halves = [[t for t in self.topic_order if topic_half(t) == h] for h in (0, 1)]
            topics = halves[1][: n_topics - n_topics // 2] + halves[0][: n_topics // 2]
        rank = {t: i for i, t in enumerate(topics)}
        by_subject = labeled_bios(self.data, tuple(subjects))
        bios = [b for s in subjects for b in by_subject[s] if b.topic in rank]
        # Topic by topic: a chunk then holds one page's facts from every subject, which share
        # their retrieved passages (and the LM's KV cache of them).
        return sorted(bios, key=lambda b: rank[b.topic])

    def rows(self, name: str, bios: list[Bio], **settings) -> list[BioRow]:
        """The estimator's rows of these bios under these settings (over the base ones)."""
        base = {"index": self.index, "lm": self.lm, "cache": self.cache, "use_atomic_facts": True,
                "gamma": 0, "chunk_bios": 2 * len(SUBJECTS), "evidence": self.evidence,
                "prefix_states": self.prefix_states}  # fmt: skip
        config = build_config({**base, **settings})
        start = time.perf_counter()
        log(f"{name}: {len(bios)} bios")
        run = run_on_bios(config, bios, progress=True)
        rows = run.out
        seconds = time.perf_counter() - start
        if self.rows_dir is not None:
            write_rows(rows, self.rows_dir / name)
        n = sum(len(r.decisions) + (len(r.human.facts) if r.human else 0) for r in rows)
        self.timings[name] = {
            "seconds": round(seconds, 1),
            "facts": n,
            "computed": run.computed,
        }
        log(f"{name}: {n} facts in {seconds:.0f} s ({run.computed} cache misses)")
        return rows


def write_rows(rows: list[BioRow], folder: Path) -> None:
    """A run's rows as ``fscore eval --out`` writes them, one file per subject."""
    folder.mkdir(parents=True, exist_ok=True)
    for subject in SUBJECTS:
        lines = [json.dumps(r.to_json(), ensure_ascii=False) for r in rows
                 if subject_name(r.source) == subject]  # fmt: skip
        if lines:
            (folder / f"{subject}.jsonl").write_text("\n".join(lines) + "\n", "utf-8")


def per_half(rows: list[BioRow]) -> dict:
    """ER and F1 per subject on each topic half."""
    out = {}
    for half in (0, 1):
        v = validate_rows([r for r in rows if topic_half(r.topic) == half], bootstrap=0)
        out[str(half)] = {s: {"er": x["error_rate"], "f1": x["f1_micro"]}
                          for s, x in v["subjects"].items()}  # fmt: skip
    return out


COVERAGE_RULE = "retrieve-lm+np+coverage-fitted"
SLOTS_RULE = "retrieve-lm+np+coverage+slots-fitted"  # the coverage rule + the slot check
LONG_PAGE = 5  # passages: a page longer than k=5 gives facts different evidence


def by_page_length(rows: list[BioRow], page_size: dict[str, int]) -> dict:
    """Figures of the topics whose page has at most LONG_PAGE passages, and of the rest."""
    out = {}
    for name, keep in ((f"<={LONG_PAGE}", lambda n: n <= LONG_PAGE),
                       (f">{LONG_PAGE}", lambda n: n > LONG_PAGE)):  # fmt: skip
        subset = [r for r in rows if keep(page_size[r.topic])]
        if subset:
            out[name] = {"topics": len({r.topic for r in subset}), **figures(subset)}
    return out


def figures(rows: list[BioRow]) -> dict:
    """Per-subject ER, F1 and intervals of a run's rows, the ranking and the mean ER."""
    v = validate_rows(rows, bootstrap=1000)
    subjects = v["subjects"]
    return {
        "subjects": {
            s: {
                k: subjects[s][k]
                for k in (
                    "human_score",
                    "estimated_score",
                    "error_rate",
                    "mark",
                    "error_rate_ci95",
                    "f1_micro",
                    "f1_micro_ci95",
                    "f1_micro_ir_excluded",
                    "precision",
                    "recall",
                    "bio_mae",
                    "n_bios",
                    "n_human_facts",
                )
            }
            for s in SUBJECTS
            if s in subjects
        },
        "ranking_kept": v["ranking_kept"],
        "mean_er": round(float(np.mean([subjects[s]["error_rate"] for s in subjects])), 2),
    }


def auc(rows: list[BioRow], key: str) -> float:
    """P(value of a human-S fact > value of a not-S fact) over the human atomic facts."""
    values, positive = [], []
    for row in rows:
        for f in row.human.facts if row.human else ():
            recorded = f.signals()
            if key in recorded:
                values.append(recorded[key])
                positive.append(f.label == "S")
    return round(auc_of(np.asarray(values, float), np.asarray(positive, bool)), 4)


def label_recall(rows: list[BioRow]) -> dict:
    """Per subject, the share of each human label that the verifier decided right: S judged
    supported, NS and IR judged not supported (human atomic facts)."""
    counts: dict = {}
    for row in rows:
        subject = counts.setdefault(subject_name(row.source), {})
        for f in row.human.facts if row.human else ():
            right, total = subject.get(f.label, (0, 0))
            subject[f.label] = (right + (f.is_supported == (f.label == "S")), total + 1)
    return {
        s: {label: round(100 * r / n, 1) for label, (r, n) in sorted(c.items())}
        for s, c in counts.items()
    }


def thresholds_shown(verifier: str, fitted: list[dict]) -> str:
    """'m>0.1, np>0.3 / m>...' for the thresholds a verifier's rule reads, per topic half."""
    names = get_verifier(verifier).thresholds
    shown = {
        "margin": lambda f: f"m>{f['margin']:g}",
        "np": lambda f: f"np>{f['np_threshold']:g}",
        # bias, margin, np, margin*np: supported when their sum with the features > 0
        "weights": lambda f: (
            "w=(" + ", ".join(f"{w:.2f}" for w in _weight_list(f["rule_weights"])) + ")"
        ),
    }
    return " / ".join(", ".join(shown[name](f) for name in names) for f in fitted)


def default_and_crossfit(
    table: list,
    name: str,
    rows: list[BioRow],
    verifier: str,
    objective: str,
    np_model=None,
    page_size: dict[str, int] | None = None,
    rows_dir: Path | None = None,
    halves: bool = False,
    repeats: int = 0,
) -> dict:
    """Two rows of a results table: default thresholds, and 2-fold cross-fitted ones (with
    page_size, the cross-fitted figures also split by page length; with halves, the mean ER
    and F1 of each topic half; with repeats, each subject's over that many random halvings).
    A fitted rule has no default of its own (unfitted, it is the ensemble): one row."""
    out = {}
    if FITTED not in get_verifier(verifier).thresholds:
        defaults = Thresholds(0.0, default_np_threshold(np_model))
        out["default"] = figures(apply_thresholds(rows, verifier, defaults, 0))
        table.append((name, "default", out["default"]))
    fitted_rows, fitted = crossfit(rows, rows, verifier, objective)
    if rows_dir is not None:  # what fscore report draws: the cross-fitted decisions
        write_rows(fitted_rows, rows_dir / f"{name} cross-fitted")
    out["calibrated"] = figures(fitted_rows)
    if halves:  # what deciding a default compares
        out["halves"] = half_means(fitted_rows)
    if repeats:
        out["repeated"] = repeated_crossfit(rows, rows, verifier, objective, repeats)
    out["thresholds"] = fitted
    table.append((name, f"cross-fitted: {thresholds_shown(verifier, fitted)}", out["calibrated"]))
    if page_size is not None:
        out["page_length"] = by_page_length(fitted_rows, page_size)
    return out


def _weight_list(weights) -> list[float]:
    """A settings file's weights in the rule's order (a name map, or a list as before)."""
    return list(weights.values()) if isinstance(weights, dict) else list(weights)
