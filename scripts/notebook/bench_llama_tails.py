"""Where a verification's time goes on the CPU: the per-fact tail after a shared prefix.

    python -m scripts.notebook.bench_llama_tails [--lm qwen2.5-coder-1.5b-instruct-q4_k_m]

A verification prompt is a shared prefix (instruction and evidence, evaluated once per
block) and a tail of ~25 tokens per fact (the statement, the question, the chat
template's end). This measures the tails' throughput as the estimator runs them (one
after another, the cache rewound to the prefix after each), and two ways to run them
faster: all threads on one sequence against one thread each in two processes, and several
tails decoded as parallel sequences of one batch (llama.cpp's unified KV cache, the
prefix copied to each sequence), with how far each batched tail's logits are from its
solo evaluation. Prints one line per measurement.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

PREFIX_TOKENS = 1000
N_TAILS = 24


def _texts() -> tuple[str, list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    words = text.split()
    tails = [
        "\n\nStatement: " + " ".join(words[i * 9 : i * 9 + 12]) + ". True or False?"
        for i in range(N_TAILS)
    ]
    return text[:8000], tails


def _load(path: str, threads: int, n_seq: int = 1):
    import llama_cpp
    from llama_cpp import _internals

    llm = llama_cpp.Llama(model_path=path, n_ctx=4096, n_batch=512, n_threads=threads,
                          n_threads_batch=threads, verbose=False)  # fmt: skip
    params = llm.context_params
    params.n_seq_max, params.kv_unified = n_seq, True
    ctx = _internals.LlamaContext(model=llm._model, params=params, verbose=False)
    return llm, ctx


class Batch:
    """A llama_batch filled with (tokens, first position, sequence) runs, logits at every
    token."""

    def __init__(self, n_seq: int) -> None:
        import llama_cpp

        self.lib = llama_cpp
        self.batch = llama_cpp.llama_batch_init(4096, 0, n_seq)

    def decode(self, ctx, runs: list[tuple[list[int], int, int]]) -> None:
        b, n = self.batch, 0
        for tokens, first, seq in runs:
            for j, token in enumerate(tokens):
                b.token[n], b.pos[n], b.n_seq_id[n] = token, first + j, 1
                b.seq_id[n][0], b.logits[n] = seq, True
                n += 1
        b.n_tokens = n
        if self.lib.llama_decode(ctx.ctx, b) != 0:
            raise RuntimeError("llama_decode failed")


def _logits(lib, ctx, i: int, n_vocab: int) -> np.ndarray:
    return np.ctypeslib.as_array(lib.llama_get_logits_ith(ctx.ctx, i), shape=(n_vocab,)).copy()


def sequential(path: str, threads: int, queue=None) -> dict:
    """Tails one after another on one sequence, as the estimator runs them."""
    llm, ctx = _load(path, threads)
    prefix_text, tail_texts = _texts()
    prefix = llm.tokenize(prefix_text.encode(), add_bos=False)[:PREFIX_TOKENS]
    tails = [llm.tokenize(t.encode(), add_bos=False) for t in tail_texts]
    batch = Batch(1)
    memory = batch.lib.llama_get_memory(ctx.ctx)
    start = time.perf_counter()
    for s in range(0, len(prefix), 512):
        batch.decode(ctx, [(prefix[s : s + 512], s, 0)])
    prefix_s = time.perf_counter() - start
    start = time.perf_counter()
    for tail in tails:
        batch.lib.llama_memory_seq_rm(memory, 0, len(prefix), -1)
        batch.decode(ctx, [(tail, len(prefix), 0)])
    tails_s = time.perf_counter() - start
    out = {"threads": threads, "prefix_tok_s": len(prefix) / prefix_s,
           "tail_tokens": sum(map(len, tails)), "tails_s": tails_s}  # fmt: skip
    if queue is not None:
        queue.put(out)
    return out


def batched(path: str, threads: int, width: int) -> dict:
    """The same tails, ``width`` at a time as parallel sequences sharing the prefix."""
    llm, ctx = _load(path, threads, n_seq=width + 1)
    lib = Batch(1).lib
    prefix_text, tail_texts = _texts()
    prefix = llm.tokenize(prefix_text.encode(), add_bos=False)[:PREFIX_TOKENS]
    tails = [llm.tokenize(t.encode(), add_bos=False) for t in tail_texts]
    n_vocab, p = llm.n_vocab(), len(prefix)
    batch = Batch(width + 1)
    memory = lib.llama_get_memory(ctx.ctx)
    for s in range(0, p, 512):
        batch.decode(ctx, [(prefix[s : s + 512], s, 0)])
    solo = []
    for tail in tails:
        lib.llama_memory_seq_rm(memory, 0, p, -1)
        batch.decode(ctx, [(tail, p, 0)])
        solo.append(_logits(lib, ctx, len(tail) - 1, n_vocab))
    lib.llama_memory_seq_rm(memory, 0, p, -1)
    diffs, start = [], time.perf_counter()
    for g in range(0, len(tails), width):
        group = tails[g : g + width]
        for seq in range(1, len(group) + 1):
            lib.llama_memory_seq_cp(memory, 0, seq, 0, p)
        batch.decode(ctx, [(tail, p, seq + 1) for seq, tail in enumerate(group)])
        end = 0
        for j, tail in enumerate(group):
            end += len(tail)
            diffs.append(float(np.abs(_logits(lib, ctx, end - 1, n_vocab) - solo[g + j]).max()))
        for seq in range(1, len(group) + 1):
            lib.llama_memory_seq_rm(memory, seq, -1, -1)
    return {"width": width, "tails_s": time.perf_counter() - start,
            "tail_tokens": sum(map(len, tails)), "max_diff_first": max(diffs[::width]),
            "max_diff_others": max(d for i, d in enumerate(diffs) if i % width)}  # fmt: skip


def main() -> None:
    from factscore_local.model_store import DEFAULT_LM, resolve_lm

    ap = argparse.ArgumentParser(
        prog="python -m scripts.notebook.bench_llama_tails", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--lm", default=DEFAULT_LM)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    path = str(resolve_lm(args.lm))
    base = sequential(path, args.threads)
    rate = base["tail_tokens"] / base["tails_s"]
    print(f"{args.lm}, {args.threads} threads: prefix {base['prefix_tok_s']:.0f} tok/s; tails "
          f"{rate:.0f} tok/s, {base['tails_s'] / N_TAILS:.3f} s per tail of "
          f"{base['tail_tokens'] / N_TAILS:.1f} tokens")  # fmt: skip
    queue = multiprocessing.get_context("spawn").Queue()
    procs = [multiprocessing.get_context("spawn").Process(target=sequential,
             args=(path, 1, queue)) for _ in range(args.threads)]  # fmt: skip
    start = time.perf_counter()
    for proc in procs:
        proc.start()
    results = [queue.get() for _ in procs]
    for proc in procs:
        proc.join()
    combined = sum(r["tail_tokens"] / r["tails_s"] for r in results)
    print(
        f"{args.threads} processes x 1 thread: tails {combined:.0f} tok/s together "
        f"({combined / rate:.2f}x one process; wall {time.perf_counter() - start:.0f} s)"
    )
    for width in (4, 8):
        r = batched(path, args.threads, width)
        b_rate = r["tail_tokens"] / r["tails_s"]
        print(f"{width} tails per batch: {b_rate:.0f} tok/s ({b_rate / rate:.2f}x); largest "
              f"logit difference from the solo tail: first sequence {r['max_diff_first']:.4f}, "
              f"the others {r['max_diff_others']:.4f}")  # fmt: skip


if __name__ == "__main__":
    main()
