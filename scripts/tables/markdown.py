"""The tables' markdown: results rows, bootstrap intervals, the split by page length."""

from __future__ import annotations

from scripts.common import SUBJECTS
from scripts.tables.paper import PAPER_T3, PAPER_T9


def md_page_length(split: dict) -> str:
    lines = ["By page length (cross-fitted thresholds), ER (FS) / F1 per subject:\n",
             "| verifier | pages | topics | " + " | ".join(SUBJECTS) + " |",
             "|---" * (3 + len(SUBJECTS)) + "|"]  # fmt: skip
    for verifier, parts in split.items():
        for name, f in parts.items():
            cells = []
            for s in SUBJECTS:
                r = f["subjects"].get(s)
                cells.append(
                    f"{r['error_rate']:.1f}{r['mark']} ({r['estimated_score']:.1f}) / "
                    f"{r['f1_micro']:.1f}"
                    if r
                    else ""
                )
            lines.append(f"| {verifier} | {name} | {f['topics']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def md_results(results: list[tuple[str, str, dict]]) -> str:
    head = "| evaluator | thresholds | " + " | ".join(f"{s} ER (FS) | {s} F1" for s in SUBJECTS)
    lines = [head + " | ranking | paper ER (FS) / F1 |", "|---" * (2 * len(SUBJECTS) + 4) + "|"]
    for name, thresholds, f in results:
        cells = []
        for s in SUBJECTS:
            r = f["subjects"].get(s)
            if r is None:
                cells += ["", ""]
                continue
            cells.append(f"{r['error_rate']:.1f}{r['mark']} ({r['estimated_score']:.1f})")
            cells.append(f"{r['f1_micro']:.1f}")
        base = name.split(" ")[0]
        paper = ""
        if base in PAPER_T3:
            paper = " · ".join(
                f"{er} ({fs}) / {f1}"
                for (er, fs), f1 in zip(PAPER_T3[base], PAPER_T9[base], strict=True)
            )
        kept = {True: "✓", False: "✗", None: ""}[f["ranking_kept"]]
        lines.append(f"| {name} | {thresholds} | " + " | ".join(cells) + f" | {kept} | {paper} |")
    return "\n".join(lines)


def md_intervals(results: list[tuple[str, str, dict]]) -> str:
    """Bootstrap 95% intervals (bios resampled) of ER and F1 for each thresholded row."""
    lines = ["Bootstrap 95% intervals (bios resampled), ER [low, high] · F1 [low, high]:\n",
             "| evaluator | thresholds | " + " | ".join(SUBJECTS) + " |",
             "|---" * (2 + len(SUBJECTS)) + "|"]  # fmt: skip
    for name, thresholds, f in results:
        if thresholds == "-":  # the trivial baselines
            continue
        cells = [interval_cell(f["subjects"].get(s)) for s in SUBJECTS]
        short = thresholds.split(":")[0]
        lines.append(f"| {name} | {short} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def interval_cell(r: dict | None) -> str:
    """'ER [low, high] · F1 [low, high]' of one subject's figures; '' without intervals."""
    er, f1 = (r or {}).get("error_rate_ci95"), (r or {}).get("f1_micro_ci95")
    if not (er and f1):
        return ""
    return (f"{r['error_rate']:.1f} [{er[0]:.1f}, {er[1]:.1f}] · "
            f"{r['f1_micro']:.1f} [{f1[0]:.1f}, {f1[1]:.1f}]")  # fmt: skip
