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
with "#"); progress goes to stderr. ``--results NAME`` also writes the figures to
``scripts/results/NAME.json``. The code is in this package; ``python -m
scripts.notebook.bench_eval`` runs it.

    python -m scripts.notebook.bench_eval --index dev-index \
        --lm qwen2.5-coder-0.5b-instruct-q4_k_m \
        --bios 1 --facts 12 --ref-facts 3
"""
