"""The host-side work of a verification pass, old way against new, on real dev prompts.

A Retrieve→LM prompt on page evidence is 3,000-7,000 tokens long, and all but its last
~20 are shared by the facts of a page. The model reads the shared part once; the host used
to tokenize each prompt whole, and twice more cut at both ends of its statement (to find
the statement's tokens for the joint NP), with llama.cpp's tokenizer at ~70 ms a page.
Now a prefix is tokenized once and each prompt's rest alone (where the tokenizer splits
there exactly), and the statement is found by its tokens' bytes from the prompt's end.

0. ``reads``: the page prefixes a pass reads, as the prompts were ordered before and now,
   and the tokens of the prompts' tails (no model; ``--lever NAME`` counts a prompt
   lever's prompts instead of the default's);
1. ``encode``: the real verification prompts of the first N dev topics (all three
   subjects, the tables' round-robin order, page evidence, the coverage rule's settings):
   ids, cuts and statement spans both ways, checked equal, with ms per prompt;
2. ``judge``: the whole judging pass (``true_false_with_statement``, model included) on the
   first K of those prompts both ways, from an empty model cache each time, with their
   margins and statement log-probabilities compared;
3. ``normaliser``: the log-normaliser of a statement's rows, float64 against float32
   exponentials;
4. ``tails`` (with ``--tails K``): what decoding several prompts' tails in one batch
   would gain, a measurement only;
5. ``states`` (with ``--states DIR``): a page prefix read, stored and loaded back
   (``--prefix-states``);
6. ``heads`` (with ``--heads K``): judging the tails of K prompts of one page with the LM
   head run at every tail position (as before) against only at the statement's positions
   and the last (now), the prefix read once beforehand; results compared;
7. ``flash`` (with ``--flash``): a page prefix read with llama.cpp's flash attention off
   (the estimator's setting) and on, in fresh contexts: speed and the next token's logits.

    .venv/bin/python -m scripts.notebook.bench_verify_host --index dev-index --topics 98 --judge 96
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from factscore_local.config import build_config
from factscore_local.lm.base import TrueFalse, log_normaliser
from factscore_local.pipeline.estimator import Estimator
from scripts.common import add_data_option, data_root
from scripts.notebook.bench_verify_tails import section_tails as section_tails  # re-export
from scripts.tables.levers import LEVERS
from scripts.tables.runner import COVERAGE_RULE, Runner


def log(message: str) -> None:
    print(f"[bench_verify_host] {message}", file=sys.stderr, flush=True)


def record_prompts(args) -> tuple[object, list, list]:
    """The raw LM, the (prompts, prefixes, spans) of each judging call (a stored slice)
    the estimator makes on the topics' bios, and the (prompts, prefixes, outer levels of
    the prefixes) of each chunk it verifies; the LM is not run (a memory-only cache, dummy
    rows)."""
    run = Runner(args.index, None, data_root(args.data), args.lm, None, "page")
    topics = run.topic_order[args.skip_topics : args.skip_topics + args.topics]
    bios = [b for b in run.bios(args.skip_topics + args.topics) if b.topic in topics]
    settings = {"index": args.index, "lm": args.lm, "cache": None,
                "use_atomic_facts": True, "gamma": 0, "chunk_bios": 6, "evidence": "page",
                "verifier": COVERAGE_RULE,
                **LEVERS.get(args.lever, {})}  # fmt: skip
    estimator = Estimator(build_config(settings))
    cached = estimator.lm()
    raw = cached.lm
    calls, chunks = [], []
    judge = cached.judge

    def chunk_recorder(prompts, prefixes, statements, answers=("True", "False"), bases=None):
        chunks.append((list(prompts), list(prefixes), list(bases or [""] * len(prompts))))
        return judge(prompts, prefixes, statements, answers, bases)

    cached.judge = chunk_recorder

    def recorder(prompts, prefixes, spans, labels=None, bases=None):
        calls.append((list(prompts), list(prefixes), list(spans)))
        return [(TrueFalse(0.0, 0.0), [], np.zeros(0)) for _ in prompts]

    raw.true_false_with_statement = recorder
    log(f"recording the prompts of {len(bios)} bios ({len(topics)} topics)")
    estimator.run(bios, None, progress=False)
    del raw.true_false_with_statement  # the class's method again
    del cached.judge
    return raw, calls, chunks


def prefix_reads(raw, chunks, old: bool) -> dict:
    """Prefix reads of a pass, counted without the model: each chunk's distinct prompts
    cut into stored slices of 32 and each slice evaluated in order, as before (slices by
    ``str`` of (prompt, prefix), ids order within a slice) or as now (both by prefix). A
    prefix with two levels counts its outer one (the page; sentences are counted apart)."""
    from factscore_local.lm.base import prefix_order
    from factscore_local.pipeline.cached_models import SLICE_TRUE_FALSE, by_prefix

    held, reads, tokens = None, 0, 0
    for prompts, inner, bases in chunks:
        prefixes = [b or x for x, b in zip(inner, bases, strict=True)]
        pairs = list(dict.fromkeys(zip(prompts, prefixes, strict=True)))
        pairs.sort(key=str if old else by_prefix)
        for start in range(0, len(pairs), SLICE_TRUE_FALSE):
            part = pairs[start : start + SLICE_TRUE_FALSE]
            ids, cuts = raw._encode([p for p, _ in part], [x for _, x in part])
            order = (sorted(range(len(ids)), key=lambda i: ids[i]) if old
                     else prefix_order(ids, [x for _, x in part]))  # fmt: skip
            for i in order:
                head = ids[i][: cuts[i]]
                if head != held:
                    held, reads, tokens = head, reads + 1, tokens + len(head)
    return {"reads": reads, "tokens": tokens}


def section_reads(raw, chunks) -> dict:
    """Page prefixes read (ordered as before and now), prompts and their tails' tokens;
    with a lever that gives each fact's sentence (a second prefix level), the sentences'
    own tokens (each read once) and the tails of the prompts that hold one."""
    distinct = {x for _, prefixes, _ in chunks for x in prefixes}
    outer_of = {(p, x): b for prompts, prefixes, bases in chunks
                for p, x, b in zip(prompts, prefixes, bases, strict=True)}  # fmt: skip
    tail = {pair: len(raw.continuation_ids(pair[0][len(pair[1]) :])) for pair in outer_of}
    tails = sum(tail.values())
    out = {"measure": "reads", "distinct_prefixes": len(distinct),
           "before": prefix_reads(raw, chunks, old=True),
           "now": prefix_reads(raw, chunks, old=False), "prompts": len(outer_of),
           "tail_tokens": tails,
           "tail_tokens_per_prompt": round(tails / len(outer_of), 1)}  # fmt: skip
    levels = {(x, b) for (_, x), b in outer_of.items() if b}
    if levels:
        with_sentence = [pair for pair, b in outer_of.items() if b]
        out["sentences"] = len(levels)
        out["sentence_tokens"] = sum(
            len(raw.prompt_ids(x)) - len(raw.prompt_ids(b)) for x, b in levels
        )
        out["sentence_prompts"] = len(with_sentence)
        out["sentence_prompt_tail_tokens"] = sum(tail[pair] for pair in with_sentence)
    return out


def fresh(raw) -> None:
    """No prefix held by the model, no tokenization remembered: each way starts alike."""
    raw.forget()
    raw._prefix_ids.clear()
    raw._splits.clear()


def old_way(raw) -> None:
    """The backend as it was: no split tokenization, no token bytes (both hooks say None)."""
    raw.continuation_ids = lambda text: None
    raw.token_piece = lambda token: None


def new_way(raw) -> None:
    for hook in ("continuation_ids", "token_piece"):
        raw.__dict__.pop(hook, None)


def encode(raw, calls) -> tuple[list, float]:
    start, out = time.perf_counter(), []
    for prompts, prefixes, spans in calls:
        ids, cuts = raw._encode(prompts, prefixes)
        found = [raw._token_span(p, i, s) for p, i, s in zip(prompts, ids, spans, strict=True)]
        out.append((ids, cuts, found))
    return out, time.perf_counter() - start


def section_encode(raw, calls) -> dict:
    n = sum(len(c[0]) for c in calls)
    old_way(raw)
    fresh(raw)
    old, old_s = encode(raw, calls)
    new_way(raw)
    fresh(raw)
    new, new_s = encode(raw, calls)
    differ = {"ids": 0, "cuts": 0, "spans": 0}
    for (ids_a, cuts_a, span_a), (ids_b, cuts_b, span_b) in zip(old, new, strict=True):
        differ["ids"] += sum(a != b for a, b in zip(ids_a, ids_b, strict=True))
        differ["cuts"] += sum(a != b for a, b in zip(cuts_a, cuts_b, strict=True))
        differ["spans"] += sum(a != b for a, b in zip(span_a, span_b, strict=True))
    not_found = sum(b <= a for _, _, spans in new for a, b in spans)
    prompt_tokens = sum(len(i) for ids, _, _ in new for i in ids)
    return {"measure": "encode", "prompts": n, "mean_prompt_tokens": round(prompt_tokens / n),
            "old_ms_per_prompt": round(1000 * old_s / n, 2),
            "new_ms_per_prompt": round(1000 * new_s / n, 2),
            "ratio": round(old_s / new_s, 1), "differ": differ,
            "statement_not_found": not_found}  # fmt: skip


def judge(raw, prompts, prefixes, spans) -> tuple[list, float]:
    fresh(raw)
    start = time.perf_counter()
    rows = []
    for i in range(0, len(prompts), 32):  # slices as the cached runs send them
        part = slice(i, i + 32)
        rows += raw.true_false_with_statement(prompts[part], prefixes[part], spans[part])
    return rows, time.perf_counter() - start


def section_judge(raw, calls, k: int) -> dict:
    """The first k prompts of the first judging call, in the order a cached run computes
    them (sorted, so that prompts sharing a prefix are adjacent)."""
    first = calls[0]
    order = sorted(range(len(first[0])), key=lambda i: str((first[0][i], first[1][i])))[:k]
    prompts, prefixes, spans = ([xs[i] for i in order] for xs in first)
    old_way(raw)
    old, old_s = judge(raw, prompts, prefixes, spans)
    new_way(raw)
    new, new_s = judge(raw, prompts, prefixes, spans)
    margins_equal = all(a[0] == b[0] for a, b in zip(old, new, strict=True))
    gap = max((float(np.abs(a[2] - b[2]).max()) for a, b in zip(old, new, strict=True)
               if len(a[2]) and len(a[2]) == len(b[2])), default=0.0)  # fmt: skip
    tokens = sum(len(raw.prompt_ids(p)) for p in dict.fromkeys(prefixes))
    return {"measure": "judge", "prompts": len(prompts), "prefixes": len(set(prefixes)),
            "prefix_tokens": tokens,
            "old_s_per_prompt": round(old_s / len(prompts), 3),
            "new_s_per_prompt": round(new_s / len(prompts), 3),
            "ratio": round(old_s / new_s, 2), "margins_equal": margins_equal,
            "max_logprob_gap": gap}  # fmt: skip


def section_normaliser(raw, rows: int = 20, repeat: int = 20) -> dict:
    """log-sum-exp of a statement's rows over the vocabulary: all in float64 (as before)
    against float32 exponentials (``log_normaliser``); the time does not depend on the
    values."""
    logits = np.random.default_rng(0).normal(0, 5, (rows, raw.llm.n_vocab())).astype(np.float64)

    def float64_way(x):
        top = x.max(axis=1, keepdims=True)
        return top[:, 0] + np.log(np.exp(x - top).sum(axis=1))

    times = {}
    for name, fn in (("float64", float64_way), ("float32 exp", log_normaliser)):
        start = time.perf_counter()
        for _ in range(repeat):
            value = fn(logits)
        times[name] = (time.perf_counter() - start) / repeat
        times[name + " value"] = value
    gap = float(np.abs(times["float64 value"] - times["float32 exp value"]).max())
    return {"measure": "normaliser", "rows": rows,
            "float64_ms": round(1000 * times["float64"], 2),
            "float32_exp_ms": round(1000 * times["float32 exp"], 2), "max_gap": gap}  # fmt: skip


def section_states(raw, calls, folder: Path) -> dict:
    """The first call's first prefix read from an empty cache, stored, and loaded back."""
    from factscore_local.lm.prefix_states import PrefixStates

    prompts, prefixes, _ = calls[0]
    (ids,), (cut,) = raw._encode(prompts[:1], prefixes[:1])
    head = ids[:cut]
    store = PrefixStates(folder, "bench")
    raw.forget()
    start = time.perf_counter()
    raw._tail_logits(head, 0, 1)
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    store.save(raw.llm, head)
    save_s = time.perf_counter() - start
    size = sum(p.stat().st_size for p in Path(folder).glob("*.kv"))
    raw._tail_logits(raw.prompt_ids("Something else."), 0, 1)
    start = time.perf_counter()
    loaded = store.load(raw.llm, head)
    load_s = time.perf_counter() - start
    raw.forget()
    return {"measure": "states", "prefix_tokens": len(head), "read_s": round(read_s, 2),
            "save_s": round(save_s, 3), "load_s": round(load_s, 3), "loaded": loaded,
            "bytes": size, "ratio": round(read_s / load_s, 1)}  # fmt: skip


def section_heads(raw, calls, k: int) -> dict:
    """The first k prompts of the first call that share its first prefix, judged after
    that prefix was read (so only tails are timed): logits at every tail position against
    only the rows the judgement keeps, each way twice in turn."""
    from factscore_local.lm.llama_backend import LlamaCppLM

    prompts, prefixes, spans = calls[0]
    group = [i for i, x in enumerate(prefixes) if x == prefixes[0]][:k]
    prompts, spans = [prompts[i] for i in group], [spans[i] for i in group]
    prefixes = [prefixes[0]] * len(group)
    fresh(raw)
    raw.true_false_with_statement(prompts[:1], prefixes[:1], spans[:1])  # reads the prefix

    def every_row(tokens, past, logits):
        LlamaCppLM._fill_batch(raw, tokens, past, [True] * len(tokens))

    out, times = {}, {}
    ways = (("every position", every_row), ("kept rows", None))
    for name, fill in ways * 2:  # alternated, the faster of two runs each
        if fill is not None:
            raw._fill_batch = fill
        start = time.perf_counter()
        out[name] = raw.true_false_with_statement(prompts, prefixes, spans)
        times[name] = min(times.get(name, np.inf), time.perf_counter() - start)
        raw.__dict__.pop("_fill_batch", None)
    old, new = out["every position"], out["kept rows"]
    identical = all(a[0] == b[0] and a[1] == b[1] and np.array_equal(a[2], b[2])
                    for a, b in zip(old, new, strict=True))  # fmt: skip
    margin_gap = max(abs(a[0].margin - b[0].margin)
                     for a, b in zip(old, new, strict=True))  # fmt: skip
    logprob_gap = max((float(np.abs(a[2] - b[2]).max()) for a, b in zip(old, new, strict=True)
                       if len(a[2]) and len(a[2]) == len(b[2])), default=0.0)  # fmt: skip
    ids, cuts = raw._encode(prompts, prefixes)
    tail_tokens = sum(len(i) - c for i, c in zip(ids, cuts, strict=True))
    every, kept = times["every position"], times["kept rows"]
    return {"measure": "heads", "prompts": len(group), "tail_tokens": tail_tokens,
            "every_position_s_per_prompt": round(every / len(group), 3),
            "kept_rows_s_per_prompt": round(kept / len(group), 3),
            "ratio": round(every / kept, 2), "identical": identical,
            "max_margin_gap": margin_gap, "max_logprob_gap": logprob_gap}  # fmt: skip


def section_flash(raw, calls) -> dict:
    """The first call's first prefix read in a fresh llama.cpp context without and with
    flash attention; the estimator keeps it off (this measures why)."""
    import llama_cpp

    prompts, prefixes, _ = calls[0]
    (ids,), (cut,) = raw._encode(prompts[:1], prefixes[:1])
    head, out = ids[:cut], {}
    for flash in (False, True):
        llm = llama_cpp.Llama(raw.llm.model_path, n_ctx=raw.n_ctx, n_batch=512,
                              n_threads=raw.llm.n_threads, flash_attn=flash,
                              verbose=False)  # fmt: skip
        start = time.perf_counter()
        llm.eval(head)
        seconds = time.perf_counter() - start
        pointer = llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1)
        out[flash] = (seconds, np.ctypeslib.as_array(pointer, shape=(llm.n_vocab(),)).copy())
        llm.close()
    gap = float(np.abs(out[False][1] - out[True][1]).max())
    return {"measure": "flash", "prefix_tokens": len(head),
            "off_tokens_per_s": round(len(head) / out[False][0], 1),
            "on_tokens_per_s": round(len(head) / out[True][0], 1),
            "ratio": round(out[False][0] / out[True][0], 2), "max_logit_gap": gap}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(
        prog="python -m scripts.notebook.bench_verify_host", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--index", type=Path, required=True, help="index of enwiki-20230401-dev.db")
    add_data_option(ap)
    ap.add_argument("--lm", default=None, help="default: the embedded 1.5B GGUF")
    ap.add_argument("--topics", type=int, default=98)
    ap.add_argument("--skip-topics", type=int, default=0, help="start after this many topics")
    ap.add_argument(
        "--lever",
        default=None,
        choices=sorted(LEVERS),
        help="record this prompt lever's prompts (scripts.tables.levers.LEVERS)",
    )
    ap.add_argument("--judge", type=int, default=96, help="prompts judged both ways (0: none)")
    ap.add_argument("--tails", type=int, default=0, help="prompts with batched tails (0: none)")
    ap.add_argument("--width", type=int, default=8, help="tails decoded at once")
    ap.add_argument("--no-encode", action="store_true", help="skip the encode section")
    ap.add_argument("--states", type=Path, default=None, help="folder to store a prefix in")
    ap.add_argument("--heads", type=int, default=0, help="prompts judged both ways (0: none)")
    ap.add_argument("--flash", action="store_true", help="a prefix read without/with flash attn")
    args = ap.parse_args()
    raw, calls, chunks = record_prompts(args)
    print(json.dumps(section_normaliser(raw)), flush=True)
    print(json.dumps({"lever": args.lever, **section_reads(raw, chunks)}), flush=True)
    if not args.no_encode:
        print(json.dumps(section_encode(raw, calls)), flush=True)
    if args.judge:
        print(json.dumps(section_judge(raw, calls, args.judge)), flush=True)
    if args.tails:
        print(json.dumps(section_tails(raw, calls, args.tails, args.width)), flush=True)
    if args.states:
        print(json.dumps(section_states(raw, calls, args.states)), flush=True)
    if args.heads:
        print(json.dumps(section_heads(raw, calls, args.heads)), flush=True)
    if args.flash:
        print(json.dumps(section_flash(raw, calls)), flush=True)


if __name__ == "__main__":
    main()
