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
SECTIONS = ("decompose", "ref", "variants", "np", "trivial", "pages")


def emit(record: dict) -> dict:
    print(json.dumps(record, ensure_ascii=False), flush=True)
    return record


def log(message: str) -> None:
    print(f"[bench_eval] {message}", file=sys.stderr, flush=True)


def rate(n: float, seconds: float) -> float | None:
    return round(n / seconds, 3) if seconds > 0 else None


def load_bios(path: Path, n: int, ks) -> list[tuple[str, dict]]:
    """(page title, record) of the first n bios that respond (annotated) and whose topic
    the index knows."""
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
            bios.append((title, obj))
    return bios


def take_facts(bios: list[tuple[str, dict]], m: int) -> list[tuple[str, str, str]]:
    """(title, topic, atom) for the first m model atomic facts, bio by bio, in order."""
    from factscore_local.labels.labeled import model_facts

    items = [
        (title, bio["topic"], atom)
        for title, bio in bios
        for _, atom in model_facts(bio["annotations"])
    ]
    return items[:m]


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
    raw.forget()
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


@dataclasses.dataclass
class Bench:
    """What the sections share: one loaded model, the config, the facts, the results."""

    cfg: object  # EvalConfig
    raw: object  # the loaded LocalLM
    ks: object  # KnowledgeSource
    items: list[tuple[str, str, str]]
    bios: list[tuple[str, dict]]
    out: dict = dataclasses.field(default_factory=dict)
    prompts: list[str] = dataclasses.field(default_factory=list)  # ours, as verified
    prefixes: list[str] = dataclasses.field(default_factory=list)  # their shared parts
    spans: list = dataclasses.field(default_factory=list)  # their statements' characters
    encoded: list[list[int]] = dataclasses.field(default_factory=list)
    scores: list = dataclasses.field(default_factory=list)  # ours, TrueFalse per fact
    noreuse_times: list[float] = dataclasses.field(default_factory=list)

    def estimator(self, **changes):
        """An estimator on the loaded model with a fresh memory-only cache: nothing comes
        from earlier runs."""
        from factscore_local.pipeline.estimator import Estimator
        from factscore_local.runtime.cache import ResultCache
        from factscore_local.runtime.components import build_components

        cfg = dataclasses.replace(self.cfg, **changes)
        parts = build_components(cfg, knowledge=self.ks, cache=ResultCache(None), lm=self.raw)
        return Estimator(cfg, parts)


def section_decompose(b: Bench) -> None:
    from factscore_local.lm.base import LMStats
    from factscore_local.pipeline.decompose import load_spacy

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
    from factscore_local.config import DEFAULT_NP_MODEL, default_np_threshold
    from factscore_local.pipeline.signals import FactQuery, np_values

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


PAGE_CLASSES = (("<=5", 1, 5), ("6-20", 6, 20), (">20", 21, 10**9))  # passages on the page


def facts_by_page_length(ks, path: Path, per_class: int) -> dict[str, list]:
    """Per page-length class, up to per_class model facts of the labeled bios whose page
    falls in it (whole bios in file order, the last one cut), as FactQuery with the bio as
    the group."""
    from factscore_local.labels.labeled import model_facts
    from factscore_local.pipeline.signals import FactQuery

    out: dict[str, list] = {name: [] for name, _, _ in PAGE_CLASSES}
    with path.open(encoding="utf-8") as f:
        for line in f:
            bio = json.loads(line)
            title = ks.resolve_title(bio["topic"]).title
            if not bio.get("annotations") or title is None:
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

    from factscore_local.pipeline.inputs import read_bios
    from factscore_local.pipeline.signals import FactQuery

    ks = KnowledgeSource(demo_index)
    bios = [
        bio
        for bio in read_bios(ROOT / "data" / "demo_bios.jsonl")
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
    classes = [(name, b, qs) for name, qs in facts_by_page_length(b.ks, DATA, per_class).items()]
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


def summary_lines(b: Bench, info: dict, digest: str, peak_mb: float) -> list[str]:
    out, m = b.out, len(b.items)
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
    for name, r in out.get("page_lengths", {}).items():
        ref = (
            f", reference {r['reference_s_per_fact']} s/fact" if "reference_s_per_fact" in r else ""
        )
        modes = ", ".join(
            f"{m} {r[m]['s_per_fact']} s/fact"
            + (f" (as per-fact {r[m]['decisions_same_as_per_fact']})"
               if "decisions_same_as_per_fact" in r[m] else "")
            for m in ("per-fact", "shared", "page") if m in r
        )  # fmt: skip
        lines.append(f"pages {name} passages ({r['facts']} facts, {r['bios']} bios): {modes}{ref}")
    lines.append(f"peak RSS {peak_mb:.0f} MB")
    return lines


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from factscore_local.config import DEFAULTS

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
    ap.add_argument(
        "--page-facts",
        type=int,
        default=40,
        help="facts per page-length class (<=5, 6-20, >20 passages) for the evidence modes",
    )
    ap.add_argument(
        "--page-ref-facts", type=int, default=2, help="of those, for the reference procedure"
    )
    ap.add_argument("--evidence-budget", type=int, default=DEFAULTS["evidence_budget"])
    ap.add_argument("--page-modes", default="per-fact,shared,page", help="evidence modes to time")
    ap.add_argument(
        "--demo-index",
        type=Path,
        default=None,
        help="the demo's index (fscore demo): its long pages' demo facts as one more class",
    )
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--skip", default="", help=f"comma-separated sections to skip: {SECTIONS}")
    args = ap.parse_args(argv)
    args.skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if args.skip - set(SECTIONS):
        ap.error(f"unknown --skip sections: {sorted(args.skip - set(SECTIONS))}")
    args.ref_n = min(args.facts, 8) if args.ref_facts is None else args.ref_facts
    if args.ref_n == 0:
        args.skip.add("ref")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from factscore_local.index.reader import KnowledgeSource

    from factscore_local.config import build_config
    from factscore_local.lm import load_lm
    from factscore_local.model_store import resolve_lm

    cfg = build_config(
        {"index": args.index, "lm": args.lm, "backend": args.backend, "verifier": "retrieve-lm",
         "retrieval": "bm25", "k": 5, "cache": None, "threads": args.threads,
         "evidence_budget": args.evidence_budget}
    )  # fmt: skip
    lm_path = resolve_lm(args.lm)
    t0 = time.perf_counter()
    raw = load_lm(args.lm, args.backend, threads=args.threads)
    load_s = time.perf_counter() - t0
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
    ks = KnowledgeSource(args.index)
    bios = load_bios(args.data, args.bios, ks)
    items = take_facts(bios, args.facts)
    if len(items) < args.facts:
        log(f"only {len(items)} facts in {len(bios)} bios (asked for {args.facts})")
    if not items:
        raise SystemExit("no facts to verify")
    digest = hashlib.sha256(json.dumps(items).encode()).hexdigest()[:12]
    ref_n = min(args.ref_n, len(items))
    emit(
        {
            "measure": "facts",
            "bios": [bio["topic"] for _, bio in bios],
            "n_facts": len(items),
            "ref_facts": ref_n,
            "facts_digest": digest,
        }
    )
    b = Bench(cfg=cfg, raw=raw, ks=ks, items=items, bios=bios)
    if "decompose" not in args.skip:
        section_decompose(b)
    section_ours(b)
    if "variants" not in args.skip:
        section_variants(b)
    if "ref" not in args.skip:
        section_reference(b, ref_n, args.ref_ignore_eos)
    if "np" not in args.skip:
        section_np(b)
    if "trivial" not in args.skip:
        section_trivial(b)
    if "pages" not in args.skip:
        modes = tuple(args.page_modes.split(","))
        section_page_lengths(b, args.page_facts, args.page_ref_facts, modes, args.demo_index)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    emit({"measure": "peak_rss", "mb": round(peak_mb, 1), "loadavg_1m": os.getloadavg()[0]})
    lines = summary_lines(b, info, digest, peak_mb)
    print("\n" + "\n".join(f"# {line}" for line in lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
