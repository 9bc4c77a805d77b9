"""Ship a fitted rule's weights for an embedded model: an entry of data/model-defaults.json
written from a ``fscore calibrate`` settings file and the tables' results, not by hand.

Examples:
    python -m scripts.ship_rule --settings bench-out/veto-98.json --tables tables-98 \\
        --why "..." --fitted-with "fscore calibrate ..." --default
    python -m scripts.ship_rule --raw-text raw-text-98

``--raw-text`` ships the raw-text bias shift of the model's default rule from the results of
``scripts.bench_raw_text``, and refuses unless its cross-fitted shift won on both topic
halves for every subject.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from factscore_local.model_store import DEFAULT_LM
from scripts.common import RESULTS, ROOT, SUBJECTS, read_results

# The checkout's file, which this script writes; fitted_defaults.MODEL_DEFAULTS_PATH reads the
# installed package's copy (the same file in the editable install setup.sh makes).
DEFAULTS_FILE = ROOT / "data" / "model-defaults.json"


def rule_entry(
    settings: dict, tables: dict | None, why: str, fitted_with: str, heads: dict | None = None
) -> dict:
    """The shipped entry: weights and fit from calibrate; the cross-fitted figures from the
    tables and those of the margin at 0 per subject (the embedded 1.5B model's), or, from a
    ``bench_heads`` record (``heads``), the rule's and the default's it replaces."""
    rule = settings["verifier"]
    if heads is not None:  # the heads' record measured the model's previous default beside it
        figures = {
            "cross_fitted": heads_cross_fitted(heads, rule),
            "replaces": heads_cross_fitted(heads, heads["levers"]["default"]["verifier"]),
        }
    else:
        f = tables["figures"]

        def per_subject(prefix: str, figure: str, digits: int) -> list[float]:
            return [round(f[f"{prefix}/{s}/{figure}"], digits) for s in SUBJECTS]

        figures = {
            "cross_fitted": {
                "error_rate": per_subject(f"{rule}/cross-fitted", "er", 2),
                "f1_micro": per_subject(f"{rule}/cross-fitted", "f1", 2),
                "subjects": list(SUBJECTS),
            },
            "at_margin_0": {
                "error_rate": per_subject("retrieve-lm/default", "er", 1),
                "f1_micro": per_subject("retrieve-lm/default", "f1", 1),
            },
        }
    return {
        "rule_weights": settings["rule_weights"],
        "why": why,
        "fitted_with": fitted_with,
        "fit": settings["fit"],
        **figures,
    }


def heads_cross_fitted(heads: dict, verifier: str) -> dict:
    """The cross-fitted figures of a rule from a ``bench_heads`` results record (a head
    rule's with its logistic head, as shipped; or the rule without the head's); an error
    unless it won on both halves for every subject over the model's default."""
    levers = {lever["verifier"]: name for name, lever in heads["levers"].items()
              if "verifier" in lever and ("(logistic)" in name or "(" not in name)}  # fmt: skip
    name = levers.get(verifier)
    if name is None:
        raise SystemExit(f"{heads['name']} measured no {verifier}")
    lever = heads["levers"][name]
    if name != "default" and not lever.get("wins_everywhere", False):
        raise SystemExit(f"{heads['name']}: {name} does not win on both halves for every "
                         "subject; nothing shipped")  # fmt: skip
    subjects = lever["subjects"]
    return {
        "error_rate": [round(subjects[s]["er"], 2) for s in SUBJECTS],
        "f1_micro": [round(subjects[s]["f1"], 2) for s in SUBJECTS],
        "subjects": list(SUBJECTS),
        "from": f"{heads['name']} ({name})",
    }


def raw_text_entry(results: dict) -> dict:
    """The shift and its provenance from a ``bench_raw_text`` results record; an error unless
    the cross-fitted shift won on both halves for every subject."""
    f = results["figures"]
    if not f.get("raw text, calibrated/wins on both halves for every subject"):
        raise SystemExit(f"{results['name']}: the raw-text shift does not win on both halves "
                         "for every subject; nothing shipped")  # fmt: skip
    shift = f["raw text, calibrated/shift for the shipped weights"]
    if shift is None:
        raise SystemExit(f"{results['name']}: no shift for the shipped weights")
    return {
        "raw_text_shift": shift,
        "raw_text_fitted_with": f"{results['command']} (commit {results['commit']})",
    }


def write_defaults(table: dict) -> None:
    DEFAULTS_FILE.write_text(json.dumps(table, indent=2, ensure_ascii=False) + "\n", "utf-8")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--settings", type=Path, help="fscore calibrate's output")
    what.add_argument("--raw-text", help="a bench_raw_text results file name")
    ap.add_argument("--tables", default="tables-98", help="the tables' results file name")
    ap.add_argument("--heads", default=None,
                    help="a bench_heads results file: the cross-fitted figures of a rule it "
                    "measured (refused unless it won everywhere)")  # fmt: skip
    ap.add_argument("--lm", default=DEFAULT_LM)
    ap.add_argument("--why")
    ap.add_argument("--fitted-with")
    ap.add_argument("--default", action="store_true", help="make it the model's default")
    args = ap.parse_args(argv)
    table = json.loads(DEFAULTS_FILE.read_text("utf-8"))
    model = table[args.lm]
    if args.raw_text:
        results = read_results(RESULTS / f"{args.raw_text}.json")
        rule = results["data"]["rule"]
        model["rules"][rule].update(raw_text_entry(results))
        write_defaults(table)
        print(f"{args.lm}: raw-text shift of {rule} shipped")
        return
    if not (args.why and args.fitted_with):
        ap.error("--settings needs --why and --fitted-with")
    settings = json.loads(args.settings.read_text("utf-8"))
    heads = read_results(RESULTS / f"{args.heads}.json") if args.heads else None
    tables = None if heads else read_results(RESULTS / f"{args.tables}.json")
    entry = rule_entry(settings, tables, args.why, args.fitted_with, heads)
    model.setdefault("rules", {})[settings["verifier"]] = entry
    if args.default:
        model["verifier"] = settings["verifier"]
    write_defaults(table)
    print(
        f"{args.lm}: {settings['verifier']} shipped" + (" as the default" if args.default else "")
    )


if __name__ == "__main__":
    main()
