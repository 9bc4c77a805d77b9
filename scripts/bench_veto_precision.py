"""The slot veto's precision on the dev human labels: of the human atomic facts the default
rule vetoes (a conflicting number, year or place), how many the annotators labeled S.

Every human atomic fact of the labeled dev bios is verified as the tables verify it (the
default rule, its own top-k passages; the model results come from the committed caches),
and its slot flags are read from those passages (``factscore_local.pipeline.signals.slots``).
Per kind of veto it reports the vetoes, how many fall on facts labeled S, NS and IR, and
the precision (the vetoes on facts not labeled S, over all vetoes); and the same for the
vetoes that decide (the facts the rule's score alone would accept). The slot check is
lexical: a change to it needs no model run, only this replay.

Example:
    python -m scripts.bench_veto_precision --index bench-out/dev-index \\
        --cache bench-out/veto-cache.db --seed-cache scripts/cache/dev-tables-98.jsonl.gz \\
        --results veto-precision-98
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

import numpy as np

from factscore_local.declarations.features import feature_values, with_slot_flags
from factscore_local.declarations.verifiers import get_verifier, legacy_name, rule_score
from factscore_local.pipeline.records.labeled import human_facts
from scripts.bench_counterfactual import shipped_rules, signal_arrays
from scripts.caches import add_cache_options, model_results, seed_cache
from scripts.common import (
    BENCH_OUT,
    ROOT,
    SUBJECTS,
    Stopwatch,
    add_data_option,
    data_root,
    flatten,
    labeled_bios,
    log,
    results_record,
    write_results,
)

TAG = "veto-precision"
LABELS = ("S", "NS", "IR")


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m scripts.bench_veto_precision",
                                 description=__doc__.split("\n\n")[0])  # fmt: skip
    add_data_option(ap)
    ap.add_argument("--index", type=Path, default=ROOT / "dev-index", help="the dev index")
    add_cache_options(ap, BENCH_OUT / "veto-precision-cache.db")
    ap.add_argument("--lm", default=None, help="LM (default: the embedded 1.5B)")
    ap.add_argument("--examples", type=Path, default=None,
                    help="write the vetoed S facts here (JSON lines)")  # fmt: skip
    ap.add_argument("--results", default="veto-precision-slice", help="results file name")
    ap.add_argument("--results-out", type=Path, default=None,
                    help="write the results file here (the checker's replay)")  # fmt: skip
    return ap.parse_args(argv)


def verify(args, queries):
    """The default rule's results of (title, topic, fact) queries."""
    from factscore_local.config import build_config
    from factscore_local.pipeline.estimator import Estimator

    config = build_config({"index": args.index, "lm": args.lm, "cache": args.cache,
                           "evidence": "page", "use_atomic_facts": True, "gamma": 0})  # fmt: skip
    log(TAG, f"{config.verifier}: {len(queries)} human facts")
    return config.verifier, Estimator(config).verify(queries)


def veto_figures(labels: list[str], raised: dict[str, np.ndarray], decisive: np.ndarray) -> dict:
    """Per kind of veto (and all together): its vetoes by label and its precision, over
    all its vetoes and over those that decide.

    Example:
        >>> f = veto_figures(["S", "NS", "NS"], {"year": np.array([1, 1, 0], bool)},
        ...                  np.array([True, False, True]))
        >>> f["year"]["vetoes"], f["year"]["precision"], f["all"]["on_S"]
        (2, 50.0, 1)
    """
    labels = np.asarray(labels)
    kinds = {**raised, "all": np.logical_or.reduce(list(raised.values()))}
    out = {}
    for kind, on in kinds.items():
        entry: dict = {"vetoes": int(on.sum())}
        for label in LABELS:
            entry[f"on_{label}"] = int((on & (labels == label)).sum())
        entry["precision"] = _share(on.sum() - entry["on_S"], on.sum())
        deciding = on & decisive
        entry["deciding"] = int(deciding.sum())
        entry["deciding_on_S"] = int((deciding & (labels == "S")).sum())
        entry["deciding_precision"] = _share(deciding.sum() - entry["deciding_on_S"],
                                             deciding.sum())  # fmt: skip
        out[kind] = entry
    return out


def _share(part, whole) -> float | None:
    return round(100 * float(part) / float(whole), 1) if whole else None


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    watch = Stopwatch()
    from factscore_local.index.reader import KnowledgeSource

    bios = labeled_bios(data_root(args.data), SUBJECTS, responding=True)
    facts = [(s, b.topic, f.text, f.label) for s in SUBJECTS for b in bios[s]
             for f in human_facts(b.annotations)]  # fmt: skip
    ks = KnowledgeSource(args.index)
    titles = {t: ks.resolve_title(t).title for t in {f[1] for f in facts}}
    seed_cache(args.cache, args.seed_cache, TAG)
    before = model_results(args.cache)
    with watch("facts"):
        default, results = verify(args, [(titles[t], t, text) for _, t, text, _ in facts])
    computed = model_results(args.cache) - before
    verifier_name, thresholds = shipped_rules(args.lm)[legacy_name(default)]
    verifier = get_verifier(verifier_name)
    values = with_slot_flags(signal_arrays(results))
    raised = {v.removesuffix("_conflict"): feature_values(v, values) >= 1
              for v in verifier.rule.vetoes}  # fmt: skip
    # the score without the vetoes: a veto decides where the score alone would accept
    scores = rule_score(values, thresholds.weights, verifier.rule.features)
    report = {"vetoes": veto_figures([f[3] for f in facts], raised, scores > 0),
              "human_facts": len(facts), "model_results_computed": computed}  # fmt: skip
    per_subject = collections.defaultdict(list)
    for i, (subject, *_) in enumerate(facts):
        per_subject[subject].append(i)
    report["subjects"] = {s: veto_figures([facts[i][3] for i in idx],
                                          {k: v[idx] for k, v in raised.items()},
                                          (scores > 0)[idx])["all"]
                          for s, idx in per_subject.items()}  # fmt: skip
    if args.examples:
        vetoed = np.logical_or.reduce(list(raised.values()))
        rows = [{"subject": s, "topic": t, "fact": text, "reason": r.reason}
                for (s, t, text, label), r, on in zip(facts, results, vetoed, strict=True)
                if on and label == "S"]  # fmt: skip
        args.examples.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n"
                                         for r in rows), "utf-8")  # fmt: skip
    print(json.dumps(report, indent=1))
    data = {"labeled": "factscore/labeled-dev (human atomic facts)", "index": "dev-index",
            "default_verifier": default, "vetoes": list(verifier.rule.vetoes)}  # fmt: skip
    columns = [{"head": h, "cell": "{" + k + "}"} for h, k in (
        ("vetoes", "vetoes"), ("on S", "on_S"), ("on NS", "on_NS"), ("on IR", "on_IR"),
        ("precision (%)", "precision"), ("deciding", "deciding"),
        ("deciding on S", "deciding_on_S"),
        ("deciding precision (%)", "deciding_precision"))]  # fmt: skip
    tables = [{"title": "The default's slot vetoes on the human facts, by kind",
               "prefix": "vetoes", "rows_head": "veto", "columns": columns, "digits": 1},
              {"title": "All vetoes, by subject", "prefix": "subjects", "rows_head": "subject",
               "columns": columns, "digits": 1}]  # fmt: skip
    record = results_record(args.results, "scripts.bench_veto_precision", argv, data,
                            flatten(report), watch, report=report, tables=tables,
                            computed=computed)  # fmt: skip
    log(TAG, f"wrote {write_results(record, args.results_out)}")


if __name__ == "__main__":
    main()
