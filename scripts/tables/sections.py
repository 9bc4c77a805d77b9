"""The smaller sections: NP stand-ins, the own decomposition, retrieval ablations (run, and
their effect on the evidence shown), decomposition demonstrations."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from factscore_local.config import build_config
from factscore_local.declarations.verifiers import Thresholds
from factscore_local.labels.calibration import apply_thresholds
from factscore_local.pipeline.records.labeled import human_facts, model_facts
from factscore_local.pipeline.records.rows import BioRow
from scripts.tables.markdown import md_results
from scripts.tables.runner import (
    LONG_PAGE,
    Runner,
    auc,
    crossfit,
    default_and_crossfit,
    figures,
)


def section_np_standins(report: dict, run: Runner, args) -> None:
    """The NP stand-ins side by side, on topics from both halves."""
    np_bios = run.bios(args.np_topics, both_halves=True)
    keep = {b.topic for b in np_bios}
    scorers = {
        scorer: run.rows(f"retrieve-lm+np ({scorer})", np_bios, verifier="retrieve-lm+np",
                         np_model=scorer)
        for scorer in args.np_scorers
    }  # fmt: skip
    assert all(r.topic in keep for rows in scorers.values() for r in rows)
    table: list = []
    report["np_standins"] = {
        scorer: {
            "auc_np": auc(rows, "np"),
            **{
                verifier: default_and_crossfit(
                    table, f"{verifier} [{scorer}]", rows, verifier, args.objective, scorer
                )
                for verifier in ("np", "retrieve-lm+np")
            },
        }
        for scorer, rows in scorers.items()
    }
    report["np_topics_used"] = sorted(keep)
    print(f"## NP stand-ins ({args.np_topics} dev topics, half from each topic half: "
          f"{', '.join(sorted(keep))})\n\n" + md_results(table))  # fmt: skip
    print("\nAUC of NP: " + ", ".join(
        f"{k} {v['auc_np']}" for k, v in report["np_standins"].items()) + "\n")  # fmt: skip


def section_own_decomposition(report: dict, run: Runner, main_rows: list[BioRow], args) -> None:
    """The project's own decomposition, same thresholds (cross-fitted on the
    model-atomic-facts rows of the other half)."""
    own_bios = run.bios(args.own_topics)
    own = run.rows("own decomposition", own_bios, verifier="retrieve-lm+np",
                   np_model=args.np_model, use_atomic_facts=False)  # fmt: skip
    keep = {b.topic for b in own_bios}
    model_rows = [r for r in main_rows if r.topic in keep]
    own_fit, _ = crossfit(main_rows, own, "retrieve-lm+np", args.objective)
    model_fit, _ = crossfit(main_rows, model_rows, "retrieve-lm+np", args.objective)
    own_results = [
        ("retrieve-lm+np, model-atomic-facts", "cross-fitted", figures(model_fit)),
        ("retrieve-lm+np, own decomposition", "cross-fitted", figures(own_fit)),
        ("retrieve-lm, own decomposition", "default",
         figures(apply_thresholds(own, "retrieve-lm", Thresholds(0.0, 0.0), 0))),
    ]  # fmt: skip
    report["own_decomposition"] = {
        "topics": args.own_topics,
        "facts_per_response": round(float(np.mean([r.n_facts for r in own if r.responded])), 1),
        "results": {n: f for n, _, f in own_results},
    }
    print(f"## Own decomposition vs model-atomic-facts (first {args.own_topics} topics)\n\n"
          + md_results(own_results) + "\n")  # fmt: skip


def section_ablations(report: dict, run: Runner, args) -> None:
    """BM25 vs dense and k, retrieve-lm at margin 0. ChatGPT only: the dev pages hold the
    passages BM25 found for ChatGPT's facts."""
    ab_bios = run.bios(args.ablation_topics, subjects=("ChatGPT",))
    ablations = {}
    for name, settings in (("bm25 k=5", {}), *ABLATIONS):
        # FActScore's rank order of passages costs ~4x: measured in bench_eval.py instead
        rows = run.rows(f"ablation {name}", ab_bios, verifier="retrieve-lm", **settings)
        ablations[name] = {"auc_margin": auc(rows, "margin"), **figures(rows)}
    report["ablations"] = ablations
    print(f"## Ablations, retrieve-lm at margin 0 (ChatGPT, first {args.ablation_topics} "
          "topics)\n\n| setting | AUC of margin | ER | F1 |\n|---|---|---|---|")  # fmt: skip
    for name, a in ablations.items():
        r = a["subjects"]["ChatGPT"]
        print(f"| {name} | {a['auc_margin']} | {r['error_rate']} | {r['f1_micro']} |")
    print()


ABLATIONS = (
    ("bm25 k=3", {"k": 3}),
    ("dense k=3", {"k": 3, "retrieval": "dense"}),
    ("bm25 k=10", {"k": 10}),
    ("dense k=5", {"retrieval": "dense"}),
)


def section_ablation_evidence(report: dict, run: Runner, args) -> None:
    """No model: for every ChatGPT fact (model and human) of every topic, whether an
    ablation setting changes the passages its prompt shows, against BM25 k=5, in each
    evidence mode; by page length. Where nothing changes, the margin cannot change."""
    from factscore_local.pipeline.components import build_components
    from factscore_local.pipeline.signals.compute import FactQuery
    from factscore_local.pipeline.signals.verify_prompt import passage_token_counter
    from factscore_local.studies import judged_on, own_passages

    bios = run.bios(args.topics, subjects=("ChatGPT",))
    queries = [
        FactQuery(b.topic, b.topic, atom, group=f"{b.line}", tier=tier, sentence=sentence)
        for b in bios
        for tier, facts in (
            (0, model_facts(b.annotations)),
            (1, [(f.sentence, f.text) for f in human_facts(b.annotations)]),
        )
        for sentence, atom in facts
    ]
    parts = build_components(build_config({"index": run.index, "lm": run.lm}))
    token_len = passage_token_counter(parts.lm.get().lm.tokenize)
    modes = ("page", "per-fact")

    def shown(settings: dict) -> dict[str, list[tuple]]:
        """Per evidence mode, the passage ids each fact's prompt shows (one retrieval)."""
        config = build_config({"index": run.index, "lm": run.lm, **settings})
        hits = own_passages(queries, parts, config.k, config.retrieval)
        out = {}
        for mode in modes:
            blocks = judged_on(queries, hits, parts, replace(config, evidence=mode), token_len)
            out[mode] = [
                tuple(p.passage_id for p in block)
                if block is not None
                else tuple(sorted(h.passage.passage_id for h in fact_hits))  # fmt: skip
                for block, fact_hits in zip(blocks, hits, strict=True)
            ]
        return out

    long_page = np.asarray([run.page_size[q.topic] > LONG_PAGE for q in queries])
    base = shown({})
    out: dict = {mode: {} for mode in modes}
    for name, settings in ABLATIONS:
        ablated = shown(settings)
        for mode in modes:
            changed = np.asarray([a != b for a, b in zip(base[mode], ablated[mode],
                                                         strict=True)])  # fmt: skip
            out[mode][name] = {
                "short": round(100 * float(changed[~long_page].mean()), 1),
                "long": round(100 * float(changed[long_page].mean()), 1),
            }
    n_long = int(long_page.sum())
    report["ablation_evidence"] = {"facts": len(queries), "long_page_facts": n_long, **out}
    print(f"## Ablations: facts whose evidence changes against BM25 k=5 (ChatGPT, "
          f"{len(bios)} topics, {len(queries)} model and human facts, {n_long} on "
          f"pages of more than {LONG_PAGE} passages; no model)\n\n"
          "| setting | page mode, short pages | page mode, long pages | per-fact, short pages "
          "| per-fact, long pages |\n|---|---|---|---|---|")  # fmt: skip
    for name, _ in ABLATIONS:
        p, f = out["page"][name], out["per-fact"][name]
        print(f"| {name} | {p['short']}% | {p['long']}% | {f['short']}% | {f['long']}% |")
    print()


def section_demos(report: dict, run: Runner, args) -> None:
    """Decomposition with the project's demonstrations vs FActScore's demons.json."""
    d_bios = run.bios(args.own_topics, subjects=("ChatGPT",))
    demos = {}
    for name, settings in (
        ("own demos", {}),
        ("reference demos", {"demos": args.demos_reference}),
    ):
        rows = run.rows(f"decomposition, {name}", d_bios, verifier="retrieve-lm",
                        use_atomic_facts=False, **settings)  # fmt: skip
        responded = [r for r in rows if r.responded]
        demos[name] = {
            "facts_per_response": round(float(np.mean([r.n_facts for r in responded])), 1),
            **figures(rows),
        }
    report["demos"] = demos
    print(f"## Demonstrations (ChatGPT, first {args.own_topics} topics, retrieve-lm, margin 0)\n")
    for name, d in demos.items():
        r = d["subjects"]["ChatGPT"]
        print(f"- {name}: {d['facts_per_response']} facts/response, estimated "
              f"{r['estimated_score']} vs human {r['human_score']} "
              f"(ER {r['error_rate']})")  # fmt: skip
    print()
