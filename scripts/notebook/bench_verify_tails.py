"""The ``tails`` section of ``scripts.notebook.bench_verify_host``: what batched tail decoding
would gain.

A measurement only (the estimator does not batch tails): the tails of prompts sharing one page
prefix, decoded one prompt at a time against several at once over one copy of the prefix.
"""

from __future__ import annotations

import time


def section_tails(raw, calls, k: int, width: int) -> dict:
    """What batching would gain (not used by the estimator): the tails (everything after
    the prefix, logits at every position) of the first k prompts of the first call that
    share its first prefix, decoded one prompt at a time against ``width`` prompts at once
    as parallel sequences over one copy of the prefix (llama.cpp, a second context)."""
    from factscore_local.lm.llama_parallel import ParallelGenerator, put_tokens

    prompts, prefixes, _ = calls[0]
    group = sorted(p for p, x in zip(prompts, prefixes, strict=True) if x == prefixes[0])[:k]
    ids, cuts = raw._encode(group, [prefixes[0]] * len(group))
    head = ids[0][: cuts[0]]
    tails = [i[cuts[0] :] for i in ids]
    gen = ParallelGenerator(raw.llm, width, raw.n_ctx)
    lib, b = gen.lib, gen.batch
    start = time.perf_counter()
    gen._hold_prefix(head)
    prefix_s = time.perf_counter() - start

    def decode(part: list[list[int]]) -> None:
        n = 0
        for seq, tail in enumerate(part, start=1):
            lib.llama_memory_seq_rm(gen.memory, seq, -1, -1)
            lib.llama_memory_seq_cp(gen.memory, 0, seq, 0, len(head))
            n = put_tokens(b, n, tail, len(head), seq, [True] * len(tail))
        b.n_tokens = n
        if lib.llama_decode(gen.ctx.ctx, b) != 0:
            raise RuntimeError("decode failed")

    times = {}
    for name, size in (("one at a time", 1), (f"{width} at a time", width)):
        start = time.perf_counter()
        for i in range(0, len(tails), size):
            decode(tails[i : i + size])
        times[name] = time.perf_counter() - start
    gen.close()
    n_tokens = sum(map(len, tails))
    one, many = times["one at a time"], times[f"{width} at a time"]
    return {"measure": "tails", "prompts": len(tails), "prefix_tokens": len(head),
            "prefix_tokens_per_s": round(len(head) / prefix_s, 1),
            "tail_tokens": n_tokens, "one_at_a_time_tokens_per_s": round(n_tokens / one, 1),
            f"{width}_at_a_time_tokens_per_s": round(n_tokens / many, 1),
            "ratio": round(one / many, 2)}  # fmt: skip
