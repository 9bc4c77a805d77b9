"""State heads against today's default, cross-fitted over the topic halves of the dev bios
(issue 48).

    python -m scripts.bench_heads --index dev-index --lm qwen2.5-coder-0.5b-instruct-q4_k_m \\
        --cache bench-out/heads-0.5b.db --seed-cache scripts/cache/states-98-0.5b-part1.jsonl.gz \\
        --results heads-98-0.5b --ship data/heads/qwen2.5-coder-0.5b-instruct-q4_k_m.npz

One pass of the estimator over the labeled dev bios, the tables' main pass (page evidence,
the model atomic facts and the human atomic facts), with each margin verdict's hidden state
read (seeded with the exported results, no model runs). Then, per topic half, with no model:

- ``default``: the model's default rule, fitted on the other half (as in the tables);
- ``head rule``: a head trained on the other half's human facts; the head rule
  (``HEAD_RULE``: the default's features and the head's score) fitted on the other half,
  each of its facts scored by a head that did not see its topic (two folds of topics inside
  that half); both then decide this half;
- ``head alone``: the head's log-odds, with a cut fitted on the other half;
- ``rule without head``: the head rule's other features (the 1.5B model's default rule),
  fitted on the other half: what the head itself adds.

For a logistic head and an MLP. Per subject: ER and F1 over all bios and on each half; the
head's AUC on the human facts (every half scored by the other half's head) beside the
margin's. A lever wins only if it lowers ER and raises F1 on both halves for every subject.
``--ship FILE`` writes the head trained on every topic, with what it was fitted on, through
``fscore ship-head``'s function (``factscore_local.cli.ship.ship_head``: checked against
the model); ``fscore ship-head FILE`` then ships it, or ``--ship`` names the shipped path.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from factscore_local.cli.ship import ship_head
from factscore_local.config import build_config, model_name
from factscore_local.declarations.verifiers import (
    FITTED,
    HEAD_RULE,
    PLACE_VETO_RULE,
    Verifier,
    fitted_rule,
    register,
)
from factscore_local.labels.calibration import apply_thresholds, collect, fit, settings_thresholds
from factscore_local.labels.head_calibration import (
    human_states,
    rows_with_states,
    with_head_signal,
    with_held_out_head,
)
from factscore_local.labels.heads import fit_head
from factscore_local.labels.validation import subject_name, topic_half
from factscore_local.pipeline.records.rows import BioRow
from scripts.caches import add_cache_options, model_results, seed_cache
from scripts.common import (
    SUBJECTS,
    Stopwatch,
    add_data_option,
    data_root,
    flatten,
    log,
    results_record,
    write_results,
)
from scripts.tables.runner import Runner, auc, crossfit, figures, per_half

HEAD_ALONE = register(
    Verifier("head-alone-fitted", ("head",), fitted_rule(("head",)), (FITTED,),
             description="the state head's log-odds alone, its cut fitted", features=("head",)),
    replace=True,
).name  # fmt: skip
KINDS = ("logistic", "mlp")


def head_halves(rows: list[BioRow], kind: str, seed: int) -> list[tuple[list, list]]:
    """Per topic half, (the other half's rows, this half's rows) with their head signal: a
    head trained on the other half's human facts scores this half; the other half's own
    facts are scored by heads of two folds of its topics, each blind to the fact's topic."""
    out = []
    for half in (0, 1):
        train = [r for r in rows if topic_half(r.topic) != half]
        test = [r for r in rows if topic_half(r.topic) == half]
        states, supported, topics = human_states(train)
        head = fit_head(states, supported, topics, kind, seed)
        train = with_held_out_head(train, states, supported, topics, kind, seed)
        test = with_head_signal(test, lambda s, t, head=head: head.score(s))
        out.append((train, test))
    return out


def head_crossfit(halves: list[tuple[list, list]], verifier: str) -> list[BioRow]:
    """Each topic half decided by ``verifier`` fitted on the other (``head_halves``)."""
    out = []
    for train, test in halves:
        settings = fit(collect(train), verifier, "er")
        out += apply_thresholds(test, verifier, settings_thresholds(settings), 0)
    return out


def wins_everywhere(lever: dict, base: dict) -> bool:
    """Lower ER and higher F1 than the base on both halves, for every subject."""
    return all(
        lever[h][s]["er"] < base[h][s]["er"] and lever[h][s]["f1"] > base[h][s]["f1"]
        for h in base for s in base[h]
    )  # fmt: skip


def summary(rows: list[BioRow]) -> dict:
    full = figures(rows)["subjects"]
    return {
        "subjects": {
            s: {
                "er": full[s]["error_rate"],
                "f1": full[s]["f1_micro"],
                "precision": full[s]["precision"],
                "recall": full[s]["recall"],
            }
            for s in SUBJECTS
            if s in full
        },  # fmt: skip
        "halves": per_half(rows),
    }


def layout(levers: dict) -> list[dict]:
    """The docs' tables: per lever, each subject's ER, F1, precision and recall (all bios,
    every half decided by what was fitted on the other)."""
    columns = [{"head": k, "cell": "{" + k + "}"} for k in ("er", "f1", "precision", "recall")]
    return [{"title": f"{name} ({lever['verifier']})", "prefix": f"{name}/subjects",
             "rows_head": "subject", "columns": columns}
            for name, lever in levers.items() if "subjects" in lever]  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    add_cache_options(ap, Path("bench-out/heads.db"))
    add_data_option(ap)
    ap.add_argument("--lm", default=None)
    ap.add_argument("--baseline", default=None,
                    help="the verifier the levers are measured against (default: the LM's "
                    "default now; named, a replay keeps it after the default changes)")  # fmt: skip
    ap.add_argument("--topics", type=int, default=98)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--results", default=None, help="results file name (scripts/results/)")
    ap.add_argument("--results-out", type=Path, default=None,
                    help="write the results file here (the checker's replay)")  # fmt: skip
    ap.add_argument("--ship", type=Path, default=None,
                    help="write the head fitted on all here (as fscore ship-head)")  # fmt: skip
    ap.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS),
                    help="the heads measured (the MLP's fits take most of the time)")  # fmt: skip
    argv = sys.argv[1:] if argv is None else argv
    args = ap.parse_args(argv)
    watch = Stopwatch()
    seed_cache(args.cache, args.seed_cache, "heads")
    before = model_results(args.cache)
    run = Runner(args.index, args.cache, data_root(args.data), args.lm, None, "page")
    bios = run.bios(args.topics)
    config = build_config({
        "index": args.index, "lm": args.lm, "cache": args.cache, "gamma": 0,
        "use_atomic_facts": True, "validate": True, "evidence": "page", "chunk_bios": 3,
        "verifier": HEAD_RULE,
    })  # fmt: skip
    default = args.baseline or build_config({"index": args.index, "lm": args.lm}).verifier
    with watch("pass"):
        rows = rows_with_states(config, bios, progress=True)
    out: dict = {"default": {"verifier": default}}
    base_rows, _ = crossfit(rows, rows, default, "er")
    out["default"].update(summary(base_rows))
    # The head rule's features without the head: what the head itself adds.
    no_head, _ = crossfit(rows, rows, PLACE_VETO_RULE, "er")
    out["rule without head"] = {"verifier": PLACE_VETO_RULE, **summary(no_head)}
    out["rule without head"]["wins_everywhere"] = wins_everywhere(
        out["rule without head"]["halves"], out["default"]["halves"]
    )
    out["auc"] = {"margin": auc(rows, "margin")}
    for kind in args.kinds:
        with watch(f"heads ({kind})"):
            halves = head_halves(rows, kind, args.seed)
        for name, verifier in (("head rule", HEAD_RULE), ("head alone", HEAD_ALONE)):
            decided = head_crossfit(halves, verifier)
            lever = {"verifier": verifier, **summary(decided)}
            lever["wins_everywhere"] = wins_everywhere(lever["halves"], out["default"]["halves"])
            lever["wins_over_rule_without_head"] = wins_everywhere(
                lever["halves"], out["rule without head"]["halves"]
            )
            out[f"{name} ({kind})"] = lever
            if name == "head alone":
                out["auc"][f"head ({kind})"] = auc(decided, "head")
            log(
                "heads",
                f"{name} ({kind}): "
                + ", ".join(f"{s} ER {v['er']} F1 {v['f1']}" for s, v in lever["subjects"].items()),
            )
    states, supported, topics = human_states(rows)
    data = {"topics": len({r.topic for r in rows}), "bios": len(rows),
            "human_facts": int(len(supported)), "supported": int(supported.sum()),
            "model": model_name(args.lm), "state_width": int(states.shape[1]),
            "subjects": sorted({subject_name(r.source) for r in rows})}  # fmt: skip
    if args.ship:
        head = fit_head(states, supported, topics, "logistic", args.seed,
                        {"model": model_name(args.lm), "fitted_on": data,
                         "verifier_prompt": config.verify_question,
                         "commit": watch.commit})  # fmt: skip
        log("heads", f"wrote {ship_head(head, args.lm, out=args.ship)}")
    print(flatten(out))
    if args.results or args.results_out:
        record = results_record(args.results or "heads", "scripts.bench_heads", argv, data,
                                flatten(out), watch, levers=out, tables=layout(out),
                                computed=model_results(args.cache) - before)  # fmt: skip
        log("heads", f"wrote {write_results(record, args.results_out)}")


if __name__ == "__main__":
    main()
