"""Tables 3 and 9 for every verifier, and the evidence modes on long pages."""

from __future__ import annotations

import time

import numpy as np

from factscore_local.config import build_config
from factscore_local.declarations.evidence import EVIDENCE_MODES
from factscore_local.declarations.verifiers import (
    NUMBER_VETO_RULE,
    NUMBER_YEAR_VETO_RULE,
    PLACE_VETO_RULE,
    RIVALS_RULE,
    SLOT_VETO_RULE,
    Thresholds,
)
from factscore_local.labels.calibration import apply_thresholds
from factscore_local.pipeline.records.inputs import Bio
from factscore_local.pipeline.records.rows import BioRow
from factscore_local.studies import verify_facts
from scripts.common import SUBJECTS, labeled_bios
from scripts.common import auc as auc_of_values
from scripts.tables.markdown import md_intervals, md_page_length, md_results
from scripts.tables.runner import (
    COVERAGE_RULE,
    LONG_PAGE,
    SLOTS_RULE,
    Runner,
    auc,
    default_and_crossfit,
    figures,
    label_recall,
    log,
)

# The fitted rules over the coverage, measured per topic half too, in the tables' order.
FITTED_RULES = (
    COVERAGE_RULE,
    SLOTS_RULE,
    NUMBER_VETO_RULE,
    NUMBER_YEAR_VETO_RULE,
    SLOT_VETO_RULE,
    PLACE_VETO_RULE,
    RIVALS_RULE,
)


def section_tables_3_9(report: dict, run: Runner, bios: list[Bio], args) -> list[BioRow]:
    """Tables 3 and 9 for every verifier; returns the rows of the main run."""
    results: list[tuple[str, str, dict]] = []
    for verifier in ("always-supported", "always-not-supported", "random"):
        results.append((verifier, "-", figures(run.rows(verifier, bios, verifier=verifier))))
    report["baselines"] = {name: f for name, _, f in results}
    # One run records the margin and NP of every fact: retrieve-lm, np and the ensemble
    # are its decisions under different thresholds.
    # (Run as the rivals rule, unfitted: the ensemble's decisions, and every fact's
    # lexical coverage, slot check and rival lead recorded with its margin and NP.)
    main_rows = run.rows("retrieve-lm+np", bios, verifier=RIVALS_RULE,
                         np_model=args.np_model)  # fmt: skip
    # The no-context LM is a pass of its own (~0.3 s a fact): "--skip no-context" leaves it out.
    nc = None if "no-context" in args.skip else run.rows("no-context-lm", bios,
                                                         verifier="no-context-lm")  # fmt: skip
    report["np_model"] = args.np_model
    report["auc_margin"] = auc(main_rows, "margin")
    report["auc_margin_no_context"] = None if nc is None else auc(nc, "margin")
    report["auc_np"] = auc(main_rows, "np")
    report["label_recall_retrieve_lm"] = label_recall(
        apply_thresholds(main_rows, "retrieve-lm", Thresholds(0.0, 0.0), 0)
    )
    # The retrieved-evidence verifiers are also split by page length.
    report["verifiers"] = {
        name: default_and_crossfit(
            results,
            name,
            rows,
            name,
            args.objective,
            args.np_model,
            run.page_size if name.startswith("retrieve-lm") else None,
            run.rows_dir,
            halves=name in FITTED_RULES,
        )
        for name, rows in (
            *([] if nc is None else [("no-context-lm", nc)]),
            ("np", main_rows),
            ("retrieve-lm", main_rows),
            ("retrieve-lm+np", main_rows),
            ("retrieve-lm+np-fitted", main_rows),
            *((rule, main_rows) for rule in FITTED_RULES),
        )
    }
    report["auc_coverage"] = auc(main_rows, "coverage")
    report["page_length"] = {
        v: report["verifiers"][v]["page_length"]
        for v in (
            "retrieve-lm",
            "retrieve-lm+np",
            "retrieve-lm+np-fitted",
            *FITTED_RULES,
        )
    }
    print(f"## Tables 3 and 9 (first {args.topics} dev topics, model-atomic-facts for ER, "
          "human atomic facts for F1)\n\n" + md_results(results) + "\n")  # fmt: skip
    print(md_intervals(results) + "\n")
    print(f"AUC (human S vs not S) of the margin: {report['auc_margin']} (no-context: "
          f"{report['auc_margin_no_context']}); of NP ({args.np_model}): "
          f"{report['auc_np']}; of the lexical coverage: {report['auc_coverage']}\n")  # fmt: skip
    print(md_page_length(report["page_length"]))
    print("Human facts decided right by retrieve-lm at margin 0, per label (%): " + "; ".join(
        f"{s} " + ", ".join(f"{k} {v}" for k, v in c.items())
        for s, c in report["label_recall_retrieve_lm"].items()) + "\n")  # fmt: skip
    return main_rows


def long_page_bios(run: Runner, n: int) -> list[Bio]:
    """n labeled bios whose page has more than LONG_PAGE passages, taken round-robin over
    the frequency classes and the subjects (the topic order's classes, both halves)."""
    long_topics = [t for t in run.topic_order if run.page_size[t] > LONG_PAGE]
    by_subject = {s: {b.topic: b for b in bios} for s, bios in labeled_bios(run.data).items()}
    out = []
    for i, topic in enumerate(long_topics):
        bio = by_subject[SUBJECTS[i % len(SUBJECTS)]].get(topic)
        if bio is not None and bio.annotations:
            out.append(bio)
        if len(out) == n:
            break
    return out


def section_evidence_modes(report: dict, run: Runner, args) -> None:
    """Per-fact top-k (the paper's procedure) against shared evidence on long pages, where
    the two differ (on a page of at most k passages both see the whole page). Shared
    evidence runs on every fact of the bios, as it would in use; the per-fact procedure,
    ~15 s a fact there, on an even sample of each bio's human facts. Both are compared on
    that sample: AUC of the margin (human S vs not S), agreement with the humans at margin
    0, and seconds per fact."""
    from factscore_local.pipeline.records.labeled import human_facts, model_facts
    from factscore_local.pipeline.signals.compute import FactQuery

    bios = long_page_bios(run, args.evidence_bios)
    sample, everything, all_human = [], [], []
    for bio in bios:
        title, group = bio.topic, f"{bio.source}:{bio.line}"
        model = [FactQuery(title, bio.topic, a, group) for _, a in model_facts(bio.annotations)]
        human = human_facts(bio.annotations)
        picked = [human[i * len(human) // args.evidence_sample]
                  for i in range(min(args.evidence_sample, len(human)))]  # fmt: skip
        everything += model + [FactQuery(title, bio.topic, f.text, group, 1) for f in human]
        all_human += [(FactQuery(title, bio.topic, f.text, group, 1), f.label) for f in human]
        sample += [(FactQuery(title, bio.topic, f.text, group, 1), f.label) for f in picked]
    labels = np.asarray([label == "S" for _, label in sample])
    out: dict = {"bios": [b.topic for b in bios], "sample_facts": len(sample)}
    for mode in EVIDENCE_MODES:
        config = build_config({"index": run.index, "lm": run.lm, "cache": run.cache,
                               "evidence": mode})  # fmt: skip
        queries = [q for q, _ in sample] if mode == "per-fact" else everything
        start = time.perf_counter()
        run = verify_facts(config, queries)
        results = run.out
        seconds = time.perf_counter() - start
        by_query = {(q.atom, q.group, q.tier): r for q, r in zip(queries, results, strict=True)}
        margins = np.asarray([by_query[(q.atom, q.group, q.tier)].margin for q, _ in sample])
        out[mode] = {
            "facts_run": len(queries),
            "seconds": round(seconds, 1),
            "computed": run.computed,
            "s_per_fact": round(seconds / len(queries), 3),
            "auc_margin": round(auc_of_values(margins, labels), 4),
            "agreement_at_0": round(100 * float(np.mean((margins > 0) == labels)), 1),
            "blocks": len({r.block for r in results}) if mode != "per-fact" else None,
        }
        if mode != "per-fact":  # every human fact of the bios was run: AUC on all of them
            every = np.asarray([by_query[(q.atom, q.group, q.tier)].margin for q, _ in all_human])
            is_s = np.asarray([label == "S" for _, label in all_human])
            out[mode]["auc_margin_all_human"] = round(auc_of_values(every, is_s), 4)
            out[mode]["human_facts"] = len(all_human)
        log(f"evidence {mode}: {len(queries)} facts in {seconds:.0f} s")
    report["evidence_modes"] = out
    print(f"## Evidence on long pages: per-fact top-k, shared blocks, page segments ({len(bios)} "
          f"bios of pages with more than {LONG_PAGE} passages: {', '.join(out['bios'])}; "
          f"{len(sample)} sampled human facts)\n\n"
          "| mode | facts run | s/fact | AUC of margin (sample) | agreement at 0 (sample) | "
          "AUC of margin (all human facts) | blocks |\n" + "|---" * 7 + "|")  # fmt: skip
    for mode in EVIDENCE_MODES:
        r = out[mode]
        every = f"{r['auc_margin_all_human']} ({r['human_facts']})" if "human_facts" in r else ""
        print(f"| {mode} | {r['facts_run']} | {r['s_per_fact']} | {r['auc_margin']} | "
              f"{r['agreement_at_0']} | {every} | {r['blocks'] or ''} |")  # fmt: skip
    print()
