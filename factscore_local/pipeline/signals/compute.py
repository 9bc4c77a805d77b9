"""The per-fact signals a verifier reads, computed in batches through the cached models.

- ``margin``: the Retrieve→LM prompt (the topic's page searched with ``topic + fact``, top
  ``k`` passages; without a page, the whole index searched with the fact) or the
  no-context prompt, one forward pass each, label-word logits;
- ``np``: the NP scorer on the page's BM25 top ``np_k`` passages, or, with the ``lm-joint``
  scorer, the probability of the fact's tokens read from the Retrieve→LM pass itself (no
  second pass over the evidence);
- ``coverage``: the share of the fact's content words found in its own top-k passages
  (``lexical.py``; no model);
- ``slots``: the slot check of the fact against the same passages (``slots.py``; no model),
  one flag per outcome (``slot_number``, ``slot_year``, ..., ``slot_confirmed``);
- ``rivals``: how far the margin of the fact's best rival exceeds its own (``rivals.py``):
  the rivals are judged as facts of their own, in the same call (their prompts share the
  page's evidence prefix, so each costs its statement's tokens);
- ``head``: a state head's log-odds of supported (``state_head.py``), from the hidden
  state the margin's pass reads at its verdict (no pass of its own);
- ``draw``: a uniform number seeded by (seed, topic, fact), so a random decision does not
  depend on the order of facts.

Each signal is a provider (``providers.py``) that declares the value keys it writes and
the passes it needs; one ``SignalContext`` per call (``context.py``) runs each pass
(``passes.py``) once, and only when a provider needs it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from factscore_local.config import EvalConfig
from factscore_local.declarations.verifiers import Verifier
from factscore_local.pipeline.components import Components
from factscore_local.pipeline.records.rows import Evidence
from factscore_local.pipeline.signals.context import SignalContext
from factscore_local.pipeline.signals.passes import RIVAL_TIER, judged_on, np_values, own_passages
from factscore_local.pipeline.signals.providers import providers_for
from factscore_local.pipeline.signals.query import FactQuery

# The passes' earlier names, which the scripts and tests reach (through ``studies.py``).
_own_passages, _judged_on = own_passages, judged_on
__all__ = ["RIVAL_TIER", "FactQuery", "Signals", "compute_signals", "judged_on", "np_values",
           "own_passages"]  # fmt: skip


@dataclass
class Signals:
    """Signal arrays (unrounded) and each fact's evidence: its own top-k, and the block it
    was judged against (shared evidence only); with ``read_states``, the hidden state of
    each fact's margin verdict (rows)."""

    values: dict[str, np.ndarray]
    evidence: list[tuple[Evidence, ...] | None]
    blocks: list[tuple | None]
    states: np.ndarray | None = None
    read_as: list[str | None] | None = None  # each fact as it was read, where not as written


def compute_signals(
    verifier: Verifier, queries: list[FactQuery], parts: Components, config: EvalConfig
) -> Signals:
    """The values of the verifier's signals for ``queries``: each signal's provider writes
    its keys, all of them reading one context, so each pass runs once and only if needed."""
    providers = providers_for(verifier, config)
    needs = {need for provider in providers for need in provider.needs}
    context = SignalContext(queries, parts, config, needs, verifier.margin_context)
    values: dict[str, np.ndarray] = {}
    for provider in providers:
        written = provider.compute(context)
        if set(written) != set(provider.writes):
            raise ValueError(f"the provider of {provider.name!r} wrote {sorted(written)}, "
                             f"not its declared {list(provider.writes)}")  # fmt: skip
        values.update(written)
    return Signals(values, context.evidence(), context.blocks(), context.computed_states(),
                   context.read_forms())  # fmt: skip
