"""The per-fact signals a verifier reads, computed in batches through the cached models.

- ``margin``: the Retrieve→LM prompt (the topic's page searched with ``topic + fact``, top
  ``k`` passages) or the no-context prompt, one forward pass each, label-word logits;
- ``np``: the NP scorer on the page's BM25 top ``np_k`` passages;
- ``draw``: a uniform number seeded by (seed, topic, fact), so a random decision does not
  depend on the order of facts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from factscore_local.cache import key_of
from factscore_local.components import Components
from factscore_local.config import EvalConfig
from factscore_local.records import Evidence
from factscore_local.verifiers import Verifier
from factscore_local.verify_prompt import no_context_prompt, retrieve_lm_prompt


class FactQuery(NamedTuple):
    title: str  # the topic's page in the index
    topic: str  # as the input names it
    atom: str


@dataclass
class Signals:
    """Signal arrays (unrounded: decisions are made on these) and each fact's evidence."""

    values: dict[str, np.ndarray]
    evidence: list[tuple[Evidence, ...] | None]


def compute_signals(
    verifier: Verifier, queries: list[FactQuery], parts: Components, config: EvalConfig
) -> Signals:
    values: dict[str, np.ndarray] = {}
    evidence: list[tuple[Evidence, ...] | None] = [None] * len(queries)
    if verifier.uses_margin:
        if verifier.margin_context == "none":
            values["margin"] = no_context_margins(queries, parts)
        else:
            values["margin"], evidence = retrieved_margins(queries, parts, config)
    if verifier.uses_np:
        values["np"] = np_values(queries, parts, config)
    if "draw" in verifier.signals:
        values["draw"] = np.asarray(
            [random.Random(key_of(config.seed, q.topic, q.atom)).random() for q in queries]
        )
    return Signals(values, evidence)


def _margins(parts: Components, prompts: list[str]) -> np.ndarray:
    return np.asarray([t - f for t, f in parts.lm.get().true_false(prompts)], float)


def no_context_margins(queries: list[FactQuery], parts: Components) -> np.ndarray:
    lm = parts.lm.get()
    return _margins(parts, [lm.chat(no_context_prompt(q.topic, q.atom)) for q in queries])


def retrieved_margins(
    queries: list[FactQuery], parts: Components, config: EvalConfig
) -> tuple[np.ndarray, list[tuple[Evidence, ...] | None]]:
    lm = parts.lm.get()
    prompts, evidence = [], []
    for q in queries:
        hits = parts.knowledge.search_page(
            q.title, f"{q.topic} {q.atom}", k=config.k, method=config.retrieval
        )
        evidence.append(
            tuple(
                Evidence(h.passage.passage_id, h.passage.title, h.rank, round(h.score, 4))
                for h in hits
            )
        )
        if config.passage_order == "page":
            # retrieve_lm_prompt writes them in reverse: reverse page order here.
            hits = sorted(hits, key=lambda h: -h.passage.idx)
        passages = [(h.passage.title, h.passage.text) for h in hits]
        prompts.append(lm.chat(retrieve_lm_prompt(q.topic, q.atom, passages)))
    return _margins(parts, prompts), evidence


def np_values(queries: list[FactQuery], parts: Components, config: EvalConfig) -> np.ndarray:
    """NP of each fact against its page's BM25 top np_k passages."""
    items = []
    for q in queries:
        hits = parts.knowledge.search_page(
            q.title, f"{q.topic} {q.atom}", k=config.np_k, method="bm25"
        )
        items.append((q.atom, [h.passage.text.strip() for h in hits]))
    return np.asarray(parts.np.get().probabilities(items), float)
