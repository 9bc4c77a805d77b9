"""Issue 10's prompt levers: each a run of its own on the main tables' bios, against the
main run, per topic half."""

from __future__ import annotations

from factscore_local.labels.validation import wins_on_both_halves
from factscore_local.pipeline.records.rows import BioRow
from scripts.common import SUBJECTS
from scripts.tables.markdown import interval_cell, md_intervals, md_results
from scripts.tables.runner import COVERAGE_RULE, Runner, auc, default_and_crossfit

LEVERS = {
    "verification demos": {"verify_demos": True},
    "fact in its sentence": {"fact_context": "sentence"},
    "both": {"verify_demos": True, "fact_context": "sentence"},
    "no chat template": {"verify_format": "plain"},
    "yes-no question": {"verify_question": "yes-no"},
}


def section_levers(report: dict, run: Runner, main_rows: list[BioRow], args) -> None:
    """Each prompt lever run on the main tables' bios (retrieve-lm+np, default NP), against
    the main run: AUC of the margin, and retrieve-lm / retrieve-lm+np / the fitted rule
    with default and cross-fitted thresholds, all three subjects."""
    bios = run.bios(args.topics)
    out, table = {}, []
    candidates = {"default prompt": main_rows}
    for name in args.levers:
        candidates[name] = run.rows(f"lever {name}", bios, verifier=COVERAGE_RULE,
                                    np_model=args.np_model, **LEVERS[name])  # fmt: skip
    for name, rows in candidates.items():
        out[name] = {"auc_margin": auc(rows, "margin"), "auc_np": auc(rows, "np")}
        for verifier in ("retrieve-lm", "retrieve-lm+np", "retrieve-lm+np-fitted", COVERAGE_RULE):
            out[name][verifier] = default_and_crossfit(
                table,
                f"{verifier}, {name}",
                rows,
                verifier,
                args.objective,
                args.np_model,
                halves=True,
            )
    report["levers"] = out
    print(f"## Prompt levers (first {args.topics} dev topics, all three subjects)\n\n"
          + "AUC of the margin: " + ", ".join(f"{n} {o['auc_margin']}" for n, o in out.items())
          + "\n\n" + md_results(table) + "\n\n" + md_intervals(table) + "\n\n"
          + md_halves(out, COVERAGE_RULE) + "\n\n" + md_levers_summary(out) + "\n")  # fmt: skip


def md_halves(out: dict, verifier: str) -> str:
    """Each candidate's cross-fitted mean ER and F1 on each topic half against the default
    prompt's, under the default verifier; a lever becomes a default only if it wins both."""
    base = out["default prompt"][verifier]["halves"]
    lines = [f"Per topic half ({verifier}, cross-fitted; mean over the three subjects):\n",
             "| prompt | half 0: ER · F1 | half 1: ER · F1 | wins on both halves |",
             "|---|---|---|---|"]  # fmt: skip
    for name, o in out.items():
        halves = o[verifier]["halves"]
        cells = [f"{halves[h][0]:.1f} · {halves[h][1]:.1f}" if h in halves else "" for h in (0, 1)]
        won = "yes" if wins_on_both_halves(halves, base) else "no"
        won = "" if name == "default prompt" else won
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {won} |")
    return "\n".join(lines)


# Issue 10's summary: the decision rules under the default prompt, then each prompt lever
# under the default rule. (label, prompt, verifier)
SUMMARY_ROWS = [
    ("margin alone, fitted threshold", "default prompt", "retrieve-lm"),
    ("margin AND NP, fitted thresholds", "default prompt", "retrieve-lm+np"),
    ("logistic rule: margin, NP", "default prompt", "retrieve-lm+np-fitted"),
    ("**default**: logistic rule + coverage", "default prompt", COVERAGE_RULE),
]


def md_levers_summary(out: dict) -> str:
    """One table of every lever, cross-fitted: ER and F1 with 95% intervals per subject,
    each topic half's means, the margin's AUC, and whether it beats the default on both
    halves (the default: the coverage rule with the default prompt)."""
    rows = SUMMARY_ROWS + [(f"prompt: {name}", name, COVERAGE_RULE)
                           for name in out if name != "default prompt"]  # fmt: skip
    base = out["default prompt"][COVERAGE_RULE]["halves"]
    lines = ["Every lever, cross-fitted (ER [95%] · F1 [95%]):\n",
             "| lever | " + " | ".join(SUBJECTS) + " | half 0: ER · F1 | half 1: ER · F1 "
             "| AUC of the margin | beats the default on both halves |",
             "|---" * (len(SUBJECTS) + 5) + "|"]  # fmt: skip
    for label, prompt, verifier in rows:
        o = out[prompt][verifier]
        cells = [interval_cell(o["calibrated"]["subjects"].get(s)) for s in SUBJECTS]
        halves = o["halves"]
        cells += [f"{halves[h][0]:.1f} · {halves[h][1]:.1f}" if h in halves else "" for h in (0, 1)]
        cells.append(f"{out[prompt]['auc_margin']:.4f}")
        is_base = prompt == "default prompt" and verifier == COVERAGE_RULE
        cells.append("" if is_base else "yes" if wins_on_both_halves(halves, base) else "no")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
