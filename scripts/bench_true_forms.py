"""True facts in other forms: does the default still accept a supported fact whose value is
restated as a decade, a century, a range, an approximation, a full date or a rounded count?

From the labeled dev bios, the facts the annotators labeled S get their value restated from
the page's own value (``factscore_local.labels.true_forms``): one pair per form and topic
(seeded). Per form: the default's acceptance of the restated facts, of their originals and
of the restated facts whose original it accepts (what a form costs); the slot check alone
(no vetoed conflict; confirmed); and the loose values the LM read as the page's (``as_stated``):
as the original's value or as another. Restated facts beyond the committed caches need new
forward passes (a short tail after the page prefix, which ``--prefix-states`` keeps);
export them (``fscore cache export``) so that the record replays.

Example (the record's seeds: ``python -m scripts.suite``'s slot-check suite):
    python -m scripts.bench_true_forms --index bench-out/dev-index \\
        --cache bench-out/true-forms-cache.db --prefix-states bench-out/prefix-states \\
        --seed-cache scripts/cache/as-stated-98.jsonl.gz --results true-forms-98
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from pathlib import Path

import numpy as np

from factscore_local.labels.counterfactual import page_texts, sample, supported_facts
from factscore_local.labels.true_forms import FORMS, make_true_forms
from factscore_local.labels.validation import topic_half
from factscore_local.pipeline.signals.slots import slot_flags
from scripts.bench_counterfactual import signal_arrays
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

TAG = "true-forms"
VETOED = ("number", "year", "place")  # the slot flags the default vetoes on


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m scripts.bench_true_forms",
                                 description=__doc__.split("\n\n")[0])  # fmt: skip
    add_data_option(ap)
    ap.add_argument("--index", type=Path, default=ROOT / "dev-index", help="the dev index")
    add_cache_options(ap, BENCH_OUT / "true-forms-cache.db")
    ap.add_argument("--prefix-states", type=Path, default=None,
                    help="folder keeping evaluated page prefixes (outside the repo)")  # fmt: skip
    ap.add_argument("--lm", default=None, help="LM (default: the embedded 1.5B)")
    ap.add_argument("--topics", type=int, default=None, help="first N topics of --half")
    ap.add_argument("--half", type=int, choices=(0, 1), default=None, help="topic half")
    ap.add_argument("--per-form", type=int, default=1, help="pairs per form and topic")
    ap.add_argument("--seed", type=int, default=0, help="seed of the restated forms")
    ap.add_argument("--sample", type=int, default=0, help="also write N pairs for a hand check")
    ap.add_argument("--sample-seed", type=int, default=1)
    ap.add_argument("--as-written", action="store_true", help="--no-values-as-stated")
    ap.add_argument("--no-lm", action="store_true", help="make the pairs only (no verifier)")
    ap.add_argument("--pairs-out", type=Path, default=BENCH_OUT / "true-forms-pairs.jsonl")
    ap.add_argument("--results", default="true-forms-slice", help="results file name")
    ap.add_argument("--results-out", type=Path, help="write the results file here (replays)")
    return ap.parse_args(argv)


def make_pairs(args):
    """The restated forms of the S facts of the chosen topics, ``--per-form`` per topic."""
    from factscore_local.index.reader import KnowledgeSource

    bios = labeled_bios(data_root(args.data), SUBJECTS, responding=True)
    facts = [f for s in SUBJECTS for f in supported_facts(bios[s], s)]
    ks = KnowledgeSource(args.index)
    pages = page_texts(ks, [f.topic for f in facts])
    topics = [b.topic for b in bios["ChatGPT"] if b.topic in pages]
    if args.half is not None:
        topics = [t for t in topics if topic_half(t) == args.half]
    topics = topics[: args.topics] if args.topics else topics
    chosen = set(topics)
    pairs = make_true_forms([f for f in facts if f.topic in chosen], pages, seed=args.seed)
    groups = collections.defaultdict(list)
    for p in pairs:
        groups[(p.fact.topic, p.kind)].append(p)
    keep = {id(p) for g in groups.values() for p in sample(g, args.per_form, args.seed)}
    return topics, [p for p in pairs if id(p) in keep], ks


def verify(args, queries: list[tuple[str, str, str]]):
    """The default rule's decisions and recorded signals of (title, topic, fact) queries."""
    from factscore_local.config import build_config
    from factscore_local.pipeline.estimator import Estimator

    config = build_config({"index": args.index, "lm": args.lm, "cache": args.cache,
                           "evidence": "page", "use_atomic_facts": True, "gamma": 0,
                           "prefix_states": args.prefix_states,
                           "values_as_stated": not args.as_written})  # fmt: skip
    log(TAG, f"{config.verifier}: {len(queries)} facts")
    return config.verifier, Estimator(config).verify(queries)


def figures(pairs, originals, restated, ks) -> dict:
    """Per form: the default's acceptance of the restated facts, of their originals and of
    the restated facts whose original it accepts; the slot check's verdicts."""

    def passages(result) -> list[str]:
        return [ks.passage(e.passage_id).clean_text for e in result.evidence or ()]

    flags = [slot_flags(p.changed, passages(r), p.fact.topic)
             for p, r in zip(pairs, restated, strict=True)]  # fmt: skip
    vetoed = np.array([any(f[k] for k in VETOED) for f in flags])
    conflict = np.array([f["other"] >= 1 or f["nationality"] >= 1 for f in flags]) | vetoed
    confirmed = np.array([f["confirmed"] >= 1 for f in flags])
    # the value the LM read where the restated one was loose: the original's, or another
    reads = [r.read_as or p.changed for p, r in zip(pairs, restated, strict=True)]
    witnessed = np.array([read != p.changed for p, read in zip(pairs, reads, strict=True)])
    value = [re.compile(rf"(?<![\d,.]){re.escape(p.old.split()[-1])}(?![\d,]\d)") for p in pairs]
    right = witnessed & [bool(v.search(read)) for v, read in zip(value, reads, strict=True)]
    new_ok = np.array([r.is_supported for r in restated])
    old_ok = np.array([r.is_supported for r in originals])
    out = {}
    for form in (*FORMS, "all"):
        idx = [i for i, p in enumerate(pairs) if form in ("all", p.kind)]
        if not idx:
            continue
        kept = [i for i in idx if old_ok[i]]
        out[form] = {
            "pairs": len(idx),
            "accepted": round(100 * new_ok[idx].mean(), 1),
            "originals_accepted": round(100 * old_ok[idx].mean(), 1),
            "accepted_where_original_is": round(100 * new_ok[kept].mean(), 1) if kept else None,
            "slot_check_not_vetoed": round(100 * (~vetoed[idx]).mean(), 1),
            "slot_check_no_conflict": round(100 * (~conflict[idx]).mean(), 1),
            "slot_check_confirmed": round(100 * confirmed[idx].mean(), 1),
            "read_as_the_original_value": int(right[idx].sum()),
            "read_as_another_value": int((witnessed & ~right)[idx].sum()),
        }
    return out


def layout() -> list[dict]:
    """The docs page's table: per form, the default's acceptance and the slot check's."""
    cells = [("pairs", "pairs"), ("restated accepted (%)", "accepted"),
             ("originals accepted (%)", "originals_accepted"),
             ("restated accepted where the original is (%)", "accepted_where_original_is"),
             ("slot check: not vetoed (%)", "slot_check_not_vetoed"),
             ("no conflict (%)", "slot_check_no_conflict"),
             ("confirmed (%)", "slot_check_confirmed"),
             ("read as the original's value", "read_as_the_original_value"),
             ("read as another value", "read_as_another_value")]  # fmt: skip
    columns = [{"head": head, "cell": "{" + key + "}"} for head, key in cells]
    return [{"title": "The default on true facts in other forms", "prefix": "forms",
             "rows_head": "form", "columns": columns, "digits": 1}]  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    watch = Stopwatch()
    with watch("pairs"):
        topics, pairs, ks = make_pairs(args)
    forms = collections.Counter(p.kind for p in pairs)
    log(TAG, f"{len(topics)} topics, {len(pairs)} pairs: {dict(forms)}")
    args.pairs_out.parent.mkdir(parents=True, exist_ok=True)
    drawn = sample(pairs, args.sample, args.sample_seed) if args.sample else []
    sampled = args.pairs_out.with_name(f"true-forms-sample-{args.sample_seed}.jsonl")
    for path, some in [(args.pairs_out, pairs)] + [(sampled, drawn)] * bool(drawn):
        path.write_text("".join(json.dumps(p.to_json(), ensure_ascii=False) + "\n"
                                for p in some), "utf-8")  # fmt: skip
    if args.no_lm:
        return
    seed_cache(args.cache, args.seed_cache, TAG)
    titles = {t: ks.resolve_title(t).title for t in topics}
    before = model_results(args.cache)
    with watch("originals"):
        verifier, originals = verify(args, [(titles[p.fact.topic], p.fact.topic, p.original)
                                            for p in pairs])  # fmt: skip
    computed_originals = model_results(args.cache) - before
    with watch("restated"):
        _, restated = verify(args, [(titles[p.fact.topic], p.fact.topic, p.changed)
                                    for p in pairs])  # fmt: skip
    computed = model_results(args.cache) - before - computed_originals
    report = {"forms": figures(pairs, originals, restated, ks),
              "model_results_computed": {"originals": computed_originals,
                                         "restated": computed}}  # fmt: skip
    print(json.dumps(report, indent=1))
    data = {"labeled": "factscore/labeled-dev (S human atomic facts)", "index": "dev-index",
            "topics": len(topics), "topic_half": args.half, "pairs": len(pairs),
            "values_as_stated": not args.as_written,
            "pairs_per_form": dict(forms), "seed": args.seed, "per_form_per_topic": args.per_form,
            "default_verifier": verifier,
            "signals": {"restated": signal_arrays(restated)["margin"].size}}  # fmt: skip
    record = results_record(args.results, "scripts.bench_true_forms", argv, data,
                            flatten(report), watch, report=report, tables=layout(),
                            computed=sum(report["model_results_computed"].values()))  # fmt: skip
    log(TAG, f"wrote {write_results(record, args.results_out)}")


if __name__ == "__main__":
    main()
