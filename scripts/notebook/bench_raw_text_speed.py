"""Raw-text facts per second, end to end: what ``fscore eval`` on raw generations costs on
2 cores, decomposition and verification apart.

    python -m scripts.notebook.bench_raw_text_speed --index dev-index [--topics 2] [--lm NAME]
        [--results NAME]

The first ``--topics`` dev topics in the tables' order (round robin over the frequency
classes), each with its three subjects' bios, scored from their raw text with the defaults
of ``fscore eval`` and an empty cache (every model result computed: nothing is seeded).
Records the seconds of the decomposition (sentences to atomic facts) and of the
verification (evidence, True/False, the rule's signals), the facts, and facts per second
of each and of the whole run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from scripts.common import (
    Stopwatch,
    add_data_option,
    data_root,
    log,
    results_record,
    write_results,
)
from scripts.tables.runner import Runner


def timed_stages(estimator) -> dict[str, float]:
    """Wraps the estimator's two model stages so that their seconds add up in the dict
    returned (decomposition: ``_collect_facts``; verification: ``verify``)."""
    seconds = {"decomposition": 0.0, "verification": 0.0}

    def wrap(name: str, method):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                seconds[name] += time.perf_counter() - start

        return timed

    estimator._collect_facts = wrap("decomposition", estimator._collect_facts)
    estimator.verify = wrap("verification", estimator.verify)
    return seconds


def main(argv: list[str] | None = None) -> int:
    from factscore_local.config import build_config
    from factscore_local.pipeline.estimator import Estimator

    ap = argparse.ArgumentParser(
        prog="python -m scripts.notebook.bench_raw_text_speed", description=__doc__.split("\n\n")[0]
    )
    add_data_option(ap)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--lm", default=None)
    ap.add_argument("--topics", type=int, default=2)
    ap.add_argument("--results", default=None, help="write scripts/results/NAME.json")
    argv = sys.argv[1:] if argv is None else argv
    args = ap.parse_args(argv)
    watch = Stopwatch()

    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache.db"
        bios = Runner(args.index, cache, data_root(args.data), args.lm, None, "auto").bios(
            args.topics
        )
        config = build_config(
            {"index": args.index, "lm": args.lm, "cache": cache, "validate": False}
        )
        estimator = Estimator(config)
        seconds = timed_stages(estimator)
        with watch("eval"):
            rows = estimator.run(bios, None, progress=False)
        model = estimator.lm().lm.name
    facts = sum(len(r.decisions) for r in rows)
    sentences = sum(len({d.sentence for d in r.decisions}) for r in rows)
    total = seconds["decomposition"] + seconds["verification"]
    figures = {
        "bios": len(rows),
        "responding_bios": sum(1 for r in rows if r.decisions),
        "facts": facts,
        "decomposition/seconds": round(seconds["decomposition"], 1),
        "decomposition/facts_per_s": round(facts / seconds["decomposition"], 2),
        "verification/seconds": round(seconds["verification"], 1),
        "verification/facts_per_s": round(facts / seconds["verification"], 2),
        "end_to_end/seconds": round(total, 1),
        "end_to_end/facts_per_s": round(facts / total, 2),
        "end_to_end/seconds_per_bio": round(total / max(1, len(rows)), 1),
    }
    log("raw-text-speed", f"{figures}")
    if args.results:
        topics = list(dict.fromkeys(b.topic for b in bios))
        data = {
            "bios": f"{len(rows)} dev bios: the first {len(topics)} topics in the tables' "
            f"order ({', '.join(topics)}), all three subjects, from raw text",
            "model": model,
            "sentences_with_facts": sentences,
            "cache": "empty (every model result computed)",
        }
        record = results_record(
            args.results, "scripts.notebook.bench_raw_text_speed", argv, data, figures, watch
        )
        log("raw-text-speed", f"wrote {write_results(record)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
