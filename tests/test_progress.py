"""The progress line: counts per kind, and the rate of the kind computed last (cache hits
are counted as done but not in the rate)."""

from __future__ import annotations

import pytest

from factscore_local.runtime.progress import Progress


class Bar:
    def __init__(self) -> None:
        self.postfix = ""

    def set_postfix_str(self, text: str) -> None:
        self.postfix = text


def test_counts_and_the_rate_of_the_kind_computed_last():
    progress, bar = Progress(), Bar()
    progress.attach(bar)
    progress.expect("generate", 10)
    progress.done("generate", 4, computed=False)  # from the cache
    assert bar.postfix == "sentences 4/10"  # nothing computed: no rate yet
    progress.done("generate", 6)
    assert bar.postfix.startswith("sentences 10/10, ") and bar.postfix.endswith(" sentences/s")
    progress.expect("true_false", 3)
    progress.done("true_false", 3)
    assert bar.postfix.startswith("sentences 10/10, facts 3/3, ")
    assert bar.postfix.endswith(" facts/s")
    progress.attach(None)  # a new run starts from nothing
    assert progress.summary() == ""


def test_a_batch_counts_its_bios_as_their_facts_are_verified():
    """A batch of bios verified in one call: the bar counts the bios whose facts the
    verified share covers, never goes back, and counts exactly once the rows are written."""
    import io

    from tqdm import tqdm

    bar = tqdm(total=5, file=io.StringIO())
    progress = Progress()
    progress.attach(bar)
    progress.expect("generate", 4)  # the decomposition before: not the verification
    progress.done("generate", 4)
    progress.start_bios([3, 0, 2])  # three bios: 3 facts, none, 2
    assert bar.n == 0
    progress.expect("true_false", 5)
    progress.done("true_false", 2, computed=False)  # from the cache
    assert bar.n == 0
    progress.done("true_false", 1)  # the first bio's facts: it and the empty one are done
    assert bar.n == 2
    progress.expect("np", 5)  # another kind: not counted
    progress.done("np", 5)
    assert bar.n == 2
    progress.done("true_false", 2)
    assert bar.n == 3
    progress.expect("true_false", 5)  # a second pass of the kind: the bar stays
    progress.done("true_false", 1)
    assert bar.n == 3
    progress.end_bios(3)
    assert bar.n == 3
    progress.start_bios([4, 4])  # the next batch counts on from the bios written
    progress.expect("true_false", 8)
    progress.done("true_false", 4)
    assert bar.n == 4
    progress.end_bios(2)
    assert bar.n == 5
    progress.attach(None)  # a new run starts from nothing
    progress.start_bios([1])
    progress.end_bios(1)  # no bar: counted silently
    assert progress.bios_shown == 1


@pytest.mark.slow
def test_a_batched_run_moves_its_bar_before_the_batch_ends(db_index, tmp_path):
    """Four labeled bios scheduled as one batch: the bar counts bios as their facts are
    verified, so it stands strictly between 0 and 4 before the batch's rows are written.
    (Each bio cut to its first two annotated sentences, with short evidence blocks: the
    bar's moves, not the decisions, are checked.)"""
    import json

    from factscore_local.config import EvalConfig
    from factscore_local.model_store import SMALL_LM
    from factscore_local.pipeline.estimator import Estimator
    from factscore_local.pipeline.records.inputs import read_bios
    from tests.conftest import SHARED, require, require_model

    require_model(SMALL_LM)
    lines = require(SHARED / "factscore" / "labeled-dev" / "ChatGPT.jsonl").read_text()
    cut = []
    for line in lines.splitlines()[:4]:
        bio = json.loads(line)
        cut.append(json.dumps(bio | {"annotations": bio["annotations"][:2]}) + "\n")
    (tmp_path / "bios.jsonl").write_text("".join(cut))
    bios = list(read_bios(tmp_path / "bios.jsonl"))
    config = EvalConfig(index=db_index, lm=SMALL_LM, evidence_budget=256,
                        use_atomic_facts=True, validate=False, batch_bios=4,
                        verifier="retrieve-lm", cache=tmp_path / "cache.db")  # fmt: skip
    estimator = Estimator(config)
    progress, shown = estimator.components.progress, []
    move = progress._move_bar

    def recorded(n: int) -> None:
        shown.append((n, progress.bios_written))
        move(n)

    progress._move_bar = recorded
    rows = estimator.run(bios, None, progress=True)
    assert len(rows) == 4 and shown[-1] == (4, 4)
    assert any(0 < n < 4 and written == 0 for n, written in shown), shown
    assert [n for n, _ in shown] == sorted(n for n, _ in shown)  # never back
