"""How often facts are fragments (a word cut short, no verb, a loop), and what the filter drops.

    python -m scripts.bench_fragments [--own-topics N --index IDX [--cache FILE] [--sample K]]

- On the dev files' own facts (FActScore's ``model-atomic-facts`` and the human atomic
  facts of every dev bio, all three subjects): what the filter flags. These are written
  statements, so a flag is either a fragment in the data or a false alarm; the flagged
  facts are printed to be read.
- With ``--own-topics N``: the project's own decomposition (the embedded LM, cached) of
  the first N dev topics' bios, all three subjects, with the filter off: the share of its
  facts that are fragments, by kind, and of its outputs whose last fact the LM left
  unfinished at the token limit (the parser drops those facts before the filter); with
  ``--sample K``, K of its facts drawn at random, to read for fragments the filter misses.

``--seed-cache scripts/cache/own-decomp-98.jsonl.gz`` replays the 98 topics' decomposition
without a model run; ``--results NAME`` writes the counts to ``scripts/results/NAME.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

from tqdm import tqdm

from factscore_local.pipeline.decomposition.decompose import bullet_texts, cut_off_fact, parse_facts
from factscore_local.pipeline.decomposition.fragments import fragment_reasons
from scripts.caches import add_cache_options, model_results, seed_cache
from scripts.common import (
    SUBJECTS,
    Stopwatch,
    add_data_option,
    data_root,
    flatten,
    labeled_bios,
    results_record,
    write_results,
)


def given_facts(
    data: Path, kind: str, subjects: tuple[str, ...] = SUBJECTS
) -> tuple[list[str], list[str]]:
    """(facts, their sentences) of one kind of the dev files' own atomic facts."""
    facts, sentences = [], []
    for bios in labeled_bios(data, subjects).values():
        for bio in bios:
            for sent in bio.annotations or []:
                for fact in sent.get(kind) or []:
                    facts.append(fact["text"])
                    sentences.append(sent.get("text", ""))
    return facts, sentences


def own_facts(data: Path, index: Path, cache: Path | None, n_topics: int):
    """(facts, sentences, topics, counts of the outputs) of the own decomposition of the
    first n topics (file order)."""
    from factscore_local.config import build_config
    from factscore_local.pipeline.decomposition.sentences import split_sentences
    from factscore_local.pipeline.estimator import Estimator

    estimator = Estimator(build_config({"index": index, "cache": cache}))
    decomposer = estimator.components.decomposer.get()
    decomposer.drop_fragments = False  # measure what the filter would see
    outputs: list[str] = []
    kept = 0  # facts the parser returned, over every output

    def parser(output: str) -> list[str]:  # the decomposer's own, recording every output
        nonlocal kept
        facts = parse_facts(output)
        outputs.append(output)
        kept += len(facts)
        return facts

    decomposer.parser = parser
    topics: list[str] = []
    bios = []
    for labeled in labeled_bios(data).values():
        for bio in labeled:
            if bio.topic not in topics and len(topics) < n_topics:
                topics.append(bio.topic)
            if bio.topic in topics and bio.output.strip():
                bios.append(bio)
    split = [split_sentences(b.output) for b in bios]
    facts, sentences = [], []
    # the bar's postfix counts sentences decomposed (cache hits at once) and their rate
    bar = tqdm(total=len(bios), unit=" bios", desc="own decomposition", file=sys.stderr)
    estimator.components.progress.attach(bar)
    try:
        decomposed = decomposer.run_split(split)
    finally:
        estimator.components.progress.attach(None)
        bar.update(len(bios))
        bar.close()
    for pairs in decomposed:
        for sent, fs in pairs:
            facts += fs
            sentences += [sent.text] * len(fs)
    cut = [f for f in map(cut_off_fact, outputs) if f is not None]
    bullets = sum(len(bullet_texts(o)) for o in outputs)
    outputs_row = {
        "own outputs": len(outputs),
        "last fact cut off (dropped by the parser)": len(cut),
        "share_pct": round(100 * len(cut) / max(1, len(outputs)), 2),
        "bullets": bullets,
        "repeats (kept once by the parser)": bullets - kept - len(cut),
    }
    print(json.dumps(outputs_row))
    for fact in cut[:20]:
        print(f"#   cut off: {fact}")
    return facts, sentences, topics, outputs_row


def report(name: str, facts: list[str], sentences: list[str], show: int) -> dict:
    """Counts the filter's flags by kind, prints them and the first ``show`` flagged facts."""
    reasons = fragment_reasons(facts, sentences)
    counts = Counter(r for r in reasons if r)
    row = {"facts": name, "n": len(facts), **counts,
           "share_pct": round(100 * sum(counts.values()) / max(1, len(facts)), 2)}  # fmt: skip
    print(json.dumps(row))
    for fact, why in [(f, r) for f, r in zip(facts, reasons, strict=True) if r][:show]:
        print(f"#   {why}: {fact}")
    return row


def main(argv: list[str] | None = None) -> int:
    """Counts the fragments; with ``--results``, writes them as a results file."""
    ap = argparse.ArgumentParser(
        prog="python -m scripts.bench_fragments",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_data_option(ap)
    ap.add_argument("--subjects", default=",".join(SUBJECTS),
                    help="comma list of the dev files whose facts are counted")  # fmt: skip
    ap.add_argument("--own-topics", type=int, default=0)
    ap.add_argument("--index", type=Path, default=None, help="for --own-topics")
    add_cache_options(ap, None)
    ap.add_argument("--show", type=int, default=40, help="flagged facts printed per set")
    ap.add_argument(
        "--sample", type=int, default=0, help="own facts drawn at random and printed, to be read"
    )
    ap.add_argument("--seed", type=int, default=0, help="for --sample")
    ap.add_argument(
        "--results",
        default=None,
        metavar="NAME",
        help="also write the counts to scripts/results/NAME.json",
    )
    ap.add_argument(
        "--results-out",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the results file here instead (what scripts.check does)",
    )
    args = ap.parse_args(argv)
    data, watch = data_root(args.data), Stopwatch()
    subjects = tuple(filter(None, args.subjects.split(",")))
    if set(subjects) - set(SUBJECTS):
        ap.error(f"--subjects: choose from {', '.join(SUBJECTS)}")
    rows: dict[str, dict] = {}
    for kind in ("model-atomic-facts", "human-atomic-facts"):
        with watch(kind):
            rows[kind] = report(kind, *given_facts(data, kind, subjects), args.show)
    used: dict = {"labeled": "factscore/labeled-dev", "subjects": list(subjects)}
    stored, computed = model_results(args.cache), None
    if args.own_topics:
        if args.index is None:
            ap.error("--own-topics needs --index")
        seed_cache(args.cache, args.seed_cache, "fragments")
        stored = model_results(args.cache)
        with watch("own decomposition"):
            facts, sentences, topics, outputs = own_facts(
                data, args.index, args.cache, args.own_topics
            )
        computed = model_results(args.cache) - stored
        print(f"# own decomposition of {len(topics)} topics: {', '.join(topics)}")
        rows["own decomposition"] = {**report("own decomposition", facts, sentences, args.show),
                                     "outputs": outputs}  # fmt: skip
        used.update(topics=len(topics), topics_used=topics)
        # What the filter misses can only be read: a seeded random sample to check by hand.
        drawn = random.Random(args.seed).sample(range(len(facts)), min(args.sample, len(facts)))
        for i in sorted(drawn):
            print(f"# sample {i}: {facts[i]}")
    if args.results or args.results_out:
        argv = list(sys.argv[1:] if argv is None else argv)
        figures = {f"{kind}/{key}": value for kind, row in rows.items()
                   for key, value in flatten(row).items()}  # fmt: skip
        record = results_record(args.results or "fragments", "scripts.bench_fragments", argv,
                                used, figures, watch, computed=computed)  # fmt: skip
        print(f"# wrote {write_results(record, args.results_out)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
