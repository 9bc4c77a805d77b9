"""Greedy generation one prompt at a time against parallel sequences, on real prompts.

    python -m scripts.notebook.bench_generation [--sentences 64] [--widths 1,4,16] [--lm NAME]
    python -m scripts.notebook.bench_generation --steady [--widths 1,4,16,32]

The prompts are the decomposition prompts (the project's instruction and demonstrations)
of the first ``--sentences`` sentences of FActScore's labeled ChatGPT dev bios, and, with
``--claims``, as many VeriScore claim-extraction windows of the same bios. Each is run
through llama-cpp-python's ``create_completion`` one at a time (the procedure before
parallel generation, its prefix reused from the previous prompt) and through the
``ParallelGenerator`` at each width, each in a fresh context. Prints seconds per prompt,
generated tokens per second, the speed-up over ``create_completion``, and how many outputs
are identical to its outputs. ``--steady`` measures the generator alone where every
sequence generates the same number of tokens (64, no stop): the throughput of a full batch.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from scripts.common import add_data_option, data_root, labeled_bios, labeled_dir

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def sentences(data: Path, n: int) -> list[str]:
    """The first n distinct sentences of the ChatGPT dev bios."""
    from factscore_local.pipeline.decomposition.sentences import split_sentences

    out: list[str] = []
    for bio in labeled_bios(data, ("ChatGPT",))["ChatGPT"]:
        out += [s.text for s in split_sentences(bio.output) if s.text not in out]
        if len(out) >= n:
            break
    return out[:n]


def decomposition_prompts(lm, texts: list[str]) -> tuple[list[str], int, list[str]]:
    from factscore_local.pipeline.decomposition.decompose import Decomposer

    d = Decomposer(lm)
    return [d.prompt(t) for t in texts], d.max_new_tokens, list(d.stop)


def claim_prompts(lm, data: Path, n: int) -> tuple[list[str], int, list[str]]:
    """VeriScore's claim-extraction prompts of the ChatGPT dev bios (read as responses)."""
    from factscore_local.methods.veriscore.core import paragraphs_of, windows
    from factscore_local.methods.veriscore.pipeline import (
        PASSAGE_MARK,
        extraction_prompt,
        read_responses,
    )
    from factscore_local.pipeline.decomposition.sentences import split_sentences

    prompts: list[str] = []
    for r in read_responses(labeled_dir(data) / "ChatGPT.jsonl"):
        if r.error:
            continue
        split = paragraphs_of(r.response, lambda t: [s.text for s in split_sentences(t)])
        prompts += [lm.chat(extraction_prompt(w.text)) for w in windows(split, r.question)]
        if len(prompts) >= n:
            break
    return prompts[:n], 160, ["\n\n", PASSAGE_MARK]


def one_at_a_time(lm, prompts: list[str], max_new: int, stop: list[str]) -> list[str]:
    from factscore_local.lm.base import cut_at_stop

    out = []
    for p in prompts:
        r = lm.llm.create_completion(p, max_tokens=max_new, temperature=0.0, top_k=1,
                                     repeat_penalty=1.0, stop=stop or None)  # fmt: skip
        out.append(cut_at_stop(r["choices"][0]["text"], stop))
    return out


def parallel(lm, width: int, prompts: list[str], max_new: int, stop: list[str]):
    from factscore_local.lm.base import cut_at_stop
    from factscore_local.lm.llama_parallel import ParallelGenerator

    gen = ParallelGenerator(lm.llm, width, lm.n_ctx)
    try:
        ids = [lm.prompt_ids(p) for p in prompts]
        new = gen.run(ids, max_new, stop, lm._text)
    finally:
        gen.close()
    return [cut_at_stop(lm._text(x), stop) for x in new], sum(map(len, new))


def steady(lm, widths: list[int]) -> None:
    from factscore_local.lm.llama_parallel import ParallelGenerator

    lead = "Numbers in words, one after another. " * 20  # a shared prefix, as demos give
    for width in widths:
        gen = ParallelGenerator(lm.llm, width, lm.n_ctx)
        try:
            ids = [lm.prompt_ids(f"{lead}Count up from {i + 1}:") for i in range(width)]
            gen.run(ids[:1], 1, [], lm._text)  # the shared prefix, evaluated once
            start = time.perf_counter()
            tokens = sum(map(len, gen.run(ids, 64, [], lm._text)))
            s = time.perf_counter() - start
        finally:
            gen.close()
        print(f"steady, width {width}: {tokens} tokens, {tokens / s:.1f} generated tok/s")


def main() -> None:
    from factscore_local.lm.llama_backend import LlamaCppLM
    from factscore_local.model_store import DEFAULT_LM, resolve_lm

    ap = argparse.ArgumentParser(
        prog="python -m scripts.notebook.bench_generation", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--lm", default=DEFAULT_LM)
    add_data_option(ap)
    ap.add_argument("--sentences", type=int, default=64)
    ap.add_argument("--widths", default="1,4,16")
    ap.add_argument("--claims", action="store_true", help="also VeriScore extraction prompts")
    ap.add_argument("--steady", action="store_true", help="full batches of equal outputs only")
    args = ap.parse_args()
    data = data_root(args.data)
    lm = LlamaCppLM(resolve_lm(args.lm), n_ctx=8192, threads=os.cpu_count())
    if args.steady:
        steady(lm, [int(w) for w in args.widths.split(",")])
        return
    sets = {"decomposition": decomposition_prompts(lm, sentences(data, args.sentences))}
    if args.claims:
        sets["claim extraction"] = claim_prompts(lm, data, args.sentences)
    for name, (prompts, max_new, stop) in sets.items():
        lm.llm.reset()
        start = time.perf_counter()
        base = one_at_a_time(lm, prompts, max_new, stop)
        base_s = time.perf_counter() - start
        base_tokens = sum(len(lm.tokenize(x)) for x in base)
        print(f"{name}, {len(prompts)} prompts, {args.lm}, {os.cpu_count()} threads: "
              f"create_completion one at a time {base_s / len(prompts):.2f} s/prompt, "
              f"~{base_tokens / base_s:.1f} generated tok/s")  # fmt: skip
        for width in (int(w) for w in args.widths.split(",")):
            start = time.perf_counter()
            outs, tokens = parallel(lm, width, prompts, max_new, stop)
            s = time.perf_counter() - start
            same = sum(a == b for a, b in zip(outs, base, strict=True))
            print(
                f"  parallel width {width}: {s / len(prompts):.2f} s/prompt, {tokens / s:.1f} "
                f"generated tok/s, {base_s / s:.2f}x; identical outputs {same}/{len(prompts)}"
            )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
