"""Contradiction recall: do the verifiers reject supported facts with one slot changed?

From the labeled dev bios, the facts the annotators labeled S get one-slot counterfactuals
(``factscore_local.labels.counterfactual``: a year, a number, a place, a nationality, an
occupation, a person or a work the page does not state; with ``--replacements stated``,
one the page states in another role, ``factscore_local.labels.stated``). Per verifier and
per kind it reports the contradiction recall (counterfactuals rejected), the acceptance of their
originals, and the pair ordering of the margin (the counterfactual's below its original's).
The originals' model results come from the committed caches (seed them with
``--seed-cache``): only the counterfactuals need new forward passes, each a short tail
after a page prefix that ``--prefix-states`` keeps.

A slice (``--topics N --half H``: the first N topics of one topic half) is what a shared
CPU affords; its results file says so.

Example:
    python -m scripts.bench_counterfactual --topics 10 --half 0 \\
        --cache bench-out/counterfactual-cache.db --prefix-states bench-out/prefix-states \\
        --seed-cache scripts/cache/dev-tables-98.jsonl.gz \\
        --seed-cache scripts/cache/dev-levers-98.jsonl.gz \\
        --seed-cache scripts/cache/counterfactual.jsonl.gz
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

import numpy as np

from factscore_local.declarations.verifiers import (
    ALL_SIGNALS_RULE,
    RIVALS_RULE,
    VALUE_KEYS,
    Thresholds,
    get_verifier,
    legacy_name,
)
from factscore_local.fitted_defaults import model_defaults, shipped_rule
from factscore_local.labels.counterfactual import (
    KINDS,
    build_pools,
    make_counterfactuals,
    page_texts,
    sample,
    supported_facts,
)
from factscore_local.labels.validation import topic_half
from factscore_local.pipeline.signals.slots import slot_check, slot_code
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
from scripts.counterfactual_cuts import cuts, scores
from scripts.counterfactual_layout import layout

TAG = "counterfactual"
BASELINE_RULE = "retrieve-lm+np+coverage-fitted"  # the default before the slot check
PLANTED = (  # the demo bios' false statements, as facts of their topics
    ("Albert Einstein", "Albert Einstein was born in 1885."),
    ("Albert Einstein", "Albert Einstein was awarded the Nobel Prize in Literature."),
    ("Abraham Lincoln", "Abraham Lincoln was a British statesman."),
    ("Abraham Lincoln", "Abraham Lincoln worked as a lawyer in Ohio."),
)


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m scripts.bench_counterfactual",
                                 description=__doc__.split("\n\n")[0])  # fmt: skip
    add_data_option(ap)
    ap.add_argument("--index", type=Path, default=ROOT / "dev-index", help="the dev index")
    add_cache_options(ap, BENCH_OUT / "counterfactual-cache.db")
    ap.add_argument("--prefix-states", type=Path, default=None,
                    help="folder keeping evaluated page prefixes (outside the repo)")  # fmt: skip
    ap.add_argument("--lm", default=None, help="LM (default: the embedded 1.5B)")
    ap.add_argument("--topics", type=int, default=None, help="first N topics of --half")
    ap.add_argument("--half", type=int, choices=(0, 1), default=None, help="topic half")
    ap.add_argument("--per-kind", type=int, default=None,
                    help="at most this many pairs per kind and topic (seeded draw)")  # fmt: skip
    ap.add_argument("--seed", type=int, default=0, help="seed of the counterfactuals")
    ap.add_argument("--replacements", choices=("absent", "stated"), default="absent",
                    help="absent: values the page does not state; stated: values the page "
                    "states in another role (the harder probe)")  # fmt: skip
    ap.add_argument(
        "--sample",
        type=int,
        default=0,
        help="also write N pairs drawn with --sample-seed for a hand check",
    )
    ap.add_argument("--sample-seed", type=int, default=1)
    ap.add_argument(
        "--hand-check",
        type=Path,
        default=None,
        help="JSON {kind: [checked, really false]} of a hand-checked sample",
    )
    ap.add_argument("--demo-index", type=Path, default=None,
                    help="an index of the demo dump (fscore demo's): scores the planted "
                    "statements")  # fmt: skip
    ap.add_argument(
        "--head",
        action="store_true",
        help="also decide every pair with a state head and the head rule, each "
        "topic half by what was fitted on the other (scripts.probe_heads): reads "
        "the verdicts' hidden states and the labeled bios' (seed their export)",
    )
    ap.add_argument("--candidates", action="store_true",
                    help="also read the candidates for the facts' slots (issue 74): the rules "
                    "shipped for the LM that weigh them are compared too")  # fmt: skip
    ap.add_argument("--no-lm", action="store_true", help="make the pairs only (no verifier)")
    ap.add_argument("--pairs-out", type=Path, default=BENCH_OUT / "counterfactual-pairs.jsonl")
    ap.add_argument("--results", default="counterfactual-slice", help="results file name")
    ap.add_argument("--results-out", type=Path, default=None,
                    help="write the results file here (the checker's replay)")  # fmt: skip
    return ap.parse_args(argv)


def make_pairs(args, watch):
    """All pairs of the 98 dev topics (pools from all dev pages), then the slice."""
    from factscore_local.index.reader import KnowledgeSource
    from factscore_local.pipeline.decomposition.decompose import load_spacy

    root = data_root(args.data)
    bios = labeled_bios(root, SUBJECTS, responding=True)
    facts = [f for s in SUBJECTS for f in supported_facts(bios[s], s)]
    with watch("pairs"):
        ks = KnowledgeSource(args.index)
        pages = page_texts(ks, [f.topic for f in facts])
        nlp = load_spacy()
        topics = [b.topic for b in bios["ChatGPT"] if b.topic in pages]
        if args.half is not None:
            topics = [t for t in topics if topic_half(t) == args.half]
        topics = topics[: args.topics] if args.topics else topics
        chosen = set(topics)
        pools = build_pools(pages.values(), nlp)
        stated = None
        if args.replacements == "stated":
            from factscore_local.labels.stated import stated_values

            texts = [pages[t] for t in topics]
            docs = nlp.pipe(texts)
            known = set(pools.places)
            stated = {t: stated_values(text, doc, known)
                      for t, text, doc in zip(topics, texts, docs, strict=True)}  # fmt: skip
        pairs = make_counterfactuals([f for f in facts if f.topic in chosen], pages, nlp,
                                     pools, seed=args.seed, stated=stated)  # fmt: skip
    if args.per_kind:
        groups = collections.defaultdict(list)
        for p in pairs:
            groups[(p.fact.topic, p.kind)].append(p)
        keep = {id(p) for g in groups.values() for p in sample(g, args.per_kind, args.seed)}
        pairs = [p for p in pairs if id(p) in keep]
    return topics, pairs, ks


SIGNALS_RULE = RIVALS_RULE  # reads every signal the rules below do


def shipped_rules(lm: str | None, candidates: bool = True) -> dict[str, tuple[str, Thresholds]]:
    """The rules compared: each fitted rule shipped for the LM, with its weights, and the
    margin at 0; those that weigh the candidates' lead only with ``candidates`` (a run
    that did not read them would decide them as if no candidate led)."""
    rules = {}
    for name in model_defaults(lm).get("rules", {}):
        if not candidates and "candidates" in get_verifier(name).signals:
            continue
        shipped = shipped_rule(lm, name)
        if "rule_weights" in shipped.settings:  # keyed by the names the records use
            weights = Thresholds(weights=shipped.settings["rule_weights"])
            rules[legacy_name(name)] = (legacy_name(name), weights)
    rules["retrieve-lm, margin 0"] = ("retrieve-lm", Thresholds(margin=0.0))
    return rules


def verify(args, queries: list[tuple[str, str, str]], index: Path):
    """Each (title, topic, fact)'s margin, NP, coverage and slot check (and the decision of
    the model's default rule)."""
    from factscore_local.config import build_config
    from factscore_local.pipeline.estimator import Estimator

    settings = {
        "index": index,
        "lm": args.lm,
        "cache": args.cache,
        "evidence": "page",
        "use_atomic_facts": True,
        "gamma": 0,
        "prefix_states": args.prefix_states,
    }
    # the model's default verifier, by the name the records key its figures with
    default = legacy_name(build_config(settings).verifier)
    reader = ALL_SIGNALS_RULE if args.candidates else SIGNALS_RULE
    config = build_config({**settings, "verifier": reader, "read_states": args.head})
    estimator = Estimator(config)
    log(TAG, f"signals of {reader}: {len(queries)} facts")
    return default, estimator.verify(queries)


def signal_arrays(results) -> dict[str, np.ndarray]:
    """The facts' recorded signals, one array per signal (0 where one was not recorded)."""
    return {name: np.asarray([r.signals().get(name, 0.0) for r in results], float)
            for name in VALUE_KEYS}  # fmt: skip


def decided(results, verifier: str, thresholds: Thresholds) -> np.ndarray:
    """The rule's decisions from the facts' recorded signals."""
    return get_verifier(verifier).decide(signal_arrays(results), thresholds, len(results))


def cut_sweeps(pairs, originals, changed, rules, per_rule: dict, default: str):
    """For the default and the rivals rule: the pairs under other cuts of the rule's score
    (``scripts.counterfactual_cuts``), the allowance measured from the originals that
    ``BASELINE_RULE`` accepts; and each rule's cut within that allowance."""
    baseline = per_rule[BASELINE_RULE]["all"]["originals_accepted"]
    sweeps, allowance = {}, {}
    for name in dict.fromkeys((default, RIVALS_RULE)):
        verifier, thresholds = rules[name]
        pair_scores = (scores(signal_arrays(facts), verifier, thresholds)
                       for facts in (originals, changed))  # fmt: skip
        sweep = cuts([p.kind for p in pairs], *pair_scores, baseline, order=KINDS)
        allowance[name] = {**sweep.pop("allowance"), "baseline_accepted": baseline}
        sweeps[name] = sweep
    return sweeps, allowance


def figures(pairs, originals, counterfactuals, checks, rules) -> dict:
    """Per rule and kind: recall, originals' acceptance, margin ordering; and the slot
    check alone (rejects on a conflict)."""
    verdicts: dict = {}
    for name, (verifier, thresholds) in rules.items():
        cf_ok = decided(counterfactuals, verifier, thresholds)
        orig_ok = decided(originals, verifier, thresholds)
        verdicts[name] = (cf_ok, orig_ok)
    if checks is not None:
        verdicts["slot-check"] = None
    return verdict_figures(pairs, originals, counterfactuals, checks, verdicts)


def verdict_figures(pairs, originals, counterfactuals, checks, verdicts: dict) -> dict:
    """Per rule and kind, from its (counterfactual accepted, original accepted) verdicts
    (None: the slot check alone)."""
    out: dict = {}
    for name, verdict in verdicts.items():
        per: dict = {}
        for kind in (*KINDS, "all"):
            idx = [i for i, p in enumerate(pairs) if kind in ("all", p.kind)]
            if not idx:
                continue
            if verdict is None:  # the slot check: rejects on a conflicting slot
                cf = np.array([checks[i][1] == "conflict" for i in idx])
                orig = np.array([checks[i][0] != "conflict" for i in idx])
                per[kind] = {"pairs": len(idx), "recall": round(100 * cf.mean(), 1),
                             "originals_accepted": round(100 * orig.mean(), 1)}  # fmt: skip
                continue
            cf = ~verdict[0][idx]
            orig = verdict[1][idx]
            diff = np.array([counterfactuals[i].margin - originals[i].margin for i in idx])
            per[kind] = {
                "pairs": len(idx),
                "recall": round(100 * cf.mean(), 1),
                "originals_accepted": round(100 * orig.mean(), 1),
                "margin_ordered": round(100 * ((diff < 0).mean() + 0.5 * (diff == 0).mean()), 1),
            }
        out[name] = per
    return out


def planted(args, rules: dict) -> dict:
    """The demo's planted false statements, verified as facts on the demo index: each
    rule's decision, the margin and the slot check."""
    from factscore_local.api import load_config
    from factscore_local.pipeline.estimator import Estimator

    config = load_config(args.demo_index, cache=args.cache, lm=args.lm, verifier=SIGNALS_RULE)
    results = Estimator(config).verify([(t, t, fact) for t, fact in PLANTED])
    accepted = {name: decided(results, v, t) for name, (v, t) in rules.items()}
    # "slots": the slot check's one number (the code of its first flag raised), as recorded
    return {fact: {"margin": r.margin, "slots": slot_code(dict.fromkeys(r.slot_flags, 1.0)),
                   **{f"accepted ({name})": bool(a[i]) for name, a in accepted.items()}}
            for i, ((_, fact), r) in enumerate(zip(PLANTED, results, strict=True))}  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    watch = Stopwatch()
    topics, pairs, ks = make_pairs(args, watch)
    kinds = collections.Counter(p.kind for p in pairs)
    log(TAG, f"{len(topics)} topics, {len(pairs)} pairs: {dict(kinds)}")
    args.pairs_out.parent.mkdir(parents=True, exist_ok=True)
    with args.pairs_out.open("w", encoding="utf-8") as handle:  # scratch: shared data
        for p in pairs:
            handle.write(json.dumps(p.to_json(), ensure_ascii=False) + "\n")
    if args.sample:
        drawn = sample(pairs, args.sample, args.sample_seed)
        path = args.pairs_out.with_name(f"counterfactual-sample-{args.sample_seed}.jsonl")
        path.write_text("".join(json.dumps(p.to_json(), ensure_ascii=False) + "\n"
                                for p in drawn), "utf-8")  # fmt: skip
        log(TAG, f"hand-check sample: {path}")
    if args.no_lm:
        return
    seed_cache(args.cache, args.seed_cache, TAG)
    titles = {t: ks.resolve_title(t).title for t in topics}
    before = model_results(args.cache)
    with watch("originals"):
        verifier, originals = verify(
            args, [(titles[p.fact.topic], p.fact.topic, p.original) for p in pairs], args.index
        )
    computed_originals = model_results(args.cache) - before
    with watch("counterfactuals"):
        _, changed = verify(
            args, [(titles[p.fact.topic], p.fact.topic, p.changed) for p in pairs], args.index
        )
    computed = model_results(args.cache) - before - computed_originals
    with watch("slot_check"):  # against each fact's own top-k passages

        def texts(result) -> list[str]:
            return [ks.passage(e.passage_id).clean_text for e in result.evidence or ()]

        checks = [(slot_check(p.original, texts(o), p.fact.topic),
                   slot_check(p.changed, texts(c), p.fact.topic))
                  for p, o, c in zip(pairs, originals, changed, strict=True)]  # fmt: skip
    rules = shipped_rules(args.lm, args.candidates)
    report = {"verifiers": figures(pairs, originals, changed, checks, rules)}
    if {BASELINE_RULE, RIVALS_RULE, verifier} <= rules.keys():  # rules the sweeps read
        report["cuts"], report["allowance"] = cut_sweeps(
            pairs, originals, changed, rules, report["verifiers"], verifier
        )
    # The steps' seconds go into the record's timings, not its figures: a replay's
    # timing differs, and the checker compares figures exactly.
    report["model_results_computed"] = dict(originals=computed_originals, counterfactuals=computed)
    if args.head:
        from scripts.probe_heads import head_verdicts

        before_heads = model_results(args.cache)  # the states the heads read
        with watch("heads"):
            verdicts = head_verdicts(args, pairs, originals, changed, verifier)
            report["head"] = verdict_figures(pairs, originals, changed, None, verdicts)
        report["model_results_computed"]["heads"] = model_results(args.cache) - before_heads
    if args.hand_check:
        report["hand_check"] = json.loads(args.hand_check.read_text("utf-8"))
    if args.demo_index:
        before_planted = model_results(args.cache)  # kept in counterfactual-planted.jsonl.gz
        with watch("planted"):
            report["planted"] = planted(args, rules)
        report["model_results_computed"]["planted"] = model_results(args.cache) - before_planted
    print(json.dumps(report, indent=1))
    data = {"labeled": "factscore/labeled-dev (S human atomic facts)", "index": "dev-index",
            "slice": args.topics is not None, "topic_half": args.half, "topics": topics,
            "pairs": len(pairs), "pairs_per_kind": dict(kinds), "seed": args.seed,
            "per_kind_per_topic": args.per_kind, "default_verifier": verifier,
            "replacements": args.replacements}  # fmt: skip
    record = results_record(args.results, "scripts.bench_counterfactual", argv, data,
                            flatten(report), watch, report=report,
                            tables=layout(report, verifier, BASELINE_RULE),
                            computed=sum(report["model_results_computed"].values()))  # fmt: skip
    log(TAG, f"wrote {write_results(record, args.results_out)}")


if __name__ == "__main__":
    main()
