"""Table 1 (statistics of the labeled dev files), the IR convention of Table 9's trivial row,
and how much of each supported fact the dev pages show: no model."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from factscore_local.labels.validation import f1_not_supported
from factscore_local.pipeline.records.inputs import Bio
from factscore_local.pipeline.records.labeled import (
    LABELS,
    human_bio_score,
    human_facts,
    label_counts,
)
from scripts.common import SUBJECTS
from scripts.tables.paper import PAPER_T1, PAPER_T9


def table1(labeled: dict[str, list[Bio]]) -> dict:
    """The paper's Table 1 columns per subject, from the labels alone."""
    out = {}
    for subject, records in labeled.items():
        human = [human_bio_score(r.annotations) for r in records]
        responding = [r for r, h in zip(records, human, strict=True) if h is not None]
        n_facts = [h[1] for h in human if h is not None]
        shares: dict[str, list[float]] = {label: [] for label in LABELS}
        for r in responding:
            counts = label_counts(r.annotations)
            total = sum(counts.values())
            for label in shares:
                shares[label].append(counts[label] / total)
        rate = len(responding) / len(records)
        out[subject] = {
            "bios": len(records),
            "responding": round(100 * rate, 1),
            "tokens": round(float(np.mean([len(r.output.split()) for r in responding])), 1),
            "sentences": round(float(np.mean([len(r.annotations) for r in responding])), 1),
            "facts": round(float(np.mean(n_facts)), 1),
            # Shares of all bios, as the paper's columns (they add up to 100 with abstains).
            **{k: round(100 * rate * float(np.mean(v)), 1) for k, v in shares.items()},
            "abstains": round(100 * (1 - rate), 1),
            "factscore": round(100 * float(np.mean(shares["S"])), 1),
        }
    return out


def ir_convention(labeled: dict[str, list[Bio]]) -> dict:
    """The "always not-supported" row of Table 9 under both IR conventions (no model: every
    human atomic fact is predicted not supported), to see which one the paper used."""
    out = {}
    for subject, records in labeled.items():
        pairs = [(f.label, False) for r in records for f in human_facts(r.annotations)]
        out[subject] = {
            "ir_as_ns": round(100 * f1_not_supported(pairs, True).f1, 1),
            "ir_excluded": round(100 * f1_not_supported(pairs, False).f1, 1),
            "paper": PAPER_T9["always-not-supported"][SUBJECTS.index(subject)],
        }
    return out


def evidence_coverage(labeled: dict[str, list[Bio]], index: Path) -> dict:
    """How much of each human-supported fact the dev page can show at all: the share of the
    fact's content words found in its topic's page (the dev pages hold only the passages
    BM25 found for ChatGPT's facts). No model: a bound on what any retrieval-based verifier
    can see."""
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
            topic = r.topic
            if topic not in page_words:
                page_words[topic] = set().union(*(words(p.text) for p in ks.get_passages(topic)))
            topic_words = words(topic)
            for fact in human_facts(r.annotations):
                content = words(fact.text) - topic_words
                if fact.label == "S" and content:
                    shares.append(len(content & page_words[topic]) / len(content))
        out[subject] = {
            "supported_facts": len(shares),
            "mean_word_coverage": round(100 * float(np.mean(shares)), 1),
            "fully_covered": round(100 * float(np.mean([s == 1.0 for s in shares])), 1),
        }
    return out


def md_table1(t1: dict) -> str:
    """Table 1 as markdown, dev beside the paper."""
    keys = ["responding", "tokens", "sentences", "facts", "S", "NS", "IR", "abstains",
            "factscore"]  # fmt: skip
    lines = ["| | " + " | ".join(f"{s} (dev / paper)" for s in SUBJECTS) + " |"]
    lines.append("|---" * (len(SUBJECTS) + 1) + "|")
    for k in keys:
        cells = [f"{t1[s][k]} / {PAPER_T1[s][k]}" for s in SUBJECTS]
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def section_table1(report: dict, labeled: dict[str, list[Bio]], index: Path) -> None:
    """Table 1, the IR convention and the evidence coverage: printed and added to report."""
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
