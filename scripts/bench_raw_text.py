"""The FActScore a user gets: from raw text through the project's own decomposition, beside
the paper's setting (InstructGPT's ``model-atomic-facts``), on the dev bios (issue 47).

    python -m scripts.bench_raw_text --index dev-index --topics 98 \\
        --cache bench-out/raw-text-bench.db \\
        --seed-cache scripts/cache/dev-tables-98.jsonl.gz \\
        --seed-cache scripts/cache/rivals-98.jsonl.gz \\
        --seed-cache scripts/cache/own-decomp-98.jsonl.gz \\
        --seed-cache scripts/cache/raw-text-98-part1.jsonl.gz ... --results raw-text-98

Two runs of the estimator over the same bios, every model result from the cache:

- the tables' main pass (``scripts.tables``: page evidence, model atomic facts and the
  human atomic facts, the rivals rule's signals), whose human facts fit the rule;
- the raw-text pass: each output cleaned, split and decomposed by the embedded 1.5B model
  (the committed ``own-decomp-98`` generations), its facts verified with the defaults of
  ``fscore eval`` (``scripts/raw_text_run.py`` computed them, hours of 2 cores; its code is
  in git history, ``git show 30ee8ff419c8:scripts/raw_text_run.py``).

The default rule is cross-fitted over the topic halves (its weights fitted on the other
half's human facts, ER objective, as in the tables) and decides both. Per subject: ER, the
bio-level mean absolute error and facts per response, from raw text and from the model
atomic facts of the same run; for the raw text, also the facts that carry markup
(citation markers, URLs: the cleaning's forms) and how many of them are judged supported
beside the others, and the facts set aside as not standing alone (``pipeline/standalone.py``;
``--no-standalone`` verifies them too). ``--rule`` measures another fitted rule the same way.
``--fresh-generations`` seeds everything but the generations, so the decomposition is
made again by the generator of the commit that runs it (a change of its batching or
schedule measured on all bios; facts written as before are not verified again). Such a
run takes hours of 2 cores; one interrupted resumes from what it exported
(``--resume-cache``: its generations, which no seed may hold, seeded as they are).

"raw text, calibrated" is the raw-text path's own calibration (issue 47): the same
cross-fitted rule with its bias shifted by the amount that minimises the sum of the three
subjects' ER on the other half's raw-text bios (own facts, the humans' bio scores; one
shift for all subjects, since a user's text has no subject label). Figures of each half
apart tell whether it wins on both.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np

from factscore_local.declarations.verifiers import RIVALS_RULE, legacy_name
from factscore_local.fitted_defaults import default_rule, shipped_rule
from factscore_local.labels.calibration import apply_thresholds, settings_thresholds
from factscore_local.labels.crossfit import crossfit, repeated_crossfit, spread_figures
from factscore_local.labels.validation import topic_half, validate_rows
from factscore_local.pipeline.records.labeled import human_bio_score
from factscore_local.pipeline.records.rows import BioRow, HumanSide
from scripts.caches import add_cache_options, model_results, seed_cache
from scripts.common import (
    RESULTS,
    SUBJECTS,
    Stopwatch,
    add_data_option,
    data_root,
    read_results,
    results_record,
    write_results,
)
from scripts.tables.runner import Runner, per_half

SHIFTS = np.round(np.arange(-3.0, 3.001, 0.1), 2)  # of the rule's bias, searched


def er_sum(rows: list[BioRow]) -> float:
    """The three subjects' ER added up (what the raw-text shift minimises)."""
    subjects = (validate_rows(rows, bootstrap=0) or {}).get("subjects", {})
    return sum(subjects[s]["error_rate"] for s in SUBJECTS if s in subjects)


def shifted(thresholds, shift: float):
    """The rule's thresholds with its bias moved by ``shift``."""
    bias, *rest = thresholds.weights
    return replace(thresholds, weights=(bias + shift, *rest))


def best_shift(rows: list[BioRow], rule: str, thresholds) -> float:
    """The shift of the rule's bias that minimises the three subjects' summed ER on these
    raw-text rows (the smallest one on a tie)."""
    return float(min(SHIFTS, key=lambda d: (
        er_sum(apply_thresholds(rows, rule, shifted(thresholds, d), 0)), abs(d))))  # fmt: skip


def crossfit_shifted(own: list[BioRow], rule: str, fitted: list[dict]):
    """Raw-text rows of each topic half decided by the rule fitted on the other half's human
    facts (``fitted``: ``crossfit``'s settings for these rows, half by half), its bias
    shifted to minimise the other half's raw-text ER; with the shifts."""
    out, shifts = [], []
    halves = [h for h in (0, 1) if any(topic_half(r.topic) == h for r in own)]
    for half, settings in zip(halves, fitted, strict=True):
        test = [r for r in own if topic_half(r.topic) == half]
        train = [r for r in own if topic_half(r.topic) != half]
        if not train:
            continue
        base = settings_thresholds(settings)
        best = best_shift(train, rule, base)
        shifts.append(best)
        out += apply_thresholds(test, rule, shifted(base, best), 0)
    return out, shifts


def shipped_shift(own: list[BioRow], rule: str, lm: str | None) -> float | None:
    """The bias shift for the weights shipped for the LM (fitted on every topic's human
    facts): the one that minimises the three subjects' raw-text ER on every topic. What
    ``fscore ship-rule --raw-text`` ships if the cross-fitted shift wins; None when no
    weights are shipped for the rule."""
    from factscore_local.declarations.verifiers import Thresholds

    shipped = shipped_rule(lm, rule)
    weights = shipped.settings.get("rule_weights") if shipped else None
    if not weights:
        return None
    return best_shift(own, rule, Thresholds(0.0, 0.3, tuple(weights)))


def calibration_wins(base: dict, calibrated: dict) -> bool:
    """Whether the calibrated raw-text estimate has a lower ER than the uncalibrated one on
    both topic halves for every subject (``per_half`` of each); F1 does not apply, as
    the own facts carry no human labels."""
    return all(
        calibrated[half][s]["er"] < base[half][s]["er"] for half in ("0", "1") for s in SUBJECTS
    )


def with_human_scores(rows: list[BioRow], bios) -> list[BioRow]:
    """Raw-text rows with the humans' score of their bio (no human facts: ER and the
    bio-level error need the score alone)."""
    labeled = {(b.source, b.line): b for b in bios}
    out = []
    for row in rows:
        bio = labeled[(row.source, row.line)]
        if bio.annotations is None:  # the humans' file says the LM abstained
            out.append(replace(row, human=HumanSide(None, 0, ())))
            continue
        score, n_facts = human_bio_score(bio.annotations)
        out.append(replace(row, human=HumanSide(score, n_facts, ())))
    return out


def subject_figures(rows: list[BioRow]) -> dict:
    from factscore_local.labels.validation import subject_name, validate_rows

    v = validate_rows(rows, bootstrap=1000)
    out = {}
    for subject in SUBJECTS:
        s = v["subjects"][subject]
        facts = [len(r.decisions) for r in rows
                 if subject_name(r.source) == subject and r.responded]  # fmt: skip
        out[subject] = {
            "human": s["er_human_score"],
            "estimated": s["er_estimated_score"],
            "er": s["error_rate"],
            "er_low": s["error_rate_ci95"][0],
            "er_high": s["error_rate_ci95"][1],
            "bio_mae": s["bio_mae"],
            "facts_per_response": round(float(np.mean(facts)), 1) if facts else None,
            "bios": s["n_er_bios"],
        }
    return out


def put(figures: dict, name: str, per_subject: dict) -> None:
    """Adds ``{subject: {key: value}}`` to the figures as ``name/subject/key``."""
    for subject, values in per_subject.items():
        for key, value in values.items():
            figures[f"{name}/{subject}/{key}"] = value


def baseline_change(figures: dict, baseline: str, allowed: float = 0.5) -> dict:
    """This run's raw-text ER beside the one of the results file ``baseline`` (another
    generator's, say), per subject: the change in points (positive: worse), and whether every
    subject stays within ``allowed`` points of it (issue 64's condition for a faster
    decomposition)."""
    recorded = read_results(RESULTS / f"{baseline}.json")["figures"]
    change = {
        s: round(figures[f"raw text/{s}/er"] - recorded[f"raw text/{s}/er"], 2) for s in SUBJECTS
    }
    out = {f"raw text minus {baseline}/{s}/er": change[s] for s in SUBJECTS}
    out[f"raw text minus {baseline}/worse by at most {allowed} on every subject"] = int(
        max(change.values()) <= allowed
    )
    return out


def decomposition(no_clean: bool, no_standalone: bool) -> str:
    """The own facts' path, as the results file describes it."""
    text = ("the outputs as written (scripts/cache/own-decomp-98)" if no_clean
            else "the outputs cleaned of markup (pipeline/clean.py)")  # fmt: skip
    if not no_standalone:
        text += ", facts that do not stand alone set aside (pipeline/standalone.py)"
    return text


def set_aside_figures(rows: list[BioRow]) -> dict:
    """Per subject, the own facts set aside as not standing alone, by reason."""
    from factscore_local.labels.validation import subject_name

    out = {s: {"set_aside_meta": 0, "set_aside_dangling": 0} for s in SUBJECTS}
    for row in rows:
        for _, reason in row.set_aside:
            out[subject_name(row.source)][f"set_aside_{reason}"] += 1
    return out


def markup_figures(rows: list[BioRow]) -> dict:
    """Per subject, the facts that carry markup (a citation marker, a footnote mark, a URL,
    markdown; ``pipeline/clean.py``'s forms) and the share of them judged supported beside
    the share of the other facts: why a subject's raw-text estimate falls short."""
    from factscore_local.labels.validation import subject_name
    from factscore_local.pipeline.decomposition.clean import clean_generation

    judged = {s: ([], []) for s in SUBJECTS}  # subject -> (with markup, without)
    for row in rows:
        if row.responded and subject_name(row.source) in judged:
            marked, plain = judged[subject_name(row.source)]
            for d in row.decisions:
                (marked if clean_generation(d.atom).changed else plain).append(d.is_supported)
    out = {}
    for subject, (marked, plain) in judged.items():
        out[subject] = {
            "facts_with_markup": len(marked),
            "supported_with_markup": round(100 * float(np.mean(marked)), 1) if marked else None,
            "supported_without_markup": round(100 * float(np.mean(plain)), 1) if plain else None,
        }
    return out


def main(argv: list[str] | None = None) -> None:
    import sys

    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    add_cache_options(ap, Path("bench-out/raw-text-bench.db"))
    add_data_option(ap)
    ap.add_argument("--lm", default=None)
    ap.add_argument("--topics", type=int, default=98)
    ap.add_argument(
        "--rule",
        default=None,
        help="default: the LM's shipped default rule "
        "(the embedded 1.5B model's where the LM ships none)",
    )
    ap.add_argument(
        "--no-clean",
        action="store_true",
        help="decompose the outputs as written (the committed own-decomp-98)",
    )
    ap.add_argument(
        "--no-standalone",
        action="store_true",
        help="verify every own fact, also those that do not stand alone",
    )
    ap.add_argument(
        "--fresh-generations",
        action="store_true",
        help="seed every model result but the generations: the decomposition is made again "
        "by this commit's generator (its batching, prefixes and schedule), the facts it "
        "writes as before are not verified again",
    )
    ap.add_argument(
        "--resume-cache",
        type=Path,
        action="append",
        default=[],
        help="with --fresh-generations: results an interrupted run of it exported (fscore "
        "cache export --exclude SEEDS), generations included, seeded as they are "
        "(repeatable)",
    )
    ap.add_argument("--repeats", type=int, default=0, help="also cross-fit over this many "
                    "random topic halvings (each subject's mean and spread)")  # fmt: skip
    ap.add_argument(
        "--baseline",
        default=None,
        help="a results file's NAME (scripts/results/NAME.json, e.g. raw-text-98): the change "
        "of each subject's raw-text ER against it is added to the figures",
    )
    ap.add_argument("--results", default=None, help="write scripts/results/NAME.json")
    ap.add_argument("--results-out", type=Path, default=None)
    args = ap.parse_args(argv)
    args.rule = args.rule or legacy_name(default_rule(args.lm) or default_rule(None))
    watch = Stopwatch()
    skip = ("generate",) if args.fresh_generations else ()
    seed_cache(args.cache, args.seed_cache, "raw-text", skip_kinds=skip)
    seed_cache(args.cache, args.resume_cache, "raw-text")  # this run's own, interrupted
    stored = model_results(args.cache)  # what the run adds beyond it, it computed
    data = data_root(args.data)
    run = Runner(args.index, args.cache, data, args.lm, None, "page")
    bios = run.bios(args.topics)
    with watch("model atomic facts"):
        main_rows = run.rows("model atomic facts", bios, verifier=RIVALS_RULE)
    with watch("raw text"):
        own = run.rows("raw text", bios, use_atomic_facts=False, validate=False,
                       evidence="auto", chunk_bios=3, clean=not args.no_clean,
                       standalone=not args.no_standalone)  # fmt: skip
    own = with_human_scores(own, bios)
    figures: dict = {}
    fitted_all, decided_rows = {}, {}
    for name, rows in (("raw text", own), ("model atomic facts", main_rows)):
        decided, fitted = crossfit(main_rows, rows, args.rule, "er")
        fitted_all[name], decided_rows[name] = fitted, decided
        put(figures, name, subject_figures(decided))
        if args.repeats:  # the same over random topic halvings
            spread = repeated_crossfit(main_rows, rows, args.rule, "er", args.repeats)
            figures.update(spread_figures(spread, f"{name}/repeated"))
    calibrated, shifts = crossfit_shifted(own, args.rule, fitted_all["raw text"])
    fitted_all["raw text, calibrated (bias shift per half)"] = shifts
    decided_rows["raw text, calibrated"] = calibrated
    put(figures, "raw text, calibrated", subject_figures(calibrated))
    halves = {name: per_half(decided_rows[name]) for name in ("raw text", "raw text, calibrated")}
    for name, by_half in halves.items():
        for half, subjects in by_half.items():
            for subject, values in subjects.items():
                figures[f"{name}/half {half}/{subject}/er"] = values["er"]
    won = calibration_wins(halves["raw text"], halves["raw text, calibrated"])
    figures["raw text, calibrated/wins on both halves for every subject"] = int(won)
    figures["raw text, calibrated/shift for the shipped weights"] = shipped_shift(
        own, args.rule, args.lm
    )
    put(figures, "raw text", markup_figures(decided_rows["raw text"]))
    put(figures, "raw text", set_aside_figures(own))
    for subject in SUBJECTS:
        figures[f"raw text minus atomic facts/{subject}/er"] = round(
            figures[f"raw text/{subject}/er"] - figures[f"model atomic facts/{subject}/er"], 2
        )
    if args.baseline:
        figures.update(baseline_change(figures, args.baseline))
    # (the per-pass misses also count the model file's digest, which no cache exports)
    misses = {name: t["computed"] for name, t in run.timings.items()}
    print("\n".join(f"{k}: {v}" for k, v in figures.items()))
    if args.results or args.results_out:
        record = results_record(
            args.results or "raw-text",
            "scripts.bench_raw_text",
            argv,
            {
                "labeled": "factscore/labeled-dev (all three subjects)",
                "topics": args.topics,
                "bios": len(bios),
                "rule": args.rule,
                "objective": "er",
                "decomposition": decomposition(args.no_clean, args.no_standalone),
                **({"baseline": args.baseline} if args.baseline else {}),
                "generations": generations_source(args.fresh_generations, args.resume_cache),
                "cross_fitted_weights": fitted_all,
            },
            figures,
            watch,
            computed=model_results(args.cache) - stored,
            cache_misses=misses,
        )
        write_results(record, args.results_out)


def generations_source(fresh: bool, resumed: list[Path]) -> str:
    """Where the record's generations came from, for its ``data``."""
    if not fresh:
        return "from the seeded caches where present"
    if not resumed:
        return "made by this run (seeded results but the generations)"
    return (
        "made by this commit's generator (seeded results but the generations): read back "
        f"from {len(resumed)} --resume-cache file(s) an interrupted run of it exported, "
        "the rest made by this run"
    )


if __name__ == "__main__":
    main()
