"""Do more per-fact features help the fitted rule? (issue 10, lever 3; no model run)

    python scripts/bench_rule_features.py \
        --rows "bench-out/rows-98/retrieve-lm+np+coverage-fitted cross-fitted" \
        --other-prompt "demos=bench-out/rows-98/lever verification demos"

Reads the rows of a ``reproduce_tables.py --rows`` run that recorded margin, NP and
coverage, and cross-fits (over the fixed topic halves, all subjects pooled, as the
shipped rule is fitted) a logistic rule over the default rule's features plus each
candidate: the fact's position in its response, its top retrieval score, its length in
words, and how many capitalised names it holds beyond the topic's; with
``--other-prompt NAME=DIR``, also the margin the same fact got under another prompt (a
prompt lever's rows: two passes of the LM, an ensemble of prompts). Prints ER and
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

from factscore_local.calibration import (  # noqa: E402
    SubjectFacts,
    collect,
    estimated_score,
    f1_from_counts,
    fit,
    not_supported_counts,
    settings_thresholds,
)
from factscore_local.records import BioRow, FactResult  # noqa: E402
from factscore_local.report_data import read_rows  # noqa: E402
from factscore_local.validation import topic_half  # noqa: E402
from factscore_local.verifiers import (  # noqa: E402
    COVERAGE_RULE_FEATURES,
    FEATURES,
    FITTED,
    Verifier,
    fitted_rule,
)

SUBJECTS = ("InstructGPT", "ChatGPT", "PerplexityAI")
CANDIDATES = ("position", "top score", "words", "other names")
NAME = re.compile(r"\b[A-Z][a-z]+")


# Margins of the same facts under other prompts: name -> (source, topic, atom) -> margin.
OTHER_MARGINS: dict[str, dict[tuple[str, str, str], float]] = {}


def other_margins(folder: Path) -> dict[tuple[str, str, str], float]:
    """Each fact's margin in another run's rows (model and human facts alike)."""
    out = {}
    for subject in SUBJECTS:
        for row in read_rows(folder / f"{subject}.jsonl"):
            facts = row.decisions + (row.human.facts if row.human else ())
            for fact in facts:
                if fact.margin is not None:
                    out[(row.source, row.topic, fact.atom)] = fact.margin
    return out


def candidate_signals(row: BioRow, facts: tuple[FactResult, ...]) -> dict[str, list[float]]:
    """The candidate features of each fact of a row (``calibration.collect``'s extra)."""
    topic_words = set(row.topic.split())
    last = max(1, len(facts) - 1)
    others = {
        f"margin ({name})": [margins[(row.source, row.topic, f.atom)] for f in facts]
        for name, margins in OTHER_MARGINS.items()
    }
    return {
        **others,
        "position": [i / last for i in range(len(facts))],
        "top score": [
            math.log1p(max(f.evidence[0].score, 0.0)) if f.evidence else 0.0 for f in facts
        ],  # fmt: skip
        "words": [len(f.atom.split()) for f in facts],
        "other names": [sum(w not in topic_words for w in NAME.findall(f.atom)) for f in facts],
    }


for _name in CANDIDATES:  # what a fitted rule may weigh, for this script only
    FEATURES.setdefault(_name, lambda s, name=_name: s[name])


def rule_with(extra: tuple[str, ...]) -> Verifier:
    """The default coverage rule with more features, fitted like it."""
    features = (*COVERAGE_RULE_FEATURES, *extra)
    return Verifier("coverage rule + " + ", ".join(extra), ("margin", "np", "coverage"),
                    fitted_rule(features), (FITTED,), features=features)  # fmt: skip


Halves = list[tuple[dict[str, SubjectFacts], dict[str, SubjectFacts]]]


def topic_halves(rows: list[BioRow]) -> Halves:
    """(fitting facts, held-out facts) for each topic half, with the candidate signals."""
    return [
        (collect([r for r in rows if topic_half(r.topic) != half], candidate_signals),
         collect([r for r in rows if topic_half(r.topic) == half], candidate_signals))
        for half in (0, 1)
    ]  # fmt: skip


def crossfit(halves: Halves, verifier: Verifier) -> dict[str, tuple[float, float]]:
    """Per subject (ER, F1) in points, each topic half decided by ``calibration.fit`` on the
    other, as reproduce_tables.py cross-fits the shipped rule."""
    est = {s: 0.0 for s in SUBJECTS}
    human = {s: 0.0 for s in SUBJECTS}
    n = {s: 0 for s in SUBJECTS}
    counts = {s: np.zeros(3, int) for s in SUBJECTS}  # tp, fp, fn on not-supported facts
    for train, test in halves:
        thresholds = settings_thresholds(fit(train, verifier, "er"))
        for subject, facts in test.items():
            if facts.n_bios:
                est[subject] += estimated_score(facts, verifier, thresholds) * facts.n_bios
                human[subject] += facts.human_score * facts.n_bios
                n[subject] += facts.n_bios
            counts[subject] += not_supported_counts([facts], verifier, thresholds)
    return {
        s: (round(100 * abs(est[s] - human[s]) / n[s], 1),
            round(100 * f1_from_counts(*map(int, c)), 1))
        for s, c in counts.items()
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=Path, required=True, help="a folder of <subject>.jsonl rows")
    ap.add_argument(
        "--other-prompt",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="rows of the same facts under another prompt (a --levers run)",
    )
    args = ap.parse_args()
    for spec in args.other_prompt:
        name, _, folder = spec.partition("=")
        OTHER_MARGINS[name] = other_margins(Path(folder))
        feature = f"margin ({name})"
        FEATURES.setdefault(feature, lambda s, f=feature: s[f])
    rows = [r for s in SUBJECTS for r in read_rows(args.rows / f"{s}.jsonl")
            if r.ok and r.human is not None]  # fmt: skip
    topics = len({r.topic for r in rows})
    print(f"{len(rows)} bios of {topics} topics, cross-fitted over the topic halves\n")
    print("| features | " + " | ".join(f"{s} ER / F1" for s in SUBJECTS) + " |")
    print("|---|" + "---|" * len(SUBJECTS))
    settings = [("the default rule's (" + ", ".join(COVERAGE_RULE_FEATURES) + ")", ())]
    settings += [(f"+ {c}", (c,)) for c in CANDIDATES]
    settings += [("+ all four", CANDIDATES)]
    for name in OTHER_MARGINS:
        feature = f"margin ({name})"
        settings += [(f"+ {feature}", (feature,)),
                     (f"+ {feature} and all four", (feature, *CANDIDATES))]  # fmt: skip
    halves = topic_halves(rows)
    for name, extra in settings:
        figures = crossfit(halves, rule_with(extra))
        print(f"| {name} | " + " | ".join(f"{figures[s][0]} / {figures[s][1]}" for s in SUBJECTS)
              + " |")  # fmt: skip


if __name__ == "__main__":
    main()
