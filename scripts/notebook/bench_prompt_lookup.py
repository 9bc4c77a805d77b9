"""Prompt-lookup drafts against today's parallel decoding, on decomposition prompts of the
dev bios.

    python -m scripts.notebook.bench_prompt_lookup --index IDX [--lm NAME] [--sentences N]
        [--seed S] [--configs 1x0,16x0,1x4,16x4] [--results NAME]

Draws ``--sentences`` distinct sentences (fixed seed) from every responding dev bio of all
three subjects, builds their decomposition prompts as ``fscore eval`` does, and generates
them greedily with the ``ParallelGenerator`` in several configurations, ``WIDTHxDRAFT``:
sequences decoded together, and tokens drafted by prompt lookup per sequence and step
(``lm/llama_parallel.py``). ``1x0`` is plain greedy, one prompt at a time: every other
configuration's outputs are compared with it (text after the stop strings are cut). The
shared prefix (instruction and demonstrations) is evaluated before each timing. Prints
and records seconds, generated tokens, tokens per second, decode steps, draft tokens
(decoded and kept) and identical outputs of each, and the seconds of the prompts' own
tokens (prefill and one token), which no decoding scheme changes.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from scripts.common import (
    Stopwatch,
    add_data_option,
    data_root,
    labeled_bios,
    log,
    results_record,
    write_results,
)


def parse_configs(text: str) -> list[tuple[int, int]]:
    """``"1x0,16x4"`` -> ``[(1, 0), (16, 4)]``; plain greedy (1x0) is put first."""
    configs = []
    for part in text.split(","):
        width, _, draft = part.strip().partition("x")
        configs.append((int(width), int(draft or 0)))
    return [(1, 0)] + [c for c in configs if c != (1, 0)]


def sample_sentences(bios, n: int, seed: int) -> list[str]:
    """``n`` distinct sentences the decomposer prompts, drawn with a fixed seed."""
    from factscore_local.pipeline.decomposition.decompose import forced_empty
    from factscore_local.pipeline.decomposition.sentences import split_sentences

    seen: list[str] = []
    for bio in bios:
        for i, sentence in enumerate(split_sentences(bio.output)):
            if not forced_empty(sentence.text, i) and sentence.text not in seen:
                seen.append(sentence.text)
    return random.Random(seed).sample(seen, min(n, len(seen)))


def timed(lm, ids, width: int, draft: int, max_new: int, stop: list[str]):
    """Outputs (stop strings cut), generated tokens and seconds of one configuration."""
    from factscore_local.lm.base import cut_at_stop
    from factscore_local.lm.llama_parallel import ParallelGenerator

    gen = ParallelGenerator(lm.llm, width, lm.n_ctx, draft=draft)
    try:
        gen.run(ids[:2], 1, stop, lm._text)  # the shared prefix, evaluated before timing
        start = time.perf_counter()
        new = gen.run(ids, max_new, stop, lm._text)
        seconds = time.perf_counter() - start
    finally:
        gen.close()
    counts = {"steps": gen.steps, "drafted": gen.drafted, "kept": gen.kept}
    return [cut_at_stop(lm._text(x), stop) for x in new], sum(map(len, new)), seconds, counts


def main(argv: list[str] | None = None) -> int:
    from factscore_local.config import build_config
    from factscore_local.pipeline.estimator import Estimator

    ap = argparse.ArgumentParser(
        prog="python -m scripts.notebook.bench_prompt_lookup", description=__doc__.split("\n\n")[0]
    )
    add_data_option(ap)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--lm", default=None, help="a GGUF model (default: the embedded default)")
    ap.add_argument("--sentences", type=int, default=48)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--configs", default="1x0,16x0,1x4,1x8,16x4")
    ap.add_argument("--results", default=None, help="write scripts/results/NAME.json")
    argv = sys.argv[1:] if argv is None else argv
    args = ap.parse_args(argv)
    watch = Stopwatch()

    settings = {"index": args.index, **({"lm": args.lm} if args.lm else {})}
    estimator = Estimator(build_config(settings))
    decomposer = estimator.components.decomposer.get()
    raw = decomposer.lm.lm  # the backend itself, under the result cache
    bios = [
        bio
        for labeled in labeled_bios(data_root(args.data)).values()
        for bio in labeled
        if bio.output.strip()
    ]
    sentences = sample_sentences(bios, args.sentences, args.seed)
    ids = [raw.prompt_ids(decomposer.prompt(s)) for s in sentences]
    stop, max_new = list(decomposer.stop), decomposer.max_new_tokens
    log("lookup", f"{len(sentences)} sentences of {len(bios)} bios, model {raw.name}")

    rows, reference = {}, None
    for width, draft in parse_configs(args.configs):
        name = f"{width}x{draft}"
        with watch(name):
            outputs, tokens, seconds, counts = timed(raw, ids, width, draft, max_new, stop)
        reference = reference or outputs
        same = sum(a == b for a, b in zip(outputs, reference, strict=True))
        rows[name] = {
            "width": width,
            "draft": draft,
            "seconds": round(seconds, 1),
            "tokens": tokens,
            "tokens_per_s": round(tokens / seconds, 1),
            "identical_to_plain_greedy": same,
            "decode_steps": counts["steps"],
            "draft_tokens": counts["drafted"],
            "draft_tokens_kept": counts["kept"],
        }
        log("lookup", f"{name}: {rows[name]}")
    # What no decoding scheme changes: each prompt's own tokens (past the shared prefix)
    # evaluated, and its first token.
    with watch("prefill"):
        _, _, prefill, _ = timed(raw, ids, 1, 0, 1, stop)
    today = rows.get(f"{raw.GENERATION_WIDTH}x0")
    for row in rows.values():
        row["speed_up_over_plain"] = round(rows["1x0"]["seconds"] / row["seconds"], 2)
        if today:
            row["speed_up_over_today"] = round(today["seconds"] / row["seconds"], 2)

    figures = {f"configs/{k}/{f}": v for k, row in rows.items() for f, v in row.items()}
    figures["prompts"] = len(ids)
    figures["prefill_seconds"] = round(prefill, 1)
    if args.results:
        data = {
            "sentences": f"{len(ids)} distinct sentences drawn with seed {args.seed} from the "
            f"{len(bios)} responding dev bios (all three subjects)",
            "model": raw.name,
            "max_new_tokens": max_new,
        }
        record = results_record(
            args.results, "scripts.notebook.bench_prompt_lookup", argv, data, figures, watch
        )
        log("lookup", f"wrote {write_results(record)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
