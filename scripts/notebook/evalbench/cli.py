"""The command line of the eval benchmark: ``python -m scripts.notebook.bench_eval``."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

from scripts.common import (
    Stopwatch,
    add_data_option,
    data_root,
    flatten,
    peak_rss_mb,
    results_record,
    write_results,
)
from scripts.notebook.evalbench.bench import Bench, backend_info, emit, load_bios, log, take_facts
from scripts.notebook.evalbench.pages import section_page_lengths
from scripts.notebook.evalbench.reference import reset_state
from scripts.notebook.evalbench.sections import (
    section_decompose,
    section_np,
    section_ours,
    section_reference,
    section_trivial,
    section_variants,
)

SECTIONS = ("decompose", "ref", "variants", "np", "trivial", "pages")


def summary_lines(b: Bench, info: dict, digest: str, peak_mb: float) -> list[str]:
    out, m = b.out, len(b.items)
    lines = [
        f"{info['model_file']} ({info['model_bytes'] or 0:,} B), {info['backend']}, "
        f"{info['threads']} threads on {info['cores']} CPUs; facts {digest}",
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
    from scripts.notebook import evalbench

    ap = argparse.ArgumentParser(
        prog="python -m scripts.notebook.bench_eval",
        description=evalbench.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
    add_data_option(ap)
    ap.add_argument(
        "--results",
        default=None,
        metavar="NAME",
        help="also write the figures to scripts/results/NAME.json",
    )
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
    argv = list(sys.argv[1:] if argv is None else argv)
    data = data_root(args.data)
    watch = Stopwatch()
    from factscore_local.config import build_config
    from factscore_local.index.reader import KnowledgeSource
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
            **backend_info(raw, lm_path),
            "load_s": round(load_s, 2),
            "warmup_s": round(warm_s, 2),
        }
    )
    ks = KnowledgeSource(args.index)
    bios = load_bios(data, args.bios, ks)
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
    b = Bench(cfg=cfg, raw=raw, ks=ks, items=items, bios=bios, data=data)
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
    peak_mb = peak_rss_mb()
    emit({"measure": "peak_rss", "mb": round(peak_mb, 1), "loadavg_1m": os.getloadavg()[0]})
    lines = summary_lines(b, info, digest, peak_mb)
    print("\n" + "\n".join(f"# {line}" for line in lines), flush=True)
    if args.results:
        used = {
            "labeled": "factscore/labeled-dev/ChatGPT.jsonl",
            "bios": [bio["topic"] for _, bio in bios],
            "facts": len(items),
            "facts_digest": digest,
        }
        record = results_record(
            args.results,
            "scripts.notebook.bench_eval",
            argv,
            used,
            flatten(b.out),
            watch,
            backend=info,
        )
        log(f"wrote {write_results(record)}")
    return 0
