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

``page``: every fact of a page is judged against the page itself, cut (when it exceeds the
budget) into consecutive segments of about equal length; a fact takes the segment that
holds most of its own top-k. The blocks depend on the page alone, not on which facts or
bios are in the run, so all the bios of a topic (every subject LM, model and human facts)
share them, and a fact's decision is the same whatever else is evaluated with it.

``auto``: per page, whichever of ``shared`` and ``page`` evaluates fewer evidence tokens
for the facts decided together (a chunk of bios; the distinct blocks' lengths summed).
Many facts on a page (a long bio, or the bios of several subject LMs) read its segments
once; a few facts on a long page read only the union of their own passages.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from factscore_local.declarations.evidence import EVIDENCE_MODES

__all__ = ["EVIDENCE_MODES", "cheaper_per_page", "page_blocks", "page_segments", "shared_blocks"]


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


def page_segments(passages: Sequence, token_len: Callable[[object], int], budget: int) -> list:
    """A page's passages (page order) cut into the fewest consecutive segments of at most
    ``budget`` tokens, of about equal length (a passage longer than the budget alone)."""
    ordered = sorted(passages, key=lambda p: p.idx)
    total = sum(token_len(p) for p in ordered)
    target = total / max(1, -(-total // budget))  # equal parts of the fewest that fit
    segments: list[list] = [[]]
    in_segment = before = 0  # tokens in the open segment; before this passage
    for p in ordered:
        n = token_len(p)
        # A new segment when this one is full, or when the passage's middle lies past the
        # open segment's share of the page.
        if segments[-1] and (in_segment + n > budget or before + n / 2 > target * len(segments)):
            segments.append([])
            in_segment = 0
        segments[-1].append(p)
        in_segment += n
        before += n
    return [tuple(seg) for seg in segments]


def page_blocks(
    titles: Sequence[str],
    own: Sequence[Sequence],
    pages: Callable[[str], Sequence],
    token_len: Callable[[object], int],
    budget: int,
) -> list[tuple]:
    """For each fact, the segment of its page (``pages(title)``) that holds the most tokens
    of its own passages ``own[i]`` (best first); ties go to the segment with its
    best-ranked passage."""
    segments = {t: page_segments(pages(t), token_len, budget) for t in dict.fromkeys(titles)}
    out = []
    for title, passages in zip(titles, own, strict=True):
        rank = {p.passage_id: r for r, p in enumerate(passages)}

        def held(segment: tuple, rank: dict = rank) -> tuple[int, int]:
            mine = [p for p in segment if p.passage_id in rank]
            best = min((rank[p.passage_id] for p in mine), default=len(rank))
            return sum(token_len(p) for p in mine), -best

        out.append(max(segments[title], key=held))
    return out


def cheaper_per_page(
    titles: Sequence[Hashable],
    shared: Sequence[tuple],
    paged: Sequence[tuple],
    token_len: Callable[[object], int],
) -> list[tuple]:
    """For each fact, its shared block or its page segment: per page (``titles[i]``: fact
    i's page, or any key that names the page and the facts deciding together), the kind
    whose distinct blocks hold fewer tokens in all (a tie goes to the page segments, whose
    decisions do not depend on the other facts)."""
    cost: dict[Hashable, list[int]] = {}
    seen: set = set()
    for title, block_s, block_p in zip(titles, shared, paged, strict=True):
        totals = cost.setdefault(title, [0, 0])
        for kind, block in enumerate((block_s, block_p)):
            key = (title, kind, tuple(p.passage_id for p in block))
            if key not in seen:
                seen.add(key)
                totals[kind] += sum(token_len(p) for p in block)
    return [
        block_p if cost[title][1] <= cost[title][0] else block_s
        for title, block_s, block_p in zip(titles, shared, paged, strict=True)
    ]
