"""Bios scheduled together (``--batch-bios``): the model sees the prompts of many bios at
once, and every bio is still decided as a run bio by bio decides it."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from factscore_local.config import EvalConfig
from factscore_local.lm.llama_parallel import GROUP_MIN_TOKENS, group_lengths
from factscore_local.model_store import SMALL_LM
from factscore_local.pipeline.estimator import Estimator
from factscore_local.pipeline.evidence.blocks import cheaper_per_page
from factscore_local.pipeline.records.inputs import read_bios
from tests.conftest import SHARED, require, require_model

LABELED = SHARED / "factscore" / "labeled-dev"


def test_prompts_that_share_more_than_the_common_prefix_form_groups():
    common = list(range(100))
    demo_a, demo_b = list(range(200, 240)), list(range(300, 340))
    prompts = [
        common + demo_a + [1, 2, 3],
        common + demo_b + [4, 5],
        common + demo_a + [6, 7, 8, 9],
        common + list(range(400, 400 + GROUP_MIN_TOKENS - 1)) + [1],  # too short a share
    ]
    # The fourth shares only the common prefix (plus fewer than GROUP_MIN_TOKENS tokens
    # with nobody); the second shares its demonstration with no other prompt.
    assert group_lengths(prompts, len(common)) == [140, 100, 140, 100]
    # A prompt never gives its last token to a group: one is left to feed.
    assert group_lengths([common + demo_a, common + demo_a + [5]], 100) == [139, 140]


@dataclass(frozen=True)
class _Passage:
    passage_id: int
    idx: int


def test_the_auto_mode_chooses_a_pages_blocks_by_the_facts_of_each_unit():
    """Two units of facts on one page: the first has many facts spread over the page (its
    segments are cheaper than the union of their passages), the second one fact. Keyed by
    (page, unit), each chooses alone; keyed by the page, the second would take the first's
    choice."""
    page = [_Passage(i, i) for i in range(6)]
    segments = [tuple(page[:3]), tuple(page[3:])]
    union_a = tuple(page)  # the many facts' shared block: the whole page, read once
    facts = [("P", "a", union_a, segments[0]), ("P", "a", union_a, segments[1])] * 3
    facts.append(("P", "b", (page[0],), segments[0]))

    def token_len(p) -> int:
        return 100

    by_unit = cheaper_per_page(
        [(t, u) for t, u, _, _ in facts], [s for *_, s, _ in facts],
        [p for *_, p in facts], token_len,
    )  # fmt: skip
    assert by_unit[:6] == [p for *_, p in facts][:6]  # page segments: 600 tokens, not 600+
    assert by_unit[6] == (page[0],)  # one fact: its own passage (100 against 300 tokens)
    by_page = cheaper_per_page(
        [t for t, *_ in facts], [s for *_, s, _ in facts], [p for *_, p in facts], token_len
    )
    assert by_page[6] == segments[0]


def _bios_of_two_topics(sentences: int = 2):
    """The bios of the first two ChatGPT dev topics by two subjects, each cut to its first
    ``sentences`` sentences (raw text: a few minutes of the 0.5B on 2 cores)."""
    from dataclasses import replace

    from factscore_local.pipeline.decomposition.sentences import split_sentences

    chatgpt = list(read_bios(require(LABELED / "ChatGPT.jsonl")))
    topics = [b.topic for b in chatgpt[:2]]
    bios = []
    for subject in ("InstructGPT", "ChatGPT"):
        by_topic = {b.topic: b for b in read_bios(require(LABELED / f"{subject}.jsonl"))}
        bios += [by_topic[t] for t in topics if t in by_topic]
    cut = [" ".join(s.text for s in split_sentences(b.output)[:sentences]) for b in bios]
    return [replace(b, output=text) for b, text in zip(bios, cut, strict=True)]


@pytest.mark.slow
def test_bios_scheduled_together_give_the_rows_of_a_run_bio_by_bio(db_index, tmp_path):
    """Four raw-text bios of two topics (two subjects each, so that a page's auto choice
    could differ between one bio and all four): one run bio by bio, then one with all four
    scheduled together on a copy of its cache. The batched run decomposes and verifies in
    one call each, asks for no model result the first run did not compute (every prompt is
    the same: a choice of evidence that leaked from one bio to another would change
    prompts), and writes the same rows."""
    require_model(SMALL_LM)
    bios = _bios_of_two_topics(sentences=1)  # the first sentence: generation is most of it
    assert len(bios) == 4

    def run(cache: Path, batch: int) -> tuple[list[dict], int, object]:
        # 1024-token blocks (the default's are 7000): a page is still cut into segments
        # and weighed against a bio's union, at a fraction of the prefill
        config = EvalConfig(index=db_index, lm=SMALL_LM, cache=cache, batch_bios=batch,
                            validate=False, evidence_budget=1024)  # fmt: skip
        estimator = Estimator(config)
        calls = []
        verify = estimator.verify
        estimator.verify = lambda queries: calls.append(len(queries)) or verify(queries)
        rows = estimator.run(bios, tmp_path / f"rows-{batch}.jsonl", progress=False)
        stats = estimator.lm().lm.stats  # of the model loaded once for both runs
        return [row.to_json() for row in rows], len(calls), (
            stats.generated_tokens, stats.evaluated_tokens,
        )  # fmt: skip

    alone, alone_calls, after_alone = run(tmp_path / "alone.db", 1)
    # SQLite's backup reads through the write-ahead log (a file copy could miss results)
    src, dst = sqlite3.connect(tmp_path / "alone.db"), sqlite3.connect(tmp_path / "together.db")
    with closing(src), closing(dst):
        src.backup(dst)
    together, together_calls, after_together = run(tmp_path / "together.db", 4)

    assert alone_calls == 4 and together_calls == 1
    assert after_alone[0] > 0
    assert after_together == after_alone  # nothing generated or evaluated: all from the cache
    assert sum(len(r.get("decisions") or []) for r in alone) > 10
    assert json.dumps(together, sort_keys=True) == json.dumps(alone, sort_keys=True)
    written = (tmp_path / "rows-4.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in written] == together
