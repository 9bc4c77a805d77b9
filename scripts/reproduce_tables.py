"""FActScore's Tables 1, 3 and 9 on the dev split, with the embedded CPU models.

    python scripts/reproduce_tables.py --index dev-index --np-model minilm

- Table 1: statistics of the labeled dev files (all topics; no model).
- Table 3 / Table 9: ER (estimated FActScore) and micro-F1 per verifier on ``--topics``
  topics of the dev files (all three subjects), taken round-robin over the five frequency
  classes (all 98 with ``--topics 98``; ``--max-passages`` can leave out long pages), with
  the labels' ``model-atomic-facts`` (ER) and the human atomic facts (F1); each thresholded
  verifier once with the default thresholds and once calibrated by 2-fold cross-fitting
  over the fixed topic halves (thresholds fitted on one half, measured on the other: no
  number is fitted on the data it is measured on); the same split by page length (at most
  5 passages, or more). ``--evidence`` picks the evidence mode of every run.
- The fitted decision rules (``retrieve-lm+np-fitted``, a logistic model over margin and
  NP; ``retrieve-lm+np+coverage-fitted``, the same with the fact's lexical coverage by its
  passages) cross-fitted like the thresholds, on the main run's signals (no model run).
- Evidence modes: per-fact top-k, shared blocks and page segments on ``--evidence-bios``
  long-page bios.
- Prompt levers (``--levers``): worked examples before the evidence, the fact's sentence
  as context, no chat template, a Yes/No question; each a run of its own on the same bios,
  against the main run.
- NP stand-ins: the MiniLM encoder with NPM's math vs the causal LM's token probabilities,
  on ``--np-topics`` topics, half from each topic half (cross-fitting within them).
- What limits the estimate: the share of human-supported facts' content words present on
  the dev pages (no model), and per-label agreement of retrieve-lm with the humans.
- Own decomposition on the first ``--own-topics`` topics; ablations (BM25 vs dense, k,
  demonstrations) on the first ``--ablation-topics`` topics.

Every model result goes through one SQLite cache (``--cache``), so a rerun, or a run with
more topics, only computes what is new; ``--seed-cache FILE`` first imports the results of
an earlier run (``fscore cache export``), e.g. on another machine. Prints markdown; writes
all figures as JSON.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from factscore_local.config import (  # noqa: E402
    DEFAULT_NP_MODEL,
    DEFAULTS,
    build_config,
    default_np_threshold,
)
from factscore_local.labels.calibration import (  # noqa: E402
    apply_thresholds,
    collect,
    fit,
    settings_thresholds,
)
from factscore_local.labels.labeled import (  # noqa: E402
    LABELS,
    human_bio_score,
    human_facts,
    label_counts,
    model_facts,
)
from factscore_local.labels.validation import (  # noqa: E402
    f1_not_supported,
    half_means,
    ranking_kept,
    subject_name,
    topic_half,
    validate_rows,
    wins_on_both_halves,
)
from factscore_local.pipeline.estimator import Estimator  # noqa: E402
from factscore_local.pipeline.evidence import EVIDENCE_MODES  # noqa: E402
from factscore_local.pipeline.inputs import Bio, read_bios  # noqa: E402
from factscore_local.pipeline.records import BioRow  # noqa: E402
from factscore_local.pipeline.verifiers import FITTED, Thresholds, get_verifier  # noqa: E402

SUBJECTS = ("InstructGPT", "ChatGPT", "PerplexityAI")  # the paper's column order
# The paper's numbers (full 183-topic release; Inst-LLaMA 7B rows of Tables 3 and 9).
PAPER_T1 = {
    "InstructGPT": {"responding": 99.5, "tokens": 110.6, "sentences": 6.2, "facts": 26.3,
                    "S": 42.3, "NS": 43.2, "IR": 14.0, "abstains": 0.5, "factscore": 42.5},
    "ChatGPT": {"responding": 85.8, "tokens": 154.5, "sentences": 7.9, "facts": 34.7,
                "S": 50.0, "NS": 27.5, "IR": 8.3, "abstains": 14.2, "factscore": 58.3},
    "PerplexityAI": {"responding": 90.7, "tokens": 151.0, "sentences": 9.8, "facts": 40.8,
                     "S": 64.9, "NS": 11.1, "IR": 14.8, "abstains": 9.3, "factscore": 71.5},
}  # fmt: skip
PAPER_T3 = {  # ER (FS) per subject, Inst-LLaMA 7B as evaluator
    "always-supported": ((57.5, 100.0), (41.7, 100.0), (28.5, 100.0)),
    "always-not-supported": ((42.5, 0.0), (58.3, 0.0), (71.5, 0.0)),
    "random": ((7.5, 50.0), (8.3, 50.0), (21.5, 50.0)),
    "no-context-lm": ((7.1, 49.6), (7.8, 50.5), (34.7, 36.8)),
    "np": ((14.8, 57.3), (13.7, 72.0), (1.4, 72.9)),
    "retrieve-lm": ((14.1, 56.6), (17.1, 75.4), (0.1, 71.6)),
    "retrieve-lm+np": ((1.4, 41.1), (0.4, 58.7), (9.9, 61.6)),
}
PAPER_T9 = {  # micro-F1 on not-supported facts
    "always-supported": (0.0, 0.0, 0.0),
    "always-not-supported": (71.4, 58.3, 30.9),
    "random": (52.2, 45.0, 25.7),
    "no-context-lm": (61.2, 52.2, 31.4),
    "np": (70.0, 56.6, 51.4),
    "retrieve-lm": (78.7, 61.9, 51.1),
    "retrieve-lm+np": (83.2, 70.5, 53.3),
}


def log(message: str) -> None:
    print(f"[tables] {message}", file=sys.stderr, flush=True)


# --- Table 1 ----------------------------------------------------------------------------
def load_labeled(data: Path) -> dict[str, list[dict]]:
    """The labeled dev records of every subject, parsed once."""
    return {
        s: [json.loads(line) for line in (data / f"{s}.jsonl").read_text("utf-8").splitlines()]
        for s in SUBJECTS
    }


def table1(labeled: dict[str, list[dict]]) -> dict:
    out = {}
    for subject, records in labeled.items():
        human = [human_bio_score(r["annotations"]) for r in records]
        responding = [r for r, h in zip(records, human, strict=True) if h is not None]
        n_facts = [h[1] for h in human if h is not None]
        shares: dict[str, list[float]] = {label: [] for label in LABELS}
        for r in responding:
            counts = label_counts(r["annotations"])
            total = sum(counts.values())
            for label in shares:
                shares[label].append(counts[label] / total)
        rate = len(responding) / len(records)
        out[subject] = {
            "bios": len(records),
            "responding": round(100 * rate, 1),
            "tokens": round(float(np.mean([len(r["output"].split()) for r in responding])), 1),
            "sentences": round(float(np.mean([len(r["annotations"]) for r in responding])), 1),
            "facts": round(float(np.mean(n_facts)), 1),
            # Shares of all bios, as the paper's columns (they add up to 100 with abstains).
            **{k: round(100 * rate * float(np.mean(v)), 1) for k, v in shares.items()},
            "abstains": round(100 * (1 - rate), 1),
            "factscore": round(100 * float(np.mean(shares["S"])), 1),
        }
    return out


def ir_convention(labeled: dict[str, list[dict]]) -> dict:
    """The "always not-supported" row of Table 9 under both IR conventions (no model: every
    human atomic fact is predicted not supported), to see which one the paper used."""
    out = {}
    for subject, records in labeled.items():
        pairs = [(f.label, False) for r in records for f in human_facts(r["annotations"])]
        out[subject] = {
            "ir_as_ns": round(100 * f1_not_supported(pairs, True).f1, 1),
            "ir_excluded": round(100 * f1_not_supported(pairs, False).f1, 1),
            "paper": PAPER_T9["always-not-supported"][SUBJECTS.index(subject)],
        }
    return out


def evidence_coverage(labeled: dict[str, list[dict]], index: Path) -> dict:
    """How much of each human-supported fact the dev page can show at all: the share of the
    fact's content words found in its topic's page (the dev pages hold only the passages
    BM25 found for ChatGPT's facts). No model: a bound on what any retrieval-based verifier
    can see."""
    import re

    from factscore_local.index.reader import KnowledgeSource
    from factscore_local.npm.stopwords import STOPWORD_WORDS

    stop = {w.lower() for w in STOPWORD_WORDS}

    def words(text: str) -> set[str]:
        return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in stop}

    ks = KnowledgeSource(index)
    page_words: dict[str, set[str]] = {}
    out = {}
    for subject, records in labeled.items():
        shares = []
        for r in records:
            topic = r["topic"]
            if topic not in page_words:
                page_words[topic] = set().union(*(words(p.text) for p in ks.get_passages(topic)))
            topic_words = words(topic)
            for fact in human_facts(r["annotations"]):
                content = words(fact.text) - topic_words
                if fact.label == "S" and content:
                    shares.append(len(content & page_words[topic]) / len(content))
        out[subject] = {
            "supported_facts": len(shares),
            "mean_word_coverage": round(100 * float(np.mean(shares)), 1),
            "fully_covered": round(100 * float(np.mean([s == 1.0 for s in shares])), 1),
        }
    return out


# --- running the estimator --------------------------------------------------------------
class Runner:
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

        self.index, self.cache, self.data, self.lm = index, cache, data, lm
        self.rows_dir = rows_dir  # where each run's rows go, a file per subject
        self.evidence = evidence
        self.prefix_states = prefix_states  # evaluated evidence kept across passes
        chatgpt = list(read_bios(data / "ChatGPT.jsonl"))
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
        bios = [b for s in subjects for b in read_bios(self.data / f"{s}.jsonl") if b.topic in rank]
        # Topic by topic: a chunk then holds one page's facts from every subject, which share
        # their retrieved passages (and the LM's KV cache of them).
        return sorted(bios, key=lambda b: rank[b.topic])

    def rows(self, name: str, bios: list[Bio], **settings) -> list[BioRow]:
        base = {"index": self.index, "lm": self.lm, "cache": self.cache, "use_atomic_facts": True,
                "gamma": 0, "chunk_bios": 2 * len(SUBJECTS), "evidence": self.evidence,
                "prefix_states": self.prefix_states}  # fmt: skip
        config = build_config({**base, **settings})
        estimator = Estimator(config)
        start = time.perf_counter()
        log(f"{name}: {len(bios)} bios")
        rows = estimator.run(bios, None, progress=True)
        seconds = time.perf_counter() - start
        if self.rows_dir is not None:
            write_rows(rows, self.rows_dir / name)
        n = sum(len(r.decisions) + (len(r.human.facts) if r.human else 0) for r in rows)
        self.timings[name] = {
            "seconds": round(seconds, 1),
            "facts": n,
            "computed": estimator.cache.misses,
        }
        log(f"{name}: {n} facts in {seconds:.0f} s ({estimator.cache.misses} cache misses)")
        return rows


def write_rows(rows: list[BioRow], folder: Path) -> None:
    """A run's rows as ``fscore eval --out`` writes them, one file per subject."""
    folder.mkdir(parents=True, exist_ok=True)
    for subject in SUBJECTS:
        lines = [json.dumps(r.to_json(), ensure_ascii=False) for r in rows
                 if subject_name(r.source) == subject]  # fmt: skip
        if lines:
            (folder / f"{subject}.jsonl").write_text("\n".join(lines) + "\n", "utf-8")


def crossfit(fit_rows: list[BioRow], apply_rows: list[BioRow], verifier: str, objective: str):
    """Each topic half decided with thresholds fitted on the other half's fit_rows."""
    out, fitted = [], []
    for half in (0, 1):
        test = [r for r in apply_rows if topic_half(r.topic) == half]
        if not test:
            continue
        train = [r for r in fit_rows if topic_half(r.topic) != half]
        settings = fit(collect(train), verifier, objective)
        fitted.append({k: settings[k] for k in ("margin", "np_threshold", "rule_weights")
                       if k in settings})  # fmt: skip
        out += apply_thresholds(test, verifier, settings_thresholds(settings), 0)
    return out, fitted


COVERAGE_RULE = "retrieve-lm+np+coverage-fitted"
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
    return round(_auc(np.asarray(values, float), np.asarray(positive, bool)), 4)


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


# --- markdown -------------------------------------------------------------------------
def md_table1(t1: dict) -> str:
    keys = ["responding", "tokens", "sentences", "facts", "S", "NS", "IR", "abstains",
            "factscore"]  # fmt: skip
    lines = ["| | " + " | ".join(f"{s} (dev / paper)" for s in SUBJECTS) + " |"]
    lines.append("|---" * (len(SUBJECTS) + 1) + "|")
    for k in keys:
        cells = [f"{t1[s][k]} / {PAPER_T1[s][k]}" for s in SUBJECTS]
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def md_page_length(split: dict) -> str:
    lines = ["By page length (cross-fitted thresholds), ER (FS) / F1 per subject:\n",
             "| verifier | pages | topics | " + " | ".join(SUBJECTS) + " |",
             "|---" * (3 + len(SUBJECTS)) + "|"]  # fmt: skip
    for verifier, parts in split.items():
        for name, f in parts.items():
            cells = []
            for s in SUBJECTS:
                r = f["subjects"].get(s)
                cells.append(
                    f"{r['error_rate']:.1f}{r['mark']} ({r['estimated_score']:.1f}) / "
                    f"{r['f1_micro']:.1f}"
                    if r
                    else ""
                )
            lines.append(f"| {verifier} | {name} | {f['topics']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def md_results(results: list[tuple[str, str, dict]]) -> str:
    head = "| evaluator | thresholds | " + " | ".join(f"{s} ER (FS) | {s} F1" for s in SUBJECTS)
    lines = [head + " | ranking | paper ER (FS) / F1 |", "|---" * (2 * len(SUBJECTS) + 4) + "|"]
    for name, thresholds, f in results:
        cells = []
        for s in SUBJECTS:
            r = f["subjects"].get(s)
            if r is None:
                cells += ["", ""]
                continue
            cells.append(f"{r['error_rate']:.1f}{r['mark']} ({r['estimated_score']:.1f})")
            cells.append(f"{r['f1_micro']:.1f}")
        base = name.split(" ")[0]
        paper = ""
        if base in PAPER_T3:
            paper = " · ".join(
                f"{er} ({fs}) / {f1}"
                for (er, fs), f1 in zip(PAPER_T3[base], PAPER_T9[base], strict=True)
            )
        kept = {True: "✓", False: "✗", None: ""}[f["ranking_kept"]]
        lines.append(f"| {name} | {thresholds} | " + " | ".join(cells) + f" | {kept} | {paper} |")
    return "\n".join(lines)


def md_intervals(results: list[tuple[str, str, dict]]) -> str:
    """Bootstrap 95% intervals (bios resampled) of ER and F1 for each thresholded row."""
    lines = ["Bootstrap 95% intervals (bios resampled), ER [low, high] · F1 [low, high]:\n",
             "| evaluator | thresholds | " + " | ".join(SUBJECTS) + " |",
             "|---" * (2 + len(SUBJECTS)) + "|"]  # fmt: skip
    for name, thresholds, f in results:
        if thresholds == "-":  # the trivial baselines
            continue
        cells = [interval_cell(f["subjects"].get(s)) for s in SUBJECTS]
        short = thresholds.split(":")[0]
        lines.append(f"| {name} | {short} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def interval_cell(r: dict | None) -> str:
    """'ER [low, high] · F1 [low, high]' of one subject's figures; '' without intervals."""
    er, f1 = (r or {}).get("error_rate_ci95"), (r or {}).get("f1_micro_ci95")
    if not (er and f1):
        return ""
    return (f"{r['error_rate']:.1f} [{er[0]:.1f}, {er[1]:.1f}] · "
            f"{r['f1_micro']:.1f} [{f1[0]:.1f}, {f1[1]:.1f}]")  # fmt: skip


def thresholds_shown(verifier: str, fitted: list[dict]) -> str:
    """'m>0.1, np>0.3 / m>...' for the thresholds a verifier's rule reads, per topic half."""
    names = get_verifier(verifier).thresholds
    shown = {
        "margin": lambda f: f"m>{f['margin']:g}",
        "np": lambda f: f"np>{f['np_threshold']:g}",
        # bias, margin, np, margin*np: supported when their sum with the features > 0
        "weights": lambda f: "w=(" + ", ".join(f"{w:.2f}" for w in f["rule_weights"]) + ")",
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
) -> dict:
    """Two rows of a results table: default thresholds, and 2-fold cross-fitted ones (with
    page_size, the cross-fitted figures also split by page length; with halves, the mean ER
    and F1 of each topic half). A fitted rule has no
    default of its own (unfitted, it is the ensemble): one row."""
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
    out["thresholds"] = fitted
    table.append((name, f"cross-fitted: {thresholds_shown(verifier, fitted)}", out["calibrated"]))
    if page_size is not None:
        out["page_length"] = by_page_length(fitted_rows, page_size)
    return out


# --- sections ---------------------------------------------------------------------------
def section_table1(report: dict, labeled: dict, index: Path) -> None:
    t1 = table1(labeled)
    report["table1"] = t1
    print("## Table 1 (all dev topics)\n\n" + md_table1(t1) + "\n")
    conv = ir_convention(labeled)
    report["ir_convention"] = conv
    print("Always not-supported, micro-F1 on all dev human facts (IR as NS / IR excluded / "
          "paper): " + "; ".join(f"{s} {c['ir_as_ns']} / {c['ir_excluded']} / {c['paper']}"
                                 for s, c in conv.items()) + "\n")  # fmt: skip
    coverage = evidence_coverage(labeled, index)
    report["evidence_coverage"] = coverage
    print("Evidence on the dev pages, human-supported facts of all dev topics (mean share of "
          "content words found in the page / share fully found): " + "; ".join(
              f"{s} {c['mean_word_coverage']} / {c['fully_covered']}"
              for s, c in coverage.items()) + "\n")  # fmt: skip


def section_tables_3_9(report: dict, run: Runner, bios: list[Bio], args) -> list[BioRow]:
    """Tables 3 and 9 for every verifier; returns the rows of the main run."""
    results: list[tuple[str, str, dict]] = []
    for verifier in ("always-supported", "always-not-supported", "random"):
        results.append((verifier, "-", figures(run.rows(verifier, bios, verifier=verifier))))
    # One run records the margin and NP of every fact: retrieve-lm, np and the ensemble
    # are its decisions under different thresholds.
    # (Run as the coverage rule, unfitted: the ensemble's decisions, and every fact's
    # lexical coverage recorded with its margin and NP.)
    main_rows = run.rows("retrieve-lm+np", bios, verifier=COVERAGE_RULE,
                         np_model=args.np_model)  # fmt: skip
    # The no-context LM is a pass of its own (~0.3 s a fact): "--skip no-context" leaves it out.
    nc = None if "no-context" in args.skip else run.rows("no-context-lm", bios,
                                                         verifier="no-context-lm")  # fmt: skip
    report["np_model"] = args.np_model
    report["auc_margin"] = auc(main_rows, "margin")
    report["auc_margin_no_context"] = None if nc is None else auc(nc, "margin")
    report["auc_np"] = auc(main_rows, "np")
    report["label_recall_retrieve_lm"] = label_recall(
        apply_thresholds(main_rows, "retrieve-lm", Thresholds(0.0, 0.0), 0)
    )
    # The retrieved-evidence verifiers are also split by page length.
    report["verifiers"] = {
        name: default_and_crossfit(
            results,
            name,
            rows,
            name,
            args.objective,
            args.np_model,
            run.page_size if name.startswith("retrieve-lm") else None,
            run.rows_dir,
        )
        for name, rows in (
            *([] if nc is None else [("no-context-lm", nc)]),
            ("np", main_rows),
            ("retrieve-lm", main_rows),
            ("retrieve-lm+np", main_rows),
            ("retrieve-lm+np-fitted", main_rows),
            (COVERAGE_RULE, main_rows),
        )
    }
    report["auc_coverage"] = auc(main_rows, "coverage")
    report["page_length"] = {
        v: report["verifiers"][v]["page_length"]
        for v in ("retrieve-lm", "retrieve-lm+np", "retrieve-lm+np-fitted", COVERAGE_RULE)
    }
    print(f"## Tables 3 and 9 (first {args.topics} dev topics, model-atomic-facts for ER, "
          "human atomic facts for F1)\n\n" + md_results(results) + "\n")  # fmt: skip
    print(md_intervals(results) + "\n")
    print(f"AUC (human S vs not S) of the margin: {report['auc_margin']} (no-context: "
          f"{report['auc_margin_no_context']}); of NP ({args.np_model}): "
          f"{report['auc_np']}; of the lexical coverage: {report['auc_coverage']}\n")  # fmt: skip
    print(md_page_length(report["page_length"]))
    print("Human facts decided right by retrieve-lm at margin 0, per label (%): " + "; ".join(
        f"{s} " + ", ".join(f"{k} {v}" for k, v in c.items())
        for s, c in report["label_recall_retrieve_lm"].items()) + "\n")  # fmt: skip
    return main_rows


def long_page_bios(run: Runner, n: int) -> list[Bio]:
    """n labeled bios whose page has more than LONG_PAGE passages, taken round-robin over
    the frequency classes and the subjects (the topic order's classes, both halves)."""
    long_topics = [t for t in run.topic_order if run.page_size[t] > LONG_PAGE]
    by_subject = {s: {b.topic: b for b in read_bios(run.data / f"{s}.jsonl")} for s in SUBJECTS}
    out = []
    for i, topic in enumerate(long_topics):
        bio = by_subject[SUBJECTS[i % len(SUBJECTS)]].get(topic)
        if bio is not None and bio.annotations:
            out.append(bio)
        if len(out) == n:
            break
    return out


def section_evidence_modes(report: dict, run: Runner, args) -> None:
    """Per-fact top-k (the paper's procedure) against shared evidence on long pages, where
    the two differ (on a page of at most k passages both see the whole page). Shared
    evidence runs on every fact of the bios, as it would in use; the per-fact procedure,
    ~15 s a fact there, on an even sample of each bio's human facts. Both are compared on
    that sample: AUC of the margin (human S vs not S), agreement with the humans at margin
    0, and seconds per fact."""
    from factscore_local.labels.labeled import human_facts, model_facts
    from factscore_local.pipeline.signals import FactQuery

    bios = long_page_bios(run, args.evidence_bios)
    sample, everything, all_human = [], [], []
    for bio in bios:
        title, group = bio.topic, f"{bio.source}:{bio.line}"
        model = [FactQuery(title, bio.topic, a, group) for _, a in model_facts(bio.annotations)]
        human = human_facts(bio.annotations)
        picked = [human[i * len(human) // args.evidence_sample]
                  for i in range(min(args.evidence_sample, len(human)))]  # fmt: skip
        everything += model + [FactQuery(title, bio.topic, f.text, group, 1) for f in human]
        all_human += [(FactQuery(title, bio.topic, f.text, group, 1), f.label) for f in human]
        sample += [(FactQuery(title, bio.topic, f.text, group, 1), f.label) for f in picked]
    labels = np.asarray([label == "S" for _, label in sample])
    out: dict = {"bios": [b.topic for b in bios], "sample_facts": len(sample)}
    for mode in EVIDENCE_MODES:
        config = build_config({"index": run.index, "lm": run.lm, "cache": run.cache,
                               "evidence": mode})  # fmt: skip
        estimator = Estimator(config)
        queries = [q for q, _ in sample] if mode == "per-fact" else everything
        start = time.perf_counter()
        results = estimator.verify(queries)
        seconds = time.perf_counter() - start
        by_query = {(q.atom, q.group, q.tier): r for q, r in zip(queries, results, strict=True)}
        margins = np.asarray([by_query[(q.atom, q.group, q.tier)].margin for q, _ in sample])
        out[mode] = {
            "facts_run": len(queries),
            "seconds": round(seconds, 1),
            "computed": estimator.cache.misses,
            "s_per_fact": round(seconds / len(queries), 3),
            "auc_margin": round(_auc(margins, labels), 4),
            "agreement_at_0": round(100 * float(np.mean((margins > 0) == labels)), 1),
            "blocks": len({r.block for r in results}) if mode != "per-fact" else None,
        }
        if mode != "per-fact":  # every human fact of the bios was run: AUC on all of them
            every = np.asarray([by_query[(q.atom, q.group, q.tier)].margin for q, _ in all_human])
            is_s = np.asarray([label == "S" for _, label in all_human])
            out[mode]["auc_margin_all_human"] = round(_auc(every, is_s), 4)
            out[mode]["human_facts"] = len(all_human)
        log(f"evidence {mode}: {len(queries)} facts in {seconds:.0f} s")
    report["evidence_modes"] = out
    print(f"## Evidence on long pages: per-fact top-k, shared blocks, page segments ({len(bios)} "
          f"bios of pages with more than {LONG_PAGE} passages: {', '.join(out['bios'])}; "
          f"{len(sample)} sampled human facts)\n\n"
          "| mode | facts run | s/fact | AUC of margin (sample) | agreement at 0 (sample) | "
          "AUC of margin (all human facts) | blocks |\n" + "|---" * 7 + "|")  # fmt: skip
    for mode in EVIDENCE_MODES:
        r = out[mode]
        every = f"{r['auc_margin_all_human']} ({r['human_facts']})" if "human_facts" in r else ""
        print(f"| {mode} | {r['facts_run']} | {r['s_per_fact']} | {r['auc_margin']} | "
              f"{r['agreement_at_0']} | {every} | {r['blocks'] or ''} |")  # fmt: skip
    print()


def _auc(values: np.ndarray, positive: np.ndarray) -> float:
    from scipy.stats import rankdata

    n_pos, n_neg = positive.sum(), (~positive).sum()
    if not n_pos or not n_neg:
        return float("nan")
    ranks = rankdata(values)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def section_np_standins(report: dict, run: Runner, args) -> None:
    """The NP stand-ins side by side, on topics from both halves."""
    np_bios = run.bios(args.np_topics, both_halves=True)
    keep = {b.topic for b in np_bios}
    scorers = {
        scorer: run.rows(f"retrieve-lm+np ({scorer})", np_bios, verifier="retrieve-lm+np",
                         np_model=scorer)
        for scorer in args.np_scorers
    }  # fmt: skip
    assert all(r.topic in keep for rows in scorers.values() for r in rows)
    table: list = []
    report["np_standins"] = {
        scorer: {
            "auc_np": auc(rows, "np"),
            **{
                verifier: default_and_crossfit(
                    table, f"{verifier} [{scorer}]", rows, verifier, args.objective, scorer
                )
                for verifier in ("np", "retrieve-lm+np")
            },
        }
        for scorer, rows in scorers.items()
    }
    report["np_topics_used"] = sorted(keep)
    print(f"## NP stand-ins ({args.np_topics} dev topics, half from each topic half: "
          f"{', '.join(sorted(keep))})\n\n" + md_results(table))  # fmt: skip
    print("\nAUC of NP: " + ", ".join(
        f"{k} {v['auc_np']}" for k, v in report["np_standins"].items()) + "\n")  # fmt: skip


def section_own_decomposition(report: dict, run: Runner, main_rows: list[BioRow], args) -> None:
    """The project's own decomposition, same thresholds (cross-fitted on the
    model-atomic-facts rows of the other half)."""
    own_bios = run.bios(args.own_topics)
    own = run.rows("own decomposition", own_bios, verifier="retrieve-lm+np",
                   np_model=args.np_model, use_atomic_facts=False)  # fmt: skip
    keep = {b.topic for b in own_bios}
    model_rows = [r for r in main_rows if r.topic in keep]
    own_fit, _ = crossfit(main_rows, own, "retrieve-lm+np", args.objective)
    model_fit, _ = crossfit(main_rows, model_rows, "retrieve-lm+np", args.objective)
    own_results = [
        ("retrieve-lm+np, model-atomic-facts", "cross-fitted", figures(model_fit)),
        ("retrieve-lm+np, own decomposition", "cross-fitted", figures(own_fit)),
        ("retrieve-lm, own decomposition", "default",
         figures(apply_thresholds(own, "retrieve-lm", Thresholds(0.0, 0.0), 0))),
    ]  # fmt: skip
    report["own_decomposition"] = {
        "topics": args.own_topics,
        "facts_per_response": round(float(np.mean([r.n_facts for r in own if r.responded])), 1),
        "results": {n: f for n, _, f in own_results},
    }
    print(f"## Own decomposition vs model-atomic-facts (first {args.own_topics} topics)\n\n"
          + md_results(own_results) + "\n")  # fmt: skip


def section_ablations(report: dict, run: Runner, args) -> None:
    """BM25 vs dense and k, retrieve-lm at margin 0. ChatGPT only: the dev pages hold the
    passages BM25 found for ChatGPT's facts."""
    ab_bios = run.bios(args.ablation_topics, subjects=("ChatGPT",))
    ablations = {}
    for name, settings in (("bm25 k=5", {}), *ABLATIONS):
        # FActScore's rank order of passages costs ~4x: measured in bench_eval.py instead
        rows = run.rows(f"ablation {name}", ab_bios, verifier="retrieve-lm", **settings)
        ablations[name] = {"auc_margin": auc(rows, "margin"), **figures(rows)}
    report["ablations"] = ablations
    print(f"## Ablations, retrieve-lm at margin 0 (ChatGPT, first {args.ablation_topics} "
          "topics)\n\n| setting | AUC of margin | ER | F1 |\n|---|---|---|---|")  # fmt: skip
    for name, a in ablations.items():
        r = a["subjects"]["ChatGPT"]
        print(f"| {name} | {a['auc_margin']} | {r['error_rate']} | {r['f1_micro']} |")
    print()


ABLATIONS = (
    ("bm25 k=3", {"k": 3}),
    ("dense k=3", {"k": 3, "retrieval": "dense"}),
    ("bm25 k=10", {"k": 10}),
    ("dense k=5", {"retrieval": "dense"}),
)


def section_ablation_evidence(report: dict, run: Runner, args) -> None:
    """No model: for every ChatGPT fact (model and human) of every topic, whether an
    ablation setting changes the passages its prompt shows, against BM25 k=5, in each
    evidence mode; by page length. Where nothing changes, the margin cannot change."""
    from factscore_local.pipeline.signals import FactQuery, _judged_on, _own_passages
    from factscore_local.pipeline.verify_prompt import passage_token_counter
    from factscore_local.runtime.components import build_components

    bios = run.bios(args.topics, subjects=("ChatGPT",))
    queries = [
        FactQuery(b.topic, b.topic, atom, group=f"{b.line}", tier=tier, sentence=sentence)
        for b in bios
        for tier, facts in (
            (0, model_facts(b.annotations)),
            (1, [(f.sentence, f.text) for f in human_facts(b.annotations)]),
        )
        for sentence, atom in facts
    ]
    parts = build_components(build_config({"index": run.index, "lm": run.lm}))
    token_len = passage_token_counter(parts.lm.get().lm.tokenize)
    modes = ("page", "per-fact")

    def shown(settings: dict) -> dict[str, list[tuple]]:
        """Per evidence mode, the passage ids each fact's prompt shows (one retrieval)."""
        config = build_config({"index": run.index, "lm": run.lm, **settings})
        hits = _own_passages(queries, parts, config.k, config.retrieval)
        out = {}
        for mode in modes:
            blocks = _judged_on(queries, hits, parts, replace(config, evidence=mode), token_len)
            out[mode] = [
                tuple(p.passage_id for p in block)
                if block is not None
                else tuple(sorted(h.passage.passage_id for h in fact_hits))  # fmt: skip
                for block, fact_hits in zip(blocks, hits, strict=True)
            ]
        return out

    long_page = np.asarray([run.page_size[q.topic] > LONG_PAGE for q in queries])
    base = shown({})
    out: dict = {mode: {} for mode in modes}
    for name, settings in ABLATIONS:
        ablated = shown(settings)
        for mode in modes:
            changed = np.asarray([a != b for a, b in zip(base[mode], ablated[mode],
                                                         strict=True)])  # fmt: skip
            out[mode][name] = {
                "short": round(100 * float(changed[~long_page].mean()), 1),
                "long": round(100 * float(changed[long_page].mean()), 1),
            }
    n_long = int(long_page.sum())
    report["ablation_evidence"] = {"facts": len(queries), "long_page_facts": n_long, **out}
    print(f"## Ablations: facts whose evidence changes against BM25 k=5 (ChatGPT, "
          f"{len(bios)} topics, {len(queries)} model and human facts, {n_long} on "
          f"pages of more than {LONG_PAGE} passages; no model)\n\n"
          "| setting | page mode, short pages | page mode, long pages | per-fact, short pages "
          "| per-fact, long pages |\n|---|---|---|---|---|")  # fmt: skip
    for name, _ in ABLATIONS:
        p, f = out["page"][name], out["per-fact"][name]
        print(f"| {name} | {p['short']}% | {p['long']}% | {f['short']}% | {f['long']}% |")
    print()


# Issue 10's prompt levers: name -> estimator settings changed from the main run's.
LEVERS = {
    "verification demos": {"verify_demos": True},
    "fact in its sentence": {"fact_context": "sentence"},
    "both": {"verify_demos": True, "fact_context": "sentence"},
    "no chat template": {"verify_format": "plain"},
    "yes-no question": {"verify_question": "yes-no"},
}


def section_levers(report: dict, run: Runner, main_rows: list[BioRow], args) -> None:
    """Each prompt lever run on the main tables' bios (retrieve-lm+np, default NP), against
    the main run: AUC of the margin, and retrieve-lm / retrieve-lm+np / the fitted rule
    with default and cross-fitted thresholds, all three subjects."""
    bios = run.bios(args.topics)
    out, table = {}, []
    candidates = {"default prompt": main_rows}
    for name in args.levers:
        candidates[name] = run.rows(f"lever {name}", bios, verifier=COVERAGE_RULE,
                                    np_model=args.np_model, **LEVERS[name])  # fmt: skip
    for name, rows in candidates.items():
        out[name] = {"auc_margin": auc(rows, "margin"), "auc_np": auc(rows, "np")}
        for verifier in ("retrieve-lm", "retrieve-lm+np", "retrieve-lm+np-fitted", COVERAGE_RULE):
            out[name][verifier] = default_and_crossfit(
                table,
                f"{verifier}, {name}",
                rows,
                verifier,
                args.objective,
                args.np_model,
                halves=True,
            )
    report["levers"] = out
    print(f"## Prompt levers (first {args.topics} dev topics, all three subjects)\n\n"
          + "AUC of the margin: " + ", ".join(f"{n} {o['auc_margin']}" for n, o in out.items())
          + "\n\n" + md_results(table) + "\n\n" + md_intervals(table) + "\n\n"
          + md_halves(out, COVERAGE_RULE) + "\n\n" + md_levers_summary(out) + "\n")  # fmt: skip


def md_halves(out: dict, verifier: str) -> str:
    """Each candidate's cross-fitted mean ER and F1 on each topic half against the default
    prompt's, under the default verifier; a lever becomes a default only if it wins both."""
    base = out["default prompt"][verifier]["halves"]
    lines = [f"Per topic half ({verifier}, cross-fitted; mean over the three subjects):\n",
             "| prompt | half 0: ER · F1 | half 1: ER · F1 | wins on both halves |",
             "|---|---|---|---|"]  # fmt: skip
    for name, o in out.items():
        halves = o[verifier]["halves"]
        cells = [f"{halves[h][0]:.1f} · {halves[h][1]:.1f}" if h in halves else "" for h in (0, 1)]
        won = "yes" if wins_on_both_halves(halves, base) else "no"
        won = "" if name == "default prompt" else won
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {won} |")
    return "\n".join(lines)


# Issue 10's summary: the decision rules under the default prompt, then each prompt lever
# under the default rule. (label, prompt, verifier)
SUMMARY_ROWS = [
    ("margin alone, fitted threshold", "default prompt", "retrieve-lm"),
    ("margin AND NP, fitted thresholds", "default prompt", "retrieve-lm+np"),
    ("logistic rule: margin, NP", "default prompt", "retrieve-lm+np-fitted"),
    ("**default**: logistic rule + coverage", "default prompt", COVERAGE_RULE),
]


def md_levers_summary(out: dict) -> str:
    """One table of every lever, cross-fitted: ER and F1 with 95% intervals per subject,
    each topic half's means, the margin's AUC, and whether it beats the default on both
    halves (the default: the coverage rule with the default prompt)."""
    rows = SUMMARY_ROWS + [(f"prompt: {name}", name, COVERAGE_RULE)
                           for name in out if name != "default prompt"]  # fmt: skip
    base = out["default prompt"][COVERAGE_RULE]["halves"]
    lines = ["Every lever, cross-fitted (ER [95%] · F1 [95%]):\n",
             "| lever | " + " | ".join(SUBJECTS) + " | half 0: ER · F1 | half 1: ER · F1 "
             "| AUC of the margin | beats the default on both halves |",
             "|---" * (len(SUBJECTS) + 5) + "|"]  # fmt: skip
    for label, prompt, verifier in rows:
        o = out[prompt][verifier]
        cells = [interval_cell(o["calibrated"]["subjects"].get(s)) for s in SUBJECTS]
        halves = o["halves"]
        cells += [f"{halves[h][0]:.1f} · {halves[h][1]:.1f}" if h in halves else "" for h in (0, 1)]
        cells.append(f"{out[prompt]['auc_margin']:.4f}")
        is_base = prompt == "default prompt" and verifier == COVERAGE_RULE
        cells.append("" if is_base else "yes" if wins_on_both_halves(halves, base) else "no")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def section_demos(report: dict, run: Runner, args) -> None:
    """Decomposition with the project's demonstrations vs FActScore's demons.json."""
    d_bios = run.bios(args.own_topics, subjects=("ChatGPT",))
    demos = {}
    for name, settings in (
        ("own demos", {}),
        ("reference demos", {"demos": args.demos_reference}),
    ):
        rows = run.rows(f"decomposition, {name}", d_bios, verifier="retrieve-lm",
                        use_atomic_facts=False, **settings)  # fmt: skip
        responded = [r for r in rows if r.responded]
        demos[name] = {
            "facts_per_response": round(float(np.mean([r.n_facts for r in responded])), 1),
            **figures(rows),
        }
    report["demos"] = demos
    print(f"## Demonstrations (ChatGPT, first {args.own_topics} topics, retrieve-lm, margin 0)\n")
    for name, d in demos.items():
        r = d["subjects"]["ChatGPT"]
        print(f"- {name}: {d['facts_per_response']} facts/response, estimated "
              f"{r['estimated_score']} vs human {r['human_score']} "
              f"(ER {r['error_rate']})")  # fmt: skip
    print()


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True, help="index of enwiki-20230401-dev.db")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/factscore/labeled-dev")
    ap.add_argument(
        "--demos-reference",
        type=Path,
        default=ROOT.parent / "shared/data/factscore/demos/demons.json",
    )
    ap.add_argument("--cache", type=Path, default=ROOT / "bench-out" / "tables-cache.db")
    ap.add_argument("--seed-cache", type=Path, action="append", default=[],
                    help="import these `fscore cache export` files into --cache first")  # fmt: skip
    ap.add_argument("--lm", default=None, help="default: the embedded 1.5B GGUF")
    ap.add_argument("--topics", type=int, default=15)
    ap.add_argument(
        "--max-passages",
        type=int,
        default=None,
        help="leave out topics whose page has more passages (default: none left out)",
    )
    ap.add_argument(
        "--evidence",
        choices=EVIDENCE_MODES,
        default=DEFAULTS["evidence"],
        help="evidence mode of every run (the evidence section compares both)",
    )
    ap.add_argument(
        "--evidence-bios",
        type=int,
        default=0,
        help="long-page bios on which to compare per-fact and shared evidence",
    )
    ap.add_argument("--evidence-sample", type=int, default=8,
                    help="human facts per bio run in both modes")  # fmt: skip
    ap.add_argument("--np-model", default=DEFAULT_NP_MODEL, help="NP scorer of the main tables")
    ap.add_argument("--np-topics", type=int, default=4)
    ap.add_argument("--np-scorers", default="minilm,lm,lm-joint",
                    help="NP scorers the np-lm section compares")  # fmt: skip
    ap.add_argument("--own-topics", type=int, default=3)
    ap.add_argument("--ablation-topics", type=int, default=3)
    ap.add_argument("--prefix-states", type=Path, default=None,
                    help="keep each page's evaluated evidence here: a lever that changes only "
                    "what follows the evidence loads it instead of reading it")  # fmt: skip
    ap.add_argument("--objective", choices=["er", "f1"], default="er")
    ap.add_argument("--levers", default="", help=f"prompt levers: {', '.join(LEVERS)}")
    ap.add_argument(
        "--skip",
        default="",
        help="comma list of: tables,no-context,np-lm,own,ablations,ablation-evidence,demos",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "bench-out" / "tables.json")
    ap.add_argument(
        "--rows", type=Path, default=None, help="folder for each run's rows (a file per subject)"
    )
    args = ap.parse_args()
    args.skip = set(filter(None, args.skip.split(",")))
    args.np_scorers = list(filter(None, args.np_scorers.split(",")))
    args.levers = list(filter(None, args.levers.split(",")))
    unknown = set(args.levers) - set(LEVERS)
    if unknown:
        ap.error(f"unknown lever(s) {sorted(unknown)}; choose from {', '.join(LEVERS)}")
    return args


def main() -> None:
    args = parse_args()
    report: dict = {"topics": args.topics, "objective": args.objective}
    section_table1(report, load_labeled(args.data), args.index)
    for export in args.seed_cache:  # results of an earlier run, carried in one file
        from factscore_local.runtime.cache import ResultCache

        seeded = ResultCache(args.cache)
        added, present = seeded.import_file(export)
        seeded.close()
        log(f"seeded {args.cache} from {export}: {added} results added, {present} there")
    run = Runner(args.index, args.cache, args.data, args.lm, args.max_passages, args.evidence,
                 args.rows, args.prefix_states)  # fmt: skip
    report["evidence"] = args.evidence
    report["max_passages"] = args.max_passages
    report["skipped_topics"] = run.skipped
    bios = run.bios(args.topics)
    if len({topic_half(b.topic) for b in bios}) < 2:
        raise SystemExit("--topics too small: cross-fitting needs topics in both halves")
    report["topics_used"] = {t: run.topic_class[t] for t in run.topic_order[: args.topics]}
    n_all = len(run.skipped) + len(run.topic_order)
    log(f"{len(bios)} bios of {args.topics} topics; topics left out for their page length "
        f"(--max-passages {args.max_passages}): {len(run.skipped)} of {n_all}")  # fmt: skip
    main_rows = [] if "tables" in args.skip else section_tables_3_9(report, run, bios, args)
    if args.evidence_bios:
        section_evidence_modes(report, run, args)
    if "np-lm" not in args.skip and args.np_topics:
        section_np_standins(report, run, args)
    if "own" not in args.skip and args.own_topics and main_rows:
        section_own_decomposition(report, run, main_rows, args)
    if "ablations" not in args.skip and args.ablation_topics:
        section_ablations(report, run, args)
    if "ablation-evidence" not in args.skip:
        section_ablation_evidence(report, run, args)
    if "demos" not in args.skip and args.own_topics and args.demos_reference.exists():
        section_demos(report, run, args)
    if args.levers and main_rows:
        section_levers(report, run, main_rows, args)

    report["timings"] = run.timings
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    log(f"wrote {args.out}")
    if not main_rows:
        return
    # Ranking check over the calibrated ensemble, as a last line.
    best = report["verifiers"]["retrieve-lm+np"]["calibrated"]
    human = {s: best["subjects"][s]["human_score"] for s in best["subjects"]}
    est = {s: best["subjects"][s]["estimated_score"] for s in best["subjects"]}
    print(f"ranking kept by calibrated retrieve-lm+np: {ranking_kept(human, est)}")


if __name__ == "__main__":
    main()
