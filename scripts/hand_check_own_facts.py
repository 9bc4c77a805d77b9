"""A hand check of the project's own facts (issue 47): can a reader verify each on its own?

    python -m scripts.hand_check_own_facts draw --no-clean --out bench-out/hand-before.jsonl \\
        [--seed-cache scripts/cache/raw-text-98-part1.jsonl.gz ...]
    # read them; write {index: "" (stands alone) or the problem} to a JSON file, then
    python -m scripts.hand_check_own_facts record --sample bench-out/hand-before.jsonl \\
        --verdicts bench-out/hand-before-verdicts.json --name own-facts-hand-check-before

The sample: 33 facts of InstructGPT's bios, 33 of ChatGPT's, 34 of PerplexityAI's, drawn
with ``--seed`` from all facts of the own decomposition of the dev bios (``own_facts.py``,
read from the committed cache, no model). A fact *stands alone* when a reader who knows
only the bio's topic could look it up and call it true or false: its subject is named or
is the topic, it refers to nothing it does not name ("the tomb", "his film", "they"), it
is a whole claim (not cut off, not looping), and it is not about the text itself. A fact
that is false, or not about the topic, can stand alone.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path

from scripts.common import (
    SUBJECTS,
    add_cache_options,
    data_root,
    results_record,
    seed_cache,
    write_results,
)
from scripts.own_facts import complete_own_facts

PER_SUBJECT = {"InstructGPT": 33, "ChatGPT": 33, "PerplexityAI": 34}


def draw(rows: list[dict], seed: int) -> list[dict]:
    """The sample, subject by subject, from every (topic, sentence, fact) of the rows."""
    rng = random.Random(seed)
    sample = []
    for subject in SUBJECTS:
        pool = [(r["topic"], s, f) for r in rows if r["subject"] == subject for s, f in r["facts"]]
        for topic, sentence, fact in rng.sample(pool, PER_SUBJECT[subject]):
            sample.append({"subject": subject, "topic": topic, "sentence": sentence, "fact": fact})
    return sample


def record(sample: list[dict], verdicts: dict[str, str], name: str, argv: list[str],
           clean: bool = True) -> dict:  # fmt: skip
    if sorted(map(int, verdicts)) != list(range(len(sample))):
        raise SystemExit("the verdicts must cover the sample's indexes exactly")
    checked = [{**s, "problem": verdicts[str(i)]} for i, s in enumerate(sample)]
    figures: dict = {}
    for subject in (*SUBJECTS, "all"):
        facts = [c for c in checked if subject in ("all", c["subject"])]
        alone = sum(not c["problem"] for c in facts)
        figures[f"{subject}/checked"] = len(facts)
        figures[f"{subject}/standalone"] = alone
        figures[f"{subject}/standalone_pct"] = round(100 * alone / len(facts), 1)
    for problem, n in sorted(Counter(c["problem"] for c in checked if c["problem"]).items()):
        figures[f"problem/{problem}"] = n
    data = {
        "labeled": "factscore/labeled-dev (all three subjects)",
        "decomposition": "the outputs cleaned of markup (scripts/cache/own-decomp-98 and the "
        "raw-text run's parts, scripts/cache/raw-text-98-part*)" if clean
        else "the outputs as written (scripts/cache/own-decomp-98)",
        "sample": len(sample),
    }
    record = results_record(name, "scripts.hand_check_own_facts", argv, data, figures,
                            replay=False, recorded_because="a reading by hand",
                            hand_check=checked)  # fmt: skip
    write_results(record)
    return figures


def main(argv: list[str] | None = None) -> None:
    import sys

    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="step", required=True)
    d = sub.add_parser("draw")
    add_cache_options(d, Path("bench-out/own-facts-cache.db"))
    d.add_argument("--no-clean", action="store_true")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--out", type=Path, required=True)
    r = sub.add_parser("record")
    r.add_argument("--sample", type=Path, required=True)
    r.add_argument("--verdicts", type=Path, required=True)
    r.add_argument("--name", required=True)
    r.add_argument("--no-clean", action="store_true", help="the sample was drawn so")
    args = ap.parse_args(argv)
    if args.step == "draw":
        seed_cache(args.cache, args.seed_cache, "hand-check")
        rows = complete_own_facts(data_root(None), args.cache, not args.no_clean)
        sample = draw(rows, args.seed)
        args.out.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in sample))
        for i, s in enumerate(sample):
            print(i, s["subject"][:4], "|", s["topic"], "|", s["fact"])
    else:
        sample = [json.loads(line) for line in args.sample.read_text("utf-8").splitlines()]
        verdicts = json.loads(args.verdicts.read_text("utf-8"))
        figures = record(sample, verdicts, args.name, argv, not args.no_clean)
        print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
