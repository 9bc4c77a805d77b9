"""What stopping generation at a greedy loop saves, on the decomposition of every dev bio.

    python -m scripts.notebook.bench_loop_stop --index IDX --cache FILE [--max-prompts N]

Generation stops once a line is written for the third time (``lm/base.py``, ``loop_end``).
A generation that never writes a line three times never meets the stop, so it is the same
with and without it: only the prompts whose output ends in a loop can differ. This script
takes the decomposition prompts of every responding dev bio (all topics, all three
subjects), reads their outputs from the cache (``--cache``; every one must be there: the
import of ``scripts/cache/own-decomp-98.jsonl.gz`` provides them), finds the outputs the
loop stop cut, and generates those prompts again, in one run, with the stop and without it
(the ``ParallelGenerator`` at the width ``fscore eval`` uses, the shared prefix evaluated
before either is timed). Prints the seconds and generated tokens of both, their ratio,
whether the stopped outputs equal the unstopped ones cut at the loop, and the share of
all generated tokens the stop saves.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from scripts.common import add_data_option, data_root, labeled_bios


class RecordingLM:
    """A cached LM that records every generate call (prompts, outputs, limits)."""

    def __init__(self, lm) -> None:
        self.lm = lm
        self.calls: list[tuple[list[str], list[str], int, list[str]]] = []

    def generate(self, prompts: list[str], max_new_tokens: int, stop: list[str]) -> list[str]:
        outputs = self.lm.generate(prompts, max_new_tokens, stop)
        self.calls.append((list(prompts), outputs, max_new_tokens, list(stop)))
        return outputs

    def __getattr__(self, name: str):
        return getattr(self.lm, name)


def timed_run(lm, ids: list[list[int]], max_new: int, stop: list[str], stop_loops: bool):
    from factscore_local.lm.base import cut_at_stop
    from factscore_local.lm.llama_parallel import ParallelGenerator

    gen = ParallelGenerator(lm.llm, lm.GENERATION_WIDTH, lm.n_ctx)
    try:
        gen.run(ids[:1], 1, stop, lm._text)  # the shared prefix, evaluated before timing
        start = time.perf_counter()
        new = gen.run(ids, max_new, stop, lm._text, stop_loops=stop_loops)
        seconds = time.perf_counter() - start
    finally:
        gen.close()
    return [cut_at_stop(lm._text(x), stop) for x in new], sum(map(len, new)), seconds


def main() -> int:
    from factscore_local.config import build_config
    from factscore_local.lm.base import cut_loop, loop_end
    from factscore_local.pipeline.decomposition.sentences import split_sentences
    from factscore_local.pipeline.estimator import Estimator

    ap = argparse.ArgumentParser(
        prog="python -m scripts.notebook.bench_loop_stop", description=__doc__.split("\n\n")[0]
    )
    add_data_option(ap)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--max-prompts", type=int, default=0, help="of the looped ones (0: all)")
    args = ap.parse_args()

    estimator = Estimator(build_config({"index": args.index, "cache": args.cache}))
    decomposer = estimator.components.decomposer.get()
    recorder = RecordingLM(decomposer.lm)
    decomposer.lm = recorder
    bios = [
        bio
        for labeled in labeled_bios(data_root(args.data)).values()
        for bio in labeled
        if bio.output.strip()
    ]
    decomposer.run_split([split_sentences(b.output) for b in bios])
    cached = recorder.lm
    misses = cached.lm.stats.generated_tokens
    if misses:
        print(f"warning: {misses} tokens were generated: not every output was cached")
    (prompts, outputs, max_new, stop) = recorder.calls[0]
    # An output the stop cut ends in the third copy of a line (the newline after it cut).
    looped = [i for i, o in enumerate(outputs) if loop_end(o + "\n") is not None]
    n_looped = len(looped)
    if args.max_prompts:
        looped = looped[: args.max_prompts]
    raw = cached.lm
    all_tokens = sum(len(raw.tokenize(o)) for o in outputs)
    print(
        f"{len(bios)} bios, {len(prompts)} distinct sentences; the loop stop cut "
        f"{n_looped} outputs ({100 * n_looped / len(prompts):.1f}%); ~{all_tokens} "
        f"tokens generated for all of them with the stop; timing {len(looped)} of the cut ones"
    )
    ids = [raw.prompt_ids(prompts[i]) for i in looped]
    with_stop, tokens_with, s_with = timed_run(raw, ids, max_new, stop, stop_loops=True)
    without, tokens_without, s_without = timed_run(raw, ids, max_new, stop, stop_loops=False)
    same_cut = sum(a == cut_loop(b) for a, b in zip(with_stop, without, strict=True))
    same_cached = sum(a == outputs[i] for a, i in zip(with_stop, looped, strict=True))
    saved = tokens_without - tokens_with
    print(
        json.dumps(
            {
                "looped prompts": len(looped),
                "with stop": {"s": round(s_with, 1), "tokens": tokens_with},
                "without stop": {"s": round(s_without, 1), "tokens": tokens_without},
                "speed-up on these prompts": round(s_without / max(s_with, 1e-9), 2),
                "stopped == unstopped cut at the loop": f"{same_cut}/{len(looped)}",
                "stopped == cached output": f"{same_cached}/{len(looped)}",
                # meaningful when every cut prompt is timed (no --max-prompts)
                "share of all generated tokens saved (%)": round(
                    100 * saved / max(1, all_tokens + saved), 1
                ),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
