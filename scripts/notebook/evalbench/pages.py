"""Seconds per fact by page length, per evidence mode, against the reference procedure."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from factscore_local.data import data_file
from scripts.common import labeled_bios
from scripts.notebook.evalbench.bench import Bench, emit, log
from scripts.notebook.evalbench.reference import (
    REF_MAX_PROMPT_TOKENS,
    reference_generate,
    reference_prompt,
    reset_state,
)

PAGE_CLASSES = (("<=5", 1, 5), ("6-20", 6, 20), (">20", 21, 10**9))  # passages on the page


def facts_by_page_length(ks, data: Path, per_class: int) -> dict[str, list]:
    """Per page-length class, up to per_class model facts of the labeled bios whose page
    falls in it (whole bios in file order, the last one cut), as FactQuery with the bio as
    the group."""
    from factscore_local.pipeline.records.labeled import model_facts
    from factscore_local.pipeline.signals.compute import FactQuery

    out: dict[str, list] = {name: [] for name, _, _ in PAGE_CLASSES}
    for labeled in labeled_bios(data, ("ChatGPT",), responding=True)["ChatGPT"]:
        bio = labeled.record
        title = ks.resolve_title(bio["topic"]).title
        if title is None:
            continue
        n = len(ks.get_passages(title))
        name = next(c for c, lo, hi in PAGE_CLASSES if lo <= n <= hi)
        room = per_class - len(out[name])
        out[name] += [
            FactQuery(title, bio["topic"], atom, bio["topic"])
            for _, atom in model_facts(bio["annotations"])
        ][: max(room, 0)]
    return out


def demo_page_facts(b: Bench, demo_index: Path) -> tuple[object, list]:
    """The demo's index and the facts (decomposed by the loaded LM) of the demo bios whose
    page has more than 20 passages (Einstein's and Lincoln's in the demo excerpt), with the
    bio as the group."""
    from factscore_local.index.reader import KnowledgeSource
    from factscore_local.pipeline.records.inputs import read_bios
    from factscore_local.pipeline.signals.compute import FactQuery

    ks = KnowledgeSource(demo_index)
    bios = [
        bio
        for bio in read_bios(data_file("demo_bios.jsonl"))
        if (title := ks.resolve_title(bio.topic).title) and len(ks.get_passages(title)) > 20
    ]
    decomposer = b.estimator().components.decomposer.get()
    queries = []
    for bio, facts in zip(bios, decomposer.run_many([x.output for x in bios]), strict=True):
        title = ks.resolve_title(bio.topic).title
        pages = len(ks.get_passages(title))
        log(f"demo page {title}: {pages} passages")
        queries += [FactQuery(title, bio.topic, a, bio.topic) for _, atoms in facts for a in atoms]
    return ks, queries


def section_page_lengths(
    b: Bench,
    per_class: int,
    ref_per_class: int,
    modes=("per-fact", "shared", "page"),
    demo_index: Path | None = None,
) -> None:
    """Seconds per fact by page length, per evidence mode, against the reference procedure
    on the same facts; decisions of each mode compared with per-fact evidence's. With a
    demo index, also the demo bios' facts on its long pages (their own class)."""
    from factscore_local.lm.base import LMStats

    raw = b.raw
    b.out["page_lengths"] = {}
    classes = [(name, b, qs) for name, qs in facts_by_page_length(b.ks, b.data, per_class).items()]
    if demo_index is not None:
        demo_ks, demo_queries = demo_page_facts(b, demo_index)
        classes.append(("demo >20", dataclasses.replace(b, ks=demo_ks), demo_queries))
    for name, bench, queries in classes:
        if not queries:
            continue
        row: dict = {"measure": "page_length", "class": name, "facts": len(queries),
                     "bios": len({q.group for q in queries})}  # fmt: skip
        decisions = {}
        for mode in modes:
            est = bench.estimator(evidence=mode)
            raw.stats = LMStats()
            reset_state(raw)
            log(f"pages {name}: {len(queries)} facts, {mode} evidence")
            t0 = time.perf_counter()
            results = est.verify(queries)
            secs = time.perf_counter() - t0
            decisions[mode] = [r.is_supported for r in results]
            row[mode] = {
                "s_per_fact": round(secs / len(queries), 3),
                "prompt_tokens_per_fact": round(raw.stats.prompt_tokens / len(queries), 1),
                "evaluated_tokens_per_fact": round(raw.stats.evaluated_tokens / len(queries), 1),
                "supported": sum(decisions[mode]),
                "blocks": len({r.block for r in results}) if mode != "per-fact" else None,
            }
        for mode in modes:
            if mode != "per-fact" and "per-fact" in decisions:
                pairs = zip(decisions["per-fact"], decisions[mode], strict=True)
                same = sum(a == c for a, c in pairs)
                row[mode]["decisions_same_as_per_fact"] = f"{same}/{len(queries)}"
        if ref_per_class:
            picked = [queries[i * len(queries) // ref_per_class] for i in range(ref_per_class)]
            seconds = []
            for q in picked:
                hits = bench.ks.search_page(q.title, f"{q.topic} {q.atom}", k=bench.cfg.k)
                passages = [(h.passage.title, h.passage.text) for h in hits]
                ids = raw.prompt_ids(reference_prompt(q.topic, q.atom, passages))
                seconds.append(reference_generate(raw, ids[-REF_MAX_PROMPT_TOKENS:])["seconds"])
            ref = sum(seconds) / len(seconds)
            row["reference_s_per_fact"] = round(ref, 3)
            row["reference_facts"] = len(seconds)
            for mode in modes:
                row[mode]["speedup_vs_reference"] = round(ref / row[mode]["s_per_fact"], 1)
        bench.out["page_lengths"][name] = emit(row)
