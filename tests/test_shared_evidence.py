"""Shared evidence: a bio's facts judged against one block of passages, evaluated once."""

from __future__ import annotations

import pytest

from factscore_local.config import EvalConfig
from factscore_local.index.reader import KnowledgeSource
from factscore_local.pipeline.cached_models import _statement_span
from factscore_local.pipeline.estimator import Estimator
from factscore_local.pipeline.evidence.blocks import shared_blocks
from factscore_local.pipeline.records.inputs import read_bios
from tests.conftest import SHARED, judged_prompts, require, require_model

CHATGPT = SHARED / "factscore" / "labeled-dev" / "ChatGPT.jsonl"


def ids(block) -> list[int]:
    return [p.passage_id for p in block]


def long_page_bio(index):
    """The first labeled ChatGPT bio whose page has more than 10 passages."""
    ks = KnowledgeSource(index)
    for bio in read_bios(require(CHATGPT)):
        if bio.annotations and len(ks.get_passages(bio.topic)) > 10:
            return bio, ks
    pytest.skip("no long page in the dev data")


def test_blocks_are_the_union_in_page_order(db_index):
    bio, ks = long_page_bio(db_index)
    atoms = [f["text"] for s in bio.annotations for f in s.get("model-atomic-facts") or []]
    own = [[h.passage for h in ks.search_page(bio.topic, f"{bio.topic} {a}", k=5)] for a in atoms]
    blocks = shared_blocks(["bio"] * len(atoms), own, lambda p: 100, budget=10_000)
    union = {p.passage_id for passages in own for p in passages}
    assert len({tuple(ids(b)) for b in blocks}) == 1  # one block for the whole bio
    block = blocks[0]
    assert set(ids(block)) == union and len(ids(block)) == len(union)  # deduplicated
    assert [p.idx for p in block] == sorted(p.idx for p in block)  # page order
    assert len(union) > 5  # the facts retrieve more than k passages between them


def test_groups_keep_their_own_blocks(db_index):
    bio, ks = long_page_bio(db_index)
    passages = ks.get_passages(bio.topic)
    own = [[passages[0], passages[1]], [passages[2]], [passages[1]]]
    blocks = shared_blocks(["a", "b", "a"], own, lambda p: 100, budget=10_000)
    assert ids(blocks[0]) == ids(blocks[2]) == [passages[0].passage_id, passages[1].passage_id]
    assert ids(blocks[1]) == [passages[2].passage_id]


def test_over_budget_splits_by_overlap_and_drops_nothing(db_index):
    bio, ks = long_page_bio(db_index)
    p = ks.get_passages(bio.topic)
    # Budget of 3 passages. Facts 0 and 2 overlap; fact 1 shares nothing with them.
    own = [[p[0], p[1]], [p[5], p[6]], [p[1], p[2]], [p[6], p[7]], [p[9]]]
    blocks = shared_blocks(["bio"] * 5, own, lambda _: 100, budget=300)
    assert ids(blocks[0]) == ids(blocks[2]) == ids(p[0:3])
    assert ids(blocks[1]) == ids(blocks[3]) == ids(p[5:8])
    assert ids(blocks[4]) == [p[9].passage_id]  # no room left in either: a third block
    for fact_own, block in zip(own, blocks, strict=True):
        assert set(ids(fact_own)) <= set(ids(block))  # every retrieved passage is kept
        assert sum(100 for _ in block) <= 300


def test_evidence_mode_is_an_option_with_checked_values(db_index):
    assert EvalConfig(index=db_index).evidence == "auto"
    with pytest.raises(ValueError, match="evidence must be one of"):
        EvalConfig(index=db_index, evidence="everything")
    with pytest.raises(ValueError, match="evidence_budget"):
        EvalConfig(index=db_index, evidence="shared", evidence_budget=100_000)


@pytest.mark.heavy  # a 6,000-token block read three times (~2 min); the page-segment test
# below runs the shared path with the small LM in CI
def test_shared_block_is_evaluated_once_and_decides_as_a_fresh_prompt(db_index, tmp_path):
    """With the small LM on a real long page: each fact records its own top-k and the
    block; the block's tokens are evaluated once for all the facts; margins equal those of
    a fresh full-prompt evaluation of the same prompt; a second run resumes from the cache."""
    from factscore_local.model_store import SMALL_LM

    require_model(SMALL_LM)
    bio, _ = long_page_bio(db_index)
    atoms = [f["text"] for s in bio.annotations for f in s.get("model-atomic-facts") or []][:8]
    config = EvalConfig(
        index=db_index,
        lm=SMALL_LM,
        evidence="shared",
        evidence_budget=6000,  # room for the union of these facts' passages
        cache=tmp_path / "cache.db",
    )
    estimator = Estimator(config)
    raw = estimator.lm().lm
    before = (raw.stats.prompt_tokens, raw.stats.evaluated_tokens)
    with judged_prompts(raw) as captured:
        results = estimator.verify([(bio.topic, bio.topic, a) for a in atoms])
    blocks = {r.block for r in results}
    assert len(blocks) == 1
    for r in results:
        assert len(r.evidence) == 5 and {e.passage_id for e in r.evidence} <= set(r.block)
    prompt_tokens = raw.stats.prompt_tokens - before[0]
    evaluated = raw.stats.evaluated_tokens - before[1]
    longest = max(len(raw.prompt_ids(p)) for p in captured)
    # The block once, then about the fact's own tokens per fact.
    assert evaluated < longest + 60 * len(atoms)
    assert evaluated < 0.35 * prompt_tokens

    true_ids, false_ids = raw.label_ids()
    for r in results[:1]:  # each fresh full prompt reads the 6,000-token block again
        (prompt,) = [p for p in captured if f"Statement: {r.atom} True or False?" in p]
        prefix = prompt[: prompt.rindex("Statement: ")]
        # A fresh evaluation of the same prompt alone gives exactly the same margin.
        raw.forget()
        raw.llm.reset()
        ((alone, _, _),) = raw.true_false_with_statement(
            [prompt], [prefix], [_statement_span(prompt, r.atom)]
        )
        assert alone.margin == pytest.approx(r.margin, abs=1e-4)
        # One full forward pass (no prefix split) agrees up to llama.cpp's batching noise.
        raw.llm.reset()
        logits = raw._next_token_logits(raw.prompt_ids(prompt), 0)
        whole = max(logits[t] for t in true_ids) - max(logits[f] for f in false_ids)
        assert abs(whole - r.margin) < 0.15
        if abs(r.margin - config.margin) > 0.15:
            assert (whole > config.margin) == r.is_supported
    raw.forget()

    again = Estimator(config)
    assert again.verify([(bio.topic, bio.topic, a) for a in atoms]) == results
    assert again.cache.misses == 0


def test_facts_of_a_higher_tier_use_blocks_without_changing_them(db_index):
    """A labeled bio's human facts (tier 1) join the model facts' block when it holds their
    passages, and get a block of their own otherwise: the model facts' evidence is the
    same whether or not the human facts are verified too."""
    bio, ks = long_page_bio(db_index)
    p = ks.get_passages(bio.topic)
    model = [[p[0], p[1]], [p[1], p[2]]]
    human = [[p[2], p[0]], [p[2], p[3]]]
    alone = shared_blocks(["bio"] * 2, model, lambda _: 100, 10_000)
    both = shared_blocks(["bio"] * 4, model + human, lambda _: 100, 10_000, [0, 0, 1, 1])
    assert both[:2] == alone  # the model facts' block is unchanged
    assert ids(both[2]) == ids(alone[0])  # covered: shares it
    assert ids(both[3]) == ids(p[2:4])  # not covered: a block of its own


def test_page_segments_are_consecutive_balanced_and_within_budget(db_index):
    from factscore_local.pipeline.evidence.blocks import page_segments

    bio, ks = long_page_bio(db_index)
    page = ks.get_passages(bio.topic)
    n = len(page)
    assert page_segments(page[::-1], lambda _: 100, budget=100 * n) == [tuple(page)]
    # 2.2 budgets' worth of page: the fewest segments that fit (3), about equal, in order.
    segments = page_segments(page, lambda _: 100, budget=int(100 * n / 2.2))
    assert len(segments) == 3
    assert [p for seg in segments for p in seg] == list(page)
    assert max(map(len, segments)) - min(map(len, segments)) <= 1
    assert all(100 * len(seg) <= int(100 * n / 2.2) for seg in segments)


def test_page_blocks_follow_the_fact_and_not_its_company(db_index):
    """A fact takes the segment holding most of its passages (ties: its best-ranked one),
    and its block is the same alone as among other facts or bios."""
    from factscore_local.pipeline.evidence.blocks import page_blocks

    bio, ks = long_page_bio(db_index)
    p = ks.get_passages(bio.topic)
    t = bio.topic
    half = len(p) // 2
    budget = 100 * (len(p) - half)  # two segments: p[:half] and p[half:] (or close)
    own = [[p[0], p[1], p[-1]], [p[-1], p[-2], p[0]], [p[-1], p[0]]]
    blocks = page_blocks([t] * 3, own, ks.get_passages, lambda _: 100, budget)
    first, second = blocks[0], blocks[1]
    assert p[0] in first and p[-1] in second and first != second
    assert blocks[2] == second  # a tie (one passage in each): its best-ranked passage's
    for i in range(3):
        assert page_blocks([t], [own[i]], ks.get_passages, lambda _: 100, budget) == [blocks[i]]


def test_auto_reads_the_cheaper_kind_per_page(db_index):
    """Two facts on a long page read less as their union than as the page's segments;
    many facts spread over the page read less as its segments than as their blocks."""
    from factscore_local.pipeline.evidence.blocks import cheaper_per_page, page_blocks

    bio, ks = long_page_bio(db_index)
    p = ks.get_passages(bio.topic)
    t, n = bio.topic, len(p)
    budget = 100 * (n - n // 2)  # two segments
    few = [[p[0], p[1]], [p[-1], p[-2]]]
    shared = shared_blocks([t] * 2, few, lambda _: 100, budget)
    paged = page_blocks([t] * 2, few, ks.get_passages, lambda _: 100, budget)
    assert cheaper_per_page([t] * 2, shared, paged, lambda _: 100) == shared
    # Each bio (group) has its own blocks; six bios cover the page.
    many = [[p[i], p[(i + 1) % n]] for i in range(n)] * 6
    groups = [f"bio{j}" for j in range(6) for _ in range(n)]
    shared = shared_blocks(groups, many, lambda _: 100, budget)
    paged = page_blocks([t] * len(many), many, ks.get_passages, lambda _: 100, budget)
    assert cheaper_per_page([t] * len(many), shared, paged, lambda _: 100) == paged


@pytest.mark.slow
def test_page_segments_with_the_small_lm_decide_alone_as_together_and_resume(db_index, tmp_path):
    """Page segments on a real long page (small budget: several segments): a fact's margin
    is the same verified with the others, alone, and from the cache; every fact's segment
    holds at least one of its own passages."""
    from factscore_local.model_store import SMALL_LM

    require_model(SMALL_LM)
    bio, ks = long_page_bio(db_index)
    atoms = [f["text"] for s in bio.annotations for f in s.get("model-atomic-facts") or []][:6]
    config = EvalConfig(index=db_index, lm=SMALL_LM, evidence="page", evidence_budget=1500,
                        cache=tmp_path / "cache.db")  # fmt: skip
    together = Estimator(config).verify([(bio.topic, bio.topic, a) for a in atoms])
    page_ids = {p.passage_id for p in ks.get_passages(bio.topic)}
    assert len({r.block for r in together}) >= 2  # the page was cut
    for r in together:
        assert set(r.block) <= page_ids and {e.passage_id for e in r.evidence} & set(r.block)
    fresh = EvalConfig(index=db_index, lm=SMALL_LM, evidence="page", evidence_budget=1500)
    alone = Estimator(fresh).verify([(bio.topic, bio.topic, atoms[3])])
    assert alone[0].margin == together[3].margin and alone[0].block == together[3].block
    again = Estimator(config)
    assert again.verify([(bio.topic, bio.topic, a) for a in atoms]) == together
    assert again.cache.misses == 0
