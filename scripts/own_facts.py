"""The project's own decomposition of every dev bio, read from a cache of its generations
with no model loaded (the 1.5B model's outputs in ``scripts/cache/own-decomp-98.jsonl.gz``).

    python -m scripts.own_facts --cache bench-out/own-facts-cache.db \\
        --seed-cache scripts/cache/own-decomp-98.jsonl.gz --out bench-out/own-facts.jsonl

Each bio goes through the estimator's own steps (abstention, ``clean`` unless
``--no-clean``, sentence split, decomposition, post-processing, fragment filter); a prompt
whose generation is not in the cache is reported, not computed. One line per responding
bio: subject, topic, and its (sentence, fact) pairs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from factscore_local.config import EvalConfig
from factscore_local.lm.base import cut_loop
from factscore_local.pipeline.cached_models import CachedLM
from factscore_local.pipeline.decomposition.abstain import is_abstained
from factscore_local.pipeline.decomposition.clean import clean_generation
from factscore_local.pipeline.decomposition.sentences import split_sentences
from factscore_local.runtime.cache import ResultCache
from factscore_local.runtime.weights import model_identity
from factscore_local.studies import decomposer
from scripts.caches import add_cache_options
from scripts.caches import seed_cache as import_seeds
from scripts.common import SUBJECTS, add_data_option, data_root, labeled_bios


class CacheOnlyLM:
    """Generations looked up where ``CachedLM`` keeps them; one that is missing is counted
    and read as an empty output (nothing is stored)."""

    def __init__(self, cache: ResultCache, model_id: str) -> None:
        self.cached = CachedLM(None, cache, model_id)
        self.missing = 0

    def generate(self, prompts: list[str], max_new_tokens: int, stop: list[str]) -> list[str]:
        out = []
        for prompt in prompts:
            key = self.cached.generation_key(prompt, max_new_tokens, stop)
            text = self.cached.cache.get(key)
            self.missing += text is None
            out.append(cut_loop(text or ""))
        return out


def own_facts(data: Path, cache_path: Path, clean: bool = True) -> tuple[list[dict], int]:
    """Every responding dev bio's own facts, and the number of prompts not in the cache."""
    from factscore_local.model_store import resolve_lm

    cache = ResultCache(cache_path)
    lm = CacheOnlyLM(cache, model_identity(resolve_lm(None), "llama.cpp", cache))
    config = EvalConfig(index=Path("."))
    decompose = decomposer(config, lm)
    out = []
    for subject, bios in labeled_bios(data).items():
        todo = [b for b in bios if b.output.strip() and not is_abstained(b.output, "generic")]
        texts = [clean_generation(b.output).text if clean else b.output for b in todo]
        split = [split_sentences(t) for t in texts]
        for bio, pairs in zip(todo, decompose.run_split(split), strict=True):
            facts = [(s.text, f) for s, fs in pairs for f in fs]
            if facts:
                out.append({"subject": subject, "topic": bio.topic, "facts": facts})
    return out, lm.missing


def complete_own_facts(data: Path, cache_path: Path, clean: bool = True) -> list[dict]:
    """``own_facts``, refused while any decomposition prompt is missing from the cache (a bio
    not fully decomposed would read as one with few facts)."""
    rows, missing = own_facts(data, cache_path, clean)
    if missing:
        raise SystemExit(
            f"{missing} decomposition prompts are not in {cache_path}: seed the continuation "
            "files that hold them (the committed raw-text-98-part*.jsonl.gz for the cleaned) first"
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_cache_options(ap, Path("bench-out/own-facts-cache.db"))
    add_data_option(ap)
    ap.add_argument("--no-clean", action="store_true")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    import_seeds(args.cache, args.seed_cache, "own-facts")
    rows, missing = own_facts(data_root(args.data), args.cache, not args.no_clean)
    with args.out.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    n = {s: [len(r["facts"]) for r in rows if r["subject"] == s] for s in SUBJECTS}
    print(
        f"{len(rows)} responding bios, {missing} prompts not in the cache; facts per "
        "response: " + ", ".join(f"{s} {sum(v) / max(len(v), 1):.1f}" for s, v in n.items())
    )


if __name__ == "__main__":
    main()
