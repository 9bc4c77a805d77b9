"""Print a seeded sample of Factcheck-Bench subtask-4 claims with the passages global
retrieval finds for them, for a person to judge whether the passages hold the deciding
fact (the coverage figure of a knowledge source in BENCHMARKS.md).

    python -m scripts.factcheck_coverage_sample --index vital-index --n 30 --seed 0
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from factscore_local.index.reader import KnowledgeSource
from scripts.common import add_data_option, data_root


def main() -> None:
    ap = argparse.ArgumentParser(
        prog="python -m scripts.factcheck_coverage_sample", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--index", type=Path, required=True)
    add_data_option(ap)
    ap.add_argument("--claims", type=Path, default=None,
                    help="default: factcheck-bench/subtask4_claim_factuality-dev.jsonl "
                    "under --data")  # fmt: skip
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.claims is None:
        claims_file = "subtask4_claim_factuality-dev.jsonl"
        args.claims = data_root(args.data) / "factcheck-bench" / claims_file
    ks = KnowledgeSource(args.index)
    claims = [json.loads(line) for line in args.claims.read_text("utf-8").splitlines() if line]
    picked = sorted(random.Random(args.seed).sample(range(len(claims)), args.n))
    for i in picked:
        claim = claims[i]
        print(f"=== line {i + 1} [{claim['label']}] {claim['claim']}")
        for hit in ks.search(claim["claim"], k=args.k):
            print(f"  - {hit.passage.title}: {hit.passage.clean_text}")
        print()


if __name__ == "__main__":
    main()
