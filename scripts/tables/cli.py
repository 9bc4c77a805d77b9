"""The command line of the tables: ``python -m scripts.reproduce_tables``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from factscore_local.config import DEFAULTS
from factscore_local.declarations.evidence import EVIDENCE_MODES
from factscore_local.labels.validation import ranking_kept, topic_half
from factscore_local.npm.defaults import DEFAULT_NP_MODEL
from scripts.caches import add_cache_options, model_results, seed_cache
from scripts.common import (
    BENCH_OUT,
    Stopwatch,
    add_data_option,
    data_root,
    labeled_bios,
    results_record,
    write_results,
)
from scripts.tables.main_tables import section_tables_3_9
from scripts.tables.results import tables_data, tables_figures
from scripts.tables.runner import Runner, log
from scripts.tables.table1 import section_table1


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The tables' options."""
    from scripts import tables

    ap = argparse.ArgumentParser(
        prog="python -m scripts.reproduce_tables",
        description=tables.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--index", type=Path, required=True, help="index of enwiki-20230401-dev.db")
    add_data_option(ap)
    add_cache_options(ap, BENCH_OUT / "tables-cache.db")
    ap.add_argument("--lm", default=None, help="default: the embedded 1.5B GGUF")
    ap.add_argument("--topics", type=int, default=15)
    ap.add_argument(
        "--max-passages",
        type=int,
        default=None,
        help="leave out topics whose page has more passages (default: none left out)",
    )
    ap.add_argument("--evidence", choices=EVIDENCE_MODES, default=DEFAULTS["evidence"],
                    help="evidence mode of every run")  # fmt: skip
    ap.add_argument("--np-model", default=DEFAULT_NP_MODEL, help="NP scorer of the main tables")
    ap.add_argument("--prefix-states", type=Path, default=None,
                    help="keep each page's evaluated evidence here: a run that changes only "
                    "what follows the evidence loads it instead of reading it")  # fmt: skip
    ap.add_argument("--objective", choices=["er", "f1"], default="er")
    ap.add_argument("--repeats", type=int, default=0, help="also cross-fit the default rule "
                    "over this many random topic halvings (mean and spread)")  # fmt: skip
    ap.add_argument("--candidates", action="store_true",
                    help="also read the candidates for the facts' slots and cross-fit the rules "
                    "that weigh them (issue 74): a tail per candidate")  # fmt: skip
    ap.add_argument("--skip", default="",
                    help="comma list of: tables, no-context; the names of the sections that "
                    "left the tree (np-lm, own, ablations, ablation-evidence, demos) are "
                    "accepted and mean nothing")  # fmt: skip
    ap.add_argument("--out", type=Path, default=BENCH_OUT / "tables.json")
    ap.add_argument(
        "--results",
        default=None,
        metavar="NAME",
        help="also write the figures to scripts/results/NAME.json",
    )
    ap.add_argument(
        "--results-out",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the results file here instead (what scripts.check does)",
    )
    ap.add_argument(
        "--rows", type=Path, default=None, help="folder for each run's rows (a file per subject)"
    )
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    args.data = data_root(args.data)
    args.skip = set(filter(None, args.skip.split(",")))
    return args


def main(argv: list[str] | None = None) -> None:
    """Runs the sections asked for; prints markdown, writes the figures as JSON."""
    args = parse_args(argv)
    watch = Stopwatch()
    report: dict = {"topics": args.topics, "objective": args.objective}
    with watch("table 1"):
        section_table1(report, labeled_bios(args.data), args.index)
    seed_cache(args.cache, args.seed_cache, "tables")
    stored = model_results(args.cache)
    run = Runner(args.index, args.cache, args.data, args.lm, args.max_passages, args.evidence,
                 args.rows, args.prefix_states)  # fmt: skip
    report["evidence"] = args.evidence
    report["max_passages"] = args.max_passages
    report["skipped_topics"] = run.skipped
    bios = run.bios(args.topics)
    if len({topic_half(b.topic) for b in bios}) < 2:
        raise SystemExit("--topics too small: cross-fitting needs topics in both halves")
    report["topics_used"] = {t: run.topic_class[t] for t in run.topic_order[: args.topics]}
    n_all = len(run.skipped) + len(run.topic_order)
    log(f"{len(bios)} bios of {args.topics} topics; topics left out for their page length "
        f"(--max-passages {args.max_passages}): {len(run.skipped)} of {n_all}")  # fmt: skip
    with watch("tables 3 and 9"):
        main_rows = [] if "tables" in args.skip else section_tables_3_9(report, run, bios, args)
    report["timings"] = run.timings
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    log(f"wrote {args.out}")
    if args.results or args.results_out:
        record = results_record(
            args.results or "tables",
            "scripts.reproduce_tables",
            args.argv,
            tables_data(report, bios),
            tables_figures(report),
            watch,
            # Model results this run added to the cache: 0 when everything was replayed.
            computed=model_results(args.cache) - stored,
            cache_misses=sum(t["computed"] for t in run.timings.values()),
        )
        log(f"wrote {write_results(record, args.results_out)}")
    if not main_rows:
        return
    # Ranking check over the calibrated ensemble, as a last line.
    best = report["verifiers"]["retrieve-lm+np"]["calibrated"]
    human = {s: best["subjects"][s]["human_score"] for s in best["subjects"]}
    est = {s: best["subjects"][s]["estimated_score"] for s in best["subjects"]}
    print(f"ranking kept by calibrated retrieve-lm+np: {ranking_kept(human, est)}")
