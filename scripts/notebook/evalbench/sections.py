"""The eval benchmark's sections on the loaded model: decomposition, our verification and
its variants, the reference procedure, NP, the trivial verifiers."""

from __future__ import annotations

import time

from scripts.notebook.evalbench.bench import Bench, emit, log, rate
from scripts.notebook.evalbench.reference import (
    REF_MAX_NEW_TOKENS,
    REF_MAX_PROMPT_TOKENS,
    decide,
    reference_generate,
    reference_prompt,
    reset_state,
)


def section_decompose(b: Bench) -> None:
    from factscore_local.lm.base import LMStats
    from factscore_local.pipeline.decomposition.decompose import load_spacy

    est = b.estimator()
    t0 = time.perf_counter()
    load_spacy()
    decomposer = est.components.decomposer.get()  # demos and their BM25 index
    setup_s = time.perf_counter() - t0
    b.raw.stats = LMStats()
    reset_state(b.raw)
    log(f"decomposing {len(b.bios)} bios")
    t0 = time.perf_counter()
    results = decomposer.run_many([bio["output"] for _, bio in b.bios])
    secs = time.perf_counter() - t0
    n_sent = sum(len(r) for r in results)
    n_facts = sum(len(fs) for r in results for _, fs in r)
    gen = b.raw.stats.generated_tokens
    b.out["decompose"] = emit(
        {
            "measure": "decompose",
            "bios": len(b.bios),
            "sentences": n_sent,
            "prompted_sentences": est.cache.misses,
            "facts": n_facts,
            "generated_tokens": gen,
            "seconds": round(secs, 2),
            "setup_s": round(setup_s, 2),
            "facts_per_s": rate(n_facts, secs),
            "sentences_per_s": rate(n_sent, secs),
            "gen_tokens_per_s": rate(gen, secs),
        }
    )


def section_ours(b: Bench) -> None:
    """Estimator.verify on the facts, with the prompts and scores it sent to the LM."""
    from factscore_local.lm.base import LMStats

    est = b.estimator()
    raw, m = b.raw, len(b.items)
    raw.stats = LMStats()
    reset_state(raw)
    captured: dict = {"lm_s": 0.0, "prompts": [], "prefixes": [], "spans": [], "scores": []}
    inner_judge = raw.true_false_with_statement

    def timed_judge(prompts, prefixes, spans):
        start = time.perf_counter()
        result = inner_judge(prompts, prefixes, spans)
        captured["lm_s"] += time.perf_counter() - start
        captured["prompts"].extend(prompts)
        captured["prefixes"].extend(prefixes)
        captured["spans"].extend(spans)
        captured["scores"].extend(verdict for verdict, _, _ in result)
        return result

    raw.true_false_with_statement = timed_judge
    log(f"verifying {m} facts (ours)")
    try:
        t0 = time.perf_counter()
        decisions = est.verify(b.items)
        secs = time.perf_counter() - t0
    finally:
        raw.true_false_with_statement = inner_judge
    st, lm_s = raw.stats, captured["lm_s"]
    b.prompts, b.prefixes, b.scores = captured["prompts"], captured["prefixes"], captured["scores"]
    b.spans = captured["spans"]
    b.encoded = [raw.prompt_ids(p) for p in b.prompts]
    b.out["ours"] = emit(
        {
            "measure": "verify_ours",
            "facts": m,
            "seconds": round(secs, 3),
            "lm_seconds": round(lm_s, 3),
            "retrieval_and_prompt_s": round(secs - lm_s, 3),
            "facts_per_s": rate(m, secs),
            "s_per_fact": round(secs / m, 4),
            "lm_s_per_fact": round(lm_s / m, 4),
            "prompt_tokens": st.prompt_tokens,
            "evaluated_tokens": st.evaluated_tokens,
            "reused_share": round(1 - st.evaluated_tokens / st.prompt_tokens, 4),
            "mean_prompt_tokens": round(st.prompt_tokens / m, 1),
            "supported": sum(d.is_supported for d in decisions),
        }
    )


def section_variants(b: Bench) -> None:
    """Ours without prefix reuse, and with reuse but the facts in their original order."""
    from factscore_local.lm.base import common_prefix

    raw, m = b.raw, len(b.items)
    log("variant: one full forward pass per fact")
    margins = []
    for ids in b.encoded:
        reset_state(raw)
        start = time.perf_counter()
        margins.append(decide(raw, raw._next_token_logits(ids, 0)))
        b.noreuse_times.append(time.perf_counter() - start)
    secs = sum(b.noreuse_times)
    pairs = list(zip(margins, b.scores, strict=True))
    diffs = [abs((a[0] - a[1]) - (s.true_logit - s.false_logit)) for a, s in pairs]
    agree = sum(((a[0] - a[1]) > 0) == (s.margin > 0) for a, s in pairs)
    b.out["noreuse"] = emit(
        {
            "measure": "verify_ours_no_prefix_reuse",
            "facts": m,
            "lm_seconds": round(secs, 3),
            "facts_per_s": rate(m, secs),
            "lm_s_per_fact": round(secs / m, 4),
            "evaluated_tokens": sum(len(i) for i in b.encoded),
            "prefix_reuse_speedup": round(secs / b.out["ours"]["lm_seconds"], 3),
            "max_abs_margin_diff_vs_ours": round(float(max(diffs)), 5),
            "decisions_agree_with_ours": f"{agree}/{m}",
        }
    )

    log("variant: prefix reuse, facts in their original order")
    reset_state(raw)
    previous: list[int] = []
    evaluated = 0
    start = time.perf_counter()
    for ids in b.encoded:
        reuse = min(common_prefix(previous, ids), len(ids) - 1)
        raw._next_token_logits(ids, reuse)
        evaluated += len(ids) - reuse
        previous = ids
    secs = time.perf_counter() - start
    total = sum(len(i) for i in b.encoded)
    b.out["unsorted"] = emit(
        {
            "measure": "verify_ours_original_order",
            "facts": m,
            "lm_seconds": round(secs, 3),
            "facts_per_s": rate(m, secs),
            "prompt_tokens": total,
            "evaluated_tokens": evaluated,
            "reused_share": round(1 - evaluated / total, 4),
            "sorted_reused_share": b.out["ours"]["reused_share"],
            "sorted_lm_seconds": b.out["ours"]["lm_seconds"],
        }
    )


def section_reference(b: Bench, ref_n: int, ignore_eos: bool) -> None:
    """FActScore's procedure on ref_n facts spread evenly over the M facts (as
    representative of the prompt lengths as the M facts are), with the same passages."""
    from factscore_local.lm.base import LMStats

    raw, m, cfg = b.raw, len(b.items), b.cfg
    ref_idx = [i * m // ref_n for i in range(ref_n)]
    sub = [b.items[i] for i in ref_idx]
    # Ours on the subset alone (less to share than over all M facts).
    reset_state(raw)
    raw.stats = LMStats()
    start = time.perf_counter()
    raw.true_false_with_statement(
        [b.prompts[i] for i in ref_idx],
        [b.prefixes[i] for i in ref_idx],
        [b.spans[i] for i in ref_idx],
    )
    ours_sub_s = time.perf_counter() - start
    log(f"reference procedure on {ref_n} facts (up to {REF_MAX_NEW_TOKENS} new tokens each)")
    ours_per = b.out["ours"]["seconds"] / m
    rows = []
    for j, (title, topic, atom) in enumerate(sub):
        hits = b.ks.search_page(title, f"{topic} {atom}", k=cfg.k, method=cfg.retrieval)
        ids = raw.prompt_ids(
            reference_prompt(topic, atom, [(h.passage.title, h.passage.text) for h in hits])
        )
        ids = ids[-REF_MAX_PROMPT_TOKENS:]
        r = reference_generate(raw, ids, ignore_eos)
        ours = b.scores[ref_idx[j]]
        rows.append(
            emit(
                {
                    "measure": "ref_fact",
                    "i": j,
                    "atom": atom,
                    "ref_prompt_tokens": len(ids),
                    "ref_s": round(r["seconds"], 3),
                    "ref_first_token_s": None
                    if r["first_token_s"] is None
                    else round(r["first_token_s"], 3),
                    "ref_new_tokens": r["new_tokens"],
                    "ref_text": r["text"][:80],
                    "ref_margin": round(r["margin"], 3),
                    "ours_margin": round(float(ours.margin), 3),
                    "ref_supported": r["margin"] > 0,
                    "ours_prompt_tokens": len(b.encoded[ref_idx[j]]),
                    "ours_no_reuse_s": round(b.noreuse_times[ref_idx[j]], 3)
                    if b.noreuse_times
                    else None,
                    "ours_supported": bool(ours.margin > 0),
                    "speedup_vs_ours_mean": round(r["seconds"] / ours_per, 2),
                }
            )
        )
    ref_s = sum(r["ref_s"] for r in rows)
    per = ref_s / ref_n
    ratios = [r["speedup_vs_ours_mean"] for r in rows]
    agree = sum(r["ref_supported"] == r["ours_supported"] for r in rows)
    b.out["ref"] = emit(
        {
            "measure": "verify_reference",
            "facts": ref_n,
            "ignore_eos": ignore_eos,
            "seconds": round(ref_s, 3),
            "facts_per_s": rate(ref_n, ref_s),
            "s_per_fact": round(per, 3),
            "mean_new_tokens": round(sum(r["ref_new_tokens"] for r in rows) / ref_n, 1),
            "mean_first_token_s": round(sum(r["ref_first_token_s"] or 0 for r in rows) / ref_n, 3),
            "ours_s_per_fact_all_m": round(ours_per, 4),
            "ours_lm_s_per_fact_all_m": b.out["ours"]["lm_s_per_fact"],
            "ours_lm_s_per_fact_subset": round(ours_sub_s / ref_n, 4),
            "ours_subset_reused_share": round(
                1 - raw.stats.evaluated_tokens / raw.stats.prompt_tokens, 4
            ),
            "speedup": round(per / ours_per, 2),
            "speedup_lm_only": round(per / b.out["ours"]["lm_s_per_fact"], 2),
            "speedup_per_fact_min": min(ratios),
            "speedup_per_fact_max": max(ratios),
            "decisions_agree_with_ours": f"{agree}/{ref_n}",
        }
    )
    if b.noreuse_times:
        nr = sum(b.noreuse_times[i] for i in ref_idx) / ref_n
        b.out["ref"]["logits_vs_generation_speedup"] = round(per / nr, 2)
        emit(
            {
                "measure": "split_of_gain",
                "ref_s_per_fact": round(per, 3),
                "ours_no_reuse_s_per_fact_subset": round(nr, 4),
                "logits_instead_of_generation": round(per / nr, 2),
                "prefix_reuse": b.out["noreuse"]["prefix_reuse_speedup"],
                "note": "prompts differ (ours: chat template, own wording); compare "
                "ref_prompt_tokens with ours_prompt_tokens",
            }
        )


def section_np(b: Bench) -> None:
    """Each NP scorer with a pass of its own: the causal LM on NP's passages (sharing the
    loaded weights) and the MiniLM encoder with NPM's math. The default, lm-joint, has no
    pass of its own: it is read from the verification pass."""
    from factscore_local.npm.defaults import DEFAULT_NP_MODEL, default_np_threshold
    from factscore_local.pipeline.signals.compute import FactQuery, np_values

    m = len(b.items)
    queries = [FactQuery(*item) for item in b.items]
    b.out["np"] = {}
    for np_model in ("lm", "minilm"):
        threshold = default_np_threshold(np_model)
        est = b.estimator(verifier="np", np_model=np_model, np_threshold=threshold)
        t0 = time.perf_counter()
        est.components.np.get()
        np_load = time.perf_counter() - t0
        reset_state(b.raw)
        log(f"NP ({np_model}) on {m} facts")
        t0 = time.perf_counter()
        probs = np_values(queries, est.components, est.config)
        secs = time.perf_counter() - t0
        b.out["np"][np_model] = emit(
            {
                "measure": f"verify_np_{np_model}",
                "default": np_model == DEFAULT_NP_MODEL,
                "facts": m,
                "seconds": round(secs, 3),
                "facts_per_s": rate(m, secs),
                "s_per_fact": round(secs / m, 4),
                "load_s": round(np_load, 2),
                "supported": int(sum(p > threshold for p in probs)),
            }
        )


def section_trivial(b: Bench) -> None:
    m = len(b.items)
    for verifier in ("always-supported", "always-not-supported", "random"):
        est = b.estimator(verifier=verifier)
        t0 = time.perf_counter()
        est.verify(b.items)
        secs = time.perf_counter() - t0
        emit(
            {
                "measure": f"verify_{verifier}",
                "facts": m,
                "seconds": round(secs, 6),
                "facts_per_s": rate(m, secs),
            }
        )
