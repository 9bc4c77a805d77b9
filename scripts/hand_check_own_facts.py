"""A hand check of the project's own facts (issue 47): can a reader verify each on its own?

    python -m scripts.hand_check_own_facts draw --no-clean --out bench-out/hand-before.jsonl \\
        [--seed-cache scripts/cache/raw-text-98-part1.jsonl.gz ...]
    # read them; write {index: "" (stands alone) or the problem} to a JSON file, then
    python -m scripts.hand_check_own_facts record --sample bench-out/hand-before.jsonl \\
        --verdicts bench-out/hand-before-verdicts.json --name own-facts-hand-check-before \\
        [--standalone --cache bench-out/own-facts-cache.db]   # how the standalone check reads it

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

from scripts.caches import add_cache_options, seed_cache
from scripts.common import SUBJECTS, data_root, results_record, write_results
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


def set_aside_reasons(sample: list[dict], rows: list[dict]) -> list[str | None]:
    """What ``pipeline/standalone.py`` says of each sampled fact, read with the other facts
    of its bio (whether "they" dangles depends on them)."""
    from factscore_local.pipeline.decomposition.standalone import standalone_reasons

    bios = {(r["subject"], r["topic"]): [f for _, f in r["facts"]] for r in rows}
    out = []
    for s in sample:
        facts = bios[(s["subject"], s["topic"])]
        if s["fact"] not in facts:  # drawn before a later filter dropped it
            facts = [*facts, s["fact"]]
        out.append(standalone_reasons(facts)[facts.index(s["fact"])])
    return out


def record(sample: list[dict], verdicts: dict[str, str], name: str, argv: list[str],
           clean: bool = True, aside: list[str | None] | None = None) -> dict:  # fmt: skip
    """The record of a reading; with ``aside`` (the standalone check's reason for each fact),
    also how the check agrees with the reading and the share of the kept facts that stand
    alone."""
    if sorted(map(int, verdicts)) != list(range(len(sample))):
        raise SystemExit("the verdicts must cover the sample's indexes exactly")
    checked = [{**s, "problem": verdicts[str(i)]} for i, s in enumerate(sample)]
    if aside is not None:
        checked = [{**c, "set_aside": reason} for c, reason in zip(checked, aside, strict=True)]
    figures: dict = {}
    for subject in (*SUBJECTS, "all"):
        facts = [c for c in checked if subject in ("all", c["subject"])]
        alone = sum(not c["problem"] for c in facts)
        figures[f"{subject}/checked"] = len(facts)
        figures[f"{subject}/standalone"] = alone
        figures[f"{subject}/standalone_pct"] = round(100 * alone / len(facts), 1)
        if aside is not None:
            out = [c for c in facts if c["set_aside"]]
            kept = [c for c in facts if not c["set_aside"]]
            figures[f"{subject}/set_aside"] = len(out)
            figures[f"{subject}/set_aside_with_a_problem"] = sum(bool(c["problem"]) for c in out)
            figures[f"{subject}/kept_standalone_pct"] = round(
                100 * sum(not c["problem"] for c in kept) / len(kept), 1
            )
    for problem, n in sorted(Counter(c["problem"] for c in checked if c["problem"]).items()):
        figures[f"problem/{problem}"] = n
    data = {
        "labeled": "factscore/labeled-dev (all three subjects)",
        "decomposition": "the outputs cleaned of markup (scripts/cache/own-decomp-98 and the "
        "raw-text run's parts, scripts/cache/raw-text-98-part*)"
        if clean
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
    add_cache_options(r, Path("bench-out/own-facts-cache.db"))
    r.add_argument(
        "--standalone",
        action="store_true",
        help="also apply the standalone check (reads the bios' facts from the cache)",
    )
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
        aside = None
        if args.standalone:
            seed_cache(args.cache, args.seed_cache, "hand-check")
            rows = complete_own_facts(data_root(None), args.cache, not args.no_clean)
            aside = set_aside_reasons(sample, rows)
        figures = record(sample, verdicts, args.name, argv, not args.no_clean, aside)
        print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
