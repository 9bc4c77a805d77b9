"""Which passages each fact is judged against: its own top-k, or a block shared by a group.

``per-fact`` (the paper's procedure): every fact sees its own top-k passages of the topic's
page. On a page with more passages than k, facts retrieve different sets, their prompts
share little, and each costs a fresh forward pass over ~1,200 prompt tokens.

``shared``: the facts of one group (a bio's model facts; its human facts) are judged against
one block, the union of their own top-k passages, deduplicated and in page order. Their
prompts then differ only after the block, so the LM evaluates the block once and each
fact costs its own few tokens. When the union exceeds the token budget, the facts are split
into blocks that fit, each fact joining the block its passages overlap most (the one that
grows least), so no passage a fact retrieved is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

EVIDENCE_MODES = ("per-fact", "shared")


@dataclass
class _Open:
    ids: set
    passages: list  # index.reader.Passage
    tokens: int
    tier: int


def shared_blocks(
    groups: Sequence[Hashable],
    own: Sequence[Sequence],
    token_len: Callable[[object], int],
    budget: int,
    tiers: Sequence[int] | None = None,
) -> list[tuple]:
    """For each fact, the passages of its block, in page order.

    groups[i] names fact i's group; own[i] are its own retrieved passages (objects with
    ``passage_id`` and ``idx``); token_len gives a passage's length in the prompt. Facts are
    placed in input order, so the blocks depend only on the group's facts and their order.

    tiers[i] (default 0) lets facts use blocks without changing them: a fact may grow only
    blocks of its own tier, and joins a block of a lower tier only when that block already
    holds all its passages. The human facts of a labeled bio (tier 1) thus share the model
    facts' blocks (tier 0) without changing the evidence of any model fact.
    """
    tiers = tiers if tiers is not None else [0] * len(groups)
    blocks_of_group: dict[Hashable, list[_Open]] = {}
    placed: list[_Open] = []
    for group, passages, tier in zip(groups, own, tiers, strict=True):
        blocks = blocks_of_group.setdefault(group, [])
        unique = {p.passage_id: p for p in passages}
        best, best_added = None, None
        for block in blocks:
            added = sum(token_len(p) for pid, p in unique.items() if pid not in block.ids)
            allowed = added == 0 or (block.tier == tier and block.tokens + added <= budget)
            if allowed and (best_added is None or added < best_added):
                best, best_added = block, added
        if best is None:  # nothing fits: a new block (its own passages, even over budget)
            best = _Open(set(), [], 0, tier)
            blocks.append(best)
        for pid, p in unique.items():
            if pid not in best.ids:
                best.ids.add(pid)
                best.passages.append(p)
                best.tokens += token_len(p)
        placed.append(best)
    # Page order (passages of several pages, with global evidence, grouped by page).
    return [tuple(sorted(block.passages, key=lambda p: (p.title, p.idx))) for block in placed]
