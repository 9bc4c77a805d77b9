"""The stance head on Factcheck-Bench's dev stance pairs (subtask 3), cross-validated by
claim, against the label words' logits (issue 48, item 3).

    python -m scripts.bench_stance_head --index dev-index --cache bench-out/stance-head.db \\
        --results stance-head --ship data/heads/qwen2.5-coder-1.5b-instruct-q4_k_m-stance.npz

One pass of the LM over every pair reads the state where the stance label is read (the
label logits come from the same pass and are cached beside it). Then, with no model:

- ``label logits``: the four label words' logits as they are, and with a label bias fitted
  on the other claim half (``fscore factcheck`` without a head);
- ``head (logistic)``, ``head (mlp)``: each claim half decided by a head trained on the
  other half's pairs (its regularisation chosen by claim-grouped CV inside that half);
- the same heads reading the pair's lexical features after the state (``+ pair
  features``), and a logistic regression over those features alone.

Macro-F1 with four labels and with three (the supports merged), per-label F1. ``--ship``
writes a head (``--ship-kind``) trained on every pair, with what it was fitted on, through
``fscore ship-head``'s function (``factscore_local.cli.ship.ship_head``, ``stance=True``).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from factscore_local.cli.ship import ship_head
from factscore_local.config import EvalConfig, model_name
from factscore_local.methods.factcheck.data import read_stance_pairs
from factscore_local.methods.factcheck.pipeline import run_stance, stance_scores
from factscore_local.methods.factcheck.stance_head import (
    crossfit_head,
    stance_states,
    train_stance_head,
)
from factscore_local.pipeline.components import build_components
from scripts.caches import add_cache_options, export_part, model_results, seed_cache
from scripts.common import (
    Stopwatch,
    add_data_option,
    data_root,
    flatten,
    log,
    results_record,
    write_results,
)

STANCE_FILE = Path("factcheck-bench", "subtask3_claim_evidence_stance-dev.jsonl")


LABEL_SETS = {"4 labels": "four_labels", "3 labels": "three_labels"}
GOALS = {"4 labels": 0.40, "3 labels": 0.512}  # issue 48; 0.512: RoBERTa-large-MNLI's


def scores(scored: dict) -> dict:
    """Macro-F1 and per-label F1 of a ``stance_scores`` entry, per label set."""

    def keep(s: dict) -> dict:
        per_label = {f"f1 {label}": v["f1"] for label, v in s["per_label"].items()}
        return {"macro_f1": s["macro_f1"], **per_label}

    return {name: keep(scored[key]) for name, key in LABEL_SETS.items()}


def tables(out: dict) -> list[dict]:
    """One table per label set: a row per way of deciding the stance."""
    specs = []
    for name, goal in GOALS.items():
        columns = ["macro_f1", *(c for c in next(iter(out[name].values())) if c != "macro_f1")]
        specs.append({"title": f"{name}: macro-F1 and F1 per label (goal: macro-F1 {goal})",
                      "prefix": name, "rows_head": "stance from", "columns": columns,
                      "digits": 3})  # fmt: skip
    return specs


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    add_cache_options(ap, Path("bench-out/stance-head.db"))
    add_data_option(ap)
    ap.add_argument("--lm", default=None)
    ap.add_argument("--limit", type=int, default=None, help="only the first N pairs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--results", default=None)
    ap.add_argument("--results-out", type=Path, default=None,
                    help="write the results file here (the checker's replay)")  # fmt: skip
    ap.add_argument("--ship", type=Path, default=None)
    ap.add_argument(
        "--ship-kind",
        choices=("logistic", "mlp"),
        default="logistic",
        help="the kind of head --ship trains on every pair",
    )
    ap.add_argument("--ship-pair-features", action="store_true",
                    help="the shipped head reads the pair features after the state")  # fmt: skip
    ap.add_argument(
        "--export",
        type=Path,
        default=None,
        help="after each --chunk of pairs, export the new model results to "
        "PREFIX-partN.jsonl.gz (a killed pass resumes from them with --seed-cache)",
    )
    ap.add_argument("--chunk", type=int, default=300, help="pairs per exported chunk")
    argv = sys.argv[1:] if argv is None else argv
    args = ap.parse_args(argv)
    watch = Stopwatch()
    seed_cache(args.cache, args.seed_cache, "stance")
    before = model_results(args.cache)  # (cache misses would count file digests too)
    pairs = read_stance_pairs(data_root(args.data) / STANCE_FILE)[: args.limit]
    parts = build_components(EvalConfig(index=args.index, lm=args.lm, cache=args.cache))
    lm = parts.lm.get()
    with watch("states"):
        ok = [p for p in pairs if not p.error]
        blocks = []
        for start in range(0, len(ok), args.chunk):
            blocks.append(stance_states(ok[start : start + args.chunk], lm))
            if args.export:
                export_part(args.cache, args.export, tag="stance")
        states = np.concatenate(blocks) if blocks else stance_states([], lm)
    by_method = {}
    logits = run_stance(pairs, lm)  # every logit cached by the states' pass
    base = stance_scores(logits)
    by_method["label logits"] = scores(base)
    if "label_bias_crossfitted" in base:
        by_method["label logits, bias cross-fitted"] = scores(base["label_bias_crossfitted"])
    variants = [("logistic", states, False, "head (logistic)"),
                ("mlp", states, False, "head (mlp)"),
                ("logistic", states[:, :0], True, "pair features alone (logistic)"),
                ("logistic", states, True, "head (logistic) + pair features"),
                ("mlp", states, True, "head (mlp) + pair features")]  # fmt: skip
    for kind, inputs, lexical, name in variants:
        with watch(name):
            decided = crossfit_head(pairs, inputs, kind, args.seed, pair_features=lexical)
            by_method[f"{name}, cross-fitted"] = scores(stance_scores(decided, False))
        log("stance", f"{name}: {by_method[f'{name}, cross-fitted']}")
    out = {name: {m: v[name] for m, v in by_method.items()} for name in LABEL_SETS}
    data = {"pairs": len(ok), "claims": len({p.claim for p in ok}), "errors": len(pairs) - len(ok),
            "model": model_name(args.lm), "file": str(STANCE_FILE),
            "state_width": int(states.shape[1]),
            "labels": dict(Counter(p.stance for p in ok))}  # fmt: skip
    if args.ship:
        head = train_stance_head(pairs, states, args.ship_kind, args.seed,
                                 {"model": model_name(args.lm), "fitted_on": data,
                                  "commit": watch.commit},
                                 pair_features=args.ship_pair_features)  # fmt: skip
        log("stance", f"wrote {ship_head(head, args.lm, stance=True, out=args.ship)}")
    print(flatten(out))
    if args.results or args.results_out:
        name, computed = args.results or "stance-head", model_results(args.cache) - before
        record = results_record(name, "scripts.bench_stance_head", argv, data, flatten(out),
                                watch, tables=tables(out), computed=computed)  # fmt: skip
        log("stance", f"wrote {write_results(record, args.results_out)}")


if __name__ == "__main__":
    main()
