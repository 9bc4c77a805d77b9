"""The values the evidence settings may take (``EvalConfig.retrieval``, ``.passage_order``
and ``.evidence``), declared apart from the stage that implements them
(``pipeline/evidence/``), so that the settings check a value without loading the stage."""

from __future__ import annotations

# How a fact's passages are found on its page (or in the whole index).
RETRIEVALS = ("bm25", "dense")
# "page": passages in the prompt in page order, so facts that retrieve the same set in
# another rank order share the prompt prefix (and its KV cache); "rank": FActScore's
# order, best passage last.
PASSAGE_ORDERS = ("page", "rank")
# What each fact is judged against (``pipeline/evidence/blocks.py``): its own top-k, a
# bio's shared block, its page's segment, or per page the cheaper of the last two.
EVIDENCE_MODES = ("per-fact", "shared", "page", "auto")
