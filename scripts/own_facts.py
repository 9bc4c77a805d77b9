"""The project's own decomposition of every dev bio, read from a cache of its generations
with no model loaded (the 1.5B model's outputs in ``scripts/cache/own-decomp-98.jsonl.gz``),
for ``bench_fact_recall``.

Each bio goes through the estimator's own steps (abstention, ``clean`` unless the
benchmark's ``--no-clean``, sentence split, decomposition, post-processing, fragment
filter); a prompt whose generation is not in the cache is reported, not computed. One row
per responding bio: subject, topic, and its (sentence, fact) pairs.
"""

from __future__ import annotations

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
from scripts.common import labeled_bios


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
