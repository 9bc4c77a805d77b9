"""Print a seeded sample of Factcheck-Bench subtask-4 claims with the passages global
retrieval finds for them, for a person to judge whether the passages hold the deciding
fact (the coverage figure of a knowledge source in BENCHMARKS.md).

    python scripts/factcheck_coverage_sample.py --index vital-index --n 30 --seed 0
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from factscore_local.index.reader import KnowledgeSource  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--claims", type=Path, default=ROOT.parent / "shared/data/factcheck-bench/"
                    "subtask4_claim_factuality-dev.jsonl")  # fmt: skip
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
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
