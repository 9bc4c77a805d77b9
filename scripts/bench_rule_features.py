"""Do more per-fact features help the fitted rule? (issue 10, lever 3; no model run)

    python scripts/bench_rule_features.py \
        --rows "bench-out/rows-98/retrieve-lm+np+coverage-fitted cross-fitted"

Reads the rows of a ``reproduce_tables.py --rows`` run that recorded margin, NP and
coverage, and cross-fits (over the fixed topic halves, all subjects pooled, as the
shipped rule is fitted) a logistic rule over the default rule's features plus each
candidate: the fact's position in its response, its top retrieval score, its length in
words, and how many capitalised names it holds beyond the topic's. Prints ER and
micro-F1 per subject, ER over the bios where both the humans and the estimate respond.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from factscore_local.records import BioRow, FactResult  # noqa: E402
from factscore_local.report_data import read_rows  # noqa: E402
from factscore_local.validation import subject_name, topic_half  # noqa: E402

SUBJECTS = ("InstructGPT", "ChatGPT", "PerplexityAI")
BASE = ("margin", "np", "margin*np", "coverage")
CANDIDATES = ("position", "top score", "words", "other names")
NAME = re.compile(r"\b[A-Z][a-z]+")


def features(facts: tuple[FactResult, ...], topic: str) -> np.ndarray:
    """One row per fact: the base features, then the candidates."""
    topic_words = set(topic.split())
    out = []
    for i, f in enumerate(facts):
        margin, np_, coverage = f.margin or 0.0, f.np or 0.0, f.coverage or 0.0
        top = max(f.evidence[0].score, 0.0) if f.evidence else 0.0
        names = [w for w in NAME.findall(f.atom) if w not in topic_words]
        out.append([margin, np_, margin * np_, coverage, i / max(1, len(facts) - 1),
                    math.log1p(top), len(f.atom.split()), len(names)])  # fmt: skip
    return np.asarray(out, float).reshape(-1, len(BASE) + len(CANDIDATES))


class Bio:
    def __init__(self, row: BioRow) -> None:
        self.subject, self.topic = subject_name(row.source), row.topic
        human = row.human
        self.responds = bool(row.responded and row.decisions and human.score is not None)
        self.human_score = human.score
        self.x = features(row.decisions, row.topic)  # model facts: the estimate (ER)
        self.hx = features(human.facts, row.topic)  # human facts: F1
        self.not_supported = np.array([f.label != "S" for f in human.facts], bool)


def mean_er(bios: list[Bio], supported) -> float:
    """Mean over subjects of |estimated - human FActScore| on bios where both respond."""
    ers = []
    for s in SUBJECTS:
        both = [b for b in bios if b.subject == s and b.responds]
        if both:
            est = np.mean([np.mean(supported(b.x)) for b in both])
            ers.append(abs(est - np.mean([b.human_score for b in both])))
    return float(np.mean(ers))


def crossfit(bios: list[Bio], columns: list[int]) -> dict[str, tuple[float, float]]:
    """Per subject (ER, F1) in points, each half decided by a rule fitted on the other."""
    from sklearn.linear_model import LogisticRegression

    decided = {s: {"est": [], "human": [], "tp": 0, "fp": 0, "fn": 0} for s in SUBJECTS}
    for half in (0, 1):
        train = [b for b in bios if topic_half(b.topic) != half]
        x = np.concatenate([b.hx[:, columns] for b in train])
        y = ~np.concatenate([b.not_supported for b in train])
        mu, sd = x.mean(0), x.std(0) + 1e-9
        model = LogisticRegression(max_iter=2000).fit((x - mu) / sd, y)

        def score(m: np.ndarray, model=model, mu=mu, sd=sd) -> np.ndarray:
            return model.decision_function((m[:, columns] - mu) / sd) if len(m) else np.zeros(0)

        # The cutoff on the log-odds with the lowest ER on the fitting half.
        scores = np.concatenate([score(b.x) for b in train if b.responds])
        cutoffs = np.unique(np.append(np.quantile(scores, np.linspace(0, 1, 101)), 0.0))
        cut = min(cutoffs, key=lambda c: mean_er(train, lambda m, c=c: score(m) > c))
        for b in bios:
            if topic_half(b.topic) != half:
                continue
            d = decided[b.subject]
            if b.responds:
                d["est"].append(np.mean(score(b.x) > cut))
                d["human"].append(b.human_score)
            rejected = score(b.hx) <= cut
            d["tp"] += int(np.sum(rejected & b.not_supported))
            d["fp"] += int(np.sum(rejected & ~b.not_supported))
            d["fn"] += int(np.sum(~rejected & b.not_supported))
    return {
        s: (round(100 * abs(np.mean(d["est"]) - np.mean(d["human"])), 1),
            round(100 * 2 * d["tp"] / max(1, 2 * d["tp"] + d["fp"] + d["fn"]), 1))
        for s, d in decided.items()
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=Path, required=True, help="a folder of <subject>.jsonl rows")
    args = ap.parse_args()
    bios = [Bio(r) for s in SUBJECTS for r in read_rows(args.rows / f"{s}.jsonl")
            if r.ok and r.human is not None]  # fmt: skip
    topics = len({b.topic for b in bios})
    print(f"{len(bios)} bios of {topics} topics, cross-fitted over the topic halves\n")
    print("| features | " + " | ".join(f"{s} ER / F1" for s in SUBJECTS) + " |")
    print("|---|" + "---|" * len(SUBJECTS))
    base = list(range(len(BASE)))
    settings = [("default rule's (" + ", ".join(BASE) + ")", base)]
    settings += [(f"+ {c}", base + [len(BASE) + i]) for i, c in enumerate(CANDIDATES)]
    settings += [("+ all four", base + [len(BASE) + i for i in range(len(CANDIDATES))])]
    for name, columns in settings:
        figures = crossfit(bios, columns)
        print(f"| {name} | " + " | ".join(f"{figures[s][0]} / {figures[s][1]}" for s in SUBJECTS)
              + " |")  # fmt: skip


if __name__ == "__main__":
    main()
