"""What reading the verdicts' hidden states costs (issue 48: seconds per fact must not move
by more than 5%).

    python -m scripts.notebook.bench_state_cost --index dev-index --topics 3 --rounds 2 \\
        --results state-cost

The labeled dev bios of the first ``--topics`` topics (the tables' order, three subjects)
are verified with their human atomic facts by the default LM and rule, each run from an
empty cache with the model loaded once, alternately without and with ``read_states``
(A B B A ..., so a drift of the machine's speed falls on both). Seconds per fact of each,
their ratio, and whether the states moved any verdict (the pass that reads them outputs
every tail token: margins may move by < 1e-3).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from factscore_local.config import build_config
from factscore_local.pipeline.components import build_components, load_shared_lm
from factscore_local.pipeline.estimator import Estimator
from scripts.common import (
    Stopwatch,
    add_data_option,
    data_root,
    log,
    results_record,
    write_results,
)
from scripts.tables.runner import Runner


def timed_run(index: Path, lm_spec, bios, read_states: bool) -> tuple[float, int, list]:
    """(seconds, facts, margins) of one run from an empty cache."""
    with tempfile.TemporaryDirectory() as tmp:
        config = build_config({"index": index, "lm": lm_spec, "cache": Path(tmp) / "c.db",
                               "use_atomic_facts": True, "validate": True, "gamma": 0,
                               "evidence": "page", "chunk_bios": 3,
                               "read_states": read_states})  # fmt: skip
        lm = load_shared_lm(config)
        lm.forget()  # no evaluated evidence carried over from the last run
        estimator = Estimator(config, build_components(config, lm=lm))
        start = time.perf_counter()
        rows = estimator.run(bios, None, progress=False)
        seconds = time.perf_counter() - start
    facts = [f for r in rows for f in (*r.decisions, *(r.human.facts if r.human else ()))]
    return seconds, len(facts), [f.margin for f in facts]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    add_data_option(ap)
    ap.add_argument("--lm", default=None)
    ap.add_argument("--topics", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--results", default=None)
    argv = sys.argv[1:] if argv is None else argv
    args = ap.parse_args(argv)
    watch = Stopwatch()
    bios = Runner(args.index, None, data_root(args.data), args.lm, None, "page").bios(args.topics)
    per_fact: dict[bool, list[float]] = {False: [], True: []}
    margins: dict[bool, list] = {}
    n_facts = 0
    for r in range(args.rounds):
        for states in (False, True) if r % 2 == 0 else (True, False):
            with watch(f"round {r + 1}, states {'on' if states else 'off'}"):
                seconds, n_facts, margins[states] = timed_run(args.index, args.lm, bios, states)
            per_fact[states].append(seconds / n_facts)
            log("state-cost", f"round {r + 1}, states {states}: {seconds:.1f} s, {n_facts} facts")
    off, on = statistics.median(per_fact[False]), statistics.median(per_fact[True])
    moved = max(abs(a - b) for a, b in zip(margins[False], margins[True], strict=True))
    figures = {
        "seconds_per_fact/off": round(off, 4),
        "seconds_per_fact/on": round(on, 4),
        "ratio_on_to_off": round(on / off, 3),
        "largest_margin_change": round(moved, 4),
    }
    log("state-cost", str(figures))
    if args.results:
        data = {"topics": args.topics, "bios": len(bios), "facts": n_facts,
                "rounds": args.rounds, "runs": per_fact}  # fmt: skip
        record = results_record(args.results, "scripts.notebook.bench_state_cost", argv, data,
                                figures, watch)  # fmt: skip
        log("state-cost", f"wrote {write_results(record)}")


if __name__ == "__main__":
    main()
