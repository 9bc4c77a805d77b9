"""The counterfactual probes decided with a state head (scripts/probe_heads.py): each
topic half's pairs are decided by heads and rules that never saw that half (synthetic
states and signals; the real run is ``bench_counterfactual --head``)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from factscore_local.declarations.features import flags_of_code
from factscore_local.declarations.verifiers import PLACE_VETO_RULE
from factscore_local.labels.validation import topic_half
from factscore_local.pipeline.records.rows import BioRow, FactResult, HumanSide
from scripts.probe_heads import crossfit_verdicts, fit_halves

WIDTH = 16


def fact(rng, supported: bool, label: str | None = None) -> FactResult:
    """A fact whose margin and state lean with whether it is supported."""
    lean = 1.0 if supported else -1.0
    state = rng.normal(size=WIDTH).astype(np.float32)
    state[0] += 2 * lean
    values = {"margin": round(lean + rng.normal(), 4), "np": 0.5, "coverage": 0.8,
              **flags_of_code(0.0)}  # fmt: skip
    return FactResult(atom="a fact", is_supported=supported, label=label, values=values,
                      state=state)  # fmt: skip


def labeled(rng, topics: list[str], flipped: set[str] = frozenset()) -> list[BioRow]:
    rows = []
    for topic in topics:
        truth = rng.random(8) < 0.7
        labels = ["S" if t != (topic in flipped) else "NS" for t in truth]
        humans = tuple(fact(rng, t, label) for t, label in zip(truth, labels, strict=True))
        decisions = tuple(fact(rng, t) for t in truth)
        human = HumanSide(float(np.mean(truth)), len(humans), humans)
        rows.append(BioRow(line=len(rows), topic=topic, source="x/ChatGPT.jsonl",
                           responded=True, n_facts=len(decisions), decisions=decisions,
                           human=human))  # fmt: skip
    return rows


def probe(rng, topics: list[str]):
    pairs = [SimpleNamespace(fact=SimpleNamespace(topic=t), kind="year") for t in topics * 3]
    originals = [fact(rng, True) for _ in pairs]
    changed = [fact(rng, False) for _ in pairs]
    return pairs, originals, changed


def test_each_half_of_the_probe_is_decided_by_what_the_other_half_fitted():
    topics = [f"topic {i}" for i in range(16)]
    half0 = {t for t in topics if topic_half(t) == 0}
    assert 3 <= len(half0) <= 13
    pairs, originals, changed = probe(np.random.default_rng(1), topics)

    def verdicts(flipped: set[str]):
        rows = labeled(np.random.default_rng(0), topics, flipped)
        fits = fit_halves(rows, pairs, originals, changed, PLACE_VETO_RULE)
        return fits, crossfit_verdicts(pairs, originals, changed, fits, PLACE_VETO_RULE)

    fits, before = verdicts(set())
    for half, fitted in fits.items():
        other = [p for p in pairs if topic_half(p.fact.topic) != half]
        facts = 8 * len({p.fact.topic for p in other})
        assert fitted.head.record["n_facts"] == facts
        assert fitted.head_with_pairs.record["n_facts"] == facts + 2 * len(other)
    # Half 0's labels turned upside down move no verdict of half 0's pairs.
    _, after = verdicts(half0)
    mine = np.asarray([p.fact.topic in half0 for p in pairs])
    for name in before:
        for b, a in zip(before[name], after[name], strict=True):
            np.testing.assert_array_equal(b[mine], a[mine])
    moved = [
        not np.array_equal(b[~mine], a[~mine])
        for name in before
        for b, a in zip(before[name], after[name], strict=True)
    ]
    assert any(moved)  # the other half's fits did see them
    # The leaning states and margins: originals mostly accepted, counterfactuals rejected.
    cf_ok, orig_ok = before["head rule, cross-fitted"]
    assert orig_ok.mean() > 0.8 and cf_ok.mean() < 0.2
