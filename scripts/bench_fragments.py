"""How often facts are fragments (a word cut short, no verb), and what the filter drops.

    python scripts/bench_fragments.py [--own-topics N --index IDX [--cache FILE] [--sample K]]

- On the dev files' own facts (FActScore's ``model-atomic-facts`` and the human atomic
  facts of every dev bio, all three subjects): what the filter flags. These are written
  statements, so a flag is either a fragment in the data or a false alarm; the flagged
  facts are printed to be read.
- With ``--own-topics N``: the project's own decomposition (the embedded LM, cached) of
  the first N dev topics' bios, all three subjects, with the filter off: the share of its
  facts that are fragments, by kind, and of its outputs whose last fact the LM left
  unfinished at the token limit (the parser drops those facts before the filter); with
  ``--sample K``, K of its facts drawn at random, to read for fragments the filter misses.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from factscore_local.pipeline.decompose import bullet_texts, cut_off_fact, parse_facts  # noqa: E402
from factscore_local.pipeline.fragments import fragment_reasons  # noqa: E402

SUBJECTS = ("InstructGPT", "ChatGPT", "PerplexityAI")


def given_facts(data: Path, kind: str) -> tuple[list[str], list[str]]:
    facts, sentences = [], []
    for subject in SUBJECTS:
        for line in (data / f"{subject}.jsonl").read_text(encoding="utf-8").splitlines():
            for sent in json.loads(line).get("annotations") or []:
                for fact in sent.get(kind) or []:
                    facts.append(fact["text"])
                    sentences.append(sent.get("text", ""))
    return facts, sentences


def own_facts(data: Path, index: Path, cache: Path | None, n_topics: int):
    """(facts, sentences) of the own decomposition of the first n topics (file order)."""
    from factscore_local.config import build_config
    from factscore_local.pipeline.estimator import Estimator
    from factscore_local.pipeline.inputs import read_bios
    from factscore_local.pipeline.sentences import split_sentences

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
    for subject in SUBJECTS:
        for bio in read_bios(data / f"{subject}.jsonl"):
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
    print(
        json.dumps(
            {
                "own outputs": len(outputs),
                "last fact cut off (dropped by the parser)": len(cut),
                "share_pct": round(100 * len(cut) / max(1, len(outputs)), 2),
                "bullets": bullets,
                "repeats (kept once by the parser)": bullets - kept - len(cut),
            }
        )
    )
    for fact in cut[:20]:
        print(f"#   cut off: {fact}")
    return facts, sentences, topics


def report(name: str, facts: list[str], sentences: list[str], show: int) -> dict:
    reasons = fragment_reasons(facts, sentences)
    counts = Counter(r for r in reasons if r)
    row = {"facts": name, "n": len(facts), **counts,
           "share_pct": round(100 * sum(counts.values()) / max(1, len(facts)), 2)}  # fmt: skip
    print(json.dumps(row))
    for fact, why in [(f, r) for f, r in zip(facts, reasons, strict=True) if r][:show]:
        print(f"#   {why}: {fact}")
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/factscore/labeled-dev")
    ap.add_argument("--own-topics", type=int, default=0)
    ap.add_argument("--index", type=Path, default=None, help="for --own-topics")
    ap.add_argument("--cache", type=Path, default=None, help="model cache for --own-topics")
    ap.add_argument("--show", type=int, default=40, help="flagged facts printed per set")
    ap.add_argument(
        "--sample", type=int, default=0, help="own facts drawn at random and printed, to be read"
    )
    ap.add_argument("--seed", type=int, default=0, help="for --sample")
    args = ap.parse_args()
    for kind in ("model-atomic-facts", "human-atomic-facts"):
        report(kind, *given_facts(args.data, kind), args.show)
    if args.own_topics:
        if args.index is None:
            ap.error("--own-topics needs --index")
        facts, sentences, topics = own_facts(args.data, args.index, args.cache, args.own_topics)
        print(f"# own decomposition of {len(topics)} topics: {', '.join(topics)}")
        report("own decomposition", facts, sentences, args.show)
        # What the filter misses can only be read: a seeded random sample to check by hand.
        drawn = random.Random(args.seed).sample(range(len(facts)), min(args.sample, len(facts)))
        for i in sorted(drawn):
            print(f"# sample {i}: {facts[i]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
