"""Tables 3 and 9 for every verifier."""

from __future__ import annotations

from factscore_local.declarations.verifiers import (
    ALL_SIGNALS_RULE,
    CANDIDATE_RULES,
    NUMBER_VETO_RULE,
    NUMBER_YEAR_VETO_RULE,
    PLACE_VETO_RULE,
    RIVALS_RULE,
    SLOT_VETO_RULE,
    Thresholds,
    get_verifier,
    legacy_name,
)
from factscore_local.fitted_defaults import default_rule
from factscore_local.labels.calibration import apply_thresholds
from factscore_local.pipeline.records.inputs import Bio
from factscore_local.pipeline.records.rows import BioRow
from scripts.tables.markdown import md_intervals, md_page_length, md_results
from scripts.tables.runner import (
    COVERAGE_RULE,
    SLOTS_RULE,
    Runner,
    auc,
    default_and_crossfit,
    figures,
    label_recall,
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
    # With --candidates, as the rule that also reads the candidates' lead.
    fitted_rules = FITTED_RULES + (CANDIDATE_RULES if args.candidates else ())
    main_rows = run.rows("retrieve-lm+np", bios,
                         verifier=ALL_SIGNALS_RULE if args.candidates else RIVALS_RULE,
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
            run.page_size if get_verifier(name).judges_passages else None,
            run.rows_dir,
            halves=name in fitted_rules,
            repeats=args.repeats if name == legacy_name(default_rule(args.lm) or "default") else 0,
        )
        for name, rows in (
            *([] if nc is None else [("no-context-lm", nc)]),
            ("np", main_rows),
            ("retrieve-lm", main_rows),
            ("retrieve-lm+np", main_rows),
            ("retrieve-lm+np-fitted", main_rows),
            *((rule, main_rows) for rule in fitted_rules),
        )
    }
    report["auc_coverage"] = auc(main_rows, "coverage")
    report["page_length"] = {
        v: report["verifiers"][v]["page_length"]
        for v in (
            "retrieve-lm",
            "retrieve-lm+np",
            "retrieve-lm+np-fitted",
            *fitted_rules,
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
