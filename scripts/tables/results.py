"""The tables' report as a results file: what ran on which topics, and its figures as a flat
{name: value} mapping that ``python -m scripts.check`` compares and ``python -m
docs.generate`` renders."""

from __future__ import annotations

from factscore_local.labels.crossfit import spread_figures
from factscore_local.pipeline.records.inputs import Bio
from scripts.common import SUBJECTS

TABLE1_KEYS = ("bios", "responding", "tokens", "sentences", "facts", "S", "NS", "IR",
               "abstains", "factscore")  # fmt: skip
# Per subject and thresholds: the figure's short name -> its key in figures()
CELLS = {"er": "error_rate", "fs": "estimated_score", "f1": "f1_micro", "human": "human_score"}


def tables_data(report: dict, bios: list[Bio]) -> dict:
    """What the tables ran on: the topics (in the run's order), bios and subjects."""
    return {
        "labeled": "factscore/labeled-dev (FActScore's dev split)",
        "subjects": list(SUBJECTS),
        "topics": report["topics"],
        "bios": len(bios),
        "evidence": report.get("evidence"),
        "np_model": report.get("np_model"),
        "topics_used": list(report.get("topics_used", {})),
    }


def _cells(prefix: str, figures: dict, out: dict, intervals: bool = False) -> None:
    for subject, cell in figures["subjects"].items():
        for short, key in CELLS.items():
            out[f"{prefix}/{subject}/{short}"] = cell[key]
        if intervals:
            for short, key in (("er", "error_rate_ci95"), ("f1", "f1_micro_ci95")):
                low, high = cell[key] or (None, None)
                out[f"{prefix}/{subject}/{short}_low"] = low
                out[f"{prefix}/{subject}/{short}_high"] = high


def tables_figures(report: dict) -> dict[str, float | int | bool | None]:
    """The figures of a tables report, flat: ``table1/<subject>/<column>``,
    ``<verifier>/<default|cross-fitted>/<subject>/<er|fs|f1|human>`` (with ``_low`` and
    ``_high`` interval ends for the thresholded verifiers; for the fitted rules compared as
    defaults, ``.../half<0|1>/mean_er|mean_f1``; with ``--repeats``, the default rule's
    ``.../repeated/<subject>/<er_mean|...>``), ``auc/<signal>``, ``.../pages<=5|>5/...``."""
    out: dict = {}
    for subject, row in report["table1"].items():
        for key in TABLE1_KEYS:
            out[f"table1/{subject}/{key}"] = row[key]
    for subject, row in report["ir_convention"].items():
        out[f"always-not-supported/ir-as-ns/{subject}/f1"] = row["ir_as_ns"]
        out[f"always-not-supported/ir-excluded/{subject}/f1"] = row["ir_excluded"]
    for subject, row in report.get("evidence_coverage", {}).items():
        out[f"evidence-coverage/{subject}/mean_word_share"] = row["mean_word_coverage"]
        out[f"evidence-coverage/{subject}/fully_covered"] = row["fully_covered"]
    for name, figures in report.get("baselines", {}).items():
        _cells(f"{name}/-", figures, out)
    for name, verifier in report.get("verifiers", {}).items():
        if "default" in verifier:
            _cells(f"{name}/default", verifier["default"], out, intervals=True)
        _cells(f"{name}/cross-fitted", verifier["calibrated"], out, intervals=True)
        out[f"{name}/cross-fitted/ranking_kept"] = verifier["calibrated"]["ranking_kept"]
        for half, (er, f1) in verifier.get("halves", {}).items():  # what a default compares
            out[f"{name}/cross-fitted/half{half}/mean_er"] = er
            out[f"{name}/cross-fitted/half{half}/mean_f1"] = f1
        out.update(spread_figures(verifier.get("repeated", {}), f"{name}/repeated"))
        for pages, part in verifier.get("page_length", {}).items():
            out[f"{name}/pages{pages}/topics"] = part["topics"]
            for subject, cell in part["subjects"].items():
                out[f"{name}/pages{pages}/{subject}/er"] = cell["error_rate"]
                out[f"{name}/pages{pages}/{subject}/f1"] = cell["f1_micro"]
    for key in ("auc_margin", "auc_margin_no_context", "auc_np", "auc_coverage"):
        if key in report:
            out[f"auc/{key.removeprefix('auc_')}"] = report[key]
    for subject, recall in report.get("label_recall_retrieve_lm", {}).items():
        for label, share in recall.items():
            out[f"retrieve-lm/default/{subject}/right_{label}"] = share
    return out
