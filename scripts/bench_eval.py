"""Benchmark `fscore eval`'s model stages against FActScore's own verification procedure.

Everything runs with one model, on the same facts, in one process:

1. decomposition: ``Decomposer.run_many`` on the first N responding bios of the labeled
   ChatGPT dev file (facts/s, sentences/s, generated tokens/s);
2. verification, ours: ``Estimator.verify`` (retrieve-lm, BM25 k=5) on M facts taken from
   those bios' ``model-atomic-facts``, bio by bio (facts/s, prompt vs evaluated tokens);
3. the reference procedure on the first R of those facts with the same passages: its
   prompt, evaluated from scratch and generating up to 128 tokens greedily, unbatched;
4. variants of ours on the same prompts: one full forward pass per fact (no prefix reuse),
   and prefix reuse with the facts in their original order instead of sorted;
5. NP (MiniLM stand-in) and the trivial verifiers on the same facts;
6. peak RSS and the machine.

Every model result goes through a fresh memory-only cache, so nothing comes from earlier
runs. Output: one JSON line per measurement on stdout, then a summary (lines starting
with "#"); progress goes to stderr.

    python scripts/bench_eval.py --index dev-index --lm qwen2.5-coder-0.5b-instruct-q4_k_m \
        --bios 1 --facts 12 --ref-facts 3
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import platform
import resource
import string
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "factscore" / "labeled-dev" / "ChatGPT.jsonl"
REF_MAX_NEW_TOKENS = 128  # the reference's Inst-LLaMA path: max_length = len(prompt) + 128
REF_MAX_PROMPT_TOKENS = 2048 - 128  # and its left truncation of the prompt
SECTIONS = ("decompose", "ref", "variants", "np", "trivial")


def emit(record: dict) -> dict:
    print(json.dumps(record, ensure_ascii=False), flush=True)
    return record


def log(message: str) -> None:
    print(f"[bench_eval] {message}", file=sys.stderr, flush=True)


def rate(n: float, seconds: float) -> float | None:
    return round(n / seconds, 3) if seconds > 0 else None


def load_bios(path: Path, n: int, ks) -> list[dict]:
    """The first n bios that respond (annotated) and whose topic the index knows."""
    bios = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if len(bios) >= n:
                break
            obj = json.loads(line)
            if not obj.get("annotations"):
                continue  # an abstention: no facts, and eval would not decompose it
            title = ks.resolve_title(obj["topic"]).title
            if title is None:
                log(f"skipping {obj['topic']!r}: not in the index")
                continue
            obj["_title"] = title
            bios.append(obj)
    return bios


def take_facts(bios: list[dict], m: int) -> list[tuple[str, str, str]]:
    """(title, topic, atom) for the first m model atomic facts, bio by bio, in order."""
    items = []
    for bio in bios:
        for sent in bio["annotations"]:
            for atom in sent.get("model-atomic-facts") or []:
                if len(items) < m:
                    items.append((bio["_title"], bio["topic"], atom["text"]))
    return items


def reference_prompt(topic: str, atom: str, passages: list[tuple[str, str]]) -> str:
    """FActScore's Retrieve→LM prompt, built as factscorer.py builds it (then stripped)."""
    definition = f"Answer the question about {topic} based on the given context.\n\n"
    context = ""
    for title, text in reversed(passages):
        context += "Title: {}\nText: {}\n\n".format(
            title, text.replace("<s>", "").replace("</s>", "")
        )
    definition += context.strip()
    if definition[-1] not in string.punctuation:
        definition += "."
    return f"{definition.strip()}\n\nInput: {atom.strip()} True or False?\nOutput:".strip()


def reset_state(raw) -> None:
    """Forget the backend's KV cache, so the next prompt is evaluated from scratch."""
    if hasattr(raw, "llm"):
        raw.llm.reset()
    else:
        raw._cache = None
        raw._cached_len = 0


def decide(raw, logits) -> tuple[float, float]:
    true_ids, false_ids = raw.label_ids()
    return max(float(logits[t]) for t in true_ids), max(float(logits[t]) for t in false_ids)


def reference_generate(raw, ids: list[int], ignore_eos: bool = False) -> dict:
    """Greedy generation of up to 128 tokens from a fresh state, no stop string; the
    decision is read from the first step's logits, as the reference does. Generation ends
    at the model's end token unless ``ignore_eos`` (then always 128 tokens: the worst case)."""
    reset_state(raw)
    t0 = time.perf_counter()
    if hasattr(raw, "llm"):
        import numpy as np

        llm, lib = raw.llm, raw._lib
        first_s, n_new, scores = None, 0, None
        tokens = llm.generate(
            ids, top_k=1, top_p=1.0, min_p=0.0, temp=0.0, repeat_penalty=1.0, reset=True
        )
        # An end token counts as generated, as it does in transformers' generate.
        new: list[int] = []
        for n_new, token in enumerate(tokens, start=1):
            new.append(token)
            if first_s is None:
                first_s = time.perf_counter() - t0
                pointer = lib.llama_get_logits_ith(llm._ctx.ctx, -1)
                scores = decide(raw, np.ctypeslib.as_array(pointer, shape=(llm.n_vocab(),)))
            eog = lib.llama_vocab_is_eog(llm._model.vocab, token) and not ignore_eos
            if eog or n_new >= REF_MAX_NEW_TOKENS:
                break
        text = llm.detokenize(new).decode("utf-8", "ignore")
    else:
        import torch
        from transformers import LogitsProcessor, LogitsProcessorList

        marks: list[float] = []

        class Mark(LogitsProcessor):
            def __call__(self, input_ids, scores):
                marks.append(time.perf_counter())
                return scores

        tensor = torch.tensor([ids])
        tok = raw.tokenizer
        with torch.inference_mode():
            out = raw.model.generate(
                tensor,
                attention_mask=torch.ones_like(tensor),
                max_new_tokens=REF_MAX_NEW_TOKENS,
                min_new_tokens=REF_MAX_NEW_TOKENS if ignore_eos else None,
                do_sample=False,
                num_beams=1,
                output_scores=True,
                return_dict_in_generate=True,
                pad_token_id=tok.pad_token_id or tok.eos_token_id,
                logits_processor=LogitsProcessorList([Mark()]),
            )
        first_s = marks[0] - t0 if marks else None
        new = out.sequences[0, len(ids) :].tolist()
        n_new = len(new)
        text = tok.decode(new)
        scores = decide(raw, out.scores[0][0])
    total = time.perf_counter() - t0
    return {
        "seconds": total,
        "first_token_s": first_s,
        "new_tokens": n_new,
        "margin": float(scores[0] - scores[1]),
        "text": text,
    }


def machine(raw, lm_path: Path) -> dict:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    threads = getattr(getattr(raw, "llm", None), "n_threads", None)
    if threads is None and hasattr(raw, "torch"):
        threads = raw.torch.get_num_threads()
    versions = {}
    for mod in ("llama_cpp", "torch", "transformers"):
        if mod in sys.modules:
            versions[mod] = getattr(sys.modules[mod], "__version__", "?")
    return {
        "nproc": os.cpu_count(),
        "loadavg_1m_at_start": os.getloadavg()[0],
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu": cpu,
        "python": platform.python_version(),
        "backend": raw.backend,
        "threads": threads,
        "model_file": lm_path.name,
        "model_bytes": lm_path.stat().st_size if lm_path.is_file() else None,
        "versions": versions,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--lm", default=None, help="embedded model name, GGUF file or HF directory")
    ap.add_argument("--backend", default="auto", choices=("auto", "llama.cpp", "transformers"))
    ap.add_argument("--bios", type=int, default=3, help="N: bios to decompose, facts from")
    ap.add_argument("--facts", type=int, default=50, help="M: facts to verify")
    ap.add_argument(
        "--ref-facts",
        type=int,
        default=None,
        help="R: facts for the reference "
        "procedure, the first R of the M (default min(M, 8); 0 skips it)",
    )
    ap.add_argument(
        "--ref-ignore-eos",
        action="store_true",
        help="reference: always generate 128 tokens (default: stop at the end token)",
    )
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--skip", default="", help=f"comma-separated sections to skip: {SECTIONS}")
    args = ap.parse_args(argv)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if skip - set(SECTIONS):
        ap.error(f"unknown --skip sections: {sorted(skip - set(SECTIONS))}")
    ref_n = min(args.facts, 8) if args.ref_facts is None else args.ref_facts
    if ref_n == 0:
        skip.add("ref")

    from factscore_local.cache import ResultCache
    from factscore_local.decompose import load_spacy
    from factscore_local.estimator import CachedLM, Estimator, EvalConfig, model_identity
    from factscore_local.lm import load_lm
    from factscore_local.lm.base import LMStats, common_prefix
    from factscore_local.model_store import resolve_lm

    cfg = EvalConfig(
        index=args.index,
        lm=args.lm,
        backend=args.backend,
        verifier="retrieve-lm",
        retrieval="bm25",
        k=5,
        cache=None,
        threads=args.threads,
    )
    est = Estimator(cfg)
    lm_path = resolve_lm(args.lm)
    t0 = time.perf_counter()
    raw = load_lm(args.lm, args.backend, threads=args.threads)
    load_s = time.perf_counter() - t0
    identity = model_identity(lm_path, raw.backend)

    def fresh_cache() -> None:
        est.cache = ResultCache(None)
        est._lm = CachedLM(raw, est.cache, identity)
        est._decomposer = None

    fresh_cache()
    t0 = time.perf_counter()
    reset_state(raw)
    raw._next_token_logits(raw.prompt_ids("Hello"), 0)  # pages the weights in
    warm_s = time.perf_counter() - t0
    info = emit(
        {
            "measure": "machine",
            **machine(raw, lm_path),
            "load_s": round(load_s, 2),
            "warmup_s": round(warm_s, 2),
        }
    )

    bios = load_bios(args.data, args.bios, est.ks)
    items = take_facts(bios, args.facts)
    if len(items) < args.facts:
        log(f"only {len(items)} facts in {len(bios)} bios (asked for {args.facts})")
    m = len(items)
    if m == 0:
        raise SystemExit("no facts to verify")
    ref_n = min(ref_n, m)
    digest = hashlib.sha256(json.dumps(items).encode()).hexdigest()[:12]
    emit(
        {
            "measure": "facts",
            "bios": [b["topic"] for b in bios],
            "n_facts": m,
            "ref_facts": ref_n,
            "facts_digest": digest,
        }
    )
    out: dict[str, dict] = {}

    # 1. decomposition -------------------------------------------------------------------
    if "decompose" not in skip:
        t0 = time.perf_counter()
        load_spacy()
        decomposer = est.decomposer()  # demos and their BM25 index
        setup_s = time.perf_counter() - t0
        raw.stats = LMStats()
        reset_state(raw)
        log(f"decomposing {len(bios)} bios")
        t0 = time.perf_counter()
        results = decomposer.run_many([b["output"] for b in bios])
        secs = time.perf_counter() - t0
        n_sent = sum(len(r) for r in results)
        n_facts = sum(len(fs) for r in results for _, fs in r)
        gen = raw.stats.generated_tokens
        out["decompose"] = emit(
            {
                "measure": "decompose",
                "bios": len(bios),
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

    # 2. verification, ours ------------------------------------------------------------------
    fresh_cache()
    raw.stats = LMStats()
    reset_state(raw)
    captured: dict = {}
    inner_true_false = raw.true_false

    def timed_true_false(prompts):
        start = time.perf_counter()
        result = inner_true_false(prompts)
        captured["lm_s"] = captured.get("lm_s", 0.0) + time.perf_counter() - start
        captured.setdefault("prompts", []).extend(prompts)
        captured.setdefault("scores", []).extend(result)
        return result

    raw.true_false = timed_true_false
    log(f"verifying {m} facts (ours)")
    t0 = time.perf_counter()
    decisions = est.verify(items)
    secs = time.perf_counter() - t0
    raw.true_false = inner_true_false
    st = raw.stats
    prompts, ours_scores = captured["prompts"], captured["scores"]
    lm_s = captured["lm_s"]
    out["ours"] = emit(
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
            "supported": sum(d["is_supported"] for d in decisions),
        }
    )
    encoded = [raw.prompt_ids(p) for p in prompts]

    # 4. variants of ours ----------------------------------------------------------------------
    noreuse_times: list[float] = []
    if "variants" not in skip:
        log("variant: one full forward pass per fact")
        margins = []
        for ids in encoded:
            reset_state(raw)
            start = time.perf_counter()
            margins.append(decide(raw, raw._next_token_logits(ids, 0)))
            noreuse_times.append(time.perf_counter() - start)
        secs = sum(noreuse_times)
        diffs = [
            abs((a[0] - a[1]) - (b.true_logit - b.false_logit))
            for a, b in zip(margins, ours_scores, strict=True)
        ]
        agree = sum(
            ((a[0] - a[1]) > 0) == (b.margin > 0) for a, b in zip(margins, ours_scores, strict=True)
        )
        out["noreuse"] = emit(
            {
                "measure": "verify_ours_no_prefix_reuse",
                "facts": m,
                "lm_seconds": round(secs, 3),
                "facts_per_s": rate(m, secs),
                "lm_s_per_fact": round(secs / m, 4),
                "evaluated_tokens": sum(len(i) for i in encoded),
                "prefix_reuse_speedup": round(secs / lm_s, 3),
                "max_abs_margin_diff_vs_ours": round(float(max(diffs)), 5),
                "decisions_agree_with_ours": f"{agree}/{m}",
            }
        )

        log("variant: prefix reuse, facts in their original order")
        reset_state(raw)
        previous: list[int] = []
        evaluated = 0
        start = time.perf_counter()
        for ids in encoded:
            reuse = min(common_prefix(previous, ids), len(ids) - 1)
            raw._next_token_logits(ids, reuse)
            evaluated += len(ids) - reuse
            previous = ids
        secs = time.perf_counter() - start
        total = sum(len(i) for i in encoded)
        out["unsorted"] = emit(
            {
                "measure": "verify_ours_original_order",
                "facts": m,
                "lm_seconds": round(secs, 3),
                "facts_per_s": rate(m, secs),
                "prompt_tokens": total,
                "evaluated_tokens": evaluated,
                "reused_share": round(1 - evaluated / total, 4),
                "sorted_reused_share": out["ours"]["reused_share"],
                "sorted_lm_seconds": out["ours"]["lm_seconds"],
            }
        )

    # 3. the reference procedure ---------------------------------------------------------------
    if "ref" not in skip:
        # Facts spread evenly over the M facts, so the subset is as representative of the
        # prompt lengths (pages with one passage or many) as the M facts are.
        ref_idx = [i * m // ref_n for i in range(ref_n)]
        sub = [items[i] for i in ref_idx]
        # Ours on the subset alone (less to share than over all M facts).
        reset_state(raw)
        raw.stats = LMStats()
        start = time.perf_counter()
        raw.true_false([prompts[i] for i in ref_idx])
        ours_sub_s = time.perf_counter() - start
        log(f"reference procedure on {ref_n} facts (up to {REF_MAX_NEW_TOKENS} new tokens each)")
        rows = []
        for j, (title, topic, atom) in enumerate(sub):
            hits = est.ks.search_page(title, f"{topic} {atom}", k=cfg.k, method=cfg.retrieval)
            ids = raw.prompt_ids(
                reference_prompt(topic, atom, [(h.passage.title, h.passage.text) for h in hits])
            )
            ids = ids[-REF_MAX_PROMPT_TOKENS:]
            r = reference_generate(raw, ids, args.ref_ignore_eos)
            row = emit(
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
                    "ours_margin": round(float(ours_scores[ref_idx[j]].margin), 3),
                    "ref_supported": r["margin"] > 0,
                    "ours_prompt_tokens": len(encoded[ref_idx[j]]),
                    "ours_no_reuse_s": round(noreuse_times[ref_idx[j]], 3)
                    if noreuse_times
                    else None,
                    "ours_supported": bool(ours_scores[ref_idx[j]].margin > 0),
                    "speedup_vs_ours_mean": round(r["seconds"] / (out["ours"]["seconds"] / m), 2),
                }
            )
            rows.append(row)
        ref_s = sum(r["ref_s"] for r in rows)
        per = ref_s / ref_n
        ours_per = out["ours"]["seconds"] / m
        ratios = [r["speedup_vs_ours_mean"] for r in rows]
        agree = sum(r["ref_supported"] == r["ours_supported"] for r in rows)
        out["ref"] = emit(
            {
                "measure": "verify_reference",
                "facts": ref_n,
                "ignore_eos": args.ref_ignore_eos,
                "seconds": round(ref_s, 3),
                "facts_per_s": rate(ref_n, ref_s),
                "s_per_fact": round(per, 3),
                "mean_new_tokens": round(sum(r["ref_new_tokens"] for r in rows) / ref_n, 1),
                "mean_first_token_s": round(
                    sum(r["ref_first_token_s"] or 0 for r in rows) / ref_n, 3
                ),
                "ours_s_per_fact_all_m": round(ours_per, 4),
                "ours_lm_s_per_fact_all_m": out["ours"]["lm_s_per_fact"],
                "ours_lm_s_per_fact_subset": round(ours_sub_s / ref_n, 4),
                "ours_subset_reused_share": round(
                    1 - raw.stats.evaluated_tokens / raw.stats.prompt_tokens, 4
                ),
                "speedup": round(per / ours_per, 2),
                "speedup_lm_only": round(per / out["ours"]["lm_s_per_fact"], 2),
                "speedup_per_fact_min": min(ratios),
                "speedup_per_fact_max": max(ratios),
                "decisions_agree_with_ours": f"{agree}/{ref_n}",
            }
        )
        if noreuse_times:
            nr = sum(noreuse_times[i] for i in ref_idx) / ref_n
            out["ref"]["logits_vs_generation_speedup"] = round(per / nr, 2)
            emit(
                {
                    "measure": "split_of_gain",
                    "ref_s_per_fact": round(per, 3),
                    "ours_no_reuse_s_per_fact_subset": round(nr, 4),
                    "logits_instead_of_generation": round(per / nr, 2),
                    "prefix_reuse": out["noreuse"]["prefix_reuse_speedup"],
                    "note": "prompts differ (ours: chat template, own wording); compare "
                    "ref_prompt_tokens with ours_prompt_tokens",
                }
            )

    # 5. NP and the trivial verifiers -----------------------------------------------------------
    if "np" not in skip:
        # Each NP scorer alone: the default (the causal LM, sharing the loaded weights) and
        # the MiniLM encoder with NPM's math.
        from factscore_local.estimator import DEFAULT_NP_MODEL, default_np_threshold

        out["np"] = {}
        for np_model in dict.fromkeys((DEFAULT_NP_MODEL, "lm", "minilm")):
            threshold = default_np_threshold(np_model)
            est.config = dataclasses.replace(
                cfg, verifier="np", np_model=np_model, np_threshold=threshold
            )
            est._np = None
            t0 = time.perf_counter()
            est.np_scorer()
            np_load = time.perf_counter() - t0
            fresh_cache()
            reset_state(raw)
            log(f"NP ({np_model}) on {m} facts")
            t0 = time.perf_counter()
            probs = est.np_probabilities(items)
            secs = time.perf_counter() - t0
            out["np"][np_model] = emit(
                {
                    "measure": f"verify_np_{np_model}",
                    "default": np_model == DEFAULT_NP_MODEL,
                    "facts": m,
                    "seconds": round(secs, 3),
                    "facts_per_s": rate(m, secs),
                    "s_per_fact": round(secs / m, 4),
                    "load_s": round(np_load, 2),
                    "supported": sum(p > threshold for p in probs),
                }
            )
        est.config = cfg
    if "trivial" not in skip:
        for verifier in ("always-supported", "always-not-supported", "random"):
            est.config = dataclasses.replace(cfg, verifier=verifier)
            t0 = time.perf_counter()
            est.verify(items)
            secs = time.perf_counter() - t0
            emit(
                {
                    "measure": f"verify_{verifier}",
                    "facts": m,
                    "seconds": round(secs, 6),
                    "facts_per_s": rate(m, secs),
                }
            )
        est.config = cfg

    # 6. memory ------------------------------------------------------------------------------
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    emit({"measure": "peak_rss", "mb": round(peak_mb, 1), "loadavg_1m": os.getloadavg()[0]})

    # summary --------------------------------------------------------------------------------
    lines = [
        f"{info['model_file']} ({info['model_bytes'] or 0:,} B), {info['backend']}, "
        f"{info['threads']} threads on {info['nproc']} CPUs; facts {digest}",
    ]
    if "decompose" in out:
        d = out["decompose"]
        lines.append(
            f"decompose: {d['bios']} bios, {d['sentences']} sentences -> "
            f"{d['facts']} facts in {d['seconds']} s = {d['facts_per_s']} facts/s, "
            f"{d['sentences_per_s']} sentences/s, {d['gen_tokens_per_s']} gen tok/s"
        )
    o = out["ours"]
    lines.append(
        f"verify ours: {m} facts in {o['seconds']} s = {o['facts_per_s']} facts/s "
        f"({o['s_per_fact']} s/fact, LM {o['lm_s_per_fact']} s/fact); prefix reuse "
        f"skipped {o['reused_share']:.1%} of {o['prompt_tokens']} prompt tokens"
    )
    if "noreuse" in out:
        n, u = out["noreuse"], out["unsorted"]
        lines.append(
            f"  no prefix reuse: {n['facts_per_s']} facts/s (reuse is "
            f"{n['prefix_reuse_speedup']}x); original order: reuse share "
            f"{u['reused_share']:.1%} vs sorted {u['sorted_reused_share']:.1%}, "
            f"{u['lm_seconds']} s vs {u['sorted_lm_seconds']} s"
        )
    if "ref" in out:
        r = out["ref"]
        lines.append(
            f"reference: {r['facts']} facts, {r['s_per_fact']} s/fact "
            f"({r['mean_new_tokens']} new tokens, first token at "
            f"{r['mean_first_token_s']} s) -> ours is {r['speedup']}x faster "
            f"(LM only {r['speedup_lm_only']}x; per fact {r['speedup_per_fact_min']}"
            f"-{r['speedup_per_fact_max']}x); decisions agree "
            f"{r['decisions_agree_with_ours']}"
        )
        if "logits_vs_generation_speedup" in r:
            lines.append(
                f"  gain split: logits instead of generation "
                f"{r['logits_vs_generation_speedup']}x, prefix reuse "
                f"{out['noreuse']['prefix_reuse_speedup']}x"
            )
    for np_model, r in out.get("np", {}).items():
        lines.append(
            f"NP ({np_model}{', default' * r['default']}): {r['facts_per_s']} facts/s "
            f"(load {r['load_s']} s)"
        )
    lines.append(f"peak RSS {peak_mb:.0f} MB")
    print("\n" + "\n".join(f"# {line}" for line in lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
