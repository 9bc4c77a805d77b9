"""How many of the humans' atomic facts the project's own decomposition finds, against
InstructGPT's (the labels' ``model-atomic-facts``), on the same dev bios (issue 47; no model).

    python -m scripts.bench_fact_recall --seed-cache scripts/cache/own-decomp-98.jsonl.gz \\
        --results fact-recall-98 [--no-clean]

A human fact counts as *found* by a decomposition when one of its facts of the same bio
pairs with it lexically: at least ``--containment`` of the human fact's content words
(stopwords and the words of the topic's name left out) are among that fact's, and the
fact's own content words are not more than twice as many (a long fact that lists
everything does not find every fact). No LM pairs them: the figure is a lexical one. Both
decompositions are read over the bios where both respond and the humans labeled facts.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from factscore_local.pipeline.records.labeled import human_facts, model_facts
from factscore_local.pipeline.signals.lexical import content_words
from scripts.caches import add_cache_options, model_results, seed_cache
from scripts.common import (
    SUBJECTS,
    add_data_option,
    data_root,
    labeled_bios,
    results_record,
    write_results,
)
from scripts.own_facts import complete_own_facts


def pairs(human: str, fact: str, topic: str, containment: float) -> bool:
    """Whether ``fact`` states what the human fact ``human`` states, lexically."""
    name = content_words(topic)
    h, f = content_words(human) - name, content_words(fact) - name
    if not h:
        return False
    return len(h & f) / len(h) >= containment and len(f) <= 2 * max(len(h), 2)


def recall(human: list[str], facts: list[str], topic: str, containment: float) -> int:
    """How many of the human facts some fact pairs with."""
    return sum(pairing(h, facts, topic, containment) is not None for h in human)


def pairing(human: str, facts: list[str], topic: str, containment: float) -> str | None:
    """The first fact that pairs with the human fact, or None."""
    return next((f for f in facts if pairs(human, f, topic, containment)), None)


SAMPLE = 10  # human facts shown per subject, found and not found, drawn with a fixed seed


def samples(pairs_of: list[dict], seed: int = 0) -> list[dict]:
    """``SAMPLE`` found and ``SAMPLE`` missed human facts of each subject (seeded draw), each
    with the own fact that pairs with it: what the recall counts, to read."""
    import random

    rng = random.Random(seed)
    out = []
    for subject in SUBJECTS:
        for found in (True, False):
            pool = [p for p in pairs_of if p["subject"] == subject
                    and (p["own_fact"] is not None) == found]  # fmt: skip
            out += rng.sample(pool, min(SAMPLE, len(pool)))
    return out


def main(argv: list[str] | None = None) -> None:
    import sys

    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_cache_options(ap, Path("bench-out/own-facts-cache.db"))
    add_data_option(ap)
    ap.add_argument("--containment", type=float, default=0.7)
    ap.add_argument("--no-clean", action="store_true")
    ap.add_argument("--results", default=None)
    ap.add_argument("--results-out", type=Path, default=None)
    args = ap.parse_args(argv)
    seed_cache(args.cache, args.seed_cache, "fact-recall")
    before = model_results(args.cache)
    data = data_root(args.data)
    rows = complete_own_facts(data, args.cache, not args.no_clean)
    own = {(r["subject"], r["topic"]): [f for _, f in r["facts"]] for r in rows}
    figures: dict = {}
    paired: list[dict] = []  # every human fact with the own fact that finds it (or None)
    for subject, bios in labeled_bios(data, SUBJECTS).items():
        found_own = found_ref = n_human = n_bios = n_own = n_ref = 0
        for bio in bios:
            humans = [h.text for h in human_facts(bio.annotations)]
            mine = own.get((subject, bio.topic), [])
            theirs = [a for _, a in model_facts(bio.annotations)]
            if not humans or not mine or not theirs:
                continue
            n_bios += 1
            n_human += len(humans)
            n_own, n_ref = n_own + len(mine), n_ref + len(theirs)
            for human in humans:
                fact = pairing(human, mine, bio.topic, args.containment)
                found_own += fact is not None
                paired.append({"subject": subject, "topic": bio.topic, "human_fact": human,
                               "own_fact": fact})  # fmt: skip
            found_ref += recall(humans, theirs, bio.topic, args.containment)
        figures.update({
            f"{subject}/bios": n_bios,
            f"{subject}/human_facts": n_human,
            f"{subject}/own_facts": n_own,
            f"{subject}/instructgpt_facts": n_ref,
            f"{subject}/recall_own": round(100 * found_own / n_human, 1),
            f"{subject}/recall_instructgpt": round(100 * found_ref / n_human, 1),
        })  # fmt: skip
    print("\n".join(f"{k}: {v}" for k, v in figures.items()))
    if args.results or args.results_out:
        seeds = ", ".join(p.name.removesuffix(".jsonl.gz") for p in args.seed_cache)
        data_info = {"labeled": "factscore/labeled-dev (all three subjects)",
                     "decomposition": "the outputs " + ("as written" if args.no_clean
                     else "cleaned of markup") + f", their generations from {seeds}",
                     "pairing": f"lexical, containment >= {args.containment}"}  # fmt: skip
        record = results_record(args.results or "fact-recall", "scripts.bench_fact_recall",
                                argv, data_info, figures, samples=samples(paired),
                                computed=model_results(args.cache) - before)  # fmt: skip
        write_results(record, args.results_out)


if __name__ == "__main__":
    main()
